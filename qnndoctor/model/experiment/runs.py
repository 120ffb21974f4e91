"""One experiment child in the target, contained like the placement run
(argv list, closed stdin, neutral working folder, hard timeout, whole-tree
kill, capped output), its end classified like the smoke session's."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...children.runner import Runner
from ...smoke.outcome import classify
from ...target.interpreter import Target
from ..placement import fallback_reasons

CHILD = Path(__file__).resolve().parent / "child.py"


@dataclass(frozen=True)
class ChildRun:
    """What one experiment child did: ``status`` passed, failed, crashed,
    timed_out or not_run; ``error`` the QNN / ORT error when not passed."""

    status: str
    error: str | None
    stage: str | None
    seconds: float
    child: dict[str, Any]
    reasons: dict[str, str]  # "Op:name" -> the QNN EP's reason for refusing it

    @property
    def passed(self) -> bool:
        return self.status == "passed"


def _error_text(status: str, reason: str | None, child: dict[str, Any]) -> str | None:
    if status == "passed":
        return None
    exc = child.get("exception")
    if isinstance(exc, dict) and exc.get("message"):
        return str(exc["message"]).strip()[:2000]
    return reason


def run_child(
    target: Target,
    mode: str,
    args: list[str],
    *,
    backend: str,
    timeout: float,
    runner: Runner,
    cwd: Path,
    qnn_options: Mapping[str, str] | None = None,
) -> ChildRun:
    """Run ``child.py MODE ARGS`` in the target, with ``qnn_options`` as further
    QNN provider options; never raises for what the child does."""
    env = dict(os.environ)
    for variable in ("PYTHONINSPECT", "PYTHONSTARTUP"):
        env.pop(variable, None)
    python = os.path.abspath(target.python) if os.sep in target.python else target.python  # noqa: PTH100
    argv = [python, "-B", str(CHILD), mode, json.dumps(dict(qnn_options or {})), *args]
    completed = runner.run(argv, timeout=timeout, env=env, cwd=str(cwd))
    result = classify(completed, backend, timeout)
    child = dict(result.child or {})
    return ChildRun(
        status=result.status,
        error=_error_text(result.status, result.reason, child),
        stage=child.get("stage") if isinstance(child.get("stage"), str) else None,
        seconds=round(completed.duration_s, 3),
        child=child,
        reasons=fallback_reasons(completed.stderr_text()),
    )
