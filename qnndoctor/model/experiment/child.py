"""The experiment child: runs inside the target interpreter, one experiment
per process (a crash or hang of QNN is the parent's result, not its own).

Usage: python child.py MODE OPTIONS_JSON ARGS... (OPTIONS_JSON: further QNN
provider options from ``--qnn-option``, a JSON object of strings)

Modes:
  compile MODEL BACKEND          session with CPU fallback off and the graph
                                 I/O quantization kept on QNN, then one run
                                 with seeded random inputs
  profile MODEL BACKEND RUNS CSV session with QNN's detailed profiling to CSV,
                                 RUNS runs on QNN and on the CPU EP
  compare MODEL BACKEND IN OUT   the same inputs (IN: .npz or "-" for seeded
                                 random ones) on the CPU EP and on QNN; both
                                 outputs saved to OUT (.npz)

Imports onnxruntime, numpy and the placement child's helpers (by file path,
so that no module of this folder shadows anything the target imports), and
prints one marked JSON line through the smoke child's ``report_run``.
CPython 3.8+.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from typing import Any, Dict, List

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
_spec = importlib.util.spec_from_file_location(
    "qnndoctor_placement_child", os.path.join(os.path.dirname(_HERE), "placement_child.py")
)
assert _spec is not None and _spec.loader is not None
placement = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(placement)
smoke_child = placement.smoke_child


def _session(
    ort: Any, model: str, backend: str, result: Dict[str, Any], strict: bool, **qnn: str
) -> Any:
    """``strict``: CPU fallback off and verbose logs (the parent reads the
    QNN EP's reasons from them)."""
    options = ort.SessionOptions()
    options.log_severity_level = 0 if strict else 3
    if strict:
        options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    result["stage"] = "register"
    kwargs = smoke_child.add_qnn_provider(ort, options, backend, result, qnn)
    result["stage"] = "session"
    started = time.perf_counter()
    session = ort.InferenceSession(model, sess_options=options, **kwargs)
    result["session_s"] = round(time.perf_counter() - started, 4)
    return session


def _feeds(session: Any, np: Any, path: str) -> Dict[str, Any]:
    if path == "-":
        return dict(placement._inputs(session, np))
    with np.load(path, allow_pickle=False) as data:
        feeds = {name: data[name] for name in data.files}
    wanted = [arg.name for arg in session.get_inputs()]
    missing = [name for name in wanted if name not in feeds]
    if missing:
        raise ValueError("the inputs file has no array for input(s) %s" % ", ".join(missing))
    return {name: feeds[name] for name in wanted}


def compile_run(result: Dict[str, Any], qnn: Dict[str, str], model: str, backend: str) -> None:
    import onnxruntime as ort

    result["onnxruntime_version"] = getattr(ort, "__version__", None)
    options = dict(qnn)
    options.setdefault("offload_graph_io_quantization", "0")
    session = _session(ort, model, backend, result, True, **options)
    import numpy as np

    result["stage"] = "run"
    session.run(None, dict(placement._inputs(session, np)))
    result["stage"] = "done"
    result["status"] = "passed"


def profile_run(
    result: Dict[str, Any], qnn: Dict[str, str], model: str, backend: str, runs: str, csv: str
) -> None:
    import numpy as np
    import onnxruntime as ort

    result["onnxruntime_version"] = getattr(ort, "__version__", None)
    options = dict(qnn, profiling_level="detailed", profiling_file_path=csv)
    session = _session(ort, model, backend, result, False, **options)
    feeds = dict(placement._inputs(session, np))
    result["stage"] = "run"
    result["qnn_timing"] = placement._time_runs(session, feeds, int(runs), ort)
    del session  # QNN writes the rest of its profile when the session ends
    result["stage"] = "cpu"
    cpu = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    result["cpu_timing"] = placement._time_runs(cpu, feeds, int(runs), ort)
    result["stage"] = "done"
    result["status"] = "passed"


def compare_run(
    result: Dict[str, Any], qnn: Dict[str, str], model: str, backend: str, inputs: str, out: str
) -> None:
    import numpy as np
    import onnxruntime as ort

    result["onnxruntime_version"] = getattr(ort, "__version__", None)
    session = _session(ort, model, backend, result, False, **qnn)
    feeds = _feeds(session, np, inputs)
    result["stage"] = "run"
    names = [arg.name for arg in session.get_outputs()]
    on_qnn = session.run(None, feeds)
    result["stage"] = "cpu"
    cpu = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    on_cpu = cpu.run(None, feeds)
    arrays: Dict[str, Any] = {}
    for index in range(len(names)):
        arrays["qnn/%d" % index] = np.asarray(on_qnn[index])
        arrays["cpu/%d" % index] = np.asarray(on_cpu[index])
    for index, name in enumerate(feeds):
        arrays["in/%d" % index] = np.asarray(feeds[name])
    np.savez(out, **arrays)
    result["outputs"] = names
    result["input_names"] = list(feeds)
    result["stage"] = "done"
    result["status"] = "passed"


MODES = {"compile": compile_run, "profile": profile_run, "compare": compare_run}


def main(argv: List[str]) -> int:
    import json

    qnn = {str(k): str(v) for k, v in json.loads(argv[1]).items()}
    return int(smoke_child.report_run(MODES[argv[0]], qnn, *argv[2:]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
