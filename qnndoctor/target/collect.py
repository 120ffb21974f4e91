"""Running the probe program inside the target interpreter and turning its
output into facts. Also the host-side binary reading that follows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .. import headstart
from .._layout import package_dir
from ..children import launch
from ..children.runner import Completed, Runner, SubprocessRunner
from .interpreter import Target

if TYPE_CHECKING:  # imported when the probe program runs (see run_probes)
    from ..facts.probed import Facts

MARKER = "@@qnndoctor-probe@@"
PART_MARKER = "@@qnndoctor-probe-part@@"
PLAN_MARKER = "@@qnndoctor-probe-plan@@"
PROBE_SHARE = launch.PROBE_SHARE


def probes_dir() -> Path:
    """The probe package's folder (see ``_layout.package_dir``)."""
    found = package_dir("probes")
    if found is None:
        raise CouldNotCheck("the qnndoctor.probes package is missing from this installation")
    return found


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


def probe_argv(
    target: Target,
    *,
    deep: bool = False,
    model: str | None = None,
    probe_timeout: float | None = None,
) -> list[str]:
    return launch.probe_argv(
        target.python, str(probes_dir()), deep=deep, model=model, probe_timeout=probe_timeout
    )


def _child_env() -> dict[str, str]:
    return launch.probe_env()


def _entry(loaded: Any) -> tuple[str, dict[str, Any]] | None:
    if isinstance(loaded, list) and len(loaded) == 2 and isinstance(loaded[1], dict):
        return str(loaded[0]), loaded[1]
    return None


def parse_probe_output(completed: Completed) -> tuple[dict[str, Any], str]:
    """The probe document, and whatever else the interpreter printed.

    The probe program prints its plan, then each probe's entry as soon as it
    is done, then a final line. If it never got to the final line (killed on
    timeout, crashed), the entries it printed are kept and every planned
    probe without one becomes an error entry: one lost section, not the
    whole report. Nothing printed at all is ``CouldNotCheck``.
    """
    import json  # here: the probe program starts before this import

    text = completed.stdout_text()
    document: dict[str, Any] | None = None
    parts: dict[str, Any] = {}
    plan: list[str] = []
    noise_lines: list[str] = []
    for line in text.splitlines():
        for marker in (PART_MARKER, PLAN_MARKER, MARKER):
            if line.startswith(marker):
                try:
                    loaded = json.loads(line[len(marker) :])
                except (ValueError, RecursionError) as exc:
                    raise CouldNotCheck(
                        f"probe output is not valid JSON: {exc}", completed
                    ) from exc
                if marker == PART_MARKER and (entry := _entry(loaded)) is not None:
                    parts[entry[0]] = entry[1]
                elif marker == PLAN_MARKER and isinstance(loaded, list):
                    plan = [str(name) for name in loaded]
                elif marker == MARKER and isinstance(loaded, dict):
                    document = loaded
                break
        else:
            if line.strip():
                noise_lines.append(line)
    if document is not None and not isinstance(document.get("probes"), dict):
        document = {**document, "probes": parts}
    if document is None and parts:
        why = _why_unfinished(completed)
        lost = {
            name: {
                "status": "error",
                "error": {"type": "ProbeUnfinished", "message": why},
                "values": {},
                "sources": {},
            }
            for name in plan
            if name not in parts
        }
        document = {"protocol": None, "probes": {**parts, **lost}, "unfinished": why}
    if document is None or not isinstance(document.get("probes"), dict):
        raise CouldNotCheck("the probe program printed no result", completed)
    return document, "\n".join(noise_lines)


def _why_unfinished(completed: Completed) -> str:
    if completed.timed_out:
        return (
            f"the probe program was killed after {completed.duration_s:.0f} s, "
            "before this probe finished"
        )
    return f"the probe program ended (exit code {completed.exit_code}) before this probe finished"


def _python_version_of(target: Target, runner: Runner) -> str | None:
    """'2.7', '3.12', ... as the target reports it; None when it does not run
    Python code at all. Asked only after a failed probe run, to say why."""
    # Valid in Python 2 and 3 alike.
    query = "import sys; sys.stdout.write('%d.%d' % sys.version_info[:2])"
    asked = runner.run([target.python, "-c", query], timeout=10.0, env=_child_env())
    parts = asked.stdout.decode("ascii", "replace").strip().split(".")
    if asked.exit_code != 0 or len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    return ".".join(parts)


