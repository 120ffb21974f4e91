"""Every prescription works as printed (issue 25).

A battery of real broken environments (real venvs, real pip, the real
onnxruntime-qnn wheels on the HTP simulator). For each: `check`, and every
command qnndoctor prints for it is collected (the JSON report's ``commands``,
the text and Markdown renderings, the `fix` plan, `recommend`, `explain` on
the smoke session's failure). The structured ones (command lists and
command lines, what a user pastes) are run as printed with sh, in the
environment activated the way a user has it (its ``bin`` first on PATH), and
afterwards `check` must pass and `pip check` must be clean. Commands inside
sentences are often alternatives ("..., or ..."), so they are checked, not
run: they must parse and hold no placeholder. Windows commands (from tickets
with Windows facts) are tokenised by cmd's and PowerShell's rules, not run.
pip runs offline on the cached real wheels (pip's own PIP_NO_INDEX /
PIP_FIND_LINKS configuration, as in tests/fix/test_fix.py).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult, runtime_venv
from helpers.commands import (
    commands_in_text,
    indented_commands,
    placeholders,
    report_commands,
    windows_problems,
)
from helpers.wheels import (
    add_second_flavour,
    add_uninstall_leftover,
    copy_venv,
    make_venv,
    pip_check,
    pip_install,
    pip_uninstall,
    site_packages,
)

Cli = Callable[..., CliResult]


# -- the broken environments --------------------------------------------------


@pytest.fixture(scope="session")
def empty_pip_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv with only its pip (made once; tests copy it)."""
    return make_venv(tmp_path_factory.mktemp("empty") / "venv", with_pip=True)


def _fresh(tmp: Path, empty: Path, wheels: dict[str, Path]) -> Path:
    """A new venv with nothing installed: the most common case of all."""
    return copy_venv(empty, tmp / "venv")


def _wrong_companion(tmp: Path, pip_venv: Path, wheels: dict[str, Path]) -> Path:
    """onnxruntime-qnn 2.3.0 beside onnxruntime 1.31.1: the plugin handshake fails."""
    python = copy_venv(pip_venv, tmp / "venv")
    pip_install(python, str(wheels["onnxruntime-qnn==2.3.0"]))
    return python


def _two_flavours_and_leftover(tmp: Path, pip_venv: Path, wheels: dict[str, Path]) -> Path:
    """A second flavour over onnxruntime, a `~nnxruntime` leftover, and two of
    onnxruntime-qnn's requirements missing."""
    python = copy_venv(pip_venv, tmp / "venv")
    pip_uninstall(python, "coloredlogs", "sympy")
    add_second_flavour(python, tmp)
    add_uninstall_leftover(python)
    return python


RUN = {
    "fresh": _fresh,
    "wrong-companion": _wrong_companion,
    "two-flavours-and-leftover": _two_flavours_and_leftover,
}


# -- what qnndoctor prints for one environment ---------------------------------


def _is_qnndoctor(command: str) -> bool:
    return command.startswith("qnndoctor ") or " -m qnndoctor " in command


def _code_lines(markdown: str) -> list[str]:
    lines, inside = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            inside = not inside
        elif inside and line.strip():
            lines.append(line.strip())
    return lines


