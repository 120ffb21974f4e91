"""One consistent set of commands per report.

Rules write their fixes on their own; the resolver decides which
onnxruntime-qnn version belongs here. A finding must not tell the user to
reinstall (or install) an onnxruntime-qnn other than the one the
recommendation installs, nor install the companion onnxruntime on its own
while the recommendation installs a release (which brings, or pins, its
companion): such a fix takes the recommendation's commands. And every command is typed
the same in PowerShell and cmd (``shell_neutral``), and works with the target's
pip as it is (``PipTarget``): a venv without pip first gets its bundled one
(``-m ensurepip``); a system Python that pip refuses to change (PEP 668) gets
the recommendation's new venv instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..facts.probed import Facts, externally_managed, target_pip
from ..rules.findings import Finding, Fix
from ..shell import new_venv_command, quote, with_pip_bootstrap

_SYSTEM_MANAGED = (
    "This Python is the system's (PEP 668): pip refuses to change it, so set up "
    "onnxruntime-qnn in a new virtual environment instead (the recommendation's commands):"
)
_SYSTEM_MANAGED_NO_VENV = (
    "This Python is the system's (PEP 668): pip refuses to change it; run these pip "
    "commands in a virtual environment made with it (`{make_venv}`)."
)

# "onnxruntime-qnn" or plain "onnxruntime" as a pip argument, maybe quoted,
# maybe with a version specifier.
_ORT_ARG = re.compile(
    r"""(?:^|\s)["']?(onnxruntime(?:[-_]qnn)?)(?:(==)([^\s"',;<>=!~]+)|[<>=!~][^\s"']*)?["']?(?=\s|$)""",
    re.I,
)


def _pip_installs(command: str) -> list[tuple[str, str | None]]:
    """(distribution, pinned version) for each onnxruntime / onnxruntime-qnn a
    pip install command names; [] for any other command."""
    words = f" {command} "
    if " pip " not in words or " install " not in words:
        return []
    found = []
    for match in _ORT_ARG.finditer(command.split(" install ", 1)[1]):
        name = match.group(1).lower().replace("_", "-")
        found.append((name, match.group(3) if match.group(2) else None))
    return found


_BARE_QNN = re.compile(r"(?:(?<=\s)(?:-U|--upgrade) )?(?<=\s)onnxruntime[-_]qnn(?=\s|$)", re.I)


def _pinned(finding: Finding, version: str) -> Finding:
    fix = finding.fix
    if fix is None or not any(_pip_installs(c) for c in fix.commands):
        return finding
    commands = tuple(
        _BARE_QNN.sub(f"onnxruntime-qnn=={version}", c) if _pip_installs(c) else c
        for c in fix.commands
    )
    return replace(finding, fix=replace(fix, commands=commands))


def _uninstalled(commands: Iterable[str]) -> set[str]:
    """The distributions ``pip uninstall`` commands remove (canonical names)."""
    names: set[str] = set()
    for command in commands:
        words = command.split()
        if "pip" in words and "uninstall" in words:
            after = words[words.index("uninstall") + 1 :]
            names |= {w.strip("'\"").lower().replace("_", "-") for w in after if w[:1] != "-"}
    return names


def _named(commands: Iterable[str]) -> set[str]:
    """The onnxruntime / onnxruntime-qnn distributions pip install commands name."""
    return {name for c in commands for name, _pin in _pip_installs(c)}


def _clashes(command: str, version: str, recommended: tuple[str, ...]) -> bool:
    if command in recommended:
        return False
    for name, pinned in _pip_installs(command):
        if name == "onnxruntime-qnn" and pinned != version:
            return True
        if name == "onnxruntime":
            # The recommendation installs (or pins) the companion itself.
            return True
    return False


# A Windows command that starts with a quoted program path: PowerShell
# needs `&` before it, which cmd rejects.
_QUOTED_WINDOWS_PROGRAM = re.compile(r'^"([A-Za-z]:\\[^"]*)\\([^"\\]+\.exe)"( .*)?$')


