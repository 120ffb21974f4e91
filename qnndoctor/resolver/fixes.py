"""The command stage: every finding's fix becomes the exact commands, once.

Rules state what must change as values (``Fix.pip_runs``: pip runs of the
target's interpreter; ``Fix.recommended``: the release the resolver
recommends); here, after the resolver, they become the commands the user
types, for the target's shell and pip (``consistency.PipTarget``), in one
consistent set per report: a fix must not install an onnxruntime-qnn other
than the one the recommendation installs, nor install the companion
onnxruntime on its own while the recommendation installs a release (which
brings, or pins, its companion): such a fix takes the recommendation's
commands. Nothing rewrites a command afterwards.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from .. import shell
from ..rules.findings import Finding, Fix
from .consistency import PipTarget, shell_neutral

_ORT = ("onnxruntime", "onnxruntime-qnn")


def _named(run: tuple[str, ...]) -> list[tuple[str, str | None]]:
    """(distribution, pinned version) for each onnxruntime / onnxruntime-qnn
    a pip install run names; [] for any other run."""
    if not run or run[0] != "install":
        return []
    found = []
    for word in run[1:]:
        if word.startswith("-"):
            continue
        try:
            requirement = Requirement(word)
        except InvalidRequirement:
            continue
        name = canonicalize_name(requirement.name)
        if name not in _ORT:
            continue
        specs = list(requirement.specifier)
        pinned = specs[0].version if len(specs) == 1 and specs[0].operator == "==" else None
        found.append((str(name), pinned))
    return found


def _pinned(run: tuple[str, ...], version: str) -> tuple[str, ...]:
    """An install run naming onnxruntime-qnn without a version (maybe after
    ``-U``) installs the recommended ``version`` instead."""
    if not run or run[0] != "install":
        return run
    words: list[str] = []
    for word in run:
        if canonicalize_name(word) == "onnxruntime-qnn" and word[:1] != "-":
            if words and words[-1] in ("-U", "--upgrade"):
                words.pop()
            word = f"onnxruntime-qnn=={version}"
        words.append(word)
    return tuple(words)


def _typed_line(target: PipTarget, python: str, run: tuple[str, ...]) -> str:
    """The run as its own command line reads once typed for both Windows shells."""
    lines = shell_neutral((shell.pip_command(python, target.windows, *run),))
    return next(line for line in lines if not line.startswith("pushd ") and line != "popd")


def _uninstalled(commands: Iterable[str]) -> set[str]:
    """The distributions the recommendation's ``pip uninstall`` commands remove."""
    names: set[str] = set()
    for command in commands:
        words = command.split()
        if "pip" in words and "uninstall" in words:
            after = words[words.index("uninstall") + 1 :]
            names |= {w.strip("'\"").lower().replace("_", "-") for w in after if w[:1] != "-"}
    return names


@dataclass(frozen=True)
class _Recommended:
    """What the command stage needs of the resolver's answer."""

    ok: bool
    version: str | None
    commands: tuple[str, ...]

    @classmethod
    def of(cls, recommendation: Mapping[str, Any] | None) -> _Recommended:
        rec = recommendation or {}
        version = rec.get("version")
        return cls(
            rec.get("status") == "ok",
            str(version) if version else None,
            tuple(str(c) for c in rec.get("commands") or ()),
        )

    def clashes(self, target: PipTarget, python: str, run: tuple[str, ...]) -> bool:
        """Whether ``run`` installs another onnxruntime-qnn, or the companion on
        its own (the recommendation installs, or pins, it itself)."""
        named = _named(run)
        if not named or _typed_line(target, python, run) in self.commands:
            return False
        return any(name == "onnxruntime" or pin != self.version for name, pin in named)


def _commands_of(fix: Fix, target: PipTarget, rec: _Recommended) -> Fix:
    """The fix with its commands made: the recommendation's for ``recommended``,
    then the rule's own, then each pip run by the target's interpreter (or
    ``pip_python``)."""
    runs = fix.pip_runs
    if rec.ok and rec.version and not rec.commands:
        # The recommended release is installed already: an install of
        # onnxruntime-qnn without a version (`-U onnxruntime-qnn`) gets its version.
        runs = tuple(_pinned(run, rec.version) for run in runs)
    made = (
        *(rec.commands if fix.recommended else ()),
        *fix.commands,
        *(shell.pip_command(fix.pip_python or target.python, target.windows, *r) for r in runs),
    )
    instead = rec.commands if rec.ok else ()
    return target.fitted(Fix(fix.text, made), instead) if made else Fix(fix.text)


def _instead(fix: Fix, target: PipTarget, rec: _Recommended) -> Fix | None:
    """The recommendation's commands (with words that say so) when the fix's
    pip runs clash with them; None when they do not."""
    if not (rec.ok and rec.version and rec.commands):
        return None
    python = fix.pip_python or target.python
    if not any(rec.clashes(target, python, run) for run in fix.pip_runs):
        return None
    named = {name for run in fix.pip_runs for name, _pin in _named(run)}
    removed = _uninstalled(rec.commands) & named
    # The finding's own words must not say to keep what these commands remove.
    text = (
        f"Set up onnxruntime-qnn {rec.version}, the version recommended for this machine, "
        f"with the recommendation's commands: they uninstall {', '.join(sorted(removed))} "
        "and install what this release needs, which also settles this finding:"
        if removed
        else f"{fix.text} Use onnxruntime-qnn {rec.version}, the version recommended for "
        "this machine (see the recommendation):"
    )
    return Fix(text, rec.commands)


def make_commands(
    findings: Iterable[Finding],
    recommendation: Mapping[str, Any] | None,
    target: PipTarget,
) -> tuple[Finding, ...]:
    """Every finding with its fix's commands made for ``target``: pip runs by
    its interpreter (after ``-m ensurepip`` for a target without pip; for a
    system Python that pip refuses to change, PEP 668, the recommendation's
    new venv), typed the same in PowerShell and cmd, consistent with the
    recommendation."""
    rec = _Recommended.of(recommendation)
    made = []
    for finding in findings:
        fix = finding.fix
        if fix is not None:
            fitted = _commands_of(fix, target, rec)
            # A fix that became the recommendation's new venv (PEP 668) is settled.
            replaced = None if fitted.commands == rec.commands else _instead(fix, target, rec)
            finding = replace(finding, fix=replaced or fitted)
        made.append(finding)
    return tuple(made)
