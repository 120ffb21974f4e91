"""Running the probe program inside the target interpreter and turning its
output into facts. Also the host-side binary reading that follows."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ._layout import package_dir
from .facts import Facts, ProbeFacts
from .runner import Completed, Runner, SubprocessRunner
from .target import Target

MARKER = "@@qnndoctor-probe@@"


def probes_dir() -> Path:
    """The probe package's folder (see ``_layout.package_dir``)."""
    found = package_dir("probes")
    if found is None:
        raise CouldNotCheck("the qnndoctor.probes package is missing from this installation")
    return found


# Loads the probes under a private package name straight from their folder:
# nothing is added to the target's sys.path, so what the probes see of
# sys.path is exactly what the target's own code sees. (importlib.machinery
# is built in; importlib.util would cost the target a few ms of imports.)
BOOTSTRAP = (
    "import os, sys, types, importlib.machinery as m\n"
    "d = sys.argv[1]\n"
    "n = '_qnndoctor_probes'\n"
    "f = os.path.join(d, '__init__.py')\n"
    "l = m.SourceFileLoader(n, f)\n"
    "s = m.ModuleSpec(n, l, origin=f, is_package=True)\n"
    "s.submodule_search_locations = [d]\n"
    "p = types.ModuleType(n)\n"
    "p.__spec__, p.__loader__, p.__file__, p.__path__, p.__package__ = s, l, f, [d], n\n"
    "sys.modules[n] = p\n"
    "l.exec_module(p)\n"
    "sys.exit(p.main(sys.argv[2:]))\n"
)


class CouldNotCheck(Exception):
    """The probe program could not run in the target (exit code 3)."""

    def __init__(self, message: str, completed: Completed | None = None) -> None:
        super().__init__(message)
        self.completed = completed


@dataclass(frozen=True)
class ProbeRun:
    facts: Facts
    completed: Completed
    noise: str


def probe_argv(target: Target, *, deep: bool = False, model: str | None = None) -> list[str]:
    argv = [target.python, "-B", "-c", BOOTSTRAP, str(probes_dir())]
    if deep:
        argv.append("--deep")
    if model:
        argv.append(f"--model={model}")
    return argv


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    # Would turn the child interactive or change what it reports about itself.
    for variable in ("PYTHONINSPECT", "PYTHONSTARTUP", "PYTHONDONTWRITEBYTECODE"):
        env.pop(variable, None)
    return env


def parse_probe_output(completed: Completed) -> tuple[dict[str, Any], str]:
    """The probe document, and whatever else the interpreter printed."""
    text = completed.stdout_text()
    document: dict[str, Any] | None = None
    noise_lines: list[str] = []
    for line in text.splitlines():
        if line.startswith(MARKER):
            try:
                loaded = json.loads(line[len(MARKER) :])
            except json.JSONDecodeError as exc:
                raise CouldNotCheck(f"probe output is not valid JSON: {exc}", completed) from exc
            if isinstance(loaded, dict):
                document = loaded
        elif line.strip():
            noise_lines.append(line)
    if document is None or not isinstance(document.get("probes"), dict):
        raise CouldNotCheck("the probe program printed no result", completed)
    return document, "\n".join(noise_lines)


def run_probes(
    target: Target,
    *,
    runner: Runner | None = None,
    timeout: float = 60.0,
    deep: bool = False,
    model: str | None = None,
    on_start: Callable[[], object] | None = None,
) -> ProbeRun:
    """Run all probes in the target, then read bundled binaries here."""
    runner = runner or SubprocessRunner()
    completed = runner.run(
        probe_argv(target, deep=deep, model=model),
        timeout=timeout,
        env=_child_env(),
        on_start=on_start,
    )
    if completed.start_error:
        raise CouldNotCheck(f"cannot start {target.python}: {completed.start_error}", completed)
    if completed.timed_out:
        raise CouldNotCheck(
            f"the probe program did not finish within {timeout:g} s and was killed", completed
        )
    if completed.exit_code != 0:
        tail = completed.stderr_text().strip().splitlines()[-3:]
        raise CouldNotCheck(
            f"{target.python} exited with code {completed.exit_code} while probing"
            + (f": {' | '.join(tail)}" if tail else ""),
            completed,
        )
    document, noise = parse_probe_output(completed)
    from .binaries import read_binaries

    facts = Facts.from_json(document["probes"])
    facts = facts.with_probe(read_binaries(facts))
    facts = facts.with_probe(
        ProbeFacts(
            "probe_run",
            "ok",
            values=MappingProxyType(
                {
                    "protocol": document.get("protocol"),
                    "duration_s": round(completed.duration_s, 3),
                    "stdout_noise": noise[-2000:] or None,
                    "stderr": completed.stderr_text()[-2000:] or None,
                }
            ),
            sources=MappingProxyType({"duration_s": "qnndoctor runner"}),
        )
    )
    return ProbeRun(facts=facts, completed=completed, noise=noise)
