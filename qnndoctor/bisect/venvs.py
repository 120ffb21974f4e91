"""Throwaway venvs for ``bisect``: made by the target's base interpreter in
one private folder, filled by pip (with the user's pip configuration and
cache), removed afterwards; every child started here is tracked so that an
interrupt kills it before the folder goes."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..children.runner import Completed, Started, SubprocessRunner, kill_tree

if TYPE_CHECKING:
    from ..children.containment import Containment
    from ..facts.probed import Facts
    from ..target.interpreter import Target

_VENV_TIMEOUT_S = 180.0
_PIP_ERROR_LINES = 3
MIN_PIP_FOR_PYTHON_OPTION = (22, 3)  # pip --python PATH


class VenvError(Exception):
    """A throwaway venv could not be made (the whole bisect stops)."""


class BudgetError(Exception):
    """The disk budget does not allow another venv."""


class TrackingRunner(SubprocessRunner):
    """The real runner, remembering every child it started until it ended,
    so that ``kill_all`` can end them on an interrupt."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._live: set[int] = set()

    def start(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> Started:
        with self._lock:  # started and noted before an interrupt can look
            started = super().start(argv, timeout=timeout, env=env, cwd=cwd)
            if started.pid is not None:
                self._live.add(started.pid)
        return started

    def _finish(
        self,
        proc: Any,
        args: tuple[str, ...],
        containment: Containment,
        started: float,
        timeout: float,
        on_start: Any,
    ) -> Completed:
        # Interrupted while waiting, the child stays listed: kill_all ends it.
        completed = super()._finish(proc, args, containment, started, timeout, on_start)
        with self._lock:
            self._live.discard(proc.pid)
        return completed

    def kill_all(self) -> tuple[int, ...]:
        """Kill every child still running (and its tree and session)."""
        with self._lock:
            pids, self._live = sorted(self._live), set()
        killed: list[int] = []
        for pid in pids:
            killed += kill_tree(pid, wait_s=1.0)
            if sys.platform != "win32":
                import signal

                try:
                    os.killpg(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        return tuple(killed)


def base_interpreter(target: Target, facts: Facts) -> str:
    """The interpreter the target's venv was made from (``sys._base_executable``),
    else one in its ``sys.base_prefix``, else the target itself."""
    for value in (facts.value("interpreter", "base_executable"),):
        if isinstance(value, str) and value and Path(value).is_file():
            return value
    prefix = facts.value("interpreter", "base_prefix")
    if isinstance(prefix, str) and prefix:
        for name in ("bin/python3", "bin/python", "python.exe"):
            if (Path(prefix) / name).is_file():
                return str(Path(prefix) / name)
    return target.python


def venv_python(folder: Path) -> Path:
    return folder / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def own_pip() -> bool:
    """Whether qnndoctor's interpreter has a pip that can install into another
    environment (``pip --python``): then the venvs need no pip of their own."""
    import importlib.metadata

    try:
        version = importlib.metadata.version("pip")
    except importlib.metadata.PackageNotFoundError:
        return False
    try:
        parts = tuple(int(p) for p in version.split(".")[:2])
    except ValueError:
        return False
    return parts >= MIN_PIP_FOR_PYTHON_OPTION


def pip_error(completed: Completed) -> str:
    """pip's own reason, from its ERROR lines (else the last lines it wrote)."""
    lines = [line.strip() for line in completed.stderr_text().splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR:")]
    chosen = errors[:_PIP_ERROR_LINES] or lines[-_PIP_ERROR_LINES:]
    return " ".join(chosen)[:600] or f"pip exited with code {completed.exit_code}"


def installed_version(folder: Path, name: str) -> str | None:
    """The version of distribution ``name`` in the venv, from its dist-info folder."""
    pattern = f"{name}-*.dist-info"
    for site in (*folder.glob("lib/python*/site-packages"), folder / "Lib" / "site-packages"):
        for found in sorted(site.glob(pattern)):
            return found.name[len(name) + 1 : -len(".dist-info")]
    return None


class Workspace:
    """The private folder of one bisect and everything started in it."""

    def __init__(
        self,
        base_python: str,
        *,
        runner: TrackingRunner,
        root: str | None = None,
        find_links: str | None = None,
        install_timeout: float = 600.0,
        disk_budget_mb: int = 2048,
    ) -> None:
        self.base_python, self.runner = base_python, runner
        self.find_links, self.install_timeout = find_links, install_timeout
        self.disk_budget_mb = disk_budget_mb
        self.folder = Path(tempfile.mkdtemp(prefix="qnndoctor-bisect-", dir=root))
        self.with_own_pip = own_pip()
        self._count = 0
        self._removals: list[threading.Thread] = []

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PYTHONDONTWRITEBYTECODE="1")
        for variable in ("PYTHONHOME", "PYTHONPATH", "VIRTUAL_ENV", "PYTHONINSPECT"):
            env.pop(variable, None)
        return env

    def check_disk(self) -> None:
        free = shutil.disk_usage(self.folder).free // (1024 * 1024)
        if free < self.disk_budget_mb:
            raise BudgetError(
                f"only {free} MB free in {self.folder}; the disk budget needs "
                f"{self.disk_budget_mb} MB free for a venv (--disk-budget)"
            )

    def create(self) -> Path:
        """A new empty venv (no pip when qnndoctor's pip installs into it); its folder."""
        self.check_disk()
        self._count += 1
        folder = self.folder / f"venv{self._count}"
        argv = [self.base_python, "-m", "venv"]
        if self.with_own_pip:
            argv.append("--without-pip")
        completed = self.runner.run(
            [*argv, str(folder)], timeout=_VENV_TIMEOUT_S, env=self._env(), cwd=str(self.folder)
        )
        if completed.exit_code != 0 or not venv_python(folder).is_file():
            tail = " ".join(completed.stderr_text().strip().splitlines()[-2:])
            why = completed.start_error or ("timed out" if completed.timed_out else tail)
            raise VenvError(f"{self.base_python} -m venv failed: {why or completed.exit_code}")
        return folder

    def install_argv(self, folder: Path, requirements: Sequence[str]) -> list[str]:
        python = str(venv_python(folder))
        pip = (
            [sys.executable, "-m", "pip", "--python", python]
            if self.with_own_pip
            else [python, "-m", "pip"]
        )
        extra = ["--no-index", "--find-links", self.find_links] if self.find_links else []
        # --no-compile: a throwaway venv runs one session (with -B); compiling
        # sympy's thousands of modules would be most of the install's time.
        return [*pip, "install", "--progress-bar", "off", "--no-compile", *extra, *requirements]

    def install(self, folder: Path, requirements: Sequence[str]) -> Completed:
        return self.runner.run(
            self.install_argv(folder, requirements),
            timeout=self.install_timeout,
            env=self._env(),
            cwd=str(self.folder),
        )

    def remove_later(self, folder: Path) -> None:
        """Remove a venv in the background (joined by ``close``)."""
        thread = threading.Thread(
            target=shutil.rmtree, args=(folder,), kwargs={"ignore_errors": True}, daemon=True
        )
        thread.start()
        self._removals.append(thread)

    def close(self) -> None:
        """Kill whatever still runs, then remove every venv and the folder."""
        self.runner.kill_all()
        for thread in self._removals:
            thread.join(timeout=60)
        shutil.rmtree(self.folder, ignore_errors=True)
        if self.folder.exists():  # a file held open a moment longer (Windows)
            self.runner.kill_all()
            shutil.rmtree(self.folder, ignore_errors=True)
