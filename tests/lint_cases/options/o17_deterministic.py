# case: options.md #17  expect: QND041
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]

so = ort.SessionOptions()
so.use_deterministic_compute = True
so.add_provider_for_devices(devices, {"backend_type": "htp"})
