"""``--profile``: where the time goes on the HTP, from QNN's own profiling.

The experiment child creates the session with the QNN provider options
``profiling_level=detailed`` and ``profiling_file_path=<CSV>``, runs it, and
times the CPU EP on the same inputs. Measured on onnxruntime-qnn 2.7.0
(QNN 2.51.0) on the HTP simulator, the CSV has the columns ``Msg Timestamp,
Message, Time, Unit of Measurement, Timing Source, Event Level, Event
Identifier``; per execution it holds ``Accelerator (execute) time
(cycles)``, one ``NODE`` row per QNN op in CYCLES (``mm:OpId_17 (cycles)``:
the ONNX node name, then QNN's op id; ``Input OpId_2`` / ``Output OpId_3``
are the graph's I/O), ``Accelerator (execute) time`` in US and ``QNN
(execute) time`` in US. ``profiling_level=basic`` has no NODE rows. An op's
time in microseconds is therefore its share of the accelerator cycles times
the accelerator time of the same execution; each figure is the median over
the executions, the first (warm-up) left out when there are more. Measured:
executions vary widely on the simulator (16048, 3346, 140 us for three runs
of the shipped QDQ model), so a mean would mislead.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import median
from typing import Any

_NODE = re.compile(r"^(?P<name>.*?)(?::OpId_\d+)? \(cycles\)$")
_IO = re.compile(r"^(Input|Output) OpId_\d+ \(cycles\)( partition \d+)?$")
MAX_CSV = 64 * 1024 * 1024  # read at most this much of QNN's profile


@dataclass(frozen=True)
class OpTime:
    node: str
    op_type: str
    time_us: float
    cycles: float
    share: float  # of the accelerator time

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "op_type": self.op_type,
            "time_us": round(self.time_us, 3),
            "cycles": round(self.cycles, 1),
            "share": round(self.share, 4),
        }


@dataclass(frozen=True)
class Profile:
    status: str  # read, no-node-rows, failed
    ops: tuple[OpTime, ...]  # slowest first
    total_us: float | None  # QNN (execute) time per run, all QNN partitions
    accelerator_us: float | None
    executions: int
    qnn_ms: float | None  # end to end, median of the timed runs
    cpu_ms: float | None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "ops": [op.to_json() for op in self.ops],
            "total_us": None if self.total_us is None else round(self.total_us, 3),
            "accelerator_us": None
            if self.accelerator_us is None
            else round(self.accelerator_us, 3),
            "executions": self.executions,
            "end_to_end_ms": {"qnn": self.qnn_ms, "cpu": self.cpu_ms},
            "reason": self.reason,
        }


@dataclass
class _Execution:
    nodes: dict[str, float]
    cycles: float | None = None
    accelerator_us: float | None = None
    qnn_us: float | None = None


def _executions(text: str) -> list[_Execution]:
    done: list[_Execution] = []
    current = _Execution({})
    for row in csv.DictReader(io.StringIO(text)):
        what = (row.get("Event Identifier") or "").strip()
        unit = (row.get("Unit of Measurement") or "").strip()
        try:
            value = float(row.get("Time") or "")
        except ValueError:
            continue
        if row.get("Message") == "NODE" and unit == "CYCLES":
            current.nodes[what] = current.nodes.get(what, 0.0) + value
        elif what == "Accelerator (execute) time (cycles)":
            current.cycles = value
        elif what == "Accelerator (execute) time" and unit == "US":
            current.accelerator_us = value
        elif row.get("Message") == "EXECUTE" and unit == "US":
            current.qnn_us = value
            done.append(current)
            current = _Execution({})
    return done


def read_profile(
    text: str, op_types: Mapping[str, str], qnn_ms: float | None, cpu_ms: float | None
) -> Profile:
    """The profile of QNN's CSV ``text``; ``op_types``: ONNX node name -> op type."""
    executions = _executions(text)
    # Group the executions by graph (the set of QNN ops it ran): one per QNN
    # partition and run; each graph's first execution is its warm-up.
    graphs: dict[frozenset[str], list[_Execution]] = {}
    for execution in executions:
        graphs.setdefault(frozenset(execution.nodes), []).append(execution)
    if not executions:
        return Profile("failed", (), None, None, 0, qnn_ms, cpu_ms, "QNN wrote no execution")
    times: dict[str, list[float]] = {}
    cycles: dict[str, list[float]] = {}
    total = accelerator = 0.0
    for number, runs in enumerate(graphs.values(), 1):
        kept = runs[1:] if len(runs) > 1 else runs
        total += median([r.qnn_us or 0.0 for r in kept])
        accelerator += median([r.accelerator_us or 0.0 for r in kept])
        for run in kept:
            all_cycles = run.cycles or sum(run.nodes.values())
            for node, count in run.nodes.items():
                share = count / all_cycles if all_cycles else 0.0
                # Every QNN partition has its own "Input OpId_2": kept apart.
                key = f"{node} partition {number}" if len(graphs) > 1 and _IO.match(node) else node
                times.setdefault(key, []).append(share * (run.accelerator_us or 0.0))
                cycles.setdefault(key, []).append(count)
    if not times:
        return Profile(
            "no-node-rows", (), total, accelerator, len(executions), qnn_ms, cpu_ms,
            "QNN's profile has no per-op rows (profiling_level basic, or an older QNN)",
        )  # fmt: skip
    ops = []
    for node, values in times.items():
        match = _NODE.match(node)
        name = match.group("name") if match else node
        op_type = (
            "graph " + node.split()[0].lower()
            if _IO.match(node)
            else op_types.get(name, "inserted by QNN")
        )
        middle = median(values)
        ops.append(
            OpTime(
                node.replace(" (cycles)", "") if _IO.match(node) else name,
                op_type,
                middle,
                median(cycles[node]),
                middle / accelerator if accelerator else 0.0,
            )
        )
    ops.sort(key=lambda op: -op.time_us)
    return Profile("read", tuple(ops), total, accelerator, len(executions), qnn_ms, cpu_ms)


