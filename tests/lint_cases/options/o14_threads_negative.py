# case: options.md #14  expect: QND040
import onnxruntime as ort

so = ort.SessionOptions()
so.intra_op_num_threads = -1
sess = ort.InferenceSession("model.onnx", so, providers=["CPUExecutionProvider"])
