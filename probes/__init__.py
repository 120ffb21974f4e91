"""The probe program: stdlib-only code that runs inside the target interpreter.

It is loaded under a private package name (see ``qnndoctor.collect``), runs
every probe in order, isolating each, and prints one JSON document. It never
imports onnxruntime and must run on any CPython 3.8+.
"""

from __future__ import annotations

import os
import sys
import time

from . import emulation, installs, interpreter, paths, qnn_bundled, qnn_sdk, soc
from ._json_out import dumps
from .base import Context

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Any, Callable, Dict, List, Optional

PROTOCOL = 1

# Order matters: later probes read earlier results (paths reads all of them).
PROBES = (interpreter, emulation, installs, qnn_bundled, qnn_sdk, soc, paths)

MARKER = "@@qnndoctor-probe@@"
PART_MARKER = "@@qnndoctor-probe-part@@"
PLAN_MARKER = "@@qnndoctor-probe-plan@@"


class ProbeTimeout(Exception):
    """A probe blocked past its time limit (its thread is abandoned)."""


def _run_one(module: Any, ctx: Context, limit: Optional[float]) -> Any:
    """``module.run(ctx)``, in a thread when there is a time limit: a probe
    stuck in a blocking call then costs its own section, not the report.
    A bare ``_thread`` thread and lock: importing ``threading`` would cost
    the probe program ~1 ms of its start-up, and nothing here needs more."""
    if limit is None:
        return module.run(ctx)
    import _thread

    if sys.version_info < (3, 9):
        # 3.8 fails an assertion at exit (printed on stderr) when ``threading``
        # is first imported in another thread, as platform's subprocess does.
        import threading  # noqa: F401

    box: Dict[str, Any] = {}
    done = _thread.allocate_lock()
    done.acquire()

    def work() -> None:
        try:
            box["output"] = module.run(ctx)
        except BaseException as exc:
            box["error"] = exc
        finally:
            done.release()

    _thread.start_new_thread(work, ())
    if not done.acquire(True, max(limit, 0.0)):  # as Thread.join(limit) waits
        raise ProbeTimeout(
            "did not finish within %g s (blocked in a file or system call?); skipped" % limit
        )
    if "error" in box:
        raise box["error"]
    return box["output"]


def run_all(
    options: Optional[Dict[str, Any]] = None,
    only: Optional[List[str]] = None,
    on_result: Optional[Callable[[str, Dict[str, Any]], None]] = None,
) -> Dict[str, Any]:
    """Run the probes; one that raises or times out becomes an error entry,
    the rest go on. ``on_result`` sees each entry as soon as it is made."""
    ctx = Context(options)
    limit = ctx.options.get("probe_timeout")
    results: Dict[str, Any] = {}
    for module in PROBES:
        name = module.NAME
        if only is not None and name not in only:
            continue
        started = time.perf_counter()
        try:
            output = _run_one(module, ctx, limit)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            import traceback

            results[name] = {
                "status": "error",
                "error": {
                    "type": type(exc).__name__,
                    "message": str(exc),
                    "traceback": traceback.format_exc(limit=8),
                },
                "values": {},
                "sources": {},
                "duration_ms": round((time.perf_counter() - started) * 1000, 2),
            }
        else:
            ctx.results[name] = output
            results[name] = {
                "status": "ok",
                "values": output.values,
                "sources": output.sources,
                "duration_ms": round((time.perf_counter() - started) * 1000, 2),
            }
        if on_result is not None:
            on_result(name, results[name])
    return {"protocol": PROTOCOL, "probes": results}


def _emit(marker: str, document: Any) -> None:
    # ASCII-only JSON on its own marked line: whatever else the interpreter
    # prints (sitecustomize, warnings) and whatever the stdout encoding is.
    text = dumps(document)  # json.dumps(ensure_ascii, default=repr, sort_keys), no json import
    sys.stdout.write("\n" + marker + text + "\n")
    sys.stdout.flush()


def main(argv: List[str]) -> int:
    options: Dict[str, Any] = {}
    for arg in argv:
        if arg == "--deep":
            options["deep"] = True
        elif arg.startswith("--model="):
            options["model_path"] = arg.split("=", 1)[1]
        elif arg.startswith("--probe-timeout="):
            options["probe_timeout"] = float(arg.split("=", 1)[1])
    # Each probe's entry on its own line as soon as it is done: if the whole
    # program is killed, the sections already printed are not lost. The
    # final line says the run is complete.
    _emit(PLAN_MARKER, [module.NAME for module in PROBES])
    document = run_all(options, on_result=lambda name, entry: _emit(PART_MARKER, [name, entry]))
    _emit(MARKER, {"protocol": document["protocol"], "complete": True})
    if any(e.get("error", {}).get("type") == "ProbeTimeout" for e in document["probes"].values()):
        os._exit(0)  # a probe thread is still blocked: do not wait for it at exit
    return 0
