"""Text rendering of the ``qnndoctor model`` document (JSON is printed as is)."""

from __future__ import annotations

from typing import Any, TextIO

_MARK = {"error": "ERROR", "warning": "WARN ", "info": "info "}


def _ms(timing: dict[str, Any] | None, compiled: bool = False) -> str:
    if not timing:
        return "-"
    if "error" in timing and compiled:  # its EPContext nodes have no CPU kernel
        return "not timed (a compiled model runs only on the EP that compiled it)"
    if "error" in timing:
        return "not timed (" + str(timing["error"].get("message", ""))[:90] + ")"
    return f"median {timing['median_ms']} ms, first {timing['first_run_ms']} ms ({timing['runs']} runs)"


def _installed(name: str, version: object) -> str:
    return f"{name} {version}" if version else f"{name} not installed"


def _placed(placement: dict[str, Any], model_nodes: object) -> list[str]:
    """How many nodes QNN took. They are the session's nodes: onnxruntime's graph
    optimizations may add some (layout Transposes around a Conv) or fuse
    others, so a count that differs from the model file's says so."""
    total = placement["nodes_total"]
    differs = isinstance(model_nodes, int) and model_nodes != total
    lines = [
        f"Placement {placement['nodes_on_qnn']}/{total} nodes"
        + (" of the session's graph" if differs else "")
        + f" on QNN in {placement['partitions']} partition(s) (from {placement['method']})"
    ]
    if differs:
        lines.append(
            f"          the session's graph has {total} nodes where the model file has "
            f"{model_nodes}: onnxruntime's optimizations add nodes (layout Transposes around "
            "a Conv) and fuse others"
        )
    return lines


def render_text(doc: dict[str, Any], out: TextIO) -> None:
    model = doc.get("model") or {}
    write = out.write
    if doc.get("error"):
        write(f"qnndoctor model: could not check: {doc['error']['message']}\n")
        return
    write(f"Model     {model.get('path')}  ({model.get('size')} bytes)\n")
    opsets = ", ".join(f"{d} {v}" for d, v in (model.get("opsets") or {}).items())
    write(
        f"          IR {model.get('ir_version')}, opsets {opsets}; {model.get('nodes_total')} nodes; "
        f"precision {model.get('precision')}\n"
    )
    runtime = doc.get("runtime")
    if runtime:
        qnn = f" (QNN {runtime['qnn_version']})" if runtime.get("qnn_version") else ""
        write(
            f"Runtime   {_installed('onnxruntime', runtime.get('onnxruntime'))}, "
            f"{_installed('onnxruntime-qnn', runtime.get('onnxruntime_qnn'))}{qnn}; chip "
            f"{runtime.get('soc') or 'unknown'} (HTP {('v' + str(runtime['htp_arch'])) if runtime.get('htp_arch') else 'arch unknown'})\n"
        )
    context = doc.get("context")
    if context:
        verdict = {True: "compatible", False: "NOT compatible", None: "not checked"}[
            context["compatible"]
        ]
        write(
            f"Context   QNN {context.get('qnn_build') or context.get('qnn_version')}, HTP "
            f"v{context.get('htp_arch')}, soc {context.get('soc')}: {verdict}\n"
        )
    placement = doc.get("placement")
    if placement:
        if placement["status"] == "passed" and placement.get("nodes_total") is not None:
            for line in _placed(placement, model.get("nodes_total")):
                write(line + "\n")
            offloaded = placement.get("io_quantization_on_cpu") or []
            if offloaded:
                write(
                    f"          {', '.join(offloaded)} on the CPU by design: the EP leaves graph "
                    "I/O quantization to the CPU (offload_graph_io_quantization=1, its default)\n"
                )
        else:
            write(f"Placement {placement['status']}: {placement.get('reason')}\n")
        timings = doc.get("timings") or {}
        if timings.get("qnn") or timings.get("cpu"):
            compiled = model.get("precision") == "ep-context"
            write(f"Timing    QNN {_ms(timings.get('qnn'))}\n")
            write(f"          CPU {_ms(timings.get('cpu'), compiled)}\n")
    from ..model.experiment.render import render_experiments

    render_experiments(doc, out)
    for note in doc.get("notes") or []:
        write(f"Note      {note}\n")
    findings = doc.get("findings") or []
    write("\n" if findings else "\nNo findings.\n")
    for item in findings:
        write(f"{_MARK.get(item['severity'], item['severity'])} {item['id']}: {item['title']}\n")
        write(f"      {item['explanation']}\n")
        fix = item.get("fix")
        if fix:
            write(f"      fix: {fix['text']}\n")
            for command in fix.get("commands") or []:
                write(f"        {command}\n")
        if item.get("sources"):
            write(f"      sources ({item['confidence']}): {' '.join(item['sources'])}\n")
