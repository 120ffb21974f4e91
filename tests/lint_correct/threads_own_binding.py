"""Threads that each bind their own IOBinding (the fix of run.md's shared-binding race)."""

import threading
from concurrent.futures import ThreadPoolExecutor

import onnxruntime as ort

sess = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
io = sess.io_binding()  # used by the main thread only


def work(x):
    binding = sess.io_binding()
    binding.bind_cpu_input("x", x)
    binding.bind_output("y")
    sess.run_with_iobinding(binding)
    return binding.copy_outputs_to_cpu()


def main_thread_only(x):
    io.bind_cpu_input("x", x)
    io.bind_output("y")
    sess.run_with_iobinding(io)


threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
with ThreadPoolExecutor(4) as pool:
    results = list(pool.map(work, range(4)))
sequential = list(map(main_thread_only, range(4)))
