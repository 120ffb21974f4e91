# case: ctx.md (explored: ep.context_embed_mode='2')  expect: QND020
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]

so = ort.SessionOptions()
so.add_session_config_entry("ep.context_enable", "1")
so.add_session_config_entry("ep.context_embed_mode", "2")
so.add_provider_for_devices(devices, {"backend_type": "htp"})
sess = ort.InferenceSession("model.onnx", sess_options=so)
