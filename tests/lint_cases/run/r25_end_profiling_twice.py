# case: run.md (end_profiling() called twice)  expect: QND044
import onnxruntime as ort

so = ort.SessionOptions()
so.enable_profiling = True
sess = ort.InferenceSession("model.onnx", so)
first = sess.end_profiling()
second = sess.end_profiling()
