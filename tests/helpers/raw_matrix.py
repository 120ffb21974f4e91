"""The committed release matrix read straight from its JSON (not through the
resolver): the wheel records the resolver's answers are checked against."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from qnndoctor._layout import package_dir

MATRIX_DIR = package_dir("matrix")
assert MATRIX_DIR is not None
RAW: dict[str, Any] = json.loads((MATRIX_DIR / "releases.json").read_text("utf-8"))
ISSUES: list[dict[str, Any]] = json.loads((MATRIX_DIR / "known_issues.json").read_text("utf-8"))[
    "issues"
]
SOCS: list[dict[str, Any]] = json.loads((MATRIX_DIR / "socs.json").read_text("utf-8"))["socs"]


def wheels(version: str | None = None) -> Iterator[tuple[Version, dict[str, Any]]]:
    for release in RAW["releases"]:
        if version is None or release["version"] == version:
            for wheel in release["files"]:
                yield Version(release["version"]), wheel


_BY_NAME = {w["filename"]: (v, w) for v, w in wheels()}


def wheel(filename: str) -> tuple[Version, dict[str, Any]] | None:
    return _BY_NAME.get(filename)


def installable(wheel: dict[str, Any], platform: str, python: str) -> bool:
    """pip would take this wheel for CPython ``python`` (3.12, 3.13t) on ``platform``."""
    tag = "cp" + python.replace(".", "")
    if wheel["platform"] != platform or wheel.get("yanked") or tag not in wheel["python_tags"]:
        return False
    requires = wheel.get("requires_python")
    return not requires or SpecifierSet(requires).contains(python.rstrip("t"))


def htp_folders(wheel: dict[str, Any]) -> dict[str, str | None]:
    """Library folder -> machine of its QNN HTP backend (QnnHtp.dll / libQnnHtp.so)."""
    return {
        lib["path"].rsplit("/", 1)[0]: lib.get("machine")
        for lib in wheel.get("libraries") or []
        if lib["kind"] == "backend_htp"
    }


def ruled_out_by_issue(version: Version) -> bool:
    return any(
        i["effect"] == "rule-out" and SpecifierSet(i["onnxruntime_qnn"]).contains(version)
        for i in ISSUES
    )


@functools.cache
def expected(platform: str, python: str, arch: int | None) -> str | None:
    """The newest final release a native target should get: a wheel for this
    platform and Python that bundles the QNN HTP backend; with a named chip
    (on a machine with an NPU: not Linux x86-64, the simulator) the HTP stub
    for its Hexagon version; on an x64 PC (win_amd64, not emulated) QNN
    libraries that are x64 builds."""
    fitting = []
    for version, item in wheels():
        if version.is_prerelease or ruled_out_by_issue(version):
            continue
        if not installable(item, platform, python):
            continue
        folders = htp_folders(item)
        if not folders:
            continue
        stubs = item.get("stub_hexagon_versions") or []
        if arch is not None and platform != "linux_x86_64" and arch not in stubs:
            continue
        if platform == "win_amd64" and "AMD64" not in folders.values():
            continue
        fitting.append(version)
    return str(max(fitting)) if fitting else None
