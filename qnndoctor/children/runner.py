"""Running child processes safely, behind an injectable interface.

Everything qnndoctor runs in the target interpreter (the probe program, later
the smoke session) goes through a ``Runner``. ``SubprocessRunner`` is the real
one; tests pass their own, the way httpx takes a ``MockTransport``.
"""

from __future__ import annotations

import collections
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, Protocol

from .containment import Containment, for_this_platform, kill_processes
from .spawn import popen

DEFAULT_OUTPUT_CAP = 4 * 1024 * 1024
# How long after the time limit ``run`` may take to kill, sweep and drain.
_GRACE_S = 1.7


@dataclass(frozen=True)
class Completed:
    """What a child process did. ``exit_code`` is None when it had to be killed."""

    argv: tuple[str, ...]
    exit_code: int | None
    stdout: bytes
    stderr: bytes
    duration_s: float
    timed_out: bool = False
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    start_error: str | None = None
    killed_pids: tuple[int, ...] = ()
    # Processes the child started that left its tree (double-forked daemons),
    # found by the containment sweep and killed after the child ended.
    escaped_pids: tuple[int, ...] = ()

    @property
    def signal(self) -> int | None:
        """The POSIX signal that ended the child, if any."""
        if self.exit_code is not None and self.exit_code < 0:
            return -self.exit_code
        return None

    def stdout_text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")


class ChildProcess(Protocol):
    """What the runner uses of a started child: a ``subprocess.Popen``, or a
    ``spawn.SpawnedChild`` of the head start."""

    @property
    def pid(self) -> int: ...
    @property
    def stdout(self) -> IO[bytes] | None: ...
    @property
    def stderr(self) -> IO[bytes] | None: ...
    @property
    def returncode(self) -> int | Any: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def poll(self) -> int | None: ...
    def kill(self) -> None: ...


class EarlyChild(Protocol):
    """What ``adopt`` reads of a child the head start started
    (``headstart.EarlyChild``; the head start uses the runner, not the reverse)."""

    @property
    def proc(self) -> ChildProcess: ...
    @property
    def argv(self) -> tuple[str, ...]: ...
    @property
    def marker(self) -> str: ...
    @property
    def started_wall(self) -> float: ...
    @property
    def started_monotonic(self) -> float: ...


class Runner(Protocol):
    """Runs an argv list with stdin closed, a hard timeout and capped output."""

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        on_start: Callable[[], object] | None = None,
    ) -> Completed: ...


