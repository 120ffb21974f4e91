"""The experiments ``qnndoctor model`` was asked for, after the placement run:
each adds a key to the document (``culprit``, ``profile``, ``compare``,
``npu_share``) and the findings it proves."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import knowledge as K
from ..findings import ModelFinding, finding

if TYPE_CHECKING:
    from ...children.runner import Runner
    from ...target.interpreter import Target
    from ..loading import ModelInfo
    from ..options import ModelOptions
    from ..placement import Placement


def _culprit_finding(culprit: dict[str, Any]) -> ModelFinding:
    nodes = culprit["nodes"]
    named = f"{culprit['op_type']} '{culprit['node']}'"
    if len(nodes) > 1:
        named = f"{len(nodes)} nodes together, ending with {named}"
    why = f"; the QNN EP says: {culprit['qnn_reason']}" if culprit.get("qnn_reason") else ""
    return finding(
        "model-culprit",
        f"A session with CPU fallback off fails because of {named}: sub-models with it fail "
        f"and without it pass ({culprit['steps_total']} trials). Alone it raises: "
        f"{culprit['error']}{why}",
        fix=culprit["fix"],
        evidence={"culprit.node": culprit["node"], "culprit.op_type": culprit["op_type"]},
        sources=(K.QNN_OPS_SOURCE,),
    )


def _divergence_finding(compare: dict[str, Any], precision: str) -> ModelFinding:
    beyond = [o for o in compare["outputs"] if not o["within_tolerance"]]
    shown = ", ".join(f"{o['name']} (max abs error {o['max_abs_error']})" for o in beyond[:5])
    first = compare.get("first_divergence")
    where = (
        f" The first node that differs is {first['op_type']} '{first['node']}': "
        f"{first['likely_reason']}."
        if first
        else ""
    )
    return finding(
        "model-outputs-diverge",
        f"On the same inputs, QNN's outputs differ from the CPU EP's beyond the tolerance "
        f"{compare['tolerance']:g}: {shown}.{where}",
        fix=(
            "Check the quantization parameters (scale, zero point) around that node, or keep "
            "it in higher precision (16-bit activations, or float on the CPU); raise "
            "--tolerance if the difference is acceptable."
            if precision == "qdq"
            else "Keep that node's values within float16 (rescale before it, or compute it on "
            "the CPU), or run the model without enable_htp_fp16_precision where the chip "
            "allows; raise --tolerance if the difference is acceptable."
        ),
        evidence={"compare.first_divergence": first["node"] if first else None},
    )


def _culprit_command(options: ModelOptions) -> str:
    """The culprit search for the same model and target, as the user would type it here."""
    from ... import shell

    windows = os.name == "nt"
    python = ("--python", options.python) if options.python else ()
    return " ".join(
        shell.quote(part, windows)
        for part in ("qnndoctor", "model", options.path, *python, "--find-culprit")
    )


def run_experiments(
    options: ModelOptions,
    target: Target,
    model: ModelInfo,
    placement: Placement,
    compiled_io: frozenset[str],
    notes: list[str],
    *,
    runner: Runner | None,
    log: Callable[[str], None],
) -> tuple[dict[str, Any], list[ModelFinding]]:
    from ...children.runner import SubprocessRunner

    runner = runner or SubprocessRunner()
    extra: dict[str, Any] = {}
    found: list[ModelFinding] = []
    common: dict[str, Any] = dict(
        backend=options.backend,
        timeout=options.timeout,
        runner=runner,
        qnn_options=dict(options.qnn_options),
    )
    cuttable = not model.ep_contexts and not model.external_data
    if options.find_culprit and not cuttable:
        notes.append(
            "culprit not searched: a compiled (EPContext) model or one with external data "
            "cannot be cut into sub-models here"
        )
    elif options.find_culprit:
        from .culprit import search

        culprit = search(target, model, log=log, **common).to_json()
        extra["culprit"] = culprit
        if culprit["status"] == "found":
            found.append(_culprit_finding(culprit))
    if options.profile:
        from .profile import measure

        extra["profile"] = measure(target, model, runs=options.runs, **common).to_json()
    if options.compare and model.ep_contexts:
        notes.append("not compared: a compiled (EPContext) model has no CPU kernel to compare with")
    elif options.compare:
        from .compare import compare

        if model.external_data:
            notes.append(
                "compared the whole model only: a model with external data is not cut into "
                "truncated models here, so no first diverging node is located"
            )
        compared = compare(
            target, model, tolerance=options.tolerance, inputs=options.inputs, log=log,
            locate=not model.external_data, **common,
        ).to_json()  # fmt: skip
        extra["compare"] = compared
        if any(not o["within_tolerance"] for o in compared["outputs"]):
            found.append(_divergence_finding(compared, model.precision))
    if options.min_npu_share is not None:
        from ..guard import npu_share, share_findings, unmeasured

        share = npu_share(placement, options.min_npu_share, compiled_io)
        extra["npu_share"] = share.to_json() if share else None
        if share is None:
            found.append(
                unmeasured(
                    options.min_npu_share, [f"placement {placement.status}: {placement.reason}"]
                )
            )
        else:
            found += share_findings(share, None if options.find_culprit else _culprit_command(options))
    return extra, found
