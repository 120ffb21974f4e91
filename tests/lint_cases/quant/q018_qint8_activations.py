# case: quant.md q-018  expect: QND061
from onnxruntime.quantization import QuantType, quantize
from onnxruntime.quantization.execution_providers.qnn import get_qnn_qdq_config

from data import Reader

config = get_qnn_qdq_config("model.onnx", Reader(), activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
quantize("model.onnx", "model.qdq.onnx", config)
