"""The one place ``fix`` gets a report from: ``check``'s own pipeline
(``qnndoctor.pipeline``). Returns the report's JSON form, unredacted: it stays
on this machine."""

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
    owns_process: bool = False,
) -> dict[str, Any]:
    """Probe ``python`` (a path, an environment folder, ``auto`` or None for
    this interpreter), run the smoke session, diagnose: `check`'s own pipeline.
    ``owns_process``: qnndoctor is the console command (it may adopt the smoke
    session's orphans, as `check` does)."""
    from ..pipeline import CheckOptions
    from ..pipeline import run_check as pipeline_check

    outcome = pipeline_check(
        CheckOptions(
            python=python,
            smoke=smoke,
            backend=backend,
            timeout=timeout,
            smoke_timeout=smoke_timeout,
            redact=False,
            owns_process=owns_process,
        )
    )
    if outcome.error is not None or outcome.report is None:
        message = outcome.error.message if outcome.error is not None else "no report"
        raise CheckFailed(message)
    return outcome.document
