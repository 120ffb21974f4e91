"""Containing everything a child process starts, so that nothing outlives it.

Killing the child's process tree is not enough: a grandchild that double-forks
into its own session is re-parented away from the tree (to init, or to the
nearest subreaper) and keeps running after qnndoctor returns.

- POSIX (Linux, macOS): every child gets a unique marker in its environment,
  which its descendants inherit; after the child ends, every process created
  since its start that carries the marker is killed (``MarkerSweep``). This
  needs no process-wide state. A descendant that scrubs its whole
  environment escapes it.
- Linux, when qnndoctor owns the process (the command line, not a library
  call inside someone's application): the process also becomes a child
  subreaper (``become_subreaper``), so orphans of the session are re-parented
  to it instead of init, and the sweep kills every adopted child created
  since the session started, marker or not. In an embedding application that
  process-wide switch would adopt the application's own orphans too, so the
  library never sets it by itself.
- Windows: the child is put in a Job Object with kill-on-job-close; closing
  the job kills every process in it (``JobObject``), behind a small seam
  (``Kernel32``) so the calls can be tested off Windows. The marker sweep runs
  as well.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import descendants
from .descendants import MARKER_VARIABLE as MARKER_VARIABLE
from .descendants import become_subreaper as become_subreaper

# Grace for clock granularity: a process's create_time is rounded (Linux: clock ticks).
_CREATE_TIME_SLACK_S = 1.0
# Children the runner started itself and that still run (the probe program
# and the smoke child run at the same time): never another session's orphans.
_own_children: set[int] = set()
# Held while the runner starts a child and notes it: a sweep lists our
# children under it, so it never sees a child not yet noted as our own.
spawning = threading.Lock()


def note_started(pid: int) -> None:
    """The runner started this child itself (see ``MarkerSweep.adopted``)."""
    _own_children.add(pid)


def note_ended(pid: int) -> None:
    _own_children.discard(pid)


def last_pid() -> int | None:
    """Linux: the last pid handed out in this pid namespace (None elsewhere,
    or when it cannot be read)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        with open("/proc/sys/kernel/ns_last_pid", encoding="ascii") as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return None


def children_from_proc() -> set[int] | None:
    """Linux: the pids of this process's children (every thread's), from
    /proc; None where that cannot be read (then psutil is asked)."""
    if not sys.platform.startswith("linux"):
        return None
    found: set[int] = set()
    try:
        for task in os.listdir("/proc/self/task"):  # noqa: PTH208 - plain names
            with open(f"/proc/self/task/{task}/children", encoding="ascii") as handle:
                found.update(int(pid) for pid in handle.read().split())
    except (OSError, ValueError):  # a thread ended meanwhile, or no such file
        return None
    return found


class Containment(Protocol):
    """One child's containment: set up before the start, swept after the end."""

    def prepare(self, env: MutableMapping[str, str]) -> None:
        """Adjust the child's environment before it starts."""

    def attach(self, pid: int, handle: Any) -> None:
        """The child has started (``handle``: the Windows process handle, if any)."""

    def resume(self, marker: str, started: float) -> None:
        """Contain a child started earlier with this marker in its environment
        at ``started`` (``time.time()``; the console's head start), instead of
        ``prepare``."""

    def sweep(self) -> tuple[int, ...]:
        """Kill everything the child started that is still alive; the pids killed."""


