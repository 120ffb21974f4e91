"""``explain``'s JSON document: the diagnosis of a text, what its exit code
means and, when nothing matched, the lines that read like the failure. Pure
given its inputs; ``qnndoctor explain`` renders it and the Python API returns
it (``qnndoctor.explain``), neither computes it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import EXPLAIN_SCHEMA_VERSION, __version__
from . import diagnose
from . import load as load_catalogue
from .compact import Compacted
from .logfile import LogRead

if TYPE_CHECKING:
    from ..matrixdata import Soc
    from .facts import DiagnosisFacts


def explain(
    text: str | LogRead,
    exit_code: int | None,
    facts: DiagnosisFacts | None,
    *,
    socs: tuple[Soc, ...] = (),
    text_facts: bool = True,
) -> dict[str, Any]:
    """The JSON document of ``explain --json``; pure given its inputs (a text,
    or a log as ``read_log`` read it)."""
    log = text if isinstance(text, LogRead) else None
    given: str | Compacted = text.read if isinstance(text, LogRead) else text
    diagnosis = diagnose(
        given,
        exit_code=exit_code,
        facts=facts,
        socs=socs if text_facts else (),
        text_facts=text_facts,
    )
    document = {
        "schema_version": EXPLAIN_SCHEMA_VERSION,
        "tool": {"name": "qnndoctor", "version": __version__},
        "input": _input(given, log, diagnosis.read, exit_code),
        **diagnosis.to_json(),
    }
    # Nothing matched: the lines that read like the failure, to search for or report.
    lines = () if diagnosis.candidates else diagnosis.failure_lines()
    document["failure_lines"] = [{"line": number, "text": line} for number, line in lines]
    document["exit_status"] = _exit_status(exit_code, {c["id"] for c in document["candidates"]})
    return document


def _input(
    given: str | Compacted, log: LogRead | None, read: Compacted | None, exit_code: int | None
) -> dict[str, Any]:
    """What was read: its size, its lines, how many of them were distinct
    enough to read (a long log's repeated lines are read once), and the cap."""
    shown: dict[str, Any] = {
        "characters": log.characters if log is not None else len(_text_of(given)),
        "exit_code": exit_code,
    }
    if log is not None:
        shown["bytes"] = log.bytes_read
        shown["truncated"] = log.truncated
    if read is not None:
        shown["lines"] = read.lines
        shown["lines_read"] = read.kept if read.compacted else read.lines
    return shown


def _exit_status(code: int | None, raised: set[str]) -> dict[str, Any] | None:
    """What an exit code means, and the catalogued causes that end a process
    with it but need facts from that machine (an exit code alone never raises
    a candidate: it only says what kind of death it was)."""
    if code is None:
        return None
    from ..smoke.outcome import exit_code_name
    from .catalogue import normalize_exit_code

    normalized = normalize_exit_code(code)
    return {
        "code": code,
        "name": exit_code_name(code),
        "known_causes_needing_facts": [
            {"id": s.id, "title": s.title}
            for s in load_catalogue().signatures
            if normalized in s.exit_codes and s.id not in raised
        ],
    }


def _text_of(given: str | Compacted) -> str:
    return given if isinstance(given, str) else given.text
