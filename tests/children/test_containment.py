"""Containment of the smoke child: real double-forking daemons started by a fake
target interpreter, result lines of the wrong shape, and the Windows Job
Object calls through their seam."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from helpers.fake_python import BODY, write_fake_python
from helpers.smoke_values import GOOD_RESULT, QNN_FACTS

from qnndoctor import matrixdata
from qnndoctor.children import containment
from qnndoctor.children.containment import (
    JOB_OBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    MARKER_VARIABLE,
    JobObject,
    MarkerSweep,
)
from qnndoctor.facts.probed import ProbeFacts
from qnndoctor.report.build import build
from qnndoctor.smoke import run_smoke
from qnndoctor.target.interpreter import Target

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="fork/setsid")

# A daemon the classic way: fork, setsid (its own session and process group),
# fork again, parent exits: the daemon is re-parented away from the child's
# tree. ``keep_pipes`` keeps the child's stdout/stderr open (holding the
# runner's pipes), otherwise it points them at /dev/null like real daemons.
DAEMON = """
import os, sys, time
def daemonize(keep_pipes):
    if os.fork():
        os.wait()
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    if not keep_pipes:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
    with open(sys.argv[0] + ".daemon", "w") as handle:
        handle.write(str(os.getpid()))
    time.sleep(600)
    os._exit(0)
"""


def _daemon_pid(target: Target) -> int:
    path = Path(target.python).with_name(BODY + ".daemon")
    for _ in range(500):  # the daemon writes it right after it starts
        if path.is_file() and path.read_text():
            return int(path.read_text())
        time.sleep(0.01)
    raise AssertionError("the daemon never started")


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@posix_only
@pytest.mark.parametrize("keep_pipes", [False, True])
def test_a_double_forked_daemon_does_not_outlive_a_passing_session(
    tmp_path: Path, keep_pipes: bool
) -> None:
    body = DAEMON + f"daemonize({keep_pipes})\nprint({GOOD_RESULT!r}, flush=True)\n"
    target = Target(str(write_fake_python(tmp_path, body)), "test double")
    started = time.monotonic()
    result = run_smoke(target, QNN_FACTS, timeout=300)
    pid = _daemon_pid(target)
    assert result.status == "passed", result
    assert pid in result.escaped_pids
    assert _gone(pid)
    # It did not wait for the daemon's 600 s sleep or the 300 s time limit.
    assert time.monotonic() - started < 150


@posix_only
def test_a_daemon_of_a_hanging_session_is_killed_too(tmp_path: Path) -> None:
    body = DAEMON + "daemonize(True)\ntime.sleep(600)\n"
    target = Target(str(write_fake_python(tmp_path, body)), "test double")
    result = run_smoke(target, QNN_FACTS, timeout=2)
    pid = _daemon_pid(target)
    assert result.status == "timed_out"
    assert result.timeout_s == 2
    assert result.reason is not None and "the 2 s smoke timeout" in result.reason
    assert pid in result.escaped_pids or pid in result.killed_pids
    assert _gone(pid)
    assert result.to_json()["timeout_s"] == 2


@posix_only
def test_the_sweep_leaves_other_processes_alone(tmp_path: Path) -> None:
    """A process with another session's marker (a parallel check) survives."""
    other = psutil.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"],
        env={**os.environ, MARKER_VARIABLE: "another-session"},
    )
    try:
        sweep = MarkerSweep()
        sweep.prepare({})
        time.sleep(0.05)
        assert sweep.sweep() == ()
        assert other.is_running() and other.status() != psutil.STATUS_ZOMBIE
    finally:
        other.kill()
        other.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_quick_scan_starts_at_the_childs_pid_unless_the_counter_wrapped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Descendants of the child have higher pids than it: lower ones are not
    read, unless the kernel's pid counter shows a wrap (or cannot be read)."""
    sweep = MarkerSweep()
    env = dict(os.environ)
    sweep.prepare(env)
    # Carries the marker but started before the child: it cannot be its descendant.
    older = psutil.Popen([sys.executable, "-c", "import time; time.sleep(600)"], env=env)
    try:
        child = subprocess.Popen([sys.executable, "-c", "pass"], stdin=subprocess.DEVNULL)
        child.wait()
        if child.pid < older.pid:
            pytest.skip("the pid counter wrapped between the two starts")
        sweep.attach(child.pid, None)
        assert containment.last_pid() is not None
        assert sweep.quick_scan() == []
        monkeypatch.setattr(containment, "last_pid", lambda: child.pid - 1)  # wrapped
        assert sweep.quick_scan() == [older.pid]
        monkeypatch.setattr(containment, "last_pid", lambda: None)  # unreadable
        assert sweep.quick_scan() == [older.pid]
    finally:
        older.kill()
        older.wait()


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ({"status": "failed", "exception": "notadict"}, "exception is str"),
        ({"status": "passed", "assignment": "all of it"}, "assignment is str"),
        ({"status": "wrong_output", "max_abs_error": "big"}, "max_abs_error is str"),
        ({"status": ["passed"]}, "status is list"),
        ({"exception": {"type": "X"}}, "no status"),
        ({"status": "fine"}, "unknown status 'fine'"),
        ({"status": "failed", "exception": {"type": 1, "message": None}}, "exception is dict"),
        ({"status": "passed", "extra": json.loads("[" * 900 + "]" * 900)}, "nested deeper"),
    ],
)
def test_a_result_of_the_wrong_shape_is_failed_with_the_raw_text(
    tmp_path: Path, line: dict[str, Any], problem: str
) -> None:
    raw = json.dumps(line)
    body = f"print('@@qnndoctor-smoke@@' + {raw!r})"
    target = Target(str(write_fake_python(tmp_path, body)), "test double")
    result = run_smoke(target, QNN_FACTS, timeout=60)
    assert result.status == "failed"
    assert result.reason is not None and problem in result.reason
    assert result.child == {"unexpected_result": raw}
    # Everything downstream reads it without an exception.
    smoke = ProbeFacts("smoke", "ok", values=result.to_json())
    report = build(target, QNN_FACTS.with_probe(smoke), matrixdata.load_or_empty())
    assert "smoke-failed" in {f.id for f in report.findings}
    json.dumps(report.to_json())


