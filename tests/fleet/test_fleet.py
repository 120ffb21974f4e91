"""``qnndoctor fleet``: real tickets from ``report -o`` of real venvs (healthy
2.7.0 + onnxruntime 1.31.1 on the HTP simulator; 2.3.0 floated onto 1.31.1,
whose smoke session really fails), then 10,000+ tickets generated from them
(tests/helpers/fleet_tickets.py: platform, SoC, Python, emulation, NPU driver
and OS build edited as test_rediagnosis_grid.py does), spread over a folder,
a zip, a tar.gz and a JSON-lines file, with corrupt files among them, read
by the worker pool."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult, runtime_venv
from helpers import fleet_tickets

Cli = Callable[..., CliResult]
FLEET_SCHEMA = json.loads(
    resources.files("qnndoctor").joinpath("schema/fleet.schema.json").read_text("utf-8")
)
GENERATED = 10_000


def _validate(document: dict[str, Any]) -> None:
    import jsonschema

    jsonschema.validate(document, FLEET_SCHEMA)


def _report(python: Path, out: Path, *flags: str) -> dict[str, Any]:
    from qnndoctor.cli.main import main

    with contextlib.redirect_stderr(io.StringIO()):
        main(["report", "--python", str(python), "-o", str(out), *flags])
    document: dict[str, Any] = json.loads(out.read_text("utf-8"))
    return document


@pytest.fixture(scope="module")
def real(
    tmp_path_factory: pytest.TempPathFactory, healthy_venv: Path, real_wheels: dict[str, Path]
) -> dict[str, Path]:
    """Real tickets: `report -o` of the healthy venv and of a broken one."""
    folder = tmp_path_factory.mktemp("real-tickets")
    broken = runtime_venv(folder / "broken-venv", real_wheels, "1.31.1", "2.3.0")
    tickets = {"healthy": folder / "healthy.json", "broken": folder / "broken.json"}
    _report(healthy_venv, tickets["healthy"])
    _report(broken, tickets["broken"])
    return tickets


@pytest.fixture(scope="module")
def generated(real: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """10,000 generated tickets: 6,000 files in folders, 2,000 in a zip,
    1,200 in a tar.gz, 800 in a JSON-lines file; plus corrupt inputs."""
    root = tmp_path_factory.mktemp("fleet")
    docs = {name: json.loads(path.read_text("utf-8")) for name, path in real.items()}
    made = list(fleet_tickets.tickets(docs, GENERATED))
    folder = root / "tickets"
    for index, (name, data) in enumerate(made[:6000]):
        sub = folder / f"site-{index % 7}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / name).write_bytes(data)
    with zipfile.ZipFile(root / "batch.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        for name, data in made[6000:8000]:
            z.writestr(f"batch/{name}", data)
        z.writestr("batch/nested.zip", b"PK\x05\x06" + bytes(18))
    with tarfile.open(root / "batch.tar.gz", "w:gz", compresslevel=1) as t:
        for name, data in made[8000:9200]:
            info = tarfile.TarInfo(f"more/{name}")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    with open(root / "stream.jsonl", "wb") as handle:
        for _name, data in made[9200:]:
            handle.write(data + b"\n")
        handle.write(b'{"cut": \n')  # a bad line among good ones
    bad = folder / "bad"
    bad.mkdir()
    healthy = real["healthy"].read_bytes()
    (bad / "truncated.json").write_bytes(healthy[: len(healthy) // 2])
    (bad / "binary.json").write_bytes(bytes(range(256)) * 4)
    (bad / "foreign.json").write_text('{"name": "some other tool", "items": [1, 2]}')
    newer = json.loads(healthy)
    newer["schema_version"] = 99
    (bad / "newer.json").write_text(json.dumps(newer))
    with open(bad / "oversized.json", "wb") as handle:  # sparse: fast to make
        handle.truncate(65 * 1024 * 1024)
    (bad / "notes.txt").write_text("not a ticket: ignored in a folder")
    labels = [name.rsplit("-", 1)[0] for name, _ in made]
    return {"root": root, "labels": labels, "docs": docs}


def test_real_tickets(cli: Cli, real: dict[str, Path], tmp_path: Path) -> None:
    html, table = tmp_path / "fleet.html", tmp_path / "rows.csv"
    result = cli(
        "fleet",
        str(real["healthy"]),
        str(real["broken"]),
        "--json",
        "--jobs",
        "1",
        "--html",
        str(html),
        "--csv",
        str(table),
    )
    assert result.code == 1, result.err  # one machine is not ready
    summary = json.loads(result.out)
    _validate(summary)
    assert summary["tickets"]["readable"] == 2 and summary["machines"]["count"] == 2
    assert summary["machines"]["ready"] == 1
    [group] = summary["groups"]
    ids = {b["id"] for b in group["blocking"]}
    assert {"plugin-companion-known-broken", "smoke-failed"} <= ids
    assert group["samples"] == [str(real["broken"])]
    assert any("onnxruntime-qnn==2.7.0" in c for f in group["fix"] for c in f["commands"])
    cells = {(r["onnxruntime_qnn"], r["onnxruntime"]): r for r in summary["compat"]}
    assert cells[("2.7.0", "1.31.1")]["passed"] == 1
    broken = cells[("2.3.0", "1.31.1")]
    assert (
        broken["failed"] == 1 and broken["causes"][0]["id"] == "plugin-ort-version-supported-zero"
    )
    with open(table, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["onnxruntime_qnn"]: r["ready"] for r in rows} == {"2.7.0": "True", "2.3.0": "False"}
    page = html.read_text("utf-8")
    assert "<svg" in page and "<script" not in page and "@media print" in page
    assert "http://" not in page and "https://" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )
    text = cli("fleet", str(real["healthy"]), str(real["broken"]), "--jobs", "1")
    assert "2 tickets from 2 machines" in text.out
    assert "ready: 1 of 2 machines (50%)" in text.out
    assert "plugin-companion-known-broken" in text.out and text.err == ""


def test_generated_fleet(cli: Cli, generated: dict[str, Any], tmp_path: Path) -> None:
    root: Path = generated["root"]
    html = tmp_path / "fleet.html"
    result = cli(
        "fleet",
        str(root / "tickets"),
        str(root / "batch.zip"),
        str(root / "batch.tar.gz"),
        str(root / "stream.jsonl"),
        "--json",
        "--jobs",
        "2",
        "--html",
        str(html),
    )
    summary = json.loads(result.out)
    _validate(summary)
    assert summary["tickets"]["readable"] == GENERATED
    reasons = {u["path"].rsplit("/", 1)[-1]: u["reason"] for u in summary["unreadable"]}
    assert "truncated" in reasons["truncated.json"]
    assert "not UTF-8" in reasons["binary.json"] or "not valid JSON" in reasons["binary.json"]
    assert "not a qnndoctor report" in reasons["foreign.json"]
    assert "newer than this qnndoctor reads" in reasons["newer.json"]
    assert "larger than" in reasons["oversized.json"]
    assert "archive inside an archive" in reasons["nested.zip"]
    assert any(p.endswith("stream.jsonl:801") for p in reasons) or any(
        u["path"].endswith("stream.jsonl:801") for u in summary["unreadable"]
    )
    assert summary["tickets"]["unreadable"] == 7
    # Machines: one per (ticket it was made from, platform, Python) in the generated set.
    labels = set(generated["labels"])
    expected = {(label.split("-py")[0], label.split("-py")[1][:4]) for label in labels}
    assert summary["machines"]["count"] == len(expected)
    ready = {m for m in expected if m[0].startswith("healthy") and "emulated" not in m[0]}
    assert summary["machines"]["ready"] == len(ready)
    sizes = [g["machines"] for g in summary["groups"]]
    assert sizes == sorted(sizes, reverse=True)
    assert sum(sizes) == summary["machines"]["not_ready"]
    emulated = [g for g in summary["groups"] if g["key"] == "emulated-interpreter"]
    assert emulated and emulated[0]["commands_vary"]  # each Python version its own command
    arches = {d["value"] for d in summary["distributions"]["python_arch"]}
    assert "x86_64 (emulated on arm64)" in arches
    socs = {d["value"] for d in summary["distributions"]["soc"]}
    assert {"SC8380XP", "X1P64100", "SM8650", "HTP simulator"} <= socs
    sessions = sum(r["passed"] + r["failed"] for r in summary["compat"])
    assert sessions == GENERATED
    failing = [r for r in summary["compat"] if r["onnxruntime_qnn"] == "2.3.0"]
    assert failing and all(r["passed"] == 0 for r in failing)
    # Setups are re-diagnosed once per worker, not once per ticket.
    assert summary["tickets"]["distinct_setups"] <= 2 * len(fleet_tickets.setups(generated["docs"]))
    assert "<svg" in html.read_text("utf-8")


def test_redacted_outputs(cli: Cli, real: dict[str, Path], tmp_path: Path) -> None:
    """A ticket made with --no-redact on a machine of user 'zedkowalski',
    kept in that user's home: no output names the user."""
    doc = json.loads(real["broken"].read_text("utf-8"))
    text = json.dumps(doc).replace(
        str(Path(doc["target"]["python"]).parent.parent), "/home/zedkowalski/apps/venv"
    )
    doc = json.loads(text)
    doc["redacted"] = False
    folder = tmp_path / "home" / "zedkowalski" / "tickets"
    folder.mkdir(parents=True)
    (folder / "t.json").write_text(json.dumps(doc))
    assert "zedkowalski" in (folder / "t.json").read_text("utf-8")
    out = tmp_path / "out"
    out.mkdir()
    result = cli(
        "fleet",
        str(folder),
        "--json",
        "--jobs",
        "1",
        "--csv",
        str(out / "a.csv"),
        "--html",
        str(out / "a.html"),
        "--compat",
        str(out / "c.json"),
    )
    assert "zedkowalski" not in result.out and "zedkowalski" not in result.err
    assert any(
        "apps/venv/bin/python" in c
        for g in json.loads(result.out)["groups"]
        for f in g["fix"]
        for c in f["commands"]
    )
    assert "zedkowalski" not in cli("fleet", str(folder), "--jobs", "1").out
    for written in out.iterdir():
        assert "zedkowalski" not in written.read_text("utf-8"), written.name


