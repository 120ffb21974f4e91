"""The ``qnndoctor model`` placement child: runs inside the target interpreter.

Imports onnxruntime and the smoke child's helpers (same folder layout in
every install), nothing else of qnndoctor. Creates a session on the QNN EP
with CPU fallback allowed and verbose logs (the parent reads the node
placement and the reasons from them), records the EP's graph-assignment
info where the runtime has it, times runs on QNN and on the CPU EP with
random inputs, and prints one marked JSON line. CPython 3.8+; never trusted
to exit cleanly: the parent classifies crashes and hangs like the smoke
session's.

Usage: python placement_child.py MODEL BACKEND RUNS
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Dict, List

# The script's own folder (first on sys.path) holds qnndoctor modules with
# plain names (runtime, context, report...) that must not shadow anything the
# target imports: the smoke child's folder takes its place.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
sys.path.insert(0, os.path.join(os.path.dirname(_HERE), "smoke"))
import child as smoke_child  # type: ignore[import-not-found]  # noqa: E402  (the smoke child, a sibling folder)

# ORT's type strings -> numpy dtype names, for the random inputs.
DTYPES = {
    "tensor(float)": "float32",
    "tensor(float16)": "float16",
    "tensor(double)": "float64",
    "tensor(int8)": "int8",
    "tensor(uint8)": "uint8",
    "tensor(int16)": "int16",
    "tensor(uint16)": "uint16",
    "tensor(int32)": "int32",
    "tensor(uint32)": "uint32",
    "tensor(int64)": "int64",
    "tensor(uint64)": "uint64",
    "tensor(bool)": "bool",
}


class _NoData(TypeError):
    """An input type qnndoctor cannot make random data for (sequence, map...)."""


def _inputs(session: Any, np: Any) -> Dict[str, Any]:
    """Random inputs of each input's dtype; a free dimension becomes 1."""
    rng = np.random.default_rng(0)
    feeds = {}
    for arg in session.get_inputs():
        dtype = DTYPES.get(arg.type)
        if dtype is None:
            raise _NoData(
                "input %r has type %s: qnndoctor cannot make data for it" % (arg.name, arg.type)
            )
        shape = [d if isinstance(d, int) and d > 0 else 1 for d in (arg.shape or [])]
        if dtype == "bool":
            feeds[arg.name] = rng.integers(0, 2, size=shape).astype(bool)
        elif dtype.startswith(("int", "uint")):
            feeds[arg.name] = rng.integers(0, 8, size=shape).astype(dtype)
        else:
            feeds[arg.name] = rng.random(size=shape).astype(dtype)
    return feeds


def _time_runs(session: Any, feeds: Dict[str, Any], runs: int, ort: Any) -> Dict[str, Any]:
    quiet = ort.RunOptions()
    quiet.log_severity_level = 3  # the session's verbose log is for placement, not per run
    started = time.perf_counter()
    session.run(None, feeds, quiet)
    first = time.perf_counter() - started
    samples: List[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        session.run(None, feeds, quiet)
        samples.append(time.perf_counter() - started)
    samples.sort()
    return {
        "first_run_ms": round(first * 1000, 3),
        "runs": runs,
        "median_ms": round(samples[len(samples) // 2] * 1000, 3) if samples else None,
        "min_ms": round(samples[0] * 1000, 3) if samples else None,
        "mean_ms": round(sum(samples) / len(samples) * 1000, 3) if samples else None,
    }


def _error(exc: BaseException) -> Dict[str, Any]:
    return {"type": type(exc).__name__, "message": str(exc)}


def run(result: Dict[str, Any], model: str, backend: str, runs: int) -> None:
    """Fills ``result`` as it goes, so a failure still reports how far it got."""
    result.update(backend=backend, stage="import", timings={})
    import onnxruntime as ort

    result["onnxruntime_version"] = getattr(ort, "__version__", None)
    options = ort.SessionOptions()
    options.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    options.log_severity_level = 0  # verbose: node placement and reasons are evidence
    result["stage"] = "register"
    session_kwargs = smoke_child.add_qnn_provider(ort, options, backend, result)
    result["stage"] = "session"
    started = time.perf_counter()
    # From the path: an EPContext model finds its context binary beside it.
    session = ort.InferenceSession(model, sess_options=options, **session_kwargs)
    result["timings"]["session_s"] = round(time.perf_counter() - started, 4)
    result["session_providers"] = session.get_providers()
    result["assignment"] = smoke_child._assignment(session)
    result["loaded_libraries"] = smoke_child.loaded_qnn_libraries()
    sys.stderr.flush()
    result["stage"] = "run"
    import numpy as np

    try:
        feeds = _inputs(session, np)
    except _NoData as exc:  # placement is known; only the timing needs data
        result["timings"]["qnn"] = result["timings"]["cpu"] = {"error": _error(exc)}
        result["stage"] = "done"
        result["status"] = "passed"
        return
    result["input_shapes"] = {name: list(value.shape) for name, value in feeds.items()}
    result["timings"]["qnn"] = _time_runs(session, feeds, runs, ort)
    result["stage"] = "cpu"
    try:
        cpu = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        result["timings"]["cpu"] = _time_runs(cpu, feeds, runs, ort)
    except Exception as exc:  # noqa: BLE001 - an EPContext model has no CPU kernel: a value
        result["timings"]["cpu"] = {"error": _error(exc)}
    result["stage"] = "done"
    result["status"] = "passed"


def main(argv: List[str]) -> int:
    model, backend, runs = argv[0], argv[1], int(argv[2])
    return int(smoke_child.report_run(run, model, backend, runs))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
