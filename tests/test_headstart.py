"""The console's head start (qnndoctor/headstart.py): the children of a plain
``check`` start before the CLI is imported, and the pipeline claims them only
when they are exactly the ones it would start. Real subprocesses throughout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from conftest import CliResult
from helpers.wheels import make_venv, site_packages

from qnndoctor import headstart, smoke
from qnndoctor.children.runner import SubprocessRunner
from qnndoctor.target import collect
from qnndoctor.target.interpreter import resolve

ROOT = Path(__file__).resolve().parent.parent
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="fork/setsid")


@pytest.fixture(autouse=True)
def _nothing_left_waiting() -> Iterator[None]:
    headstart.events.clear()
    yield
    headstart.discard()
    headstart.events.clear()


def _kinds(argv: list[str]) -> list[str]:
    return [kind for kind, _, _ in headstart.plan(argv)]


@pytest.mark.parametrize(
    ("argv", "kinds"),
    [
        (["check"], ["smoke", "probe"]),
        (["check", "--json", "-v", "--fail-on", "warning"], ["smoke", "probe"]),
        (["check", "--no-smoke", "--output=out.json"], ["probe"]),
        (["report", "-o", "ticket.json", "--no-smoke"], ["probe"]),
        (["check", "--backend", "cpu", "--timeout=30", "--deep"], ["smoke", "probe"]),
        (["check", "--python", "auto"], []),  # decided by the environment: left to target.py
        (["check", "--python", "python3"], []),  # a name on PATH: likewise
        (["check", "--python", "/no/such/python"], []),
        (["check", "--from-report", "t.json"], []),  # no probing at all
        (["check", "--help"], []),
        (["check", "--list-findings"], []),
        (["check", "--timeout"], []),  # a usage error: argparse says so
        (["check", "--unknown-option"], []),
        (["explain", "--log", "x.txt"], []),
        ([], []),
    ],
)
def test_only_a_plain_check_of_this_interpreter_gets_a_head_start(
    argv: list[str], kinds: list[str]
) -> None:
    assert _kinds(argv) == kinds


@pytest.mark.parametrize(
    ("argv", "backend", "timeout", "deep"),
    [
        (["check"], "htp", 60.0, False),
        (["check", "--backend=cpu", "--timeout", "30", "--deep"], "cpu", 30.0, True),
    ],
)
def test_the_planned_children_are_the_ones_the_pipeline_starts(
    argv: list[str], backend: str, timeout: float, deep: bool
) -> None:
    """The same argv and environment as smoke.py and collect.py build: what
    makes a claim succeed (a change on one side alone fails here)."""
    planned = {kind: (child, env) for kind, child, env in headstart.plan(argv)}
    target = resolve(None)
    assert planned["smoke"] == (smoke.smoke_argv(target, backend), smoke._child_env())
    probe = collect.probe_argv(target, deep=deep, probe_timeout=timeout * collect.PROBE_SHARE)
    assert planned["probe"] == (probe, collect._child_env())


def test_another_interpreter_is_planned_as_target_py_resolves_it(tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv")
    for spec in (str(python), str(tmp_path / "venv"), str(tmp_path / "venv") + "/"):
        planned = {kind: child for kind, child, _ in headstart.plan(["check", "--python", spec])}
        target = resolve(spec)
        assert planned["smoke"] == smoke.smoke_argv(target, "htp")
        assert planned["probe"] == collect.probe_argv(target, probe_timeout=20.0)


def test_a_claimed_probe_child_is_the_checks_probe_program(
    cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QNNDOCTOR_NO_MEMO", "1")
    headstart.begin(["check", "--no-smoke", "--json", "-v"])
    early = headstart.waiting()["probe"].proc
    result = cli("check", "--no-smoke", "--json", "-v")
    assert "head start: probe child claimed" in result.err
    assert not headstart.waiting()
    report = result.json()
    assert report["facts"]["installs"]["status"] == "ok"
    assert early.returncode == 0  # it ran to its end as the check's own probe program


def test_a_child_the_check_does_not_need_is_ended(cli: Callable[..., CliResult]) -> None:
    headstart.begin(["check", "--no-smoke"])  # guessed: --timeout 60
    early = headstart.waiting()["probe"].proc
    result = cli("check", "--no-smoke", "--json", "-v", "--timeout", "30")
    assert "head start: probe child was not the one needed; ended" in result.err
    assert early.poll() is not None and early.returncode != 0  # killed, not finished
    assert result.json()["facts"]["installs"]["status"] == "ok"  # started anew, as always


def test_discard_ends_the_child_and_removes_its_folder() -> None:
    headstart.start_early(
        "smoke", [sys.executable, "-c", "import time; time.sleep(60)"], {}, own_folder=True
    )
    early = headstart.waiting()["smoke"]
    assert early.cwd is not None and Path(early.cwd).is_dir()
    headstart.discard()
    assert early.proc.poll() is not None
    assert not Path(early.cwd).exists()
    assert not headstart.waiting()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs an unwritable folder (/proc)")
def test_the_smoke_folder_goes_to_the_next_temporary_folder_when_one_is_unwritable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TMPDIR", "/proc")  # a folder nobody, not even root, can make one in
    headstart.start_early(
        "smoke", [sys.executable, "-c", "import time; time.sleep(60)"], {}, own_folder=True
    )
    early = headstart.waiting()["smoke"]
    assert early.cwd is not None and Path(early.cwd).is_dir()
    assert not early.cwd.startswith("/proc")


def test_a_head_start_that_cannot_start_is_recorded_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    headstart.begin(["check"])  # never raises
    assert not headstart.waiting()
    assert any("head start abandoned: FileNotFoundError" in e for e in headstart.events)
    assert not list(tmp_path.iterdir())  # the smoke child's folder was removed again


def test_a_child_that_already_ended_is_claimed_with_its_output() -> None:
    argv = [
        sys.executable,
        "-c",
        "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)",
    ]
    env = dict(os.environ)
    headstart.start_early("probe", argv, env, own_folder=False)
    headstart.waiting()["probe"].proc.wait()  # ended before anyone asked for it
    early = headstart.claim("probe", argv, env)
    assert early is not None
    completed = SubprocessRunner().adopt(early, timeout=30).finish()
    assert (completed.exit_code, completed.stdout_text(), completed.stderr_text()) == (
        3,
        "out\n",
        "err\n",
    )


DAEMON = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        with open(sys.argv[1], "w") as handle:
            handle.write(str(os.getpid()))
        time.sleep(600)
    os._exit(0)
os.wait()
"""


