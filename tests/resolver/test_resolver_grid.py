"""Every what-if cell against the matrix's own wheel records: platform
(win_arm64, win_amd64 on an x64 PC, win_amd64 under emulation on an ARM64 PC,
Linux ARM64 and x86-64) x Python 3.8-3.14 (and 3.13t) x SoC (none, one the
table does not know, every SoC of the table) x a system QNN SDK or none.

Per cell: the recommended wheel exists in matrix/releases.json for the
platform and Python the commands install into; it carries the HTP stub of
the named chip wherever an NPU is driven; the JSON's version / file / python
/ arch and the printed commands say the same thing; no command holds a
placeholder; the status is one of the two answers. Native cells are also
checked against the newest release derived from the raw records
(helpers/raw_matrix.py), emulated ones against the native ARM64 route.
Pure function calls (the matrix is loaded once): a few seconds."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conftest import CliResult
from helpers.raw_matrix import SOCS, expected, htp_folders, installable, wheel
from packaging.version import Version

from qnndoctor.matrixdata import load
from qnndoctor.resolver.whatif import what_if

Cli = Callable[..., CliResult]
MATRIX = load()
PYTHONS = (*(f"3.{minor}" for minor in range(8, 15)), "3.13t")
# (--platform, --native-arch)
MACHINES = (
    ("win_arm64", None),
    ("win_amd64", None),
    ("win_amd64", "arm64"),
    ("linux_aarch64", None),
    ("linux_x86_64", None),
)
UNKNOWN_SOC = "Snapdragon 9000"
SOC_NAMES: tuple[str | None, ...] = (None, UNKNOWN_SOC, *(s["part"] for s in SOCS))
ARCH_OF = {s["part"]: s["htp_arch"] for s in SOCS}
WINDOWS_SOCS = {s["part"] for s in SOCS if s.get("windows_processor_name_patterns")}
PLACEHOLDER = re.compile(r"<[^>]*>|\bX\.Y\b|==the\b|==[A-Za-z]|\.version\b")
NATIVE_ORDER = (12, 13, 11, 14)  # after the same version: the versions the wheels cover best


def _cell(
    platform: str, native: str | None, python: str, soc: str | None, sdk: bool
) -> dict[str, Any]:
    return what_if(
        platform,
        python,
        soc=soc,
        native_arch=native,
        qnn_sdk="2.22.0" if sdk else None,
        matrix=MATRIX,
    )


def _launcher(python: str, arch: str, windows: bool) -> str:
    if not windows:
        return f"python{python}"
    if arch == "arm64":
        return f"py -V:{python}-arm64"
    if Version(python.rstrip("t")) < Version("3.11") and not python.endswith("t"):
        return f"py -{python}"
    return f"py -V:{python}"


def _no_placeholder(commands: list[str]) -> None:
    for command in commands:
        assert not PLACEHOLDER.search(command), command


def _installs(
    where: str, version: str, filename: str, python: str, arch: str, commands: list[str]
) -> dict[str, Any]:
    """(a) the wheel exists for that platform and Python, (c) the commands
    install exactly it into exactly that interpreter, (d) no placeholder."""
    windows = where == "windows"
    platform = {
        ("windows", "arm64"): "win_arm64",
        ("windows", "x86_64"): "win_amd64",
        ("linux", "arm64"): "linux_aarch64",
        ("linux", "x86_64"): "linux_x86_64",
    }[(where, arch)]
    found = wheel(filename)
    assert found is not None, filename
    release, record = found
    assert str(release) == version, (filename, version)
    assert installable(record, platform, python), (filename, platform, python)
    assert htp_folders(record), filename  # it bundles the QNN HTP backend
    _no_placeholder(commands)
    launcher = _launcher(python, arch, windows)
    pip = [c for c in commands if " -m pip " in c]
    assert pip and all(c.startswith(f"{launcher} -m pip ") for c in pip), (launcher, commands)
    quote = '"' if windows else ""
    assert f"{quote}onnxruntime-qnn=={version}{quote}" in pip[-1].split(), pip[-1]
    if Version("2.0") <= Version(version) < Version("2.4"):  # the companion pin (known issue)
        assert f"{quote}onnxruntime>=1.24.2,<1.28{quote}" in pip[-1].split(), pip[-1]
    for get in (c for c in commands if c.startswith("winget ")):
        assert get.startswith(f"winget install --exact --id Python.Python.{python.rstrip('t')}")
        assert get.endswith("--architecture arm64") is (arch == "arm64"), get
    return record


def _grid() -> Iterator[tuple[str, str | None, str, str | None]]:
    for platform, native in MACHINES:
        for python in PYTHONS:
            for soc in SOC_NAMES:
                yield platform, native, python, soc


CELLS = list(_grid())


def _check(platform: str, native: str | None, python: str, soc: str | None) -> dict[str, Any]:
    rec = _cell(platform, native, python, soc, sdk=False)
    cell = (platform, native, python, soc)
    # (e) one of the two answers; the system SDK never changes it.
    assert rec["status"] in ("ok", "nothing-fits"), cell
    with_sdk = _cell(platform, native, python, soc, sdk=True)
    for key in ("status", "version", "file", "python", "arch", "commands", "alternatives"):
        assert with_sdk[key] == rec[key], (cell, key)
    profile = rec["profile"]
    arch = ARCH_OF.get(soc or "")
    assert profile["htp_arch"] == arch, cell
    # A SoC (even one the table does not know) on win_amd64 is an ARM64 PC.
    emulated = platform == "win_amd64" and (native == "arm64" or soc is not None)
    assert profile["emulated"] is emulated, cell
    drives_npu = platform != "linux_x86_64" and not (platform == "win_amd64" and not emulated)
    if soc == UNKNOWN_SOC:
        assert any("--htp-arch" in n and "not in qnndoctor's SoC table" in n for n in rec["notes"])

    # (a)-(d) for what the top-level fields and commands install.
    if rec["commands"]:
        assert rec["version"] and rec["file"] and rec["python"] and rec["arch"], cell
        record = _installs(
            profile["os"], rec["version"], rec["file"], rec["python"], rec["arch"], rec["commands"]
        )
        if arch is not None and drives_npu:  # (b)
            assert arch in record["stub_hexagon_versions"], cell
    else:  # nothing to install: nothing claimed
        assert rec["status"] == "nothing-fits" and rec["version"] is None and rec["file"] is None
    for alternative in rec["alternatives"]:
        record = _installs(
            profile["os"],
            alternative["version"],
            alternative["file"],
            alternative["python"],
            alternative["arch"],
            alternative["commands"],
        )
        if arch is not None and drives_npu:
            assert arch in record["stub_hexagon_versions"], (cell, alternative)

    if not emulated:
        # The newest release the raw records allow, and nothing else.
        best = expected(platform, python, arch)
        assert rec["version"] == best, cell
        assert rec["status"] == ("ok" if best else "nothing-fits"), cell
        assert rec["python"] == (python if best else None), cell
        assert rec["emulation"] is None
        return rec
    # Emulated x64: the commands set up native ARM64 Python when a release fits there.
    emulation = rec["emulation"]
    route = next(
        (
            (f"3.{m}", v)
            for m in dict.fromkeys((int(python.rstrip("t").split(".")[1]), *NATIVE_ORDER))
            if (v := expected("win_arm64", f"3.{m}", arch))
        ),
        None,
    )
    here = emulation["this_interpreter"]
    if route is not None:
        assert (rec["python"], rec["version"], rec["arch"]) == (*route, "arm64"), cell
        assert emulation["native_arm64"]["version"] == rec["version"], cell
        assert emulation["native_arm64"]["file"] == rec["file"], cell
        assert rec["commands"] == emulation["native_arm64"]["commands"], cell
    else:
        assert rec["commands"] == emulation["this_interpreter_commands"], cell
        assert rec["version"] == here["version"], cell
    assert (rec["status"] == "ok") is (here["version"] is not None), cell
    if here["version"] is not None:
        _installs(
            "windows",
            here["version"],
            here["file"],
            python,
            "x86_64",
            emulation["this_interpreter_commands"],
        )
    return rec


@pytest.mark.parametrize(("platform", "native"), MACHINES, ids=lambda v: str(v))
def test_every_cell_against_the_wheel_records(platform: str, native: str | None) -> None:
    answers = {}
    for cell in CELLS:
        if cell[:2] == (platform, native):
            answers[cell] = _check(*cell)
    assert len(answers) == len(PYTHONS) * len(SOC_NAMES)
    if platform == "win_amd64" and native is None:
        # A Snapdragon SoC on win_amd64 is answered as x64 Python on that ARM64
        # PC: the same answer as with --native-arch arm64.
        for (_p, _n, python, soc), rec in answers.items():
            if soc is not None:
                emulated = _cell("win_amd64", "arm64", python, soc, sdk=False)
                for key in ("status", "version", "file", "python", "commands", "emulation"):
                    assert rec[key] == emulated[key], (python, soc, key)
    if native is None:
        # An unknown SoC: the answer without a chip (on win_amd64: on an ARM64 PC).
        for (_p, _n, python, soc), rec in answers.items():
            if soc == UNKNOWN_SOC:
                plain = answers.get((platform, native, python, None))
                if platform == "win_amd64":
                    plain = _cell("win_amd64", "arm64", python, None, sdk=False)
                assert plain is not None
                for key in ("status", "version", "file", "commands"):
                    assert rec[key] == plain[key], (python, key)


def test_named_cells_from_the_issue() -> None:
    """The faults the grid found, by name."""
    # 8cx Gen 3 (v68) with x64 Python: no win_amd64 wheel has a v68 stub (1.x
    # 'no stub at all' wheels included): native ARM64 Python with 2.7.0.
    for python in ("3.12", "3.14"):
        rec = _cell("win_amd64", None, python, "8cx Gen 3", sdk=False)
        assert rec["status"] == "nothing-fits" and rec["version"] == "2.7.0"
        assert (
            rec["file"]
            == f"onnxruntime_qnn-2.7.0-cp{python.replace('.', '')}-cp{python.replace('.', '')}-win_arm64.whl"
        )
        assert (
            rec["commands"][-1] == f'py -V:{python}-arm64 -m pip install "onnxruntime-qnn==2.7.0"'
        )
        assert all(a["arch"] == "arm64" for a in rec["alternatives"])
        assert "1.22.2" not in str([rec["commands"], rec["alternatives"]])  # x64, no stubs
    # 8 Gen 3 (v75, a phone SoC): no Windows wheel drives it.
    phone = _cell("win_amd64", None, "3.14", "8 Gen 3", sdk=False)
    assert phone["status"] == "nothing-fits" and phone["commands"] == []
    assert phone["alternatives"] == []
    assert any("Hexagon v75" in n and "Linux ARM64" in n for n in phone["notes"])
    # Python 3.10 emulated: the JSON describes what the commands install.
    old = _cell("win_amd64", "arm64", "3.10", "X Elite", sdk=False)
    assert (old["version"], old["python"], old["arch"]) == ("2.7.0", "3.12", "arm64")
    assert old["emulation"]["this_interpreter"]["version"] == "1.23.2"
    assert old["emulation"]["this_interpreter_commands"] == [
        'py -3.10 -m pip install "onnxruntime-qnn==1.23.2"'
    ]
    # Native x64 PC with Python 3.8-3.10: wheels with x64 QNN libraries.
    for python, version in (("3.8", "1.18.1"), ("3.9", "1.18.1"), ("3.10", "1.22.2")):
        rec = _cell("win_amd64", None, python, None, sdk=False)
        assert rec["version"] == version
        assert rec["commands"] == [f'py -{python} -m pip install "onnxruntime-qnn=={version}"']
        assert rec["ruled_out"][0]["version"] == "2.7.0"
        arm_only = [
            v
            for v in rec["ruled_out"]
            if v["reasons"][0]["axis"] == "arm64-libraries-on-x64-machine"
        ]
        assert arm_only and all(v["reasons"][0]["sources"] for v in arm_only)
    # An unknown SoC: the answer without the chip, a caveat and --htp-arch.
    unknown = _cell("win_arm64", None, "3.12", UNKNOWN_SOC, sdk=False)
    assert unknown["status"] == "ok" and unknown["version"] == "2.7.0"
    assert unknown["profile"]["htp_arch"] is None


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("--platform", "win_amd64", "--python-version", "3.12", "--soc", "8cx Gen 3"), 1),
        (("--platform", "win_arm64", "--python-version", "3.12", "--soc", UNKNOWN_SOC), 0),
        (("--platform", "win_amd64", "--python-version", "3.10"), 0),
        (("--platform", "linux_aarch64", "--python-version", "3.14", "--soc", "SM8650"), 0),
        (("--platform", "linux_x86_64", "--python-version", "3.12", "--soc", "X Elite"), 0),
        (("--platform", "win_arm64", "--python-version", "3.10", "--soc", "X Elite"), 1),
        (("--platform", "win_amd64", "--python-version", "3.10", "--native-arch", "arm64"), 0),
        (("--platform", "win_arm64", "--python-version", "3.13", "--soc", "8 Gen 3"), 1),
    ],
)
def test_the_cli_says_what_the_function_says(cli: Cli, args: tuple[str, ...], code: int) -> None:
    result = cli("recommend", *args, "--json")
    assert result.code == code, result.err
    rec = result.json()["recommendation"]
    values = dict(zip(args[::2], args[1::2], strict=True))
    direct = what_if(
        values["--platform"],
        values["--python-version"],
        soc=values.get("--soc"),
        native_arch=values.get("--native-arch"),
        matrix=MATRIX,
    )
    assert {k: rec[k] for k in direct} == direct
    text = cli("recommend", *args)
    assert text.code == code
    for command in rec["commands"]:
        assert f"    {command}\n" in text.out


def test_htp_arch_answers_as_the_soc_of_that_arch() -> None:
    """`--htp-arch vNN` is the same question as naming a SoC of that Hexagon
    version (on win_amd64 too: a Hexagon NPU is an ARM64 PC)."""
    first_of_arch: dict[int, str] = {}
    for soc in SOCS:
        first_of_arch.setdefault(soc["htp_arch"], soc["part"])
    for platform, native in MACHINES:
        for python in PYTHONS:
            for arch, part in sorted(first_of_arch.items()):
                by_soc = _cell(platform, native, python, part, sdk=False)
                by_arch = what_if(
                    platform, python, htp_arch=f"v{arch}", native_arch=native, matrix=MATRIX
                )
                cell = (platform, native, python, arch)
                assert by_arch["profile"]["htp_arch"] == arch, cell
                for key in ("status", "version", "file", "python", "arch", "commands"):
                    assert by_arch[key] == by_soc[key], (cell, key)