_NOT_PYTHON = " (it does not run `-c 'import sys'` either: is it a Python interpreter?)"
# What Windows' app execution alias prints (exit code 9009) when no Store
# Python is installed behind `python.exe` in ...\Microsoft\WindowsApps.
_STORE_ALIAS = "Python was not found; run without arguments to install from the Microsoft Store"


def _store_alias(target: Target, completed: Completed) -> str | None:
    """The reason, when the target is Windows' Microsoft Store alias and no
    Python is installed behind it (sources: docs.python.org/3/using/windows.html
    "Troubleshooting"; python/cpython#99097)."""
    said = completed.stdout_text() + completed.stderr_text()
    if _STORE_ALIAS not in said:
        return None
    return (
        f"{target.python} is Windows' app execution alias for the Microsoft Store, and no "
        "Python is installed behind it ('Python was not found; run without arguments to "
        "install from the Microsoft Store'). Install a native ARM64 CPython (the python.org "
        "'Windows installer (ARM64)', or `winget install --exact --id Python.Python.3.12 "
        "--architecture arm64`), then check it: `qnndoctor check --python` with its path (if a "
        "Python is installed already, `py -0p` lists where). "
        "To keep `python` from opening the Store, turn the python.exe and python3.exe aliases "
        "off in Settings > Apps > Advanced app settings > App execution aliases."
    )


def _why_probing_failed(target: Target, runner: Runner) -> tuple[str | None, str]:
    """(the whole reason, or None) when the target is a Python older than the
    probes support; else (None, a hint to append: "" for a usable Python)."""
    version = _python_version_of(target, runner)
    if version is None:
        return None, _NOT_PYTHON
    major, minor = (int(p) for p in version.split("."))
    if (major, minor) >= (3, 8):
        return None, ""
    return (
        f"{target.python} is Python {version}: qnndoctor's probes need Python 3.8 or newer, "
        "and onnxruntime-qnn publishes no wheel for an older Python either (`qnndoctor "
        "matrix` lists them). Check a Python 3.8+ interpreter (`qnndoctor check --python PATH`).",
        "",
    )


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
    argv = probe_argv(target, deep=deep, model=model, probe_timeout=timeout * PROBE_SHARE)
    env = _child_env()
    if (
        isinstance(runner, SubprocessRunner)
        and (early := headstart.claim("probe", argv, env)) is not None
    ):
        completed = runner.adopt(early, timeout=timeout).finish(on_start)
    else:
        completed = runner.run(argv, timeout=timeout, env=env, on_start=on_start)
    if completed.start_error:
        raise CouldNotCheck(f"cannot start {target.python}: {completed.start_error}", completed)
    try:
        document, noise = parse_probe_output(completed)
    except CouldNotCheck:
        if completed.timed_out:
            raise CouldNotCheck(
                f"the probe program did not finish within {timeout:g} s and was killed", completed
            ) from None
        if completed.exit_code != 0:
            if (alias := _store_alias(target, completed)) is not None:
                raise CouldNotCheck(alias, completed) from None
            why, hint = _why_probing_failed(target, runner)
            if why is not None:
                raise CouldNotCheck(why, completed) from None
            tail = completed.stderr_text().strip().splitlines()[-3:]
            raise CouldNotCheck(
                f"{target.python} exited with code {completed.exit_code} while probing"
                + (f": {' | '.join(tail)}" if tail else "")
                + hint,
                completed,
            ) from None
        raise
    from ..facts.probed import Facts, ProbeFacts
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
                    "unfinished": document.get("unfinished"),
                    "duration_s": round(completed.duration_s, 3),
                    "stdout_noise": noise[-2000:] or None,
                    "stderr": completed.stderr_text()[-2000:] or None,
                }
            ),
            sources=MappingProxyType({"duration_s": "qnndoctor runner"}),
        )
    )
    return ProbeRun(facts=facts, completed=completed, noise=noise)