@dataclass
class MarkerSweep:
    """The environment-marker sweep (see the module docstring)."""

    marker: str = field(default_factory=lambda: os.urandom(16).hex())
    started: float = field(default_factory=time.time)
    swallowed: list[str] = field(default_factory=list)
    # Our own children before the session: never the session's orphans.
    existing_children: frozenset[int] = frozenset()
    # The child's pid: its descendants got higher pids, unless the kernel's
    # pid counter wrapped since (``quick_scan`` checks).
    child_pid: int | None = None

    def prepare(self, env: MutableMapping[str, str]) -> None:
        env[MARKER_VARIABLE] = self.marker
        self.started = time.time()
        if descendants.subreaper:
            children = children_from_proc()
            if children is None:
                import psutil

                children = {c.pid for c in psutil.Process().children()}
            self.existing_children = frozenset(children)

    def resume(self, marker: str, started: float) -> None:
        # Started before any other child of ours: no earlier children to spare.
        self.marker, self.started = marker, started

    def attach(self, pid: int, handle: Any) -> None:
        self.child_pid = pid

    def quick_scan(self) -> list[int] | None:
        """Linux: pids whose environment holds the marker, read straight from
        /proc (no psutil import on the common path where nothing escaped).
        None where there is no /proc.

        Only pids from the child's own up are read when the kernel's last
        pid shows no wrap since the child started: its descendants were
        created after it, so on a desktop with hundreds of processes this
        reads a handful of files instead of all of them (bench/bench_sweep.py)."""
        if not sys.platform.startswith("linux"):
            return None
        needle = f"{MARKER_VARIABLE}={self.marker}\0".encode()
        try:
            names = os.listdir("/proc")  # noqa: PTH208 - plain names, no Path objects
        except OSError:
            return None
        lowest = self.lowest_possible_pid()
        me = str(os.getpid())
        found = []
        for name in names:
            if not name.isdigit() or name == me or int(name) < lowest:
                continue
            try:
                with open(f"/proc/{name}/environ", "rb") as handle:
                    if needle in handle.read():
                        found.append(int(name))
            except OSError:  # gone, or another user's process: not ours
                continue
        return found

    def lowest_possible_pid(self) -> int:
        """The lowest pid a descendant of the child can have: the child's,
        when the pid counter (read after listing /proc) is still at or above
        it; 0 (read every pid) when it wrapped or cannot be read."""
        last = last_pid()
        if self.child_pid is None or last is None or last < self.child_pid:
            return 0
        return self.child_pid

    def marked(self) -> list[Any]:
        """Live processes that carry this session's marker."""
        import psutil

        found = []
        me = os.getpid()
        since = self.started - _CREATE_TIME_SLACK_S
        for proc in psutil.process_iter(["create_time"]):
            created = proc.info.get("create_time")
            if proc.pid == me or created is None or created < since:
                continue
            try:
                if proc.environ().get(MARKER_VARIABLE) == self.marker:
                    found.append(proc)
            except (psutil.NoSuchProcess, psutil.ZombieProcess):
                continue
            except (psutil.AccessDenied, OSError) as exc:  # another user's process: not ours
                self.swallowed.append(f"pid {proc.pid}: {type(exc).__name__}")
        return found

    def adopted(self) -> list[Any]:
        """As a subreaper: children we did not start ourselves, created since
        the session began (the session's orphans), with their descendants."""
        import psutil

        if not descendants.subreaper:
            return []
        since = self.started - _CREATE_TIME_SLACK_S
        found = []
        with spawning:
            children = psutil.Process().children()
            own = set(_own_children)
        for child in children:
            try:
                if child.pid in self.existing_children or child.create_time() < since:
                    continue
                if child.pid in own:  # another run's child, started by us
                    continue
                found += [*child.children(recursive=True), child]
            except psutil.Error:
                continue
        return found

    def nothing_adopted(self) -> bool:
        """Linux, as a subreaper: true when every child of ours is one we
        started or had before the session, read from /proc without psutil
        (False when that cannot be told: ``adopted`` then decides)."""
        children = children_from_proc()
        if children is None:
            return False
        with spawning:
            own = set(_own_children)
        return children <= self.existing_children | own

    def sweep(self) -> tuple[int, ...]:
        if self.quick_scan() == [] and (not descendants.subreaper or self.nothing_adopted()):
            return ()  # the common case, decided in about a millisecond
        killed: list[int] = []
        # Twice: a process forking at the moment of the first pass has a
        # child the second pass sees.
        for _ in range(2):
            victims = self.marked()
            victims += [p for p in self.adopted() if p.pid not in {v.pid for v in victims}]
            if not victims:
                break
            killed += kill_processes(victims, wait_s=0.3)
        return tuple(sorted(set(killed)))


