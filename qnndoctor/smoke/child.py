"""The smoke session's child: runs inside the target interpreter.

Imports onnxruntime (and whatever it needs), nothing of qnndoctor. Runs the
shipped QDQ model on the QNN execution provider with CPU fallback disabled,
checks the output and that QNN took every node, and prints one marked JSON
line. Must run on CPython 3.8+; never trusted to exit cleanly: the parent
classifies crashes and hangs.

Usage: python child.py MODEL EXPECTED_JSON BACKEND
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Callable, Dict, List, Optional

MARKER = "@@qnndoctor-smoke@@"
# One line per stage as it begins: a child killed by the time limit has no
# result line, and these say how far it got (smoke/outcome.py reads them).
STAGE_MARKER = "@@qnndoctor-stage@@"
BACKEND_FILES = {"htp": "QnnHtp", "gpu": "QnnGpu", "cpu": "QnnCpu"}


def _emit(result: Dict[str, Any]) -> None:
    sys.stdout.write("\n" + MARKER + json.dumps(result, ensure_ascii=True, default=repr) + "\n")
    sys.stdout.flush()


def _stage(result: Dict[str, Any], name: str) -> None:
    result["stage"] = name
    sys.stdout.write(STAGE_MARKER + name + "\n")
    sys.stdout.flush()


def _lib_name(base: str) -> str:
    return base + ".dll" if sys.platform == "win32" else "lib" + base + ".so"


def loaded_qnn_libraries() -> List[str]:
    """QNN / onnxruntime libraries mapped into this process: the proof of
    which files were really used (PATH or LD_LIBRARY_PATH may pick others)."""
    found: List[str] = []
    if sys.platform.startswith("linux"):
        try:
            with open("/proc/self/maps", "rb") as handle:
                for line in handle.read().decode("utf-8", "replace").splitlines():
                    path = line.split(None, 5)[-1] if line.count(" ") >= 5 else ""
                    base = os.path.basename(path).lower()
                    is_library = ".so" in base or base.endswith((".dll", ".pyd"))
                    if (
                        is_library
                        and ("qnn" in base or "onnxruntime" in base)
                        and path not in found
                    ):
                        found.append(path)
        except OSError:
            pass
    elif sys.platform == "win32":
        import ctypes
        from ctypes import wintypes

        psapi = ctypes.WinDLL("psapi")  # type: ignore[attr-defined,unused-ignore]
        kernel32 = ctypes.WinDLL("kernel32")  # type: ignore[attr-defined,unused-ignore]
        handle = kernel32.GetCurrentProcess()
        modules = (wintypes.HMODULE * 1024)()
        needed = wintypes.DWORD()
        if psapi.EnumProcessModulesEx(
            handle, modules, ctypes.sizeof(modules), ctypes.byref(needed), 3
        ):
            for module in modules[: needed.value // ctypes.sizeof(wintypes.HMODULE)]:
                name = ctypes.create_unicode_buffer(1024)
                psapi.GetModuleFileNameExW(handle, module, name, 1024)
                base = os.path.basename(name.value).lower()
                if "qnn" in base or "onnxruntime" in base:
                    found.append(name.value)
    return found


def _assignment(session: Any) -> Optional[List[Dict[str, Any]]]:
    """Which EP runs which node (onnxruntime >= 1.24 with recording on)."""
    getter = getattr(session, "get_provider_graph_assignment_info", None)
    if getter is None:
        return None
    try:
        subgraphs = getter()
    except Exception:  # noqa: BLE001 - older builds refuse; the log is the fallback proof
        return None
    return [
        {"ep": sub.ep_name, "nodes": [node.op_type + ":" + node.name for node in sub.get_nodes()]}
        for sub in subgraphs
    ]


def add_qnn_provider(
    ort: Any,
    options: Any,
    backend: str,
    result: Dict[str, Any],
    qnn_options: Optional[Dict[str, str]] = None,
) -> Dict[str, Any]:
    """Puts the QNN EP on ``options`` the way this install needs (2.x plugin
    or 1.x monolithic), with ``qnn_options`` as further QNN provider options,
    records what it found in ``result``, and returns the extra
    InferenceSession keyword arguments (1.x only). Shared with the
    ``qnndoctor model`` placement and experiment children."""
    session_kwargs: Dict[str, Any] = {}
    try:
        import onnxruntime_qnn as plugin
    except ImportError:
        plugin = None
    if plugin is not None:
        result["path"] = "plugin-2.x"
        result["onnxruntime_qnn_version"] = getattr(plugin, "__version__", None)
        info = getattr(plugin, "build_and_package_info", None)
        result["qnn_version"] = getattr(info, "qnn_version", None)
        library = plugin.get_library_path()
        result["ep_library"] = library
        ort.register_execution_provider_library("QNNExecutionProvider", library)
        devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]
        result["ep_devices"] = [
            {
                "ep_name": d.ep_name,
                "ep_vendor": d.ep_vendor,
                "device_type": str(d.device.type),
                "device_vendor": d.device.vendor,
                "ep_metadata": dict(d.ep_metadata),
            }
            for d in devices
        ]
        if not devices:
            raise RuntimeError(
                "QNNExecutionProvider registered, but get_ep_devices() lists no QNN device"
            )
        options.add_provider_for_devices(devices, dict(qnn_options or {}, backend_type=backend))
    else:
        result["path"] = "monolithic-1.x"
        providers = ort.get_available_providers()
        result["available_providers"] = providers
        if "QNNExecutionProvider" not in providers:
            raise RuntimeError(
                "QNNExecutionProvider is not in get_available_providers(): %s" % providers
            )
        capi = os.path.join(os.path.dirname(ort.__file__), "capi")
        backend_path = os.path.join(capi, _lib_name(BACKEND_FILES[backend]))
        result["backend_path_option"] = backend_path
        session_kwargs = {
            "providers": ["QNNExecutionProvider"],
            "provider_options": [dict(qnn_options or {}, backend_path=backend_path)],
        }
    return session_kwargs


def run(result: Dict[str, Any], model: str, expected_path: str, backend: str) -> None:
    """Fills ``result`` as it goes, so a failure still reports how far it got."""
    with open(expected_path, encoding="utf-8") as handle:
        expected = json.load(handle)
    result.update(backend=backend, timings_s={})
    _stage(result, "import")
    timings = result["timings_s"]
    started = time.perf_counter()
    import onnxruntime as ort

    timings["import"] = round(time.perf_counter() - started, 4)
    result["onnxruntime_version"] = getattr(ort, "__version__", None)
    result["onnxruntime_path"] = os.path.dirname(getattr(ort, "__file__", "") or "")
    options = ort.SessionOptions()
    options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    options.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    options.log_severity_level = 0  # verbose: the QNN lines are evidence
    # Every node runs on QNN, so onnxruntime's CPU thread pool has nothing to
    # do; its idle threads spin-wait by default, ~50 ms of CPU taken from the
    # probes and qnndoctor running beside the session (bench/bench_check.py).
    options.intra_op_num_threads = 1
    _stage(result, "register")
    started = time.perf_counter()
    session_kwargs = add_qnn_provider(ort, options, backend, result)
    timings["register"] = round(time.perf_counter() - started, 4)
    _stage(result, "session")
    started = time.perf_counter()
    # From bytes: the model's own path (inside qnndoctor's install) must not
    # bring a non-ASCII-path failure of its own into the test.
    with open(model, "rb") as handle:
        model_bytes = handle.read()
    session = ort.InferenceSession(model_bytes, sess_options=options, **session_kwargs)
    timings["session"] = round(time.perf_counter() - started, 4)
    result["session_providers"] = session.get_providers()
    result["loaded_libraries"] = loaded_qnn_libraries()
    result["assignment"] = _assignment(session)
    _stage(result, "run")
    import numpy as np

    data = np.array([expected["input"]], dtype=np.float32).reshape(expected["input_shape"])
    started = time.perf_counter()
    output = session.run(None, {expected["input_name"]: data})[0]
    timings["first_run"] = round(time.perf_counter() - started, 4)
    values = [float(v) for v in output.reshape(-1)]
    result["output"] = values
    errors = [abs(a - b) for a, b in zip(values, expected["expected"])]
    result["max_abs_error"] = max(errors) if errors else None
    result["tolerance"] = expected["tolerance"]
    result["stage"] = "done"
    on_cpu = [
        node
        for sub in result["assignment"] or []
        if sub["ep"] != "QNNExecutionProvider"
        for node in sub["nodes"]
    ]
    result["nodes_not_on_qnn"] = on_cpu
    if len(values) != len(expected["expected"]) or (errors and max(errors) > expected["tolerance"]):
        result["status"] = "wrong_output"
    elif on_cpu or "QNNExecutionProvider" not in result["session_providers"]:
        result["status"] = "fell_back_to_cpu"
    else:
        result["status"] = "passed"


def report_run(run_child: Callable[..., None], *args: Any) -> int:
    """Run ``run_child(result, *args)`` and print its result line, whatever
    Python-level failure happens (the model placement child shares this)."""
    started = time.perf_counter()
    result: Dict[str, Any] = {}
    try:
        run_child(result, *args)
    except BaseException as exc:  # noqa: BLE001 - every Python-level failure is reported
        if isinstance(exc, KeyboardInterrupt):
            raise
        import traceback

        result["status"] = "failed"
        result["exception"] = {
            "type": type(exc).__name__,
            "message": str(exc),
            "traceback": traceback.format_exc(limit=6),
        }
    result["child_duration_s"] = round(time.perf_counter() - started, 4)
    _emit(result)
    return 0


def main(argv: List[str]) -> int:
    model, expected, backend = argv[:3]
    return report_run(run, model, expected, backend)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
