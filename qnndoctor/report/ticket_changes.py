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


def _finding_ids(document: Mapping[str, Any]) -> dict[str, str]:
    found = document.get("findings")
    if not isinstance(found, list):
        return {}
    return {
        str(f.get("id")): str(f.get("title"))
        for f in found
        if isinstance(f, Mapping) and f.get("id") is not None
    }


def _section(document: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = document.get(key)
    return value if isinstance(value, Mapping) else {}


def changes(then: Mapping[str, Any], now: Mapping[str, Any]) -> dict[str, Any]:
    """What differs between a saved report (``then``) and its re-diagnosis
    (``now``). Missing keys in an old report read as unknown (None)."""
    before, after = _finding_ids(then), _finding_ids(now)
    matrix_then, matrix_now = _section(then, "matrix"), _section(now, "matrix")
    recommended_then = _section(then, "recommendation").get("version")
    recommended_now = _section(now, "recommendation").get("version")
    tool_then = _section(then, "tool").get("version")
    tool_now = _section(now, "tool").get("version")
    same_matrix = matrix_then.get("sha256") is not None and matrix_then.get(
        "sha256"
    ) == matrix_now.get("sha256")
    return {
        "report_created": then.get("created"),
        "appeared": [{"id": i, "title": t} for i, t in after.items() if i not in before],
        "vanished": [{"id": i, "title": t} for i, t in before.items() if i not in after],
        "recommended": {"then": recommended_then, "now": recommended_now},
        "matrix": {
            "then": {k: matrix_then.get(k) for k in ("generated", "sha256")},
            "now": {k: matrix_now.get(k) for k in ("generated", "sha256")},
            "same": same_matrix,
        },
        "qnndoctor": {"then": tool_then, "now": tool_now},
    }


def change_lines(document: Mapping[str, Any]) -> list[str]:
    """The ``changes_since_report`` section as lines for the text and Markdown renderers."""
    diff = document.get("changes_since_report")
    if not isinstance(diff, Mapping):
        return []
    lines = []
    for item in diff.get("appeared") or ():
        lines.append(f"new finding: {item['title']} ({item['id']})")
    for item in diff.get("vanished") or ():
        lines.append(f"gone: {item['title']} ({item['id']})")
    if not diff.get("appeared") and not diff.get("vanished"):
        lines.append("the same findings as in the saved report")
    rec = diff.get("recommended") or {}
    if rec.get("then") != rec.get("now"):
        lines.append(f"recommended then: {rec.get('then')}, now: {rec.get('now')}")
    else:
        lines.append(f"recommended version unchanged: {rec.get('now')}")
    matrix = diff.get("matrix") or {}
    then, now = matrix.get("then") or {}, matrix.get("now") or {}
    if matrix.get("same"):
        lines.append(f"the same matrix (generated {now.get('generated')})")
    else:
        lines.append(
            f"matrix then: generated {then.get('generated') or 'unknown'} "
            f"(sha256 {str(then.get('sha256') or 'unknown')[:12]}), now: generated "
            f"{now.get('generated') or 'unknown'} (sha256 {str(now.get('sha256'))[:12]})"
        )
    tool = diff.get("qnndoctor") or {}
    if tool.get("then") != tool.get("now"):
        lines.append(f"qnndoctor then: {tool.get('then')}, now: {tool.get('now')}")
    return lines
