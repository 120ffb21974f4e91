"""Tickets: the matrix identity in every report, what changed since a saved
report (``check --from-report``), and ``qnndoctor report -o FILE``."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from conftest import CliResult, validate_report

import qnndoctor

Cli = Callable[..., CliResult]


def _bundled(name: str) -> Path:
    return Path(str(resources.files("qnndoctor.matrix").joinpath(name)))


def _older_matrix(tmp_path: Path) -> Path:
    """The bundled releases.json as it looked before 2.7.0 was published."""
    data: dict[str, Any] = json.loads(_bundled("releases.json").read_text("utf-8"))
    data["releases"] = [r for r in data["releases"] if r["version"] != "2.7.0"]
    data["provenance"] = {**data["provenance"], "generated": "2026-10-01T00:00:00Z"}
    path = tmp_path / "old" / "releases.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _identity(*files: Path) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(f"{path.name} {hashlib.sha256(path.read_bytes()).hexdigest()}\n".encode())
    return digest.hexdigest()


def test_report_names_its_matrix_and_tool(cli: Cli) -> None:
    document = cli("check", "--no-smoke", "--json").json()
    assert document["tool"]["version"] == qnndoctor.__version__
    releases = json.loads(_bundled("releases.json").read_text("utf-8"))
    assert document["matrix"]["generated"] == releases["provenance"]["generated"]
    assert document["matrix"]["sha256"] == _identity(
        _bundled("releases.json"), _bundled("socs.json")
    )


def test_rediagnosis_says_what_changed(cli: Cli, healthy_venv: Path, tmp_path: Path) -> None:
    old = _older_matrix(tmp_path)
    dump = tmp_path / "ticket.json"
    then = cli("check", "--python", str(healthy_venv), "--matrix", str(old), "--json", "--no-smoke")
    dump.write_text(then.out, encoding="utf-8")
    assert then.json()["recommendation"]["version"] == "2.6.0"
    assert then.json()["matrix"]["generated"] == "2026-10-01T00:00:00Z"
    now = cli("check", "--from-report", str(dump), "--json").json()
    diff = now["changes_since_report"]
    assert diff["recommended"] == {"then": "2.6.0", "now": "2.7.0"}
    assert diff["matrix"]["same"] is False
    assert diff["matrix"]["then"]["generated"] == "2026-10-01T00:00:00Z"
    assert diff["matrix"]["now"]["sha256"] == now["matrix"]["sha256"]
    ids_then = {f["id"] for f in then.json()["findings"]}
    ids_now = {f["id"] for f in now["findings"]}
    assert {f["id"] for f in diff["appeared"]} == ids_now - ids_then
    assert {f["id"] for f in diff["vanished"]} == ids_then - ids_now
    # 2.7.0 installed, unknown to the old matrix: that finding is gone today.
    assert diff["vanished"], then.json()["findings"]
    text = cli("check", "--from-report", str(dump)).out
    assert "recommended then: 2.6.0, now: 2.7.0" in text
    assert "matrix then: generated 2026-10-01T00:00:00Z" in text
    assert any(f"gone: {f['title']}" in text for f in diff["vanished"])
    markdown = cli("check", "--from-report", str(dump), "--format", "markdown").out
    assert "- recommended then: 2.6.0, now: 2.7.0" in markdown
    same = cli("check", "--from-report", str(dump), "--matrix", str(old), "--json").json()
    assert same["changes_since_report"]["matrix"]["same"] is True
    assert same["changes_since_report"]["appeared"] == []
    assert same["changes_since_report"]["vanished"] == []


def test_report_command_writes_one_redacted_ticket(cli: Cli, tmp_path: Path) -> None:
    ticket = tmp_path / "ticket.json"
    made = cli("report", "-o", str(ticket), "--no-smoke")
    assert made.code == 1 and made.out == "" and "ticket written" in made.err
    document = json.loads(ticket.read_text("utf-8"))
    validate_report(document)
    assert document["redacted"] is True
    summary = document["summary_markdown"]
    assert summary.startswith("### qnndoctor") and "`no-onnxruntime-qnn`" in summary
    assert str(Path.home()) not in ticket.read_text("utf-8")
    again = cli("check", "--from-report", str(ticket), "--json")
    assert again.code == 1 and again.json()["changes_since_report"]["appeared"] == []
    to_stdout = cli("report", "-o", "-", "--no-smoke", "--no-redact")
    assert to_stdout.json()["redacted"] is False and "summary_markdown" in to_stdout.json()
    missing = cli("report", "-o", str(tmp_path / "t2.json"), "--python", str(tmp_path / "none"))
    assert missing.code == 3
    failed = json.loads((tmp_path / "t2.json").read_text("utf-8"))
    validate_report(failed)
    assert failed["summary_markdown"].startswith("qnndoctor could not check")


def test_schema_states_its_compatibility_rule() -> None:
    schema = json.loads(
        resources.files("qnndoctor").joinpath("schema/report.schema.json").read_text("utf-8")
    )
    assert "only add keys" in schema["description"]
    for key in ("changes_since_report", "summary_markdown"):
        assert key in schema["properties"]
    assert {"generated", "sha256"} <= schema["properties"]["matrix"]["properties"].keys()


# Parts of a ticket's facts that the re-diagnosis and the renderers read, each
# of a wrong JSON type (a hand-edited or damaged ticket): check --from-report
# renders every format, never a traceback. would_import as a list was an
# AttributeError in report/inventory.py.
WRONG_FACTS: dict[str, Callable[[dict[str, Any]], object]] = {
    "would_import": lambda f: f["installs"]["values"].update(would_import=[1, "x"]),
    "distributions": lambda f: f["installs"]["values"].update(distributions=[1, {"name": 2}]),
    "leftovers": lambda f: f["installs"]["values"].update(leftovers="x", shared_files=[None]),
    "sdk": lambda f: f["qnn_sdk"]["values"].update(roots=[1], qnn_on_path={"path": 1}),
    "adsp": lambda f: f["qnn_sdk"]["values"].update(adsp_library_path=[True]),
    "bundles": lambda f: f["qnn_bundled"]["values"].update(bundles=[{"folders": [5]}]),
}


def test_a_ticket_with_wrong_typed_facts_rediagnoses(cli: Cli, tmp_path: Path) -> None:
    ticket = cli("check", "--no-smoke", "--json").json()
    for name, corrupt in WRONG_FACTS.items():
        document = json.loads(json.dumps(ticket))
        corrupt(document["facts"])
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        now = cli("check", "--from-report", str(path), "--json")
        assert now.code in (0, 1), (name, now.err)
        validate_report(now.json())
        assert isinstance(now.json()["inventory"], list)
        for fmt in ("text", "markdown") if name == "would_import" else ():  # the renderers once
            shown = cli("check", "--from-report", str(path), "--format", fmt)
            assert shown.code == now.code, (name, fmt, shown.err)
            assert "Since the saved report" in shown.out, (name, fmt)
