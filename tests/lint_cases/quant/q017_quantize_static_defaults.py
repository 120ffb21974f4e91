# case: quant.md q-017  expect: QND061
import onnxruntime as ort
import onnxruntime_qnn
from onnxruntime.quantization import QuantFormat, quantize_static

from data import Reader

quantize_static("model.onnx", "model.qdq.onnx", Reader(), quant_format=QuantFormat.QDQ)
ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
so = ort.SessionOptions()
so.add_provider_for_devices([d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"], {"backend_type": "htp"})
sess = ort.InferenceSession("model.qdq.onnx", sess_options=so)