class _CappedReader(threading.Thread):
    """Drains a pipe to the end, keeping the first and last ``cap/2`` bytes.

    Draining everything keeps a chatty child from blocking on a full pipe;
    keeping head and tail (the tail as a deque of blocks, trimmed from the
    left) keeps memory bounded and the cost linear, whatever the child prints.
    """

    def __init__(self, stream: IO[bytes], cap: int) -> None:
        super().__init__(daemon=True)
        self._stream = stream
        self._half = max(cap // 2, 1)
        self.head = bytearray()
        self._tail: collections.deque[bytes] = collections.deque()
        self._tail_size = 0
        self.total = 0

    def run(self) -> None:
        read = getattr(self._stream, "read1", self._stream.read)
        try:
            while True:
                block = read(1 << 16)
                if not block:
                    break
                self.total += len(block)
                room = self._half - len(self.head)
                if room > 0:
                    self.head += block[:room]
                    block = block[room:]
                if block:
                    self._tail.append(block)
                    self._tail_size += len(block)
                    while self._tail_size - len(self._tail[0]) >= self._half:
                        self._tail_size -= len(self._tail.popleft())
        except (OSError, ValueError):
            pass

    def result(self) -> tuple[bytes, bool]:
        tail = b"".join(self._tail)[-self._half :] if self._tail else b""
        truncated = self.total > len(self.head) + len(tail)
        marker = b"\n[... output truncated by qnndoctor ...]\n" if truncated else b""
        return bytes(self.head) + marker + tail, truncated


def kill_tree(pid: int, wait_s: float = 0.5) -> tuple[int, ...]:
    """Kill a process and all its descendants; returns the pids killed."""
    import psutil  # imported here: only needed when something must die

    try:
        parent = psutil.Process(pid)
        victims = [*parent.children(recursive=True), parent]
    except psutil.NoSuchProcess:
        return ()
    return tuple(kill_processes(victims, wait_s))


def _kill_group(pgid: int) -> None:
    """Kill what is left of the child's session (POSIX): grandchildren that
    were re-parented away from it still hold its pipes."""
    import signal

    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class Started:
    """A child that ``SubprocessRunner.start`` started (or failed to start)."""

    def __init__(
        self,
        runner: SubprocessRunner,
        proc: ChildProcess | None,
        args: tuple[str, ...],
        containment: Containment,
        started: float,
        timeout: float,
        failed: Completed | None,
    ) -> None:
        self.runner, self.proc, self.args = runner, proc, args
        self.containment, self.started, self.timeout = containment, started, timeout
        self.failed = failed

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def finish(self, on_start: Callable[[], object] | None = None) -> Completed:
        """Wait for the child (at most its time limit and the grace after it),
        contain what it left, collect its output."""
        if self.proc is None:
            assert self.failed is not None
            return self.failed
        from .containment import note_ended

        try:
            return self.runner._finish(
                self.proc, self.args, self.containment, self.started, self.timeout, on_start
            )
        finally:
            note_ended(self.proc.pid)


class SubprocessRunner:
    """The real runner: argv list, no shell, stdin closed, whole-tree kill, and
    containment of everything the child starts (``qnndoctor.children.containment``).

    ``run`` returns within ``timeout`` + about 1.7 s, whatever the child does.
    """

    def __init__(
        self,
        output_cap: int = DEFAULT_OUTPUT_CAP,
        containment: Callable[[], Containment] = for_this_platform,
    ) -> None:
        self.output_cap = output_cap
        self.containment = containment

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        on_start: Callable[[], object] | None = None,
    ) -> Completed:
        """``on_start`` runs once the child is running: work to overlap with it."""
        return self.start(argv, timeout=timeout, env=env, cwd=cwd).finish(on_start)

    def start(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> Started:
        """Start the child now, in the calling thread; ``Started.finish``
        (from any thread) waits for it. Starting and waiting apart lets a
        caller start the child before anything else it has to do."""
        args = tuple(argv)
        started = time.monotonic()
        containment = self.containment()
        child_env = dict(env) if env is not None else dict(os.environ)
        containment.prepare(child_env)
        from .containment import note_started, spawning

        try:
            with spawning:  # started and noted as our own before any sweep lists it
                proc = popen(args, child_env, cwd)
                note_started(proc.pid)
        except OSError as exc:
            containment.sweep()
            failed = Completed(
                argv=args,
                exit_code=None,
                stdout=b"",
                stderr=b"",
                duration_s=time.monotonic() - started,
                start_error=f"{type(exc).__name__}: {exc.strerror or exc}",
            )
            return Started(self, None, args, containment, started, timeout, failed)
        return Started(self, proc, args, containment, started, timeout, None)

    def adopt(self, early: EarlyChild, *, timeout: float) -> Started:
        """A child the console's head start already started with exactly the
        command line and environment this runner was asked for
        (``headstart.claim`` checked that): contained and waited for as if
        ``start`` had started it, its time limit counted from its real start."""
        from .containment import note_started, spawning

        containment = self.containment()
        containment.resume(early.marker, early.started_wall)
        with spawning:
            note_started(early.proc.pid)
        return Started(
            self, early.proc, early.argv, containment, early.started_monotonic, timeout, None
        )

    def _finish(
        self,
        proc: ChildProcess,
        args: tuple[str, ...],
        containment: Containment,
        started: float,
        timeout: float,
        on_start: Callable[[], object] | None,
    ) -> Completed:
        """Wait for the started child, contain what it left, collect its output."""
        # Everything after the time limit (kill, sweep, draining) fits in this.
        hard_end = started + timeout + _GRACE_S
        posix = sys.platform != "win32"
        containment.attach(proc.pid, getattr(proc, "_handle", None))
        assert proc.stdout is not None and proc.stderr is not None
        readers = (
            _CappedReader(proc.stdout, self.output_cap),
            _CappedReader(proc.stderr, self.output_cap),
        )
        for reader in readers:
            reader.start()
        if on_start is not None:
            on_start()
        timed_out = False
        killed: tuple[int, ...] = ()
        # Popen.wait(timeout) polls with sleeps of up to 50 ms, so the exit of
        # a fast child would be noticed late; a blocking wait in a thread wakes
        # the join at once.
        waiter = threading.Thread(target=proc.wait, daemon=True)
        waiter.start()
        waiter.join(max(timeout - (time.monotonic() - started), 0))
        if waiter.is_alive():
            timed_out = True
            killed = kill_tree(proc.pid)
            if posix:  # also whatever left the tree but stayed in the session
                _kill_group(proc.pid)
            waiter.join(max(hard_end - 0.9 - time.monotonic(), 0.05))
        # Whatever the child started and left behind (a double-forked daemon
        # in its own session is in neither its tree nor its process group).
        escaped = containment.sweep()
        # The child is gone; anything still holding its pipes is a descendant.
        for reader in readers:
            reader.join(timeout=max(hard_end - 0.2 - time.monotonic(), 0.05))
        if any(reader.is_alive() for reader in readers):
            if posix:
                _kill_group(proc.pid)
            for reader in readers:
                reader.join(timeout=0.1)
            timed_out = timed_out or proc.returncode is None
        stdout, out_cut = readers[0].result()
        stderr, err_cut = readers[1].result()
        for stream in (proc.stdout, proc.stderr):
            if not any(r.is_alive() for r in readers):
                stream.close()
        return Completed(
            argv=args,
            exit_code=None if timed_out else proc.returncode,
            stdout=stdout,
            stderr=stderr,
            duration_s=time.monotonic() - started,
            timed_out=timed_out,
            stdout_truncated=out_cut,
            stderr_truncated=err_cut,
            killed_pids=killed,
            escaped_pids=tuple(p for p in escaped if p not in killed),
        )
