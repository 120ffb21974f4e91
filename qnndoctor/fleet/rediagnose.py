"""One ticket -> one row: parsed, checked to be a qnndoctor report, and
re-diagnosed with this qnndoctor's rules and matrix exactly as
``check --from-report`` does (``saved.from_document`` then ``report.build``).

A fleet holds few distinct setups: thousands of machines share an image.
What the re-diagnosis reads is the ticket's facts, so tickets whose facts are
the same apart from what changes on every run (timings, process ids, log
timestamps, and the previous diagnosis the report builder replaces) get the
same verdict; it is computed once per worker and remembered (a bounded
table). ``verdict_key`` says exactly what is left out of that comparison.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .. import REPORT_SCHEMA_VERSION, safejson
from ..facts.reading import Fields
from ..report.redact import Redactor
from ..report.view import Probe, facts_of, smoke_of, tool_of
from ..target.ticket import MAX_REPORT_BYTES, SavedReportError, from_document
from .rows import GroupFix, Row, Skipped, Unreadable

if TYPE_CHECKING:
    from ..matrixdata import Matrix
    from ..report.build import Report

# What changes on every run and that no rule turns into a different finding
# id, severity, title or fix (a timeout's duration is only quoted in an
# explanation, which a fleet run does not show), masked in the facts' JSON
# text: timings, process ids, log timestamps (ORT's 2026-11-28
# 04:03:10.075986228, ISO with T and zone).
_VOLATILE = re.compile(
    rb'"(?:duration_ms|duration_s)": ?-?[0-9.eE+-]+'
    rb'|"timings_s": ?\{[^{}]*\}'
    rb'|"(?:killed_pids|escaped_pids)": ?\[[^\]]*\]'
)
# A separate pass starting with a literal: ten times faster than one alternation.
_TIMESTAMP = re.compile(rb"20\d\d-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?")
# What a ticket's row takes from the ticket itself (not from its setup): when
# did it run, and how long its smoke session took.
_CREATED = re.compile(rb'"created": ?"([^"\\]*)"')
_SMOKE = re.compile(rb'"smoke": ?\{')
_SMOKE_SECONDS = re.compile(rb'"duration_s": ?(-?[0-9.eE+-]+|null)')
# Made again by the report builder from the smoke log, with today's catalogue.
REDONE = ("signatures", "diagnosis", "qnn_error_codes")
# How many verdicts a worker remembers (each a few kB).
MEMO_LIMIT = 4096
# A ticket's path as shown: no home folder or user name of any machine.
_PATHS = Redactor([], [], [])


def verdict_key(document: Mapping[str, Any]) -> str:
    """What decides a ticket's re-diagnosis, hashed: its facts (without the
    probe program's own run: timings only), its smoke result (without what
    the re-diagnosis makes again) and its target, with the volatile parts
    masked. Two tickets from the same setup get the same key; a key that
    differs only costs a re-diagnosis."""
    facts = document.get("facts")
    facts = (
        {k: v for k, v in facts.items() if k != "probe_run"} if isinstance(facts, dict) else facts
    )
    smoke = document.get("smoke")
    if isinstance(smoke, dict):
        smoke = {k: v for k, v in smoke.items() if k not in REDONE}
    text = json.dumps([facts, smoke, document.get("target")], default=str).encode()
    return hashlib.sha256(_TIMESTAMP.sub(b"<t>", _VOLATILE.sub(b"<v>", text))).hexdigest()


def _values(facts: Mapping[str, Probe], probe: str) -> Fields:
    found = facts.get(probe)
    return found.values if found is not None else Fields()


def machine_id(facts: Mapping[str, Probe]) -> str:
    """A stable, hashed machine id from facts that redaction leaves alone:
    the hardware (processor name, SoC identity, NPU device instances), the OS
    and the interpreter's install (its paths with any user name removed).
    No name is in it and none can be read back from it; the same machine
    and interpreter give the same id in a redacted and an unredacted ticket."""

    def value(probe: str, key: str) -> Any:
        return _values(facts, probe).value(key)

    instances = sorted(
        str(d.value("instance_id") or d.value("description") or "")
        for d in _values(facts, "soc").records("npu_devices")
    )
    interpreter = _values(facts, "interpreter")
    identity = [
        value("interpreter", "sys_platform"),
        value("interpreter", "build_arch"),
        list(interpreter.elements("version_info")[:2]),
        interpreter.mapping("marker_environment").value("platform_system"),
        value("soc", "processor_name"),
        value("soc", "socinfo"),
        instances,
        value("emulation", "native_arch"),
        _PATHS.value(value("interpreter", "executable")),
        _PATHS.value(value("interpreter", "base_executable")),
    ]
    text = json.dumps(identity, sort_keys=True, default=str)
    return hashlib.sha256(b"qnndoctor-fleet-machine/1\0" + text.encode()).hexdigest()[:16]


def _distribution_versions(facts: Mapping[str, Probe]) -> dict[str, str]:
    found: dict[str, str] = {}
    for dist in _values(facts, "installs").records("distributions"):
        name = str(dist.value("canonical_name") or dist.value("name") or "").lower()
        if name and name not in found and dist.value("version"):
            found[name] = str(dist.value("version"))
    return found


def _os_build(facts: Mapping[str, Probe]) -> str | None:
    markers = _values(facts, "interpreter").mapping("marker_environment")
    system = markers.value("platform_system")
    if system == "Windows":
        return f"Windows {markers.value('platform_version')}"
    if system:
        return f"{system} {markers.value('platform_release')}"
    return None


def _driver_version(text: str | None) -> str | None:
    """``HtpUsrDrv.dll 30.0.140.1000`` -> ``30.0.140.1000``."""
    if not text:
        return None
    match = re.search(r"(\d+(?:\.\d+){1,3})\s*$", text)
    return match.group(1) if match else text


def verdict_of(report: Report, document: Mapping[str, Any]) -> Row:
    """The verdict of a re-diagnosed report (``document``: the saved ticket):
    what its facts give, independent of when it was made, as the row of its
    setup (``Row.for_ticket`` makes each ticket's row of it): no ticket
    fields, ``ready`` when no finding is an error, the smoke cause of the
    failed session, if any."""
    facts = facts_of(document)
    rec = report.recommendation or {}
    profile = rec.get("profile") if isinstance(rec.get("profile"), Mapping) else {}
    profile = profile or {}
    smoke = report.facts.probe("smoke")
    candidates = (smoke.get("diagnosis") or []) if smoke is not None else []
    cause = candidates[0] if candidates and isinstance(candidates[0], Mapping) else {}
    child = smoke.get("child") if smoke is not None else None
    child = child if isinstance(child, Mapping) else {}
    versions = _distribution_versions(facts)
    qnn = child.get("onnxruntime_qnn_version") or versions.get("onnxruntime-qnn")
    ort = child.get("onnxruntime_version") or versions.get("onnxruntime")
    if ort is None and str(qnn or "").startswith("1."):
        ort = qnn  # 1.x is monolithic: onnxruntime-qnn is the onnxruntime
    soc_source = str(profile.get("htp_arch_source") or "")
    worst = report.worst()
    errors = [f for f in report.findings if f.severity.label == "error"]
    fixes = tuple(
        GroupFix(
            f.id, f.title, _PATHS.text(f.fix.text), tuple(_PATHS.text(c) for c in f.fix.commands)
        )
        for f in errors
        if f.fix is not None
    )
    return Row(
        path="",
        machine_id=machine_id(facts),
        created=None,
        tool_version=None,
        ready=not errors,
        worst=worst.label if worst is not None else None,
        blocking=tuple(sorted({f.id for f in errors})),
        findings=tuple(f.id for f in report.findings),
        smoke_status=None,
        smoke_seconds=None,
        smoke_cause=str(cause["id"]) if cause.get("id") else None,
        smoke_cause_title=str(cause["title"]) if cause.get("title") else None,
        soc=soc_source.split(" (", 1)[0] or _simulated(report),
        htp_arch=profile.get("htp_arch"),
        npu_driver=_driver_version(profile.get("npu_driver")),
        os=profile.get("os"),
        os_build=_os_build(facts),
        python=profile.get("python"),
        python_arch=profile.get("arch"),
        native_arch=profile.get("native_arch"),
        emulated=profile.get("emulated"),
        onnxruntime=str(ort) if ort else None,
        onnxruntime_qnn=str(qnn) if qnn else None,
        recommended=rec.get("version"),
        fixes=fixes,
    )


def _simulated(report: Report) -> str | None:
    """An x86-64 host runs the HTP backend in QNN's simulator: that is its "SoC"."""
    return "HTP simulator" if any(f.id == "htp-simulator-host" for f in report.findings) else None


class Rediagnoser:
    """Re-diagnoses tickets in one process with one matrix, remembering verdicts."""

    def __init__(self, matrix: Matrix, since: str | None = None) -> None:
        self.matrix, self.since = matrix, since
        self.memo: dict[str, Row] = {}  # verdict_key -> the setup's row
        self.same_text: dict[bytes, Row] = {}
        self.computed = 0

    def row(self, raw: bytes, path: str) -> Row | Unreadable | Skipped:
        """The row of one ticket's bytes (``path`` names it, already redacted).

        A ticket whose text, with the volatile parts masked, is byte for byte
        that of a ticket already read (a machine that reports the same setup
        again, or its twin) is that ticket with other times: its row is the
        same but for ``created`` and the smoke time, read from the text where
        the first ticket had them; it is not parsed again. Any other ticket
        is parsed and re-diagnosed (or its setup's verdict remembered)."""
        if len(raw) > MAX_REPORT_BYTES:
            return Unreadable(path, f"larger than {MAX_REPORT_BYTES} bytes; not a ticket")
        same = hashlib.sha256(_TIMESTAMP.sub(b"<t>", _VOLATILE.sub(b"<v>", raw))).digest()
        known = self.same_text.get(same)
        if known is not None:
            created, seconds = _per_run(raw)
            if self.since is not None and (created is None or created[:10] < self.since):
                return Skipped(path, f"created {created or 'on an unknown date'}, before --since")
            return replace(known, path=path, created=created, smoke_seconds=seconds)
        result = self._parsed_row(raw, path)
        if isinstance(result, Row) and _per_run(raw) == (result.created, result.smoke_seconds):
            if len(self.same_text) >= MEMO_LIMIT:
                self.same_text.clear()
            self.same_text[same] = result
        return result

    def _parsed_row(self, raw: bytes, path: str) -> Row | Unreadable | Skipped:
        try:
            # The depth check runs once per distinct setup (in _verdict): the
            # key below only serialises (a RecursionError there is caught).
            document = safejson.loads(raw, "the file", check_depth=False)
        except safejson.BadJSON as exc:
            return Unreadable(path, str(exc))
        return self.document_row(document, path)

    def document_row(self, document: Any, path: str) -> Row | Unreadable | Skipped:
        problem = foreign(document)
        if problem is not None:
            return Unreadable(path, problem)
        created = document.get("created")
        created = created if isinstance(created, str) else None
        if self.since is not None and (created is None or created[:10] < self.since):
            return Skipped(path, f"created {created or 'on an unknown date'}, before --since")
        try:
            key = verdict_key(document)
        except RecursionError:
            return Unreadable(path, f"nested deeper than {safejson.MAX_DEPTH} levels; not a ticket")
        verdict = self.memo.get(key)
        if verdict is None:
            try:
                verdict = self._verdict(document, path)
            except SavedReportError as exc:
                return Unreadable(path, str(exc).replace(f"{path}: ", "", 1))
            if len(self.memo) >= MEMO_LIMIT:
                self.memo.clear()
            self.memo[key] = verdict
        smoke = smoke_of(document)
        seconds = smoke.duration_s if smoke else None
        return verdict.for_ticket(
            path,
            created,
            tool_of(document).version or None,
            smoke.status if smoke else None,
            float(seconds) if seconds is not None else None,
        )

    def _verdict(self, document: dict[str, Any], path: str) -> Row:
        from ..report.build import build

        self.computed += 1
        if safejson.depth_exceeds(document):
            raise SavedReportError(f"nested deeper than {safejson.MAX_DEPTH} levels; not a ticket")
        target, facts = from_document(document, path)  # as check --from-report reads it
        return verdict_of(build(target, facts, self.matrix), document)


def _per_run(raw: bytes) -> tuple[str | None, float | None]:
    """``created`` and the smoke session's ``duration_s`` read from a ticket's
    text: the first ``"created"`` and the first ``"duration_s"`` after
    ``"smoke": {``. Trusted only for a text that, masked, equals one whose
    parsed values these were (``Rediagnoser.row`` checks)."""
    found = _CREATED.search(raw)
    created = found.group(1).decode("utf-8", "replace") if found else None
    seconds = None
    smoke = _SMOKE.search(raw)
    if smoke is not None:
        value = _SMOKE_SECONDS.search(raw, smoke.end())
        if value is not None and value.group(1) != b"null":
            try:
                seconds = float(value.group(1))
            except ValueError:
                seconds = None
    return created, seconds


def foreign(document: Any) -> str | None:
    """Why a parsed JSON document is not a ticket this qnndoctor can read, or None."""
    if not isinstance(document, dict):
        return f"JSON {type(document).__name__}, not a qnndoctor report"
    version = document.get("schema_version")
    if version is None or "facts" not in document:
        return "JSON, but not a qnndoctor report (no schema_version and facts)"
    if not isinstance(version, int) or isinstance(version, bool):
        return f"schema_version {version!r} is not a number"
    if version > REPORT_SCHEMA_VERSION:
        return (
            f"a schema_version {version} report, newer than this qnndoctor reads "
            f"({REPORT_SCHEMA_VERSION}): update qnndoctor"
        )
    if version < REPORT_SCHEMA_VERSION:
        return f"schema_version {version}: no qnndoctor wrote such a report"
    error = document.get("error")
    if not document.get("facts") and isinstance(error, dict):
        return f"the ticket of a run that could not check: {error.get('message')}"
    return None
