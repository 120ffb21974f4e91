"""A failure text re-wrapped at a fixed width (a mail client, ``fold -s``,
``textwrap``) gets the answer it gets as written: patterns that span the wrap
with ``[^\\n]*`` match the text with its wraps rejoined. Real texts from
tests/diagnosis_corpus (made on the HTP simulator), wrapped here by
Python's own ``textwrap``."""

from __future__ import annotations

import textwrap

import pytest
from helpers.corpus import corpus_case

from qnndoctor.diagnosis import diagnose
from qnndoctor.diagnosis.cleaning import clean_lines
from qnndoctor.diagnosis.unwrap import MAX_LINES, rejoined, width
from qnndoctor.matrixdata import load_socs

SOCS = load_socs()


def _wrapped(text: str, columns: int) -> str:
    """Every line longer than ``columns`` wrapped at its spaces (a word longer
    than that on a line of its own), as a mail client does."""
    out: list[str] = []
    for line in text.splitlines():
        out += textwrap.wrap(line, columns, break_long_words=False, break_on_hyphens=False) or [
            line
        ]
    return "\n".join(out)


@pytest.mark.parametrize("columns", [60, 80])
@pytest.mark.parametrize(
    ("part", "case_id"),
    [
        # InferenceSession('...',\nso, providers=['QNNExecutionProvider']: one source line
        ("runtime/dev-enum-api.json", "api-014"),
        # incompatible constructor arguments[\s\S]{0,400}?...Invoked with: [^\n]*, 'ERROR_IF...'
        ("runtime/dev-enum-api.json", "api-032"),
        # Unsupported nodes in QNN EP: \{[^}\n]*type: EPContext \}
        ("runtime/dev-enum-ctx.json", "ctx-032"),
        # \[EP context generation:\][^\n]{0,120}conflict with EP context embed mode
        ("runtime/dev-enum-options.json", "eo-039"),
    ],
)
def test_a_real_failure_rewrapped_gets_the_answer_it_gets_as_written(
    columns: int, part: str, case_id: str
) -> None:
    case = corpus_case(part, case_id)
    assert diagnose(case["text"], socs=SOCS).ids()[:1] == [case["expected"]]
    wrapped = _wrapped(case["text"], columns)
    assert width(clean_lines(wrapped)) == max(
        len(line) for line in wrapped.splitlines() if " " in line.strip()
    )
    assert diagnose(wrapped, socs=SOCS).ids()[:1] == [case["expected"]]


def test_the_rejoined_text_has_the_same_positions() -> None:
    """A wrap's line break becomes the space it replaced: the same length, so
    a match found in it is at the same place in the text as written."""
    text = _wrapped(corpus_case("runtime/dev-enum-api.json", "api-032")["text"], 80)
    joined = rejoined(text)
    assert joined is not None and len(joined) == len(text)
    assert [i for i, (a, b) in enumerate(zip(text, joined, strict=True)) if a != b] == [
        i for i, c in enumerate(text) if c == "\n" and joined[i] == " "
    ]
    assert "incompatible constructor arguments. The following argument types" in joined
    assert "\n" in joined  # the traceback's own lines stay lines


@pytest.mark.parametrize(
    ("part", "case_id"),
    [
        ("runtime/dev-enum-api.json", "api-024"),  # a traceback: long File lines, carets
        ("runtime/dev-enum-api.json", "api-061"),
        ("dev.json", "dev-036"),  # a logcat of equally long records
        ("dev.json", "dev-002"),  # long unbreakable paths after a sentence
    ],
)
def test_a_text_as_written_is_not_taken_for_a_wrapped_one(part: str, case_id: str) -> None:
    """Logs whose lines end near their longest one for other reasons: no width."""
    assert width(clean_lines(corpus_case(part, case_id)["text"])) is None


def test_tiny_and_empty_texts_are_not_wrapped() -> None:
    assert rejoined("") is None
    assert rejoined("one line") is None
    assert rejoined("a\nb\nc") is None


def test_a_long_log_is_never_taken_for_a_wrapped_text() -> None:
    """A pasted message is wrapped, a saved log is not: past MAX_LINES lines
    the shape is not even looked for (it would cost a look at every line)."""
    wrapped = _wrapped(corpus_case("runtime/dev-enum-api.json", "api-032")["text"], 80)
    assert rejoined(wrapped) is not None
    lines = wrapped.splitlines()
    long_log = "\n".join(lines * (MAX_LINES // len(lines) + 1))
    assert rejoined(long_log) is None
