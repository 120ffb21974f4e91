# case: options.md #6  expect: QND014
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]

so = ort.SessionOptions()
so.add_provider_for_devices(devices, {"backend_type": "htp", "num_graph_prepare_threads": "abc"})
