"""rules/smoke.py (named apart from tests/smoke/test_smoke.py: test basenames
are unique): a session that failed with no known signature gets a fix that is
a command, run here as printed."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CliResult

from qnndoctor.facts.probed import Facts
from qnndoctor.matrixdata import load_or_empty
from qnndoctor.rules.registry import evaluate


def test_an_unknown_smoke_failure_asks_for_a_ticket_made_by_a_command_that_runs(
    cli: Callable[..., CliResult],
    healthy_venv: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    document = cli("check", "--python", str(healthy_venv), "--json", "--no-redact").json()
    facts = dict(document["facts"])
    facts["smoke"] = {"status": "ok", "values": dict(document["smoke"])}  # as a ticket holds it
    facts["smoke"]["values"].update(
        status="failed",
        reason="zorblax graph step rejected node quux_17 with internal code 77777",
        signatures=[],
        diagnosis=[],
    )
    found = {f.id: f for f in evaluate(Facts.from_json(facts), load_or_empty()).findings}
    failed = found["smoke-failed"]
    assert "No known failure signature matches" in failed.explanation
    assert failed.fix is not None
    [command] = failed.fix.commands
    argv = shlex.split(command)
    python = document["facts"]["interpreter"]["values"]["executable"]
    assert argv == ["qnndoctor", "report", "-o", "qnndoctor-ticket.json", "--python", python]
    monkeypatch.chdir(tmp_path)
    made = cli(*argv[1:], "--no-smoke")  # as printed (the session itself is not the point here)
    assert made.code in (0, 1), made.err
    ticket = json.loads((tmp_path / "qnndoctor-ticket.json").read_text("utf-8"))
    assert ticket["schema_version"] == 1 and ticket["redacted"] is True
