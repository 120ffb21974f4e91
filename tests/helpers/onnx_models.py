"""Small real ONNX models for the ``qnndoctor model`` tests, built with ``onnx``,
and EPContext models compiled by a real onnxruntime-qnn in a target venv."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def dynamic_batch_float(path: Path) -> Path:
    """float32 MatMul + Relu with a symbolic batch dimension."""
    weight = numpy_helper.from_array(np.arange(16, dtype=np.float32).reshape(4, 4) / 16, "w")
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["a"], name="mm"),
            helper.make_node("Relu", ["a"], ["y"], name="relu"),
        ],
        "dynamic_batch",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
        initializer=[weight],
    )
    return _save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path
    )


def fp16(path: Path) -> Path:
    """float16 Mul + Relu, static shapes."""
    weight = numpy_helper.from_array(np.linspace(0, 1, 16, dtype=np.float16).reshape(4, 4), "w")
    graph = helper.make_graph(
        [
            helper.make_node("Mul", ["x", "w"], ["a"], name="mul"),
            helper.make_node("Relu", ["a"], ["y"], name="relu"),
        ],
        "fp16",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [4, 4])],
        initializer=[weight],
    )
    return _save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path
    )


def with_det(path: Path) -> Path:
    """Relu -> Det -> Sigmoid: Det is not a QNN EP operator."""
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["a"], name="relu_in"),
            helper.make_node("Det", ["a"], ["b"], name="det"),
            helper.make_node("Sigmoid", ["b"], ["y"], name="sigmoid_out"),
        ],
        "with_det",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    return _save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path
    )


def relu_ir(path: Path, ir_version: int) -> Path:
    """A one-node model stamped with the given IR version."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=ir_version
    )
    onnx.save(model, str(path))  # no checker: IR 14 may be newer than this onnx checks
    return path


def external_weights(path: Path, location: str = "ext.weights") -> Path:
    """A float MatMul whose weight lives in an external data file beside it."""
    weight = numpy_helper.from_array(np.ones((64, 64), dtype=np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "ext",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
        initializer=[weight],
    )
    onnx.save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
        str(path),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=location,
        size_threshold=0,
    )
    return path


def external_outside(path: Path, location: str) -> Path:
    """``external_weights`` whose data location is then rewritten to ``location``
    (outside the model's folder: ``../../etc/passwd``, an absolute path)."""
    external_weights(path)
    model = onnx.load(str(path), load_external_data=False)
    for entry in model.graph.initializer[0].external_data:
        if entry.key == "location":
            entry.value = location
    path.write_bytes(model.SerializeToString())
    return path


def huge_shapes(path: Path) -> Path:
    """Relu on float32 [100000, 100000, 100] (3.6 TiB): measured, QNN on the
    simulator spends more than 100 s on it before failing with 1002."""
    dims = [100000, 100000, 100]
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        "huge",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)],
    )
    return _save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path
    )


def float_gather(path: Path) -> Path:
    """Relu -> Gather -> Sigmoid in float32: on the HTP simulator (QNN 2.51.0,
    fp16 precision off) the session fails at graph finalize with 1002, and the
    error names no node; Gather alone fails the same way."""
    indices = numpy_helper.from_array(np.array([0, 2, 4, 6], dtype=np.int64), "i")
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["a"], name="relu_in"),
            helper.make_node("Gather", ["a", "i"], ["g"], name="gather", axis=1),
            helper.make_node("Sigmoid", ["g"], ["y"], name="sigmoid_out"),
        ],
        "float_gather",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        initializer=[indices],
    )
    return _save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path
    )


def float_exp(path: Path) -> Path:
    """One float32 Exp on [1, 64]. On the simulator it matches the CPU EP to
    8e-8 with the EP's default options; with enable_htp_fp16_precision=1 and
    soc_model=57 inputs in [0, 12) give 131008 where the CPU gives 157396."""
    graph = helper.make_graph(
        [helper.make_node("Exp", ["x"], ["y"], name="exp")],
        "float_exp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
    )
    return _save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path
    )


