"""What qnndoctor knows about models on QNN, each fact with its public source.

Kept as data (not logic) so that a reviewer can check every entry against the
cited page, and so that a newer runtime means a new row, not new code.
"""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

# Highest model IR version and ai.onnx opset that an onnxruntime release loads,
# per minor release (patch releases do not move them). Measured here with the
# real Linux x86-64 wheels: a Relu model stamped with each IR version / opset,
# loaded on the CPU EP; the error text is the proof, e.g. 1.23.2:
# "Unsupported model IR version: 12, max supported IR version: 11" and
# "Current official support for domain ai.onnx is till opset 23."
ORT_LIMITS: dict[str, tuple[int, int]] = {
    "1.17.3": (9, 20),
    "1.18.1": (10, 21),
    "1.19.2": (10, 21),
    "1.20.1": (10, 21),
    "1.21.1": (10, 22),
    "1.22.1": (10, 22),
    "1.23.2": (11, 23),
    "1.24.4": (13, 25),
    "1.25.1": (13, 26),
    "1.26.0": (13, 26),
    "1.27.0": (13, 26),
    "1.31.1": (13, 26),
}
ORT_LIMITS_SOURCES = (
    "https://onnxruntime.ai/docs/reference/compatibility.html",
    "https://github.com/microsoft/onnxruntime/blob/main/docs/Versioning.md",
)

# ONNX operators the QNN EP lists as supported (onnxruntime-qnn 2.x docs,
# "Supported ONNX operators"). Not listed: expect a CPU fallback. The list lags
# the releases (2.4.0's release notes add GRU, IsInf, LpPool, OneHot, Selu and
# Xor, not in the table), so those are added with their release as source.
QNN_OPS_SOURCE = (
    "https://github.com/onnxruntime/onnxruntime-qnn/blob/main/docs/execution_providers/"
    "QNN-ExecutionProvider.md#supported-onnx-operators"
)
QNN_OPS_RELEASE_SOURCE = "https://github.com/onnxruntime/onnxruntime-qnn/releases/tag/v2.4.0"
_DOCUMENTED = (
    "Abs Add And ArgMax ArgMin Asin Atan AveragePool BatchNormalization Cast Ceil Clip "
    "Concat Conv ConvInteger ConvTranspose Cos CumSum DepthToSpace DequantizeLinear "
    "DynamicQuantizeLinear Div Einsum Elu Equal Exp Expand Flatten Floor Gather "
    "GatherElements GatherND Gelu Gemm GlobalAveragePool GlobalMaxPool Greater "
    "GreaterOrEqual GridSample GroupNormalization HardSigmoid HardSwish Identity "
    "InstanceNormalization Inverse IsNaN LRN LSTM LayerNormalization LeakyRelu Less "
    "LessOrEqual Log LogSoftmax LpNormalization MatMul MatMulInteger Max MaxPool Mean Min "
    "Mod Mul Neg NonZero Not Or PRelu Pad Pow QuantizeLinear RandomNormalLike "
    "RandomUniformLike Reciprocal ReduceL2 ReduceMax ReduceMean ReduceMin ReduceProd "
    "ReduceSum Relu RMSNormalization Reshape Resize RoiAlign Round RotaryEmbedding STFT "
    "ScatterElements ScatterND Sigmoid Sign Sin Slice Softmax Softplus SpaceToDepth Split "
    "Sqrt Squeeze Sub Sum Tan Tanh ThresholdedRelu Tile TopK Transpose Unsqueeze Upsample "
    "Where "
    # onnxruntime-qnn 2.4.0 release notes:
    "GRU IsInf LpPool OneHot Selu Xor"
)
_DOCUMENTED_MS = (
    "DequantizeLinear FusedMatMul Gelu MatMulNBits QuantizeLinear QuickGelu "
    "RotaryEmbedding SimplifiedLayerNormalization EPContext"
)
QNN_OPS = frozenset("ai.onnx:" + op for op in _DOCUMENTED.split(" ") if op) | frozenset(
    "com.microsoft:" + op for op in _DOCUMENTED_MS.split(" ") if op
)

# fp16 on HTP: "fp16 requires hexagon v73 and above" (onnxruntime maintainer,
# on an SM8350 / v69 failure), and a v68 chip's own error "The SocModel doesn't
# support FP16".
FP16_MIN_ARCH = 73
FP16_SOURCES = (
    "https://github.com/microsoft/onnxruntime/issues/21848",
    "https://github.com/immich-app/immich/discussions/25112",
)
# Float32 models: the 2.x EP runs them on HTP in fp16 (enable_htp_fp16_precision,
# default on), so the same chip limit applies.
FP32_AS_FP16_SOURCE = QNN_OPS_SOURCE.replace("#supported-onnx-operators", "#configuration-options")
DYNAMIC_SHAPE_SOURCES = (
    "https://github.com/onnxruntime/onnxruntime-qnn/blob/main/docs/execution_providers/"
    "QNN-ExecutionProvider.md#model-requirements",
    "https://onnxruntime.ai/docs/tutorials/mobile/helpers/make-dynamic-shape-fixed.html",
)
IO_OFFLOAD_SOURCES = (  # offload_graph_io_quantization: added, then made the default
    "https://github.com/microsoft/onnxruntime/pull/22436",
    "https://github.com/microsoft/onnxruntime/pull/23368",
    QNN_OPS_SOURCE.replace("#supported-onnx-operators", "#configuration-options"),
)
CONTEXT_SOURCES = (
    "https://github.com/onnxruntime/onnxruntime-qnn/blob/main/docs/execution_providers/"
    "QNN-ExecutionProvider.md#qnn-context-binary-cache-feature",
)


def ort_limits(version: str | None) -> tuple[int | None, int | None, bool]:
    """(max IR, max ai.onnx opset, exact) for an onnxruntime version.

    A measured minor release gives its limits (``exact``); a release between
    two measured ones gets the older one's limits (newer runtimes never load
    less) and ``exact`` False; older than every measured release or
    unparsable: (None, None, False), nothing is ruled out.
    """
    if not version:
        return None, None, False
    try:
        wanted = Version(version)
    except InvalidVersion:
        return None, None, False
    minor = wanted.release[:2]
    measured = sorted((Version(v), limits) for v, limits in ORT_LIMITS.items())
    for found, (ir, opset) in measured:
        if found.release[:2] == minor:
            return ir, opset, True
    below = [(v, limits) for v, limits in measured if v <= wanted]
    if not below:
        return None, None, False
    _, (ir, opset) = below[-1]
    return ir, opset, False
