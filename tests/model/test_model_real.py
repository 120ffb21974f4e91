"""``qnndoctor model`` against real runtimes: onnxruntime 1.31.1 + onnxruntime-qnn
2.7.0 (QNN 2.51.0) and onnxruntime 1.27.0 + onnxruntime-qnn 2.3.0 (QNN 2.47.0) on
the Linux x86-64 HTP simulator, real models, real EPContext compilation."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult, runtime_venv
from helpers import onnx_models
from helpers.onnx_models import validate_model_document
from helpers.target_runs import run_code

from qnndoctor.children.runner import Completed, SubprocessRunner
from qnndoctor.model.placement import placement_from_log, run_placement
from qnndoctor.smoke import MODEL as QDQ_MODEL
from qnndoctor.target.interpreter import Target

Cli = Callable[..., CliResult]
pytestmark = pytest.mark.real_ort


@pytest.fixture(scope="module")
def old_qnn_venv(tmp_path_factory: pytest.TempPathFactory, real_wheels: dict[str, Path]) -> Path:
    """onnxruntime-qnn 2.3.0 (QNN 2.47.0) with onnxruntime 1.27.0: an older, working runtime."""
    return runtime_venv(tmp_path_factory.mktemp("oldqnn") / "venv", real_wheels, "1.27.0", "2.3.0")


@pytest.fixture(scope="module")
def ep_context(tmp_path_factory: pytest.TempPathFactory, healthy_venv: Path) -> Path:
    """The shipped QDQ model compiled to an EPContext model (context binary beside
    it) by the real onnxruntime-qnn 2.7.0."""
    folder = tmp_path_factory.mktemp("epctx")
    return onnx_models.compile_ep_context(healthy_venv, QDQ_MODEL, folder / "qdq_ctx.onnx")


def model_json(cli: Cli, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli("model", *args, "--json", "--no-redact", "--runs", "3")
    assert "Traceback" not in result.err, result.err
    doc = result.json()
    validate_model_document(doc)
    return result.code, doc


def finding_ids(doc: Mapping[str, Any]) -> set[str]:
    return {f["id"] for f in doc["findings"]}


def test_shipped_qdq_model_computes_on_qnn_in_one_partition(cli: Cli, healthy_venv: Path) -> None:
    code, doc = model_json(cli, str(QDQ_MODEL), "--python", str(healthy_venv))
    assert code == 0, doc["findings"]
    placement = doc["placement"]
    assert placement["status"] == "passed" and placement["method"] == "assignment-info"
    # All compute on QNN in one partition; the graph-input Q and graph-output DQ
    # stay on the CPU by the 2.x EP's design (offload_graph_io_quantization=1).
    assert (placement["nodes_total"], placement["nodes_on_qnn"], placement["partitions"]) == (
        6,
        4,
        1,
    )
    expected_io = ["QuantizeLinear:q_x", "DequantizeLinear:dq_y"]
    assert placement["cpu_nodes"] == placement["io_quantization_on_cpu"] == expected_io
    assert doc["context"] is None
    assert doc["runtime"]["qnn_version"] == "2.51.0" and doc["runtime"]["onnxruntime"] == "1.31.1"
    timings = doc["timings"]
    assert timings["qnn"]["runs"] == 3 and timings["qnn"]["median_ms"] > 0
    assert timings["cpu"]["runs"] == 3 and timings["cpu"]["median_ms"] > 0
    assert finding_ids(doc) == set()
    assert any("simulator" in note for note in doc["notes"])  # its QNN device is a CPU


def test_dynamic_batch_float_model_falls_back_with_the_reason(
    cli: Cli, healthy_venv: Path, tmp_path: Path
) -> None:
    model = onnx_models.dynamic_batch_float(tmp_path / "dyn.onnx")
    code, doc = model_json(cli, str(model), "--python", str(healthy_venv))
    assert code == 0  # warnings only
    assert {"model-dynamic-shape", "model-float-on-htp", "model-mostly-on-cpu"} <= finding_ids(doc)
    placement = doc["placement"]
    assert placement["nodes_on_qnn"] == 0 and placement["nodes_total"] == 2
    assert placement["fallback_reasons"] == {
        "MatMul:mm": "Cannot get shape",
        "Relu:relu": "Cannot get shape",
    }
    mostly = next(f for f in doc["findings"] if f["id"] == "model-mostly-on-cpu")
    assert "MatMul:mm: Cannot get shape" in mostly["explanation"]
    # The venv has no pip: the fix installs onnx only after its bundled pip.
    shape = next(f for f in doc["findings"] if f["id"] == "model-dynamic-shape")
    assert shape["fix"]["commands"][:2] == [
        f"{healthy_venv} -m ensurepip",
        f"{healthy_venv} -m pip install onnx",
    ]
    assert (
        code == 0
        and cli(
            "model",
            str(model),
            "--python",
            str(healthy_venv),
            "--fail-on",
            "warning",
            "--runs",
            "1",
        ).code
        == 1
    )


def test_fp16_model_runs_on_the_simulator(cli: Cli, healthy_venv: Path, tmp_path: Path) -> None:
    model = onnx_models.fp16(tmp_path / "fp16.onnx")
    code, doc = model_json(cli, str(model), "--python", str(healthy_venv))
    assert doc["model"]["precision"] == "float16"
    placement = doc["placement"]
    assert (placement["nodes_on_qnn"], placement["nodes_total"], placement["partitions"]) == (
        2,
        2,
        1,
    )
    # The simulator has no chip: the v73 requirement is stated, not decided.
    assert finding_ids(doc) == {"model-float-on-htp"} and code == 0


def test_unsupported_op_splits_the_graph(cli: Cli, healthy_venv: Path, tmp_path: Path) -> None:
    model = onnx_models.with_det(tmp_path / "det.onnx")
    code, doc = model_json(cli, str(model), "--python", str(healthy_venv))
    assert code == 0  # a warning and an information
    placement = doc["placement"]
    assert (placement["nodes_on_qnn"], placement["nodes_total"], placement["partitions"]) == (
        2,
        3,
        2,
    )
    assert placement["cpu_nodes"] == ["Det:det"]
    assert "not supported by QNN EP" in placement["fallback_reasons"]["Det:det"]
    assert {"model-ops-not-on-qnn", "model-partly-on-cpu"} <= finding_ids(doc)


class Recording:
    """The real runner, keeping what the child printed (for the log cross-check)."""

    def __init__(self) -> None:
        self.inner = SubprocessRunner()
        self.completed: list[Completed] = []

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        on_start: Callable[[], object] | None = None,
    ) -> Completed:
        done = self.inner.run(argv, timeout=timeout, env=env, cwd=cwd, on_start=on_start)
        self.completed.append(done)
        return done


@pytest.mark.parametrize("venv", ["healthy", "old"])
def test_verbose_log_agrees_with_assignment_info(
    request: pytest.FixtureRequest, venv: str, tmp_path: Path
) -> None:
    python = request.getfixturevalue("healthy_venv" if venv == "healthy" else "old_qnn_venv")
    model = onnx_models.with_det(tmp_path / "det.onnx")
    runner = Recording()
    placement = run_placement(
        Target(str(python), "test"), model, nodes_in_file=3, runs=1, runner=runner
    )
    assert placement.method == "assignment-info"
    from_log = placement_from_log(runner.completed[-1].stderr_text())
    assert from_log == (placement.partitions, list(placement.cpu_nodes)) == (2, ["Det:det"])


def test_ep_context_compatible_with_its_own_runtime(
    cli: Cli, healthy_venv: Path, ep_context: Path
) -> None:
    code, doc = model_json(cli, str(ep_context), "--python", str(healthy_venv))
    context = doc["context"]
    assert context["qnn_version"] == "2.51.0" and context["qnn_build"].startswith("2.51.0.")
    assert context["htp_arch"] == 68 and context["soc"] == "UNKNOWN_SDM"
    assert context["compatible"] is True and context["not_checked"] == ["the chip's HTP arch"]
    assert context["binaries"][0]["location"].endswith("qdq_ctx_qnn.bin")
    assert context["binaries"][0]["node_sdk_version"] == context["qnn_build"]
    assert doc["placement"]["status"] == "passed" and doc["placement"]["nodes_on_qnn"] >= 1
    assert "error" in doc["timings"]["cpu"]  # an EPContext node has no CPU kernel
    assert code == 0 and "model-context-newer-than-runtime" not in finding_ids(doc)


_NO_FALLBACK_SESSION = (
    "import sys, onnxruntime as ort, onnxruntime_qnn as qnn\n"
    "ort.register_execution_provider_library('QNNExecutionProvider', qnn.get_library_path())\n"
    "devices = [d for d in ort.get_ep_devices() if d.ep_name == 'QNNExecutionProvider']\n"
    "options = ort.SessionOptions()\n"
    "options.add_session_config_entry('session.disable_cpu_ep_fallback', '1')\n"
    "options.add_provider_for_devices(devices, {'backend_type': 'htp'})\n"
    "ort.InferenceSession(sys.argv[1], sess_options=options)\n"
)


def _loads_without_cpu_fallback(python: Path, model: Path) -> subprocess.CompletedProcess[str]:
    return run_code(python, _NO_FALLBACK_SESSION, str(model))


def test_compiled_io_quantization_is_named_not_counted_as_a_fallback_and_the_run_agrees(
    cli: Cli, healthy_venv: Path, ep_context: Path, tmp_path: Path
) -> None:
    """Compiled with the default offload_graph_io_quantization, the graph I/O
    Q/DQ stay outside the EPContext node: named as such (not "mostly on CPU"),
    and a session with CPU fallback disabled really refuses the model; compiled
    with the option off, as the fix says, the model has nothing outside."""
    _, doc = model_json(cli, str(ep_context), "--python", str(healthy_venv))
    assert "model-mostly-on-cpu" not in finding_ids(doc)
    named = next(f for f in doc["findings"] if f["id"] == "model-context-io-quantization-on-cpu")
    assert named["severity"] == "info"
    outside = {e["fact"]: e["value"] for e in named["evidence"]}[
        "placement.io_quantization_outside_context"
    ]
    assert outside == ["QuantizeLinear:q_x", "DequantizeLinear:dq_y"]
    assert "offload_graph_io_quantization='0'" in named["fix"]["text"]
    refused = _loads_without_cpu_fallback(healthy_venv, ep_context)
    assert refused.returncode != 0
    assert "fallback to CPU EP has been explicitly disabled" in refused.stderr

    fixed = onnx_models.compile_ep_context(
        healthy_venv, QDQ_MODEL, tmp_path / "io_ctx.onnx", offload_graph_io_quantization="0"
    )
    _, doc = model_json(cli, str(fixed), "--python", str(healthy_venv))
    assert doc["model"]["nodes_total"] == 1
    assert "model-context-io-quantization-on-cpu" not in finding_ids(doc)
    loaded = _loads_without_cpu_fallback(healthy_venv, fixed)
    assert loaded.returncode == 0, loaded.stderr[-800:]


def test_ep_context_predicted_incompatible_with_an_older_runtime_and_the_run_confirms(
    cli: Cli, old_qnn_venv: Path, ep_context: Path
) -> None:
    code, predicted = model_json(cli, str(ep_context), "--python", str(old_qnn_venv), "--no-run")
    assert code == 1 and predicted["placement"] is None
    assert predicted["context"]["compatible"] is False
    assert predicted["runtime"]["qnn_version"] == "2.47.0"
    assert predicted["runtime"]["qnn_version_source"].startswith("release matrix")
    newer = next(f for f in predicted["findings"] if f["id"] == "model-context-newer-than-runtime")
    assert "2.51.0" in newer["explanation"] and "2.47.0" in newer["explanation"]
    assert any("onnxruntime-qnn==2.7.0" in c for c in newer["fix"]["commands"])
    code, ran = model_json(cli, str(ep_context), "--python", str(old_qnn_venv))
    assert code == 1 and ran["placement"]["status"] == "failed"
    assert "Failed to create context from binary" in ran["placement"]["reason"]
    failed = next(f for f in ran["findings"] if f["id"] == "model-session-failed")
    assert "the context check predicted" in failed["explanation"]
    assert ran["runtime"]["qnn_version_source"].startswith("onnxruntime_qnn.build_and_package_info")


def test_embedded_context_is_read_too(tmp_path: Path, healthy_venv: Path) -> None:
    from qnndoctor.model.context import read_context
    from qnndoctor.model.loading import read_model

    path = onnx_models.compile_ep_context(
        healthy_venv, QDQ_MODEL, tmp_path / "embedded.onnx", embed=True
    )
    assert [p.name for p in tmp_path.iterdir()] == ["embedded.onnx"]
    model = read_model(path)
    (info,) = [read_context(model.path, node) for node in model.ep_contexts]
    assert info.location == "embedded" and info.qnn_version == "2.51.0" and info.htp_arch == 68


def test_context_for_another_arch_is_an_error_on_a_known_chip(
    tmp_path: Path, healthy_venv: Path
) -> None:
    """Compiled for v73 (SM8550) by the real EP; checked against a v68 chip's facts."""
    from qnndoctor.matrixdata import load_or_empty
    from qnndoctor.model import checks
    from qnndoctor.model.context import read_context
    from qnndoctor.model.loading import read_model
    from qnndoctor.model.runtime import TargetRuntime

    path = onnx_models.compile_ep_context(
        healthy_venv, QDQ_MODEL, tmp_path / "v73.onnx", htp_arch="73"
    )
    model = read_model(path)
    contexts = [read_context(model.path, node) for node in model.ep_contexts]
    assert (contexts[0].htp_arch, contexts[0].soc) == (73, "SM8550")
    chip = TargetRuntime(
        "1.31.1", "2.7.0", "plugin-2.x", "2.51.0", "test", 68, "SM8350", "test", False
    )
    found, summary = checks.context_findings(contexts, chip, load_or_empty(), None)
    assert {f.finding.id for f in found} == {"model-context-other-arch"} and summary is not None
    assert summary["compatible"] is False
    same = TargetRuntime(
        "1.31.1", "2.7.0", "plugin-2.x", "2.51.0", "test", 73, "SM8550", "test", False
    )
    found, summary = checks.context_findings(contexts, same, load_or_empty(), None)
    assert found == [] and summary is not None and summary["compatible"] is True


