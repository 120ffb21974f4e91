# case: run.md (Fortran-order array bound by pointer)  expect: QND047
import numpy as np
import onnxruntime as ort

sess = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
x = np.random.rand(1, 3, 8, 8).astype(np.float32)
xf = np.asfortranarray(x)
io = sess.io_binding()
io.bind_input("x", "cpu", 0, np.float32, list(xf.shape), xf.ctypes.data)
io.bind_output("y")
sess.run_with_iobinding(io)
