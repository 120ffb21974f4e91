"""Bad input files get a clear error, never a traceback: deeply nested JSON,
truncated tickets, reports without facts, corrupt or invalid cached matrices."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult, validate_report

from qnndoctor import matrixdata, safejson
from qnndoctor._layout import package_dir
from qnndoctor.matrixdata.checked import STAMP_SUFFIX

Cli = Callable[..., CliResult]
BUNDLED_TEXT = (package_dir("matrix") or Path()).joinpath("releases.json").read_text("utf-8")
DEEP = "[" * 200_000 + "]" * 200_000  # RecursionError in json.loads
NESTED = '{"a":' * 500 + "1" + "}" * 500  # parses, but deeper than any real document


@pytest.fixture(scope="module")
def ticket(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real report of this test interpreter, saved as a ticket would be."""
    from qnndoctor.cli.main import main

    path = tmp_path_factory.mktemp("ticket") / "report.json"
    with path.open("w", encoding="utf-8") as out:
        sys_stdout, sys.stdout = sys.stdout, out
        try:
            main(["check", "--python", sys.executable, "--json", "--no-smoke"])
        finally:
            sys.stdout = sys_stdout
    loaded: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return loaded


def _variants(ticket: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """name -> (file content, words the error must contain)."""
    text = json.dumps(ticket, indent=2)
    return {
        "deeply-nested": (DEEP, "nested too deeply"),
        "nested-below-the-recursion-limit": (NESTED, "nested deeper than 64 levels"),
        "truncated": (text[: len(text) // 2], "looks truncated"),
        "facts-a-list": (json.dumps({**ticket, "facts": [1, 2]}), "'facts' is an array"),
        "facts-a-string": (json.dumps({**ticket, "facts": "x"}), "'facts' is a string"),
        "no-facts": (json.dumps({**ticket, "facts": {}}), "the report has no facts"),
        "error-document": (
            json.dumps(
                {
                    **ticket,
                    "facts": {},
                    "error": {"kind": "could-not-check", "message": "probe timed out"},
                }
            ),
            "could not check (probe timed out)",
        ),
        "smoke-child-a-string": (
            json.dumps({**ticket, "smoke": {**ticket["smoke"], "child": "notadict"}}),
            "'smoke' has an unexpected shape: child is a string",
        ),
        "smoke-exception-a-string": (
            json.dumps(
                {
                    **ticket,
                    "smoke": {
                        **ticket["smoke"],
                        "status": "failed",
                        "child": {"status": "failed", "exception": "notadict"},
                    },
                }
            ),
            "exception is str",
        ),
        "not-utf8": ('{"x": "\udcff"}', "not UTF-8"),
        "a-list": ("[]", "not a qnndoctor"),
    }


VARIANTS = [
    "deeply-nested",
    "nested-below-the-recursion-limit",
    "truncated",
    "facts-a-list",
    "facts-a-string",
    "no-facts",
    "error-document",
    "smoke-child-a-string",
    "smoke-exception-a-string",
    "not-utf8",
    "a-list",
]


def _write(tmp_path: Path, content: str) -> Path:
    path = tmp_path / "ticket.json"
    path.write_bytes(content.encode("utf-8", errors="surrogateescape"))
    return path


def test_the_ticket_itself_is_good(cli: Cli, ticket: dict[str, Any], tmp_path: Path) -> None:
    """The control: the unbroken ticket is re-diagnosed."""
    again = cli("check", "--from-report", str(_write(tmp_path, json.dumps(ticket))), "--json")
    assert again.code in (0, 1) and "Traceback" not in again.err
    validate_report(again.json())


@pytest.mark.parametrize("name", VARIANTS)
@pytest.mark.parametrize("command", ["check", "explain"])
def test_a_bad_ticket_is_a_clear_error(
    cli: Cli, ticket: dict[str, Any], tmp_path: Path, name: str, command: str
) -> None:
    content, words = _variants(ticket)[name]
    path = _write(tmp_path, content)
    log = tmp_path / "log.txt"
    log.write_text("QnnDsp <E> Failed to load skel\n")
    extra = ["--log", str(log)] if command == "explain" else []
    for json_flag in (["--json"], []):
        result = cli(command, "--from-report", str(path), *extra, *json_flag)
        assert result.code == 2, result.err
        assert words in result.err
        assert "Traceback" not in result.err
        if json_flag:  # still exactly one JSON document on stdout
            document = json.loads(result.out)
            assert document["error"]["kind"] == "bad-input"
            assert words in document["error"]["message"]
            if command == "check":
                validate_report(document)
        else:
            assert result.out == ""


# Every kind of token a report holds: literals, negative and exponent numbers,
# escapes (a surrogate pair too), nesting; compact and indented, ASCII and not.
_SAMPLE = {
    "a": [True, False, None, -12.5e-3, 0, 'x\u00e9\\"y\n', {"b": {}}],
    "c": 1e10,
    "d": "\U0001f600",
}
_SAMPLES = [
    json.dumps(_SAMPLE, indent=1),
    json.dumps(_SAMPLE, ensure_ascii=False, separators=(",", ":")),
]


@pytest.mark.parametrize("text", _SAMPLES, ids=["indented", "compact"])
def test_a_document_cut_anywhere_is_called_truncated(text: str) -> None:
    """CI once cut a ticket inside `true`; its error said only "Expecting value"."""
    said = {}
    for end in range(len(text)):
        with pytest.raises(safejson.BadJSON) as caught:
            safejson.loads(text[:end], "ticket")
        said[text[max(0, end - 10) : end]] = str(caught.value)
    assert [cut for cut, error in said.items() if "looks truncated" not in error] == []


@pytest.mark.parametrize(
    "text",
    [
        '{"a": tru e}',
        '{"a": -x}',
        '{"a": 1.x}',
        '{"a": 1ee}',
        '{"a": "\\u12zz"}',
        '{"a" 1}',
        "[1,]",
    ],
)
def test_a_wrong_document_is_not_called_truncated(text: str) -> None:
    with pytest.raises(safejson.BadJSON) as caught:
        safejson.loads(text, "ticket")
    assert "not valid JSON" in str(caught.value)
    assert "truncated" not in str(caught.value)


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    matrixdata.load.cache_clear()
    folder = tmp_path / "cache" / "qnndoctor" / "matrix"
    folder.mkdir(parents=True)
    yield folder
    matrixdata.load.cache_clear()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"releases": []}', "does not match the releases schema"),
        ('{"releases": [{"version": "x"}]}', "does not match the releases schema"),
        (DEEP, "nested too deeply"),
        (NESTED, "nested deeper than 64 levels"),
        (BUNDLED_TEXT[:5000], "looks truncated"),
        ("\x00\x01garbage", "not valid JSON"),
    ],
)
def test_an_unusable_cached_matrix_is_ignored_and_said_so(
    cli: Cli, user_cache: Path, content: str, reason: str
) -> None:
    (user_cache / "releases.json").write_text(content)
    result = cli("recommend", "--python", sys.executable, "--json")
    assert "Traceback" not in result.err
    assert "ignored the updated matrix in the user cache" in result.err
    assert reason in result.err
    assert "using the bundled qnndoctor.matrix" in result.err
    rec = result.json()["recommendation"]
    assert rec["status"] != "no-matrix" and "bundled" in rec["matrix"]
    report = cli("check", "--python", sys.executable, "--json", "--no-smoke")
    assert reason in report.err
    matrix = report.json()["matrix"]
    assert "bundled" in matrix["releases"]
    assert any(reason in note for note in matrix["notes"])


