"""``qnndoctor explain``: where its facts come from, what it prints, and that a
healthy session's log (real, from the HTP simulator) raises no error cause."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CliResult

Cli = Callable[..., CliResult]

LOG_1X = """\
onnxruntime-qnn 1.19.0
Python 3.11.9 (tags/v3.11.9:de54cf5, Apr  2 2024) [MSC v.1938 64 bit (ARM64)] on win32
C:\\app\\main.py:12: UserWarning: Specified provider 'QNNExecutionProvider' is not in available provider names.Available providers: 'AzureExecutionProvider, CPUExecutionProvider'
"""

SETUP_FAILED = (
    "2024-04-04 [E:onnxruntime:, qnn_execution_provider.cc:499 GetCapability] "
    "QNN SetupBackend failed qnn_backend_manager.cc:56 GetQnnInterfaceProvider "
    "Unable to load backend, error: load library failed\n"
)


def test_text_output_names_one_cause_with_evidence_fix_and_facts(cli: Cli, tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text(LOG_1X, encoding="utf-8")
    result = cli("explain", "--log", str(log))
    assert result.code == 0
    out = result.out
    assert out.startswith("Most likely cause: ")
    assert "confidence" in out and "evidence:" in out and "fix:" in out
    assert "onnxruntime_qnn.version = 1.19.0  (log line 1:" in out
    assert "python.arch = arm64" in out
    assert out.count("tell apart:") <= 2


def test_json_lists_all_candidates_with_scores_evidence_and_fact_sources(
    cli: Cli, tmp_path: Path
) -> None:
    log = tmp_path / "log.txt"
    log.write_text(SETUP_FAILED + "onnxruntime-qnn==1.18.0\n", encoding="utf-8")
    data = cli("explain", "--log", str(log), "--json").json()
    candidates = data["candidates"]
    assert len(candidates) >= 2
    assert [c["score"] for c in candidates] == sorted(
        (c["score"] for c in candidates), reverse=True
    )
    for c in candidates:
        assert c["evidence"] and c["cause"] and c["fix"] and c["sources"]
        assert c["confidence"] in ("high", "medium", "low")
    assert all("tell_apart" in c for c in candidates[1:])
    used = {f["key"]: f for f in data["facts"]["used"]}
    assert used["onnxruntime_qnn.version"]["value"] == "1.18.0"
    assert used["onnxruntime_qnn.version"]["source"].startswith("log line 2")


def test_default_never_probes_this_machine(cli: Cli, tmp_path: Path) -> None:
    """A pasted log is judged by its own facts, not by the machine qnndoctor runs on."""
    log = tmp_path / "log.txt"
    log.write_text(SETUP_FAILED, encoding="utf-8")
    data = cli("explain", "--log", str(log), "--json").json()
    assert all("probe" not in f["source"] for f in data["facts"]["used"])


def test_here_adds_this_machines_probed_facts(cli: Cli, tmp_path: Path, healthy_venv: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text(SETUP_FAILED, encoding="utf-8")
    data = cli("explain", "--log", str(log), "--python", str(healthy_venv), "--json").json()
    used = {f["key"]: f for f in data["facts"]["used"]}
    assert used["onnxruntime_qnn.version"]["value"] == "2.7.0"
    assert "probe of" in used["onnxruntime_qnn.version"]["source"]
    assert used["os"]["value"] == "linux"


def test_from_report_facts_win_over_the_text_and_conflicts_are_shown(
    cli: Cli, tmp_path: Path, healthy_venv: Path
) -> None:
    ticket = tmp_path / "ticket.json"
    report = cli("check", "--python", str(healthy_venv), "--no-smoke", "--json")
    ticket.write_text(report.out, encoding="utf-8")
    log = tmp_path / "log.txt"
    log.write_text(LOG_1X, encoding="utf-8")
    data = cli("explain", "--log", str(log), "--from-report", str(ticket), "--json").json()
    used = {f["key"]: f for f in data["facts"]["used"]}
    assert used["onnxruntime_qnn.version"]["value"] == "2.7.0"
    assert used["onnxruntime_qnn.version"]["source"].startswith("saved report")
    assert any("1.19.0" in c for c in data["facts"]["conflicts"])
    assert data["candidates"][0]["id"] == "provider-not-listed-plugin-not-registered"


def test_exit_code_without_text_names_nothing(cli: Cli, tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    result = cli("explain", "--log", str(empty), "--exit-code", "0xC0000005", "--json")
    assert result.code == 1
    assert result.json()["candidates"] == []
    assert result.json()["input"]["exit_code"] == 0xC0000005


def test_a_crash_code_without_a_match_says_what_it_means_and_what_needs_facts(
    cli: Cli, tmp_path: Path
) -> None:
    """A process killed by SIGBUS while its log shows only healthy lines (a
    truncated QNN library, made for real on the simulator): no candidate, but
    the death is named with the catalogued causes that only facts can confirm."""
    log = tmp_path / "log.txt"
    log.write_text(
        "2026-11-27 09:31:35.536166207 [W:onnxruntime:, qnn_execution_provider.cc:933 QnnEp] "
        "File mapped weights feature is only available on Windows arm64 devices for QNN API "
        "versions >= 2.32. Feature will be disabled by default\n"
    )
    document = cli("explain", "--log", str(log), "--exit-code", "-7", "--json").json()
    assert document["candidates"] == []
    status = document["exit_status"]
    assert status["name"] == "SIGBUS"
    assert "truncated-qnn-library-sigbus" in [c["id"] for c in status["known_causes_needing_facts"]]
    text = cli("explain", "--log", str(log), "--exit-code", "-7").out
    assert "exit code -7 (SIGBUS)" in text and "truncated-qnn-library-sigbus" in text
    windows = cli("explain", "--log", str(log), "--exit-code", "-1073741819").out
    assert "exit code 0xC0000005 (STATUS_ACCESS_VIOLATION)" in windows
    plain = cli("explain", "--log", str(log), "--json").json()
    assert plain["exit_status"] is None


def test_reads_stdin_and_reports_no_match(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "qnndoctor", "explain", "--log", "-"],
        input=b"all good here\n",
        capture_output=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert b"No known failure cause" in done.stdout
    # ... and what to run next on the machine that failed, to narrow it down
    assert b"qnndoctor check " in done.stdout
    assert b"qnndoctor model, given the model that failed" in done.stdout
    assert b"YOUR_MODEL" not in done.stdout  # no placeholder where the text names no model


def test_bad_inputs_are_clear_errors(cli: Cli, tmp_path: Path) -> None:
    assert cli("explain", "--log", str(tmp_path / "missing.txt")).code == 3
    assert cli("explain", "--log", "-", "--exit-code", "banana").code == 2
    broken = tmp_path / "broken.json"
    broken.write_text("{ not json")
    log = tmp_path / "log.txt"
    log.write_text(SETUP_FAILED)
    result = cli("explain", "--log", str(log), "--from-report", str(broken))
    assert result.code == 2 and "--from-report" in result.err and "not valid JSON" in result.err


def test_help_says_where_facts_come_from() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "qnndoctor", "explain", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0
    for needle in ("the text itself", "--from-report", "--here", "THIS machine"):
        assert needle in done.stdout


@pytest.mark.real_ort
def test_a_healthy_verbose_session_log_raises_no_cause(
    verbose_session: subprocess.CompletedProcess[str],
) -> None:
    """A real verbose ORT + QNN log of a session that passed on the HTP simulator."""
    done = verbose_session
    assert done.returncode == 0, done.stderr[-2000:]
    assert "QnnLogging" in done.stderr and "<E>" in done.stderr  # verbose, with QNN's own chatter
    from qnndoctor.diagnosis import diagnose

    result = diagnose(done.stderr)
    assert result.candidates == (), result.ids()
    assert len(result.verdict.harmless) > 100
    assert json.dumps(result.to_json())  # serialisable


@pytest.mark.real_ort
def test_a_verbose_session_that_left_a_node_to_the_cpu_raises_no_cause(
    verbose_session_with_cpu_nodes: subprocess.CompletedProcess[str],
) -> None:
    """With CPU fallback on, the QNN EP narrates at verbose level why it leaves a
    node to the CPU EP ("Validation FAILED for 1 nodes in OrtNodeUnit (Det)",
    "REASON : ..."). The session ran: that narration is no error, and no guess
    is made from its words either."""
    log = verbose_session_with_cpu_nodes.stderr
    assert "Validation FAILED for 1 nodes in OrtNodeUnit (Det)" in log
    assert "[V:onnxruntime:" in log
    from qnndoctor.diagnosis import diagnose
    from qnndoctor.matrixdata import load_socs

    result = diagnose(log, socs=load_socs())
    assert result.candidates == (), result.ids()


def test_a_qnndoctor_report_given_as_the_log_is_refused_with_the_command_that_reads_it(
    cli: Cli, tmp_path: Path
) -> None:
    """A support engineer's ticket is not a log: read as one, its facts and
    finding titles only raise guesses. explain says so and names the commands."""
    ticket = tmp_path / "ticket.json"
    assert cli("report", "-o", str(ticket), "--no-smoke", "--python", sys.executable).code in (0, 1)
    result = cli("explain", "--log", str(ticket))
    assert result.code == 2 and result.out == ""
    assert f"qnndoctor check --from-report {ticket}" in result.err
    assert f"qnndoctor explain --log LOG --from-report {ticket}" in result.err
    as_json = cli("explain", "--log", str(ticket), "--json")
    assert as_json.code == 2 and as_json.json()["error"]["kind"] == "bad-input"
    # explain's own output, and JSON that is not qnndoctor's, are told apart.
    log = tmp_path / "log.txt"
    log.write_text("Failed to finalize QNN graph. Error code: 1002\n", encoding="utf-8")
    own = tmp_path / "explained.json"
    own.write_text(cli("explain", "--log", str(log), "--json").out, encoding="utf-8")
    again = cli("explain", "--log", str(own))
    assert again.code == 2 and "already the output of `qnndoctor explain --json`" in again.err
    other = tmp_path / "other.json"
    other.write_text(
        '{"error": "Failed to finalize QNN graph. Error code: 1002"}', encoding="utf-8"
    )
    assert cli("explain", "--log", str(other)).code == 0  # a JSON log is still a log


def test_without_a_match_the_lines_that_read_like_the_failure_are_named(
    cli: Cli, tmp_path: Path
) -> None:
    """First two and the last; a known harmless line (the pthread affinity
    error of a container) is never one of them, however it reads."""
    log = tmp_path / "log.txt"
    log.write_text(
        "2024-04-17 09:03:59.359773631 [E:onnxruntime:Default, env.cc:254 ThreadMain] "
        "pthread_setaffinity_np failed for thread: 21, index: 0, mask: {2, 3, }, error code: "
        "22 error msg: Invalid argument. Specify the number of threads explicitly so the "
        "affinity is not set.\n"
        "loading the frobnicator\n"
        "FrobError: cannot frobnicate stage 1\n"
        "retrying\n"
        "FrobError: cannot frobnicate stage 2\n"
        "FrobError: cannot frobnicate stage 3\n"
        "done\n",
        encoding="utf-8",
    )
    result = cli("explain", "--log", str(log), "--json")
    assert result.code == 1
    document = result.json()
    assert document["candidates"] == []
    assert [item["line"] for item in document["failure_lines"]] == [3, 5, 6]
    text = cli("explain", "--log", str(log)).out
    assert "  line 6: FrobError: cannot frobnicate stage 3" in text
    assert "pthread_setaffinity_np" not in text.split("Next, on the machine")[0]


def test_a_consequence_first_points_at_the_uncatalogued_failure_it_follows(
    cli: Cli, tmp_path: Path
) -> None:
    """The EP's context set-up failed for a reason no entry knows (an option the
    simulator's HTP does not implement, made for real); the 'EPContext node ...
    not compatible' message after it only follows. The answer says so, is low,
    and quotes the earlier error line of the runtime's own log."""
    earlier = (
        "2026-11-27 09:47:04.566975791 [E:onnxruntime:, qnn_execution_provider.cc:2290 "
        "GetCapabilityImpl] QNN SetupBackend failed Failed to create context. Error: "
        "QNN_COMMON_ERROR_NOT_SUPPORTED: API or feature is not supported by implementation., "
        "Code:1000"
    )
    consequence = (
        "onnxruntime.capi.onnxruntime_pybind11_state.NotImplemented: [ONNXRuntimeError] : 9 : "
        "NOT_IMPLEMENTED : EPContext node generated by 'QNNExecutionProvider' is not compatible "
        "with any execution provider added to the session. EPContext node name: 'n'. Available "
        "session execution providers: [QNNExecutionProvider, CPUExecutionProvider]."
    )
    log = tmp_path / "log.txt"
    log.write_text(
        "2026-11-27 09:47:04.5 [W:onnxruntime:, qnn_execution_provider.cc:933 QnnEp] File mapped "
        "weights feature is only available on Windows arm64 devices\n"
        f"{earlier}\nTraceback (most recent call last):\n{consequence}\n"
    )
    document = cli("explain", "--log", str(log), "--json").json()
    first = document["candidates"][0]
    assert first["id"] == "ep-context-node-without-qnn-ep" and first["consequence"] is True
    assert first["confidence"] == "low" and "earlier failure" in first["doubt"]
    assert document["follows_from"]["line"] == 2
    assert "Failed to create context" in document["follows_from"]["text"]
    text = cli("explain", "--log", str(log)).out
    assert "only follows from an earlier failure" in text and "Failed to create context" in text
    # The same earlier failure in QNN's own tool format ("[ ERROR ]"), as an AI Hub
    # job log prints it, is the runtime's error line too.
    tool = "124.9ms [ ERROR ] Failed to create context. Error: QNN_COMMON_ERROR_NOT_SUPPORTED"
    log.write_text(f"{tool}\nTraceback (most recent call last):\n{consequence}\n")
    from_tool = cli("explain", "--log", str(log), "--json").json()
    assert from_tool["follows_from"]["line"] == 1
    # Alone, the same message is the answer: nothing earlier to point at.
    log.write_text(f"{consequence}\n")
    alone = cli("explain", "--log", str(log), "--json").json()
    assert alone["follows_from"] is None and alone["candidates"][0]["confidence"] != "low"
