"""Smaller things a user hit (issue 25), each re-made for real: the smoke
timeout, the backend named, `report`'s exit code, quiet mode's bad output
path, empty tickets, --python beside --from-report, `model`'s node counts and
missing runtime, and the Markdown report's nested lines."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from conftest import CliResult, validate_report
from onnx import TensorProto, helper, numpy_helper

Cli = Callable[..., CliResult]


@pytest.fixture(scope="module")
def gpu_ticket(healthy_venv: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`report -o` of the healthy 2.7.0 venv with the GPU backend, which the
    simulator host does not have: a real failed smoke session, in a ticket."""
    from qnndoctor.cli.main import main

    path = tmp_path_factory.mktemp("gpu") / "ticket.json"
    assert main(["report", "-o", str(path), "--python", str(healthy_venv), "--backend", "gpu"]) == 1
    return path


def test_a_too_short_smoke_timeout_is_not_reported_as_a_hang(
    cli: Cli, healthy_venv: Path, tmp_path: Path
) -> None:
    result = cli("check", "--python", str(healthy_venv), "--smoke-timeout", "0.05", "--json")
    document = result.json()
    validate_report(document)
    smoke = document["smoke"]
    assert smoke["status"] == "timed_out"
    assert smoke["stage"] in ("start", "import"), smoke  # killed before onnxruntime was in
    ids = [f["id"] for f in document["findings"]]
    assert "smoke-cut-short" in ids and "smoke-timed-out" not in ids
    cut = next(f for f in document["findings"] if f["id"] == "smoke-cut-short")
    assert cut["severity"] == "warning" and "--smoke-timeout of 0.05 s" in cut["explanation"]
    assert "larger --smoke-timeout" in cut["fix"]["text"]
    assert result.code == 0  # nothing wrong with the environment was found

    # The same ticket, told otherwise: a session stuck in device creation with
    # the default time limit is the hang it always was (its text names the
    # backend's driver); one stuck importing onnxruntime never reached QNN.
    def rediagnosed(**smoke_values: Any) -> dict[str, Any]:
        changed = {**document, "smoke": {**smoke, **smoke_values}}
        path = tmp_path / "ticket.json"
        path.write_text(json.dumps(changed), encoding="utf-8")
        again = cli("check", "--from-report", str(path), "--json")
        found: dict[str, Any] = {f["id"]: f for f in again.json()["findings"]}
        return found

    hung = rediagnosed(timeout_s=60, duration_s=60.4, stage="session")
    assert "smoke-timed-out" in hung and "smoke-cut-short" not in hung
    assert "NPU driver" in hung["smoke-timed-out"]["explanation"]
    gpu = rediagnosed(timeout_s=60, duration_s=60.4, stage="session", backend="gpu")
    assert "GPU driver" in gpu["smoke-timed-out"]["explanation"]
    slow = rediagnosed(timeout_s=60, duration_s=60.4, stage="import")
    assert "smoke-cut-short" in slow and "never asked" in slow["smoke-cut-short"]["explanation"]
    older = rediagnosed(timeout_s=60, duration_s=60.4, stage=None)  # a ticket of an older version
    assert "smoke-timed-out" in older


def test_the_backend_used_is_named_and_report_exits_as_check_after_writing(
    cli: Cli, gpu_ticket: Path
) -> None:
    ticket = json.loads(gpu_ticket.read_text("utf-8"))
    assert ticket["smoke"]["backend"] == "gpu" and ticket["smoke"]["status"] == "failed"
    text = cli("check", "--from-report", str(gpu_ticket))
    assert "GPU smoke session failed (gpu backend" in text.out
    assert "HTP smoke session" not in text.out
    # report's exit code 1 (from the fixture) is check's for the same findings, and said
    assert text.code == 1
    assert "**Smoke session:** failed (gpu backend" in ticket["summary_markdown"]


