"""The ``qnndoctor model`` document: findings from the placement run, and the
JSON contract (``placement``, ``context``, ``findings``, ``timings``)."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from .. import MODEL_SCHEMA_VERSION, __version__
from ..findings import Severity
from ..smoke.outcome import first_error
from . import knowledge as K
from .findings import ModelFinding, finding
from .placement import Placement

SCHEMA = f"qnndoctor-model/{MODEL_SCHEMA_VERSION}"
MOSTLY_CPU = 0.5  # below this share of nodes on QNN, the NPU does little of the work


def placement_findings(placement: Placement, context_compatible: bool | None) -> list[ModelFinding]:
    if placement.status in ("crashed", "timed_out"):
        return [
            finding(
                "model-run-crashed",
                f"The placement child {placement.status.replace('_', ' ')}: {placement.reason}",
                fix="Run `qnndoctor check` on this interpreter first: a crash here is usually the "
                "environment, not the model.",
                evidence={"placement.exit": placement.exit_name},
            )
        ]
    if placement.status == "failed":
        predicted = (
            " This is the failure the context check predicted."
            if context_compatible is False
            else ""
        )
        stage = (placement.child or {}).get("stage")
        return [
            finding(
                "model-session-failed",
                f"{placement.reason}.{predicted}",
                evidence={"placement.stage": stage},
                # The session was created: it is the run (or the CPU comparison) that failed.
                title="The model loaded but failed to run in the target"
                if stage in ("run", "cpu")
                else None,
            )
        ]
    if placement.status != "passed" or not placement.nodes_total:
        return []
    fell_back = placement.fell_back
    if not fell_back:
        return []
    # The EP's own I/O quantization offload is neither QNN's work nor a fallback.
    compute = placement.nodes_total - len(placement.io_offloaded)
    share = (placement.nodes_on_qnn or 0) / compute if compute > 0 else 0.0
    why = "; ".join(
        f"{node}: {placement.fallback_reasons.get(node, 'no reason logged')}"
        for node in fell_back[:20]
    )
    more = f" (and {len(fell_back) - 20} more)" if len(fell_back) > 20 else ""
    kind = "model-mostly-on-cpu" if share < MOSTLY_CPU else "model-partly-on-cpu"
    # Nothing on QNN and an error logged: the EP itself failed (a backend that
    # does not load) and the session quietly ran on the CPU.
    logged = first_error(placement.log_lines) if not placement.nodes_on_qnn else None
    return [
        finding(
            kind,
            f"{placement.nodes_on_qnn} of {placement.nodes_total} nodes run on QNN in "
            f"{placement.partitions} partition(s); on the CPU: {why}{more}."
            + (f" The QNN EP took nothing; first error logged: {logged}" if logged else ""),
            severity=Severity.ERROR if logged else None,
            fix="Fix what the reasons name (static shapes, supported operators, QDQ); each CPU "
            "node also splits the QNN graph.",
            evidence={
                "placement.nodes_on_qnn": placement.nodes_on_qnn,
                "placement.nodes_total": placement.nodes_total,
                "placement.method": placement.method,
            },
            sources=(K.QNN_OPS_SOURCE,),
        )
    ]


def exit_code(findings: list[ModelFinding], fail_on: Severity) -> int:
    from .. import exitcodes

    return exitcodes.FINDINGS if any(f.severity >= fail_on for f in findings) else exitcodes.OK


def document(
    *,
    model: dict[str, Any] | None,
    target: dict[str, Any] | None,
    runtime: dict[str, Any] | None,
    context: dict[str, Any] | None,
    placement: Placement | None,
    findings: list[ModelFinding],
    notes: list[str],
    error: str | None = None,
) -> dict[str, Any]:
    ordered = sorted(findings, key=lambda f: -int(f.severity))
    return {
        "schema": SCHEMA,  # kept: keys are added, never renamed
        "schema_version": MODEL_SCHEMA_VERSION,
        "tool": {"name": "qnndoctor", "version": __version__},
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "error": {"kind": "could-not-check", "message": error} if error else None,
        "model": model,
        "target": target,
        "runtime": runtime,
        "context": context,
        "placement": placement.to_json() if placement else None,
        "timings": placement.timings if placement else None,
        "findings": [f.to_json() for f in ordered],
        "notes": notes,
    }
