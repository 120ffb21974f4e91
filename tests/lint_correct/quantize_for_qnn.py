"""Static QDQ quantization for the HTP with get_qnn_qdq_config (the onnxruntime docs' recipe)."""

from onnxruntime.quantization import QuantType, quantize
from onnxruntime.quantization.execution_providers.qnn import get_qnn_qdq_config, qnn_preprocess_model

from data import Reader

changed = qnn_preprocess_model("model.onnx", "model.pre.onnx")
config = get_qnn_qdq_config(
    "model.pre.onnx" if changed else "model.onnx",
    Reader(),
    activation_type=QuantType.QUInt16,
    weight_type=QuantType.QUInt8,
)
quantize("model.pre.onnx" if changed else "model.onnx", "model.qdq.onnx", config)
