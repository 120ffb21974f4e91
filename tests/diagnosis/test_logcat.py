"""Android logcat prefixes taken off a failure text's lines, so a message the
catalogue reads across lines (a traceback) matches behind them too. The
failure texts are real ones from tests/diagnosis_corpus (made on the HTP
simulator), pasted the way ``adb logcat`` would print them."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers.corpus import corpus_case

from qnndoctor.diagnosis import diagnose
from qnndoctor.diagnosis.cleaning import clean_lines
from qnndoctor.diagnosis.logcat import unprefixed
from qnndoctor.diagnosis.severity import level
from qnndoctor.matrixdata import load_socs

SOCS = load_socs()


def _threadtime(index: int, line: str) -> str:
    return f"11-28 10:11:12.{index % 1000:03d}  1234  5678 E python  : {line}"


def _brief(index: int, line: str) -> str:
    return f"W/python.stderr( 4321): {line}"


def _android_studio(index: int, line: str) -> str:
    return f"2026-11-28 10:11:12.{index % 1000:03d} 1234-5678/com.example.app E/App: {line}"


@pytest.mark.parametrize("prefix", [_threadtime, _brief, _android_studio])
@pytest.mark.parametrize(
    ("part", "case_id"),
    [
        ("runtime/dev-enum-run.json", "run-010"),  # "Exception ignored in: ..." + TypeError
        ("runtime/dev-enum-run.json", "run-014"),  # the same, with a traceback between
    ],
)
def test_a_real_failure_behind_logcat_prefixes_gets_the_answer_it_gets_as_written(
    prefix: Callable[[int, str], str], part: str, case_id: str
) -> None:
    """The two texts whose traceback-spanning patterns broke behind a logcat
    prefix (bench/bench_robustness.py lost them both): the same first answer
    as the text without prefixes."""
    case = corpus_case(part, case_id)
    text = case["text"]
    assert diagnose(text, socs=SOCS).ids()[:1] == [case["expected"]]
    logged = "\n".join(prefix(i, line) for i, line in enumerate(text.splitlines()))
    assert diagnose(logged, socs=SOCS).ids()[:1] == [case["expected"]]
    # every line reads as it was written, indentation kept
    assert clean_lines(logged) == clean_lines(text)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("11-28 10:11:12.345  1234  5678 E QnnDsp  : Failed to load skel", "Failed to load skel"),
        ("2026-11-28 10:11:12.345  1234  5678 E tag: year", "year"),  # -v year
        ("1732789872.345  1234  5678 E tag: epoch", "epoch"),  # -v epoch
        ("11-28 10:11:12.345 10123  1234  5678 E tag: uid", "uid"),  # -v uid
        ("E/onnxruntime( 1234): brief", "brief"),
        ("11-28 10:11:12.345 E/tag( 1234): time", "time"),
        ("11-28 10:11:12.345 W/System.err: time without a pid", "time without a pid"),
        ("2026-11-28 10:11:12.345 1234-5678/com.example.app E/QnnDsp: studio", "studio"),
        (
            "09-27 03:31:40.850 28552 28862 I [Qnn ExecuTorch]: a tag with a blank",
            "a tag with a blank",
        ),
        ("11-28 10:11:12.345  1234  5678 E tag:", ""),
        # no logcat lines: left as they are
        ("I/O error: disk full", "I/O error: disk full"),
        ("A/B: testing", "A/B: testing"),
        ("Error: 11-28 10:11:12.345 happened", "Error: 11-28 10:11:12.345 happened"),
        ("2026-11-28 10:11:12.345 [E:onnxruntime:, x.cc:1 f] desktop", None),
    ],
)
def test_the_prefix_of_each_logcat_format_comes_off(line: str, message: str | None) -> None:
    assert unprefixed([line]) == [line if message is None else message]


def test_onnxruntime_lines_keep_their_level_and_lose_the_android_sinks_blank() -> None:
    """onnxruntime's Android log sink writes " [V:onnxruntime:, ...] ..." under
    the onnxruntime tag: the line reads as on a desktop, still at its level.
    A line of that tag with no level of its own keeps the logcat level when it
    is a quiet one (narration stays narration)."""
    lines = [
        "11-28 10:11:12.345  1234  5678 V onnxruntime:  [V:onnxruntime:, qnn.cc:1 f] Validation",
        "11-28 10:11:12.346  1234  5678 E onnxruntime:  [E:onnxruntime:, session.cc:2 g] Failed",
        "11-28 10:11:12.347  1234  5678 I onnxruntime:  plain info",
        "11-28 10:11:12.348  1234  5678 E onnxruntime:  plain error",
    ]
    out = unprefixed(lines)
    assert out[:2] == [
        "[V:onnxruntime:, qnn.cc:1 f] Validation",
        "[E:onnxruntime:, session.cc:2 g] Failed",
    ]
    assert [level(line) for line in out] == ["V", "E", "I", None]
    assert out[3] == "plain error"  # untagged: loud, as an error line is
