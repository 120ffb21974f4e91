"""Regenerate ``matrix/qnn_errors.json``, QNN's API error codes by number,
from the headers of a QAIRT / QNN SDK (``include/QNN``: ``QnnCommon.h``,
``QnnGraph.h``, ``QnnContext.h``, ..., ``System/*.h`` and ``HTP/*.h``).

A log that says ``Error code: 6031`` or ``with err 5005`` names a code from
these headers' enums; ``explain`` shows its name and the header's own words.
Every enumerator of an ``*_Error_t`` enum is read with the ``///`` comment
above it; a code several components share (``QNN_GRAPH_ERROR_MEM_ALLOC`` is
``QNN_COMMON_ERROR_MEM_ALLOC``, 1002) is one entry with the others as aliases.

Usage (from the repository root):
  python -m matrix.refresh.qnn_errors --headers $QNN_SDK_ROOT/include/QNN \\
      --api-version 2.32 --source URL [--source URL ...] [--out matrix/qnn_errors.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from qnndoctor.matrixdata.wheelreader.cache import write_text_atomically
from qnndoctor.matrixdata.wheelreader.common import EXIT_OK, EXIT_USAGE

_DEFINE = re.compile(r"^\s*#define\s+(QNN_\w+)\s+\(?([\w\s+]+?)\)?\s*$")
_ENUMERATOR = re.compile(r"^\s*(QNN_\w+)\s*=\s*([\w\s+()]+?)\s*,?\s*(?://.*)?$")
_DOC = re.compile(r"^\s*///\s?(.*)$")
_SKIP = re.compile(r"_(MIN|MAX)_ERROR$|_NO_ERROR$|_UNDEFINED$")
LOWEST, HIGHEST = 1000, 65535  # QNN_MIN_ERROR_COMMON .. the 16 bits a handle carries


def _value(expression: str, symbols: dict[str, int]) -> int | None:
    """``A + 3``, ``A``, ``(A + 3)`` or a number, from known symbols; None otherwise."""
    total = 0
    for term in expression.replace("(", " ").replace(")", " ").split("+"):
        term = term.strip()
        if term.isdigit():
            total += int(term)
        elif term in symbols:
            total += symbols[term]
        else:
            return None
    return total


def read_headers(folder: Path) -> dict[str, tuple[int, str, str]]:
    """Every error enumerator of the headers: name -> (code, component, meaning)."""
    files = [*sorted(folder.glob("*.h")), *sorted(folder.glob("System/*.h"))]
    files += sorted(
        folder.glob("HTP/*.h")
    )  # the HTP backend's own codes (13000: perf infrastructure)
    symbols: dict[str, int] = {"QNN_SUCCESS": 0}
    found: dict[str, tuple[int, str, str]] = {}
    # name, expression, component, meaning (None: a #define, a code space's bound)
    pending: list[tuple[str, str, str, str | None]] = []
    for path in files:
        component = path.stem.removeprefix("Qnn").lower()
        doc: list[str] = []
        for line in path.read_text("utf-8", errors="replace").splitlines():
            if match := _DOC.match(line):
                doc.append(match.group(1).strip())
                continue
            if match := _DEFINE.match(line):
                pending.append((match.group(1), match.group(2), component, None))
            elif (match := _ENUMERATOR.match(line)) and "ERROR" in match.group(1):
                pending.append((match.group(1), match.group(2), component, " ".join(doc)))
            doc = []
    for _ in range(10):  # definitions refer to each other across files: resolve in rounds
        for name, expression, component, meaning in pending:
            value = _value(expression, symbols)
            if value is None or name in symbols:
                continue
            symbols[name] = value
            if meaning is None or "_ERROR_" not in name or _SKIP.search(name):
                continue
            if LOWEST <= value <= HIGHEST:
                found[name] = (value, component, meaning)
    return found


def table(found: dict[str, tuple[int, str, str]]) -> list[dict[str, Any]]:
    """One entry per code: the name its header defines it by (a number, not
    another code's name) first, the names that alias it after."""
    by_code: dict[int, list[str]] = {}
    for name, (code, _component, _meaning) in found.items():
        by_code.setdefault(code, []).append(name)
    codes = []
    for code, names in sorted(by_code.items()):
        names.sort(key=lambda n: (not found[n][2], len(n), n))  # documented, shortest first
        primary = next((n for n in names if "COMMON_ERROR" in n), names[0])
        _, component, meaning = found[primary]
        codes.append(
            {
                "code": code,
                "name": primary,
                "component": component,
                "meaning": meaning or next((found[n][2] for n in names if found[n][2]), ""),
                "aliases": sorted(n for n in names if n != primary),
            }
        )
    return codes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m matrix.refresh.qnn_errors")
    parser.add_argument("--headers", type=Path, required=True, help="the SDK's include/QNN")
    parser.add_argument("--api-version", required=True, help="QNN_API_VERSION of the headers")
    parser.add_argument("--source", action="append", required=True, help="a public URL")
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent.parent / "qnn_errors.json"
    )
    args = parser.parse_args(argv)
    if not (args.headers / "QnnCommon.h").is_file():
        print(f"no QnnCommon.h in {args.headers}", file=sys.stderr)
        return EXIT_USAGE
    codes = table(read_headers(args.headers))
    document = {
        "schema_version": 1,
        "generated": datetime.date.today().isoformat(),
        "provenance": f"QNN API {args.api_version} headers, read by matrix/refresh/qnn_errors.py",
        "sources": args.source,
        "codes": codes,
    }
    write_text_atomically(args.out, json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(codes)} codes written to {args.out}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
