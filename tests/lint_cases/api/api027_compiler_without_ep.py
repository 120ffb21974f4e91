# case: api.md api-027  expect: QND050
import onnxruntime as ort

so = ort.SessionOptions()
compiler = ort.ModelCompiler(so, "models/qdq_conv.onnx")
compiler.compile_to_file("qdq_conv_ctx.onnx")
