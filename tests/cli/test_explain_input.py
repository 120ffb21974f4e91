"""How `explain` reads its input (issue 29): binary input refused at once,
endless input capped, noise never read for facts, a long log read once per
distinct line with every line keeping its number, and the catalogue's
regex plans cached in the user cache folder (and not needed there)."""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from qnndoctor.diagnosis import diagnose, plancache
from qnndoctor.diagnosis.compact import COMPACT_FROM, Compactor, compact
from qnndoctor.diagnosis.logfile import NotText, read_log, readable

FAILURE = (
    "2024-05-02 10:11:12.345 [E:onnxruntime:, qnn_model_wrapper.cc:240 ComposeQnnGraph] "
    "Failed to finalize QNN graph. Error code: 1002"
)
VERBOSE = [
    "2024-05-02 10:11:{:02d}.{:06d} [V:onnxruntime:, qnn_backend_manager.cc:519 QnnLogging]"
    "  <V> Validating Op Config q_x.",
    "2024-05-02 10:11:{:02d}.{:06d} [V:onnxruntime:, qnn_execution_provider.cc:1713"
    " LogNodeSupport] Validation PASSED for 1 nodes in OrtNodeUnit (QuantizeLinear) :",
    "\tOperator type: QuantizeLinear Node name: q_x Node index: 0",
    "2024-05-02 10:11:{:02d}.{:06d} [I:onnxruntime:, inference_session.cc:547 "
    "ConstructorCommon] Creating and using per session threadpools",
]


def _verbose(lines: int) -> list[str]:
    out: list[str] = []
    while len(out) < lines:
        n = len(out)
        out += [line.format(n % 60, n) if "{" in line else line for line in VERBOSE]
    return out[:lines]


def _run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "qnndoctor", "explain", *args],
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
    )


def test_random_bytes_are_refused_at_once_with_a_clear_error(tmp_path: Path) -> None:
    junk = tmp_path / "core.bin"
    junk.write_bytes(random.Random(29).randbytes(3 * 1024 * 1024))
    done = _run("--log", str(junk))
    assert done.returncode == 2, done.stderr
    err = done.stderr.decode()
    assert "is not a text log" in err and "Traceback" not in err and done.stdout == b""
    as_json = _run("--json", "--log", "-", stdin=junk.read_bytes())
    assert as_json.returncode == 2
    error = json.loads(as_json.stdout)["error"]
    assert error["kind"] == "bad-input" and "not a text log" in error["message"]


def test_nul_padded_text_is_refused_but_utf16_logs_are_read(tmp_path: Path) -> None:
    padded = tmp_path / "padded.log"
    padded.write_bytes(b"\x00" * 5000 + FAILURE.encode() + b"\x00" * 5000)
    assert _run("--log", str(padded)).returncode == 2
    utf16 = tmp_path / "powershell.log"  # Windows PowerShell 5.1's `>`: NULs, but text
    utf16.write_bytes(("\ufeff" + FAILURE + "\r\n").encode("utf-16-le"))
    done = _run("--json", "--log", str(utf16))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["candidates"]


def test_four_bytes_of_binary_are_refused_like_a_big_binary(tmp_path: Path) -> None:
    """``x\\0\\1\\2`` was read as UTF-16 text (NULs on one side) and diagnosed."""
    tiny = tmp_path / "tiny.bin"
    tiny.write_bytes(b"x\x00\x01\x02")
    done = _run("--log", str(tiny))
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode().startswith(f"qnndoctor: error: {tiny} is not a text log: ")
    as_json = _run("--json", "--log", "-", stdin=tiny.read_bytes())
    assert as_json.returncode == 2
    assert json.loads(as_json.stdout)["error"]["kind"] == "bad-input"


