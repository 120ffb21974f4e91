"""Model findings: the project's Finding values, with the public sources and
the confidence each one rests on (``qnndoctor model --list-findings`` style
catalogue in ``KINDS``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..rules.findings import Finding, FindingKind, Fix, Severity

E, W, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

KINDS = {
    k.id: k
    for k in (
        FindingKind(
            "model-ir-too-new", E, "The model's IR version is newer than this onnxruntime loads"
        ),
        FindingKind(
            "model-opset-too-new", E, "The model's opset is newer than this onnxruntime implements"
        ),
        FindingKind("model-dynamic-shape", W, "Inputs or outputs with dynamic dimensions"),
        FindingKind(
            "model-float-on-htp", INFO, "A float model: HTP runs it in fp16, not as quantized"
        ),
        FindingKind(
            "model-fp16-unsupported-chip", E, "This chip's HTP has no fp16 (needs v73 or newer)"
        ),
        FindingKind("model-ops-not-on-qnn", W, "Operators the QNN EP does not list as supported"),
        FindingKind(
            "model-external-data-missing", E, "External-data files of the model are missing"
        ),
        FindingKind("model-non-ascii-path", W, "The model path has non-ASCII characters"),
        FindingKind(
            "model-context-binary-missing", E, "An EPContext node's context binary is missing"
        ),
        FindingKind(
            "model-context-unreadable", W, "The context binary names no QNN build or HTP arch"
        ),
        FindingKind(
            "model-context-lfs-pointer",
            E,
            "A Git LFS pointer file stands in for the context binary",
        ),
        FindingKind(
            "model-context-newer-than-runtime",
            E,
            "Pre-compiled by a newer QNN than this runtime bundles",
        ),
        FindingKind(
            "model-context-other-arch", E, "Pre-compiled for another HTP arch than this chip"
        ),
        FindingKind(
            "model-context-unchecked", INFO, "Context binary could not be compared with the runtime"
        ),
        FindingKind("model-mostly-on-cpu", W, "Most of the model runs on the CPU, not on QNN"),
        FindingKind("model-partly-on-cpu", INFO, "Some nodes fell back to the CPU"),
        FindingKind(
            "model-context-io-quantization-on-cpu",
            INFO,
            "The compiled model converts its inputs and outputs on the CPU",
        ),
        FindingKind("model-session-failed", E, "The model did not load on QNN in the target"),
        FindingKind("model-run-crashed", E, "The placement run crashed or hung"),
        FindingKind("model-npu-share-below", E, "Fewer nodes on QNN than --min-npu-share requires"),
        FindingKind("model-culprit", E, "The node that makes QNN fail, found by experiment"),
        FindingKind(
            "model-outputs-diverge", E, "QNN's outputs differ from the CPU EP's beyond tolerance"
        ),
    )
}


@dataclass(frozen=True)
class ModelFinding:
    finding: Finding
    sources: tuple[str, ...]
    confidence: str  # high: measured or documented; medium: documented list that lags releases

    @property
    def severity(self) -> Severity:
        return self.finding.severity

    def to_json(self) -> dict[str, Any]:
        data = self.finding.to_json()
        data["sources"] = list(self.sources)
        data["confidence"] = self.confidence
        return data


def finding(
    kind_id: str,
    explanation: str,
    *,
    fix: str | None = None,
    commands: tuple[str, ...] = (),
    evidence: dict[str, Any] | None = None,
    sources: tuple[str, ...] = (),
    confidence: str = "high",
    severity: Severity | None = None,
    title: str | None = None,
) -> ModelFinding:
    from ..rules.findings import Evidence

    kind = KINDS[kind_id]
    return ModelFinding(
        Finding(
            id=kind.id,
            severity=severity or kind.severity,
            title=title or kind.title,
            explanation=explanation,
            evidence=tuple(Evidence(k, v) for k, v in (evidence or {}).items()),
            fix=Fix(fix, commands) if fix else None,
        ),
        sources,
        confidence,
    )
