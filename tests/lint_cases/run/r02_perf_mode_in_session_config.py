# case: run.md (qnn.htp_perf_mode in the session config)  expect: QND022
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]

so = ort.SessionOptions()
so.add_session_config_entry("qnn.htp_perf_mode", "burst")
so.add_provider_for_devices(devices, {"backend_type": "htp"})
