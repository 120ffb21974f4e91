"""The probe program: stdlib-only code that runs inside the target interpreter.

It is loaded under a private package name (see ``qnndoctor.collect``), runs
every probe in order, isolating each, and prints one JSON document. It never
imports onnxruntime and must run on any CPython 3.8+.
"""

from __future__ import annotations

import json
import sys
import time

from . import emulation, installs, interpreter, paths, qnn_bundled, qnn_sdk, soc
from .base import Context

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Any, Dict, List, Optional

PROTOCOL = 1

# Order matters: later probes read earlier results (paths reads all of them).
PROBES = (interpreter, emulation, installs, qnn_bundled, qnn_sdk, soc, paths)

MARKER = "@@qnndoctor-probe@@"


def run_all(
    options: Optional[Dict[str, Any]] = None, only: Optional[List[str]] = None
) -> Dict[str, Any]:
    """Run the probes; one that raises becomes an error entry, the rest go on."""
    ctx = Context(options)
    results: Dict[str, Any] = {}
    for module in PROBES:
        name = module.NAME
        if only is not None and name not in only:
            continue
        started = time.perf_counter()
        try:
            output = module.run(ctx)
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
            continue
        ctx.results[name] = output
        results[name] = {
            "status": "ok",
            "values": output.values,
            "sources": output.sources,
            "duration_ms": round((time.perf_counter() - started) * 1000, 2),
        }
    return {"protocol": PROTOCOL, "probes": results}


def main(argv: List[str]) -> int:
    options: Dict[str, Any] = {}
    for arg in argv:
        if arg == "--deep":
            options["deep"] = True
        elif arg.startswith("--model="):
            options["model_path"] = arg.split("=", 1)[1]
    document = run_all(options)
    # ASCII-only JSON on its own marked line: whatever else the interpreter
    # prints (sitecustomize, warnings) and whatever the stdout encoding is.
    text = json.dumps(document, ensure_ascii=True, default=repr, sort_keys=True)
    sys.stdout.write("\n" + MARKER + text + "\n")
    sys.stdout.flush()
    return 0
