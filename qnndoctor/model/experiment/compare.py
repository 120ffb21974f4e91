"""``--compare``: the same inputs on the CPU EP and on QNN, output by output,
and where they part: the first node whose output differs beyond tolerance.

Metrics per output: ``max_abs_error``, ``mean_abs_error``, ``cosine``
(similarity of the two as vectors) and ``snr_db`` (CPU signal over the
difference; null when the two are equal). An output is beyond tolerance
when its max_abs_error exceeds ``--tolerance`` (absolute, in the output's
own units). The first diverging node is found by bisection over truncated
models in topological order (only cuts whose outputs are all float are
compared, so a QDQ model is judged on dequantized values); each truncated
model runs in its own contained child on the inputs of the first run.
"""

from __future__ import annotations

import math
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..loading import QDQ_OPS
from .graph import CutError, Graph
from .runs import ChildRun, run_child

MAX_ARRAYS = 512 * 1024 * 1024  # bytes of outputs the parent loads from one comparison


@dataclass(frozen=True)
class Metrics:
    name: str
    max_abs_error: float
    mean_abs_error: float
    cosine: float | None
    snr_db: float | None
    cpu_range: tuple[float, float]

    def beyond(self, tolerance: float) -> bool:
        return not self.max_abs_error <= tolerance  # NaN counts as beyond

    def to_json(self, tolerance: float) -> dict[str, Any]:
        return {
            "name": self.name,
            "max_abs_error": _num(self.max_abs_error),
            "mean_abs_error": _num(self.mean_abs_error),
            "cosine": _num(self.cosine),
            "snr_db": _num(self.snr_db),
            "cpu_range": [_num(v) for v in self.cpu_range],
            "within_tolerance": not self.beyond(tolerance),
        }


def _num(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else round(value, 9)


def metrics(name: str, qnn: Any, cpu: Any) -> Metrics:
    import numpy as np

    a = np.asarray(qnn, dtype=np.float64).reshape(-1)
    b = np.asarray(cpu, dtype=np.float64).reshape(-1)
    if a.shape != b.shape:
        nan = float("nan")
        return Metrics(name, nan, nan, None, None, (nan, nan))
    if a.size == 0:
        return Metrics(name, 0.0, 0.0, None, None, (0.0, 0.0))
    diff = a - b
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    noise = float(np.sum(diff * diff))
    return Metrics(
        name,
        float(np.max(np.abs(diff))),
        float(np.mean(np.abs(diff))),
        float(np.dot(a, b) / norms) if norms > 0 else None,
        10 * math.log10(float(np.sum(b * b)) / noise) if noise > 0 and np.any(b) else None,
        (float(np.min(b)), float(np.max(b))),
    )


@dataclass(frozen=True)
class Comparison:
    status: str  # compared, failed
    outputs: tuple[Metrics, ...]
    tolerance: float
    first_divergence: dict[str, Any] | None
    steps: tuple[dict[str, Any], ...]
    reason: str | None = None

    @property
    def diverged(self) -> tuple[Metrics, ...]:
        return tuple(m for m in self.outputs if m.beyond(self.tolerance))

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "tolerance": self.tolerance,
            "outputs": [m.to_json(self.tolerance) for m in self.outputs],
            "first_divergence": self.first_divergence,
            "steps": list(self.steps),
            "reason": self.reason,
        }


def likely_reason(
    op_type: str, precision: str, ranges: list[dict[str, Any]], outputs: Sequence[Metrics] = ()
) -> str:
    """From the op, the model's precision and the CPU's ranges of the node's
    inputs and outputs."""
    values = [v for r in ranges for v in r.get("range") or () if v is not None]
    values += [v for m in outputs for v in m.cpu_range]
    peak = max((abs(v) for v in values if math.isfinite(v)), default=0)
    if precision == "qdq":
        return (
            f"quantized {op_type}: HTP's integer kernel rounds differently from the CPU EP's "
            "dequantize-compute-quantize reference; a difference of a quantization step or "
            "more points at the output's scale (widen it, or use 16-bit activations for "
            f"{op_type})"
        )
    if peak > 65504:
        return (
            f"{op_type} sees values up to {peak:g} on the CPU, beyond float16's 65504: an HTP "
            "running the float model in fp16 overflows there"
        )
    if precision in ("float32", "float16", "mixed-float"):
        return (
            f"HTP's float path for {op_type} (fp16 arithmetic, or an approximation in its kernel)"
        )
    return f"an HTP-specific kernel for {op_type}"


