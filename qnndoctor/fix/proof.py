"""The proof: a fresh check with the smoke session in the changed target,
and what changed between the report before and the report after."""

from __future__ import annotations

import os
import sys
from typing import Any

from packaging.utils import canonicalize_name

from ..report.view import ReportView, view
from .dependencies import PipCheck
from .plan import Plan, in_family, report_is_healthy


def _versions(doc: ReportView) -> dict[str, str]:
    installs = doc.facts.get("installs")
    return {
        str(d.value("name")): str(d.value("version"))
        for d in (installs.values.records("distributions") if installs else ())
        if d.value("provides_modules")
    }


def _smoke(doc: ReportView) -> dict[str, Any]:
    smoke = doc.smoke
    if smoke is None:
        return dict.fromkeys(("status", "reason", "duration_s", "timings_s"), None) | {
            "signatures": []
        }
    return {
        "status": smoke.status,
        "reason": smoke.reason,
        "duration_s": smoke.duration_s,
        "timings_s": smoke.child.value("timings_s"),
        "signatures": list(smoke.signatures)[:3],
    }


def _findings(doc: ReportView) -> set[str]:
    return {f"{f.id} ({f.severity})" for f in doc.findings if f.severity in ("error", "warning")}


def pip_check_verdict(before: PipCheck | None, after: PipCheck) -> dict[str, Any]:
    """``pip check`` after the change fails the proof where it names a
    distribution of the onnxruntime family (as requirer or requirement) or a
    problem that was not there before; one that was there before and has
    nothing to do with the family is reported, not held against the fix."""
    old = set(before.lines) if before is not None else set()
    failing = [
        p.line
        for p in after.problems
        if p.line not in old or in_family(p.requirer) or (p.wanted and in_family(p.wanted))
    ]
    return {
        "ran": after.ran,
        "clean": after.ran and not after.problems,
        "before": sorted(old),
        "after": after.lines,
        "failing": failing if after.ran else [after.note],
    }


def compare_reports(
    before: dict[str, Any],
    after: dict[str, Any],
    checked_before: PipCheck | None = None,
    checked_after: PipCheck | None = None,
) -> dict[str, Any]:
    """Before -> after: versions, findings gone and new, smoke sessions, and
    ``pip check`` (when given: part of the proof)."""
    then, now = view(before), view(after)
    old, new = _findings(then), _findings(now)
    pip = pip_check_verdict(checked_before, checked_after) if checked_after else None
    return {
        "proven": report_is_healthy(after) and not (pip and pip["failing"]),
        "pip_check": pip,
        "versions_before": _versions(then),
        "versions_after": _versions(now),
        "findings_gone": sorted(old - new),
        "findings_new": sorted(new - old),
        "findings_remaining": sorted(old & new),
        "smoke_before": _smoke(then),
        "smoke_after": _smoke(now),
    }


def failure_text(after: dict[str, Any], proof: dict[str, Any] | None = None) -> str:
    """Why the proof failed, in one line."""
    doc = view(after)
    errors = [f.id for f in doc.findings if f.severity == "error"]
    parts = [f"smoke session {doc.smoke.status if doc.smoke else None}"]
    if doc.smoke and doc.smoke.reason:
        parts.append(doc.smoke.reason.splitlines()[0][:300])
    if errors:
        parts.append("error findings: " + ", ".join(errors))
    failing = ((proof or {}).get("pip_check") or {}).get("failing") or []
    if failing:
        parts.append("pip check: " + " | ".join(failing[:3]))
    return "; ".join(parts)


def _windows() -> bool:
    return os.name == "nt"


def _qnndoctor(*args: str) -> str:
    """qnndoctor itself, run by the interpreter it is installed in."""
    from ..shell import quote

    windows = _windows()
    return " ".join([quote(sys.executable, windows), "-m", "qnndoctor", *args])


def step_commands(plan: Plan, python: str) -> list[str]:
    """The plan's steps as commands to type (a leftover is deleted)."""
    from .apply import command

    return [command(step, python) for step in plan.steps if step.path or step.pip_args]


def next_step(
    python: str,
    plan: Plan,
    result: dict[str, Any],
    *,
    failed_step: int | None = None,
    after: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What to do after a rollback: a sentence and the commands, each runnable
    as printed here (qnndoctor's own interpreter runs qnndoctor)."""
    from ..resolver.consistency import shell_neutral
    from ..shell import new_venv_command, new_venv_python, pip_command, quote

    windows = _windows()
    steps = step_commands(plan, python)
    check = _qnndoctor("check", "--python", quote(python, windows))
    if failed_step is not None:
        command = steps[failed_step - 1] if failed_step <= len(steps) else ""
        return {
            "text": f"pip could not apply step {failed_step} (its output is above and in "
            "applied[].pip). Run it yourself to read pip's whole message, correct what it "
            "names (index, network, disk), then run fix again:",
            "commands": list(
                shell_neutral(
                    (command, _qnndoctor("fix", "--python", quote(python, windows), "--yes"))
                )
            ),
        }
    proof = result.get("proof") or {}
    conflicts = [
        line
        for line in (proof.get("pip_check") or {}).get("failing") or []
        if "has requirement" in line or "but you have" in line
    ]
    if conflicts and report_is_healthy(after or {}):
        versions = proof.get("versions_after") or {}
        pins = [
            f"{name}=={version}"
            for name, version in sorted(versions.items())
            if in_family(canonicalize_name(name))
        ]
        venv = new_venv_python(windows)
        return {
            "text": "the change works, but pip check says it breaks a requirement of another "
            "installed distribution (" + " | ".join(conflicts[:2]) + "). Keep onnxruntime-qnn "
            "in a virtual environment of its own, beside the tool that needs the other "
            "version:",
            "commands": [
                new_venv_command(python, windows),
                pip_command(venv, windows, "install", *pins),
                _qnndoctor("check", "--python", quote(venv, windows)),
            ],
        }
    extra: list[str] = []
    for finding in view(after or {}).findings:
        if finding.severity != "error":
            continue
        for command in finding.fix.commands if finding.fix else ():
            if command not in steps and command not in extra:
                extra.append(command)
    if extra:
        text = (
            "the check after the change asked for more than the plan did (see the proof). "
            "To apply the plan by hand with what it asked for, then check:"
        )
    else:
        text = (
            "the change did not make the smoke session pass and the check after it names "
            "nothing more to run (the proof above has its diagnosis). To keep the change and "
            "read the full diagnosis, apply it by hand, then check:"
        )
    return {"text": text, "commands": list(shell_neutral((*steps, *extra, check)))}
