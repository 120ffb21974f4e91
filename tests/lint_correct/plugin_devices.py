"""The 2.x plugin as its docs show it: register, pick the devices, options, run options."""

import numpy as np
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library(onnxruntime_qnn.get_ep_name(), onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == onnxruntime_qnn.get_ep_name()]

so = ort.SessionOptions()
so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
qnn_options = {"backend_type": "htp", "htp_performance_mode": "burst", "htp_graph_finalization_optimization_mode": "3"}
qnn_options["enable_htp_fp16_precision"] = "1"
so.add_provider_for_devices(devices, qnn_options)
sess = ort.InferenceSession("model.onnx", sess_options=so)

ro = ort.RunOptions()
ro.add_run_config_entry("qnn.htp_perf_mode", "burst")
ro.add_run_config_entry("qnn.htp_perf_mode_post_run", "balanced")
ro.add_run_config_entry("qnn.rpc_control_latency", "100")
outputs = sess.run(None, {"x": np.zeros((1, 3, 8, 8), np.float32)}, run_options=ro)
