"""What a confidence label promises is held by caps that never depend on the
score (issue 29): a tie is never high however high the two score, and the
error's own wording that contradicts a high answer's cause caps it at low."""

from __future__ import annotations

from pathlib import Path

from helpers.catalogues import FILLER, write_catalogue

from qnndoctor.diagnosis import diagnose

CRASH = "fatal: the zorblax runtime aborted in its quux stage"


def _entry(cause_id: str, title: str) -> dict[str, object]:
    return {
        "id": cause_id,
        "title": title,
        "patterns": [{"regex": "zorblax runtime aborted in its quux stage", "weight": 10}],
        "exit_codes": [-11],
        "symptom_examples": [CRASH],
        "cause": f"{title}: the zorblax runtime aborted in its quux stage",
    }


def test_a_tie_is_never_high_even_at_a_score_that_would_be(tmp_path: Path) -> None:
    one, two = _entry("a-one", "The first cause"), _entry("b-two", "The second cause")
    alone = diagnose(
        CRASH, exit_code=-11, catalogue=write_catalogue(tmp_path / "1", [one, *FILLER])
    )
    assert alone.ids()[:1] == ["a-one"]
    assert alone.top is not None and alone.top.matched_score >= 12
    assert alone.confidence(0) == "high"  # the same score, alone: high
    both = diagnose(
        CRASH, exit_code=-11, catalogue=write_catalogue(tmp_path / "2", [one, two, *FILLER])
    )
    assert both.verdict.tie
    assert [c.matched_score for c in both.candidates[:2]] == [alone.top.matched_score] * 2
    assert both.confidence(0) == "low" and both.confidence(1) == "low"


LOADER = (
    "[E:onnxruntime:, qnn_execution_provider.cc:2290 GetCapabilityImpl] QNN SetupBackend failed "
    "Unable to load backend, error:  libQnnHtp.so: cannot open shared object file: {}"
)


def test_wording_that_contradicts_a_high_answer_caps_it_at_low() -> None:
    """The real catalogue: QNN's loader line naming a missing library is a high
    answer; the same line ending in 'Permission denied' (the file is there and
    may not be read) keeps the order and says why it is only a lead."""
    missing = diagnose(LOADER.format("No such file or directory"))
    assert missing.ids()[:1] == ["bundled-qnn-backend-library-missing"]
    assert missing.confidence(0) == "high" and missing.doubt(0) is None
    denied = diagnose(LOADER.format("Permission denied"))
    assert denied.ids()[:1] == ["bundled-qnn-backend-library-missing"]
    assert denied.confidence(0) == "low"
    assert "'Permission denied' (line 1)" in str(denied.doubt(0))
    assert all(denied.confidence(rank) != "high" for rank in range(len(denied.candidates)))
