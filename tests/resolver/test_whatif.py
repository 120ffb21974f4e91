"""What-if mode (`qnndoctor recommend --platform ... --python-version ...`):
named answers and the CLI's bad-input handling. The grid of every cell
against the raw wheel records is tests/resolver/test_resolver_grid.py."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import pytest
from conftest import CliResult
from helpers.raw_matrix import expected as _expected

Cli = Callable[..., CliResult]


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
        (("--python-version", "3.12", "--soc", "60"), "different numbering spaces"),
        (("--python-version", "3.12", "--soc", ""), "give the chip's name"),
        (("--python-version", "3.12", "--soc", "  "), "give the chip's name"),
        (("--python-version", "3.12", "--glibc", "2.35"), "glibc is the C library of Linux"),
        (("--python-version", "2.7"), "CPython 3.8 and newer"),
        (("--python-version", "3.7"), "CPython 3.8 and newer"),
        (("--python-version", "4.0"), "CPython 3.8 and newer"),
        (("--python-version", "3.12", "--htp-arch", "seventy"), "write it as v73"),
        (  # (the last --platform wins)
            ("--platform", "linux_aarch64", "--python-version", "3.12", "--glibc", "new"),
            "write it as 2.35",
        ),
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
    from qnndoctor.resolver.whatif import WhatIfError, what_if

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


def test_an_unknown_soc_is_answered_without_the_chip(cli: Cli) -> None:
    args = ("recommend", "--platform", "win_arm64", "--python-version", "3.12")
    plain = cli(*args, "--json").json()["recommendation"]
    result = cli(*args, "--soc", "Snapdragon 9000", "--json")
    assert result.code == 0, result.err
    rec = result.json()["recommendation"]
    assert rec["profile"]["htp_arch"] is None
    assert (rec["version"], rec["commands"]) == (plain["version"], plain["commands"])
    (caveat,) = [n for n in rec["notes"] if "Snapdragon 9000" in n]
    assert "not in qnndoctor's SoC table" in caveat and "--htp-arch vNN" in caveat
    text = cli(*args, "--soc", "Snapdragon 9000")
    assert text.code == 0 and "--htp-arch vNN" in text.out
    # A name that matches SoCs of two Hexagon versions stays a question, with the way out.
    from qnndoctor.facts.socs import find_socs
    from qnndoctor.matrixdata import load

    socs = load().socs
    ambiguous = next(
        (
            n
            for s in socs
            for n in s.marketing_names
            if len({x.htp_arch for x in find_socs(n, socs)}) > 1
        ),
        None,
    )
    if ambiguous is not None:
        refused = cli(*args, "--soc", ambiguous)
        assert refused.code == 2 and "--htp-arch" in refused.err


def _recommend_with_reader_gone(*args: str, read_first_line: bool) -> int:
    """Run qnndoctor with stdout a pipe whose reader goes away: at once, or
    after the first line (`| head -1`)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "qnndoctor", "recommend", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    if read_first_line:
        process.stdout.readline()
    process.stdout.close()
    return process.wait(timeout=60)


def test_a_reader_that_goes_away_leaves_the_exit_code() -> None:
    """`recommend ... | head -1` exited 1 or 0 at random: the code is the answer's."""
    nothing_fits = ("--platform", "win_arm64", "--python-version", "3.10", "--soc", "X Elite")
    assert _recommend_with_reader_gone(*nothing_fits, read_first_line=False) == 1
    assert _recommend_with_reader_gone(*nothing_fits, read_first_line=True) == 1
    old = ("--platform", "win_arm64", "--python-version", "2.7")
    assert _recommend_with_reader_gone(*old, read_first_line=False) == 2
