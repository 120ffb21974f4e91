# case: run.md (4 threads sharing one IOBinding)  expect: QND048
import threading

import onnxruntime as ort

sess = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
io = sess.io_binding()


def work(x):
    io.bind_cpu_input("x", x)
    io.bind_output("y")
    sess.run_with_iobinding(io)


threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