def _qdq(
    name: str, source: str, target: str, scale: float, zero: int
) -> tuple[list[Any], list[Any]]:
    """QuantizeLinear + DequantizeLinear (uint8) from ``source`` to ``target``."""
    scale_init = numpy_helper.from_array(np.array(scale, dtype=np.float32), f"{name}_scale")
    zero_init = numpy_helper.from_array(np.array(zero, dtype=np.uint8), f"{name}_zero")
    params = [f"{name}_scale", f"{name}_zero"]
    nodes = [
        helper.make_node("QuantizeLinear", [source, *params], [f"{name}_q"], name=f"q_{name}"),
        helper.make_node("DequantizeLinear", [f"{name}_q", *params], [target], name=f"dq_{name}"),
    ]
    return nodes, [scale_init, zero_init]


def qdq_layernorm_chain(path: Path) -> Path:
    """8-bit QDQ Relu -> Add -> LayerNormalization -> Mul on [1, 64]. Measured on
    the HTP simulator (QNN 2.51.0): Relu and Add match the CPU EP exactly on
    inputs in [0, 8); HTP's 8-bit LayerNormalization differs from the CPU EP's
    by one quantization step (8/255 = 0.031) on some elements."""
    step = 8 / 255
    parts = [
        _qdq("x", "x", "x_dq", step, 0),
        _qdq("relu", "relu_out", "relu_dq", step, 0),
        _qdq("add", "add_out", "add_dq", 2 * step, 0),
        _qdq("ln", "ln_out", "ln_dq", step, 128),
        _qdq("y", "mul_out", "y", 2 * step, 128),
    ]
    half = numpy_helper.from_array(np.full((1, 64), 0.5, dtype=np.float32), "half")
    two = numpy_helper.from_array(np.full((1, 64), 2.0, dtype=np.float32), "two")
    gamma = numpy_helper.from_array(np.ones(64, dtype=np.float32), "gamma")
    beta = numpy_helper.from_array(np.zeros(64, dtype=np.float32), "beta")
    (qx, ix), (qr, ir), (qa, ia), (ql, il), (qy, iy) = parts
    nodes = [
        *qx,
        helper.make_node("Relu", ["x_dq"], ["relu_out"], name="relu"),
        *qr,
        helper.make_node("Add", ["relu_dq", "half"], ["add_out"], name="add"),
        *qa,
        helper.make_node(
            "LayerNormalization", ["add_dq", "gamma", "beta"], ["ln_out"], name="layernorm", axis=-1
        ),
        *ql,
        helper.make_node("Mul", ["ln_dq", "two"], ["mul_out"], name="mul"),
        *qy,
    ]
    graph = helper.make_graph(
        nodes,
        "qdq_layernorm_chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
        initializer=[*ix, *ir, *ia, *il, *iy, half, two, gamma, beta],
    )
    return _save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path
    )


_COMPILE = textwrap.dedent(
    """
    import sys, onnxruntime as ort, onnxruntime_qnn as qnn
    source, target, embed = sys.argv[1:4]
    extra = dict(a.split("=", 1) for a in sys.argv[4:])
    ort.register_execution_provider_library("QNNExecutionProvider", qnn.get_library_path())
    devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.add_session_config_entry("ep.context_enable", "1")
    options.add_session_config_entry("ep.context_file_path", target)
    options.add_session_config_entry("ep.context_embed_mode", embed)
    options.add_provider_for_devices(devices, dict(backend_type="htp", **extra))
    ort.InferenceSession(source, sess_options=options)
    """
)


def compile_ep_context(
    python: Path, source: Path, target: Path, *, embed: bool = False, **provider_options: str
) -> Path:
    """Compile ``source`` into an EPContext model with the real QNN EP of ``python``."""
    subprocess.run(
        [
            str(python),
            "-c",
            _COMPILE,
            str(source),
            str(target),
            "1" if embed else "0",
            *(f"{k}={v}" for k, v in provider_options.items()),
        ],
        check=True,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=300,
    )
    return target


def validate_model_document(document: dict[str, Any]) -> None:
    """Check a ``qnndoctor model --json`` document against the shipped schema."""
    import json
    from importlib import resources

    import jsonschema

    schema = json.loads(
        resources.files("qnndoctor").joinpath("schema/model.schema.json").read_text("utf-8")
    )
    jsonschema.validate(document, schema)
