"""Reading native binaries on qnndoctor's side, after the probes reported paths.

The probe program has only the standard library; here ``pefile`` reads PE
version resources and the ARM64X/ARM64EC distinction, which decide which QNN
runtime a wheel really bundles and whether an emulated process can load it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from ...facts.libkinds import QNN_RUNTIME
from ...facts.probed import ERROR, OK, Facts, ProbeFacts, bundle_libraries, bundles
from . import pe

NAME = "binaries"


def _library_paths(facts: Facts) -> Iterable[str]:
    for bundle in bundles(facts):
        for lib in bundle_libraries(bundle):
            if lib.get("format") == "PE" and lib.get("path"):
                yield str(lib["path"])


def qnn_versions(facts: Facts, pe_details: dict[str, Any]) -> dict[str, Any]:
    """The QNN version each bundle carries, from the VERSIONINFO of its QNN
    DLLs. ``null`` when no DLL has one, or when they disagree (never a guess)."""
    result: dict[str, Any] = {}
    for bundle in bundles(facts):
        seen: dict[str, list[str]] = {}
        for lib in bundle_libraries(bundle):
            if lib.get("kind") not in QNN_RUNTIME:
                continue
            strings = (pe_details.get(str(lib.get("path"))) or {}).get("strings") or {}
            build = strings.get("ProductVersion")
            if build:
                seen.setdefault(str(build), []).append(str(lib.get("name")))
        if not seen:
            continue
        agree = len(seen) == 1
        build = next(iter(seen)) if agree else None
        result[str(bundle.get("dist"))] = {
            "version": ".".join(build.split("_")[0].split(".")[:3]) if build else None,
            "build": build,
            "agree": agree,
            "evidence": {k: sorted(v) for k, v in seen.items()},
            "source": "PE VERSIONINFO ProductVersion of the bundled QNN DLLs",
        }
    return result


def read_binaries(facts: Facts) -> ProbeFacts:
    """PE details of every bundled library the probes found, keyed by path."""
    started = time.perf_counter()
    if not facts.ok("qnn_bundled"):
        return ProbeFacts.failed(NAME, "Skipped", "the qnn_bundled probe did not run")
    details: dict[str, Any] = {}
    try:
        for path in _library_paths(facts):
            details[path] = pe.read_pe(path)
    except Exception as exc:
        return ProbeFacts(
            NAME,
            ERROR,
            error={"type": type(exc).__name__, "message": str(exc)},
            duration_ms=round((time.perf_counter() - started) * 1000, 2),
        )
    return ProbeFacts(
        NAME,
        OK,
        values={"pe": details, "qnn_versions": qnn_versions(facts, details)},
        sources={
            "pe": "pefile: FILE_HEADER, VS_VERSIONINFO, load config (CHPE)",
            "qnn_versions": "ProductVersion of the bundled QNN DLLs (must agree)",
        },
        duration_ms=round((time.perf_counter() - started) * 1000, 2),
    )
