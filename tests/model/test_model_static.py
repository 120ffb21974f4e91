"""``qnndoctor model``: the static side, on real models built with ``onnx`` and
real bad files. No onnxruntime here (``--no-run`` or pure functions)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import pytest
from conftest import CliResult
from helpers import onnx_models

from qnndoctor.matrixdata import load_or_empty
from qnndoctor.model import checks
from qnndoctor.model.context import parse_binary
from qnndoctor.model.findings import ModelFinding
from qnndoctor.model.loading import ModelError, read_model
from qnndoctor.model.runtime import TargetRuntime
from qnndoctor.smoke import MODEL as QDQ_MODEL

Cli = Callable[..., CliResult]


def runtime(**values: object) -> TargetRuntime:
    """Target facts for the pure check functions (as the probes would give)."""
    base: dict[str, object] = dict(
        onnxruntime="1.31.1",
        onnxruntime_qnn="2.7.0",
        era="plugin-2.x",
        qnn_version="2.51.0",
        qnn_version_source="test",
        htp_arch=None,
        soc=None,
        soc_source=None,
        windows=False,
    )
    base.update(values)
    return TargetRuntime(**base)  # type: ignore[arg-type]


def ids(findings: list[ModelFinding]) -> set[str]:
    return {f.finding.id for f in findings}


def test_reads_the_shipped_qdq_model() -> None:
    model = read_model(QDQ_MODEL)
    assert model.ir_version == 7 and model.opsets == {"": 13}
    assert model.precision == "qdq"
    assert len(model.nodes) == 6 and model.op_counts["ai.onnx:QuantizeLinear"] == 2
    assert model.inputs[0].dims == (1, 8) and model.inputs[0].free_dims == ()
    assert checks.op_findings(model) == [] and checks.shape_findings(model, False) == []
    assert checks.precision_findings(model, runtime(htp_arch=68)) == []


def test_dynamic_batch_names_the_dimension_and_the_fix(tmp_path: Path) -> None:
    model = read_model(onnx_models.dynamic_batch_float(tmp_path / "dyn.onnx"))
    assert model.inputs[0].dims == ("batch", 4) and model.inputs[0].free_dims == (0,)
    (found,) = checks.shape_findings(model, windows=False)
    assert found.finding.id == "model-dynamic-shape"
    assert "input 'x' dim 0 = 'batch'" in found.finding.explanation
    assert found.finding.fix is not None
    needs_onnx, command = found.finding.fix.commands
    assert needs_onnx == "python -m pip install onnx"
    assert "make_dynamic_shape_fixed --dim_param batch --dim_value 1" in command
    # Run by the target's own interpreter, which has the onnxruntime tools.
    (run_by_target,) = checks.shape_findings(model, False, "/opt/ai venv/bin/python")
    assert run_by_target.finding.fix is not None
    assert run_by_target.finding.fix.commands[1].startswith(
        "'/opt/ai venv/bin/python' -m onnxruntime.tools.make_dynamic_shape_fixed"
    )
    assert all(s.startswith("https://") for s in found.sources)


def test_fp16_model_is_an_error_on_a_v68_chip_and_information_elsewhere(tmp_path: Path) -> None:
    model = read_model(onnx_models.fp16(tmp_path / "fp16.onnx"))
    assert model.precision == "float16"
    assert ids(checks.precision_findings(model, runtime(htp_arch=68, soc="SM8350"))) == {
        "model-fp16-unsupported-chip"
    }
    assert ids(checks.precision_findings(model, runtime(htp_arch=73))) == {"model-float-on-htp"}
    assert ids(checks.precision_findings(model, None)) == {"model-float-on-htp"}


def test_op_without_qnn_support_is_listed(tmp_path: Path) -> None:
    model = read_model(onnx_models.with_det(tmp_path / "det.onnx"))
    (found,) = checks.op_findings(model)
    assert "ai.onnx:Det (1)" in found.finding.explanation
    assert "Relu" not in found.finding.explanation and found.confidence.startswith("medium")


def test_ir_version_newer_than_the_target_runtime(tmp_path: Path) -> None:
    model = read_model(onnx_models.relu_ir(tmp_path / "ir14.onnx", 14))
    (found,) = checks.version_findings(model, runtime(onnxruntime="1.31.1"))
    assert found.finding.id == "model-ir-too-new" and found.severity.label == "error"
    assert (
        "IR version 14" in found.finding.explanation and "up to IR 13" in found.finding.explanation
    )
    # A release newer than every measured one: only a warning (it may load more).
    (newer,) = checks.version_findings(model, runtime(onnxruntime="1.40.0"))
    assert newer.severity.label == "warning"
    # A patch release of a measured minor version: the measured limit holds.
    (patch,) = checks.version_findings(model, runtime(onnxruntime="1.24.1"))
    assert patch.severity.label == "error"
    # Older than every measured release: nothing is ruled out.
    assert checks.version_findings(model, runtime(onnxruntime="1.16.3")) == []
    assert (
        checks.version_findings(
            read_model(onnx_models.relu_ir(tmp_path / "ir13.onnx", 13)), runtime()
        )
        == []
    )
    # 1.22.1 loads up to IR 10: the shipped model (IR 7) is fine, IR 13 is not.
    assert checks.version_findings(read_model(QDQ_MODEL), runtime(onnxruntime="1.22.1")) == []
    old = checks.version_findings(read_model(tmp_path / "ir13.onnx"), runtime(onnxruntime="1.22.1"))
    assert ids(old) == {"model-ir-too-new"} and "1.24.4" in (
        old[0].finding.fix.text if old[0].finding.fix else ""
    )


def test_missing_external_data_is_an_error(tmp_path: Path) -> None:
    path = onnx_models.external_weights(tmp_path / "ext.onnx")
    assert checks.file_findings(read_model(path), None) == []
    (tmp_path / "ext.weights").unlink()
    (found,) = checks.file_findings(read_model(path), None)
    assert (
        found.finding.id == "model-external-data-missing"
        and "ext.weights" in found.finding.explanation
    )


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("truncated.onnx", None, "corrupt or truncated"),
        ("text.onnx", b"this is not a model\n", "not an ONNX model"),
        ("json.onnx", b'{"graph": []}', "not an ONNX model"),
        ("empty.onnx", b"", "the file is empty"),
        ("zeros.onnx", b"\x00" * 64, "not an ONNX model"),
    ],
)
def test_bad_files_are_clear_errors(
    cli: Cli, tmp_path: Path, name: str, content: bytes | None, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content if content is not None else QDQ_MODEL.read_bytes()[:300])
    with pytest.raises(ModelError, match=message):
        read_model(path)
    result = cli("model", str(path), "--no-run")
    assert result.code == 3 and message in result.err and "Traceback" not in result.err
    as_json = cli("model", str(path), "--json")
    assert as_json.code == 3 and as_json.json()["error"]["kind"] == "could-not-check"
    onnx_models.validate_model_document(as_json.json())


def test_missing_file_and_folder_are_clear_errors(cli: Cli, tmp_path: Path) -> None:
    for path, message in ((tmp_path / "nope.onnx", "no such file"), (tmp_path, "is a folder")):
        result = cli("model", str(path), "--no-run")
        assert result.code == 3 and message in result.err and "Traceback" not in result.err


def test_without_onnx_the_message_says_which_extra(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['onnx'] = None\n"
        "from qnndoctor.cli.main import main\n"
        f"sys.exit(main(['model', {str(QDQ_MODEL)!r}, '--no-run']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr and "qnndoctor[model]\"" not in done.stderr
    # qnndoctor is not on the index: the extra's requirement into qnndoctor's own
    # interpreter (always works), and the way this installation was made, with the
    # extra: an editable checkout (development) or the wheel file (CI installs one).
    assert f"`{sys.executable} -m pip install 'onnx>=1.16'`" in done.stderr
    direct = json.loads(metadata.distribution("qnndoctor").read_text("direct_url.json") or "{}")
    if (direct.get("dir_info") or {}).get("editable"):
        assert "(an editable install of a local folder)" in done.stderr
        assert "-m pip install -e " in done.stderr and "[model]" in done.stderr
    elif direct.get("url", "").endswith(".whl"):
        assert "(a local wheel or archive)" in done.stderr
        assert ".whl[model]'`" in done.stderr


def test_context_binary_parser_on_garbage() -> None:
    assert parse_binary(b"") == (None, None, None)
    assert parse_binary(bytes(range(256)) * 10) == (None, None, None)
    # A lone build string without the graph configuration: version only.
    assert parse_binary(b"xx v2.47.0.260601114230 yy") == ("2.47.0.260601114230", None, None)


def test_non_ascii_model_path_matters_on_windows(tmp_path: Path) -> None:
    folder = tmp_path / "modèles"
    folder.mkdir()
    model = read_model(onnx_models.with_det(folder / "det.onnx"))
    (on_windows,) = checks.file_findings(model, runtime(windows=True))
    (elsewhere,) = checks.file_findings(model, runtime(windows=False))
    assert on_windows.severity.label == "warning" and elsewhere.severity.label == "info"
    # The probe found a character the ANSI code page cannot represent: an error.
    (unmappable,) = checks.file_findings(
        model, runtime(windows=True, model_path_in_code_page=False, ansi_code_page="cp1252")
    )
    assert unmappable.severity.label == "error" and "cp1252" in unmappable.finding.explanation
    assert checks.file_findings(read_model(QDQ_MODEL), runtime(windows=True)) == []


def test_matrix_names_the_release_that_loads_a_newer_context() -> None:
    from packaging.version import Version

    assert checks._first_release_with(load_or_empty(), Version("2.51.0")) == "2.7.0"
    assert checks._first_release_with(load_or_empty(), Version("2.47.0")) == "2.3.0"


def test_every_model_finding_is_documented() -> None:
    from qnndoctor.model.findings import KINDS

    docs = (Path(__file__).resolve().parents[2] / "docs" / "model.md").read_text("utf-8")
    assert [k for k in KINDS if f"| `{k}` |" not in docs] == []


def test_graph_io_quantization_nodes_are_those_at_the_graph_edges() -> None:
    """Only the Q fed by a graph input and the DQ making a graph output: the
    inner Q/DQ pairs (and the DQ of a constant) are the model's own compute."""
    from qnndoctor.model.loading import read_model
    from qnndoctor.smoke import MODEL

    model = read_model(MODEL)
    assert {op for _, op, _ in model.nodes} >= {"QuantizeLinear", "DequantizeLinear"}
    assert len(model.nodes) == 6
    assert model.io_quantization == ("QuantizeLinear:q_x", "DequantizeLinear:dq_y")
