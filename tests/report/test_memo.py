"""The decisions memo (qnndoctor/report/memo.py): a check without the smoke session
reuses the decisions made before for exactly the same facts, code and
matrix, and decides anew whenever any of them changed. Real venvs, real
probe runs, a real user cache folder (XDG_CACHE_HOME in tmp_path)."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult
from helpers.wheels import make_venv, site_packages

from qnndoctor.report import memo
from qnndoctor.rules.findings import Finding, SkippedCheck

Cli = Callable[..., CliResult]
REMEMBERED = "decisions: the same facts were judged before"
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="XDG_CACHE_HOME")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The memo on, in a user cache folder of this test's own."""
    folder = tmp_path / "cache"
    monkeypatch.delenv("QNNDOCTOR_NO_MEMO", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    memo.events.clear()
    return folder / "qnndoctor" / "decisions"


def _measured_parts_removed(document: dict[str, Any]) -> dict[str, Any]:
    """The report without what differs on every run: when it was made and
    how long each probe took."""
    document = json.loads(json.dumps(document))
    document.pop("created")
    for entry in document["facts"].values():
        entry.pop("duration_ms", None)
    document["facts"]["probe_run"]["values"].pop("duration_s")
    return document


@posix_only
def test_the_same_facts_are_judged_once(cli: Cli, tmp_path: Path, cache: Path) -> None:
    python = make_venv(tmp_path / "venv")
    first = cli("check", "--python", str(python), "--no-smoke", "--json", "-v")
    assert REMEMBERED not in first.err
    assert len(list(cache.glob("*.json"))) == 1
    second = cli("check", "--python", str(python), "--no-smoke", "--json", "-v")
    assert REMEMBERED in second.err
    assert first.code == second.code
    assert _measured_parts_removed(second.json()) == _measured_parts_removed(first.json())


@posix_only
def test_a_changed_environment_is_judged_anew(cli: Cli, tmp_path: Path, cache: Path) -> None:
    python = make_venv(tmp_path / "venv")
    argv = ("check", "--python", str(python), "--no-smoke", "--json", "-v")
    healthy = cli(*argv)
    assert "uninstall-leftover" not in healthy.finding_ids()
    # A failed uninstall left a ~nnxruntime folder behind.
    leftover = site_packages(python) / "~nnxruntime"
    leftover.mkdir()
    (leftover / "__init__.py").write_text("", encoding="utf-8")
    broken = cli(*argv)
    assert REMEMBERED not in broken.err
    assert "uninstall-leftover" in broken.finding_ids()
    shutil.rmtree(leftover)
    again = cli(*argv)  # the first environment again: its decisions are still kept
    assert REMEMBERED in again.err
    assert "uninstall-leftover" not in again.finding_ids()


@posix_only
def test_another_matrix_or_a_changed_one_is_judged_anew(
    cli: Cli, tmp_path: Path, cache: Path
) -> None:
    from qnndoctor._layout import package_dir

    bundled = package_dir("matrix")
    assert bundled is not None
    python = make_venv(tmp_path / "venv")
    matrix = tmp_path / "releases.json"
    shutil.copy(bundled / "releases.json", matrix)
    argv = ("check", "--python", str(python), "--no-smoke", "--json", "-v")
    cli(*argv)
    assert REMEMBERED not in cli(*argv, "--matrix", str(matrix)).err  # another matrix
    assert REMEMBERED in cli(*argv, "--matrix", str(matrix)).err
    document = json.loads(matrix.read_text(encoding="utf-8"))
    document["releases"] = document["releases"][1:]  # the newest release withdrawn
    matrix.write_text(json.dumps(document), encoding="utf-8")
    changed = cli(*argv, "--matrix", str(matrix))
    assert REMEMBERED not in changed.err


@posix_only
def test_a_check_with_the_smoke_session_is_never_remembered(
    cli: Cli, tmp_path: Path, cache: Path
) -> None:
    python = make_venv(tmp_path / "venv")
    cli("check", "--python", str(python), "--json")
    cli("check", "--python", str(python), "--json")
    assert not cache.exists() or not list(cache.glob("*.json"))


@posix_only
def test_turned_off_it_neither_reads_nor_writes(
    cli: Cli, tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QNNDOCTOR_NO_MEMO", "1")
    python = make_venv(tmp_path / "venv")
    for _ in range(2):
        result = cli("check", "--python", str(python), "--no-smoke", "--json", "-v")
        assert REMEMBERED not in result.err
    assert not cache.exists()


@posix_only
@pytest.mark.parametrize(
    "damage",
    [b"", b"{not json", b"[1, 2]", b'{"key": "another", "decisions": {}}', b"\xff\xfe\x00"],
)
def test_a_damaged_entry_is_recorded_and_decided_anew(
    cli: Cli, tmp_path: Path, cache: Path, damage: bytes
) -> None:
    python = make_venv(tmp_path / "venv")
    argv = ("check", "--python", str(python), "--no-smoke", "--json", "-v")
    fresh = cli(*argv)
    (entry,) = cache.glob("*.json")
    entry.write_bytes(damage)
    result = cli(*argv)
    assert REMEMBERED not in result.err
    assert "decisions memo ignored" in result.err
    assert _measured_parts_removed(result.json()) == _measured_parts_removed(fresh.json())
    assert REMEMBERED in cli(*argv).err  # written again, usable again


@posix_only
def test_an_unwritable_cache_is_recorded_and_changes_nothing(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("QNNDOCTOR_NO_MEMO", raising=False)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    python = make_venv(tmp_path / "venv")
    result = cli("check", "--python", str(python), "--no-smoke", "--json", "-v")
    assert "decisions memo not written" in result.err
    assert result.json()["findings"]


def test_only_the_newest_entries_are_kept(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memo, "KEEP", 3)
    keys = [f"key number {n}" for n in range(6)]
    for number, memo_key in enumerate(keys):
        memo.store(memo_key, {"findings": [number]}, f"/python{number}", ["fingerprint"])
    assert len(list(cache.glob("*.json"))) == 3
    assert len(list(cache.glob("*.seen"))) == 3
    assert [memo.load(k) for k in keys] == [None] * 3 + [{"findings": [n]} for n in (3, 4, 5)]


def test_an_entry_is_used_only_for_its_own_key(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entry files are named by a checksum of the key; two keys that share a
    name (forced here) never answer for each other."""
    monkeypatch.setattr(memo, "_name", lambda text: "same-name")
    memo.store("first key", {"findings": ["first"]}, "/python", ["fingerprint"])
    assert memo.load("second key") is None
    assert "decisions memo ignored: not an entry of this key" in memo.events
    assert memo.load("first key") == {"findings": ["first"]}


def test_findings_come_back_from_json_as_they_were(cli: Cli, tmp_path: Path) -> None:
    """What the memo keeps of a finding is all of it: a report's findings of
    every shape (evidence, fixes with commands, none) survive the round trip."""
    python = make_venv(tmp_path / "venv")
    report = cli("check", "--python", str(python), "--no-smoke", "--json").json()
    findings = report["findings"] + [
        {
            "id": "x",
            "severity": "warning",
            "title": "t",
            "explanation": "e",
            "evidence": [{"fact": "installs.values", "value": {"a": [1, None]}}],
            "fix": {"text": "do", "commands": ["pip install x", "pip uninstall y"]},
        }
    ]
    assert any(f["fix"] is None for f in findings) and any(f["evidence"] for f in findings)
    for finding in findings:
        assert Finding.from_json(finding).to_json() == finding
    for skipped in report["skipped_checks"] + [
        {"rule": "r", "reason": "why", "finding_ids": ["a"]}
    ]:
        assert SkippedCheck.from_json(skipped).to_json() == skipped