def test_missing_context_binary_is_a_clear_error(
    cli: Cli, healthy_venv: Path, ep_context: Path, tmp_path: Path
) -> None:
    lonely = tmp_path / "alone.onnx"
    shutil.copy(ep_context, lonely)
    code, doc = model_json(cli, str(lonely), "--python", str(healthy_venv))
    assert code == 1 and doc["context"]["compatible"] is False
    missing = next(f for f in doc["findings"] if f["id"] == "model-context-binary-missing")
    assert "qdq_ctx_qnn.bin" in missing["explanation"]
    assert doc["placement"]["status"] == "failed"  # and the real session agrees


def test_a_git_lfs_pointer_instead_of_the_binary_is_named_and_the_run_agrees(
    cli: Cli, healthy_venv: Path, ep_context: Path, tmp_path: Path
) -> None:
    cloned = tmp_path / "cloned.onnx"
    shutil.copy(ep_context, cloned)
    (tmp_path / "qdq_ctx_qnn.bin").write_bytes(
        b"version https://git-lfs.github.com/spec/v1\n"
        b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        b"size 49152\n"
    )
    code, doc = model_json(cli, str(cloned), "--python", str(healthy_venv))
    assert code == 1 and doc["context"]["compatible"] is False
    pointer = next(f for f in doc["findings"] if f["id"] == "model-context-lfs-pointer")
    assert "Git LFS pointer file (130 bytes)" in pointer["explanation"]
    assert pointer["fix"]["commands"] == ["git lfs install", "git lfs pull"]
    assert doc["placement"]["status"] == "failed"  # the real session cannot load it either
    assert "Failed to get context binary info" in doc["placement"]["reason"]


