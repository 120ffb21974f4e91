# case: options.md #24  expect: QND001
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
sess = ort.InferenceSession("model.onnx", providers=["QNNExecutionProvider"], provider_options=[{"backend_path": "libQnnHtp.so"}])
