# case: options.md #3  expect: QND016
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]

VTCM = "64"
so = ort.SessionOptions()
so.add_provider_for_devices(devices, dict(backend_type="htp", vtcm_mb=VTCM))
