# case: ctx.md ctx-012  expect: QND053
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]

so = ort.SessionOptions()
so.add_session_config_entry("ep.context_enable", "1")
so.add_session_config_entry("ep.context_file_path", "other_ctx.onnx")
so.add_provider_for_devices(devices, {"backend_type": "htp"})
compiler = ort.ModelCompiler(so, "model.onnx")
compiler.compile_to_file("model_ctx.onnx")
