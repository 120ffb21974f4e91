# case: quant.md q-035  expect: QND060
from onnxruntime.quantization import quantize
from onnxruntime.quantization.execution_providers.qnn import get_qnn_qdq_config

from data import Reader

config = get_qnn_qdq_config("model.onnx", Reader(), calibration_providers=["QNNExecutionProvider"])
quantize("model.onnx", "model.qdq.onnx", config)
