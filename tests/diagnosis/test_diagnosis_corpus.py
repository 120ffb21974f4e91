"""The evaluation corpus is well formed: real public links, one thread per case,
no thread in both parts, labels that name catalogue entries. (The accuracy
itself is a benchmark, bench/bench_diagnosis.py, not a test.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from qnndoctor.diagnosis import diagnose
from qnndoctor.diagnosis.catalogue import load

CORPUS = Path(__file__).parents[1] / "diagnosis_corpus"


PARTS = sorted(p.stem for p in CORPUS.glob("*.json"))


def _cases(name: str) -> list[dict[str, Any]]:
    path = CORPUS / f"{name}.json"
    if not path.is_file():
        return []
    cases = json.loads(path.read_text("utf-8"))["cases"]
    assert isinstance(cases, list)
    return cases


def test_every_part_is_a_development_or_a_held_out_part() -> None:
    assert "dev" in PARTS and "heldout" in PARTS
    assert all(name.startswith(("dev", "heldout")) for name in PARTS), PARTS


@pytest.mark.parametrize("name", PARTS)
def test_cases_are_real_public_reports_with_a_label(name: str) -> None:
    cases = _cases(name)
    ids = {s.id for s in load().signatures}
    for case in cases:
        assert case["url"].startswith("https://"), case["id"]
        assert 20 <= len(case["text"]) <= 4000, case["id"]
        assert case["diagnosis"], case["id"]
        expected = case["expected"]
        assert expected in ids or (name.startswith("heldout") and expected.startswith("none:")), (
            case["id"],
            expected,
        )
    assert len({c["url"] for c in cases}) == len(cases), "one case per thread"


def test_corpus_size_and_no_thread_in_two_parts() -> None:
    urls = [c["url"].rstrip("/").lower() for name in PARTS for c in _cases(name)]
    assert len(urls) >= 60
    assert len(set(urls)) == len(urls), "a thread is in two cases or two parts"
    ids = [c["id"] for name in PARTS for c in _cases(name)]
    assert len(set(ids)) == len(ids), "case ids are unique across parts"


def test_healthy_texts_raise_no_error_candidate() -> None:
    for path in sorted((CORPUS / "healthy").glob("*.txt")):
        result = diagnose(path.read_text("utf-8"))
        assert result.candidates == (), (path.name, result.ids())
        assert result.verdict.harmless, path.name


RUNTIME_PARTS = sorted(p.stem for p in (CORPUS / "runtime").glob("*.json"))


@pytest.mark.parametrize("name", RUNTIME_PARTS)
def test_runtime_made_cases_carry_their_code_and_a_label(name: str) -> None:
    """Failures made for real on the simulator (tests/diagnosis_corpus/runtime/):
    each holds the code that failed, the venv it ran in, the output, and a
    label naming a catalogue entry or, by construction, a cause without one."""
    assert name.startswith(("dev", "heldout")), name
    cases = json.loads((CORPUS / "runtime" / f"{name}.json").read_text("utf-8"))["cases"]
    ids = {s.id for s in load().signatures}
    for case in cases:
        assert case["code"].strip() and case["python"] and case["diagnosis"], case["id"]
        assert 20 <= len(case["text"]) <= 4000, case["id"]
        assert case["expected"] in ids or case["expected"].startswith("none:"), case["id"]
    assert len({c["id"] for c in cases}) == len(cases)
