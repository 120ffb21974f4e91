# case: options.md #7  expect: QND010
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]

so = ort.SessionOptions()
so.add_provider_for_devices(devices, {"backend_type": "htp", "qnn_context_cache_enable": "1", "qnn_context_cache_path": "ctx.bin"})
