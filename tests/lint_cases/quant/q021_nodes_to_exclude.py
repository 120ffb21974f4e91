# case: quant.md q-021  expect: QND062
from onnxruntime.quantization import quantize
from onnxruntime.quantization.execution_providers.qnn import get_qnn_qdq_config

from data import Reader

config = get_qnn_qdq_config("model.onnx", Reader(), nodes_to_exclude=["fc"])
quantize("model.onnx", "model.qdq.onnx", config)
