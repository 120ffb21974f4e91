"""The failure-signature catalogue: schema, every entry against its real
symptom texts, ranking with facts, and `qnndoctor explain`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import CliResult

from qnndoctor import signatures
from qnndoctor.facts import Facts

Cli = Callable[..., CliResult]
CATALOGUE: dict[str, Any] = json.loads(
    resources.files("qnndoctor.matrix").joinpath("signatures.json").read_text("utf-8")
)
ENTRIES = CATALOGUE["signatures"]


def test_catalogue_matches_its_schema() -> None:
    schema = json.loads(
        resources.files("qnndoctor.matrix").joinpath("signatures.schema.json").read_text("utf-8")
    )
    jsonschema.validate(CATALOGUE, schema)
    ids = [e["id"] for e in ENTRIES]
    assert len(ids) == len(set(ids))
    assert len(signatures.load()) == len(ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_every_entry_matches_its_real_symptoms(entry: dict[str, Any]) -> None:
    codes = entry["patterns"].get("exit_codes") or [None]
    for example in entry["symptom_examples"]:
        found = signatures.match(example, exit_code=codes[0])
        assert entry["id"] in [m.signature.id for m in found], example


def _facts(emulated: bool, platform: str = "win32") -> Facts:
    return Facts.from_json(
        {
            "emulation": {"status": "ok", "values": {"emulated": emulated}, "sources": {}},
            "interpreter": {"status": "ok", "values": {"sys_platform": platform}, "sources": {}},
        }
    )


def test_facts_pick_between_look_alike_causes() -> None:
    """Exit 127 on Windows on ARM: emulation, or a bundled QNN newer than the driver."""
    emulated = signatures.match("", exit_code=127, facts=_facts(emulated=True))
    native = signatures.match("", exit_code=127, facts=_facts(emulated=False))
    unknown = signatures.match("", exit_code=127)
    assert emulated[0].signature.id == "x64-emulation-htp-process-exit-127"
    assert "bundled-qnn-newer-than-npu-driver-exit-127" not in [m.signature.id for m in emulated]
    assert native[0].signature.id == "bundled-qnn-newer-than-npu-driver-exit-127"
    assert {m.signature.id for m in unknown} >= {
        "x64-emulation-htp-process-exit-127",
        "bundled-qnn-newer-than-npu-driver-exit-127",
    }


def test_nothing_matches_plain_text() -> None:
    assert signatures.match("everything is fine, the model ran") == []


def test_explain_cli_text_and_json(cli: Cli, tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text(
        "2024-04-04 [E:onnxruntime:, qnn_execution_provider.cc:499 GetCapability] "
        "QNN SetupBackend failed qnn_backend_manager.cc:56 GetQnnInterfaceProvider "
        "Unable to load backend, error: load library failed\n"
    )
    text = cli("explain", "--log", str(log), "--no-facts")
    assert text.code == 0
    assert "candidate cause(s)" in text.out
    data = cli("explain", "--log", str(log), "--no-facts", "--json").json()
    assert data["facts"] == "none (--no-facts)"
    assert data["candidates"] and all(c["cause"] and c["fix"] for c in data["candidates"])
    assert data["candidates"][0]["score"] >= data["candidates"][-1]["score"]


def test_explain_with_exit_code_only_and_live_facts(cli: Cli, tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    data = cli("explain", "--log", str(empty), "--exit-code", "0xC0000005", "--json").json()
    assert data["input"]["exit_code"] == 0xC0000005
    assert data["facts"].startswith("probed ")
    ids = [c["id"] for c in data["candidates"]]
    assert "win-access-violation-msvcp140-outdated" in ids


def test_explain_reads_stdin_and_reports_no_match(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "qnndoctor", "explain", "--log", "-", "--no-facts"],
        input=b"all good here\n",
        capture_output=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert b"No known failure signature" in done.stdout


def test_explain_missing_file_and_bad_exit_code(cli: Cli, tmp_path: Path) -> None:
    assert cli("explain", "--log", str(tmp_path / "missing.txt"), "--no-facts").code == 3
    assert cli("explain", "--log", "-", "--exit-code", "banana").code == 2
