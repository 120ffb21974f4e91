"""Run the target's own pip: ``<python> -m pip ...`` as an argv list, its
output streamed line by line, a time limit, no prompts.

pip's own configuration (config files, ``PIP_INDEX_URL``, ``PIP_FIND_LINKS``,
``PIP_NO_INDEX``) applies unchanged: qnndoctor names no index.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .dependencies import pip_environment
from .plan import Step


@dataclass(frozen=True)
class PipRun:
    argv: tuple[str, ...]
    exit_code: int | None
    timed_out: bool
    tail: str

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def to_json(self) -> dict[str, Any]:
        return {
            "argv": list(self.argv),
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "output_tail": self.tail,
        }


def run_pip(
    python: str,
    args: tuple[str, ...],
    *,
    timeout: float,
    echo: Callable[[str], None],
) -> PipRun:
    """One pip call. On Ctrl-C the child (same process group: it got the
    signal too) is given time to undo its own transaction, then killed, and
    KeyboardInterrupt goes on to the caller, which restores the snapshot."""
    argv = (python, "-m", "pip", *args)
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=pip_environment(),
    )
    lines: list[str] = []

    def pump() -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            line = raw.decode("utf-8", errors="replace").rstrip()
            lines.append(line)
            del lines[:-200]  # keep the tail only
            echo(line)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    timed_out = False
    try:
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            process.kill()
            process.wait()
    except KeyboardInterrupt:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        raise
    finally:
        reader.join(timeout=5)
        if process.stdout is not None and not reader.is_alive():
            process.stdout.close()
    return PipRun(argv, process.returncode, timed_out, "\n".join(lines[-30:]))


def describe(step: Step, python: str) -> str:
    """What the step does, for the progress log: a pip step as the user would
    type it; a leftover is moved into the backup folder (fix can roll back)."""
    if step.kind == "remove-leftover":
        return f"move {step.path} into the backup folder (removed; restored on rollback)"
    return command(step, python)


def command(step: Step, python: str) -> str:
    """The step as a command the user could run by hand, as printed (sh on
    POSIX; on Windows a line that works in PowerShell and cmd alike)."""
    from ..shell import pip_command, remove_command

    windows = os.name == "nt"
    if step.kind == "remove-leftover" and step.path:
        return remove_command(step.path, windows, folder=Path(step.path).is_dir())
    return pip_command(python, windows, *step.pip_args)
