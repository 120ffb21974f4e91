# case: api.md api-063  expect: QND011
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]

so = ort.SessionOptions()
so.add_provider_for_devices(devices, {"backend_type": "htp", "session.disable_cpu_ep_fallback": "1"})
sess = ort.InferenceSession("float_model.onnx", sess_options=so)
