# case: run.md (profile_file_prefix logs/prof/qnn, no folder)  expect: QND042
import onnxruntime as ort

so = ort.SessionOptions()
so.enable_profiling = True
so.profile_file_prefix = "logs/prof/qnn"
sess = ort.InferenceSession("model.onnx", so)