def kill_processes(victims: list[Any], wait_s: float) -> list[int]:
    """SIGKILL each psutil process; wait at most ``wait_s`` for them to go. A
    killed process that stays a zombie (its new parent has not reaped it: in
    containers, sometimes never) counts as dead. Returns the pids killed."""
    import psutil

    killed: list[int] = []
    for proc in victims:
        try:
            proc.kill()
            killed.append(proc.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    deadline = time.monotonic() + wait_s
    for proc in victims:
        while time.monotonic() < deadline:
            try:
                if proc.status() == psutil.STATUS_ZOMBIE:
                    break
            except psutil.NoSuchProcess:
                break
            time.sleep(0.01)
    return killed


class Kernel32(Protocol):
    """The four kernel32 calls a Job Object needs (the seam for tests)."""

    def CreateJobObjectW(self, attributes: Any, name: Any) -> int: ...
    def SetInformationJobObject(self, job: int, info_class: int, info: Any, size: int) -> int: ...
    def AssignProcessToJobObject(self, job: int, process: int) -> int: ...
    def CloseHandle(self, handle: int) -> int: ...


JOB_OBJECT_EXTENDED_LIMIT_INFORMATION = 9
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000


def _extended_limit_information() -> Any:
    """A JOBOBJECT_EXTENDED_LIMIT_INFORMATION with kill-on-job-close set."""
    import ctypes

    class IoCounters(ctypes.Structure):
        _fields_ = [(n, ctypes.c_ulonglong) for n in ("r", "w", "o", "rb", "wb", "ob")]

    class BasicLimits(ctypes.Structure):
        _fields_ = [
            ("PerProcessUserTimeLimit", ctypes.c_longlong),
            ("PerJobUserTimeLimit", ctypes.c_longlong),
            ("LimitFlags", ctypes.c_uint32),
            ("MinimumWorkingSetSize", ctypes.c_size_t),
            ("MaximumWorkingSetSize", ctypes.c_size_t),
            ("ActiveProcessLimit", ctypes.c_uint32),
            ("Affinity", ctypes.c_size_t),
            ("PriorityClass", ctypes.c_uint32),
            ("SchedulingClass", ctypes.c_uint32),
        ]

    class ExtendedLimits(ctypes.Structure):
        _fields_ = [
            ("BasicLimitInformation", BasicLimits),
            ("IoInfo", IoCounters),
            ("ProcessMemoryLimit", ctypes.c_size_t),
            ("JobMemoryLimit", ctypes.c_size_t),
            ("PeakProcessMemoryUsed", ctypes.c_size_t),
            ("PeakJobMemoryUsed", ctypes.c_size_t),
        ]

    info = ExtendedLimits()
    info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
    return info


@dataclass
class JobObject:
    """Windows: the child in a kill-on-close Job Object, plus the marker sweep.

    The child is assigned right after it starts (``subprocess`` cannot start
    it suspended); what it starts from then on is in the job.
    """

    kernel32: Kernel32
    make_info: Any = _extended_limit_information
    markers: MarkerSweep = field(default_factory=MarkerSweep)
    job: int | None = None
    errors: list[str] = field(default_factory=list)

    def prepare(self, env: MutableMapping[str, str]) -> None:
        self.markers.prepare(env)
        self._create_job()

    def resume(self, marker: str, started: float) -> None:
        self.markers.resume(marker, started)
        self._create_job()

    def _create_job(self) -> None:
        job = self.kernel32.CreateJobObjectW(None, None)
        if not job:
            self.errors.append("CreateJobObjectW failed")
            return
        info = self.make_info()
        import ctypes

        size = ctypes.sizeof(info) if isinstance(info, ctypes.Structure) else 0
        ref = ctypes.byref(info) if isinstance(info, ctypes.Structure) else info
        if not self.kernel32.SetInformationJobObject(
            job, JOB_OBJECT_EXTENDED_LIMIT_INFORMATION, ref, size
        ):
            self.errors.append("SetInformationJobObject failed")
            self.kernel32.CloseHandle(job)
            return
        self.job = job

    def attach(self, pid: int, handle: Any) -> None:
        self.markers.attach(pid, handle)
        if self.job is not None and not self.kernel32.AssignProcessToJobObject(
            self.job, int(handle)
        ):
            self.errors.append(f"AssignProcessToJobObject failed for pid {pid}")

    def sweep(self) -> tuple[int, ...]:
        if self.job is not None:
            self.kernel32.CloseHandle(self.job)  # kill-on-close ends every process in it
            self.job = None
        return self.markers.sweep()


def for_this_platform() -> Containment:
    """The best containment available here."""
    if sys.platform == "win32":
        import ctypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]
        # Handles are pointer-sized: without these, ctypes would cut them to a C int.
        handle = ctypes.c_void_p
        kernel32.CreateJobObjectW.restype = handle
        kernel32.CreateJobObjectW.argtypes = [ctypes.c_void_p, ctypes.c_wchar_p]
        kernel32.SetInformationJobObject.argtypes = [
            handle,
            ctypes.c_int,
            ctypes.c_void_p,
            ctypes.c_uint32,
        ]
        kernel32.AssignProcessToJobObject.argtypes = [handle, handle]
        kernel32.CloseHandle.argtypes = [handle]
        return JobObject(kernel32=kernel32)
    return MarkerSweep()
