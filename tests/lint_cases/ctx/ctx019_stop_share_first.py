# case: ctx.md ctx-019  expect: QND055
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]

first_options = ort.SessionOptions()
first_options.add_session_config_entry("ep.share_ep_contexts", "1")
first_options.add_session_config_entry("ep.stop_share_ep_contexts", "1")
first_options.add_provider_for_devices(devices, {"backend_type": "htp"})
second_options = ort.SessionOptions()
second_options.add_session_config_entry("ep.share_ep_contexts", "1")
second_options.add_provider_for_devices(devices, {"backend_type": "htp"})
first = ort.InferenceSession("a_ctx.onnx", sess_options=first_options)
second = ort.InferenceSession("a_ctx.onnx", sess_options=second_options)