def _texts(node: Any) -> Iterator[str]:
    """The prose of findings' fixes, recommendations and notes."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("facts", "smoke"):
                continue
            if isinstance(value, str) and key in ("text", "fix", "reason", "message"):
                yield value
            else:
                yield from _texts(value)
    elif isinstance(node, list):
        for item in node:
            yield from _texts(item)


def prescriptions(cli: Cli, python: Path, tmp: Path) -> tuple[list[str], list[str]]:
    """(commands to run as printed, commands inside sentences) for ``python``."""
    check = cli("check", "--python", str(python), "--json", "--no-redact")
    assert check.code == 1, "the environment must start broken"
    report = check.json()
    ticket = tmp / "ticket.json"
    ticket.write_text(check.out, encoding="utf-8")
    text = cli("check", "--from-report", str(ticket)).out
    markdown = cli("check", "--from-report", str(ticket), "--format", "markdown").out
    plan = cli("fix", "--python", str(python), "--json").json()
    recommend = cli("recommend", "--python", str(python), "--json").json()
    documents: list[dict[str, Any]] = [report, plan, recommend]
    reason = (report.get("smoke") or {}).get("reason")
    if reason:
        log = tmp / "smoke.log"
        log.write_text(str(reason), encoding="utf-8")
        documents.append(
            cli("explain", "--log", str(log), "--from-report", str(ticket), "--json").json()
        )
    program = shlex.quote(str(python))
    starts = (program, "rm ", shlex.quote(sys.executable), ".venv-npu/")
    structured = [c for d in documents for c in report_commands({"x": d}) if c.startswith(starts)]
    structured = [c for c in (plan.get("plan") or {}).get("commands", []) if c.startswith(starts)] + structured
    structured += indented_commands(text, starts)
    structured += [c for c in _code_lines(markdown) if c.startswith(starts)]
    prose = [c for d in documents for t in _texts(d) for c in commands_in_text(t)]
    prose += commands_in_text(text) + commands_in_text(markdown)
    return list(dict.fromkeys(structured)), list(dict.fromkeys(prose))


def _well_formed(command: str, context: str = "") -> None:
    assert not placeholders(command, context), (command, placeholders(command, context))
    shlex.split(command)  # raises on unbalanced quotes


def run_as_printed(command: str, python: Path, cwd: Path) -> None:
    """One command as a user pastes it into sh with the environment active."""
    env = dict(os.environ)
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(python.parent.parent)
    done = subprocess.run(
        ["sh", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, (command, done.stdout[-1500:], done.stderr[-1500:])


@pytest.mark.parametrize("name", sorted(RUN))
def test_every_printed_command_works_as_printed(
    name: str,
    cli: Cli,
    request: pytest.FixtureRequest,
    real_wheels: dict[str, Path],
    tmp_path: Path,
    offline_pip: None,
) -> None:
    base = request.getfixturevalue("empty_pip_venv" if name == "fresh" else "pip_venv")
    python = RUN[name](tmp_path, base, real_wheels)
    structured, prose = prescriptions(cli, python, tmp_path)
    assert structured, f"{name}: qnndoctor printed no command to run"
    for command in structured + prose:
        _well_formed(command)
    for command in structured:
        if not _is_qnndoctor(command):  # its exit code reports findings, by design
            run_as_printed(command, python, tmp_path)
    after = cli("check", "--python", str(python), "--json")
    assert after.code == 0, [f["id"] for f in after.json()["findings"]]
    assert after.json()["smoke"]["status"] == "passed"
    assert pip_check(python) == ""


def test_fix_yes_on_a_fresh_venv_is_fixed_and_proven(
    cli: Cli, empty_pip_venv: Path, tmp_path: Path, offline_pip: None
) -> None:
    """The most common case: nothing installed. fix resolves dependencies
    (onnxruntime, numpy, ...) and proves it with check and pip check."""
    python = copy_venv(empty_pip_venv, tmp_path / "venv")
    result = cli("fix", "--python", str(python), "--yes", "--json")
    assert result.code == 0, result.out[-3000:] + result.err[-3000:]
    document = result.json()
    assert document["outcome"] == "fixed"
    (step,) = document["plan"]["steps"]
    assert "--no-deps" not in step["pip_args"] and "onnxruntime-qnn==2.7.0" in step["pip_args"]
    assert document["proof"]["pip_check"]["clean"] is True
    assert "numpy" in result.err  # pip installed it as a dependency
    assert cli("check", "--python", str(python), "--json").code == 0
    assert pip_check(python) == ""


# -- environments checked without running (their route leaves this venv) ------


def _no_pip(tmp: Path, pip_venv: Path, wheels: dict[str, Path]) -> Path:
    python = runtime_venv(tmp / "venv", wheels, "1.31.1", "2.3.0")  # no pip, broken pair
    return python


def _truncated(tmp: Path, pip_venv: Path, wheels: dict[str, Path]) -> Path:
    python = copy_venv(pip_venv, tmp / "venv")
    library = site_packages(python) / "onnxruntime_qnn" / "libQnnHtp.so"
    library.write_bytes(library.read_bytes()[:100_000])
    return python


@pytest.mark.parametrize("builder", [_no_pip, _truncated], ids=["no-pip", "truncated-library"])
def test_commands_of_more_broken_environments_are_well_formed(
    builder: Callable[[Path, Path, dict[str, Path]], Path],
    cli: Cli,
    pip_venv: Path,
    real_wheels: dict[str, Path],
    tmp_path: Path,
) -> None:
    python = builder(tmp_path, pip_venv, real_wheels)
    report = cli("check", "--python", str(python), "--json", "--no-redact").json()
    commands = report_commands(report)
    assert commands
    for command in commands:
        _well_formed(command)
    if builder is _no_pip:  # its pip commands first get the pip bundled with its Python
        program = shlex.quote(str(python))
        first_pip = next(i for i, c in enumerate(commands) if c.startswith(f"{program} -m pip "))
        assert f"{program} -m ensurepip" in commands[:first_pip]


def test_pep668_route_works_as_printed(
    cli: Cli, tmp_path: Path, offline_pip: None
) -> None:
    """A system-managed interpreter: the commands make a new venv in the
    current folder and install there; run as printed, that venv works."""
    from helpers.wheels import system_like_python

    python = system_like_python(tmp_path / "system")
    report = cli("check", "--python", str(python), "--json", "--no-redact").json()
    commands = list((report.get("recommendation") or {}).get("commands") or [])
    assert commands and commands[0].endswith("-m venv .venv-npu"), commands
    work = tmp_path / "work"
    work.mkdir()
    for command in commands:
        _well_formed(command)
        run_as_printed(command, python, work)
    venv_python = work / ".venv-npu" / "bin" / "python"
    assert cli("check", "--python", str(venv_python), "--json").code == 0
    assert pip_check(venv_python) == ""


# -- tickets (saved reports with facts changed): tokenised, not run ---------------


@pytest.fixture(scope="module")
def wrong_companion_report(
    pip_venv: Path, real_wheels: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """The `check --json --no-smoke` report of onnxruntime-qnn 2.3.0 beside
    onnxruntime 1.31.1 (one venv for every ticket made from it)."""
    from qnndoctor.cli.main import main

    tmp = tmp_path_factory.mktemp("ticketbase")
    python = _wrong_companion(tmp, pip_venv, real_wheels)
    out = tmp / "report.json"
    code = main(["check", "--python", str(python), "--json", "--no-redact", "--no-smoke",
                 "--output", str(out)])
    assert code == 1
    report: dict[str, Any] = json.loads(out.read_text("utf-8"))
    return report


def _windows_ticket(report: dict[str, Any], executable: str, *, emulated: bool) -> dict[str, Any]:
    """A saved ticket with Windows facts (the emulation facts as a Windows on
    Arm PC reports them for an x64 Python)."""
    ticket: dict[str, Any] = json.loads(json.dumps(report))
    interpreter = ticket["facts"]["interpreter"]["values"]
    interpreter.update(
        sys_platform="win32",
        executable=executable,
        sysconfig_platform="win-amd64" if emulated else "win-arm64",
        build_arch="x86_64" if emulated else "arm64",
    )
    emulation = ticket["facts"]["emulation"]["values"]
    emulation.update(
        emulated=emulated,
        process_arch="x86_64" if emulated else "arm64",
        native_arch="arm64",
        emulator="x64 emulation on ARM64 (Prism/xtajit64)" if emulated else None,
    )
    return ticket


@pytest.mark.parametrize(
    ("executable", "emulated"),
    [
        (r"C:\Users\ana\my project\.venv\Scripts\python.exe", False),
        (r"C:\Program Files\Python312\python.exe", True),
    ],
    ids=["arm64-venv-with-spaces", "emulated-x64"],
)
def test_windows_commands_parse_in_powershell_and_cmd(
    executable: str,
    emulated: bool,
    cli: Cli,
    wrong_companion_report: dict[str, Any],
    tmp_path: Path,
) -> None:
    path = tmp_path / "windows-ticket.json"
    ticket = _windows_ticket(wrong_companion_report, executable, emulated=emulated)
    path.write_text(json.dumps(ticket))
    again = cli("check", "--from-report", str(path), "--json", "--no-redact").json()
    commands = report_commands(again)
    assert commands
    for command in commands:
        assert not placeholders(command), (command, placeholders(command))
        assert not windows_problems(command), (command, windows_problems(command))
    text = " ".join(commands)
    if emulated:  # the native ARM64 route
        assert "winget install" in text and "--architecture arm64" in text
    else:  # a path with spaces is entered with pushd in both shells
        assert 'pushd "C:\\Users\\ana\\my project\\.venv\\Scripts"' in commands


# -- the catalogue: every command text, facts unknown (the worst case) ------------


def _catalogue_commands() -> Iterator[tuple[str, str, str]]:
    from qnndoctor.diagnosis.catalogue import load

    for signature in load().signatures:
        for os_name in ("windows", "posix", None):
            text = signature.fix_for(os_name, {})
            lines = [line.strip() for line in text.splitlines()]
            found = commands_in_text(text) + [
                line for line in lines if line.startswith(("python -m pip ", "winget ", "py "))
            ]
            for command in dict.fromkeys(found):
                yield f"{signature.id} ({os_name or 'any'})", command, text
    issues = json.loads(
        (Path(__file__).parent.parent / "matrix" / "known_issues.json").read_text("utf-8")
    )
    for issue in issues["issues"]:
        for key in ("explanation", "symptom", "title"):
            for command in commands_in_text(str(issue.get(key) or "")):
                yield f"known issue {issue['id']}", command, str(issue.get(key))


def test_no_catalogue_command_holds_a_placeholder() -> None:
    bad = []
    count = 0
    for where, command, text in _catalogue_commands():
        count += 1
        found = placeholders(command, text)
        if found:
            bad.append((where, command, found))
        if "(windows)" in where and windows_problems(command):
            bad.append((where, command, windows_problems(command)))
    assert count > 100  # the collector found the catalogue's commands
    assert not bad, bad


def test_the_placeholder_detector_catches_what_the_issue_names() -> None:
    for text in (
        "python -m pip install --force-reinstall --no-deps onnxruntime==onnxruntime.version",
        "python -m pip install onnxruntime-qnn==the installed version",
        "python -m pip install onnxruntime-qnn=={onnxruntime_qnn.version}",
        "py -V:X.Y -m pip install onnxruntime-qnn",
        "python -m pip install onnxruntime-qnn==VERSION",
        "sudo -u <owner> python -m pip install onnxruntime-qnn",
    ):
        assert placeholders(text), text
    for text in (
        "python -m pip install onnxruntime-qnn==2.7.0 'onnxruntime>=1.24.2'",
        "py -V:3.12-arm64 -m pip install onnxruntime-qnn==2.7.0",
        'python -c "import sys; print(sys.version)"',
    ):
        assert not placeholders(text), text
    assert windows_problems('"C:\\Program Files\\Python312\\python.exe" -m pip install x')
    assert windows_problems("python -m pip install onnxruntime>=1.24.2")
    assert not windows_problems('python -m pip install "onnxruntime>=1.24.2"')


def test_smoke_failed_fix_is_pinned_and_its_text_clean(
    cli: Cli, wrong_companion_report: dict[str, Any], tmp_path: Path
) -> None:
    """A ticket whose smoke session failed the plugin handshake (onnxruntime-qnn
    2.3.0, the text ending in a newline as a log's last line does): the
    catalogue's inline `python -m pip install -U onnxruntime-qnn` becomes the
    recommendation's pinned command, and no stray ". Most likely" line."""
    data = json.loads(json.dumps(wrong_companion_report))
    message = (
        "[ONNXRuntimeError] : 1 : FAIL : ep_plugin_provider_interfaces.cc:404 "
        "SanityCheckOrtEp OrtEp has invalid ort_version_supported=0 (expected at least 22)"
    )
    data["smoke"] = {
        **data["smoke"],
        "status": "failed",
        "reason": f"Fail at stage session: {message}\n",
        "signatures": [],
        "child": {
            "stage": "session",
            "status": "failed",
            "path": "plugin-2.x",
            "onnxruntime_version": "1.31.1",
            "onnxruntime_qnn_version": "2.3.0",
            "exception": {"type": "Fail", "message": message},
        },
    }
    ticket = tmp_path / "ticket.json"
    ticket.write_text(json.dumps(data))
    again = cli("check", "--from-report", str(ticket), "--json", "--no-redact").json()
    failed = next(f for f in again["findings"] if f["id"] == "smoke-failed")
    assert "\n." not in failed["explanation"] and ".." not in failed["explanation"]
    assert "Most likely (high confidence): Plugin EP handshake" in failed["explanation"]
    commands = failed["fix"]["commands"]
    assert commands == again["recommendation"]["commands"]
    assert commands and all("onnxruntime-qnn==2.7.0" in c for c in commands if "install" in c)
    assert not any(c.endswith("-U onnxruntime-qnn") for c in commands)


def test_explain_reinstall_without_known_versions_runs_as_printed(
    cli: Cli, pip_venv: Path, tmp_path: Path, offline_pip: None
) -> None:
    """explain on a half-initialised `onnxruntime_qnn` import, the versions
    unknown (text alone): no made-up pin, and the command it gives reinstalls
    what is installed, run as printed in the activated environment."""
    log = tmp_path / "error.txt"
    log.write_text(
        "ImportError: cannot import name 'build_and_package_info' from partially initialized "
        "module 'onnxruntime_qnn' (most likely due to a circular import) "
        "(/home/u/app/.venv/lib/python3.11/site-packages/onnxruntime_qnn/__init__.py)\n"
    )
    document = cli("explain", "--log", str(log), "--json", "--no-redact").json()
    texts = [str(c.get("fix")) for c in document["candidates"]]
    top = texts[0]
    assert "==onnxruntime.version" not in top and "==the installed" not in top
    (command,) = [c for c in commands_in_text(top) if c.startswith("python -c")]
    _well_formed(command)
    python = copy_venv(pip_venv, tmp_path / "venv")
    library = site_packages(python) / "onnxruntime_qnn" / "__init__.py"
    library.write_text("")  # damaged: the reinstall must restore it
    run_as_printed(command, python, tmp_path)
    assert library.read_text()
    assert pip_check(python) == ""


def test_rules_state_pip_runs_and_one_stage_makes_the_printed_commands(
    wrong_companion_report: dict[str, Any],
) -> None:
    """Rules write no pip command: they state pip runs (values); the command
    stage (resolver/fixes.py) makes the printed commands once, the same as the
    report's, run by the target's own interpreter."""
    from qnndoctor.pipeline import load_matrix
    from qnndoctor.report.build import build
    from qnndoctor.rules.registry import evaluate
    from qnndoctor.target.ticket import from_document

    target, facts = from_document(wrong_companion_report, "report.json")
    matrix = load_matrix(None)
    stated = evaluate(facts, matrix).findings
    fixes = [f.fix for f in stated if f.fix is not None]
    assert any(fix.pip_runs for fix in fixes)
    assert not [c for fix in fixes for c in fix.commands if " -m pip " in c]
    made = build(target, facts, matrix).findings
    assert not any(f.fix.pip_runs for f in made if f.fix is not None)
    printed = {f["id"]: f["fix"] for f in wrong_companion_report["findings"]}
    assert {f.id: f.fix.to_json() if f.fix else None for f in made} == printed
    python = str(facts.value("interpreter", "executable"))
    assert any(c.startswith(f"{python} -m pip ") for f in made if f.fix for c in f.fix.commands)
