# case: run.md (qnn.htp_perf_mode as a provider option)  expect: QND012
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]

so = ort.SessionOptions()
so.add_provider_for_devices(devices, {"backend_type": "htp", "qnn.htp_perf_mode": "burst"})
