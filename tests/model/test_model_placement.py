"""The placement child's containment and the parent's reading of it, with
fake target interpreters (real executables) and bare real venvs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CliResult
from helpers import onnx_models
from helpers.fake_python import write_fake_python
from helpers.wheels import make_venv

from qnndoctor.model.placement import fallback_reasons, placement_from_log, run_placement
from qnndoctor.model.report import placement_findings
from qnndoctor.smoke import MODEL as QDQ_MODEL
from qnndoctor.target.interpreter import Target

Cli = Callable[..., CliResult]
RESULT = "@@qnndoctor-smoke@@" + json.dumps(
    {"status": "passed", "assignment": None, "timings": {"qnn": None}}
)
# The verbose "Node placements" block and a QNN EP refusal, as onnxruntime 1.31.1
# printed them for a Relu -> Det -> Sigmoid model (timestamps shortened).
LOG = """\
2026-11-23 11:06:57.695 [V:onnxruntime:, qnn_execution_provider.cc:1713 LogNodeSupport] Validation FAILED for 1 nodes in OrtNodeUnit (Det) :
\tOperator type: Det Node name: odd Node index: 1
\tREASON : Operators of type `Det` are not supported by QNN EP.Det node `odd` will not be assigned to QNN EP.

2026-11-23 11:06:57.799 [V:onnxruntime:, session_state.cc:1578 VerifyEachNodeIsAssignedToAnEp] Node placements
2026-11-23 11:06:57.799 [V:onnxruntime:, session_state.cc:1584 VerifyEachNodeIsAssignedToAnEp]  Node(s) placed on [QNNExecutionProvider]. Number of nodes: 2
2026-11-23 11:06:57.799 [V:onnxruntime:, session_state.cc:1586 VerifyEachNodeIsAssignedToAnEp]   QNNExecutionProvider_6771159960526233198_2 (QNNExecutionProvider_QNNExecutionProvider_6771159960526233198_2_0)
2026-11-23 11:06:57.799 [V:onnxruntime:, session_state.cc:1586 VerifyEachNodeIsAssignedToAnEp]   QNNExecutionProvider_6771159960526233198_3 (QNNExecutionProvider_QNNExecutionProvider_6771159960526233198_3_1)
2026-11-23 11:06:57.799 [V:onnxruntime:, session_state.cc:1584 VerifyEachNodeIsAssignedToAnEp]  Node(s) placed on [CPUExecutionProvider]. Number of nodes: 1
2026-11-23 11:06:57.799 [V:onnxruntime:, session_state.cc:1586 VerifyEachNodeIsAssignedToAnEp]   Det (odd)
2026-11-23 11:06:57.799 [W:onnxruntime:, session_state.cc:1598 VerifyEachNodeIsAssignedToAnEp] Some nodes were not assigned to the preferred execution providers
"""


def fake(tmp_path: Path, body: str) -> Target:
    return Target(str(write_fake_python(tmp_path, body)), "test double")


def test_log_parser_reads_partitions_cpu_nodes_and_reasons() -> None:
    assert placement_from_log(LOG) == (2, ["Det:odd"])
    assert fallback_reasons(LOG) == {
        "Det:odd": "Operators of type `Det` are not supported by QNN EP.Det node `odd` will not be assigned to QNN EP."
    }
    assert placement_from_log("no placements here\n") is None


def test_without_assignment_info_the_log_is_used(tmp_path: Path) -> None:
    """A runtime without get_provider_graph_assignment_info (assignment None)."""
    body = f"import sys\nsys.stderr.write({LOG!r})\nprint({RESULT!r})"
    placement = run_placement(fake(tmp_path, body), QDQ_MODEL, nodes_in_file=3, runs=1)
    assert placement.method == "verbose-log"
    assert (placement.nodes_total, placement.nodes_on_qnn, placement.partitions) == (3, 2, 2)
    (finding,) = placement_findings(placement, None)
    assert finding.finding.id == "model-partly-on-cpu"
    assert "Det:odd: Operators of type `Det`" in finding.finding.explanation


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "crashed"),
        ("print('@@qnndoctor-smoke@@{broken json')", "crashed"),
        ("import time; time.sleep(60)", "timed_out"),
    ],
)
def test_crash_and_hang_are_findings_not_tracebacks(tmp_path: Path, body: str, status: str) -> None:
    placement = run_placement(fake(tmp_path, body), QDQ_MODEL, nodes_in_file=6, timeout=2)
    assert placement.status == status
    (finding,) = placement_findings(placement, None)
    assert finding.finding.id == "model-run-crashed" and finding.severity.label == "error"
    json.dumps(placement.to_json())


def test_target_without_onnxruntime_qnn_gets_static_checks_only(cli: Cli, tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv")
    result = cli("model", str(QDQ_MODEL), "--python", str(python), "--json", "--no-redact")
    doc = result.json()
    onnx_models.validate_model_document(doc)
    assert result.code == 0 and doc["placement"] is None
    assert doc["runtime"]["onnxruntime_qnn"] is None
    assert any("onnxruntime-qnn is not installed" in n for n in doc["notes"])


def test_unusable_target_is_could_not_check_with_the_model_checks(cli: Cli, tmp_path: Path) -> None:
    result = cli("model", str(QDQ_MODEL), "--python", str(tmp_path / "missing"), "--json")
    assert result.code == 3 and "could not check the target" in result.err
    doc = result.json()
    onnx_models.validate_model_document(doc)
    assert doc["model"]["nodes_total"] == 6 and doc["runtime"] is None
    assert "Traceback" not in result.err


def test_non_ascii_model_path_is_flagged_by_the_probes_too(cli: Cli, tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "モデル"
    folder.mkdir()
    model = folder / "qdq.onnx"
    shutil.copy(QDQ_MODEL, model)
    python = make_venv(tmp_path / "venv")
    result = cli("model", str(model), "--python", str(python), "--json", "--no-redact")
    assert result.code == 0
    (flagged,) = [f for f in result.json()["findings"] if f["id"] == "model-non-ascii-path"]
    assert flagged["severity"] == "info"  # a Linux target: harmless here, said so
    assert "モデル" in flagged["explanation"]