def test_ir_version_too_new_predicted_and_confirmed(
    cli: Cli, healthy_venv: Path, tmp_path: Path
) -> None:
    model = onnx_models.relu_ir(tmp_path / "ir14.onnx", 14)
    code, doc = model_json(cli, str(model), "--python", str(healthy_venv))
    assert code == 1 and "model-ir-too-new" in finding_ids(doc)
    assert doc["placement"]["status"] == "failed"
    assert (
        "Unsupported model IR version: 14, max supported IR version: 13"
        in doc["placement"]["reason"]
    )


def test_text_output_names_placement_and_timing(cli: Cli, healthy_venv: Path) -> None:
    result = cli("model", str(QDQ_MODEL), "--python", str(healthy_venv), "--runs", "2")
    assert result.code == 0, result.err
    assert "Placement 4/6 nodes on QNN in 1 partition(s)" in result.out
    assert "QuantizeLinear:q_x, DequantizeLinear:dq_y on the CPU by design" in result.out
    assert "Timing    QNN median" in result.out and "No findings." in result.out


def test_backend_that_does_not_load_is_an_error_not_a_quiet_cpu_run(
    cli: Cli, healthy_venv: Path
) -> None:
    """The Linux x86-64 2.7.0 wheel ships no libQnnCpu.so: with CPU fallback
    allowed the session quietly runs on the CPU; the report says why."""
    code, doc = model_json(cli, str(QDQ_MODEL), "--python", str(healthy_venv), "--backend", "cpu")
    assert code == 1 and doc["placement"]["nodes_on_qnn"] == 0
    mostly = next(f for f in doc["findings"] if f["id"] == "model-mostly-on-cpu")
    assert mostly["severity"] == "error" and "libQnnCpu.so" in mostly["explanation"]


def test_relative_interpreter_path_and_an_input_without_random_data(
    cli: Cli, healthy_venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child starts in a neutral folder: a relative --python must still work.
    A sequence input: placement is measured, the timing says why it is missing."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("SequenceLength", ["s"], ["n"], name="length")],
        "sequence_input",
        [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("n", TensorProto.INT64, [])],
    )
    model = tmp_path / "seq.onnx"
    onnx.save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8),
        str(model),
    )
    venv_root = healthy_venv.parent.parent
    monkeypatch.chdir(venv_root.parent)
    code, doc = model_json(cli, str(model), "--python", f"{venv_root.name}/bin/python")
    assert doc["placement"]["status"] == "passed" and doc["placement"]["nodes_total"] == 1
    assert "cannot make data" in doc["timings"]["qnn"]["error"]["message"]
    assert "model-session-failed" not in finding_ids(doc) and code == 0
