"""The resolver on hand-made matrices: each axis that rules a release out,
the commands, the alternatives when nothing fits, and the CLI around it."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import CliResult
from helpers.profiles import win_arm64
from packaging.version import Version

from qnndoctor.matrixdata import load
from qnndoctor.matrixdata.releases import parse
from qnndoctor.resolver.recommend import Profile, recommend

Cli = Callable[..., CliResult]


def _file(version: str, tag: str, platform: str, **extra: Any) -> dict[str, Any]:
    python = tag.split("-")[0]
    return {
        "filename": f"onnxruntime_qnn-{version}-{tag}.whl",
        "platform": platform,
        "size": 1000,
        "sha256": "0" * 64,
        "yanked": False,
        "requires_python": extra.pop("requires_python", None),
        "requires_dist": extra.pop("requires_dist", ["numpy>=1.21.6"]),
        "libraries": extra.pop(
            "libraries", [{"kind": "backend_htp", "path": "QnnHtp.dll", "machine": None}]
        ),
        "stub_hexagon_versions": extra.pop("stubs", [68, 73]),
        "qnn_version": extra.pop("qnn", {"version": "2.37.1", "build": "2.37.1.1"}),
        "python_tags": [python],
        **extra,
    }


def _matrix(
    *releases: tuple[str, list[dict[str, Any]]], issues: list[dict[str, Any]] | None = None
) -> Any:
    return parse(
        {"releases": [{"version": v, "files": files} for v, files in releases]},
        {"issues": issues or []},
    )


ARM = "cp312-cp312-win_arm64"
X64 = "cp312-cp312-win_amd64"


_RELEASES = (
    (
        "1.24.1",
        [_file("1.24.1", ARM, "win_arm64", stubs=[68, 73, 75, 79, 81], qnn={"version": "2.42.0"})],
    ),
    ("1.23.2", [_file("1.23.2", ARM, "win_arm64", stubs=[68, 73], qnn={"version": "2.37.1"})]),
    ("1.22.0", [_file("1.22.0", "cp311-cp311-win_arm64", "win_arm64")]),
)


def test_newest_fitting_release_and_why_newer_ones_are_ruled_out() -> None:
    matrix = _matrix(*_RELEASES)
    sdk = win_arm64(
        system_qnn=Version("2.40.0"), system_qnn_source=r"env QNN_SDK_ROOT: C:\\Qualcomm\\2.40"
    )
    rec = recommend(win_arm64(htp_arch=79), matrix)
    assert rec.status == "ok" and str(rec.chosen.version) == "1.24.1"  # type: ignore[union-attr]
    assert rec.commands == (r'C:\py\python.exe -m pip install "onnxruntime-qnn==1.24.1"',)
    no_stub = recommend(win_arm64(htp_arch=75), matrix)
    assert str(no_stub.chosen.version) == "1.24.1"  # type: ignore[union-attr]
    newer_x_elite = recommend(win_arm64(htp_arch=81), matrix)
    assert str(newer_x_elite.chosen.version) == "1.24.1"  # type: ignore[union-attr]
    only_73 = _matrix(*[r for r in _RELEASES if r[0] != "1.24.1"])
    rec = recommend(win_arm64(htp_arch=75), only_73)
    assert rec.status == "nothing-fits"
    (first, _older) = rec.ruled_out
    assert str(first.version) == "1.23.2"
    (reason,) = first.reasons
    assert reason.axis == "no-stub-for-htp-arch" and reason.confidence == "artifact"
    assert reason.sources and all(s.startswith("https://") for s in reason.sources)
    assert "Hexagon v68, v73 only; this chip is Hexagon v75" in reason.detail
    # A system QNN SDK older than the bundled QNN rules nothing out: it is a note.
    with_sdk = recommend(sdk, matrix)
    assert str(with_sdk.chosen.version) == "1.24.1" and not with_sdk.ruled_out  # type: ignore[union-attr]
    assert any("shadowing" in n and "QNN SDK 2.40.0" in n for n in with_sdk.notes)


def test_each_axis() -> None:
    matrix = _matrix(
        ("2.7.0", [_file("2.7.0", "cp312-cp312-manylinux_2_35_x86_64", "linux_x86_64")]),
        ("2.6.0", [_file("2.6.0", "cp311-cp311-win_arm64", "win_arm64")]),
        ("2.5.0", [_file("2.5.0", ARM, "win_arm64", requires_python=">=3.13")]),
        ("2.4.0", [_file("2.4.0", ARM, "win_arm64", stubs=[75, 79])]),
        ("2.3.0rc1", [_file("2.3.0rc1", ARM, "win_arm64")]),
        ("2.2.0", [_file("2.2.0", ARM, "win_arm64")]),
    )
    rec = recommend(win_arm64(), matrix)
    axes = {str(v.version): v.reasons[0].axis for v in rec.ruled_out}
    assert axes == {
        "2.7.0": "no-wheel-for-platform",
        "2.6.0": "no-wheel-for-python",
        "2.5.0": "requires-python",
        "2.4.0": "no-stub-for-htp-arch",
    }
    assert str(rec.chosen.version) == "2.2.0"  # type: ignore[union-attr]
    with_pre = recommend(win_arm64(), matrix, allow_prerelease=True)
    assert str(with_pre.chosen.version) == "2.3.0rc1"  # type: ignore[union-attr]


def _libs(htp_header: str, stub: str | None) -> list[dict[str, Any]]:
    """Libraries as the refresh tool records them: headers for the big DLLs,
    the load config (ARM64X / ARM64EC) only for the small stub it reads whole."""
    libs = [{"kind": "backend_htp", "machine": htp_header, "machine_source": "pe-header"}]
    if stub:
        libs.append({"kind": "htp_stub", "machine": stub, "machine_source": "pe-load-config"})
    return libs


def test_emulated_x64_python_on_arm64() -> None:
    emulated = win_arm64(arch="x86_64", emulated=True)
    x64 = _matrix(
        (
            "1.18.0",
            [
                _file("1.18.0", X64, "win_amd64", libraries=_libs("AMD64", None)),
                _file("1.18.0", ARM, "win_arm64"),
            ],
        ),
    )
    rec = recommend(emulated, x64)
    assert rec.status == "nothing-fits"
    assert rec.ruled_out[0].reasons[0].axis == "x64-libraries-under-emulation"
    assert rec.alternatives[0]["change"].startswith("install native ARM64 CPython 3.12")
    assert rec.alternatives[0]["version"] == "1.18.0"
    # The real 1.23.2 win_amd64 wheel: QnnHtp.dll says 0xAA64, its stub's load config says ARM64X.
    arm64x = recommend(
        emulated,
        _matrix(
            ("1.23.2", [_file("1.23.2", X64, "win_amd64", libraries=_libs("ARM64", "ARM64X"))])
        ),
    )
    assert arm64x.status == "ok"
    assert any("ARM64X builds" in n for n in arm64x.chosen.notes)  # type: ignore[union-attr]
    plain = recommend(
        emulated,
        _matrix(("9.0.0", [_file("9.0.0", X64, "win_amd64", libraries=_libs("ARM64", "ARM64"))])),
    )
    assert plain.status == "nothing-fits" and "plain ARM64" in plain.ruled_out[0].reasons[0].detail
    unknown = recommend(
        emulated,
        _matrix(("9.0.0", [_file("9.0.0", X64, "win_amd64", libraries=_libs("ARM64", None))])),
    )
    assert unknown.status == "ok" and any("not verified" in n for n in unknown.chosen.notes)  # type: ignore[union-attr]


def test_known_issue_pins_the_companion() -> None:
    issue = {
        "id": "plugin-ort-version-supported-0",
        "title": "handshake",
        "onnxruntime_qnn": ">=2.0,<2.4",
        "effect": "pin-companion",
        "companion_pin": "onnxruntime>=1.24.2,<1.28",
        "confidence": "maintainer-confirmed",
        "sources": ["x"],
    }
    matrix = _matrix(
        ("2.3.0", [_file("2.3.0", ARM, "win_arm64", requires_dist=["onnxruntime>=1.24.2"])]),
        issues=[issue],
    )
    rec = recommend(win_arm64(), matrix)
    assert rec.commands[-1].endswith('"onnxruntime-qnn==2.3.0" "onnxruntime>=1.24.2,<1.28"')


def test_conflicting_flavours_are_uninstalled_first() -> None:
    matrix = _matrix(
        ("2.7.0", [_file("2.7.0", "cp311-cp311-manylinux_2_35_x86_64", "linux_x86_64")])
    )
    profile = Profile(
        python=(3, 11),
        free_threaded=False,
        os="linux",
        arch="x86_64",
        native_arch="x86_64",
        emulated=False,
        glibc=(2, 36),
        htp_arch=None,
        htp_arch_source=None,
        system_qnn=None,
        system_qnn_source=None,
        python_exe="/v/bin/python",
        installed=(
            ("onnxruntime-gpu", "1.22.0", ("onnxruntime",)),
            ("onnxruntime-qnn", "1.23.2", ("onnxruntime",)),
            ("onnxruntime", "1.31.1", ("onnxruntime",)),
        ),
    )
    rec = recommend(profile, matrix)
    # The uninstall deletes files the kept onnxruntime shares with them: it is
    # reinstalled, same version, before the plugin goes in.
    assert rec.commands == (
        "/v/bin/python -m pip uninstall -y onnxruntime-gpu onnxruntime-qnn",
        "/v/bin/python -m pip install --force-reinstall --no-deps onnxruntime==1.31.1",
        "/v/bin/python -m pip install onnxruntime-qnn==2.7.0",
    )
    too_old_glibc = recommend(dataclasses.replace(profile, glibc=(2, 31)), matrix)
    assert too_old_glibc.status == "nothing-fits"
    assert too_old_glibc.ruled_out[0].reasons[0].axis == "no-wheel-for-platform"


def test_recommend_cli_on_the_healthy_venv(cli: Cli, healthy_venv: Path, tmp_path: Path) -> None:
    matrix = tmp_path / "releases.json"
    matrix.write_text(
        json.dumps(
            {
                "releases": [
                    {
                        "version": "2.7.0",
                        "files": [
                            _file("2.7.0", "cp311-cp311-manylinux_2_35_x86_64", "linux_x86_64")
                        ],
                    },
                    {
                        "version": "2.6.0",
                        "files": [_file("2.6.0", "cp312-cp312-win_arm64", "win_arm64")],
                    },
                ]
            }
        )
    )
    result = cli("recommend", "--python", str(healthy_venv), "--matrix", str(matrix), "--json")
    assert result.code == 0, result.err
    rec = result.json()["recommendation"]
    assert rec["version"] == "2.7.0"
    assert rec["already_installed"] is True and rec["commands"] == []  # 2.7.0 is what the venv has
    text = cli("recommend", "--python", str(healthy_venv), "--matrix", str(matrix))
    assert "Install onnxruntime-qnn 2.7.0" in text.out and "already installed" in text.out
    report = cli(
        "check", "--python", str(healthy_venv), "--matrix", str(matrix), "--json", "--no-smoke"
    ).json()
    assert report["recommendation"]["version"] == "2.7.0"
    assert "installed-release-unsuitable" not in {f["id"] for f in report["findings"]}


def test_broken_wheel_record_in_a_matrix_file_is_a_clear_error(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "releases.json"
    bad.write_text('{"releases": [{"version": "1.0", "files": [{"filename": "not-a-wheel.zip"}]}]}')
    result = cli("matrix", "--matrix", str(bad))
    assert result.code == 3 and "bad wheel file name" in result.err


def test_broken_matrix_file_is_a_clear_error(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "releases.json"
    bad.write_text('{"releases": [{"version": "not a version", "files": []}]}')
    result = cli("matrix", "--matrix", str(bad))
    assert result.code == 3 and "malformed matrix" in result.err
    assert "Traceback" not in result.err


def test_bundled_matrix_loads() -> None:
    matrix = load()
    assert matrix.socs


def test_matrix_table_columns_fit_and_pythons_sort_as_numbers(cli: Cli) -> None:
    result = cli("matrix")
    assert result.code == 0
    lines = result.out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("version "))
    table = lines[header:]
    table = table[: table.index("")] if "" in table else table  # the experiments follow
    stubs_at = table[0].index("stubs")
    companion_at = table[0].index("companion")
    assert len({line.index(" ", stubs_at) for line in table}) >= 1
    for line in table[1:]:
        # Every cell starts under its heading: nothing overflows into the next column.
        assert line[stubs_at - 1] == " " and line[companion_at - 1] == " ", line
        assert line[companion_at:].split()[0] in ("-",) or line[companion_at] in "=><!~", line
    rows = cli("matrix", "--json").json()["rows"]
    old = next(r for r in rows if r["version"] == "1.18.1" and r["platform"] == "win_amd64")
    assert old["python"] == ["cp38", "cp39", "cp310", "cp311", "cp312"]
    assert "cp38,cp39,cp310,cp311,cp312" in result.out
    linux = next(r for r in rows if r["platform"] == "linux_aarch64")
    assert any(
        line.split()[:2] == [linux["version"], "linux_aarch64"]
        and "v68,v69,v73,v75,v79,v81" in line.split()
        for line in table
    )


def test_matrix_from_without_update_is_a_usage_error(cli: Cli) -> None:
    for args in (
        ("matrix", "--from", "https://example.invalid/r.json"),
        ("matrix", "show", "--from", "x"),
    ):
        result = cli(*args)
        assert result.code == 2 and "matrix update --from URL" in result.err
        assert result.out == ""
