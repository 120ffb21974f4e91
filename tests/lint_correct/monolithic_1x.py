"""onnxruntime-qnn 1.x (monolithic, Windows): the QNN EP selected by name, as the 1.x docs show."""

import onnxruntime as ort

options = ort.SessionOptions()
options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
provider_options = [{"backend_path": "QnnHtp.dll", "htp_performance_mode": "high_performance", "soc_model": "60"}]
session = ort.InferenceSession(
    "model.qdq.onnx", sess_options=options, providers=["QNNExecutionProvider"], provider_options=provider_options
)
