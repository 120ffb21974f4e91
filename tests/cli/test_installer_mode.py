"""Installer mode: --quiet, --output, colour and wrapping off a terminal,
closed pipes on every sub-command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CliResult, validate_report
from helpers.wheels import make_venv

Cli = Callable[..., CliResult]


def test_quiet_prints_exactly_one_line(cli: Cli, healthy_venv: Path, tmp_path: Path) -> None:
    healthy = cli("check", "--python", str(healthy_venv), "--quiet", "--no-smoke")
    assert healthy.code == 0 and healthy.err == ""
    assert healthy.out.startswith("ok") and healthy.out.count("\n") == 1
    broken = cli("check", "--python", sys.executable, "-q", "--no-smoke", "--json", "-v")
    assert broken.code == 1 and broken.err == "" and broken.out.count("\n") == 1
    assert broken.out.startswith("error: onnxruntime-qnn is not installed [no-onnxruntime-qnn]")
    assert "pip install onnxruntime-qnn==" in broken.out  # the command that fixes it
    missing = cli("check", "--python", str(tmp_path / "nothing"), "-q")
    assert missing.code == 3 and missing.err == ""
    assert missing.out.startswith("could not check:") and missing.out.count("\n") == 1
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1, "facts": []}', encoding="utf-8")
    refused = cli("check", "--from-report", str(bad), "-q")
    assert refused.code == 2 and refused.err == "" and refused.out.startswith("bad input:")


def test_output_writes_the_redacted_json_beside_the_display(
    cli: Cli, healthy_venv: Path, tmp_path: Path
) -> None:
    target = tmp_path / "out" / "report.json"
    target.parent.mkdir()
    shown = cli("check", "--python", str(healthy_venv), "--no-smoke", "--output", str(target))
    assert shown.code == 0 and "0 error(s)" in shown.out
    written = json.loads(target.read_text("utf-8"))
    validate_report(written)
    assert written["redacted"] is True
    assert [p.name for p in target.parent.iterdir()] == ["report.json"]  # no temporary left
    quiet = cli("check", "--python", sys.executable, "-q", "--no-smoke", "--output", str(target))
    assert quiet.out.count("\n") == 1 and quiet.err == ""
    rewritten = json.loads(target.read_text("utf-8"))
    validate_report(rewritten)
    assert "no-onnxruntime-qnn" in {f["id"] for f in rewritten["findings"]}
    nowhere = cli("check", "--no-smoke", "--output", str(tmp_path / "no" / "dir.json"))
    assert nowhere.code == 2 and "--output: cannot write" in nowhere.err


def _run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qnndoctor", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def long_path_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv deep enough that its interpreter path is longer than a terminal line."""
    folder = tmp_path_factory.mktemp("long")
    for part in ("a-rather-long-folder-name-for-a-project", "and-another-deep-one", "envs"):
        folder = folder / part
    return make_venv(folder / "venv")


def test_piped_text_is_not_wrapped_and_has_no_colour(long_path_venv: Path) -> None:
    assert len(str(long_path_venv)) > 100
    env = {"NO_COLOR": "", "FORCE_COLOR": "", "COLUMNS": "80"}
    piped = _run(["check", "--python", str(long_path_venv), "--no-smoke"], env)
    assert piped.returncode == 1, piped.stderr
    assert "\x1b[" not in piped.stdout
    # Every mention of the venv's folder is the whole interpreter path, on one line.
    folder = str(long_path_venv.parent.parent)
    mentions = piped.stdout.count(folder)
    assert mentions >= 3 and piped.stdout.count(str(long_path_venv)) == mentions
    lines = piped.stdout.splitlines()
    assert lines[0].endswith(str(long_path_venv))  # the header
    forced = _run(["check", "--python", str(long_path_venv), "--no-smoke"], {"FORCE_COLOR": "1"})
    assert "\x1b[1;31m" in forced.stdout  # errors in bold red when colour is forced
    no_colour = _run(
        ["check", "--python", str(long_path_venv), "--no-smoke"],
        {"FORCE_COLOR": "1", "NO_COLOR": "1"},
    )
    assert "\x1b[1;31m" not in no_colour.stdout and "31m" not in no_colour.stdout


def _with_the_reader_gone(argv: list[str], cwd: Path) -> tuple[int, bytes]:
    """Run ``argv`` with its stdout closed by the reader before the first line
    is written (``| head`` that has read enough): its exit code and stderr."""
    child = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()
    err = child.stderr.read()
    child.stderr.close()
    return child.wait(timeout=120), err


