"""``--min-npu-share X``: a guard for applications and installers.

The share is the nodes the placement run saw on QNN over the nodes that do
compute: the graph-input QuantizeLinear and graph-output DequantizeLinear
that the 2.x EP leaves to the CPU by design (offload_graph_io_quantization)
and those a compiled model keeps outside its EPContext node count neither
way. Below the share is an error finding naming each node that left and the
QNN EP's reason; a placement that could not be measured fails the guard too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import knowledge as K
from .findings import ModelFinding, finding
from .placement import Placement


@dataclass(frozen=True)
class Share:
    on_qnn: int
    compute: int  # nodes that count
    required: float
    left: tuple[str, ...]  # "Op:name" of the compute nodes on the CPU
    reasons: dict[str, str]

    @property
    def share(self) -> float:
        return self.on_qnn / self.compute if self.compute else 1.0

    @property
    def met(self) -> bool:
        return self.share >= self.required

    def to_json(self) -> dict[str, Any]:
        return {
            "share": round(self.share, 4),
            "required": self.required,
            "met": self.met,
            "nodes_on_qnn": self.on_qnn,
            "nodes_counted": self.compute,
            "left_qnn": [{"node": node, "reason": self.reasons.get(node)} for node in self.left],
        }


def npu_share(placement: Placement, required: float, compiled_io: frozenset[str]) -> Share | None:
    """None when the placement run did not measure where the nodes went."""
    if placement.status != "passed" or placement.nodes_total is None:
        return None
    outside = {n for n in placement.fell_back if n in compiled_io}
    left = tuple(n for n in placement.fell_back if n not in outside)
    compute = placement.nodes_total - len(placement.io_offloaded) - len(outside)
    on_qnn = max(compute - len(left), 0)
    return Share(on_qnn, compute, required, left, dict(placement.fallback_reasons))


def share_findings(share: Share, culprit_command: str | None = None) -> list[ModelFinding]:
    """``culprit_command``: the exact ``qnndoctor model ... --find-culprit`` for
    this model, or None when this run searched for the culprit already."""
    if share.met:
        return []
    culprit = (
        "; the command below names the node a session with CPU fallback off fails on"
        if culprit_command
        else "; the culprit search above names the node a session with CPU fallback off fails on"
    )
    named = "; ".join(
        f"{node}: {share.reasons.get(node, 'no reason logged')}" for node in share.left[:20]
    )
    more = f" (and {len(share.left) - 20} more)" if len(share.left) > 20 else ""
    return [
        finding(
            "model-npu-share-below",
            f"{share.on_qnn} of {share.compute} nodes run on QNN ({share.share:.0%}), below the "
            f"required {share.required:.0%} (graph I/O quantization left to the CPU by design "
            f"not counted). Left QNN: {named}{more}.",
            fix="Fix what the reasons name (static shapes, supported operators, QDQ), or ask "
            f"for a lower share{culprit}.",
            commands=(culprit_command,) if culprit_command else (),
            evidence={
                "npu_share.share": round(share.share, 4),
                "npu_share.required": share.required,
                "npu_share.left_qnn": list(share.left),
            },
            sources=(K.QNN_OPS_SOURCE,),
        )
    ]


def unmeasured(required: float, notes: list[str]) -> ModelFinding:
    why = "; ".join(notes) or "the placement run did not measure where the nodes run"
    return finding(
        "model-npu-share-below",
        f"The share of nodes on QNN could not be measured ({why}), so the required "
        f"{required:.0%} is not shown to be met.",
        fix="Run without --no-run on an interpreter with onnxruntime-qnn; see the other findings.",
        evidence={"npu_share.required": required},
    )
