"""How a log's bytes become text at its smallest and oddest (issue 29, part 4):
a few bytes of binary are refused like a big binary is, while text in every
encoding Windows tools write (UTF-16 with or without a byte order mark, as
Windows PowerShell 5.1's ``>`` and ``Out-File`` write) is read, however short."""

from __future__ import annotations

import codecs
import io
import json
from pathlib import Path

import pytest

from qnndoctor.diagnosis import diagnose
from qnndoctor.diagnosis.logfile import NotText, read_log
from qnndoctor.matrixdata import load_socs

CORPUS = Path(__file__).parents[1] / "diagnosis_corpus"


def _read(raw: bytes) -> str:
    return read_log(io.BytesIO(raw), "log.txt").read.text


@pytest.mark.parametrize(
    "raw",
    [
        b"x\x00\x01\x02",  # was read as UTF-16: "x" and U+0201
        b"x\x00\x01\x02" * 4,
        b"\x00",
        b"\xff",
        b"\x00\x00\x00\x00",
        b"\x01\x00\x02\x00\x03\x00\x04\x00",  # NULs where UTF-16 has them, control characters
    ],
)
def test_a_few_bytes_of_binary_are_refused(raw: bytes) -> None:
    with pytest.raises(NotText, match=r"^log\.txt is not a text log: .*give the log as text$"):
        _read(raw)


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (b"", ""),
        (b"x", "x"),
        (codecs.BOM_UTF16_LE, ""),  # a lone byte order mark: an empty file in that encoding
        (codecs.BOM_UTF16_BE, ""),
        (codecs.BOM_UTF8, ""),
        ("ok\n".encode("utf-16-le"), "ok\n"),  # short UTF-16 without a BOM
        ("ok\n".encode("utf-16-be"), "ok\n"),
        (codecs.BOM_UTF16_LE + "ok\r\n".encode("utf-16-le"), "ok\r\n"),
        ("ok".encode("utf-16-le") + b"o", "ok"),  # cut inside its last character
        ("größer ≥ 2.32\n".encode("utf-16-le"), "größer ≥ 2.32\n"),
    ],
)
def test_tiny_and_empty_text_is_read(raw: bytes, text: str) -> None:
    assert _read(raw) == text


@pytest.mark.parametrize("bom", [True, False])
def test_a_real_failure_in_utf16_gets_its_answer(bom: bool) -> None:
    """A real failure text (tests/diagnosis_corpus/dev.json) written by Windows
    PowerShell 5.1's ``>`` (UTF-16 LE with a BOM, CRLF) and without its BOM."""
    case = json.loads((CORPUS / "dev.json").read_text("utf-8"))["cases"][0]
    written = case["text"].replace("\n", "\r\n").encode("utf-16-le")
    text = _read((codecs.BOM_UTF16_LE if bom else b"") + written)
    socs = load_socs()
    assert diagnose(text, socs=socs).ids()[:1] == [case["expected"]]