@pytest.mark.parametrize(
    "command",
    [
        ["check", "--no-smoke"],
        ["check", "--no-smoke", "--json"],
        ["check", "--no-smoke", "--format", "markdown"],
        ["check", "--list-findings"],
        ["recommend"],
        ["recommend", "--platform", "win_arm64", "--python-version", "3.12", "--json"],
        ["matrix", "--json"],
        ["report", "-o", "-", "--no-smoke"],
        ["model", "MODEL", "--no-run"],
        ["explain", "--log", "LOG"],
        ["explain", "--log", "LOG", "--json"],
    ],
)
def test_a_closed_pipe_ends_quietly_everywhere(tmp_path: Path, command: list[str]) -> None:
    from qnndoctor.smoke import MODEL

    log = tmp_path / "log.txt"
    log.write_text(
        "onnxruntime-qnn 1.19.0\nUserWarning: Specified provider 'QNNExecutionProvider' "
        "is not in available provider names.\n" * 50,
        encoding="utf-8",
    )
    files = {"MODEL": str(MODEL), "LOG": str(log)}
    argv = [sys.executable, "-m", "qnndoctor", *[files.get(a, a) for a in command]]
    code, err = _with_the_reader_gone(argv, tmp_path)
    assert code in (0, 1), err
    assert b"Traceback" not in err and b"BrokenPipe" not in err and b"Errno 32" not in err


@pytest.mark.parametrize(
    "command",
    [
        ["lint", "LINT"],
        ["lint", "LINT", "--format", "sarif"],
        ["explain", "--log", "LOG"],
        ["recommend", "--platform", "win_arm64", "--python-version", "3.8"],
        ["model", "MODEL", "--no-run"],
        ["report", "-o", "-", "--no-smoke"],
        ["matrix", "--json"],
    ],
)
def test_a_closed_pipe_keeps_every_commands_verdict(tmp_path: Path, command: list[str]) -> None:
    """`qnndoctor lint app.py | head -3` and the like: the command runs to its
    end with nobody reading, so its exit code is the same verdict as with a
    reader (lint once exited 0 with findings), and stderr still says it."""
    from qnndoctor.smoke import MODEL

    log = tmp_path / "log.txt"
    log.write_text(
        "onnxruntime-qnn 1.19.0\nUserWarning: Specified provider 'QNNExecutionProvider' "
        "is not in available provider names.\n" * 50,
        encoding="utf-8",
    )
    lint = Path(__file__).resolve().parents[1] / "lint_cases" / "options"
    files = {"MODEL": str(MODEL), "LOG": str(log), "LINT": str(lint)}
    argv = [sys.executable, "-m", "qnndoctor", *[files.get(a, a) for a in command]]
    whole = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, cwd=tmp_path)
    assert whole.stdout, whole.stderr  # there is something to cut short
    code, err = _with_the_reader_gone(argv, tmp_path)
    assert code == whole.returncode, (code, whole.returncode, err)
    assert b"Traceback" not in err
    if command[0] == "lint":
        assert whole.returncode == 1
    if command == ["lint", "LINT"]:
        assert b"findings in" in err  # the summary line, on stderr


@pytest.mark.parametrize("text_format", ["text", "markdown", "json"])
def test_a_closed_pipe_keeps_the_checks_verdict_as_its_exit_code(
    healthy_venv: Path, tmp_path: Path, text_format: str
) -> None:
    """`qnndoctor check | head -1`: the verdict is made before the report is
    written, so a reader that goes away changes the exit code no more than it
    changes the machine (rich's own handling exited 1 for a healthy one)."""
    argv = [sys.executable, "-m", "qnndoctor", "check", "--python", str(healthy_venv)]
    argv += ["--no-smoke", "--format", text_format]
    whole = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr
    code, err = _with_the_reader_gone(argv, tmp_path)
    assert code == whole.returncode, err
    assert b"Traceback" not in err


@pytest.mark.skipif(sys.platform == "win32", reason="sh's >&- and 2>&-")
@pytest.mark.parametrize("closed", [">&-", "2>&-", ">&- 2>&-"])
def test_a_stream_closed_at_start_changes_nothing_but_what_is_shown(
    tmp_path: Path, closed: str, healthy_venv: Path
) -> None:
    """Started with stdout or stderr closed (an installer's `>&-`), Python
    gives None for that stream: the check still runs and its exit code is the
    one it gives with both open (0: the healthy venv)."""
    argv = [sys.executable, "-m", "qnndoctor", "check", "--python", str(healthy_venv)]
    argv += ["--no-smoke", "--json"]
    open_code = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, cwd=tmp_path)
    assert open_code.returncode == 0
    script = f'"$@" {closed}; echo "exit $?" >&9'
    done = subprocess.run(
        ["sh", "-c", f"exec 9>&1; {script}", "sh", *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.stdout.splitlines()[-1] == f"exit {open_code.returncode}", done.stderr
    assert "Traceback" not in done.stderr
