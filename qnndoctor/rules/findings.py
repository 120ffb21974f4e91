"""Findings: what the rules conclude, as immutable values."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Severity(enum.IntEnum):
    INFO = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        return cls[text.upper()]


@dataclass(frozen=True)
class Evidence:
    """One fact a finding rests on: ``fact`` is a path into the facts."""

    fact: str
    value: Any

    def to_json(self) -> dict[str, Any]:
        return {"fact": self.fact, "value": self.value}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Evidence:
        return cls(str(data["fact"]), data["value"])


@dataclass(frozen=True)
class Fix:
    """What to do. Commands are shown, never run by qnndoctor.

    A rule states what must change as values: ``pip_runs`` (each the words
    after ``pip``, run by the target's own interpreter) and ``recommended``
    (set up the release the resolver recommends), run after the rule's own
    ``commands`` (those that are not pip's). The command stage
    (``resolver/fixes.py``) turns them into ``commands``, once, for the
    target's shell and pip; ``commands`` a rule writes itself are the ones
    that are not pip's (deleting a leftover, ``usermod``, ...)."""

    text: str
    commands: tuple[str, ...] = ()
    pip_runs: tuple[tuple[str, ...], ...] = ()
    recommended: bool = False
    # The interpreter of ``pip_runs`` when it is not the target's (a new venv's).
    pip_python: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "commands": list(self.commands)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Fix:
        return cls(str(data["text"]), tuple(str(c) for c in data["commands"]))


@dataclass(frozen=True)
class FindingKind:
    """A finding's stable identity: id, default severity and title."""

    id: str
    severity: Severity
    title: str


@dataclass(frozen=True)
class Finding:
    id: str
    severity: Severity
    title: str
    explanation: str
    evidence: tuple[Evidence, ...] = ()
    fix: Fix | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "severity": self.severity.label,
            "title": self.title,
            "explanation": self.explanation,
            "evidence": [e.to_json() for e in self.evidence],
            "fix": self.fix.to_json() if self.fix else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        """The inverse of ``to_json`` (the decisions memo keeps findings as JSON)."""
        return cls(
            id=str(data["id"]),
            severity=Severity.parse(str(data["severity"])),
            title=str(data["title"]),
            explanation=str(data["explanation"]),
            evidence=tuple(Evidence.from_json(e) for e in data["evidence"]),
            fix=Fix.from_json(data["fix"]) if data.get("fix") is not None else None,
        )


@dataclass(frozen=True)
class SkippedCheck:
    """A rule that could not run, with the reason as a value."""

    rule: str
    reason: str
    finding_ids: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "reason": self.reason, "finding_ids": list(self.finding_ids)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SkippedCheck:
        return cls(str(data["rule"]), str(data["reason"]), tuple(data["finding_ids"]))


def make(
    kind: FindingKind,
    explanation: str,
    evidence: tuple[Evidence, ...] = (),
    fix: Fix | None = None,
    *,
    severity: Severity | None = None,
    title: str | None = None,
) -> Finding:
    """A finding of ``kind``; severity and title may be sharpened per case."""
    return Finding(
        id=kind.id,
        severity=severity or kind.severity,
        title=title or kind.title,
        explanation=explanation,
        evidence=evidence,
        fix=fix,
    )