def test_a_valid_cached_matrix_is_checked_once_per_content(cli: Cli, user_cache: Path) -> None:
    cached = user_cache / "releases.json"
    cached.write_text(BUNDLED_TEXT)
    assert "user cache" in (matrixdata.load().releases_source or "")
    stamp = cached.with_name(cached.name + STAMP_SUFFIX)
    assert stamp.is_file()  # checked against the schema, and stamped
    # Changed afterwards into something invalid: the stamp no longer fits.
    document = json.loads(BUNDLED_TEXT)
    document["releases"][0]["files"] = "oops"
    cached.write_text(json.dumps(document))
    matrixdata.load.cache_clear()
    loaded = matrixdata.load()
    assert "bundled" in (loaded.releases_source or "")
    assert any("releases/0/files" in note for note in loaded.notes)


@pytest.mark.parametrize("command", ["check", "recommend", "matrix"])
@pytest.mark.parametrize(
    ("content", "words"),
    [
        (DEEP, "nested too deeply"),
        (NESTED, "deeper"),
        ('{"releases": []}', "contains no releases"),
        ("[]", "not a JSON object"),
    ],
)
def test_a_bad_matrix_option_is_a_clear_error(
    cli: Cli, tmp_path: Path, command: str, content: str, words: str
) -> None:
    path = tmp_path / "releases.json"
    path.write_text(content)
    argv = {
        "check": ["check", "--python", sys.executable, "--no-smoke", "--json"],
        "recommend": ["recommend", "--python", sys.executable],
        "matrix": ["matrix"],
    }[command]
    matrixdata.load.cache_clear()
    result = cli(*argv, "--matrix", str(path))
    assert result.code == 3
    assert words in result.err and "Traceback" not in result.err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_without_a_writer_does_not_hang(
    cli: Cli, ticket: dict[str, Any], tmp_path: Path
) -> None:
    """A real FIFO named as the ticket or the log: nobody writes, so it reads
    as empty (a clear error) instead of blocking forever in open()."""
    fifo = tmp_path / "ticket.json"
    os.mkfifo(fifo)
    result = cli("check", "--from-report", str(fifo), "--json")
    assert result.code == 2 and "ticket.json is empty" in result.err
    log = cli("explain", "--log", str(fifo), "--no-facts")
    assert log.code == 1 and "No known failure cause" in log.out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_with_a_writer_is_read(cli: Cli, ticket: dict[str, Any], tmp_path: Path) -> None:
    """Like ``--from-report <(cat ticket.json)``: a pipe with a writer works."""
    fifo = tmp_path / "ticket.json"
    os.mkfifo(fifo)
    text = json.dumps(ticket).encode()
    read_end = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # lets the writer open at once
    writer = os.open(fifo, os.O_WRONLY)

    def write() -> None:
        os.write(writer, text)
        os.close(writer)

    done = threading.Thread(target=write)
    try:
        done.start()
        result = cli("check", "--from-report", str(fifo), "--json")
    finally:
        done.join(timeout=60)
        os.close(read_end)
    assert result.code in (0, 1), result.err
    validate_report(result.json())
