"""The probe program: stdlib-only code that runs inside the target interpreter.

It is loaded under a private package name (see ``qnndoctor.collect``), runs
every probe in order, isolating each, and prints one JSON document. It never
imports onnxruntime and must run on any CPython 3.8+.
"""

from __future__ import annotations

import json
import os
import sys
import time

from . import emulation, installs, interpreter, paths, qnn_bundled, qnn_sdk, soc
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


def _attempt(module: Any, ctx: Context) -> Dict[str, Any]:
    """What one probe gave: ``"output"`` and ``"duration_ms"`` (the entry is
    made when it is recorded), the error entry of what it raised, or
    ``"interrupt"``: KeyboardInterrupt is no entry, it goes on up."""
    started = time.perf_counter()
    try:
        output = module.run(ctx)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            return {"interrupt": exc}
        return _error_entry(exc, started)
    return {"output": output, "duration_ms": round((time.perf_counter() - started) * 1000, 2)}


def _error_entry(exc: BaseException, started: float) -> Dict[str, Any]:
    """Called where ``exc`` is being handled: the traceback is its own."""
    import traceback

    return {
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


def _run_with_limit(modules: List[Any], ctx: Context, limit: float, record: Any) -> None:
    """The probes one after another in one worker thread, so that a probe
    stuck in a blocking call costs its own section, not the report.

    The main thread sleeps until they are all done, waking only when the
    probe under way passes ``limit``: that one becomes a ProbeTimeout entry
    and a fresh worker goes on with the rest (the stuck one is abandoned).
    One thread start instead of one per probe: each start and hand-back
    costs two context switches, several ms on a busy machine.
    """
    import threading

    guard = threading.Lock()  # orders the worker's records and the main's timeout
    pending = list(modules)
    while pending:
        batch = pending
        finished = threading.Lock()
        finished.acquire()
        state: Dict[str, Any] = {"index": 0, "started": time.perf_counter(), "abandoned": False}

        def work(
            batch: List[Any] = batch, state: Dict[str, Any] = state, finished: Any = finished
        ) -> None:
            try:
                for index, module in enumerate(batch):
                    with guard:
                        if state["abandoned"]:
                            return
                        state["index"], state["started"] = index, time.perf_counter()
                    entry = _attempt(module, ctx)
                    with guard:
                        if state["abandoned"]:
                            return
                        if "interrupt" in entry:
                            raise entry["interrupt"]
                        record(module, entry)
            except BaseException as exc:  # KeyboardInterrupt, or printing failed
                state["raised"] = exc  # raised again in the main thread, as before
            finally:
                finished.release()

        threading.Thread(target=work, daemon=True).start()
        pending = []
        while True:
            with guard:
                left = state["started"] + limit - time.perf_counter()
            if finished.acquire(True, max(left, 0.0)):  # as Thread.join(limit) waits
                break
            with guard:
                if time.perf_counter() - state["started"] < limit:
                    continue  # the next probe has started since: wait on
                state["abandoned"] = True
                try:
                    raise ProbeTimeout(
                        "did not finish within %g s (blocked in a file or system call?); skipped"
                        % limit
                    )
                except ProbeTimeout as timeout:
                    record(batch[state["index"]], _error_entry(timeout, state["started"]))
            pending = batch[state["index"] + 1 :]
            break
        if "raised" in state:
            raise state["raised"]


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

    def record(module: Any, entry: Dict[str, Any]) -> None:
        if "output" in entry:
            output = entry["output"]
            entry = {
                "status": "ok",
                "values": output.values,
                "sources": output.sources,
                "duration_ms": entry["duration_ms"],
            }
            ctx.results[module.NAME] = output
        results[module.NAME] = entry
        if on_result is not None:
            on_result(module.NAME, entry)

    modules = [module for module in PROBES if only is None or module.NAME in only]
    if limit is not None:
        _run_with_limit(modules, ctx, float(limit), record)
    else:
        for module in modules:
            entry = _attempt(module, ctx)
            if "interrupt" in entry:
                raise entry["interrupt"]
            record(module, entry)
    return {"protocol": PROTOCOL, "probes": results}


def _emit(marker: str, document: Any) -> None:
    # ASCII-only JSON on its own marked line: whatever else the interpreter
    # prints (sitecustomize, warnings) and whatever the stdout encoding is.
    text = json.dumps(document, ensure_ascii=True, default=repr, sort_keys=True)
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
