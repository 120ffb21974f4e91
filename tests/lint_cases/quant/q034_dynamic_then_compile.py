# case: quant.md q-034  expect: QND063
import onnxruntime as ort
import onnxruntime_qnn
from onnxruntime.quantization import quantize_dynamic

quantize_dynamic("model.onnx", "model.dyn.onnx")
ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
so = ort.SessionOptions()
so.add_provider_for_devices([d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"], {"backend_type": "htp"})
ort.ModelCompiler(so, "model.dyn.onnx").compile_to_file("model.dyn_ctx.onnx")
print("compiled")
