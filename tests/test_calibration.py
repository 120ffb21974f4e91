"""Look-alikes that matched the same message are told apart by what else the
text says, and what that adds never makes an answer surer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_diagnosis import _write_catalogue
from test_resemblance import FILLER

from qnndoctor.diagnosis import diagnose

SHARED = "QNN_DEVICE_ERROR_INVALID_CONFIG"


def _lookalike(cause_id: str, title: str, example: str) -> dict[str, Any]:
    return {
        "id": cause_id,
        "title": title,
        "patterns": [{"regex": SHARED, "weight": 6}],
        "symptom_examples": [f"{SHARED}\n{example}"],
    }


# Two causes that print the same device error (as the Android skel-loading causes do);
# ids chosen so that the id order, the last tie-breaker, would pick the wrong one.
COMPRESSED = _lookalike(
    "a-compressed-libraries",
    "Native libraries stay compressed inside the APK",
    "extractNativeLibs false: jniLibs packaged compressed, nothing unpacked under nativeLibraryDir",
)
MANIFEST = _lookalike(
    "b-manifest-native-library",
    "The manifest does not declare the vendor DSP library",
    "uses-native-library android:name libcdsprpc.so missing from AndroidManifest.xml",
)


def test_lookalikes_matching_one_message_are_told_apart_by_the_rest_of_the_text(
    tmp_path: Path,
) -> None:
    cat = _write_catalogue(tmp_path, [COMPRESSED, MANIFEST, *FILLER])
    text = (
        f"E/QNN: {SHARED}\n"
        "I added libcdsprpc.so but never declared it with uses-native-library in AndroidManifest.xml"
    )
    result = diagnose(text, catalogue=cat)
    assert result.ids()[:2] == ["b-manifest-native-library", "a-compressed-libraries"]
    top = result.candidates[0]
    (bonus,) = [e for e in top.evidence if e.kind == "resemblance"]
    assert bonus.weight > 0 and top.score == top.matched_score + bonus.weight
    assert "shares rare words with its symptoms" in bonus.detail and "'libcdsprpc'" in bonus.detail
    assert result.to_json()["why_first"]  # close: the output says what decided
    # The same message alone: nothing tells them apart, an honest tie.
    alone = diagnose(f"E/QNN: {SHARED}", catalogue=cat)
    assert alone.verdict.tie and alone.confidence(0) == "low"


def test_what_resemblance_adds_never_makes_a_first_answer_surer(tmp_path: Path) -> None:
    cat = _write_catalogue(tmp_path, [COMPRESSED, MANIFEST, *FILLER])
    text = (
        f"E/QNN: {SHARED}\n"
        "I added libcdsprpc.so but never declared it with uses-native-library in AndroidManifest.xml"
    )
    result = diagnose(text, catalogue=cat)
    # Both matched the same message at 6: the matched scores are level, so the
    # ordering is a lead, not a sure answer.
    assert result.candidates[0].matched_score == result.candidates[1].matched_score
    assert result.confidence(0) == "low"
