"""Generating an EPContext model through session options (documented keys and values)."""

import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
so = ort.SessionOptions()
so.add_session_config_entry("ep.context_enable", "1")
so.add_session_config_entry("ep.context_embed_mode", "0")
so.add_session_config_entry("ep.context_file_path", "model_ctx.onnx")
so.add_provider_for_devices(
    [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"], {"backend_type": "htp", "soc_model": "57"}
)
ort.InferenceSession("model.onnx", sess_options=so)
