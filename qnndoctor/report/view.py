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

from ..facts import reading
from ..facts.reading import records, strings


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _maybe_text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if type(value) is dict or isinstance(value, Mapping) else {}


def _number(value: Any) -> int | float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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
class ProbeError:
    SCHEMA: ClassVar[str] = "#/$defs/probe/properties/error"
    type: str
    message: str


@dataclass(frozen=True)
class Probe:
    """One probe's section of the facts; its values are open in the schema,
    so they are read through a defensive reader."""

    SCHEMA: ClassVar[str] = "#/$defs/probe"
    status: str
    values: reading.Fields
    sources: reading.Fields
    error: ProbeError | None  # None: the probe has no error object


@dataclass(frozen=True)
class Smoke:
    SCHEMA: ClassVar[str] = "#/properties/smoke"
    status: str | None
    reason: str | None
    backend: str | None
    exit_code: int | None
    signal: str | None
    duration_s: int | float | None
    log_lines: tuple[str, ...]
    signatures: tuple[str, ...]  # failure-signature ids, best first
    child: reading.Fields  # the child's own result (open in the schema); empty: none


@dataclass(frozen=True)
class Reason:
    SCHEMA: ClassVar[str] = (
        "#/properties/recommendation/properties/ruled_out/items/properties/reasons/items"
    )
    axis: str | None
    detail: str | None
    confidence: str | None


@dataclass(frozen=True)
class RuledOut:
    SCHEMA: ClassVar[str] = "#/properties/recommendation/properties/ruled_out/items"
    version: str | None
    reasons: tuple[Reason, ...]


@dataclass(frozen=True)
class Alternative:
    SCHEMA: ClassVar[str] = "#/properties/recommendation/properties/alternatives/items"
    change: str | None
    version: str | None
    commands: tuple[str, ...]


@dataclass(frozen=True)
class LocalEvidence:
    SCHEMA: ClassVar[str] = "#/properties/recommendation/properties/local_evidence/items"
    text: str | None


@dataclass(frozen=True)
class Recommendation:
    SCHEMA: ClassVar[str] = "#/properties/recommendation"
    status: str | None
    version: str | None
    era: str | None
    bundled_qnn: str | None
    already_installed: bool
    file: str | None
    profile: reading.Fields  # open in the schema
    commands: tuple[str, ...]
    ruled_out: tuple[RuledOut, ...]
    alternatives: tuple[Alternative, ...]
    local_evidence: tuple[LocalEvidence, ...]
    notes: tuple[str, ...]
    reason: str | None
    emulation: reading.Fields  # open in the schema; empty: not emulated


@dataclass(frozen=True)
class InventoryItem:
    SCHEMA: ClassVar[str] = "#/properties/inventory/items"
    kind: str | None
    name: str | None
    version: str | None
    qnn_version: str | None
    path: str | None
    loaded_by_this_interpreter: bool
    shadowed_by: tuple[str, ...]
    on_loader_path: tuple[str, ...]


@dataclass(frozen=True)
class ChangedFinding:
    SCHEMA: ClassVar[str] = "#/$defs/changed_finding"
    id: str | None
    title: str | None


@dataclass(frozen=True)
class ThenNow:
    SCHEMA: ClassVar[str] = "#/$defs/then_now"
    then: str | None
    now: str | None


@dataclass(frozen=True)
class MatrixIdentity:
    SCHEMA: ClassVar[str] = "#/$defs/matrix_identity"
    generated: str | None
    sha256: str | None


@dataclass(frozen=True)
class MatrixChange:
    SCHEMA: ClassVar[str] = "#/properties/changes_since_report/properties/matrix"
    then: MatrixIdentity
    now: MatrixIdentity
    same: bool


@dataclass(frozen=True)
class Changes:
    SCHEMA: ClassVar[str] = "#/properties/changes_since_report"
    report_created: str | None
    appeared: tuple[ChangedFinding, ...]
    vanished: tuple[ChangedFinding, ...]
    recommended: ThenNow
    matrix: MatrixChange
    qnndoctor: ThenNow


@dataclass(frozen=True)
class ReportError:
    SCHEMA: ClassVar[str] = "#/properties/error"
    kind: str | None
    message: str | None


@dataclass(frozen=True)
class ReportView:
    """The parts of a report the renderers read."""

    SCHEMA: ClassVar[str] = "#"
    tool: Tool
    target: Target
    findings: tuple[Finding, ...]
    skipped_checks: tuple[SkippedCheck, ...]
    redacted: bool
    created: str | None
    matrix: MatrixIdentity  # the report's matrix: which one, by date and digest
    error: ReportError | None  # None: the target was checked
    facts: Mapping[str, Probe]  # probe key -> its section (entries that are not objects: left out)
    smoke: Smoke | None  # None: not run (or not an object)
    recommendation: Recommendation | None  # None: none, or an empty or non-object value
    inventory: tuple[InventoryItem, ...]
    changes_since_report: Changes | None  # None: not a --from-report check
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


def _probe(item: Mapping[str, Any]) -> Probe:
    error = item.get("error")
    return Probe(
        status=_text(item.get("status")),
        values=reading.Fields.of(item.get("values")),
        sources=reading.Fields.of(item.get("sources")),
        error=ProbeError(
            type=_text(error.get("type", "error")), message=_text(error.get("message"))
        )
        if isinstance(error, Mapping)
        else None,
    )