def test_older_ticket_and_since(cli: Cli, real: dict[str, Path], tmp_path: Path) -> None:
    """A schema 1 ticket from before later sections were added (no tool,
    matrix, inventory, recommendation, findings, summary) reads the same;
    --since leaves out tickets made before the date."""
    doc = json.loads(real["broken"].read_text("utf-8"))
    for key in (
        "tool",
        "matrix",
        "inventory",
        "recommendation",
        "findings",
        "summary_markdown",
        "skipped_checks",
    ):
        doc.pop(key)
    for key in ("signatures", "diagnosis", "qnn_error_codes"):
        doc["smoke"].pop(key, None)
    doc["created"] = "2026-01-05T08:00:00+00:00"
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    both = json.loads(cli("fleet", str(old), str(real["broken"]), "--json", "--jobs", "1").out)
    assert both["tickets"]["readable"] == 2 and both["tickets"]["unreadable"] == 0
    assert both["machines"]["count"] == 1  # the same machine, twice
    [group] = both["groups"]
    assert group["samples"] == [str(real["broken"])]  # its latest ticket counts
    alone = json.loads(cli("fleet", str(old), "--json", "--jobs", "1").out)
    assert alone["groups"][0]["key"] == group["key"]
    since = cli(
        "fleet", str(old), str(real["broken"]), "--json", "--jobs", "1", "--since", "2026-02-01"
    )
    summary = json.loads(since.out)
    assert summary["tickets"]["readable"] == 1 and summary["tickets"]["skipped_by_since"] == 1
    assert cli("fleet", str(old), "--since", "1/2/2026").code == 2
    unwritable = cli("fleet", str(old), "--csv", str(tmp_path / "no" / "rows.csv"))
    assert unwritable.code == 2 and unwritable.out == ""
    assert f"cannot write {tmp_path / 'no' / 'rows.csv'}" in unwritable.err
    none_since = cli("fleet", str(old), "--since", "2030-01-01", "--jobs", "1")
    assert none_since.code == 2 and none_since.out == ""
    assert "no ticket created on or after --since 2030-01-01" in none_since.err


