"""Regenerate the smoke model: ``python -m qnndoctor.smoke.build_model``.

A QDQ (quantize/dequantize) model small enough to read in a hex dump:
``y = x + c`` with x, c and y quantized to uint8. The HTP backend runs
quantized graphs; a float-only model would be quietly converted or refused.
Writes ``qdq_add.onnx`` and ``qdq_add.expected.json`` next to this file;
byte-for-byte reproducible (tests check that). Needs the ``onnx`` package.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MODEL = HERE / "qdq_add.onnx"
EXPECTED = HERE / "qdq_add.expected.json"

SCALE = 0.05  # exactly one quantization step of every tensor
ZERO_POINT = 0
INPUT = [0.1, 0.5, 1.0, 2.0, 3.0, 4.25, 6.0, 9.0]
CONSTANT = [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0]


def _quantize(value: float) -> int:
    """ONNX QuantizeLinear for uint8: round half to even, then saturate."""
    return max(0, min(255, round(value / SCALE) + ZERO_POINT))


def expected_output() -> list[float]:
    """What an exact QDQ implementation returns, computed here independently."""
    return [
        (
            _quantize((_quantize(x) - ZERO_POINT) * SCALE + (_quantize(c) - ZERO_POINT) * SCALE)
            - ZERO_POINT
        )
        * SCALE
        for x, c in zip(INPUT, CONSTANT, strict=True)
    ]


def build() -> bytes:
    import onnx
    from onnx import TensorProto, helper

    n = len(INPUT)
    scale = helper.make_tensor("scale", TensorProto.FLOAT, [], [SCALE])
    zero = helper.make_tensor("zero_point", TensorProto.UINT8, [], [ZERO_POINT])
    const_q = helper.make_tensor("c_q", TensorProto.UINT8, [1, n], [_quantize(c) for c in CONSTANT])
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "scale", "zero_point"], ["x_q"], name="q_x"),
        helper.make_node("DequantizeLinear", ["x_q", "scale", "zero_point"], ["x_dq"], name="dq_x"),
        helper.make_node("DequantizeLinear", ["c_q", "scale", "zero_point"], ["c_dq"], name="dq_c"),
        helper.make_node("Add", ["x_dq", "c_dq"], ["sum"], name="add"),
        helper.make_node("QuantizeLinear", ["sum", "scale", "zero_point"], ["y_q"], name="q_y"),
        helper.make_node("DequantizeLinear", ["y_q", "scale", "zero_point"], ["y"], name="dq_y"),
    ]
    graph = helper.make_graph(
        nodes,
        "qnndoctor_smoke_qdq_add",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])],
        initializer=[scale, zero, const_q],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 13)],
        producer_name="qnndoctor",
        producer_version="1",
        ir_version=7,
    )
    onnx.checker.check_model(model, full_check=True)
    data: bytes = model.SerializeToString(deterministic=True)
    return data


def expected_document() -> dict[str, Any]:
    return {
        "model": MODEL.name,
        "input_name": "x",
        "input_shape": [1, len(INPUT)],
        "input": INPUT,
        "output_name": "y",
        "expected": expected_output(),
        "tolerance": SCALE,
        "tolerance_why": "one uint8 quantization step: backends may round the Add differently",
        "nodes": 6,
    }


def main() -> None:
    MODEL.write_bytes(build())
    EXPECTED.write_text(json.dumps(expected_document(), indent=2) + "\n")
    print(f"wrote {MODEL} ({MODEL.stat().st_size} bytes) and {EXPECTED}")


if __name__ == "__main__":
    main()
