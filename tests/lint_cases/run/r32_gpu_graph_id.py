# case: run.md (run option gpu_graph_id on a QNN session)  expect: QND031
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]

so = ort.SessionOptions()
so.add_provider_for_devices(devices, {"backend_type": "htp"})
sess = ort.InferenceSession("model.onnx", sess_options=so)
ro = ort.RunOptions()
ro.add_run_config_entry("gpu_graph_id", "1")
