"""Text across Windows' encodings. In: Windows PowerShell 5.1 writes UTF-16
with a BOM for ``>`` (so the README's ``qnndoctor check --json > ticket.json``
does), Notepad writes UTF-8 with a BOM; both are read as what they are. Out:
JSON written to a stream in a code page (redirected output on Windows) is
ASCII with escapes, so no character of a path is lost on the way."""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CliResult

from qnndoctor.decoding import decode, encoding_of

Cli = Callable[..., CliResult]

LOG = (
    "Traceback (most recent call last):\r\n"
    '  File "C:\\app\\run.py", line 3, in <module>\r\n'
    "ModuleNotFoundError: No module named 'onnxruntime_qnn'\r\n"
)
# How each tool writes text: (name, bytes of LOG).
SAVED = [
    ("powershell-5.1 redirect (UTF-16 LE + BOM)", codecs.BOM_UTF16_LE + LOG.encode("utf-16-le")),
    ("UTF-16 BE + BOM", codecs.BOM_UTF16_BE + LOG.encode("utf-16-be")),
    ("UTF-16 LE without BOM", LOG.encode("utf-16-le")),
    ("notepad UTF-8 + BOM", codecs.BOM_UTF8 + LOG.encode("utf-8")),
    ("UTF-32 LE + BOM", codecs.BOM_UTF32_LE + LOG.encode("utf-32-le")),
    ("plain UTF-8", LOG.encode("utf-8")),
]


@pytest.mark.parametrize(("how", "raw"), SAVED, ids=[h for h, _ in SAVED])
def test_a_log_saved_by_any_windows_tool_is_explained(
    cli: Cli, tmp_path: Path, how: str, raw: bytes
) -> None:
    assert decode(raw) == LOG
    log = tmp_path / "log.txt"
    log.write_bytes(raw)
    result = cli("explain", "--log", str(log), "--json")
    assert result.code == 0, how
    assert result.json()["candidates"][0]["id"] == "onnxruntime-qnn-module-not-found"


def test_a_ticket_saved_by_windows_powershell_is_rediagnosed(cli: Cli, tmp_path: Path) -> None:
    saved = cli("check", "--json", "--no-smoke", "--python", sys.executable)
    assert saved.code in (0, 1)
    text = saved.out.replace("\n", "\r\n")
    for name, raw in (
        ("utf16.json", codecs.BOM_UTF16_LE + text.encode("utf-16-le")),
        ("bom.json", codecs.BOM_UTF8 + text.encode("utf-8")),
    ):
        path = tmp_path / name
        path.write_bytes(raw)
        again = cli("check", "--from-report", str(path), "--json")
        assert again.code == saved.code, (name, again.err)
        assert again.json()["findings"] == saved.json()["findings"]
        log = tmp_path / "log.txt"
        log.write_text(LOG, encoding="utf-8")
        explained = cli("explain", "--log", str(log), "--from-report", str(path), "--json")
        assert explained.code == 0, explained.err
        sources = {f["source"] for f in explained.json()["facts"]["used"]}
        assert any(s.startswith("saved report") for s in sources), sources


def test_text_that_is_not_utf16_stays_utf8_and_bad_bytes_stay_an_error(tmp_path: Path) -> None:
    assert encoding_of("héllo wörld, plain UTF-8".encode()) == ("utf-8", 0)
    assert encoding_of(b"") == ("utf-8", 0)
    assert encoding_of(b"\x00\x00\x00\x00binary-ish") == ("utf-8", 0)  # NULs on both sides
    with pytest.raises(UnicodeDecodeError):
        decode(b'{"x": "\xff"}')
    assert decode(b'{"x": "\xff"}', errors="replace") == '{"x": "\ufffd"}'


def test_json_on_a_code_page_stream_is_ascii_and_loses_nothing(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    path = "C:\\Users\\Jürgen 李\\model.onnx"
    log.write_text(f"Failed to load model {path}\n{LOG}", encoding="utf-8")
    argv = [
        sys.executable,
        "-m",
        "qnndoctor",
        "explain",
        "--log",
        str(log),
        "--json",
        "--no-redact",
    ]
    outputs = {}
    for encoding in ("cp1252", "utf-8"):
        done = subprocess.run(
            argv,
            env={**os.environ, "PYTHONIOENCODING": encoding},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        outputs[encoding] = done.stdout
    outputs["cp1252"].decode("ascii")  # nothing a code page could change
    assert "李".encode() in outputs["utf-8"]  # a UTF-8 stream gets the characters
    document = json.loads(outputs["cp1252"])
    assert document == json.loads(outputs["utf-8"])
    assert "Jürgen 李" in json.dumps(document, ensure_ascii=False)  # as written in the log


def test_text_on_a_code_page_stream_escapes_what_it_cannot_encode(tmp_path: Path) -> None:
    """Text output redirected on Windows uses the code page: a character it
    lacks is written as its escape, not as '?', which would look like the
    mis-encoded path itself."""
    log = tmp_path / "log.txt"
    log.write_text(f"Failed to load model C:\\Users\\Jürgen 李\\model.onnx\n{LOG}", "utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "qnndoctor", "explain", "--log", str(log), "--no-redact"],
        env={**os.environ, "PYTHONIOENCODING": "cp1252"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    text = done.stdout.decode("cp1252")
    assert "Jürgen \\u674e" in text  # 'ü' is in cp1252, '李' is not
    assert "Jürgen ?" not in text
