"""The target's own pip decides which commands work there: a venv without
pip (uv and ``venv --without-pip`` make them) gets its ``-m ensurepip``
first; a system Python that pip refuses to change (PEP 668) gets a new venv.
The printed commands are run as printed, in real environments."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import CliResult, validate_report
from helpers.profiles import win_arm64
from helpers.wheels import make_venv, pip_install, system_like_python

from qnndoctor import shell
from qnndoctor.facts.probed import Facts, target_pip
from qnndoctor.matrixdata import load_or_empty
from qnndoctor.resolver import commands as advice
from qnndoctor.rules.registry import evaluate

Cli = Callable[..., CliResult]


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300
    )


def test_printed_commands_work_in_a_venv_without_pip(
    cli: Cli, tmp_path: Path, real_wheels: dict[str, Path]
) -> None:
    python = make_venv(tmp_path / "venv")  # --without-pip
    pip_install(python, str(real_wheels["onnxruntime-qnn==2.7.0"]))
    before = cli("check", "--python", str(python), "--json", "--no-smoke")
    report = before.json()
    validate_report(report)
    tools = report["facts"]["installs"]["values"]["pip_tools"]
    assert tools["pip"] == {"found": False} and tools["ensurepip"]["found"] is True
    assert report["facts"]["interpreter"]["values"]["venv_created_by"] == "venv"
    assert {"pip-absent", "plugin-companion-missing"} <= set(before.finding_ids())
    commands = report["recommendation"]["commands"]
    assert commands[0] == f"{python} -m ensurepip"
    fix = next(f for f in report["findings"] if f["id"] == "plugin-companion-missing")["fix"]
    assert fix["commands"] == commands  # one set of commands, bootstrap included
    assert _run([str(python), "-m", "pip", "--version"]).returncode != 0  # the failure avoided
    # Run them as printed (the install offline, from the test's wheels).
    for command in commands:
        argv = shlex.split(command)
        if argv[1:3] == ["-m", "pip"]:
            folder = str(real_wheels["onnxruntime==1.31.1"].parent)
            argv += ["--no-index", "--find-links", folder, "--no-deps"]
        done = _run(argv)
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
    after = cli("check", "--python", str(python), "--json", "--no-smoke")
    assert not {"pip-absent", "plugin-companion-missing"} & set(after.finding_ids())
    assert after.json()["facts"]["installs"]["values"]["pip_tools"]["pip"]["found"] is True


def test_quiet_verdict_names_every_command_in_order(
    cli: Cli, tmp_path: Path, real_wheels: dict[str, Path]
) -> None:
    python = make_venv(tmp_path / "venv")
    pip_install(python, str(real_wheels["onnxruntime-qnn==2.7.0"]))
    quiet = cli("check", "--python", str(python), "-q", "--no-smoke")
    assert quiet.out.count("\n") == 1
    assert (
        f"; fix: {python} -m ensurepip; then {python} -m pip install onnxruntime-qnn==2.7.0"
        in quiet.out
    )


def test_a_venv_with_pip_gets_no_bootstrap(
    cli: Cli, tmp_path: Path, real_wheels: dict[str, Path]
) -> None:
    python = make_venv(tmp_path / "venv", with_pip=True)
    pip_install(python, str(real_wheels["onnxruntime-qnn==2.7.0"]))
    result = cli("check", "--python", str(python), "--json", "--no-smoke")
    report = result.json()
    assert report["facts"]["installs"]["values"]["pip_tools"]["pip"]["found"] is True
    assert "pip-absent" not in result.finding_ids()
    assert not any(" -m ensurepip" in c for c in report["recommendation"]["commands"])


def _facts_of(cli: Cli, python: Path) -> dict[str, Any]:
    document: dict[str, Any] = cli("check", "--python", str(python), "--json", "--no-smoke").json()
    return document


def test_uv_venv_and_no_ensurepip(cli: Cli, tmp_path: Path) -> None:
    """uv writes ``uv = X`` into pyvenv.cfg; a Python without ensurepip (Debian
    without python3-venv) cannot get its bundled pip: nothing is prepended."""
    python = make_venv(tmp_path / "venv")
    cfg = tmp_path / "venv" / "pyvenv.cfg"
    cfg.write_text(cfg.read_text("utf-8") + "uv = 0.9.5\n", encoding="utf-8")
    document = _facts_of(cli, python)
    facts = Facts.from_json(document["facts"])
    assert facts.value("interpreter", "venv_created_by") == "uv 0.9.5"
    found = {f.id: f for f in evaluate(facts, load_or_empty()).findings}
    assert "uv pip install --python" in found["pip-absent"].explanation
    # The same facts with no ensurepip (as Debian's Python without python3-venv).
    values = document["facts"]["installs"]["values"]
    values["pip_tools"]["ensurepip"] = {"found": False}
    facts = Facts.from_json(document["facts"])
    assert target_pip(facts) == "unobtainable"
    found = {f.id: f for f in evaluate(facts, load_or_empty()).findings}
    assert "pip-absent" not in found and "python3-venv" in found["pip-unobtainable"].explanation
    # this Python's own package and the uv command, with the real version and path
    minor = "python{}.{}-venv".format(*document["facts"]["interpreter"]["values"]["version_info"])
    unobtainable = found["pip-unobtainable"]
    assert unobtainable.fix is not None and minor in unobtainable.fix.text
    assert f"uv pip install --python {python} onnxruntime-qnn" in unobtainable.fix.text
    assert "X-venv" not in unobtainable.explanation + unobtainable.fix.text
    # A ticket from before the probe looked: commands as they always were.
    del values["pip_tools"]
    assert target_pip(Facts.from_json(document["facts"])) == "unknown"
    saved = tmp_path / "old.json"
    saved.write_text(json.dumps(document), encoding="utf-8")
    old = cli("check", "--from-report", str(saved), "--json").json()
    assert not any(" -m ensurepip" in c for c in old["recommendation"]["commands"])
    assert not {"pip-absent", "pip-unobtainable"} & {f["id"] for f in old["findings"]}


def test_bootstrap_on_windows_quoted_paths_and_launchers() -> None:
    exe = r"C:\Users\Jane Doe\proj\.venv\Scripts\python.exe"
    profile = win_arm64(python_exe=exe, pip="absent")
    assert advice.pip_commands(profile, [("install", "onnxruntime-qnn==2.7.0")]) == (
        r'pushd "C:\Users\Jane Doe\proj\.venv\Scripts"',
        r".\python.exe -m ensurepip",
        r'.\python.exe -m pip install "onnxruntime-qnn==2.7.0"',
        "popd",
    )
    # Another interpreter, started by the launcher: its pip is not known.
    launched = win_arm64(launcher=("py", "-V:3.12-arm64"), pip="absent")
    assert advice.pip_commands(launched, [("install", "x")]) == (
        "py -V:3.12-arm64 -m pip install x",
    )
    # A rule's own commands: once, before the first of this interpreter's pip.
    plain = r"C:\py\python.exe"
    commands = ("winget install x", f"{plain} -m pip uninstall -y a", f"{plain} -m pip install b")
    bootstrapped = shell.with_pip_bootstrap(commands, plain, True)
    assert bootstrapped == (commands[0], rf"{plain} -m ensurepip", *commands[1:])
    assert shell.with_pip_bootstrap(bootstrapped, plain, True) == bootstrapped
    assert shell.with_pip_bootstrap(commands, r"C:\other\python.exe", True) == commands


def test_a_healthy_check_without_pip_pasted_into_explain_raises_nothing(
    cli: Cli, healthy_venv: Path
) -> None:
    """The pip-absent finding is information, not a failure: the whole output
    of a healthy check of a venv without pip reads as healthy to `explain`."""
    from qnndoctor.diagnosis import diagnose
    from qnndoctor.matrixdata import load_socs

    for extra in ((), ("--json",)):
        result = cli("check", "-v", "--python", str(healthy_venv), *extra)
        assert result.code == 0
        assert "(pip-absent)" in result.out or '"id": "pip-absent"' in result.out
        diagnosis = diagnose(result.out + result.err, socs=load_socs())
        assert diagnosis.ids() == [], (extra, diagnosis.ids())


def test_a_system_python_gets_a_new_venv_that_really_works(
    cli: Cli, tmp_path: Path, real_wheels: dict[str, Path]
) -> None:
    python = system_like_python(tmp_path / "system")  # PEP 668 marker, pip, not a venv
    result = cli("check", "--python", str(python), "--json", "--no-smoke")
    report = result.json()
    validate_report(report)
    marker = report["facts"]["interpreter"]["values"]["externally_managed"]
    assert marker.endswith("EXTERNALLY-MANAGED")
    ids = set(result.finding_ids())
    assert {"system-managed-python", "no-onnxruntime-qnn"} <= ids
    assert not {"pip-absent", "pip-unobtainable"} & ids
    commands = report["recommendation"]["commands"]
    assert commands == [
        f"{python} -m venv .venv-npu",
        ".venv-npu/bin/python -m pip install onnxruntime-qnn==2.7.0",
    ]
    missing = next(f for f in report["findings"] if f["id"] == "no-onnxruntime-qnn")
    assert missing["fix"]["commands"] == commands
    # Debian/Ubuntu with python3-pip but not python3-venv: pip is there, ensurepip
    # (which `-m venv` needs) is not, and the finding says what to install first.
    managed = next(f for f in report["findings"] if f["id"] == "system-managed-python")
    assert "python3-venv" not in managed["explanation"]
    report["facts"]["installs"]["values"]["pip_tools"]["ensurepip"] = {"found": False}
    debian = {f.id: f for f in evaluate(Facts.from_json(report["facts"]), load_or_empty()).findings}
    assert "python3-venv" in debian["system-managed-python"].explanation
    assert "python{}.{}-venv".format(*sys.version_info[:2]) in debian["system-managed-python"].explanation
    # pip itself refuses the system's Python: the failure these commands avoid.
    refused = _run([str(python), "-m", "pip", "install", "--no-index", "nothing-at-all"])
    assert refused.returncode != 0 and "externally-managed-environment" in refused.stderr
    work = tmp_path / "work"
    work.mkdir()
    for command in commands:
        argv = shlex.split(command)
        if argv[1:3] == ["-m", "pip"]:
            folder = str(real_wheels["onnxruntime==1.31.1"].parent)
            argv += ["--no-index", "--find-links", folder, "--no-deps"]
        done = subprocess.run(
            argv, cwd=work, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
    venv = work / ".venv-npu"
    after = cli("check", "--python", str(venv), "--json", "--no-smoke")
    assert not {"system-managed-python", "no-onnxruntime-qnn"} & set(after.finding_ids())
    assert after.json()["facts"]["interpreter"]["values"]["externally_managed"] is None


def test_a_findings_fix_on_windows_gets_ensurepip_inside_its_pushd() -> None:
    from qnndoctor.resolver.consistency import PipTarget
    from qnndoctor.resolver.fixes import make_commands
    from qnndoctor.rules.findings import Finding, Fix, Severity

    exe = r"C:\Users\Jane Doe\app\.venv\Scripts\python.exe"
    fix = Fix("Reinstall it:", pip_runs=(("install", "--force-reinstall", "x"),))
    finding = Finding("files-missing", Severity.ERROR, "t", "e", (), fix)
    (aligned,) = make_commands((finding,), None, PipTarget(exe, True, pip="absent"))
    assert aligned.fix is not None
    assert aligned.fix.commands == (
        r'pushd "C:\Users\Jane Doe\app\.venv\Scripts"',
        r".\python.exe -m ensurepip",
        r".\python.exe -m pip install --force-reinstall x",
        "popd",
    )
    # The same target with pip: the fix as the rule wrote it (typed for both shells).
    (plain,) = make_commands((finding,), None, PipTarget(exe, True, pip="present"))
    assert plain.fix is not None and r".\python.exe -m ensurepip" not in plain.fix.commands


def test_a_system_pythons_pip_fix_without_a_recommendation_says_where_to_run_it() -> None:
    from qnndoctor.resolver.consistency import PipTarget
    from qnndoctor.resolver.fixes import make_commands
    from qnndoctor.rules.findings import Finding, Fix, Severity

    exe = "/usr/bin/python3"
    commands = (shell.pip_command(exe, False, "install", "--force-reinstall", "onnxruntime"),)
    run = ("install", "--force-reinstall", "onnxruntime")
    finding = Finding(
        "files-missing", Severity.ERROR, "t", "e", (), Fix("Reinstall:", pip_runs=(run,))
    )
    system = PipTarget(exe, False, pip="present", system_managed=True)
    ok = {"status": "ok", "version": "2.7.0", "commands": []}
    (kept,) = make_commands((finding,), ok, system)
    assert kept.fix is not None and kept.fix.commands == commands
    assert "PEP 668" in kept.fix.text and "-m venv .venv-npu" in kept.fix.text
    venv = ("/usr/bin/python3 -m venv .venv-npu", ".venv-npu/bin/python -m pip install x")
    (moved,) = make_commands(
        (finding,), {"status": "ok", "version": "2.7.0", "commands": venv}, system
    )
    assert moved.fix is not None and moved.fix.commands == venv
