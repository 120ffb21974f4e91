"""A head start for the children of a plain ``qnndoctor check``.

Most of a check's time is the smoke session in the target, and the probe
program beside it; neither needs anything from qnndoctor's own modules to
start, yet those take tens of milliseconds to import. So the console entry
calls :func:`begin` before it imports anything else: when the command line
plainly asks for a check of this very interpreter, both children start at
once. The pipeline later *claims* a child only if it is exactly the one it
would start itself (the same argv and environment); anything else is ended
unused (:func:`discard`). A guess that turns out wrong costs a wasted start,
never a different result.

This module imports only ``os`` and ``sys`` at load time (and
``children/launch.py``, which builds the two children's command lines and
environments for the guess and the pipeline alike).
"""

from __future__ import annotations

import os
import sys

from .children.launch import (
    DEFAULT_BACKEND,
    DEFAULT_TIMEOUT,
    PACKAGE_DIR,
    PROBE_SHARE,
    probe_argv,
    probe_env,
    smoke_argv,
    smoke_env,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .children.runner import ChildProcess

class EarlyChild:
    """A child started by :func:`begin`, waiting to be claimed."""

    def __init__(
        self,
        kind: str,
        argv: tuple[str, ...],
        env: dict[str, str],
        proc: ChildProcess,
        marker: str,
        started_wall: float,
        started_monotonic: float,
        cwd: str | None,
    ) -> None:
        self.kind, self.argv, self.env, self.proc = kind, argv, env, proc
        self.marker, self.started_wall = marker, started_wall
        self.started_monotonic, self.cwd = started_monotonic, cwd


_waiting: dict[str, EarlyChild] = {}
# What begin() did, for `check --verbose` (the log does not exist yet then).
events: list[str] = []


def waiting() -> Mapping[str, EarlyChild]:
    """The children started early and not claimed yet, by kind (a read-only
    view: benchmarks and tests look, only ``claim`` and ``discard`` take)."""
    from types import MappingProxyType  # not at load time: see the module docstring

    return MappingProxyType(_waiting)


# check's and report's options that change nothing about the children, and
# those of them that take a value.
_NEUTRAL_FLAGS = frozenset(("--json", "--quiet", "-q", "--verbose", "-v", "--no-redact"))
_NEUTRAL_VALUED = frozenset(
    ("--fail-on", "--format", "--output", "-o", "--smoke-timeout", "--matrix")
)


def plan(argv: Sequence[str]) -> list[tuple[str, list[str], dict[str, str]]]:
    """The children ``qnndoctor <argv>`` will start, when that is plain from
    the command line alone: (kind, argv, env) each; [] when in doubt."""
    if not argv or argv[0] not in ("check", "report"):
        return []
    backend, timeout, smoke, deep = DEFAULT_BACKEND, DEFAULT_TIMEOUT, True, False
    python: str | None = sys.executable
    words = list(argv[1:])
    while words:
        name, has_value, value = words.pop(0).partition("=")
        takes_value = name in ("--backend", "--timeout", "--python") or name in _NEUTRAL_VALUED
        if takes_value and not has_value:
            if not words:
                return []
            value = words.pop(0)
        if name == "--backend":
            backend = value
        elif name == "--python":
            python = _interpreter(value)
        elif name == "--timeout":
            try:
                timeout = float(value)
            except ValueError:
                return []
        elif name == "--no-smoke" and not has_value:
            smoke = False
        elif name == "--deep" and not has_value:
            deep = True
        elif not (name in _NEUTRAL_VALUED or (name in _NEUTRAL_FLAGS and not has_value)):
            return []  # another target, a saved report, --help, an option not known here
    return children(python, backend=backend, timeout=timeout, smoke=smoke, deep=deep)


def children(
    python: str | None, *, backend: str, timeout: float, smoke: bool, deep: bool = False
) -> list[tuple[str, list[str], dict[str, str]]]:
    """The children of a check of the interpreter file ``python`` (None: not
    plain, so none): (kind, argv, env) each."""
    probes = _probes_dir()
    if not python or probes is None:
        return []
    children = []
    if smoke:
        children.append(("smoke", smoke_argv(python, backend), smoke_env()))
    probe = probe_argv(python, probes, deep=deep, probe_timeout=timeout * PROBE_SHARE)
    children.append(("probe", probe, probe_env()))
    return children


def _interpreter(spec: str) -> str | None:
    """What ``target.resolve`` makes of ``--python SPEC`` in its two plain
    cases, an interpreter file or an environment folder (None otherwise:
    "auto", a name on PATH, a path that does not exist)."""
    if spec == "auto" or not (os.sep in spec or (os.altsep and os.altsep in spec)):
        return None
    path = os.path.expanduser(spec)
    path = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
    if os.path.isdir(path):
        for candidate in ("bin/python", "bin/python3", "Scripts/python.exe", "python.exe"):
            found = os.path.join(path.rstrip("/\\"), *candidate.split("/"))
            if os.path.isfile(found):
                return found
        return None
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def _probes_dir() -> str | None:
    """``_layout.package_dir("probes")`` for the two layouts it can tell
    without importing anything: the wheel's, and a source checkout's (None
    otherwise: the pipeline then starts the probe program itself)."""
    for folder in (PACKAGE_DIR, os.path.dirname(PACKAGE_DIR)):
        probes = os.path.join(folder, "probes")
        if os.path.isfile(os.path.join(probes, "__init__.py")):
            return probes
    return None


def begin(argv: Sequence[str]) -> None:
    """Start the children of this command line now, if it is plain enough.
    Never raises: a failed head start is only a slower start."""
    try:
        planned = plan(argv)
    except Exception as exc:  # recorded; the pipeline starts the children itself
        events.append(f"head start abandoned: {type(exc).__name__}: {exc}")
        return
    _start_all(planned, owns_process=True)


def begin_check(python: str | None, *, smoke: bool, backend: str, timeout: float) -> None:
    """The Python API's head start (``qnndoctor.check``): the children of a
    check of ``python`` (None: this interpreter; an interpreter file or an
    environment folder) start before the pipeline is imported. The process
    is the application's, so its orphans are not adopted. Never raises."""
    try:
        interpreter = sys.executable if python is None else _interpreter(python)
        planned = children(interpreter, backend=backend, timeout=timeout, smoke=smoke)
    except Exception as exc:  # recorded; the pipeline starts the children itself
        events.append(f"head start abandoned: {type(exc).__name__}: {exc}")
        return
    _start_all(planned, owns_process=False)


def _start_all(planned: list[tuple[str, list[str], dict[str, str]]], *, owns_process: bool) -> None:
    try:
        if owns_process and any(kind == "smoke" for kind, _, _ in planned):
            from .children.descendants import become_subreaper  # only when children start

            become_subreaper()
        for kind, child_argv, env in planned:
            # The smoke child gets a neutral working folder (see smoke.start_smoke).
            start_early(kind, child_argv, env, own_folder=kind == "smoke")
    except Exception as exc:  # recorded; the pipeline starts the children itself
        events.append(f"head start abandoned: {type(exc).__name__}: {exc}")
        discard()


def start_early(
    kind: str, argv: Sequence[str], env: Mapping[str, str], *, own_folder: bool
) -> None:
    """Start one child to be claimed later (``own_folder``: in a new temporary
    working folder, removed when the child is done with)."""
    import time

    from .children.descendants import MARKER_VARIABLE

    if kind in _waiting:  # one child of a kind: an earlier one is not wanted any more
        _end(_waiting.pop(kind))
    marker = os.urandom(16).hex()
    cwd = new_folder() if own_folder else None
    started_wall, started_monotonic = time.time(), time.monotonic()
    try:
        proc = _start(list(argv), {**env, MARKER_VARIABLE: marker}, cwd)
    except BaseException:
        if cwd is not None:
            remove_folder(cwd)
        raise
    _waiting[kind] = EarlyChild(
        kind, tuple(argv), dict(env), proc, marker, started_wall, started_monotonic, cwd
    )
    events.append(f"head start: {kind} child started (pid {proc.pid})")


def _start(argv: list[str], env: dict[str, str], cwd: str | None) -> ChildProcess:
    """``spawn.spawn`` where it can start the child exactly as the runner's
    Popen would, else that Popen (see spawn.py for why)."""
    from .children import spawn

    try:
        return spawn.spawn(argv, env, cwd)
    except spawn.Unsuitable as exc:
        events.append(f"head start: subprocess instead of posix_spawn ({exc})")
    return spawn.popen(argv, env, cwd)


def new_folder() -> str:
    """A new private folder for the smoke child to work in: a stray
    ``./onnxruntime`` must not be what the session imports (the probes report
    that case separately). ``tempfile`` would cost the head start ~5 ms of
    imports; its folder rule, shortened: the first of TMPDIR, TEMP, TMP and
    the platform's own folders where one can be made (tempfile's own choice
    when none can, and on Windows)."""
    if sys.platform != "win32":
        folder = "qnndoctor-smoke-" + os.urandom(8).hex()
        roots = [os.environ.get(variable, "") for variable in ("TMPDIR", "TEMP", "TMP")]
        for root in [*roots, "/tmp", "/var/tmp", "/usr/tmp"]:
            if not root or not os.path.isdir(root):
                continue
            path = os.path.join(root, folder)
            try:
                os.mkdir(path, 0o700)
            except OSError:  # not writable here: the next one
                continue
            return path
    import tempfile

    return tempfile.mkdtemp(prefix="qnndoctor-smoke-")


def claim(kind: str, argv: Sequence[str], env: Mapping[str, str]) -> EarlyChild | None:
    """The waiting child of this kind if it is exactly this command line and
    environment; a waiting child that is not is ended here."""
    early = _waiting.pop(kind, None)
    if early is None:
        return None
    # A child that already ended is claimed too: what it wrote waits in its pipes.
    if early.argv == tuple(argv) and early.env == dict(env):
        events.append(f"head start: {kind} child claimed")
        return early
    events.append(f"head start: {kind} child was not the one needed; ended")
    _end(early)
    return None


def discard() -> None:
    """End every child nobody claimed (the command turned out to need others)."""
    while _waiting:
        _end(_waiting.popitem()[1])


def remove_folder(path: str) -> None:
    """Remove a folder ``new_folder`` made, with whatever the child left in it."""
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def _end(early: EarlyChild) -> None:
    proc = early.proc
    try:
        if sys.platform != "win32":
            import signal

            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except OSError as exc:  # already gone
        events.append(f"head start: ending pid {proc.pid}: {exc}")
    # Its output is not wanted: closing the pipes cannot block on a
    # descendant that still holds them, as draining them could.
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    proc.wait()
    if early.cwd is not None:
        remove_folder(early.cwd)