def shell_neutral(commands: tuple[str, ...]) -> tuple[str, ...]:
    """The same commands, typed the same in PowerShell and cmd: a run of
    commands starting with one quoted program path becomes ``pushd "folder"``,
    ``.\\program ...`` lines and ``popd``."""
    result: list[str] = []
    folder_open: str | None = None
    for command in commands:
        match = _QUOTED_WINDOWS_PROGRAM.match(command)
        folder = match.group(1) if match else None
        if folder_open is not None and folder != folder_open:
            result.append("popd")
            folder_open = None
        if match is None:
            result.append(command)
            continue
        if folder_open is None:
            result.append(f'pushd "{folder}"')
            folder_open = folder
        result.append(f".\\{match.group(2)}{match.group(3) or ''}")
    if folder_open is not None:
        result.append("popd")
    return tuple(result)


@dataclass(frozen=True)
class PipTarget:
    """The target's interpreter as its pip commands name it, and what its pip
    can do there (facts.target_pip; a system Python pip refuses, PEP 668)."""

    python: str
    windows: bool
    pip: str = "unknown"
    system_managed: bool = False

    @classmethod
    def of(cls, facts: Facts) -> PipTarget:
        return cls(
            str(facts.value("interpreter", "executable") or "python"),
            facts.value("interpreter", "sys_platform") == "win32",
            target_pip(facts),
            externally_managed(facts) is not None,
        )

    def runs_pip(self, commands: tuple[str, ...]) -> bool:
        program = f"{quote(self.python, self.windows)} -m pip "
        return any(c.startswith(program) for c in commands)

    def fitted(self, fix: Fix, instead: tuple[str, ...] = ()) -> Fix:
        """``fix`` as it works with this target's pip, typed for both Windows
        shells: a system Python's pip commands give way to ``instead`` (the
        recommendation's new venv) or say where to run them; a venv without
        pip gets its bundled one first."""
        found = fix.commands
        if self.system_managed and self.runs_pip(found):
            if instead:
                return Fix(f"{fix.text} {_SYSTEM_MANAGED}", instead)
            where = _SYSTEM_MANAGED_NO_VENV.format(
                make_venv=new_venv_command(self.python, self.windows)
            )
            return Fix(f"{fix.text} {where}", shell_neutral(found))
        if self.pip == "absent":
            found = with_pip_bootstrap(found, self.python, self.windows)
        return replace(fix, commands=shell_neutral(found))


def align_fixes(
    findings: Iterable[Finding],
    recommendation: Mapping[str, Any] | None,
    target: PipTarget | None = None,
) -> tuple[Finding, ...]:
    """Findings whose fix installs another onnxruntime-qnn than the
    recommendation get the recommendation's commands instead. For a target
    without pip, its pip commands start with ``-m ensurepip`` (the
    recommendation's already do); for a system Python that pip refuses to
    change (PEP 668), a fix that runs its pip becomes the recommendation's
    new venv."""
    rec = recommendation or {}
    commands = tuple(str(c) for c in rec.get("commands") or ())
    instead = commands if rec.get("status") == "ok" else ()
    fitting = target or PipTarget("", windows=False)  # nothing known: shell typing only
    findings = tuple(
        replace(f, fix=fitting.fitted(f.fix, instead))
        if f.fix is not None and f.fix.commands
        else f
        for f in findings
    )
    version = rec.get("version")
    if rec.get("status") == "ok" and version and not commands:
        # The recommended release is installed already: a fix that installs
        # onnxruntime-qnn unpinned (`-U onnxruntime-qnn`) gets its version.
        return tuple(_pinned(f, str(version)) for f in findings)
    if rec.get("status") != "ok" or not version or not commands:
        return findings
    aligned = []
    for finding in findings:
        fix = finding.fix
        clash = fix is not None and any(_clashes(c, version, commands) for c in fix.commands)
        if fix is not None and clash:
            removed = _uninstalled(commands) & _named(fix.commands)
            # The finding's own words must not say to keep what these commands remove.
            text = (
                f"Set up onnxruntime-qnn {version}, the version recommended for this machine, "
                f"with the recommendation's commands: they uninstall {', '.join(sorted(removed))} "
                "and install what this release needs, which also settles this finding:"
                if removed
                else f"{fix.text} Use onnxruntime-qnn {version}, the version recommended for "
                "this machine (see the recommendation):"
            )
            finding = replace(finding, fix=Fix(text, commands))
        aligned.append(finding)
    return tuple(aligned)
