"""Starting a child: as the runner does (:func:`popen`), or, for the head
start, the same without importing ``subprocess`` (:func:`spawn`).

``subprocess`` pulls in ``locale``, ``re``, ``enum``, ``threading`` and
``selectors``: 11-20 ms on the test machine, by which the smoke session (the
longest part of a check) would start later. ``os.posix_spawn`` needs none of
it. The child gets what ``subprocess.Popen`` would give it in the runner:
stdin from the null device, stdout and stderr into pipes, a new session, no
other inherited descriptor, and the given working folder.

Only for the console's head start, while the process has a single thread:
the working folder is set by changing ours around the spawn (``posix_spawn``
has no ``cwd``), which another thread would see. Anything else (Windows,
threads, an interpreter without ``POSIX_SPAWN_SETSID``, a standard stream
closed) raises :class:`Unsuitable` and the caller uses ``subprocess``.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Mapping, Sequence
    from typing import IO


def popen(argv: Sequence[str], env: Mapping[str, str], cwd: str | None) -> subprocess.Popen[bytes]:
    """How every child of qnndoctor's runner is started: an argv list, no shell,
    stdin from the null device, stdout and stderr piped, its own session
    (POSIX) or process group (Windows), no inherited descriptors."""
    import subprocess

    posix = sys.platform != "win32"
    return subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=posix,
        creationflags=0 if posix else getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0),
    )


class Unsuitable(Exception):
    """``os.posix_spawn`` cannot start this child exactly as Popen would here."""


class SpawnedChild:
    """What the runner uses of a ``subprocess.Popen`` (``pid``, the two pipes,
    ``wait``, ``returncode``, ``kill``, ``poll``), for a child ``os.posix_spawn`` started.

    One thread waits (the runner's waiter thread); ``wait`` reaps the child.
    """

    def __init__(self, pid: int, argv: Sequence[str], stdout_fd: int, stderr_fd: int) -> None:
        self.pid, self.args = pid, tuple(argv)
        self.stdout: IO[bytes] | None = open(stdout_fd, "rb")  # noqa: SIM115 (the runner closes it)
        self.stderr: IO[bytes] | None = open(stderr_fd, "rb")  # noqa: SIM115
        self.returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if timeout is not None:
                raise ValueError(
                    "SpawnedChild.wait takes no timeout (the runner waits in a thread)"
                )
            try:
                _, status = os.waitpid(self.pid, 0)
            except ChildProcessError:  # reaped by someone else: Popen also says 0
                self.returncode = 0
            else:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def kill(self) -> None:
        import signal

        os.kill(self.pid, signal.SIGKILL)

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                self.returncode = 0
            else:
                if pid == self.pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


def spawn(argv: Sequence[str], env: Mapping[str, str], cwd: str | None) -> SpawnedChild:
    """Start ``argv`` (``argv[0]`` an absolute path) as described above.
    Raises :class:`Unsuitable` when it cannot, ``OSError`` when the start failed."""
    if sys.platform == "win32" or not hasattr(os, "posix_spawn"):
        raise Unsuitable("no posix_spawn here")
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        raise Unsuitable("more than one thread: the working folder cannot be set safely")
    if not os.path.isabs(argv[0]):
        raise Unsuitable("the program is not an absolute path")
    inherited = _inheritable_descriptors()
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    ours = (out_read, out_write, err_read, err_write)
    try:
        if min(ours) < 3:  # a standard stream is closed: dup2 onto itself keeps close-on-exec
            raise Unsuitable("a standard stream of this process is closed")
        actions: list[tuple[object, ...]] = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, out_write, 1),
            (os.POSIX_SPAWN_DUP2, err_write, 2),
        ]
        # Popen's close_fds: the pipes are close-on-exec already; whatever
        # this process inherited itself must not reach the child.
        actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in inherited if fd > 2]
        pid = _spawn_in(cwd, argv, env, actions)
    except BaseException:
        for fd in ours:
            os.close(fd)
        raise
    os.close(out_write)
    os.close(err_write)
    return SpawnedChild(pid, argv, out_read, err_read)


def _spawn_in(
    cwd: str | None, argv: Sequence[str], env: Mapping[str, str], actions: list[tuple[object, ...]]
) -> int:
    try:
        here = os.open(".", os.O_RDONLY) if cwd is not None else None
    except OSError as exc:  # our own folder is gone or unreadable: we could not come back
        raise Unsuitable(f"cannot hold on to the working folder: {exc}") from exc
    try:
        if cwd is not None:
            os.chdir(cwd)
        try:
            return os.posix_spawn(argv[0], list(argv), env, file_actions=actions, setsid=True)
        except NotImplementedError as exc:  # no POSIX_SPAWN_SETSID in this libc
            raise Unsuitable(str(exc)) from exc
    finally:
        if here is not None:
            os.fchdir(here)
            os.close(here)


def _inheritable_descriptors() -> list[int]:
    """This process's open descriptors that a child would inherit."""
    listing = "/proc/self/fd" if sys.platform.startswith("linux") else "/dev/fd"
    try:
        names = os.listdir(listing)
    except OSError as exc:
        raise Unsuitable(f"cannot list open descriptors: {exc}") from exc
    found = []
    for name in names:
        try:
            if os.get_inheritable(int(name)):
                found.append(int(name))
        except (OSError, ValueError):  # the listing's own descriptor, closed by now
            continue
    return found
