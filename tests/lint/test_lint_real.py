"""Lint findings proven on the HTP simulator: the very snippet lint flags
(tests/lint_cases/, as a user wrote it) is run for real with onnxruntime
1.31.1 + onnxruntime-qnn 2.7.0 and shows the silent behaviour; and
``lint --python`` / ``ensure_ready(provider_options=...)`` read the real
target's version."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

import qnndoctor
from qnndoctor.lint import lint_paths

CASES = Path(__file__).resolve().parents[1] / "lint_cases"
QDQ_ADD = str(resources.files("qnndoctor").joinpath("smoke/qdq_add.onnx"))


def _run(python: Path, code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        errors="replace",
    )


def _case(name: str, model: str) -> str:
    path = CASES / name
    assert [f.code for _, f in lint_paths([str(path)]).findings], f"lint no longer flags {name}"
    return path.read_text("utf-8").replace('"model.onnx"', repr(model))


def test_providers_by_name_after_registering_runs_on_cpu_silently(healthy_venv: Path, tmp_path: Path) -> None:
    """QND001 (options.md #24): flagged by lint, and for real the session
    has only the CPU EP and nothing at all is printed."""
    code = _case("options/o24_providers_after_register.py", QDQ_ADD)
    done = _run(healthy_venv, code + "\nprint(sess.get_providers())\n", tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "['CPUExecutionProvider']"
    assert done.stderr == ""


def test_fallback_true_leaves_cpu_fallback_on(healthy_venv: Path, tmp_path: Path) -> None:
    """QND020 (options.md #13): with 'true' a model with a node the HTP
    rejects (Det) still gets a session (fallback stayed on); with '1' the
    same session is refused. Nothing says 'true' was not understood."""
    from helpers import onnx_models

    model = str(onnx_models.with_det(tmp_path / "with_det.onnx"))
    code = _case("options/o13_fallback_true.py", model)
    session = (
        "\nso.add_provider_for_devices(devices, {'backend_type': 'htp'})"
        f"\nsess = ort.InferenceSession({model!r}, sess_options=so)"
        "\nprint('created')\n"
    )
    silent = _run(healthy_venv, code + session, tmp_path)
    assert silent.returncode == 0, silent.stderr[-2000:]
    assert silent.stdout.splitlines()[-1] == "created"  # (a LIBNATIVE line may come first)
    assert "true" not in silent.stderr and "disable_cpu_ep_fallback" not in silent.stderr
    strict = _run(healthy_venv, code.replace('"true"', '"1"') + session, tmp_path)
    assert strict.returncode != 0 and "created" not in strict.stdout


def test_lint_python_reads_the_targets_version(cli: Callable[..., Any], healthy_venv: Path) -> None:
    result = cli("lint", "--python", str(healthy_venv), "--format", "json", str(CASES / "options" / "o07_1x_context_options.py"))
    assert result.code == 1, result.err
    doc = json.loads(result.out)
    assert doc["onnxruntime_qnn"] == "2.7.0"
    assert {f["code"] for f in doc["findings"]} == {"QND010"}


def test_ensure_ready_refuses_options_that_would_be_ignored(healthy_venv: Path) -> None:
    with pytest.raises(qnndoctor.NotReady) as refused:
        qnndoctor.ensure_ready(
            healthy_venv, smoke=False, provider_options={"backend_type": "htp", "htp_performance_mode": "fast"}
        )
    assert refused.value.findings[0].id == "QND013"
    assert "fast" in str(refused.value.findings[0].cause)


def test_context_enable_true_compiles_nothing(healthy_venv: Path, tmp_path: Path) -> None:
    """QND020 (options.md #9): with ep.context_enable='true' no EPContext
    model is written and nothing is said; with '1' the same code writes it."""
    import shutil

    shutil.copy(QDQ_ADD, tmp_path / "model.onnx")
    code = _case("options/o09_context_enable_true.py", "model.onnx")
    code += "\nsess = ort.InferenceSession('model.onnx', sess_options=so)\nprint('ran')\n"
    silent = _run(healthy_venv, code, tmp_path)
    assert silent.returncode == 0 and silent.stdout.splitlines()[-1] == "ran", silent.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx"]
    assert "context_enable" not in silent.stderr
    written = _run(healthy_venv, code.replace('"true"', '"1"'), tmp_path)
    assert written.returncode == 0, written.stderr[-2000:]
    assert (tmp_path / "model_ctx.onnx").is_file()


def test_compiler_without_ep_writes_the_input_graph(healthy_venv: Path, tmp_path: Path) -> None:
    """QND050 (api.md api-027): ModelCompiler given SessionOptions with no EP
    'compiles' with no error into a model without any EPContext node."""
    import onnx

    path = CASES / "api" / "api027_compiler_without_ep.py"
    assert [f.code for _, f in lint_paths([str(path)]).findings] == ["QND050"]
    code = path.read_text("utf-8").replace('"models/qdq_conv.onnx"', repr(QDQ_ADD))
    done = _run(healthy_venv, code, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    compiled = onnx.load(str(tmp_path / "qdq_conv_ctx.onnx"))
    original = onnx.load(QDQ_ADD)
    assert "EPContext" not in {n.op_type for n in compiled.graph.node}
    assert sorted(n.op_type for n in compiled.graph.node) == sorted(n.op_type for n in original.graph.node)