@posix_only
def test_a_claimed_child_is_contained_like_one_the_runner_started(tmp_path: Path) -> None:
    """The marker the head start gave the child is the one the sweep looks
    for: a double-forked daemon of a claimed child does not outlive it."""
    pid_file = tmp_path / "daemon.pid"
    argv = [sys.executable, "-c", DAEMON, str(pid_file)]
    env = dict(os.environ)
    headstart.start_early("probe", argv, env, own_folder=False)
    early = headstart.claim("probe", argv, env)
    assert early is not None
    completed = SubprocessRunner().adopt(early, timeout=30).finish()
    daemon = int(pid_file.read_text())
    assert completed.exit_code == 0
    assert daemon in completed.escaped_pids
    try:
        assert psutil.Process(daemon).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        pass


def _console_venv(root: Path, healthy_venv: Path) -> Path:
    """The healthy venv's interpreter, able to run this checkout's qnndoctor
    as its own console (a .pth: the checkout and the dependencies the check
    needs, from the test environment)."""
    import packaging
    import platformdirs

    deps = root / "deps"
    deps.mkdir()
    for module in (packaging, platformdirs, psutil):
        folder = Path(module.__file__ or "").parent
        (deps / folder.name).symlink_to(folder, target_is_directory=True)
    python = healthy_venv
    (site_packages(python) / "qnndoctor_checkout.pth").write_text(
        f"{ROOT}\n{deps}\n", encoding="utf-8"
    )
    return python


@posix_only
def test_the_console_claims_both_children_of_a_real_session(
    tmp_path: Path, healthy_venv: Path
) -> None:
    """`python -m qnndoctor check` in the healthy venv: the smoke session and
    the probe program started before the CLI was imported are the check's own,
    and the session passes on the HTP simulator."""
    python = _console_venv(tmp_path, healthy_venv)
    try:
        done = subprocess.run(
            [str(python), "-m", "qnndoctor", "check", "--json", "-v"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
            env={**os.environ, "QNNDOCTOR_NO_MEMO": "1"},
        )
    finally:
        (site_packages(python) / "qnndoctor_checkout.pth").unlink()
    assert "head start: smoke child claimed" in done.stderr, done.stderr[-3000:]
    assert "head start: probe child claimed" in done.stderr
    # Both started by os.posix_spawn, before subprocess was imported (spawn.py).
    assert "subprocess instead" not in done.stderr
    report = json.loads(done.stdout)
    assert report["smoke"]["status"] == "passed"
