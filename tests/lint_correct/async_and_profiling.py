"""run_async resolved on the loop's thread; profiling enabled before the session, ended once."""

import asyncio
import os

import onnxruntime as ort

os.makedirs("logs", exist_ok=True)
so = ort.SessionOptions()
so.enable_profiling = True
so.profile_file_prefix = "profile"
so.intra_op_num_threads = 2
sess = ort.InferenceSession("model.onnx", so, providers=["CPUExecutionProvider"])


async def infer(feed):
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def done(outputs, state, error):
        loop.call_soon_threadsafe(future.set_result, outputs)

    sess.run_async(None, feed, done, None)
    return await future


start = sess.get_profiling_start_time_ns()
y = sess.run(["y"], {"x": None})
profile = sess.end_profiling()
