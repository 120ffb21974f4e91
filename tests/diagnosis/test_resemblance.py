"""The last resort of the diagnosis engine: when no catalogued message
matched, offer the causes a failure text resembles, as a low-confidence
guess that facts may exclude but never promote."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from helpers.catalogues import FILLER, write_catalogue

from qnndoctor.diagnosis import Fact, diagnose
from qnndoctor.diagnosis.facts import from_items
from qnndoctor.diagnosis.resemblance import terms
from qnndoctor.render.explain import render_text

INTERFACE = {
    "id": "interface-too-old",
    "title": "The QNN backend library offers no interface this runtime can use",
    "patterns": [{"regex": "Unable to find a valid interface for", "weight": 9}],
    "symptom_examples": ["QnnBackend: Unable to find a valid interface for libQnnHtp.so"],
}
SKEL = {
    "id": "skel-missing",
    "title": "The HTP skel library is not where the DSP loader looks",
    "patterns": [{"regex": "skel library not found on ADSP_LIBRARY_PATH", "weight": 9}],
    "symptom_examples": ["libQnnHtpV73Skel.so skel library not found on ADSP_LIBRARY_PATH"],
    "facts": [{"fact": "os", "in": ["linux", "android"], "effect": "require"}],
}
# Reworded by a user: the catalogued message (with its trailing "for") does not match.
REWORDED = '[ERROR] "Unable to find a valid interface."\nFailure to initialize model'


def _catalogue(tmp_path: Path, *entries: dict[str, Any]) -> Any:
    return write_catalogue(tmp_path, [*(entries or (INTERFACE, SKEL)), *FILLER])


def test_a_reworded_message_gets_a_low_confidence_guess_with_the_words_it_shares(
    tmp_path: Path,
) -> None:
    result = diagnose(REWORDED, catalogue=_catalogue(tmp_path))
    assert result.ids() == ["interface-too-old"]
    top = result.candidates[0]
    assert top.raised_by == "resemblance" and top.specificity == 0
    assert result.confidence(0) == "low"
    (evidence,) = [e for e in top.evidence if e.kind == "resemblance"]
    assert "no catalogued message matched" in evidence.detail
    assert "'interface'" in evidence.detail and "'valid'" in evidence.detail
    assert result.to_json()["candidates"][0]["raised_by"] == "resemblance"


def test_a_matched_message_leaves_no_room_for_guesses(tmp_path: Path) -> None:
    text = "Unable to find a valid interface for libQnnHtp.so\nskel library on the DSP failed"
    result = diagnose(text, catalogue=_catalogue(tmp_path))
    assert result.ids() == ["interface-too-old"]
    assert result.candidates[0].raised_by == "pattern"


def test_facts_exclude_a_guess_but_never_promote_one(tmp_path: Path) -> None:
    cat = _catalogue(tmp_path)
    text = "error: the skel library libQnnHtpV73Skel.so could not be loaded"
    on_linux = diagnose(text, catalogue=cat, facts=from_items([Fact("os", "linux", "ticket")]))
    assert on_linux.ids() == ["skel-missing"]
    on_windows = diagnose(text, catalogue=cat, facts=from_items([Fact("os", "windows", "ticket")]))
    assert on_windows.ids() == []
    assert [e.signature.id for e in on_windows.verdict.excluded] == ["skel-missing"]
    # A fitting fact adds nothing to a guess: the closer resemblance stays first.
    near = {**SKEL, "id": "near", "facts": []}
    far = {
        **INTERFACE,
        "id": "far",
        "symptom_examples": ["skel library not found on the DSP"],
        "facts": [{"fact": "os", "in": ["linux"], "effect": "support"}],
    }
    both = diagnose(
        "error: skel library libQnnHtpV73Skel.so not found on ADSP_LIBRARY_PATH=/vendor/dsp",
        catalogue=_catalogue(tmp_path / "pair", near, far),
        facts=from_items([Fact("os", "linux", "ticket")]),
    )
    assert both.ids()[0] == "near"


def test_no_guess_without_a_failure_or_on_too_little_overlap(tmp_path: Path) -> None:
    cat = _catalogue(tmp_path)
    # Shares many rare words but reads like a healthy log: no failure words.
    assert diagnose("found a valid interface for libQnnHtp.so", catalogue=cat).ids() == []
    # A failure, but only one rare shared word.
    assert diagnose("error: interface mismatch", catalogue=cat).ids() == []
    # The smoke session's classification never guesses.
    assert diagnose(REWORDED, catalogue=cat, resemblance=False).ids() == []


def test_paths_count_by_their_file_name_never_by_folders_or_user_names() -> None:
    assert terms(r"C:\Users\marti\AppData\Local\qnn\QnnHtp.dll failed") == {"qnnhtp", "dll"}
    assert terms('"C:\\\\Users\\\\asus\\\\site-packages\\\\x.pyd"') == {"pyd"}
    assert terms("/home/jdoe/.venv/lib/libQnnHtp.so") == {"libqnnhtp"}


def test_explain_shows_a_guess_as_a_guess(tmp_path: Path) -> None:
    document = diagnose(REWORDED, catalogue=_catalogue(tmp_path)).to_json()
    out = io.StringIO()
    render_text(document, out)
    shown = out.getvalue()
    assert "Closest known cause (a guess: no catalogued message matched): The QNN backend" in shown
    assert "Most likely cause" not in shown
    assert "confidence low" in shown
    assert "resemblance: no catalogued message matched" in shown


def test_a_failure_named_by_an_exception_class_or_in_prose_still_gets_a_guess(
    tmp_path: Path,
) -> None:
    cat = _catalogue(tmp_path)
    linux = from_items([Fact("os", "linux", "ticket")])
    # No "error:", "failed", "unable to" ...: only the exception class, or prose naming the error.
    for text in (
        "OSError: libQnnHtpV73Skel.so skel library missing from ADSP_LIBRARY_PATH",
        "I get the same error: skel library libQnnHtpV73Skel.so and ADSP_LIBRARY_PATH again",
        "[ONNXRuntimeError] : 1 : FAIL : skel library libQnnHtpV73Skel.so on ADSP_LIBRARY_PATH",
        "skel library libQnnHtpV73Skel.so is missing although ADSP_LIBRARY_PATH is set",
        "the app is stuck: skel library libQnnHtpV73Skel.so, ADSP_LIBRARY_PATH=/dsp",
    ):
        assert diagnose(text, catalogue=cat, facts=linux).ids() == ["skel-missing"], text
    # A JSON dump with an "error" key and a fail counter reports nothing going wrong.
    healthy = '{"skel library": "libQnnHtpV73Skel.so", "ADSP_LIBRARY_PATH": "/dsp", "error": null, "fail": 0}'
    assert diagnose(healthy, catalogue=cat, facts=linux).ids() == []


def test_the_cause_text_counts_beside_title_and_examples(tmp_path: Path) -> None:
    # The reporter's words are the maintainers' explanation, not the message.
    vendor = {
        "id": "vendor-libraries-first",
        "title": "An older QNN runtime is loaded instead of the SDK's",
        "patterns": [{"regex": "getQnnInterface FAILED", "weight": 9}],
        "symptom_examples": ["Qnn getQnnInterface FAILED!"],
        "cause": "Older copies in /vendor/lib64 come first on LD_LIBRARY_PATH, so the "
        "loader picks them over the SDK's libraries.",
    }
    text = "error: the loader picks copies in vendor lib64 first (LD_LIBRARY_PATH)"
    assert diagnose(text, catalogue=_catalogue(tmp_path, vendor)).ids() == [
        "vendor-libraries-first"
    ]


WEAK = {
    "id": "weak-load-failure",
    "title": "Some library could not be loaded",
    "patterns": [{"regex": "load failed", "weight": 3}],
    "symptom_examples": ["load failed"],
}


def test_a_weak_match_gets_guesses_beside_it_but_never_behind_it(tmp_path: Path) -> None:
    cat = _catalogue(tmp_path, WEAK, INTERFACE, SKEL)
    linux = from_items([Fact("os", "linux", "ticket")])
    text = "error: load failed: skel library libQnnHtpV73Skel.so is not on ADSP_LIBRARY_PATH"
    result = diagnose(text, catalogue=cat, facts=linux)
    assert result.ids() == ["weak-load-failure", "skel-missing"]
    assert [c.raised_by for c in result.candidates] == ["pattern", "resemblance"]
    assert result.candidates[1].score > result.candidates[0].score  # ranked by kind first
    assert not result.verdict.tie
    # A strong match leaves no room for guesses.
    strong = diagnose(
        "Unable to find a valid interface for x; skel library libQnnHtpV73Skel.so on ADSP_LIBRARY_PATH",
        catalogue=cat,
        facts=linux,
    )
    assert strong.ids() == ["interface-too-old"]
    out = io.StringIO()
    render_text(result.to_json(), out)
    assert "[skel-missing, score" in out.getvalue()
    assert "(a guess: its symptoms resemble the text)" in out.getvalue()


def test_words_on_the_failing_line_count_more_than_the_environment_lines(tmp_path: Path) -> None:
    # Equally rare words, equally sized entries: only where the words stand differs.
    on_env = {
        "id": "a-environment-words",
        "title": "Quebec romeo broke",
        "patterns": [{"regex": "unrelated exact message one", "weight": 9}],
        "symptom_examples": ["quebec romeo"],
    }
    on_error = {
        "id": "z-error-line-words",
        "title": "Xray yankee broke",
        "patterns": [{"regex": "unrelated exact message two", "weight": 9}],
        "symptom_examples": ["xray yankee"],
    }
    text = "machine: quebec romeo\n\n\nerror: xray yankee"
    result = diagnose(text, catalogue=_catalogue(tmp_path, on_env, on_error))
    assert result.ids() == ["z-error-line-words", "a-environment-words"]


def test_a_guess_may_rank_before_a_weak_match_that_is_doubtful_itself(tmp_path: Path) -> None:
    """A weak message (weight 4) that a known fact speaks against, or whose
    reports the rest of the text does not resemble, no longer keeps a guess
    that resembles the text far more in second place; a weak match without a
    doubt still does."""
    weak = {
        "id": "weak-elf",
        "title": "Stale library id",
        "patterns": [{"regex": "outside ELF segment", "weight": 4}],
        "symptom_examples": ["lib id mismatch: outside ELF segment in the stale vendor copy"],
        "facts": [{"fact": "os", "in": ["windows"], "effect": "support"}],
    }
    cat = _catalogue(tmp_path, weak, SKEL)
    text = (
        "error: RX VA outside ELF segment\n"
        "the skel library libQnnHtpV73Skel.so was not found on ADSP_LIBRARY_PATH=/dsp:/vendor"
    )
    android = from_items([Fact("os", "android", "ticket")])
    against = diagnose(text, catalogue=cat, facts=android)
    assert against.ids()[:2] == ["skel-missing", "weak-elf"]
    assert against.candidates[0].raised_by == "resemblance"
    assert "speaks against it" in str(against.doubt(1))
    out = io.StringIO()
    render_text(against.to_json(), out)
    assert "(a guess: the messages that matched are weak and doubtful)" in out.getvalue()
    # The same weak match with nothing against it (os unknown, and the text
    # resembles its reports): it stays first, the guess after it.
    resembling = text + "\nis it a stale vendor copy? lib id mismatch"
    kept = diagnose(resembling, catalogue=cat, text_facts=False)
    assert kept.ids()[:2] == ["weak-elf", "skel-missing"]
    assert kept.candidates[0].matched_score == 4 and kept.doubt(0) is None
    assert kept.candidates[1].raised_by == "resemblance"
