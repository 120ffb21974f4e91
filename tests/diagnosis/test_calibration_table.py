"""The calibration table in docs/diagnosis.md cannot drift from its own counts: every
">= N %" bound is the Wilson lower bound of its right / given (as
bench/bench_diagnosis.py prints it), and the promise stated below the table is the
pooled bound of the three measurements no answer was fitted to."""

from __future__ import annotations

import functools
import importlib.util
import math
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "diagnosis.md"
UNFITTED = ("leave-one-out", "public held-out", "runtime-made held-out")


@functools.cache
def _bench() -> ModuleType:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        spec = importlib.util.spec_from_file_location(
            "bench_diagnosis", ROOT / "bench" / "bench_diagnosis.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules.setdefault("bench_diagnosis", module)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "bench"))


def _floor_bound(right: int, given: int) -> int:
    return math.floor(100 * float(_bench().wilson_lower(right, given)))


def _table() -> list[tuple[str, list[str]]]:
    text = DOC.read_text("utf-8")
    start = text.index("| corpus | high | medium | low |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.append((cells[0], cells[1:]))
    return rows


CELL = re.compile(r"(\d+) / (\d+) \((?:\d+ %, )?>= (\d+) %\)")


def test_every_bound_in_the_calibration_table_is_the_wilson_bound_of_its_counts() -> None:
    checked = 0
    for _, cells in _table():
        for cell in cells:
            for right, given, bound in CELL.findall(cell):
                assert _floor_bound(int(right), int(given)) == int(bound), cell
                checked += 1
    assert checked == 11  # every cell with a bound (the wrong-counts row has none)


def test_the_stated_promise_is_the_pooled_bound_of_the_unfitted_measurements() -> None:
    pooled = {"high": [0, 0], "medium": [0, 0]}
    rows = [(name, cells) for name, cells in _table() if any(u in name for u in UNFITTED)]
    assert len(rows) == 3
    for _, cells in rows:
        for label, cell in zip(("high", "medium"), cells[:2], strict=True):
            right, given = CELL.search(cell).groups()[:2]  # type: ignore[union-attr]
            pooled[label][0] += int(right)
            pooled[label][1] += int(given)
    text = " ".join(DOC.read_text("utf-8").split())
    for label, (right, given) in pooled.items():
        stated = f"{label} **{right} / {given} right ({round(100 * right / given)} %, >= {_floor_bound(right, given)} %)"
        assert stated in text, stated
