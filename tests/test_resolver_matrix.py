"""Table-driven: every release x platform x Python row of the committed
matrix, through the resolver, for a target that matches it and for targets
that must not match it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from qnndoctor.matrixdata import load
from qnndoctor.matrixdata.releases import Release, WheelFile
from qnndoctor.resolver import (
    NO_PLATFORM,
    NO_PYTHON,
    NO_QNN_LIBRARIES,
    NO_STUB,
    REQUIRES_PYTHON,
    Profile,
    evaluate_release,
)

MATRIX = load().releases
BUCKETS = {
    "win_arm64": ("windows", "arm64"),
    "win_amd64": ("windows", "x86_64"),
    "linux_x86_64": ("linux", "x86_64"),
    "linux_aarch64": ("linux", "arm64"),
}


def _rows() -> Iterator[tuple[Release, WheelFile]]:
    for release in MATRIX.releases:
        for file in release.files:
            if file.platform in BUCKETS and not file.yanked:
                yield release, file


ROWS = list(_rows())


def _profile_for(file: WheelFile) -> Profile:
    """A target this wheel was built for: its Python, OS, architecture, glibc."""
    os_name, arch = BUCKETS[file.platform]
    (interpreter,) = {t.interpreter for t in file.tags}
    glibc = None
    for tag in file.tags:
        if tag.platform.startswith("manylinux_"):
            major, minor = tag.platform.split("_")[1:3]
            glibc = max(glibc or (0, 0), (int(major), int(minor)))
    return Profile(
        python=(int(interpreter[2]), int(interpreter[3:].rstrip("t"))),
        free_threaded=interpreter.endswith("t"),
        os=os_name,
        arch=arch,
        native_arch=arch,
        emulated=False,
        glibc=glibc or ((2, 17) if os_name == "linux" else None),
        htp_arch=None,
        htp_arch_source=None,
        system_qnn=None,
        system_qnn_source=None,
        python_exe="python",
    )


def test_the_committed_matrix_has_every_platform() -> None:
    assert {f.platform for _r, f in ROWS} == set(BUCKETS)
    assert len(ROWS) >= 240


@pytest.mark.parametrize(("release", "file"), ROWS, ids=[f.filename for _r, f in ROWS])
def test_every_row_resolves_for_its_own_target(release: Release, file: WheelFile) -> None:
    profile = _profile_for(file)
    verdict = evaluate_release(profile, release, MATRIX, allow_prerelease=True)
    assert verdict.file is not None
    assert verdict.file.platform == file.platform
    axes = {r.axis for r in verdict.reasons}
    # Requires-Python may exclude a tag the wheel still carries (1.24.4 cp310).
    assert axes <= {REQUIRES_PYTHON, NO_QNN_LIBRARIES, "known-issue"}, verdict
    if NO_QNN_LIBRARIES in axes:  # only 1.17.3 bundled no QNN runtime
        assert str(release.version) == "1.17.3"
    if not axes:
        assert verdict.fits

    older_python = dataclasses.replace(profile, python=(3, 7))  # no release ships cp37
    assert {r.axis for r in evaluate_release(older_python, release, MATRIX, True).reasons} & {
        NO_PYTHON,
        REQUIRES_PYTHON,
    }
    other_os = dataclasses.replace(profile, os="macos", glibc=None)
    assert NO_PLATFORM in {
        r.axis for r in evaluate_release(other_os, release, MATRIX, True).reasons
    }

    if file.stub_hexagon_versions:
        missing = next(v for v in (66, 69, 75, 79, 81, 85) if v not in file.stub_hexagon_versions)
        soc = dataclasses.replace(profile, htp_arch=missing)
        assert NO_STUB in {r.axis for r in evaluate_release(soc, release, MATRIX, True).reasons}


EMULATED_EXPECTATIONS = {
    # release: whether an emulated x64 Python on Windows on ARM can use its win_amd64 wheel
    "1.18.0": False,  # plain x64 QNN libraries
    "1.22.2": False,  # plain x64 again, between ARM64X releases
    "1.23.2": True,  # ARM64X QNN libraries (stub load config)
    "2.7.0": True,  # libs/arm64ec holds ARM64X QNN libraries
}


@pytest.mark.parametrize(("version", "usable"), sorted(EMULATED_EXPECTATIONS.items()))
def test_emulated_x64_python_on_real_win_amd64_wheels(version: str, usable: bool) -> None:
    release = next(r for r in MATRIX.releases if str(r.version) == version)
    file = next(f for f in release.files if f.platform == "win_amd64" and "cp312" in f.filename)
    profile = dataclasses.replace(_profile_for(file), native_arch="arm64", emulated=True)
    verdict = evaluate_release(profile, release, MATRIX, allow_prerelease=True)
    assert ("x64-libraries-under-emulation" not in {r.axis for r in verdict.reasons}) is usable
