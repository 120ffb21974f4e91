# case: api.md api-019  expect: QND001
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]

sess = ort.InferenceSession("model.onnx")
sess.set_providers(["QNNExecutionProvider"], [{"backend_type": "htp"}])
