"""``qnndoctor model --find-culprit / --profile / --compare / --min-npu-share``
against the real onnxruntime 1.31.1 + onnxruntime-qnn 2.7.0 (QNN 2.51.0) on the
Linux x86-64 HTP simulator, on models built with ``onnx``; each trial a real
contained child. The search logic alone is also checked on a real 64-node
graph with a deterministic judge (no onnxruntime there)."""

from __future__ import annotations

import math
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
from conftest import CliResult
from helpers import onnx_models
from helpers.onnx_models import validate_model_document
from onnx import TensorProto, helper

from qnndoctor.children.runner import SubprocessRunner
from qnndoctor.model.experiment.compare import compare as compare_models
from qnndoctor.model.experiment.culprit import find_culprit, search
from qnndoctor.model.experiment.graph import CutError, Graph
from qnndoctor.model.experiment.runs import ChildRun
from qnndoctor.model.loading import read_model
from qnndoctor.smoke import MODEL as QDQ_MODEL
from qnndoctor.target.interpreter import resolve

Cli = Callable[..., CliResult]


def model_json(cli: Cli, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli("model", *args, "--json", "--no-redact", "--runs", "1")
    assert "Traceback" not in result.err, result.err
    doc = result.json()
    validate_model_document(doc)
    return result.code, doc


def chain(path: Path, count: int) -> Path:
    ops = ["Relu", "Sigmoid", "Neg", "Abs"]
    nodes = [
        helper.make_node(ops[i % 4], [f"t{i}"], [f"t{i + 1}"], name=f"n{i}") for i in range(count)
    ]
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info(f"t{count}", TensorProto.FLOAT, [1, 4])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    import onnx

    onnx.save(model, str(path))
    return path


FINALIZE = "[ONNXRuntimeError] : 11 : EP_FAIL : Failed to finalize QNN graph. ... Code: 1002"
BAD_CUT = "[ONNXRuntimeError] : 10 : INVALID_GRAPH : This is an invalid model."


def judge(
    bad: set[int], trials: list[tuple[int, ...]], other: int | None = None
) -> Callable[[Sequence[int] | None], ChildRun]:
    """Fails with QNN's 1002 when every node of ``bad`` is in the trial (an
    interaction when several); a trial with ``other`` but not ``bad`` fails
    another way (as a cut of its own making would)."""

    def trial(indexes: Sequence[int] | None) -> ChildRun:
        chosen = tuple(range(64)) if indexes is None else tuple(indexes)
        trials.append(chosen)
        error = FINALIZE if bad <= set(chosen) else BAD_CUT if other in chosen else None
        return ChildRun("failed" if error else "passed", error, "session", 0.0, {}, {})

    return trial


@pytest.mark.parametrize(("bad", "found"), [({37}, [37]), ({10, 20}, list(range(10, 21)))])
def test_search_cost_grows_with_log2_of_the_node_count(
    tmp_path: Path, bad: set[int], found: list[int]
) -> None:
    graph = Graph(chain(tmp_path / "chain.onnx", 64))
    trials: list[tuple[int, ...]] = []
    culprit = find_culprit(graph, judge(bad, trials), "float32")
    assert culprit.status == "found"
    assert [n.index for n in culprit.nodes] == found
    # whole model, log2(64) prefixes, the node alone, then at most log2(64) ranges
    assert len(trials) == len(culprit.steps) <= 2 * math.log2(64) + 2
    assert all(graph.cut(t) is not None for t in trials if len(t) < 64)  # each a real sub-model


def test_a_trial_failing_another_way_is_not_followed(tmp_path: Path) -> None:
    graph = Graph(chain(tmp_path / "chain.onnx", 64))
    trials: list[tuple[int, ...]] = []
    culprit = find_culprit(graph, judge({37}, trials, other=5), "float32")
    assert culprit.status == "found" and [n.index for n in culprit.nodes] == [37]
    # Every prefix holds node 5: those without 37 failed another way and were not followed.
    assert [(s.label, s.kind) for s in culprit.steps[:3]] == [
        ("whole model", "qnn-1002"),
        ("prefix 0..31", "invalid-model"),
        ("prefix 0..47", "qnn-1002"),
    ]


@pytest.mark.real_ort
def test_a_sub_model_that_cannot_be_made_ends_the_search_with_its_reason(
    tmp_path: Path,
) -> None:
    graph = Graph(chain(tmp_path / "chain.onnx", 64))
    trials: list[tuple[int, ...]] = []
    failing = judge({37}, trials)

    def trial(indexes: Sequence[int] | None) -> ChildRun:
        if indexes is not None and len(indexes) == 32:
            raise CutError("no cut there")
        return failing(indexes)

    culprit = find_culprit(graph, trial, "float32")
    assert (culprit.status, culprit.reason, culprit.nodes) == ("not-found", "no cut there", ())
    assert [(s.label, s.status) for s in culprit.steps] == [
        ("whole model", "failed"),
        ("prefix 0..31", "cut-refused"),
    ]
    assert trials == [tuple(range(64))]  # the refused cut ran no child


def test_a_model_that_runs_has_no_culprit(tmp_path: Path) -> None:
    graph = Graph(chain(tmp_path / "chain.onnx", 8))
    trials: list[tuple[int, ...]] = []
    culprit = find_culprit(graph, judge({99}, trials), "float32")
    assert (culprit.status, culprit.nodes, len(trials)) == ("no-failure", (), 1)


def test_culprit_of_a_finalize_failure_that_names_no_node(
    healthy_venv: Path, tmp_path: Path
) -> None:
    """float32 Gather: QNN fails at graph finalize (1002) and names no node."""
    model = read_model(onnx_models.float_gather(tmp_path / "gather.onnx"))
    culprit = search(
        resolve(str(healthy_venv)), model, backend="htp", timeout=120, runner=SubprocessRunner()
    ).to_json()
    assert culprit["status"] == "found", culprit
    assert (culprit["node"], culprit["op_type"]) == ("gather", "Gather")
    assert "Failed to finalize QNN graph" in culprit["error"] and "1002" in culprit["error"]
    assert culprit["inputs"][0] == {
        "name": "a",
        "initializer": False,
        "dtype": "float32",
        "shape": [1, 8],
    }
    assert culprit["attributes"] == {"axis": 1}
    assert "quantize the model to QDQ" in culprit["fix"]
    # The whole model fails, Relu alone passes, Relu + Gather fail, Gather alone fails.
    assert [s["status"] for s in culprit["steps"]] == ["failed", "passed", "failed", "failed"]


@pytest.mark.real_ort
def test_unsupported_node_with_fallback_off_is_the_culprit_and_the_guard_fails(
    cli: Cli, healthy_venv: Path, tmp_path: Path
) -> None:
    model = onnx_models.with_det(tmp_path / "det.onnx")
    code, doc = model_json(
        cli, str(model), "--python", str(healthy_venv), "--find-culprit", "--min-npu-share", "0.9"
    )
    assert code == 1
    culprit = doc["culprit"]
    assert (culprit["status"], culprit["node"], culprit["op_type"]) == ("found", "det", "Det")
    assert "fallback to CPU EP has been explicitly disabled" in culprit["error"]
    assert "`Det` are not supported by QNN EP" in culprit["qnn_reason"]
    share = doc["npu_share"]
    assert (share["nodes_on_qnn"], share["nodes_counted"], share["met"]) == (2, 3, False)
    assert share["left_qnn"][0]["node"] == "Det:det"
    guard = next(f for f in doc["findings"] if f["id"] == "model-npu-share-below")
    assert "Det:det: Operators of type `Det` are not supported" in guard["explanation"]
    assert guard["fix"]["commands"] == []  # the culprit was searched in this run already
    assert {"model-culprit", "model-npu-share-below"} <= {f["id"] for f in doc["findings"]}


@pytest.mark.real_ort
def test_profile_and_guard_above_the_share_on_the_shipped_qdq_model(
    cli: Cli, healthy_venv: Path
) -> None:
    code, doc = model_json(
        cli, str(QDQ_MODEL), "--python", str(healthy_venv), "--profile", "--min-npu-share", "1"
    )
    assert code == 0, doc["findings"]
    # The graph-input Q and graph-output DQ the EP leaves to the CPU do not count.
    assert doc["npu_share"]["share"] == 1.0 and doc["npu_share"]["nodes_counted"] == 4
    profile = doc["profile"]
    assert profile["status"] == "read" and profile["total_us"] > 0
    ops = {op["node"]: op for op in profile["ops"]}
    assert ops["add"]["op_type"] == "Add" and ops["add"]["time_us"] > 0
    assert ops["add"]["cycles"] > 0 and 0 < ops["add"]["share"] <= 1
    assert profile["end_to_end_ms"]["qnn"] > 0 and profile["end_to_end_ms"]["cpu"] > 0


@pytest.mark.real_ort
def test_compare_locates_the_8bit_layernorm_divergence(healthy_venv: Path, tmp_path: Path) -> None:
    """Called without the probes and the placement run (the CLI wiring is the
    same as for the other experiments): whole model, then truncated ones."""
    model = read_model(onnx_models.qdq_layernorm_chain(tmp_path / "ln.onnx"))
    inputs = tmp_path / "x.npz"
    x = (np.random.default_rng(1).random((1, 64)) * 8).astype(np.float32)
    np.savez(inputs, x=x)
    compare = compare_models(
        resolve(str(healthy_venv)), model, backend="htp", timeout=120,
        runner=SubprocessRunner(), tolerance=0.01, inputs=str(inputs),
    ).to_json()  # fmt: skip
    jsonschema.validate(compare, model_schema()["properties"]["compare"])
    (output,) = compare["outputs"]
    assert output["name"] == "y" and not output["within_tolerance"]
    assert 0.99 < output["cosine"] < 1 and output["max_abs_error"] > 0.01
    first = compare["first_divergence"]
    assert (first["node"], first["op_type"], first["quantized_output"]) == (
        "layernorm",
        "LayerNormalization",
        True,
    )
    (ln,) = first["metrics"]
    # One 8-bit step (8/255) on some elements; the nodes before match exactly.
    assert ln["name"] == "ln_dq" and ln["max_abs_error"] == pytest.approx(8 / 255, rel=1e-3)
    assert first["inputs"][0]["name"] == "add_dq" and first["inputs"][0]["range"][0] >= 0.5
    diverged = [s.get("diverged") for s in compare["steps"] if "diverged" in s]
    assert diverged[0] is True and False in diverged


@pytest.mark.real_ort
def test_compare_with_the_applications_fp16_option_finds_the_overflow(
    cli: Cli, healthy_venv: Path, tmp_path: Path
) -> None:
    model = onnx_models.float_exp(tmp_path / "exp.onnx")
    inputs = tmp_path / "x.npz"
    np.savez(inputs, x=(np.random.default_rng(0).random((1, 64)) * 12).astype(np.float32))
    args = ("--compare", "--inputs", str(inputs))
    fp16 = ("--qnn-option", "enable_htp_fp16_precision=1", "--qnn-option", "soc_model=57")
    code, doc = model_json(cli, str(model), "--python", str(healthy_venv), *args, *fp16)
    (output,) = doc["compare"]["outputs"]
    assert code == 1 and output["max_abs_error"] > 1000  # fp16 saturates where CPU is 157396
    first = doc["compare"]["first_divergence"]
    assert (first["node"], first["op_type"]) == ("exp", "Exp")
    assert "beyond float16's 65504" in first["likely_reason"]
    # With the EP's default options the simulator computes it in float32: no divergence.
    default = compare_models(
        resolve(str(healthy_venv)), read_model(model), backend="htp", timeout=120,
        runner=SubprocessRunner(), tolerance=0.01, inputs=str(inputs),
    ).to_json()  # fmt: skip
    assert default["outputs"][0]["within_tolerance"] and default["first_divergence"] is None


def model_schema() -> dict[str, Any]:
    import json
    from importlib import resources

    loaded: dict[str, Any] = json.loads(
        resources.files("qnndoctor").joinpath("schema/model.schema.json").read_text("utf-8")
    )
    return loaded


def test_experiment_options_need_a_session(cli: Cli) -> None:
    for args in (
        ("--no-run", "--find-culprit"),
        ("--min-npu-share", "1.5"),
        ("--inputs", "x.npz"),
        ("--compare", "--inputs", "/dev/zero"),
        ("--find-culprit", "--qnn-option", "backend_type=cpu"),
        ("--find-culprit", "--qnn-option", "soc_model"),
        ("--qnn-option", "soc_model=57"),
    ):
        result = cli("model", str(QDQ_MODEL), *args)
        assert result.code == 2 and "Traceback" not in result.err, (args, result.err)


@pytest.mark.real_ort
def test_ensure_ready_raises_not_ready_below_the_share(
    cli: Cli, healthy_venv: Path, tmp_path: Path
) -> None:
    import qnndoctor

    model = onnx_models.with_det(tmp_path / "det.onnx")
    with pytest.raises(qnndoctor.NotReady) as raised:
        qnndoctor.ensure_ready(healthy_venv, smoke=False, model=model, min_npu_share=0.9)
    ids = [f.id for f in raised.value.findings]
    assert ids[0] == "model-npu-share-below" and "Det:det" in raised.value.findings[0].cause
    assert "model-npu-share-below" in str(raised.value)
    # no culprit search in this run: the fix is the exact command for this model and
    # target, and it runs as printed (the entry point is this test's own CLI)
    [command] = raised.value.findings[0].commands
    argv = shlex.split(command)
    assert argv == ["qnndoctor", "model", str(model), "--python", str(healthy_venv), "--find-culprit"]
    culprit = cli(*argv[1:], "--json")
    assert culprit.code == 1 and culprit.json()["culprit"]["node"] == "det", culprit.err
    with pytest.raises(ValueError, match="min_npu_share needs a model"):
        qnndoctor.ensure_ready(healthy_venv, smoke=False, min_npu_share=0.5)


def test_profile_reader_on_the_csv_the_simulator_wrote() -> None:
    """QNN 2.51.0's detailed profile of three runs of the shipped QDQ model
    (profiling_level=detailed, onnxruntime-qnn 2.7.0, simulator), as written."""
    from qnndoctor.model.experiment.profile import read_profile

    text = (Path(__file__).parents[1] / "data" / "qnn_profile_qdq_add.csv").read_text("utf-8")
    profile = read_profile(text, {"add": "Add"}, 0.4, 0.01)
    assert profile.status == "read" and profile.executions == 3
    # The warm-up execution (16048 us) is left out: median of 3346 and 140.
    assert profile.total_us == pytest.approx((3346 + 140) / 2)
    add = profile.ops[0]
    assert (add.node, add.op_type) == ("add", "Add")
    # Its share of the accelerator cycles times the accelerator time, per run.
    expected = (2646 / 3901 * 3278 + 1194 / 1519 * 105) / 2
    assert add.time_us == pytest.approx(expected) and add.cycles == (2646 + 1194) / 2
    assert {op.node: op.op_type for op in profile.ops[1:]} == {
        "Input OpId_2": "graph input",
        "Output OpId_3": "graph output",
    }
    basic = "\n".join(line for line in text.splitlines() if ",NODE," not in line)
    assert read_profile(basic, {}, None, None).status == "no-node-rows"