def test_report_says_why_it_exits_1(cli: Cli, gpu_ticket: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.json"
    result = cli("report", "-o", str(again), "--from-report", str(gpu_ticket))
    assert result.code == 1 and again.is_file()
    assert "ticket written to" in result.err
    assert "exit code 1: the ticket holds a finding at or above --fail-on error" in result.err


def test_quiet_output_to_a_missing_folder_is_bad_input(
    cli: Cli, gpu_ticket: Path, tmp_path: Path
) -> None:
    target = tmp_path / "no-such-folder" / "report.json"
    result = cli("check", "--quiet", "--output", str(target), "--from-report", str(gpu_ticket))
    assert result.code == 2
    assert (
        result.out.startswith("bad input: --output: cannot write") and result.out.count("\n") == 1
    )
    assert result.err == ""


EMPTY_TICKETS = {
    "empty-file": ("", "is empty"),
    "empty-object": ("{}", "an empty JSON object"),
    "empty-array": ("[]", "an array, not an object"),
    "facts-null": ('{"facts": null}', "no schema_version 1"),
    "versioned-facts-null": ('{"schema_version": 1, "facts": null}', "'facts' is null"),
    "versioned-no-facts": ('{"schema_version": 1}', "'facts' is missing"),
}


@pytest.mark.parametrize("name", sorted(EMPTY_TICKETS))
def test_an_empty_ticket_is_clear_bad_input(cli: Cli, tmp_path: Path, name: str) -> None:
    content, words = EMPTY_TICKETS[name]
    ticket = tmp_path / "ticket.json"
    ticket.write_text(content, encoding="utf-8")
    checked = cli("check", "--from-report", str(ticket))
    assert checked.code == 2 and words in checked.err, checked.err
    assert "NoneType" not in checked.err and "Traceback" not in checked.err
    assert "`qnndoctor check --json`" in checked.err  # what a ticket is
    quiet = cli("check", "--quiet", "--from-report", str(ticket))
    assert quiet.code == 2 and quiet.out.startswith("bad input: ") and words in quiet.out
    written = tmp_path / "new-ticket.json"
    reported = cli("report", "-o", str(written), "--from-report", str(ticket))
    assert reported.code == 2 and words in reported.err
    assert not written.exists()  # no ticket that holds nothing


@pytest.mark.parametrize("command", ["check", "report"])
def test_python_beside_from_report_is_a_usage_error(
    cli: Cli, gpu_ticket: Path, tmp_path: Path, command: str
) -> None:
    extra = ["-o", str(tmp_path / "t.json")] if command == "report" else []
    result = cli(command, *extra, "--from-report", str(gpu_ticket), "--python", sys.executable)
    assert result.code == 2
    assert "not allowed with argument" in result.err


def test_markdown_nests_what_the_text_output_indents(cli: Cli, gpu_ticket: Path) -> None:
    markdown = cli("check", "--from-report", str(gpu_ticket), "--format", "markdown").out
    assert not re.search(r"^-\s{2,}\S", markdown, re.M), "a bullet with a run of spaces"
    bundle = markdown.index("**Bundled QNN libraries**")
    lines = markdown[bundle:].splitlines()
    assert lines[1].startswith("- onnxruntime-qnn 2.7.0: QNN")
    assert lines[2].startswith("  - onnxruntime_qnn: ") and "libraries" in lines[2]


def test_markdown_lists_skipped_checks_under_their_own_heading(
    cli: Cli, gpu_ticket: Path, tmp_path: Path
) -> None:
    """Before: "- skipped `rule`: ..." lines hung under the recommendation's code
    block. A ticket whose qnn_bundled probe is missing skips the rules that need it."""
    ticket = json.loads(gpu_ticket.read_text("utf-8"))
    del ticket["facts"]["qnn_bundled"]
    path = tmp_path / "ticket.json"
    path.write_text(json.dumps(ticket), encoding="utf-8")
    markdown = cli("check", "--from-report", str(path), "--format", "markdown").out
    fence = markdown.index("```\n", markdown.index("**Recommended onnxruntime-qnn:**\n```") + 40)
    after = markdown[fence:].splitlines()
    assert after[:3] == ["```", "", "**Checks skipped:**"], after[:4]
    assert after[3].startswith("- `") and "qnn_bundled" in after[3]


def _conv_model(path: Path) -> Path:
    """Conv -> Relu -> Sigmoid, float: the QNN EP asks for NHWC, so onnxruntime's
    layout transformation puts Transposes around the Conv in the session's graph."""
    weight = numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32) / 9, "w")
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["a"], name="conv", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["a"], ["b"], name="relu"),
            helper.make_node("Sigmoid", ["b"], ["y"], name="sigmoid"),
        ],
        "conv3",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 8, 8])],
        initializer=[weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def test_model_says_whose_nodes_it_counts_and_what_is_not_installed(
    cli: Cli, healthy_venv: Path, tmp_path: Path
) -> None:
    model = _conv_model(tmp_path / "conv3.onnx")
    placed = cli("model", str(model), "--python", str(healthy_venv), "--runs", "1")
    assert "3 nodes; precision float32" in placed.out
    line = next(x for x in placed.out.splitlines() if x.startswith("Placement"))
    counted = re.search(r"(\d+)/(\d+) nodes of the session's graph on QNN", line)
    assert counted is not None and int(counted[2]) != 3, placed.out
    assert f"the session's graph has {counted[2]} nodes where the model file has 3" in placed.out
    # the test interpreter has no onnxruntime at all
    bare = cli("model", str(model), "--python", sys.executable, "--no-run")
    runtime = next(x for x in bare.out.splitlines() if x.startswith("Runtime"))
    assert "None" not in runtime
    assert "onnxruntime not installed, onnxruntime-qnn not installed;" in runtime


def test_a_timed_out_child_is_classified_with_its_last_stage() -> None:
    from qnndoctor.children.runner import Completed
    from qnndoctor.smoke.outcome import classify

    def killed(stdout: bytes, truncated: bool = False) -> tuple[str | None, str | None]:
        completed = Completed(
            ("python", "child.py"),
            None,
            stdout,
            b"",
            2.1,
            timed_out=True,
            stdout_truncated=truncated,
        )
        result = classify(completed, "htp", 2.0)
        assert result.status == "timed_out"
        return result.stage, result.reason

    stage, reason = killed(b"@@qnndoctor-stage@@import\n@@qnndoctor-stage@@session\n")
    assert stage == "session" and reason is not None
    assert reason.endswith("killed while creating the session (QNN device and context)")
    assert killed(b"")[0] == "start"
    assert killed(b"x" * 100, truncated=True) == (
        None,
        "no result within the 2 s smoke timeout; the process tree was killed",
    )
