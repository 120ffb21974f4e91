"""What pip says about dependencies, read with the target's own pip:
``pip check`` (before the plan and as part of the proof) and, before the
first change, ``pip install --dry-run --report`` of the steps that resolve
dependencies (which installed distributions they would replace, so the
snapshot backs those up too).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from packaging.utils import canonicalize_name

# "onnxruntime-qnn 2.7.0 requires sympy, which is not installed."
# "app 1.0 has requirement onnxruntime<1.20, but you have onnxruntime 1.31.1."
_LINE = re.compile(
    r"^(?P<name>\S+) (?P<version>\S+) (?:requires|has requirement) (?P<wanted>[A-Za-z0-9][\w.-]*)"
)
_CAP = 200_000  # bytes of pip output kept


def pip_environment() -> dict[str, str]:
    """The environment of every pip call: no prompts, no version check."""
    env = dict(os.environ)
    env.update(PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONIOENCODING="utf-8")
    return env


@dataclass(frozen=True)
class Problem:
    """One line of ``pip check``: ``requirer`` (canonical) wants ``wanted``."""

    line: str
    requirer: str
    version: str
    wanted: str | None


@dataclass(frozen=True)
class PipCheck:
    ran: bool  # False: pip could not run (no pip, timed out)
    problems: tuple[Problem, ...]
    note: str = ""

    @property
    def lines(self) -> list[str]:
        return [p.line for p in self.problems]

    def to_json(self) -> dict[str, Any]:
        return {"ran": self.ran, "problems": self.lines, "note": self.note}


def _run(argv: list[str], timeout: float) -> subprocess.CompletedProcess[bytes] | str:
    try:
        return subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
            env=pip_environment(),
        )
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout:g} s"
    except OSError as exc:
        return f"could not run: {exc}"


def parse_check(text: str) -> tuple[Problem, ...]:
    problems: list[Problem] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("No broken requirements"):
            continue
        match = _LINE.match(line)
        if match:
            problems.append(
                Problem(
                    line,
                    canonicalize_name(match["name"]),
                    match["version"],
                    canonicalize_name(match["wanted"]),
                )
            )
        else:  # "x 1.0 is not supported on this platform" and future forms
            words = line.split()
            problems.append(Problem(line, canonicalize_name(words[0]), "", None))
    return tuple(problems)


def pip_check(python: str, timeout: float = 300.0) -> PipCheck:
    """``<python> -m pip check``: exit 0 clean, 1 with problems listed."""
    done = _run([python, "-m", "pip", "check"], timeout)
    if isinstance(done, str):
        return PipCheck(False, (), f"pip check {done}")
    out = done.stdout[:_CAP].decode("utf-8", errors="replace")
    if done.returncode not in (0, 1):
        tail = done.stderr[-2000:].decode("utf-8", errors="replace").strip()
        return PipCheck(False, (), f"pip check exited {done.returncode}: {tail}")
    return PipCheck(True, parse_check(out) if done.returncode == 1 else ())


def would_replace(
    python: str, pip_args: tuple[str, ...], installed: Iterable[str], timeout: float
) -> set[str] | None:
    """The installed distributions (canonical names) that ``pip <pip_args>``
    would replace, from pip's own dry run; None when pip cannot say (pip older
    than 22.2, no index reachable): the caller must then assume any."""
    if not pip_args or pip_args[0] != "install":
        return set()
    argv = [python, "-m", "pip", "install", "--dry-run", "--quiet", "--report", "-"]
    done = _run([*argv, *pip_args[1:]], timeout)
    if isinstance(done, str) or done.returncode != 0:
        return None
    try:
        report = json.loads(done.stdout[: _CAP * 10].decode("utf-8", errors="replace"))
        names = {
            canonicalize_name(str(item["metadata"]["name"])) for item in report.get("install", [])
        }
    except (ValueError, KeyError, TypeError):
        return None
    return {str(n) for n in names} & {str(canonicalize_name(n)) for n in installed}
