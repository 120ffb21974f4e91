# case: ctx.md ctx-003  expect: QND050
import onnxruntime as ort

compiler = ort.ModelCompiler(ort.SessionOptions(), "models/qdq_conv.onnx")
compiler.compile_to_file("qdq_conv_ctx.onnx")
