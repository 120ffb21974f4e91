"""One consistent set of commands per report.

Rules write their fixes on their own; the resolver decides which
onnxruntime-qnn version belongs here. A finding must not tell the user to
reinstall (or install) an onnxruntime-qnn other than the one the
recommendation installs, nor install the companion onnxruntime on its own
while the recommendation installs a release (which brings, or pins, its
companion): such a fix takes the recommendation's commands.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from .findings import Finding, Fix

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


def align_fixes(
    findings: Iterable[Finding], recommendation: Mapping[str, Any] | None
) -> tuple[Finding, ...]:
    """Findings whose fix installs another onnxruntime-qnn than the
    recommendation get the recommendation's commands instead."""
    findings = tuple(findings)
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
