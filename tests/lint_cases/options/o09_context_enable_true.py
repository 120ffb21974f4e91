# case: options.md #9  expect: QND020
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]

so = ort.SessionOptions()
so.add_session_config_entry("ep.context_enable", "true")
so.add_provider_for_devices(devices, {"backend_type": "htp"})
