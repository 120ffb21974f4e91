"""One consistent set of commands per report.

Rules write their fixes on their own; the resolver decides which
onnxruntime-qnn version belongs here. A finding must not tell the user to
reinstall (or install) an onnxruntime-qnn other than the one the
recommendation installs, so such a fix takes the recommendation's commands.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from .findings import Finding, Fix

# "onnxruntime-qnn" as a pip argument, optionally quoted and pinned.
_QNN_ARG = re.compile(r"""(?:^|\s)["']?onnxruntime[-_]qnn(?:==([^\s"']+))?["']?(?=\s|$)""", re.I)


def _installs_qnn(command: str) -> tuple[bool, str | None]:
    """Whether a command is a pip install of onnxruntime-qnn, and the pinned version."""
    if " pip " not in f" {command} " or " install " not in f" {command} ":
        return False, None
    match = _QNN_ARG.search(command)
    if match is None:
        return False, None
    return True, match.group(1)


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
        clash = fix is not None and any(
            installs and pinned != version
            for installs, pinned in (_installs_qnn(c) for c in fix.commands)
        )
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
