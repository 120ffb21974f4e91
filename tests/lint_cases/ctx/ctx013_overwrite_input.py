# case: ctx.md ctx-013  expect: QND052
import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]

MODEL = "model.onnx"
so = ort.SessionOptions()
so.add_provider_for_devices(devices, {"backend_type": "htp"})
compiler = ort.ModelCompiler(so, MODEL)
compiler.compile_to_file(MODEL)
