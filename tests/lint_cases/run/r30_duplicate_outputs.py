# case: run.md (sess.run(['y', 'y'], feed))  expect: QND045
import onnxruntime as ort

sess = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
y1, y2 = sess.run(["y", "y"], {"x": None})