def test_bad_archives_and_lines(cli: Cli, real: dict[str, Path], tmp_path: Path) -> None:
    good = real["healthy"].read_bytes()
    (tmp_path / "cut.tar.gz").write_bytes(b"\x1f\x8b\x08\x00" + bytes(40))
    (tmp_path / "fake.zip").write_bytes(b"PK\x03\x04 damaged")
    with zipfile.ZipFile(tmp_path / "ok.zip", "w") as z:
        z.writestr("a.json", good)
        z.writestr("readme.md", "ignored")
    deep = json.loads(good)
    deep["facts"]["installs"]["values"]["nested"] = json.loads("[" * 200 + "]" * 200)
    (tmp_path / "deep.json").write_text(json.dumps(deep))
    (tmp_path / "lines.jsonl").write_bytes(
        json.dumps(json.loads(good)).encode() + b"\n\n[1, 2]\n" + b"{" * 100 + b"\n"
    )
    result = cli("fleet", str(tmp_path), "--json", "--jobs", "1")
    summary = json.loads(result.out)
    assert summary["tickets"]["readable"] == 2
    by_path = {u["path"].rsplit("/", 1)[-1]: u["reason"] for u in summary["unreadable"]}
    assert "tar archive" in by_path["cut.tar.gz"]
    assert "zip" in by_path["fake.zip"]
    assert "not a qnndoctor report" in by_path["lines.jsonl:3"]
    assert "not valid JSON" in by_path["lines.jsonl:4"]
    assert "nested deeper than 64 levels" in by_path["deep.json"]
    nothing = cli("fleet", str(tmp_path / "missing"))
    assert nothing.code == 2 and "no readable ticket" in nothing.err