def _smoke(value: Any) -> Smoke | None:
    if not isinstance(value, Mapping):
        return None
    return Smoke(
        status=_maybe_text(value.get("status")),
        reason=_maybe_text(value.get("reason")),
        backend=_maybe_text(value.get("backend")),
        exit_code=_integer(value.get("exit_code")),
        signal=_maybe_text(value.get("signal")),
        duration_s=_number(value.get("duration_s")),
        log_lines=tuple(strings(value.get("log_lines"))),
        signatures=tuple(strings(value.get("signatures"))),
        child=reading.Fields.of(value.get("child")),
    )


def _ruled_out(item: Mapping[str, Any]) -> RuledOut:
    return RuledOut(
        version=_maybe_text(item.get("version")),
        reasons=tuple(
            Reason(
                axis=_maybe_text(r.get("axis")),
                detail=_maybe_text(r.get("detail")),
                confidence=_maybe_text(r.get("confidence")),
            )
            for r in records(item.get("reasons"))
        ),
    )


def _recommendation(value: Any) -> Recommendation | None:
    if not isinstance(value, Mapping) or not value:
        return None
    return Recommendation(
        status=_maybe_text(value.get("status")),
        version=_maybe_text(value.get("version")),
        era=_maybe_text(value.get("era")),
        bundled_qnn=_maybe_text(value.get("bundled_qnn")),
        already_installed=value.get("already_installed") is True,
        file=_maybe_text(value.get("file")),
        profile=reading.Fields.of(value.get("profile")),
        commands=tuple(strings(value.get("commands"))),
        ruled_out=tuple(_ruled_out(item) for item in records(value.get("ruled_out"))),
        alternatives=tuple(
            Alternative(
                change=_maybe_text(item.get("change")),
                version=_maybe_text(item.get("version")),
                commands=tuple(strings(item.get("commands"))),
            )
            for item in records(value.get("alternatives"))
        ),
        local_evidence=tuple(
            LocalEvidence(text=_maybe_text(item.get("text")))
            for item in records(value.get("local_evidence"))
        ),
        notes=tuple(strings(value.get("notes"))),
        reason=_maybe_text(value.get("reason")),
        emulation=reading.Fields.of(value.get("emulation")),
    )


def _inventory_item(item: Mapping[str, Any]) -> InventoryItem:
    return InventoryItem(
        kind=_maybe_text(item.get("kind")),
        name=_maybe_text(item.get("name")),
        version=_maybe_text(item.get("version")),
        qnn_version=_maybe_text(item.get("qnn_version")),
        path=_maybe_text(item.get("path")),
        loaded_by_this_interpreter=item.get("loaded_by_this_interpreter") is True,
        shadowed_by=tuple(strings(item.get("shadowed_by"))),
        on_loader_path=tuple(strings(item.get("on_loader_path"))),
    )


def _then_now(value: Any) -> ThenNow:
    value = _mapping(value)
    return ThenNow(then=_maybe_text(value.get("then")), now=_maybe_text(value.get("now")))


def _identity(value: Any) -> MatrixIdentity:
    value = _mapping(value)
    return MatrixIdentity(
        generated=_maybe_text(value.get("generated")), sha256=_maybe_text(value.get("sha256"))
    )


def _changed(value: Any) -> tuple[ChangedFinding, ...]:
    return tuple(
        ChangedFinding(id=_maybe_text(item.get("id")), title=_maybe_text(item.get("title")))
        for item in records(value)
    )


def _changes(value: Any) -> Changes | None:
    if not isinstance(value, Mapping):
        return None
    matrix = _mapping(value.get("matrix"))
    return Changes(
        report_created=_maybe_text(value.get("report_created")),
        appeared=_changed(value.get("appeared")),
        vanished=_changed(value.get("vanished")),
        recommended=_then_now(value.get("recommended")),
        matrix=MatrixChange(
            then=_identity(matrix.get("then")),
            now=_identity(matrix.get("now")),
            same=matrix.get("same") is True,
        ),
        qnndoctor=_then_now(value.get("qnndoctor")),
    )


def _error(value: Any) -> ReportError | None:
    if not value:
        return None
    value = _mapping(value)
    return ReportError(
        kind=_maybe_text(value.get("kind")), message=_maybe_text(value.get("message"))
    )


def facts_of(report: Mapping[str, Any]) -> dict[str, Probe]:
    """The view's ``facts`` alone (for a reader that needs no other part)."""
    return {
        str(key): _probe(item)
        for key, item in _mapping(_mapping(report).get("facts")).items()
        if isinstance(item, Mapping)
    }


def smoke_of(report: Mapping[str, Any]) -> Smoke | None:
    """The view's ``smoke`` alone."""
    return _smoke(_mapping(report).get("smoke"))


def tool_of(report: Mapping[str, Any]) -> Tool:
    """The view's ``tool`` alone."""
    tool = _mapping(_mapping(report).get("tool"))
    return Tool(name=_text(tool.get("name")), version=_maybe_text(tool.get("version")))


def view(report: Mapping[str, Any]) -> ReportView:
    """The typed view of a report document; never raises on its contents."""
    report = _mapping(report)
    target = _mapping(report.get("target"))
    changes = _mapping(report.get("changes_since_report"))
    return ReportView(
        tool=tool_of(report),
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
        error=_error(report.get("error")),
        created=_maybe_text(report.get("created")),
        matrix=_identity(report.get("matrix")),
        facts=facts_of(report),
        smoke=smoke_of(report),
        recommendation=_recommendation(report.get("recommendation")),
        inventory=tuple(_inventory_item(item) for item in records(report.get("inventory"))),
        changes_since_report=_changes(report.get("changes_since_report")),
        report_created=_maybe_text(changes.get("report_created")),
    )