def measure(
    target: Any,
    model: Any,
    *,
    backend: str,
    runs: int,
    timeout: float,
    runner: Any,
    qnn_options: Mapping[str, str] | None = None,
) -> Profile:
    """Run the profile child on ``model`` (a ``ModelInfo``) and read QNN's CSV."""
    import tempfile
    from pathlib import Path

    from .runs import run_child

    with tempfile.TemporaryDirectory(prefix="qnndoctor-profile-") as folder:
        work = Path(folder)
        csv_path = work / "qnn-profile.csv"
        run = run_child(
            target, "profile", [str(model.path.resolve()), backend, str(runs), str(csv_path)],
            backend=backend, timeout=timeout, runner=runner, cwd=work,
            qnn_options=qnn_options,
        )  # fmt: skip
        qnn = run.child.get("qnn_timing") or {}
        cpu = run.child.get("cpu_timing") or {}
        qnn_ms, cpu_ms = qnn.get("median_ms"), cpu.get("median_ms")
        if not run.passed and not csv_path.is_file():
            return Profile("failed", (), None, None, 0, qnn_ms, cpu_ms, run.error)
        try:
            with csv_path.open("r", encoding="utf-8", errors="replace") as handle:
                text = handle.read(MAX_CSV)
        except OSError as exc:
            return Profile(
                "failed", (), None, None, 0, qnn_ms, cpu_ms,
                f"QNN wrote no profile ({exc.strerror or exc}); the run: {run.error or run.status}",
            )  # fmt: skip
    op_types = {name: op for _, op, name in model.nodes}
    try:
        return read_profile(text, op_types, qnn_ms, cpu_ms)
    except csv.Error as exc:  # NUL bytes, a broken quote: not the CSV measured
        return Profile("failed", (), None, None, 0, qnn_ms, cpu_ms, f"QNN's profile: {exc}")