class RecordingKernel32:
    """The kernel32 seam, recording calls (the real one exists only on Windows)."""

    def __init__(self, fail: str | None = None) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.fail = fail

    def CreateJobObjectW(self, attributes: Any, name: Any) -> int:
        self.calls.append(("CreateJobObjectW", attributes, name))
        return 0 if self.fail == "create" else 77

    def SetInformationJobObject(self, job: int, info_class: int, info: Any, size: int) -> int:
        flags = info._obj.BasicLimitInformation.LimitFlags  # byref() keeps the object
        self.calls.append(("SetInformationJobObject", job, info_class, flags, size))
        return 0 if self.fail == "set" else 1

    def AssignProcessToJobObject(self, job: int, process: int) -> int:
        self.calls.append(("AssignProcessToJobObject", job, process))
        return 1

    def CloseHandle(self, handle: int) -> int:
        self.calls.append(("CloseHandle", handle))
        return 1


def test_job_object_is_kill_on_close_and_closed_by_the_sweep() -> None:
    kernel32 = RecordingKernel32()
    job = JobObject(kernel32=kernel32)
    env: dict[str, str] = {}
    job.prepare(env)
    job.attach(1234, 5678)
    assert job.sweep() == ()
    assert kernel32.calls == [
        ("CreateJobObjectW", None, None),
        # 144 bytes: JOBOBJECT_EXTENDED_LIMIT_INFORMATION on 64-bit Windows.
        (
            "SetInformationJobObject",
            77,
            JOB_OBJECT_EXTENDED_LIMIT_INFORMATION,
            JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
            144,
        ),
        ("AssignProcessToJobObject", 77, 5678),
        ("CloseHandle", 77),
    ]
    assert env[MARKER_VARIABLE] == job.markers.marker  # the marker sweep as well
    assert job.errors == []


def test_job_object_failure_is_recorded_not_raised() -> None:
    kernel32 = RecordingKernel32(fail="set")
    job = JobObject(kernel32=kernel32)
    job.prepare({})
    job.attach(1, 2)
    job.sweep()
    assert job.errors == ["SetInformationJobObject failed"]
    assert ("CloseHandle", 77) in kernel32.calls
    assert not any(call[0] == "AssignProcessToJobObject" for call in kernel32.calls)


SCRUBBED = """
import os, sys, time
if os.fork():
    os.wait()
else:
    os.setsid()
    if os.fork():
        os._exit(0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    code = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(600)"
    # A clean environment: the marker is gone, only adoption can find it.
    os.execve(sys.executable, [sys.executable, "-c", code, sys.argv[0] + ".daemon"], {})
"""

OWNER = """
import json, sys
from qnndoctor.children.containment import become_subreaper
from qnndoctor.smoke import run_smoke
from qnndoctor.target.interpreter import Target
from helpers.smoke_values import QNN_FACTS
assert become_subreaper()
result = run_smoke(Target(sys.argv[1], "test double"), QNN_FACTS, timeout=60)
print(json.dumps(result.to_json()))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER")
def test_the_command_line_adopts_a_daemon_that_scrubbed_its_environment(
    tmp_path: Path,
) -> None:
    """qnndoctor's own process (as the console entry makes it) is a subreaper:
    a daemon without the marker is still found, as an adopted orphan. Run in
    a separate process, since the switch is process-wide."""
    import subprocess

    body = SCRUBBED + f"time.sleep(0.5)\nprint({GOOD_RESULT!r}, flush=True)\n"
    target = write_fake_python(tmp_path, body)
    tests = Path(__file__).resolve().parents[1]
    owner = subprocess.run(
        [sys.executable, "-c", OWNER, str(target)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tests,
        env={**os.environ, "PYTHONPATH": str(tests)},
    )
    assert owner.returncode == 0, owner.stderr
    smoke = json.loads(owner.stdout.splitlines()[-1])
    pid = _daemon_pid(Target(str(target), "x"))
    assert smoke["status"] == "passed"
    assert pid in smoke["escaped_pids"]
    assert _gone(pid)


OVERLAP = """
import sys, threading
from qnndoctor.children.containment import become_subreaper
from qnndoctor.children.runner import SubprocessRunner

assert become_subreaper()
results = {}

def second():
    results["b"] = SubprocessRunner().run(
        [sys.executable, "-c", "import time; time.sleep(1.0); print('b done')"], timeout=30
    )

thread = threading.Thread(target=second)
first = SubprocessRunner().run(
    [sys.executable, "-c", "import time; time.sleep(0.4)"], timeout=30, on_start=thread.start
)
thread.join()
print(first.exit_code, results["b"].exit_code, results["b"].stdout.decode().strip())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="subreaper: Linux only")
def test_a_runs_sweep_spares_a_child_another_run_started() -> None:
    """`check` runs the probe program and the smoke child at once: as a
    subreaper, the probe run's sweep must not take the smoke child, started
    after it, for one of its orphans."""
    done = subprocess.run(
        [sys.executable, "-c", OVERLAP], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "0", "b", "done"]
