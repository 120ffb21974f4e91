"""One consistent set of commands per report.

Rules write their fixes on their own; the resolver decides which
onnxruntime-qnn version belongs here. A finding must not tell the user to
reinstall (or install) an onnxruntime-qnn other than the one the
recommendation installs, nor install the companion onnxruntime on its own
while the recommendation installs a release (which brings, or pins, its
companion): such a fix takes the recommendation's commands. And every command is typed
the same in PowerShell and cmd (``shell_neutral``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from .findings import Finding, Fix
from .shell import with_pip_bootstrap

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


def align_fixes(
    findings: Iterable[Finding],
    recommendation: Mapping[str, Any] | None,
    without_pip: tuple[str, bool] | None = None,
) -> tuple[Finding, ...]:
    """Findings whose fix installs another onnxruntime-qnn than the
    recommendation get the recommendation's commands instead.
    ``without_pip`` (the target's interpreter and whether it is Windows),
    when the target has no pip: its pip commands start with ``-m ensurepip``
    (the recommendation's already do)."""

    def typed(commands: tuple[str, ...]) -> tuple[str, ...]:
        if without_pip is not None:
            commands = with_pip_bootstrap(commands, *without_pip)
        return shell_neutral(commands)

    findings = tuple(
        replace(f, fix=replace(f.fix, commands=typed(f.fix.commands)))
        if f.fix is not None and f.fix.commands
        else f
        for f in findings
    )
    rec = recommendation or {}
    version = rec.get("version")
    commands = tuple(str(c) for c in rec.get("commands") or ())
    if rec.get("status") != "ok" or not version or not commands:
        return findings
    aligned = []
    for finding in findings:
        fix = finding.fix
        clash = fix is not None and any(_clashes(c, version, commands) for c in fix.commands)
        if fix is not None and clash:
            finding = replace(
                finding,
                fix=Fix(
                    f"{fix.text} Use onnxruntime-qnn {version}, the version recommended for "
                    "this machine (see the recommendation):",
                    commands,
                ),
            )
        aligned.append(finding)
    return tuple(aligned)
