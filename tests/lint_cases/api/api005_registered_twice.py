# case: api.md api-005  expect: QND003
import onnxruntime as ort
import onnxruntime_qnn

lib = onnxruntime_qnn.get_library_path()
ort.register_execution_provider_library("QNNExecutionProvider", lib)
ort.register_execution_provider_library("qnn", lib)
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]
