# case: api.md api-030  expect: QND051
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]

so = ort.SessionOptions()
so.add_provider_for_devices(devices, {"backend_type": "htp"})
compiler = ort.ModelCompiler(so, "models/qdq_conv.onnx")
blob = compiler.compile_to_bytes()
