# case: ctx.md ctx-054  expect: QND054
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]

PREFIX = "det_"
default_arch = ort.SessionOptions()
default_arch.add_session_config_entry("ep.context_node_name_prefix", PREFIX)
default_arch.add_provider_for_devices(devices, {"backend_type": "htp"})
ort.ModelCompiler(default_arch, "det.onnx").compile_to_file("det_ctx.onnx")
v73 = ort.SessionOptions()
v73.add_session_config_entry("ep.context_node_name_prefix", PREFIX)
v73.add_provider_for_devices(devices, {"backend_type": "htp", "htp_arch": "73"})
ort.ModelCompiler(v73, "det.onnx").compile_to_file("det_v73_ctx.onnx")
shared = ort.SessionOptions()
shared.add_session_config_entry("ep.share_ep_contexts", "1")
shared.add_provider_for_devices(devices, {"backend_type": "htp"})
a = ort.InferenceSession("det_ctx.onnx", sess_options=shared)
b = ort.InferenceSession("det_v73_ctx.onnx", sess_options=shared)
