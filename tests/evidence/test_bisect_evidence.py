"""Bisect's values without venvs: the plan, the local evidence store and how
it reaches the resolver, the companion experiments' pins."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from helpers.profiles import win_arm64
from helpers.refresh_tool import load_refresh_tool
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from qnndoctor import evidence
from qnndoctor.bisect.plan import PlanError, make_plan, parse_releases
from qnndoctor.evidence import apply, store
from qnndoctor.matrixdata import load
from qnndoctor.matrixdata.companions import proven
from qnndoctor.matrixdata.releases import Release
from qnndoctor.resolver.recommend import KNOWN_ISSUE, evaluate_release, recommend

MATRIX = load()
LINUX = win_arm64(os="linux", arch="x86_64", native_arch="x86_64", htp_arch=None,
                  htp_arch_source=None, glibc=(2, 36), python=(3, 11), python_exe="/v/bin/python")  # fmt: skip


def _release(version: str) -> Release:
    return next(r for r in MATRIX.releases.releases if str(r.version) == version)


def _rows(outcomes: dict[str, str], beyond: str = "1.24.1") -> tuple[dict[str, object], ...]:
    return tuple(
        {"onnxruntime": v, "outcome": o, "cause": None, "date": "2026-11-28",
         "platform": "linux_x86_64", "python": "cp311", "admitted": v != beyond}
        for v, o in outcomes.items()
    )  # fmt: skip


def test_plan_is_newest_first_filtered_by_platform_and_python_with_companions() -> None:
    plan = make_plan(LINUX, MATRIX.releases)
    releases = [p.onnxruntime_qnn for p in plan.pairs]
    assert releases[0] == "2.7.0" and releases == sorted(releases, key=Version, reverse=True)
    assert not {"2.2.0", "1.24.4"} & set(releases)  # no Linux x86-64 wheels
    assert plan.pairs[0].companion is None  # pip's own choice first
    exact = make_plan(LINUX, MATRIX.releases, releases="2.3.0", companions="1.27.0,1.32.0")
    assert [(p.onnxruntime_qnn, p.companion) for p in exact.pairs] == [
        ("2.3.0", "onnxruntime==1.32.0"),
        ("2.3.0", "onnxruntime==1.27.0"),
    ]
    assert [p.onnxruntime_qnn for p in make_plan(LINUX, MATRIX.releases, releases="2.5.0..2.6.0").pairs][:1] == ["2.6.0"]  # fmt: skip
    assert (
        make_plan(LINUX, MATRIX.releases, releases="2.1.0").skipped[0].startswith("2.1.0: no wheel")
    )
    for bad in ("2.x", "..", ">=nope"):
        with pytest.raises(PlanError):
            make_plan(LINUX, MATRIX.releases, releases=bad)
    with pytest.raises(PlanError):
        make_plan(LINUX, MATRIX.releases, companions="one")
    assert parse_releases(">=2.4")[0] == SpecifierSet(">=2.4")


def test_the_store_keeps_the_newest_record_per_pair_and_skips_damage(tmp_path: Path) -> None:
    machine = store.machine_facts(LINUX.to_json())
    print_ = store.fingerprint(machine)

    def record(qnn: str, ort: str, outcome: str, when: str) -> store.Record:
        return store.Record(qnn, ort, outcome, None if outcome == "passed" else "cause", 3.0,
                            when, print_, machine, platform="linux_x86_64")  # fmt: skip

    store.record([record("2.3.0", "1.32.0", "passed", "2026-11-01T00:00:00Z")], tmp_path)
    with (tmp_path / store.FILE_NAME).open("a") as handle:
        handle.write("{not json\n[]\n" + json.dumps({"format": 99}) + "\n")
    store.record([record("2.3.0", "1.32.0", "failed", "2026-11-02T00:00:00Z"),
                  record("2.7.0", "1.32.0", "passed", "2026-11-02T00:00:00Z")], tmp_path)  # fmt: skip
    found = store.lookup(print_, tmp_path)
    assert [(r.onnxruntime_qnn, r.outcome) for r in found] == [
        ("2.7.0", "passed"),
        ("2.3.0", "failed"),
    ]
    assert (
        found[1].sentence()
        == "onnxruntime-qnn 2.3.0 with onnxruntime 1.32.0 failed here on 2026-11-02 (bisect): cause"
    )
    other = store.fingerprint({**machine, "python": "3.12"})
    assert other != print_ and store.lookup(other, tmp_path) == []  # facts changed: not used


# Lines as the evidence files held them before the fleet store went behind
# store.JsonLines (the examples of docs/bisect.md and docs/evidence.md).
PAIRS_LINE = (
    '{"cause": null, "fingerprint": "3f0c", "format": 1, "machine": {"python": "3.11"}, '
    '"onnxruntime": "1.27.0", "onnxruntime_qnn": "2.3.0", "outcome": "passed", '
    '"platform": "linux_x86_64", "recorded": "2026-11-28T04:23:18Z", "seconds": 28.9, '
    '"source": "bisect"}\n'
)
FLEET_LINE = (
    '{"cause": "plugin-ort-version-supported-zero", "count": 13, "date": "2026-11-28", '
    '"facts": {"htp_arch": 73, "npu_driver": "30.0.140.1000", "onnxruntime": "1.31.1", '
    '"onnxruntime_qnn": "2.3.0", "os": null, "python": null, "soc": "SC8380XP"}, '
    '"outcome": "failed", "source": "fleet compat table 5f0c2a91d3e7", "v": 1}\n'
)


def test_evidence_files_written_before_still_read_and_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qnndoctor.evidence.fleet import EvidenceStore, PairFacts, Record

    (tmp_path / "pairs.jsonl").write_text(PAIRS_LINE, "utf-8")
    (tmp_path / "fleet.jsonl").write_text(FLEET_LINE, "utf-8")
    monkeypatch.setenv("QNNDOCTOR_EVIDENCE_DIR", str(tmp_path))
    monkeypatch.delenv("QNNDOCTOR_NO_EVIDENCE", raising=False)
    assert evidence.present()
    [pair] = store.lookup("3f0c", tmp_path)
    assert (pair.onnxruntime_qnn, pair.onnxruntime, pair.seconds) == ("2.3.0", "1.27.0", 28.9)
    assert json.dumps(pair.to_json(), sort_keys=True) + "\n" == PAIRS_LINE  # written back as read
    fleet = EvidenceStore()
    assert fleet.path == tmp_path / "fleet.jsonl"
    tally = fleet.lookup(onnxruntime_qnn="2.3.0", htp_arch=73)
    assert (tally.failed, tally.causes) == (13, {"plugin-ort-version-supported-zero": 13})
    # A new import (replacing its own source) rewrites the file: the old line stays as it was.
    seen = PairFacts(soc="SC8380XP", htp_arch=73, onnxruntime_qnn="2.7.0")
    assert fleet.record_many(
        [Record(seen, "passed", "table b", "2026-11-29", 2)], replacing="table b"
    )
    lines = (tmp_path / "fleet.jsonl").read_text("utf-8").splitlines(keepends=True)
    assert lines[0] == FLEET_LINE and len(lines) == 2
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    # Past MAX_LINES the pairs file keeps its newest lines, as they were.
    monkeypatch.setattr(store, "MAX_LINES", 2)
    newer = dataclasses.replace(pair, onnxruntime_qnn="2.4.0")
    store.record([newer, dataclasses.replace(pair, onnxruntime_qnn="2.5.0")], tmp_path)
    kept = (tmp_path / "pairs.jsonl").read_text("utf-8").splitlines()
    assert [json.loads(line)["onnxruntime_qnn"] for line in kept] == ["2.4.0", "2.5.0"]


def test_local_evidence_pins_a_passed_companion_and_rules_out_a_release_that_failed() -> None:
    machine = store.machine_facts(LINUX.to_json())

    def record(qnn: str, ort: str, outcome: str) -> store.Record:
        return store.Record(qnn, ort, outcome, None if outcome == "passed" else "handshake", 9.0,
                            "2026-11-28T04:00:00Z", "f", machine, platform="linux_x86_64")  # fmt: skip

    matrix, _notes = apply.with_evidence(
        MATRIX, [record("2.7.0", "1.31.1", "passed"), record("2.6.0", "1.32.0", "failed")]
    )
    answer = recommend(LINUX, matrix.releases)
    assert answer.chosen is not None and str(answer.chosen.version) == "2.7.0"
    assert answer.commands[-1].endswith("onnxruntime-qnn==2.7.0 onnxruntime==1.31.1")
    assert any("2.7.0 with onnxruntime 1.31.1 passed here on 2026-11-28 (bisect)" in n for n in answer.chosen.notes)  # fmt: skip
    ruled = evaluate_release(LINUX, _release("2.6.0"), matrix.releases)
    assert [r.axis for r in ruled.reasons] == [KNOWN_ISSUE]
    assert "failed here on 2026-11-28 (bisect): handshake" in ruled.reasons[0].detail
    # A failure the matrix's own pin already avoids rules nothing out.
    _m, notes = apply.with_evidence(MATRIX, [record("2.3.0", "1.32.0", "failed")])
    issues, _ = apply.local_issues([record("2.3.0", "1.32.0", "failed")], MATRIX.releases)
    assert issues == () and notes


def test_companion_experiments_replace_the_hand_pin() -> None:
    release = dataclasses.replace(
        _release("2.3.0"),
        companions=_rows(
            {
                "1.32.0": "failed",
                "1.28.0": "failed",
                "1.27.0": "passed",
                "1.24.2": "passed",
                "1.24.1": "passed",
            }
        ),
    )
    measured = proven(release)
    assert measured is not None and measured.pin == "onnxruntime>=1.24.2,<1.28.0"
    assert "1.28.0 failed (on linux_x86_64, 2026-11-28)" in measured.text
    verdict = evaluate_release(LINUX, release, MATRIX.releases)
    assert verdict.companion_pin == "onnxruntime>=1.24.2,<1.28.0"  # not the hand pin's "<1.28"
    assert not any("installing together with" in n for n in verdict.notes)  # the hand pin's note
    newest_passes = dataclasses.replace(release, companions=_rows({"1.32.0": "passed"}))
    assert evaluate_release(LINUX, newest_passes, MATRIX.releases).companion_pin is None
    none_pass = dataclasses.replace(release, companions=_rows({"1.32.0": "failed"}))
    assert [r.axis for r in evaluate_release(LINUX, none_pass, MATRIX.releases).reasons] == [KNOWN_ISSUE]  # fmt: skip
    assert proven(dataclasses.replace(release, companions=())) is None
    # The committed matrix carries the real rows (through the parsed-matrix cache too).
    committed = proven(_release("2.3.0"))
    assert committed is not None and committed.pin == "onnxruntime>=1.24.2,<1.28.0"
    assert all(proven(_release(v)) == proven(load().releases.releases[0]) for v in ("2.7.0",))
    seven = proven(_release("2.7.0"))
    assert seven is not None and seven.pin is None and "1.32.0, the newest" in seven.text


def test_refresh_admits_the_metadata_range_and_the_next_one_beyond() -> None:
    load_refresh_tool()
    from matrix.refresh.companions import admitted, carry_over

    available = [Version(v) for v in ("1.22.1", "1.24.1", "1.24.2", "1.27.0", "1.32.0")]
    assert [(str(v), inside) for v, inside in admitted(SpecifierSet(">=1.24.2"), available)] == [
        ("1.32.0", True), ("1.27.0", True), ("1.24.2", True), ("1.24.1", False),
    ]  # fmt: skip
    document: dict[str, Any] = {"releases": [{"version": "2.3.0"}]}
    carry_over({"releases": [{"version": "2.3.0", "companions": [{"x": 1}]}]}, document)
    assert document["releases"][0]["companions"] == [{"x": 1}]
