"""The head start's spawn without ``subprocess`` (qnndoctor/children/spawn.py): the
child gets what the runner's Popen would give it. Real processes; the cases
that need a single-threaded process run in a fresh interpreter."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from qnndoctor.children import spawn

pytestmark = pytest.mark.skipif(not hasattr(os, "posix_spawn"), reason="POSIX only")
ROOT = Path(__file__).resolve().parents[2]

# Runs in a fresh, single-threaded interpreter: spawns CHILD with spawn.spawn
# in a new folder, with one inheritable descriptor of its own open, and
# prints what the child saw and what the parent's state was afterwards.
PARENT = """
import json, os, sys
sys.path.insert(0, sys.argv[1])
from qnndoctor.children import spawn
folder, child = sys.argv[2], sys.argv[3]
before = (os.getcwd(), sorted(os.listdir("/proc/self/fd")))
leaked_read, leaked_write = os.pipe()
os.set_inheritable(leaked_write, True)
proc = spawn.spawn(
    [sys.executable, "-c", child, str(leaked_write)], {"ONLY": "this"}, folder
)
after_spawn = os.getcwd()
out, err = proc.stdout.read(), proc.stderr.read()
code = proc.wait()
proc.stdout.close(); proc.stderr.close()
os.close(leaked_read); os.close(leaked_write)
print(json.dumps({
    "child": json.loads(out), "err": err.decode(), "code": code, "pid": proc.pid,
    "cwd_kept": after_spawn == before[0],
    "fds_kept": sorted(os.listdir("/proc/self/fd")) == before[1],
}))
"""

CHILD = """
import json, os, sys
try:
    os.fstat(int(sys.argv[1]))
    leaked = True
except OSError:
    leaked = False
print(json.dumps({
    "cwd": os.getcwd(), "stdin": sys.stdin.read(), "leaked": leaked,
    "own_session": os.getsid(0) == os.getpid(), "env": dict(os.environ),
}))
print("to stderr", file=sys.stderr)
sys.exit(4)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/fd")
def test_the_child_gets_what_popen_would_give_it(tmp_path: Path) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", PARENT, str(ROOT), str(folder), CHILD],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    seen = json.loads(done.stdout)
    child = seen["child"]
    assert Path(child["cwd"]) == folder  # the working folder it was given
    assert child["stdin"] == ""  # the null device, not the parent's stdin
    assert child["own_session"]  # start_new_session
    assert not child["leaked"]  # close_fds: nothing the parent inherited itself
    assert {k: v for k, v in child["env"].items() if k != "LC_CTYPE"} == {"ONLY": "this"}
    assert (seen["err"], seen["code"]) == ("to stderr\n", 4)
    assert seen["cwd_kept"]  # the parent's own folder is back
    assert seen["fds_kept"]  # no descriptor of the spawn left open in the parent


def test_a_child_ended_by_a_signal_reports_it_as_popen_does(tmp_path: Path) -> None:
    code = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    try:
        proc = spawn.spawn([sys.executable, "-c", code], dict(os.environ), None)
    except spawn.Unsuitable as exc:
        pytest.skip(f"this test process cannot use it: {exc}")
    assert proc.wait() == -signal.SIGKILL
    assert proc.poll() == -signal.SIGKILL
    for stream in (proc.stdout, proc.stderr):
        assert stream is not None
        stream.close()


def _open_descriptors() -> list[str]:
    folder = Path("/proc/self/fd")
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_a_program_that_does_not_exist_is_an_oserror_and_leaves_nothing_open(
    tmp_path: Path,
) -> None:
    cwd, fds = Path.cwd(), _open_descriptors()
    with pytest.raises((OSError, spawn.Unsuitable)) as raised:
        spawn.spawn([str(tmp_path / "no-such-python")], {}, str(tmp_path))
    assert Path.cwd() == cwd
    if raised.type is not spawn.Unsuitable:
        assert _open_descriptors() == fds


def test_with_other_threads_running_it_declines() -> None:
    """The working folder is set by changing ours around the spawn, which
    another thread would see: with threads, the caller uses subprocess."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with pytest.raises(spawn.Unsuitable, match="thread"):
            spawn.spawn([sys.executable, "-c", "pass"], {}, None)
    finally:
        stop.set()
        other.join()


def test_a_relative_program_is_left_to_subprocess() -> None:
    with pytest.raises(spawn.Unsuitable, match="absolute"):
        spawn.spawn(["python3", "-c", "pass"], {}, None)
