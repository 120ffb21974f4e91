# case: options.md #12  expect: QND021
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]

CONFIG = {"ep.context_enable": "1", "ep.context_embed_mode": "0", "ep.context_file_path": "model_ctx.bin"}
so = ort.SessionOptions()
for key, value in CONFIG.items():
    so.add_session_config_entry(key, value)
