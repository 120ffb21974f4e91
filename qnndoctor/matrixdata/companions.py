"""The companion pin a release's experiments prove (``companions`` rows of
``releases.json``, written by ``matrix/refresh/companions.py``): what the
resolver installs beside a 2.x release, instead of a hand-written pin."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from packaging.version import InvalidVersion, Version

from .releases import Release

SOURCE = "the matrix's companion experiments (matrix/refresh/companions.py, docs/matrix.md)"


@dataclass(frozen=True)
class Proven:
    pin: str | None  # None: the newest onnxruntime the metadata admits passed (pip's choice)
    text: str  # what was measured, with its date
    none_passed: bool = False

    @property
    def note(self) -> str:
        return f"companion: {self.text}" + (f"; installing with {self.pin}" if self.pin else "")


def _rows(release: Release) -> list[tuple[Version, Mapping[str, Any]]]:
    rows = []
    for row in release.companions:
        if row.get("outcome") not in ("passed", "failed"):
            continue  # not-installable / timeout say nothing about the pair
        try:
            rows.append((Version(str(row.get("onnxruntime"))), row))
        except InvalidVersion:
            continue
    return sorted(rows, key=lambda item: item[0])


def proven(release: Release) -> Proven | None:
    """The pin the experiments support, or None without experiments."""
    rows = _rows(release)
    admitted = [(v, r) for v, r in rows if r.get("admitted")]
    if not admitted:
        return None
    date = max(str(r.get("date")) for _v, r in rows)
    where = f"on {rows[0][1].get('platform')}, {date}"
    passed = [v for v, r in admitted if r.get("outcome") == "passed"]
    newest = admitted[-1][0]
    if not passed:
        return Proven(
            None, f"no onnxruntime release it admits passed with it ({where})", none_passed=True
        )
    if newest in passed:
        return Proven(None, f"onnxruntime {newest}, the newest it admits, passed ({where})")
    best = max(passed)
    failed_above = [v for v, r in admitted if v > best and r.get("outcome") == "failed"]
    low = best
    for version, row in reversed([(v, r) for v, r in admitted if v <= best]):
        if row.get("outcome") != "passed":
            break
        low = version
    pin = f"onnxruntime>={low},<{min(failed_above)}" if failed_above else f"onnxruntime=={best}"
    return Proven(
        pin,
        f"onnxruntime {low} to {best} passed with it, {min(failed_above) if failed_above else newest}"
        f" failed ({where})",
    )
