"""Where the model's nodes really run: the placement child in the target.

The child (``placement_child.py``) is started through a ``Runner`` with the
smoke session's containment (argv list, closed stdin, neutral working folder,
hard timeout, whole-tree kill, capped output) and its outcome is classified
by the smoke session's own ``classify``: crash, hang, exception or result.

Placement comes from the session's graph-assignment info
(``get_provider_graph_assignment_info``: original nodes per EP subgraph)
where onnxruntime has it, else from the verbose "Node placements" log, which
names fused QNN partitions and the CPU nodes. The reasons for a fallback come
from the QNN EP's verbose "Validation FAILED ... REASON" lines in both cases.
Measured on 1.27.0 and 1.31.1 (docs/model.md); profiling was measured too
and only names fused partitions, so it is not used.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..children.runner import Runner, SubprocessRunner
from ..smoke.outcome import SmokeResult, classify
from ..target.interpreter import Target

CHILD = Path(__file__).resolve().parent / "placement_child.py"
QNN = "QNNExecutionProvider"

_IO_OFFLOAD = "is configured to not take"  # "... Q nodes that consume a graph input."
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_WARNING = re.compile(r"\[[WEF]:onnxruntime|<E>|<W>")
_PLACED_ON = re.compile(r"Node\(s\) placed on \[(\w+)\]\. Number of nodes: (\d+)")
_PLACED_NODE = re.compile(r"VerifyEachNodeIsAssignedToAnEp\]\s{3,}(\S+) \((.*)\)\s*$")
_FAILED = re.compile(
    r"Validation FAILED for \d+ nodes in OrtNodeUnit \((\w+)\)\s*:\s*\n"
    r"\s*Operator type: (\S+) Node name: (.*?) Node index: \d+\s*\n"
    r"\s*REASON : (.*)"
)


@dataclass(frozen=True)
class Placement:
    status: str  # a smoke STATUSES value: passed, failed, crashed, timed_out, not_run
    reason: str | None
    method: str | None  # assignment-info or verbose-log
    nodes_total: int | None
    nodes_on_qnn: int | None
    partitions: int | None
    cpu_nodes: tuple[str, ...] = ()
    fallback_reasons: dict[str, str] = field(default_factory=dict)  # "Op:name" -> reason
    # Graph-input Q and graph-output DQ that the EP leaves to the CPU on purpose
    # (offload_graph_io_quantization, on by default in 2.x): not a fallback.
    io_offloaded: tuple[str, ...] = ()
    timings: dict[str, Any] | None = None
    child: dict[str, Any] | None = None
    log_lines: tuple[str, ...] = ()
    exit_name: str | None = None

    @property
    def fell_back(self) -> tuple[str, ...]:
        """CPU nodes that are a real fallback (not the EP's I/O offload)."""
        return tuple(n for n in self.cpu_nodes if n not in self.io_offloaded)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "reason": self.reason,
            "method": self.method,
            "nodes_total": self.nodes_total,
            "nodes_on_qnn": self.nodes_on_qnn,
            "partitions": self.partitions,
            "cpu_nodes": list(self.cpu_nodes),
            "io_quantization_on_cpu": list(self.io_offloaded),
            "fallback_reasons": dict(self.fallback_reasons),
            "exit": self.exit_name,
            "log_lines": [line for line in self.log_lines if _WARNING.search(line)][-20:],
        }


def not_run(reason: str) -> Placement:
    return Placement("not_run", reason, None, None, None, None)


def fallback_reasons(log: str) -> dict[str, str]:
    """``Op:node name`` -> the QNN EP's stated reason for refusing it."""
    reasons: dict[str, str] = {}
    for match in _FAILED.finditer(_ANSI.sub("", log)):
        op, name, reason = match.group(2), match.group(3).strip(), match.group(4).strip()
        reasons.setdefault(f"{op}:{name}", reason)
    return reasons


def placement_from_log(log: str) -> tuple[int, list[str]] | None:
    """(QNN partitions, CPU nodes as ``Op:name``) from the verbose
    "Node placements" block, or None when the log has none."""
    partitions: int | None = None
    cpu: list[str] = []
    current: str | None = None
    for raw in _ANSI.sub("", log).splitlines():
        placed = _PLACED_ON.search(raw)
        if placed:
            current = placed.group(1)
            if current == QNN:
                partitions = int(placed.group(2))
            continue
        node = _PLACED_NODE.search(raw)
        if node and current is not None:
            if current != QNN:
                cpu.append(f"{node.group(1)}:{node.group(2)}")
            continue
        current = None
    if partitions is None and not cpu:
        return None
    return partitions or 0, cpu


def _io_offloaded(cpu: list[str], reasons: dict[str, str]) -> tuple[str, ...]:
    return tuple(n for n in cpu if _IO_OFFLOAD in reasons.get(n, ""))


def _from_child(result: SmokeResult, stderr: str, nodes_in_file: int) -> Placement:
    child = dict(result.child or {})
    reasons = fallback_reasons(stderr)
    common: dict[str, Any] = {
        "child": child,
        "timings": child.get("timings"),
        "log_lines": result.log_lines,
        "exit_name": result.exit_name,
        "fallback_reasons": reasons,
    }
    if result.status != "passed":
        return Placement(result.status, result.reason, None, None, None, None, **common)
    assignment = child.get("assignment")
    if isinstance(assignment, list) and assignment:
        qnn_subgraphs = [s for s in assignment if s.get("ep") == QNN]
        cpu = [n for s in assignment if s.get("ep") != QNN for n in s.get("nodes", [])]
        total = sum(len(s.get("nodes", [])) for s in assignment)
        return Placement(
            "passed",
            None,
            "assignment-info",
            total,
            total - len(cpu),
            len(qnn_subgraphs),
            cpu_nodes=tuple(cpu),
            io_offloaded=_io_offloaded(cpu, reasons),
            **common,
        )
    from_log = placement_from_log(stderr)
    if from_log is None:
        return Placement(
            "passed",
            "the runtime gave no graph-assignment info and its log no node placements",
            None,
            None,
            None,
            None,
            **common,
        )
    partitions, cpu = from_log
    return Placement(
        "passed",
        None,
        "verbose-log",
        nodes_in_file,
        max(nodes_in_file - len(cpu), 0),
        partitions,
        cpu_nodes=tuple(cpu),
        io_offloaded=_io_offloaded(cpu, reasons),
        **common,
    )


def run_placement(
    target: Target,
    model: Path,
    *,
    nodes_in_file: int,
    backend: str = "htp",
    runs: int = 10,
    timeout: float = 120.0,
    runner: Runner | None = None,
) -> Placement:
    """Run the child in the target and read where the nodes went. Never
    raises for anything the child does."""
    runner = runner or SubprocessRunner()
    env = dict(os.environ)
    for variable in ("PYTHONINSPECT", "PYTHONSTARTUP"):
        env.pop(variable, None)
    # Absolute (not resolved: a venv's python symlink must stay what it is), as
    # the child starts in another working folder.
    python = os.path.abspath(target.python) if os.sep in target.python else target.python  # noqa: PTH100
    argv = [python, "-B", str(CHILD), str(model.resolve()), backend, str(runs)]
    # A neutral working folder, as for the smoke session.
    with tempfile.TemporaryDirectory(prefix="qnndoctor-model-") as cwd:
        completed = runner.run(argv, timeout=timeout, env=env, cwd=cwd)
    return _from_child(classify(completed, backend), completed.stderr_text(), nodes_in_file)