class _Endless(io.RawIOBase):
    """A pipe whose writer never stops."""

    def readable(self) -> bool:
        return True

    at = 0  # where in its one repeated line the writer is

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        line = (FAILURE + "\n").encode()
        start = self.at % len(line)
        data = (line * (len(buffer) // len(line) + 2))[start : start + len(buffer)]
        buffer[: len(data)] = data
        self.at += len(data)
        return len(data)


def test_endless_input_is_capped_and_the_answer_says_so() -> None:
    log = read_log(io.BufferedReader(_Endless()), "stdin", max_bytes=3 * 1024 * 1024)
    assert log.bytes_read == 3 * 1024 * 1024
    assert log.truncated is not None and "first 3 MiB of stdin" in log.truncated
    # one distinct line (and the last, cut short by the cap), read once with its neighbours
    assert log.read.compacted and log.read.kept <= 4
    assert diagnose(log.read).ids()[:1] == diagnose(FAILURE).ids()[:1]
    lines = read_log(io.BufferedReader(_Endless()), "stdin", max_lines=1000)
    assert lines.truncated is not None and "1,000 lines" in lines.truncated


def test_no_fact_is_read_from_a_line_of_noise() -> None:
    controls = [*range(1, 9), *range(14, 27), *range(28, 32)]  # no line ends, no escape
    noise = "".join(chr(c) for c in random.Random(7).choices(controls, k=60))
    text = f"{FAILURE}\n{noise} WSL2 Ubuntu /usr/lib/ {noise}\n"
    assert "wsl" not in {f.key for f in diagnose(text).facts}
    assert readable("ok line\n" + noise + "\n") == "ok line\n\n"
    # a few stray control bytes in a real line are taken out, the line is read
    assert readable(FAILURE + "\x00\x01\x02\n") == FAILURE + "\n"


def test_a_long_log_is_read_once_per_distinct_line_and_keeps_its_line_numbers() -> None:
    body = _verbose(40_000)
    text = "\n".join([*body[:20_000], "Python 3.11.9 on WSL2", FAILURE, *body[20_000:]]) + "\n"
    assert len(text) > COMPACT_FROM
    read = compact(text)
    assert read.compacted and read.lines == 40_002 and read.kept < 40
    kept = read.text.split("\n")
    assert len(kept) == len(text.split("\n"))  # every line keeps its number
    assert kept[20_001] == FAILURE
    # a kept continuation line keeps the record it belongs to (its level)
    for index, line in enumerate(kept):
        if line.startswith("\t"):
            assert "[V:onnxruntime" in kept[index - 1]
    # fed in any chunks, the same text
    compactor = Compactor()
    for start in range(0, len(text), 65_537):
        compactor.feed(text[start : start + 65_537])
    assert compactor.finish() == read.text
    long_answer, alone = diagnose(text), diagnose(FAILURE)
    assert long_answer.ids()[:1] == alone.ids()[:1]
    python = next(f for f in long_answer.facts if f.key == "python.version")
    assert "log line 20001" in python.source


def test_the_plan_cache_is_written_read_and_not_needed(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    argv = [sys.executable, "-m", "qnndoctor", "explain", "--json", "--log", "-"]
    first = subprocess.run(argv, input=FAILURE.encode(), env=env, capture_output=True, timeout=120)
    entries = list((tmp_path / "cache" / "qnndoctor" / "catalogue").glob("plans-*.json"))
    assert len(entries) == 1 and json.loads(entries[0].read_text())["format"] == plancache.FORMAT
    again = subprocess.run(argv, input=FAILURE.encode(), env=env, capture_output=True, timeout=120)
    assert json.loads(again.stdout)["candidates"] == json.loads(first.stdout)["candidates"]
    # a damaged entry is rebuilt; a cache folder that cannot be made costs nothing but time
    entries[0].write_text("{not json")
    damaged = subprocess.run(
        argv, input=FAILURE.encode(), env=env, capture_output=True, timeout=120
    )
    assert json.loads(damaged.stdout)["candidates"] == json.loads(first.stdout)["candidates"]
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    env["XDG_CACHE_HOME"] = str(blocked)
    unwritable = subprocess.run(
        argv, input=FAILURE.encode(), env=env, capture_output=True, timeout=120
    )
    assert json.loads(unwritable.stdout)["candidates"] == json.loads(first.stdout)["candidates"]
    assert b"Traceback" not in unwritable.stderr


def test_the_plan_cache_keeps_only_its_newest_entries(tmp_path: Path) -> None:
    """Every catalogue (an update, a new qnndoctor) writes its own entry: the
    old ones, and temporary files of a run killed while writing, are removed."""
    folder = tmp_path / "cache" / "qnndoctor" / "catalogue"
    folder.mkdir(parents=True)
    for age in range(plancache.KEEP + 3):
        old = folder / f"plans-old{age}.json"
        old.write_text("{}")
        os.utime(old, ns=(1_000_000_000 * (age + 1),) * 2)
    killed = folder / ".plans-killed.tmp"  # left by a run killed while writing, long ago
    killed.write_text("{")
    os.utime(killed, ns=(1_000_000_000,) * 2)
    (folder / ".plans-writing.tmp").write_text("{")  # another run writing now: left alone
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    argv = [sys.executable, "-m", "qnndoctor", "explain", "--json", "--log", "-"]
    run = subprocess.run(argv, input=FAILURE.encode(), env=env, capture_output=True, timeout=120)
    assert run.returncode in (0, 1), run.stderr
    left = sorted(p.name for p in folder.iterdir() if p.name != ".plans-writing.tmp")
    newest_old = [f"plans-old{age}.json" for age in range(4, plancache.KEEP + 3)]
    assert len(left) == plancache.KEEP and set(newest_old) < set(left)  # the new entry + 3 newest
    assert not [name for name in left if name.endswith(".tmp")]
    assert (folder / ".plans-writing.tmp").exists()


def test_not_text_is_an_error_value() -> None:
    with pytest.raises(NotText, match="blob is not a text log"):
        read_log(io.BytesIO(bytes(range(256)) * 400), "blob")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_long_log_shows_progress_on_a_terminal_only(tmp_path: Path) -> None:
    from qnndoctor.cli.explain import PROGRESS_FROM, _read_input

    log = tmp_path / "long.log"
    body = "\n".join(_verbose(120_000)) + "\n"
    log.write_text(body)
    assert log.stat().st_size > PROGRESS_FROM
    terminal, pipe = _Terminal(), io.StringIO()
    assert _read_input(str(log), terminal).read.lines == 120_000
    shown = terminal.getvalue()
    assert "\rqnndoctor: reading " in shown and " MiB" in shown
    assert shown.endswith("\r\x1b[K")  # the progress line is cleared before the answer
    _read_input(str(log), pipe)
    assert pipe.getvalue() == ""  # never into a file or a pipe
