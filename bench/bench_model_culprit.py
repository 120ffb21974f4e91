"""Benchmark ``qnndoctor model --find-culprit`` (run by hand; numbers go in docs/model.md).

The search, on float32 chains of N nodes (Relu, Sigmoid, Neg, Abs in turn)
with one float32 Gather two thirds of the way along (on the HTP simulator a
float32 Gather fails at graph finalize with QNN error 1002 and the error
names no node), against the baseline measured in the same run: one session
creation of the same model in the same contained child (one trial).
Reports the trials, the seconds, the ratio to one session creation, and the
bound 2*log2(N)+2 on the trials. Each search must name the Gather.

Usage: python bench/bench_model_culprit.py [--sizes 3,16,64,256] [--runs 3] [--wheels DIR]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
from pathlib import Path

from _common import add_wheels_argument, healthy_wheels, make_venv


def chain_with_gather(path: Path, count: int) -> tuple[Path, str]:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    where = max(1, (2 * count) // 3)
    ops = ["Relu", "Sigmoid", "Neg", "Abs"]
    nodes = []
    for i in range(count):
        source, target = f"t{i}", f"t{i + 1}"
        if i == where:
            nodes.append(helper.make_node("Gather", [source, "idx"], [target], name=f"gather{i}"))
        else:
            nodes.append(helper.make_node(ops[i % 4], [source], [target], name=f"n{i}"))
    width = 8
    out_width = 4 if where < count else width
    graph = helper.make_graph(
        nodes,
        "chain_with_gather",
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [width])],
        [helper.make_tensor_value_info(f"t{count}", TensorProto.FLOAT, [out_width])],
        initializer=[numpy_helper.from_array(np.array([0, 2, 4, 6], dtype=np.int64), "idx")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path, f"gather{where}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="3,16,64,256")
    parser.add_argument("--runs", type=int, default=3, help="baseline session creations per size")
    add_wheels_argument(parser)
    args = parser.parse_args()
    wheels = healthy_wheels(args.wheels)
    if wheels is None:
        print(f"need onnxruntime, onnxruntime-qnn and numpy wheels in {args.wheels}")
        return 2
    from qnndoctor.children.runner import SubprocessRunner
    from qnndoctor.model.experiment.culprit import search
    from qnndoctor.model.experiment.runs import run_child
    from qnndoctor.model.loading import read_model
    from qnndoctor.target.interpreter import resolve

    runner = SubprocessRunner()
    print(
        f"{'nodes':>6} {'trials':>6} {'bound':>6} {'search s':>9} {'1 session s':>11} {'ratio':>6}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        target = resolve(make_venv(folder, wheels))
        for count in (int(s) for s in args.sizes.split(",")):
            path, expected = chain_with_gather(folder / f"chain{count}.onnx", count)
            model = read_model(path)
            baseline = []
            for _ in range(args.runs):
                trial = run_child(
                    target, "compile", [str(path), "htp"],
                    backend="htp", timeout=300, runner=runner, cwd=folder,
                )  # fmt: skip
                if trial.passed:
                    print(f"{count}: the whole model passed: nothing to search")
                    return 1
                baseline.append(trial.seconds)
            culprit = search(target, model, backend="htp", timeout=300, runner=runner)
            if culprit.status != "found" or culprit.nodes[-1].name != expected:
                print(f"{count}: the search did not name {expected}: {culprit.to_json()}")
                return 1
            one = statistics.median(baseline)
            bound = 2 * math.log2(count) + 2
            print(
                f"{count:>6} {len(culprit.steps):>6} {bound:>6.1f} {culprit.seconds:>9.2f} "
                f"{one:>11.2f} {culprit.seconds / one:>6.2f}"
            )
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
