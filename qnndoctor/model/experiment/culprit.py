"""``--find-culprit``: the smallest set of nodes that makes QNN fail.

Delta debugging over the graph, each trial a sub-model compiled (and run
once) by the experiment child with CPU fallback off:

1. the whole model, as is: if it passes there is nothing to find;
2. bisection on topological prefixes: the shortest prefix that fails ends
   with a node that belongs to the cause (log2(n) trials);
3. that node alone: if it fails alone, it is the culprit;
4. else bisection on the start of the failing range: the shortest range of
   nodes ending with it that still fails (log2(n) more) is the culprit set.

A trial that crashes or hangs fails like one that raises: a crash of QNN is
a result. A trial counts as failing only when it fails the way the whole
model does (``signature``: refused with fallback off, the same QNN error
code, a crash, a hang...): a cut can fail for reasons of its own (an input
QNN refuses, a shape tensor made a graph input), which the search must not
follow. Every trial is kept as a step of the answer, with its signature.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .graph import CutError, Graph, NodeInfo
from .runs import ChildRun

_ORT_STATUS = re.compile(r"\[ONNXRuntimeError\] : \d+ : (\w+)")
_UNSUPPORTED = re.compile(r"Unsupported nodes in QNN EP: \{ name: (.*?), type: (\w+) \}")
_QNN_CODE = re.compile(r"\b(?:Code|error code|Error code)\s*:?\s*(\d{3,5})\b")


@dataclass(frozen=True)
class Step:
    label: str  # whole model, prefix 0..k, node i, nodes j..k
    nodes: int
    status: str  # passed, failed, crashed, timed_out, not_run, cut-refused
    error: str | None
    seconds: float
    kind: str | None = None  # the failure's signature (refused, qnn-1002, crashed...)

    def to_json(self) -> dict[str, Any]:
        return {
            "trial": self.label,
            "nodes": self.nodes,
            "status": self.status,
            "error": self.error,
            "kind": self.kind,
            "seconds": self.seconds,
        }


@dataclass(frozen=True)
class Culprit:
    """``status``: found, no-failure (the whole model passes with fallback
    off) or not-found (``reason`` says why)."""

    status: str
    nodes: tuple[NodeInfo, ...]
    error: str | None
    qnn_reason: str | None
    fix: str | None
    steps: tuple[Step, ...]
    seconds: float
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        first = self.nodes[-1] if self.nodes else None
        return {
            "status": self.status,
            "node": first.name if first else None,
            "op_type": first.op_type if first else None,
            "inputs": list(first.inputs) if first else [],
            "attributes": dict(first.attributes) if first else {},
            "error": self.error,
            "qnn_reason": self.qnn_reason,
            "fix": self.fix,
            "nodes": [n.to_json() for n in self.nodes],
            "reason": self.reason,
            "steps": [s.to_json() for s in self.steps],
            "steps_total": len(self.steps),
            "seconds": round(self.seconds, 3),
        }


Trial = Callable[[Sequence[int] | None], ChildRun]  # None: the model file as it is


def signature(run: ChildRun) -> str:
    """The kind of failure, so that a sub-model counts as failing only the way
    the whole model does (a cut that makes an input QNN refuses, or a model
    onnxruntime cannot load, is another failure, not the one searched for)."""
    if run.status in ("crashed", "timed_out", "not_run"):
        return run.status
    text = run.error or ""
    if "fallback to CPU EP has been explicitly disabled" in text:
        return "refused"
    code = _QNN_CODE.search(text)
    if code:
        return f"qnn-{code.group(1)}"
    if "INVALID_GRAPH" in text or "Load model from" in text or "INVALID_PROTOBUF" in text:
        return "invalid-model"
    status = _ORT_STATUS.search(text)
    return status.group(1) if status else f"{run.stage}-error"


def _reason_for(node: NodeInfo, run: ChildRun) -> str | None:
    """The QNN EP's own words about this node, from the trial's verbose log."""
    if node.key in run.reasons:
        return run.reasons[node.key]
    text = "\n".join(str(line) for line in run.child.get("log_lines") or ())
    for match in _UNSUPPORTED.finditer(text + "\n" + (run.error or "")):
        if match.group(1) == node.name:
            return f"the QNN EP has no support for {match.group(2)} here"
    return None


def fix_for(node: NodeInfo, error: str | None, reason: str | None, precision: str) -> str:
    """What to change, from the error the node raises alone."""
    text = f"{error or ''} {reason or ''}"
    floats = any(i.get("dtype") == "float32" for i in node.inputs if not i.get("initializer"))
    keep = (
        "or keep it on the CPU: leave session.disable_cpu_ep_fallback unset so the CPU EP runs "
        "what QNN refuses (the QNN graph is split there)"
    )
    if reason and "dynamic" in reason.lower():
        return (
            f"Give {node.op_type} '{node.name}' static shapes (onnxruntime.tools."
            f"make_dynamic_shape_fixed on the model's inputs), {keep}."
        )
    if "fallback to CPU EP has been explicitly disabled" in text or reason:
        return (
            f"QNN does not take {node.op_type} '{node.name}' as it is "
            f"({reason or 'refused at partitioning'}): replace it with operators the QNN EP "
            f"supports, {keep}."
        )
    code = _QNN_CODE.search(text)
    if floats and precision in ("float32", "mixed-float"):
        return (
            f"QNN's HTP failed on {node.op_type} '{node.name}' in float32"
            + (f" (QNN error {code.group(1)})" if code else "")
            + ": quantize the model to QDQ (onnxruntime.quantization.quantize_static), or run "
            "it in fp16 on an HTP v73 or newer (QNN provider options "
            "enable_htp_fp16_precision=1 with soc_model set to the chip), or move this node "
            "out of the model and compute it on the CPU."
        )
    return (
        f"QNN fails on {node.op_type} '{node.name}'"
        + (f" (QNN error {code.group(1)})" if code else "")
        + ": change its inputs' types or shapes or its attributes to a form the QNN op "
        "definition supports, or move it out of the model and compute it on the CPU."
    )


class _Trials:
    """The trials made so far (one contained child per sub-model, each made
    once) and the whole model's failure signature."""

    def __init__(self, trial: Trial, count: int) -> None:
        self.trial = trial
        self.count = count
        self.steps: list[Step] = []
        self.seen: dict[tuple[int, ...], ChildRun | None] = {}
        self.searched: list[str] = []  # the whole model's failure signature

    def fails(self, indexes: Sequence[int] | None, label: str) -> bool | None:
        """True: fails as the whole model does; False: passes, or fails
        another way; None: the sub-model cannot be made."""
        key = tuple(indexes) if indexes is not None else tuple(range(self.count))
        if key not in self.seen:
            self.seen[key] = self._run(key, indexes, label)
        done = self.seen[key]
        if done is None:
            return None
        if done.passed:
            return False
        if not self.searched:
            self.searched.append(signature(done))
        return signature(done) == self.searched[0]

    def _run(
        self, key: tuple[int, ...], indexes: Sequence[int] | None, label: str
    ) -> ChildRun | None:
        try:
            run = self.trial(indexes)
        except CutError as exc:
            self.steps.append(Step(label, len(key), "cut-refused", str(exc), 0.0))
            return None
        kind = None if run.passed else signature(run)
        self.steps.append(Step(label, len(key), run.status, run.error, run.seconds, kind))
        return run


