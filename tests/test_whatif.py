"""What-if mode (`qnndoctor recommend --platform ... --python-version ...`):
the grid of platforms x Python 3.8-3.14 x every HTP arch x system QNN SDK
present/absent, each cell checked against an answer derived here from the
raw wheel records of matrix/releases.json (not through the resolver), and
the CLI's bad-input handling."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from conftest import CliResult
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from qnndoctor._layout import package_dir

Cli = Callable[..., CliResult]
MATRIX_DIR = package_dir("matrix")
assert MATRIX_DIR is not None
RAW = json.loads((MATRIX_DIR / "releases.json").read_text("utf-8"))
ISSUES = json.loads((MATRIX_DIR / "known_issues.json").read_text("utf-8"))["issues"]
SOCS = json.loads((MATRIX_DIR / "socs.json").read_text("utf-8"))["socs"]
PLATFORMS = ("win_arm64", "win_amd64", "linux_aarch64", "linux_x86_64")
PYTHONS = tuple(f"3.{minor}" for minor in range(8, 15))
ARCHES = (None, *sorted({s["htp_arch"] for s in SOCS if s["htp_arch"]}))


def _expected(platform: str, python: str, arch: int | None) -> str | None:
    """The newest final release with a wheel for this platform and Python
    that bundles the QNN HTP backend and, if it ships HTP stubs, one for this
    Hexagon version; straight from the wheel records."""
    tag = "cp" + python.replace(".", "")
    fitting = []
    for release in RAW["releases"]:
        version = Version(release["version"])
        if version.is_prerelease:
            continue
        if any(
            i["effect"] == "rule-out" and SpecifierSet(i["onnxruntime_qnn"]).contains(version)
            for i in ISSUES
        ):
            continue
        for wheel in release["files"]:
            if wheel["platform"] != platform or wheel.get("yanked"):
                continue
            if tag not in wheel["python_tags"]:
                continue
            if wheel.get("requires_python") and not SpecifierSet(wheel["requires_python"]).contains(
                python
            ):
                continue
            if not any(lib["kind"] == "backend_htp" for lib in wheel.get("libraries") or []):
                continue
            stubs = wheel.get("stub_hexagon_versions") or []
            if arch is not None and stubs and arch not in stubs:
                continue
            fitting.append(version)
    return str(max(fitting)) if fitting else None


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("python", PYTHONS)
def test_what_if_grid(cli: Cli, platform: str, python: str) -> None:
    for arch in ARCHES:
        expected = _expected(platform, python, arch)
        answers = []
        for sdk in ((), ("--qnn-sdk", "2.22.0")):
            chip = ("--htp-arch", f"v{arch}") if arch else ()
            result = cli(
                "recommend",
                "--platform",
                platform,
                "--python-version",
                python,
                *chip,
                *sdk,
                "--json",
            )
            cell = f"{platform} {python} v{arch} sdk={bool(sdk)}"
            assert result.code == (0 if expected else 1), (cell, result.err)
            rec = result.json()["recommendation"]
            assert rec["version"] == expected, cell
            assert rec["profile"]["htp_arch"] == arch
            if expected:
                assert f"onnxruntime-qnn=={expected}" in rec["commands"][-1], cell
                if Version("2.0") <= Version(expected) < Version("2.4"):
                    assert "onnxruntime>=1.24.2,<1.28" in rec["commands"][-1], cell
                assert expected != "1.17.3"
            answers.append((rec["version"], rec["commands"]))
        # A system QNN SDK changes nothing about the answer.
        assert answers[0] == answers[1], (platform, python, arch)


def test_soc_names_fill_the_profile(cli: Cli) -> None:
    for name, arch in (
        ("Snapdragon X Elite", 73),
        ("X1E-78-100", 73),
        ("soc_model=60", 73),
        ("8cx Gen 3", 68),
        ("Snapdragon X2 Elite", 81),
        ("8 Elite Gen 5", 81),
    ):
        result = cli(
            "recommend",
            "--platform",
            "win_arm64",
            "--python-version",
            "3.12",
            "--soc",
            name,
            "--json",
        )
        rec = result.json()["recommendation"]
        assert {"status", "version", "file", "commands", "ruled_out", "notes", "profile"} <= set(
            rec
        )
        assert rec["profile"]["htp_arch"] == arch, name
        assert name in rec["profile"]["htp_arch_source"]


def test_x_elite_python_311_with_an_sdk_is_2_7_0(cli: Cli) -> None:
    result = cli(
        "recommend",
        "--platform",
        "win_arm64",
        "--python-version",
        "3.11",
        "--soc",
        "Snapdragon X Elite",
        "--qnn-sdk",
        "2.22.0",
        "--npu-driver",
        "30.0.140.1000",
    )
    assert result.code == 0
    assert 'py -V:3.11-arm64 -m pip install "onnxruntime-qnn==2.7.0"' in result.out
    assert "shadowing" in result.out and "NPU driver 30.0.140.1000" in result.out
    assert "minimum Windows ML lists" not in result.out  # new enough: no note
    old = cli(
        "recommend",
        "--platform",
        "win_arm64",
        "--python-version",
        "3.11",
        "--soc",
        "X Elite",
        "--npu-driver",
        "30.0.31.250",
        "--json",
    ).json()["recommendation"]
    assert old["version"] == "2.7.0" and not old["ruled_out"]  # a note, never a rule
    assert any("30.0.31.250" in n and "older than 30.0.140.0" in n for n in old["notes"])
    assert old["profile"]["npu_driver"] == "30.0.31.250"
    bad = cli(
        "recommend", "--platform", "win_arm64", "--python-version", "3.11", "--npu-driver", "new"
    )
    assert bad.code == 2 and "write it as 30.0.140.1000" in bad.err


def test_emulated_x64_gets_native_arm64_commands_first(cli: Cli) -> None:
    result = cli(
        "recommend",
        "--platform",
        "win_amd64",
        "--python-version",
        "3.12",
        "--native-arch",
        "arm64",
        "--soc",
        "X1E-78-100",
        "--json",
    )
    rec = result.json()["recommendation"]
    assert rec["profile"]["emulated"] is True
    assert rec["commands"][0].startswith(
        "winget install --exact --id Python.Python.3.12 --architecture arm64"
    )
    assert rec["commands"][1] == 'py -V:3.12-arm64 -m pip install "onnxruntime-qnn==2.7.0"'
    assert rec["emulation"]["this_interpreter_commands"] == [
        'py -V:3.12 -m pip install "onnxruntime-qnn==2.7.0"'
    ]
    # Python 3.10: 1.23.2's ARM64X libraries work under emulation, but no ARM64
    # wheel exists for 3.10, so the native route names another Python.
    old = cli(
        "recommend",
        "--platform",
        "win_amd64",
        "--python-version",
        "3.10",
        "--native-arch",
        "arm64",
        "--htp-arch",
        "v73",
        "--json",
    ).json()["recommendation"]
    assert old["emulation"]["this_interpreter_commands"][-1].endswith('"onnxruntime-qnn==1.23.2"')
    assert old["emulation"]["native_arm64"]["python"] == "3.12"
    assert old["commands"] == old["emulation"]["native_arm64"]["commands"]
    assert old["commands"][-1] == 'py -V:3.12-arm64 -m pip install "onnxruntime-qnn==2.7.0"'


def test_commands_are_valid_in_powershell_and_cmd(cli: Cli) -> None:
    for platform in ("win_arm64", "win_amd64"):
        rec = cli("recommend", "--platform", platform, "--python-version", "3.12", "--json").json()[
            "recommendation"
        ]
        for command in rec["commands"]:
            assert "&&" not in command and "$" not in command and "'" not in command
            assert command.startswith("py -V:3.12")


def test_linux_x86_64_says_simulator(cli: Cli) -> None:
    result = cli(
        "recommend", "--platform", "linux_x86_64", "--python-version", "3.12", "--glibc", "2.35"
    )
    assert result.code == 0 and "simulator" in result.out
    assert "python3.12 -m pip install onnxruntime-qnn==2.7.0" in result.out
    old_glibc = cli(
        "recommend",
        "--platform",
        "linux_x86_64",
        "--python-version",
        "3.12",
        "--glibc",
        "2.31",
        "--json",
    )
    assert old_glibc.code == 1 and old_glibc.json()["recommendation"]["status"] == "nothing-fits"
    newest = old_glibc.json()["recommendation"]["ruled_out"][0]["reasons"][0]
    assert newest["axis"] == "no-wheel-for-platform"
    assert newest["detail"] == (
        "its Linux x86-64 wheels need glibc 2.35 or newer; this system has glibc 2.31"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--python-version", "3.1x"), "write it as 3.12"),
        (("--python-version", "3.12", "--soc", "Snapdragon 9000"), "no SoC in the table"),
        (("--python-version", "3.12", "--soc", "60"), "different numbering spaces"),
        (("--python-version", "3.12", "--htp-arch", "seventy"), "write it as v73"),
        (("--python-version", "3.12", "--glibc", "new"), "write it as 2.35"),
        (("--python-version", "3.12", "--qnn-sdk", "latest"), "not a version"),
        (("--python-version", "3.12", "--python", "/usr/bin/python3"), "probes nothing"),
        ((), "needs --python-version"),
    ],
)
def test_bad_what_if_input_is_a_clear_error(cli: Cli, args: tuple[str, ...], message: str) -> None:
    result = cli("recommend", "--platform", "win_arm64", *args)
    assert result.code == 2 and message in result.err, result.err
    assert "Traceback" not in result.err


def test_python_version_without_platform_and_bad_platform(cli: Cli) -> None:
    result = cli("recommend", "--python-version", "3.12")
    assert result.code == 2 and "needs --platform" in result.err
    assert cli("recommend", "--platform", "macos_arm64", "--python-version", "3.12").code == 2
    native = cli(
        "recommend",
        "--platform",
        "linux_x86_64",
        "--python-version",
        "3.12",
        "--native-arch",
        "arm64",
    )
    assert native.code == 2 and "linux_aarch64" in native.err


def test_text_groups_releases_ruled_out_for_the_same_reasons(cli: Cli) -> None:
    args = ("recommend", "--platform", "win_arm64", "--python-version", "3.14", "--htp-arch", "v75")
    rec = cli(*args, "--json").json()["recommendation"]
    text = cli(*args).out
    runs: list[list[str]] = []
    previous = None
    for verdict in rec["ruled_out"]:
        if verdict["reasons"] == previous:
            runs[-1].append(verdict["version"])
        else:
            runs.append([verdict["version"]])
        previous = verdict["reasons"]
    assert len(runs) < len(rec["ruled_out"])  # something was grouped
    for run in runs:
        label = run[0] if len(run) == 1 else f"{run[-1]} to {run[0]} ({len(run)} releases)"
        assert f"  {label}:\n" in text


def test_python_api_for_installers() -> None:
    from qnndoctor.whatif import WhatIfError, what_if

    rec = what_if("win_arm64", "3.12", soc="Snapdragon X Elite", qnn_sdk="2.22.0")
    assert json.loads(json.dumps(rec)) == rec  # plain JSON, as the CLI prints it
    assert rec["version"] == _expected("win_arm64", "3.12", 73)
    assert rec["commands"] == ['py -V:3.12-arm64 -m pip install "onnxruntime-qnn==2.7.0"']
    assert rec["profile"]["htp_arch"] == 73
    for bad in (
        {"platform": "macos_arm64", "python_version": "3.12"},
        {"platform": "win_arm64", "python_version": "3.12", "soc": "X Elite", "htp_arch": "v73"},
        {"platform": "win_arm64", "python_version": "3.12", "native_arch": "x86_64"},
        {"platform": "win_arm64", "python_version": "twelve"},
    ):
        with pytest.raises(WhatIfError):
            what_if(**bad)  # type: ignore[arg-type]


def test_nothing_fits_names_the_change_with_its_commands(cli: Cli) -> None:
    rec = cli(
        "recommend",
        "--platform",
        "win_arm64",
        "--python-version",
        "3.10",
        "--soc",
        "X Elite",
        "--json",
    ).json()["recommendation"]
    assert rec["status"] == "nothing-fits" and rec["commands"] == []
    first = rec["alternatives"][0]
    expected = _expected("win_arm64", "3.12", 73)
    assert first["version"] == expected
    assert first["commands"] == [
        "winget install --exact --id Python.Python.3.12 --architecture arm64",
        f'py -V:3.12-arm64 -m pip install "onnxruntime-qnn=={expected}"',
    ]
    linux = cli(
        "recommend",
        "--platform",
        "linux_aarch64",
        "--python-version",
        "3.10",
        "--htp-arch",
        "v75",
        "--json",
    ).json()["recommendation"]
    assert linux["alternatives"][0]["commands"] == [
        f"python3.12 -m pip install onnxruntime-qnn=={_expected('linux_aarch64', '3.12', 75)}"
    ]
