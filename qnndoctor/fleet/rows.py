"""The values one ticket becomes in a fleet run: a row (a readable ticket,
re-diagnosed) or an unreadable entry with its reason. Small and flat: a run
over 100,000 tickets passes them between processes and keeps one per machine."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class GroupFix:
    """The fix of one blocking finding, as the re-diagnosis gave it."""

    finding: str
    title: str
    text: str
    commands: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "finding": self.finding,
            "title": self.title,
            "text": self.text,
            "commands": list(self.commands),
        }


@dataclass(frozen=True)
class Row:
    """One readable ticket, re-diagnosed with this qnndoctor's rules and matrix.
    Every string is redacted; ``path`` names the ticket as the run was given it."""

    path: str
    machine_id: str
    created: str | None
    tool_version: str | None
    ready: bool
    worst: str | None  # "error", "warning", "info" or None
    blocking: tuple[str, ...]  # error findings' ids, sorted
    findings: tuple[str, ...]
    smoke_status: str | None
    smoke_seconds: float | None
    smoke_cause: str | None  # the catalogue id naming a failed session's cause
    smoke_cause_title: str | None
    soc: str | None
    htp_arch: int | None
    npu_driver: str | None
    os: str | None
    os_build: str | None
    python: str | None
    python_arch: str | None
    native_arch: str | None
    emulated: bool | None
    onnxruntime: str | None
    onnxruntime_qnn: str | None
    recommended: str | None
    fixes: tuple[GroupFix, ...] = ()

    def for_ticket(
        self,
        path: str,
        created: str | None,
        tool_version: str | None,
        smoke_status: str | None,
        smoke_seconds: float | None,
    ) -> Row:
        """One ticket's row from its setup's (``rediagnose.verdict_of``, whose
        ``ready`` leaves the smoke session out and whose smoke cause is that
        of a failed session): ready only when its session passed, the cause
        only when it did not."""
        failed = smoke_status not in (None, "passed")
        return replace(
            self,
            path=path,
            created=created,
            tool_version=tool_version,
            ready=self.ready and smoke_status == "passed",
            smoke_status=smoke_status,
            smoke_seconds=smoke_seconds,
            smoke_cause=self.smoke_cause if failed else None,
            smoke_cause_title=self.smoke_cause_title if failed else None,
        )

    @staticmethod
    def columns() -> list[str]:
        """The flat columns of CSV / Parquet (everything but ``fixes``)."""
        return [f.name for f in fields(Row) if f.name != "fixes"]

    def flat(self) -> dict[str, Any]:
        """The row for CSV / Parquet: lists joined with ';'."""
        out: dict[str, Any] = {}
        for name in self.columns():
            value = getattr(self, name)
            out[name] = ";".join(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True)
class Unreadable:
    """A file or archive member that is not a ticket this run can use."""

    path: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}


@dataclass(frozen=True)
class Skipped:
    """A ticket left out on purpose (``--since``)."""

    path: str
    reason: str
