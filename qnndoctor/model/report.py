"""The ``qnndoctor model`` document: findings from the placement run, and the
JSON contract (``placement``, ``context``, ``findings``, ``timings``)."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from .. import MODEL_SCHEMA_VERSION, __version__
from ..rules.findings import Severity
from ..smoke.outcome import first_error
from . import knowledge as K
from .findings import ModelFinding, finding
from .placement import Placement

SCHEMA = f"qnndoctor-model/{MODEL_SCHEMA_VERSION}"
MOSTLY_CPU = 0.5  # below this share of nodes on QNN, the NPU does little of the work


def placement_findings(
    placement: Placement,
    context_compatible: bool | None,
    compiled_io: frozenset[str] = frozenset(),
) -> list[ModelFinding]:
    """``compiled_io``: a compiled model's graph I/O Quantize/Dequantize nodes
    (``ModelInfo.io_quantization``), which compilation leaves to the CPU EP."""
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
    outside = tuple(n for n in placement.fell_back if n in compiled_io)
    found = [_io_outside_context(outside)] if outside else []
    fell_back = tuple(n for n in placement.fell_back if n not in compiled_io)
    if not fell_back:
        return found
    # The EP's own I/O quantization offload is neither QNN's work nor a fallback.
    compute = placement.nodes_total - len(placement.io_offloaded) - len(outside)
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
        *found,
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
        ),
    ]


def _io_outside_context(nodes: tuple[str, ...]) -> ModelFinding:
    shown = ", ".join(nodes[:6]) + (f" (and {len(nodes) - 6} more)" if len(nodes) > 6 else "")
    return finding(
        "model-context-io-quantization-on-cpu",
        f"{len(nodes)} Quantize/Dequantize node(s) at the graph's inputs and outputs ({shown}) "
        "sit outside the EPContext node, so the CPU EP runs them: the model was compiled with "
        "offload_graph_io_quantization on (the default). That is cheap and works, but a "
        'session with session.disable_cpu_ep_fallback=1 refuses this model ("assigned to the '
        'default CPU EP, but fallback to CPU EP has been explicitly disabled").',
        fix="To run it with CPU fallback disabled, compile the original model again with the "
        "QNN provider option offload_graph_io_quantization='0': the conversion then happens "
        "inside the context.",
        evidence={"placement.io_quantization_outside_context": list(nodes)},
        sources=K.IO_OFFLOAD_SOURCES,
    )


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