def test_csv_cells_never_run_as_formulas(cli: Cli, real: dict[str, Path], tmp_path: Path) -> None:
    """A ticket comes from whoever sent it: a string that a spreadsheet would run
    as a formula reaches --csv as text (leading apostrophe); numbers stay numbers."""
    document = json.loads(real["healthy"].read_text("utf-8"))
    document["tool"]["version"] = '=HYPERLINK("http://example.invalid/x","open")'
    crafted = tmp_path / "crafted.json"
    crafted.write_text(json.dumps(document), "utf-8")
    table = tmp_path / "rows.csv"
    result = cli("fleet", str(crafted), "--csv", str(table), "--jobs", "1")
    assert result.code in (0, 1), result.err
    with open(table, encoding="utf-8", newline="") as handle:
        [row] = list(csv.DictReader(handle))
    assert row["tool_version"] == "'" + document["tool"]["version"]
    assert row["onnxruntime_qnn"] == "2.7.0" and float(row["smoke_seconds"]) > 0


def test_parquet(cli: Cli, real: dict[str, Path], tmp_path: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    target = tmp_path / "rows.parquet"
    result = cli(
        "fleet", str(real["healthy"]), str(real["broken"]), "--parquet", str(target), "--jobs", "1"
    )
    assert result.code == 1, result.err
    rows = duckdb.sql(
        f"select onnxruntime_qnn, ready, smoke_seconds from '{target}' order by 1"
    ).fetchall()
    assert [(r[0], r[1]) for r in rows] == [("2.3.0", False), ("2.7.0", True)]
    assert all(isinstance(r[2], float) for r in rows)
    assert not list(tmp_path.glob(".*rows.csv"))  # the staging file is gone


def test_parquet_without_duckdb(real: dict[str, Path], tmp_path: Path) -> None:
    """Without the [fleet] extra: --parquet says how to add it to this
    installation; the other outputs still work."""
    program = (
        "import sys; sys.modules['duckdb'] = None\n"
        "from qnndoctor.cli.main import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", program, "fleet", str(real["healthy"]), "--jobs", "1", *args],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )

    refused = run("--parquet", str(tmp_path / "x.parquet"))
    assert refused.returncode == 2 and refused.stdout == ""
    assert f"{sys.executable} -m pip install duckdb" in refused.stderr
    done = run("--json", "--csv", str(tmp_path / "a.csv"), "--html", str(tmp_path / "a.html"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["machines"]["ready"] == 1
    assert (tmp_path / "a.csv").exists() and (tmp_path / "a.html").exists()


def test_compat_as_evidence(
    cli: Cli,
    real: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    healthy_venv: Path,
) -> None:
    from qnndoctor.evidence.fleet import EvidenceStore

    monkeypatch.setenv("QNNDOCTOR_EVIDENCE_DIR", str(tmp_path / "evidence"))
    table = tmp_path / "compat.json"
    cli("fleet", str(real["healthy"]), str(real["broken"]), "--compat", str(table), "--jobs", "1")
    exported = json.loads(table.read_text("utf-8"))
    assert exported["format"] == "qnndoctor-compat/1" and exported["sessions"] == 2
    assert str(real["healthy"]) not in table.read_text("utf-8")  # counts, no paths
    for _ in range(2):  # importing twice counts once
        imported = cli("fleet", "--import-compat", str(table))
        assert imported.code == 0 and "2 smoke sessions" in imported.err
    store = EvidenceStore()
    assert store.lookup(onnxruntime_qnn="2.7.0").passed == 1
    failed = store.lookup(onnxruntime_qnn="2.3.0", onnxruntime="1.31.1")
    assert failed.failed == 1 and "plugin-ort-version-supported-zero" in failed.causes
    shown = cli("recommend", "--python", str(healthy_venv))
    assert (
        "local evidence: onnxruntime-qnn 2.7.0 on any SoC, any NPU driver: 1 passed, 0 failed"
        in shown.out
    )
    as_json = json.loads(cli("recommend", "--python", str(healthy_venv), "--json").out)
    assert as_json["recommendation"]["fleet_evidence"]["any_npu_driver"]["passed"] == 1
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "qnndoctor-compat/1", "rows": [{"passed": -1, "failed": 0}]}')
    refused = cli("fleet", "--import-compat", str(bad))
    assert refused.code == 2 and "not a count" in refused.err


def test_evidence_store(tmp_path: Path) -> None:
    from qnndoctor.evidence.fleet import EvidenceError, EvidenceStore, PairFacts

    store = EvidenceStore(tmp_path)
    pair = PairFacts(
        soc="SC8380XP",
        htp_arch=73,
        npu_driver="30.0.140.1000",
        onnxruntime_qnn="2.7.0",
        onnxruntime="1.31.1",
    )
    store.record(pair, "passed", "bisect", "2026-11-28", count=3)
    store.record(pair, "failed", "bisect", "2026-11-28", cause="qnn-graph-finalize-failed")
    with open(store.path, "a", encoding="utf-8") as handle:
        handle.write('{"v": 1, "outcome": "passed", "facts": {"soc"')  # a line cut by a crash
        handle.write('\n{"v": 2, "outcome": "passed", "facts": {}}\n')  # a newer store's line
    tally = store.lookup(htp_arch=73, onnxruntime_qnn="2.7.0")
    assert (tally.passed, tally.failed) == (3, 1)
    assert tally.causes == {"qnn-graph-finalize-failed": 1} and tally.sources == ("bisect",)
    assert store.lookup(npu_driver="30.0.145.0").passed == 0
    with pytest.raises(EvidenceError):
        store.lookup(chip="x")
    with pytest.raises(EvidenceError):
        store.record(pair, "maybe", "bisect", "2026-11-28")
    assert store.path.stat().st_size > 0


def test_unparsed_rows_equal_parsed_rows(real: dict[str, Path]) -> None:
    """A ticket whose masked text was seen before is not parsed: its row
    (created and smoke time read from its text) equals the parsed one's;
    --since applies to it too."""
    from qnndoctor.fleet.rediagnose import Rediagnoser
    from qnndoctor.fleet.rows import Row
    from qnndoctor.pipeline import load_matrix

    docs = {name: json.loads(path.read_text("utf-8")) for name, path in real.items()}
    made = list(fleet_tickets.tickets(docs, 300, seed=7, indent=2))
    matrix = load_matrix(None)
    fast, full = Rediagnoser(matrix), Rediagnoser(matrix)
    rows = [fast.row(data, name) for name, data in made]
    full.memo = fast.memo  # the same verdicts: what differs is parsing or not
    parsed = [full._parsed_row(data, name) for name, data in made]
    assert len(fast.same_text) < len(made) // 4  # most were not parsed
    assert rows == parsed
    assert all(isinstance(r, Row) for r in parsed)
    parsed_rows = [r for r in parsed if isinstance(r, Row)]
    assert len({r.created for r in parsed_rows}) > 50  # their own times, not the first ticket's
    since = Rediagnoser(matrix, since="2026-10-15")
    since.memo = fast.memo
    kept = [since.row(data, name) for name, data in made]
    expected = [r for r in parsed_rows if str(r.created) >= "2026-10-15"]
    assert [r for r in kept if isinstance(r, Row)] == expected
    assert len(expected) < len(kept)


def test_wrong_typed_facts_give_a_row_not_a_traceback(
    cli: Cli, real: dict[str, Path], tmp_path: Path
) -> None:
    """Damaged or hand-edited tickets whose facts hold values of the wrong
    JSON type are read and re-diagnosed like any other (an interpreter probe
    whose values are a list was an AttributeError that ended the whole run)."""
    good = json.loads(real["healthy"].read_bytes())
    corruptions: dict[str, Callable[[dict[str, Any]], object]] = {
        "values-list": lambda f: f["interpreter"].update(values=[1]),
        "markers": lambda f: f["interpreter"]["values"].update(marker_environment=[1]),
        "version-info": lambda f: f["interpreter"]["values"].update(version_info=3),
        "devices": lambda f: f["soc"]["values"].update(npu_devices={"a": 1}),
        "dists": lambda f: f["installs"]["values"].update(distributions=[1, {"version": 2}]),
        "would-import": lambda f: f["installs"]["values"].update(would_import=[1]),
        "soc-values": lambda f: f["soc"].update(values="x"),
    }
    for name, corrupt in corruptions.items():
        document = json.loads(json.dumps(good))
        corrupt(document["facts"])
        (tmp_path / f"{name}.json").write_text(json.dumps(document), encoding="utf-8")
    result = cli("fleet", str(tmp_path), "--json", "--jobs", "1")
    summary = json.loads(result.out)
    _validate(summary)
    assert result.code in (0, 1), result.err
    assert summary["tickets"]["readable"] == len(corruptions), summary["unreadable"]
