"""The subprocess runner and the probe runner against misbehaving targets
(real executable scripts standing in for a broken interpreter)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from conftest import CliResult
from helpers.fake_python import write_fake_python

from qnndoctor.children.runner import SubprocessRunner

PY = sys.executable


def test_output_is_capped_and_the_child_still_finishes() -> None:
    code = "import sys\nfor _ in range(200): sys.stdout.write('x' * 262144)\nprint('END')"
    done = SubprocessRunner(output_cap=1024 * 1024).run([PY, "-c", code], timeout=60)
    assert done.exit_code == 0
    assert done.stdout_truncated
    assert len(done.stdout) < 1024 * 1024 + 100
    assert done.stdout.rstrip().endswith(b"END")  # the tail is kept


def test_undecodable_output_is_decoded_safely() -> None:
    done = SubprocessRunner().run(
        [PY, "-c", "import sys; sys.stdout.buffer.write(b'\\xff\\xfe ok')"], timeout=30
    )
    assert done.stdout_text() == "\ufffd\ufffd ok"


def test_start_error_is_reported(tmp_path: Path) -> None:
    done = SubprocessRunner().run([str(tmp_path / "missing")], timeout=5)
    assert done.start_error is not None and done.exit_code is None


def test_timeout_kills_the_whole_tree() -> None:
    code = (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(p.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    started = time.monotonic()
    done = SubprocessRunner().run([PY, "-c", code], timeout=1.5)
    assert time.monotonic() - started < 1.5 + 2
    assert done.timed_out and done.exit_code is None
    grandchild = int(done.stdout_text().split()[0])
    assert grandchild in done.killed_pids
    assert (
        not psutil.pid_exists(grandchild)
        or psutil.Process(grandchild).status() == psutil.STATUS_ZOMBIE
    )


def test_grandchild_holding_the_pipes_after_the_child_exits() -> None:
    code = (
        "import subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(p.pid, flush=True)\n"
    )
    started = time.monotonic()
    done = SubprocessRunner().run([PY, "-c", code], timeout=2)
    assert time.monotonic() - started < 2 + 2
    grandchild = int(done.stdout_text().split()[0])
    time.sleep(0.2)
    assert (
        not psutil.pid_exists(grandchild)
        or psutil.Process(grandchild).status() == psutil.STATUS_ZOMBIE
    )


def _fake_python(tmp_path: Path, body: str) -> Path:
    return write_fake_python(tmp_path, body)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("print('garbage instead of JSON')", "printed no result"),
        ("print('@@qnndoctor-probe@@{not json')", "not valid JSON"),
        ("import os; os.abort()", "exited with code -6"),
        ("import sys; sys.exit(127)", "exited with code 127"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "exited with code -11"),
    ],
)
def test_broken_target_interpreters_exit_3(
    cli: Callable[..., CliResult], tmp_path: Path, body: str, message: str
) -> None:
    result = cli("check", "--python", str(_fake_python(tmp_path, body)), "--json")
    assert result.code == 3
    assert message in result.err
    assert result.json()["error"]["kind"] == "could-not-check"


def test_hanging_target_is_killed_within_the_timeout(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    target = _fake_python(tmp_path, "import time; time.sleep(60)")
    started = time.monotonic()
    result = cli("check", "--python", str(target), "--timeout", "1", "--json")
    assert time.monotonic() - started < 1 + 2
    assert result.code == 3
    assert "did not finish within 1 s" in result.err


def test_noise_before_the_document_is_kept_aside(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """A sitecustomize that prints on startup must not break the probe."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("print('hello from sitecustomize')\n")
    env_before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(site)
    try:
        result = cli("check", "--json", "--no-redact")
    finally:
        if env_before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = env_before
    assert result.code in (0, 1)
    assert (
        result.json()["facts"]["probe_run"]["values"]["stdout_noise"] == "hello from sitecustomize"
    )
