"""Table-driven: every release x platform x Python row of the committed
matrix, through the resolver, for a target that matches it and for targets
that must not match it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from qnndoctor.matrixdata import load
from qnndoctor.matrixdata.releases import Release, WheelFile
from qnndoctor.resolver.recommend import (
    NO_PLATFORM,
    NO_PYTHON,
    NO_QNN_LIBRARIES,
    NO_STUB,
    REQUIRES_PYTHON,
    X64_MACHINE,
    Profile,
    evaluate_release,
)
from qnndoctor.resolver.wheel_checks import on_x64_machine

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
    # A native x64 PC cannot load the Windows-on-ARM QNN libraries of most
    # 1.x win_amd64 wheels (built for x64 Python under emulation).
    arm_only = on_x64_machine(file) is not None and file.platform == "win_amd64"
    assert axes - {X64_MACHINE} <= {REQUIRES_PYTHON, NO_QNN_LIBRARIES, "known-issue"}, verdict
    assert (X64_MACHINE in axes) is arm_only, verdict
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

    # A named chip needs the HTP stub for its Hexagon version wherever the
    # NPU is driven (x64 Python on a Windows ARM64 PC too); a wheel with no
    # stub at all drives no chip.
    on_npu = (
        dataclasses.replace(profile, native_arch="arm64", emulated=True)
        if file.platform == "win_amd64"
        else profile
    )
    missing = next(v for v in (66, 69, 75, 79, 81, 85) if v not in file.stub_hexagon_versions)
    soc = dataclasses.replace(on_npu, htp_arch=missing)
    stub_rule = NO_STUB in {r.axis for r in evaluate_release(soc, release, MATRIX, True).reasons}
    assert stub_rule is (file.platform != "linux_x86_64" and NO_QNN_LIBRARIES not in axes)


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


def test_matching_tags_per_platform_agrees_with_packagings_whole_set() -> None:
    """``Profile.accepts`` (supported tags of only the wheel's platforms) says
    what intersecting with every supported tag says, for every wheel of the
    matrix plus pure, abi3, py-tagged and free-threaded tag sets, on targets
    across Pythons, OSes, architectures and glibc levels."""
    from packaging.tags import Tag

    tag_sets = {file.tags for release in MATRIX.releases for file in release.files}
    tag_sets |= {
        frozenset({Tag("py3", "none", "any")}),
        frozenset({Tag("cp312", "abi3", "manylinux_2_17_x86_64")}),
        frozenset({Tag("cp38", "abi3", "win_amd64")}),
        frozenset({Tag("py312", "none", "linux_x86_64")}),
        frozenset({Tag("cp313", "cp313t", "win_arm64")}),
    }
    base = _profile_for(ROWS[0][1])
    accepted = rejected = 0
    for python in ((3, 8), (3, 11), (3, 13), (3, 14)):
        for free_threaded in (False, True):
            for os_name, arch in (*BUCKETS.values(), ("windows", "x86"), ("macos", "arm64")):
                for glibc in (None, (2, 17), (2, 35)):
                    profile = dataclasses.replace(
                        base,
                        python=python,
                        free_threaded=free_threaded,
                        os=os_name,
                        arch=arch,
                        glibc=glibc,
                    )
                    everything = profile.tags()
                    for tags in tag_sets:
                        expected = bool(tags & everything)
                        assert profile.accepts(tags) is expected, (profile, sorted(map(str, tags)))
                        accepted += expected
                        rejected += not expected
    assert accepted and rejected  # both answers were exercised
