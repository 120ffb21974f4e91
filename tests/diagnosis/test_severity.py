"""A line's log level, read the way onnxruntime and QNN print it (lines from
real logs: the HTP simulator's, an Android logcat, QNN's tools)."""

from __future__ import annotations

import re

import pytest

from qnndoctor.diagnosis.severity import level, level_at, loud_match, quiet_at


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "2026-11-27 13:40:36.274 [V:onnxruntime:, qnn_execution_provider.cc:1713 "
            "LogNodeSupport] Validation FAILED for 1 nodes in OrtNodeUnit (QuantizeLinear) :",
            "V",
        ),
        (
            "2026-11-27 [I:onnxruntime:Default, utils.cc:732 LoadPluginOrProviderBridge] Loading",
            "I",
        ),
        ("2026-11-27 [W:onnxruntime:, qnn_model_wrapper.cc:565 CreateQnnNode] failed", "W"),
        ("2026-11-27 [E:onnxruntime:, inference_session.cc:3181 operator()] fallback", "E"),
        # QNN's own level, relayed by onnxruntime's QnnLogging at [V]: the error counts
        (
            "[V:onnxruntime:Default, qnn_backend_manager.cc:251 QnnLogging]  <E> Failed to "
            "load skel, error: 4000",
            "E",
        ),
        ("[V:onnxruntime:Default, qnn_backend_manager.cc:251 QnnLogging]  <V> exits", "V"),
        ("08-04 13:56:51.508 20286 20355 V onnxruntime:  [V:onnxruntime:Default, x.cc:1 f]", "V"),
        ("08-04 13:56:51.508 20286 20355 E onnxruntime:  QNN SetupBackend failed", "E"),
        ("124.9ms [ ERROR ] Unsupported input/output datatypes requested for the HTP Op", "E"),
        ("0.2ms [ INFO ] QNN backend initialized", "I"),
        ("graph_prepare.cc:2808:ERROR:Graph prepare TCM Migration action failed", "E"),
        ("FileNotFoundError: [Errno 2] No such file or directory: ''", None),
        ("Failed to finalize QNN graph. Error code: 1002", None),
    ],
)
def test_the_level_of_a_line(line: str, expected: str | None) -> None:
    assert level(line) == expected


NARRATED = (
    "2026 [V:onnxruntime:, qnn_execution_provider.cc:1713 LogNodeSupport] Validation FAILED "
    "for 1 nodes in OrtNodeUnit (Hardmax) :\n"
    "\tREASON : Operators of type `Hardmax` are not supported\n"
    "\n"
    "Traceback (most recent call last):\n"
    '  File "app.py", line 9, in <module>\n'
    "    open(session.end_profiling()).read()\n"
    "FileNotFoundError: [Errno 2] No such file or directory: ''\n"
)


def test_an_indented_line_continues_the_record_above_it() -> None:
    """QNN EP's REASON line is tab-indented under its [V] record; a traceback's
    indented lines continue its untagged first line, so they stay loud."""
    assert level_at(NARRATED, NARRATED.index("REASON")) == "V"
    assert quiet_at(NARRATED, NARRATED.index("REASON"))
    assert not quiet_at(NARRATED, NARRATED.index("open(session"))
    assert not quiet_at(NARRATED, NARRATED.index("FileNotFoundError"))


def test_a_loud_match_skips_the_narration() -> None:
    """The first match on a verbose line is passed over for a later one on a
    loud line; with none, there is no loud match."""
    text = (
        "[V:onnxruntime:, x.cc:1 f] Validation FAILED for 1 nodes in OrtNodeUnit (Det) :\n"
        "[V:onnxruntime:, x.cc:1 f] Validation FAILED for 2 nodes in OrtNodeUnit (If) :\n"
        "Validation FAILED for 1 nodes (NodeUnit): Operator type: BatchNormalization\n"
    )
    regex = re.compile(r"Validation FAILED for \d+ nodes")
    first = regex.search(text)
    assert first is not None
    loud = loud_match(regex, text, first)
    assert loud is not None and text[loud.start() :].startswith("Validation FAILED for 1 nodes (")
    only_quiet = text.rsplit("\n", 2)[0]
    first = regex.search(only_quiet)
    assert first is not None and loud_match(regex, only_quiet, first) is None


def test_the_lines_shown_as_the_failure_are_loud_ones_when_there_are_any() -> None:
    """With no catalogued cause, explain shows the lines that read like the
    failure: an error line, not the narration around it; narration only when
    nothing louder reads like a failure (so nothing is lost)."""
    from qnndoctor.diagnosis.resemblance import failure_lines

    narration = [
        "2026 [V:onnxruntime:, x.cc:1 LogNodeSupport] Validation FAILED for 1 nodes in (Det) :",
        "\tREASON : Operators of type `Det` are not supported by QNN EP.",
        "2026 [V:onnxruntime:, x.cc:1 LogNodeSupport] Validation FAILED for 2 nodes in (If) :",
    ]
    error = "2026 [E:onnxruntime:, x.cc:9 Run] Something unknown failed in the run"
    shown = failure_lines([*narration, error], frozenset())
    assert [number for number, _ in shown] == [4]
    assert [number for number, _ in failure_lines(narration, frozenset())] == [1, 2, 3]


def test_the_words_of_a_failure_are_read_without_the_narration() -> None:
    """What a text resembles is read from its loud records: a verbose record and
    its indented continuation go, a traceback stays; a text of narration only is
    kept whole (nothing to compare otherwise)."""
    from qnndoctor.diagnosis.severity import without_narration

    assert without_narration(NARRATED) == NARRATED[NARRATED.index("\nTraceback") :]
    only = NARRATED[: NARRATED.index("\n\nTraceback")]
    assert without_narration(only) == only
    assert without_narration("plain text\n") == "plain text\n"
