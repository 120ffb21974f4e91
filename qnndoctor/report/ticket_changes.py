"""Tickets: which matrix a report was made with, and what changed since a
saved report was made (``check --from-report``).

A support engineer re-diagnoses last month's dump with today's rules and
matrix; the interesting part is the difference: findings that appeared or
vanished, a different recommended version, a newer matrix or qnndoctor.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..matrixdata import Matrix
from .view import Changes, ReportView, view


def matrix_identity(matrix: Matrix) -> dict[str, Any]:
    """The matrix's generation date (from its provenance) and a SHA-256 over
    the data files it was read from (releases.json, socs.json): two reports
    with the same hash were judged by the same data."""
    from ..matrixdata.parsed_cache import files_sha256  # kept with the parsed matrix

    generated = matrix.releases.provenance.get("generated")
    return {
        "generated": str(generated) if generated else None,
        "sha256": files_sha256(matrix.files) if matrix.files else None,
    }


def _finding_ids(doc: ReportView) -> dict[str, str]:
    return {f.id: f.title for f in doc.findings if f.id}


def _recommended(doc: ReportView) -> str | None:
    return doc.recommendation.version if doc.recommendation else None


def changes(then: Mapping[str, Any], now: Mapping[str, Any]) -> dict[str, Any]:
    """What differs between a saved report (``then``) and its re-diagnosis
    (``now``). Missing keys in an old report read as unknown (None)."""
    old, new = view(then), view(now)
    before, after = _finding_ids(old), _finding_ids(new)
    same_matrix = old.matrix.sha256 is not None and old.matrix.sha256 == new.matrix.sha256
    return {
        "report_created": old.created,
        "appeared": [{"id": i, "title": t} for i, t in after.items() if i not in before],
        "vanished": [{"id": i, "title": t} for i, t in before.items() if i not in after],
        "recommended": {"then": _recommended(old), "now": _recommended(new)},
        "matrix": {
            "then": {"generated": old.matrix.generated, "sha256": old.matrix.sha256},
            "now": {"generated": new.matrix.generated, "sha256": new.matrix.sha256},
            "same": same_matrix,
        },
        "qnndoctor": {"then": old.tool.version, "now": new.tool.version},
    }


def change_lines(diff: Changes | None) -> list[str]:
    """The ``changes_since_report`` section (of the report's view) as lines for
    the text and Markdown renderers."""
    if diff is None:
        return []
    lines = [f"new finding: {item.title} ({item.id})" for item in diff.appeared]
    lines += [f"gone: {item.title} ({item.id})" for item in diff.vanished]
    if not diff.appeared and not diff.vanished:
        lines.append("the same findings as in the saved report")
    rec = diff.recommended
    if rec.then != rec.now:
        lines.append(f"recommended then: {rec.then}, now: {rec.now}")
    else:
        lines.append(f"recommended version unchanged: {rec.now}")
    then, now = diff.matrix.then, diff.matrix.now
    if diff.matrix.same:
        lines.append(f"the same matrix (generated {now.generated})")
    else:
        lines.append(
            f"matrix then: generated {then.generated or 'unknown'} "
            f"(sha256 {str(then.sha256 or 'unknown')[:12]}), now: generated "
            f"{now.generated or 'unknown'} (sha256 {str(now.sha256)[:12]})"
        )
    tool = diff.qnndoctor
    if tool.then != tool.now:
        lines.append(f"qnndoctor then: {tool.then}, now: {tool.now}")
    return lines
