# case: run.md (asyncio Future resolved from the run_async callback)  expect: QND046
import asyncio

import onnxruntime as ort


def on_done(outputs, future, error):
    future.set_result(outputs)


async def infer(sess, feed):
    future = asyncio.get_running_loop().create_future()
    sess.run_async(None, feed, on_done, future)
    return await future
