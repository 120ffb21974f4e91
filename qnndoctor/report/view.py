"""A typed, read-only view of a report document (what `check --json` prints,
what a saved ticket holds), for the code that reads a report back.

A ticket from another machine or an older qnndoctor may hold anything, so
`view()` reads defensively: a missing or wrong-typed value becomes its
default (an empty string, None, an empty tuple), never a traceback. Each
class names the part of report.schema.json it mirrors (`SCHEMA`), and its
field names are that part's property names; tests/report/test_view.py checks
the two agree (every field exists in the schema with a compatible type, and
every required property is a field).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..facts.reading import records, strings


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _maybe_text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class Tool:
    SCHEMA: ClassVar[str] = "#/properties/tool"
    name: str
    version: str | None  # None: the ticket does not say


@dataclass(frozen=True)
class Target:
    SCHEMA: ClassVar[str] = "#/properties/target"
    python: str | None
    how_chosen: str | None


@dataclass(frozen=True)
class Evidence:
    SCHEMA: ClassVar[str] = "#/$defs/finding/properties/evidence/items"
    fact: str
    value: Any  # a fact's value: any JSON value


@dataclass(frozen=True)
class Fix:
    SCHEMA: ClassVar[str] = "#/$defs/finding/properties/fix"
    text: str
    commands: tuple[str, ...]


@dataclass(frozen=True)
class Finding:
    SCHEMA: ClassVar[str] = "#/$defs/finding"
    id: str
    severity: str
    title: str
    explanation: str
    evidence: tuple[Evidence, ...]
    fix: Fix | None


@dataclass(frozen=True)
class SkippedCheck:
    SCHEMA: ClassVar[str] = "#/properties/skipped_checks/items"
    rule: str
    reason: str
    finding_ids: tuple[str, ...]


@dataclass(frozen=True)
class ReportView:
    """The parts of a report the renderers read."""

    SCHEMA: ClassVar[str] = "#"
    tool: Tool
    target: Target
    findings: tuple[Finding, ...]
    skipped_checks: tuple[SkippedCheck, ...]
    redacted: bool
    # changes_since_report.report_created: when the saved report was made
    # (None: not a --from-report check, or the ticket does not say)
    report_created: str | None


# Fields of ReportView that are not top-level properties of the schema, with
# the schema path each one reads (checked by the test like the others).
NESTED_FIELDS: dict[str, str] = {
    "report_created": "#/properties/changes_since_report/properties/report_created",
}


def _fix(value: Any) -> Fix | None:
    if not isinstance(value, Mapping) or not value:
        return None
    return Fix(text=_text(value.get("text")), commands=tuple(strings(value.get("commands"))))


def _finding(item: Mapping[str, Any]) -> Finding:
    return Finding(
        id=_text(item.get("id")),
        severity=_text(item.get("severity")),
        title=_text(item.get("title")),
        explanation=_text(item.get("explanation")),
        evidence=tuple(
            Evidence(fact=_text(e.get("fact")), value=e.get("value"))
            for e in records(item.get("evidence"))
        ),
        fix=_fix(item.get("fix")),
    )


def view(report: Mapping[str, Any]) -> ReportView:
    """The typed view of a report document; never raises on its contents."""
    report = _mapping(report)
    tool = _mapping(report.get("tool"))
    target = _mapping(report.get("target"))
    changes = _mapping(report.get("changes_since_report"))
    return ReportView(
        tool=Tool(name=_text(tool.get("name")), version=_maybe_text(tool.get("version"))),
        target=Target(
            python=_maybe_text(target.get("python")),
            how_chosen=_maybe_text(target.get("how_chosen")),
        ),
        findings=tuple(_finding(item) for item in records(report.get("findings"))),
        skipped_checks=tuple(
            SkippedCheck(
                rule=_text(item.get("rule")),
                reason=_text(item.get("reason")),
                finding_ids=tuple(strings(item.get("finding_ids"))),
            )
            for item in records(report.get("skipped_checks"))
        ),
        redacted=report.get("redacted") is True,
        report_created=_maybe_text(changes.get("report_created")),
    )