def find_culprit(graph: Graph, trial: Trial, precision: str) -> Culprit:
    """Delta debugging with ``trial`` (one contained child per call)."""
    started = time.perf_counter()
    count = len(graph)
    trials = _Trials(trial, count)
    fails, steps, seen, searched = trials.fails, trials.steps, trials.seen, trials.searched

    def result(status: str, nodes: Sequence[int] = (), run: ChildRun | None = None,
               reason: str | None = None) -> Culprit:  # fmt: skip
        infos = tuple(graph.info(i) for i in nodes)
        qnn_reason = _reason_for(infos[-1], run) if infos and run else None
        error = run.error if run else None
        return Culprit(
            status,
            infos,
            error,
            qnn_reason,
            fix_for(infos[-1], error, qnn_reason, precision) if infos else None,
            tuple(steps),
            time.perf_counter() - started,
            reason,
        )

    if not fails(None, "whole model"):
        return result(
            "no-failure", reason="the model compiles and runs on QNN with CPU fallback off"
        )
    if searched[0] == "invalid-model":
        whole = seen[tuple(range(count))]
        error = whole.error if whole else None
        return result("not-found", reason=f"onnxruntime cannot load the model itself: {error}")
    low, high = 0, count  # prefix of `low` nodes passes (0: nothing), of `high` fails
    while high - low > 1:
        middle = (low + high) // 2
        verdict = fails(range(middle), f"prefix 0..{middle - 1}")
        if verdict is None:
            return result("not-found", reason=steps[-1].error)
        low, high = (low, middle) if verdict else (middle, high)
    last = high - 1
    alone = fails([last], f"node {last}")
    if alone:
        return result("found", [last], seen[(last,)])
    # Fails only with nodes before it: the shortest range ending with it that fails.
    low, high = 0, last  # nodes[low:last+1] fails (prefix), nodes[high:last+1] passes
    while high - low > 1:
        middle = (low + high) // 2
        verdict = fails(range(middle, last + 1), f"nodes {middle}..{last}")
        if verdict is None:
            return result("not-found", reason=steps[-1].error)
        low, high = (middle, high) if verdict else (low, middle)
    chosen = list(range(low, last + 1))
    return result("found", chosen, seen.get(tuple(chosen)) or seen[tuple(range(last + 1))])


def search(
    target: Any,
    model: Any,
    *,
    backend: str,
    timeout: float,
    runner: Any,
    log: Callable[[str], None] = lambda _: None,
    qnn_options: Mapping[str, str] | None = None,
) -> Culprit:
    """Find the culprit of ``model`` (a ``ModelInfo``) in ``target``: each trial
    a sub-model in a temporary folder, compiled by one contained child."""
    import tempfile
    from pathlib import Path

    from .runs import run_child

    with tempfile.TemporaryDirectory(prefix="qnndoctor-culprit-") as folder:
        work = Path(folder)
        graph = Graph(model.path)
        counter = iter(range(1_000_000))

        def trial(indexes: Sequence[int] | None) -> ChildRun:
            if indexes is None:
                path = model.path.resolve()
            else:
                path = graph.save_cut(indexes, work / f"cut{next(counter)}.onnx")
            run = run_child(
                target, "compile", [str(path), backend],
                backend=backend, timeout=timeout, runner=runner, cwd=work,
                qnn_options=qnn_options,
            )  # fmt: skip
            shown = "whole model" if indexes is None else f"{len(indexes)} node(s)"
            log(f"culprit trial: {shown}: {run.status} in {run.seconds:g} s")
            return run

        return find_culprit(graph, trial, model.precision)
