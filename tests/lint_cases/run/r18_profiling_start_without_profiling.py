# case: run.md (get_profiling_start_time_ns without profiling)  expect: QND044
import onnxruntime as ort

sess = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
start = sess.get_profiling_start_time_ns()
