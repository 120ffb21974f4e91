"""The one place ``fix`` gets a report from: the same pipeline as ``check``.

Returns the report's JSON form (unredacted: it stays on this machine). When
the public pipeline API exists, this function is the only thing to repoint.
"""

from __future__ import annotations

from typing import Any


class CheckFailed(Exception):
    """The target could not be checked (missing interpreter, probe crash)."""


def run_check(
    python: str | None,
    *,
    smoke: bool = True,
    backend: str = "htp",
    timeout: float = 60.0,
    smoke_timeout: float = 60.0,
) -> dict[str, Any]:
    """Probe ``python`` (a path, an environment folder, ``auto`` or None for
    this interpreter), run the smoke session, diagnose; the report as JSON."""
    from .. import cli, matrixdata
    from ..collect import CouldNotCheck, run_probes
    from ..facts import ProbeFacts
    from ..report import build
    from ..smoke import not_run, run_smoke
    from ..target import TargetError, resolve

    if smoke and cli._OWNS_PROCESS:  # as `check` does: adopt the smoke session's orphans
        from ..containment import become_subreaper

        become_subreaper()
    try:
        target = resolve(python)
        facts = run_probes(target, timeout=timeout).facts
        if smoke:
            result = run_smoke(target, facts, backend=backend, timeout=smoke_timeout)
        else:
            result = not_run("skipped: planning only", backend)
    except (TargetError, CouldNotCheck, OSError, ValueError) as exc:
        raise CheckFailed(str(exc)) from exc
    facts = facts.with_probe(
        ProbeFacts(
            "smoke",
            "ok",
            values=result.to_json(),
            sources={"status": "qnndoctor smoke child (qnndoctor/smoke/child.py) in the target"},
        )
    )
    matrix = matrixdata.load_or_empty()
    document = build(target, facts, matrix).to_json()
    document["matrix"].update(releases=matrix.releases_source, notes=list(matrix.notes))
    return document
