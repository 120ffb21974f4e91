"""How sure the engine says it is: look-alikes that matched the same message
are told apart by what else the text says, and a first answer that the rest
of the text does not support is never given as a confident one."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from helpers.catalogues import FILLER, write_catalogue

from qnndoctor.diagnosis import Fact, diagnose
from qnndoctor.diagnosis.facts import from_items
from qnndoctor.render.explain import WEAK_NOTE, render_text

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
    cat = write_catalogue(tmp_path, [COMPRESSED, MANIFEST, *FILLER])
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
    cat = write_catalogue(tmp_path, [COMPRESSED, MANIFEST, *FILLER])
    text = (
        f"E/QNN: {SHARED}\n"
        "I added libcdsprpc.so but never declared it with uses-native-library in AndroidManifest.xml"
    )
    result = diagnose(text, catalogue=cat)
    # Both matched the same message at 6: the matched scores are level, so the
    # ordering is a lead, not a sure answer.
    assert result.candidates[0].matched_score == result.candidates[1].matched_score
    assert result.confidence(0) == "low"


FLUX = {
    "id": "flux-overheated",
    "title": "The flux capacitor overheats",
    "patterns": [{"regex": r"error 4242\b", "weight": 9}],
    "symptom_examples": ["error 4242: the flux capacitor overheated during calibration"],
    "cause": "The flux capacitor overheats when its coolant reservoir is empty.",
}


def test_a_match_the_rest_of_the_text_does_not_support_is_a_weak_answer(tmp_path: Path) -> None:
    cat = write_catalogue(tmp_path, [FLUX, *FILLER])
    supported = diagnose(
        "error 4242: flux capacitor overheated (coolant reservoir empty)", catalogue=cat
    )
    assert supported.ids() == ["flux-overheated"]
    assert supported.confidence(0) == "medium" and supported.doubt(0) is None
    # The same message in a report about something else entirely.
    unsupported = diagnose(
        "error 4242 while uploading the sierra tango uniform manifest to the quebec mirror",
        catalogue=cat,
    )
    assert unsupported.ids() == ["flux-overheated"]
    assert unsupported.confidence(0) == "low"
    assert "little else in the text resembles" in str(unsupported.doubt(0))


CLOSE_WINNER = {
    "id": "winner-by-pattern",
    "title": "Winner by its pattern",
    "patterns": [
        {"regex": "stage two halted", "weight": 9},
        {"regex": "halted", "weight": 2},
        {"regex": "stage", "weight": 2},
    ],
    "symptom_examples": ["stage two halted: pump pressure low"],
}
CLOSE_RUNNER = {
    "id": "runner-resembling-more",
    "title": "Runner-up the text resembles more",
    "patterns": [{"regex": "two halted", "weight": 8}],
    "symptom_examples": ["two halted: turbine vane cracked, oxidiser valve frozen shut"],
}


def test_a_close_runner_up_the_text_resembles_more_makes_the_first_answer_weak(
    tmp_path: Path,
) -> None:
    cat = write_catalogue(tmp_path, [CLOSE_WINNER, CLOSE_RUNNER, *FILLER])
    text = "error: stage two halted\nturbine vane cracked, oxidiser valve frozen shut"
    result = diagnose(text, catalogue=cat)
    assert result.ids()[:2] == ["winner-by-pattern", "runner-resembling-more"]
    first, second = result.candidates[:2]
    assert first.matched_score - second.matched_score > 0  # ahead on what matched
    assert (second.resemblance or 0) > (first.resemblance or 0) >= 1.0
    assert result.confidence(0) == "low"
    assert "runner-resembling-more is close behind" in str(result.doubt(0))


def test_explain_says_plainly_when_nothing_matched_well(tmp_path: Path) -> None:
    cat = write_catalogue(tmp_path, [FLUX, *FILLER])
    weak = "error 4242 while uploading the sierra tango uniform manifest to the quebec mirror"
    document = diagnose(weak, catalogue=cat).to_json()
    out = io.StringIO()
    render_text(document, out)
    shown = out.getvalue()
    assert shown.startswith("No catalogued cause matched this text well") and WEAK_NOTE in shown
    assert "  doubt: its message matched, but little else" in shown
    assert document["candidates"][0]["doubt"]
    strong = diagnose(
        "error 4242: flux capacitor overheated (coolant reservoir empty)", catalogue=cat
    ).to_json()
    out = io.StringIO()
    render_text(strong, out)
    assert out.getvalue().startswith("Most likely cause: ") and "doubt:" not in out.getvalue()


def test_explain_says_it_of_a_weak_tie_but_not_of_a_strong_one(tmp_path: Path) -> None:
    cat = write_catalogue(tmp_path, [COMPRESSED, MANIFEST, *FILLER])
    weak = diagnose(f"E/QNN: {SHARED}", catalogue=cat).to_json()  # two matches at 6
    assert weak["tie"]
    out = io.StringIO()
    render_text(weak, out)
    assert out.getvalue().startswith(WEAK_NOTE)
    strong_pair = [
        {**entry, "patterns": [{"regex": SHARED, "weight": 9}]} for entry in (COMPRESSED, MANIFEST)
    ]
    strong = diagnose(
        f"E/QNN: {SHARED}", catalogue=write_catalogue(tmp_path / "strong", [*strong_pair, *FILLER])
    ).to_json()
    assert strong["tie"] and strong["candidates"][0]["confidence"] == "low"
    out = io.StringIO()
    render_text(strong, out)
    assert out.getvalue().startswith("Most likely cause: ") and "tied with" in out.getvalue()


def test_corroborating_patterns_order_candidates_but_do_not_make_an_answer_medium(
    tmp_path: Path,
) -> None:
    """A weight-6 message (shared by a few causes) plus a second pattern over
    the same line (+1) reaches 7, but the second pattern says little more:
    the answer stays low. A cue or a fitting fact that reaches 7 makes it
    medium. (Two wrong `medium` answers of the leave-one-out, 5005 look-alikes,
    stood on exactly that +1.)"""
    shared = {
        **FLUX,
        "patterns": [
            {"regex": r"error 4242\b", "weight": 6},
            {"regex": r"overheated", "weight": 3},
        ],
    }
    cued = {
        **shared,
        "patterns": [*shared["patterns"], {"regex": "coolant", "weight": 2, "context": True}],
    }
    text = "error 4242: flux capacitor overheated"
    plain = diagnose(text, catalogue=write_catalogue(tmp_path / "plain", [shared, *FILLER]))
    assert plain.ids() == ["flux-overheated"] and plain.candidates[0].matched_score == 7
    assert plain.doubt(0) is None and plain.confidence(0) == "low"
    with_cue = diagnose(
        text + " (coolant reservoir empty)",
        catalogue=write_catalogue(tmp_path / "cued", [cued, *FILLER]),
    )
    assert with_cue.candidates[0].matched_score == 9 and with_cue.confidence(0) == "medium"


def test_a_platform_fact_ranks_look_alikes_but_does_not_make_an_answer_medium(
    tmp_path: Path,
) -> None:
    """`os` fits every cause of that platform: a weight-6 message plus a
    fitting os (9) is low; the same message plus a fitting version fact is
    medium. (A wrong `medium` of the leave-one-out, a Windows-only 5005
    look-alike, stood on the os fact.)"""
    base = {**FLUX, "patterns": [{"regex": r"error 4242\b", "weight": 6}]}
    on_windows = {**base, "facts": [{"fact": "os", "in": ["windows"], "effect": "require"}]}
    on_version = {
        **base,
        "facts": [{"fact": "onnxruntime_qnn.version", "spec": "<2", "effect": "support"}],
    }
    text = "error 4242: flux capacitor overheated (coolant reservoir empty)"
    facts = from_items(
        [Fact("os", "windows", "ticket"), Fact("onnxruntime_qnn.version", "1.19.0", "ticket")]
    )
    platform = diagnose(
        text, catalogue=write_catalogue(tmp_path / "os", [on_windows, *FILLER]), facts=facts
    )
    assert platform.candidates[0].matched_score == 9 and platform.doubt(0) is None
    assert platform.candidates[0].sure_score == 6 and platform.confidence(0) == "low"
    version = diagnose(
        text, catalogue=write_catalogue(tmp_path / "v", [on_version, *FILLER]), facts=facts
    )
    assert version.candidates[0].matched_score == 9 and version.confidence(0) == "medium"
