# case: options.md #2  expect: QND014
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]

qnn_options = {"backend_type": "htp"}
qnn_options["vtcm_mb"] = "8MB"
so = ort.SessionOptions()
so.add_provider_for_devices(devices, qnn_options)
