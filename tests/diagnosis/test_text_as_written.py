"""The diagnosis engine reading a text as it is written: messages re-wrapped at
word boundaries, QNN's hex error codes, harmless lines removed before matching."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.catalogues import write_catalogue

from qnndoctor.diagnosis import diagnose
from qnndoctor.matrixdata import load_socs

SOCS = load_socs()


def test_a_message_wrapped_at_word_boundaries_is_still_recognised(tmp_path: Path) -> None:
    """Terminals, mail clients and issue forms hard-wrap long lines; a literal
    space of a pattern also matches a line break, a quantified space or a space
    inside a character class keeps its meaning, and evidence shows the regex as written."""
    entry = {
        "id": "wrapped",
        "title": "w",
        "patterns": [
            {"regex": "Failed to generate EP context model since the file", "weight": 9},
            {"regex": "model_ctx\\.onnx'[^ ]* exists", "weight": 4},
            {"regex": "FAIL : *Failed", "weight": 4},
        ],
    }
    cat = write_catalogue(tmp_path, [entry])
    wrapped = (
        "onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL :\n"
        "Failed to generate EP context model since the\n"
        "   file 'model_ctx.onnx' exists already."
    )
    result = diagnose(wrapped, catalogue=cat, text_facts=False)
    assert result.ids() == ["wrapped"]
    assert result.top is not None
    shown = [e.pattern for e in result.top.evidence]
    assert shown == [
        "Failed to generate EP context model since the file",
        "model_ctx\\.onnx'[^ ]* exists",
    ]
    # a quantified space does not cross the line break: 'FAIL : *Failed' stays unmatched
    assert "FAIL : *Failed" not in shown
    # words that merely follow each other on separate lines with text between do not join
    assert diagnose("Failed to generate EP\ncontext: x model", catalogue=cat).candidates == ()


@pytest.mark.parametrize(
    ("gap", "joins"),
    [
        (" ", True),
        ("\t ", True),
        ("\n", True),
        ("\r\n   ", True),
        ("  \n\t", True),
        ("\u00a0", True),  # a web page's no-break space, pasted
        ("\n\n", False),  # a blank line ends the message
        ("\r\n\r\n", False),
        ("", False),  # a space is not optional
    ],
)
def test_a_wrap_is_any_white_space_with_at_most_one_line_break(
    tmp_path: Path, gap: str, joins: bool
) -> None:
    """What a literal space of a pattern accepts between its words."""
    entry = {"id": "gap", "title": "g", "patterns": [{"regex": "Failed to finalize", "weight": 9}]}
    cat = write_catalogue(tmp_path, [entry])
    found = diagnose(f"Failed{gap}to finalize QNN graph", catalogue=cat, text_facts=False)
    assert (found.ids() == ["gap"]) is joins


def test_a_qnn_error_code_written_in_hex_reads_as_its_decimal_code(tmp_path: Path) -> None:
    """QNN's own lines say "err 0x1388", onnxruntime and the catalogue 5000."""
    entry = {
        "id": "code-5000",
        "title": "c",
        "patterns": [{"regex": "context from binary.*?err\\s*5000\\b", "weight": 7}],
    }
    other = {
        "id": "status-zero",
        "title": "s",
        "patterns": [{"regex": "status 0x0\\b", "weight": 5}],
    }
    cat = write_catalogue(tmp_path, [entry, other])
    hex_line = "QnnDsp <E> Failed to create context from binary with err 0x1388"
    assert diagnose(hex_line, catalogue=cat, text_facts=False).ids() == ["code-5000"]
    # the line's own words stay: a pattern written against them still matches
    assert diagnose("QnnDevice_create done. status 0x0", catalogue=cat).ids() == ["status-zero"]
    # another code, an address, or a hex value after another word: no 5000
    for text in (
        "Failed to create context from binary with err 0x3ea",
        "Failed to create context from binary at 0x1388, err 0x7fff13880000",
        "Failed to create context from binary: version 0x1388",
    ):
        assert diagnose(text, catalogue=cat, text_facts=False).ids() == [], text


def test_harmless_lines_are_removed_before_matching(tmp_path: Path) -> None:
    entry = {"id": "htp", "title": "h", "patterns": [{"regex": "HtpProvider", "weight": 5}]}
    cat = write_catalogue(tmp_path, [entry])
    result = diagnose("QnnDsp <W> Initializing HtpProvider\nall fine", catalogue=cat)
    assert result.candidates == ()
    assert result.verdict.harmless == ((1, "cosmetic"),)


def test_default_backend_warning_is_harmless_and_buries_no_real_error() -> None:
    # Printed by the 1.22+ QNN EP when neither backend_type nor backend_path is given
    # (microsoft/onnxruntime#24235): alone it is no failure; beside a real error the
    # error still answers first.
    warning = (
        "[W:onnxruntime:FoundryLocalCore, qnn_execution_provider.cc:370 "
        "onnxruntime::QNNExecutionProvider::QNNExecutionProvider] "
        "Unable to determine backend path from provider options. Using default."
    )
    alone = diagnose(warning, socs=SOCS)
    assert alone.candidates == ()
    assert [name for _, name in alone.verdict.harmless] == ["qnn-ep-default-backend-path"]
    error = "QNN SetupBackend failed Unable to find a valid interface for /usr/lib/libQnnHtp.so"
    beside = diagnose(warning + "\n" + error, socs=SOCS)
    assert beside.top is not None
    assert beside.top.signature.id == diagnose(error, socs=SOCS).ids()[0]
    assert [name for _, name in beside.verdict.harmless] == ["qnn-ep-default-backend-path"]