def _arrays(path: Path) -> dict[str, Any]:
    import numpy as np

    if path.stat().st_size > MAX_ARRAYS:
        raise ValueError(f"the outputs are beyond {MAX_ARRAYS // 2**20} MiB")
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def compare(
    target: Any,
    model: Any,
    *,
    backend: str,
    timeout: float,
    runner: Any,
    tolerance: float,
    inputs: str | None = None,
    log: Callable[[str], None] = lambda _: None,
    qnn_options: Mapping[str, str] | None = None,
    locate: bool = True,
) -> Comparison:
    """Compare ``model`` (a ``ModelInfo``) on QNN and on the CPU EP in
    ``target``; ``locate``: bisect for the first diverging node when an
    output is beyond tolerance."""
    import numpy as np

    steps: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="qnndoctor-compare-") as folder:
        work = Path(folder)
        counter = iter(range(1_000_000))

        def once(path: Path, feeds: str, label: str) -> tuple[ChildRun, dict[str, Any] | None]:
            out = work / f"out{next(counter)}.npz"
            run = run_child(
                target, "compare", [str(path), backend, feeds, str(out)],
                backend=backend, timeout=timeout, runner=runner, cwd=work,
                qnn_options=qnn_options,
            )  # fmt: skip
            arrays, error = None, run.error
            if run.passed:
                try:
                    arrays = _arrays(out)
                except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
                    error = f"the child's outputs could not be read: {exc}"
            steps.append({"trial": label, "status": run.status, "error": error,
                          "seconds": run.seconds})  # fmt: skip
            if arrays is None and run.passed:
                run = replace(run, status="failed", error=error)
            log(f"compare: {label}: {run.status} in {run.seconds:g} s")
            return run, arrays

        source = str(Path(inputs).resolve()) if inputs else "-"
        run, arrays = once(model.path.resolve(), source, "whole model")
        if arrays is None:
            return Comparison("failed", (), tolerance, None, tuple(steps), run.error)
        names = list(run.child.get("outputs") or [])
        found = tuple(
            metrics(name, arrays[f"qnn/{i}"], arrays[f"cpu/{i}"]) for i, name in enumerate(names)
        )
        steps[-1]["diverged"] = any(m.beyond(tolerance) for m in found)
        input_names = list(run.child.get("input_names") or [])
        feeds = {n: arrays[f"in/{i}"] for i, n in enumerate(input_names)}
        result = Comparison("compared", found, tolerance, None, tuple(steps))
        if not result.diverged or model.ep_contexts or not locate:
            return result
        fed = work / "inputs.npz"
        np.savez(fed, **feeds)
        try:
            divergence = _first_divergence(
                Graph(model.path), model.precision, tolerance, feeds,
                lambda path, label: once(path, str(fed), label), work, steps, found,
            )  # fmt: skip
        except CutError as exc:
            divergence = None
            steps.append({"trial": "cut", "status": "cut-refused", "error": str(exc)})
    return Comparison("compared", found, tolerance, divergence, tuple(steps))


def _first_divergence(
    graph: Graph,
    precision: str,
    tolerance: float,
    feeds: dict[str, Any],
    once: Callable[[Path, str], tuple[ChildRun, dict[str, Any] | None]],
    work: Path,
    steps: list[dict[str, Any]],
    whole: Sequence[Metrics],
) -> dict[str, Any] | None:
    """Bisection over the prefixes whose outputs are all float (``whole``:
    the whole model's metrics, the last prefix, already measured)."""
    cuts = [
        k
        for k in range(1, len(graph))
        if all(graph.is_float(n) for n in graph.outputs_of(range(k)))
    ]
    cuts.append(len(graph))
    seen: dict[int, tuple[list[Metrics], bool]] = {len(graph): (list(whole), True)}

    def diverges(k: int, extra: Sequence[str] = ()) -> bool | None:
        path = graph.save_cut(range(k), work / f"prefix{k}.onnx", extra)
        label = f"prefix 0..{k - 1}" + (" exposing the node's inputs" if extra else "")
        run, arrays = once(path, label)
        if arrays is None:
            return None
        names = list(run.child.get("outputs") or [])
        found = [metrics(n, arrays[f"qnn/{i}"], arrays[f"cpu/{i}"]) for i, n in enumerate(names)]
        judged = [m for m in found if graph.is_float(m.name) and m.name not in extra]
        seen[k] = (found, any(m.beyond(tolerance) for m in judged))
        steps[-1]["diverged"] = seen[k][1]
        return seen[k][1]

    low, high = -1, len(cuts) - 1  # cuts[high] diverges (the whole model)
    while high - low > 1:
        middle = (low + high) // 2
        verdict = diverges(cuts[middle])
        if verdict is None:
            return None
        low, high = (low, middle) if verdict else (middle, high)
    start = cuts[low] if low >= 0 else 0
    end = cuts[high]
    span = list(range(start, end))
    compute = [i for i in span if graph.nodes[i].op_type not in QDQ_OPS]
    quantized = not compute  # only Q/DQ in the span: the node before, as a quantized unit
    if quantized:
        producers = {out: i for i, n in enumerate(graph.nodes) for out in n.output}
        compute = [producers.get(graph.nodes[span[0]].input[0], span[0])]
    node = graph.info(compute[0])
    # The node's inputs, exposed as outputs of the same prefix, for their ranges.
    wanted = [i["name"] for i in node.inputs if not i.get("initializer")]
    extra = [n for n in wanted if n not in feeds]
    if extra or end not in seen:  # else its metrics are known and its inputs are the feeds
        diverges(end, extra)
    found = seen.get(end, ([], True))[0]
    made = set(graph.nodes[compute[0]].output)
    own = [m for m in found if m.name in made] or [
        m for m in found if graph.is_float(m.name) and m.name not in wanted
    ]
    ranges = []
    for name in wanted:
        value = feeds.get(name)
        if value is None:
            value = next((m.cpu_range for m in found if m.name == name), None)
            ranges.append({"name": name, "range": list(value) if value else None})
        else:
            import numpy as np

            array = np.asarray(value, dtype=np.float64)
            ranges.append({"name": name, "range": [float(array.min()), float(array.max())]})
    return {
        "node": node.name,
        "op_type": node.op_type,
        "nodes": [graph.nodes[i].name for i in span],
        "quantized_output": quantized,
        "inputs": ranges,
        "metrics": [m.to_json(tolerance) for m in own],
        "likely_reason": likely_reason(node.op_type, precision, ranges, own),
    }
