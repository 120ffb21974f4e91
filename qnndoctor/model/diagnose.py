"""The ``qnndoctor model`` flow, for the command line and the API alike.

Static checks first (the ``onnx`` package, in qnndoctor's own environment),
then the probes in the target (versions, chip, paths), then, unless
``no_run``, the placement child in the target, then the experiments asked
for (``--find-culprit``, ``--profile``, ``--compare``, each in contained
children), then the ``--min-npu-share`` guard. Exit codes as for ``check``:
0 nothing at or above ``fail_on``, 1 such findings, 3 could not check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import exitcodes
from .options import ModelOptions

if TYPE_CHECKING:
    from ..children.runner import Runner
    from ..resolver.consistency import PipTarget
    from .findings import ModelFinding


def _not_checked(error: str) -> dict[str, Any]:
    from .report import document

    return document(
        model=None, target=None, runtime=None, context=None, placement=None,
        findings=[], notes=[], error=error,
    )  # fmt: skip


def diagnose(
    options: ModelOptions,
    *,
    runner: Runner | None = None,
    log: Callable[[str], None] = lambda _: None,
    warn: Callable[[str], None] = lambda _: None,
) -> tuple[dict[str, Any], int]:
    """The ``qnndoctor model`` document and exit code; ``warn`` gets what the
    command line shows on stderr whatever the verbosity."""
    from . import checks
    from .context import read_context
    from .loading import ModelError, read_model
    from .report import document, exit_code, placement_findings

    try:
        model = read_model(options.path)
    except ModelError as exc:
        warn(f"cannot read the model: {exc}")
        return _not_checked(str(exc)), exitcodes.COULD_NOT_CHECK
    log(f"model: IR {model.ir_version}, {len(model.nodes)} nodes, {model.precision}")
    contexts = [read_context(model.path, node) for node in model.ep_contexts]
    notes: list[str] = []
    runtime = None
    target = None
    pip_target = None
    from .. import matrixdata
    from ..resolver.consistency import PipTarget
    from ..target.collect import CouldNotCheck, run_probes
    from ..target.interpreter import TargetError, resolve
    from .runtime import target_runtime

    matrix = matrixdata.load_or_empty()
    try:
        target = resolve(options.python)
        log(f"target: {target.python} ({target.how_chosen})")
        probe_run = run_probes(target, runner=runner, model=str(model.path.resolve()))
        runtime = target_runtime(probe_run.facts, matrix)
        pip_target = PipTarget.of(probe_run.facts)
    except (TargetError, CouldNotCheck, OSError) as exc:
        warn(f"could not check the target: {exc}")
        notes.append(f"target not probed ({exc}): only the model's own checks ran")
        target = None
    findings = [
        *checks.version_findings(model, runtime),
        *checks.shape_findings(
            model, bool(runtime and runtime.windows), target.python if target else None
        ),
        *checks.file_findings(model, runtime),
    ]
    if options.backend == "htp":
        findings += checks.precision_findings(model, runtime)
    findings += checks.op_findings(model)
    placement = None
    if target is None or runtime is None:
        pass
    elif options.no_run:
        notes.append("placement not measured (--no-run)")
    elif not runtime.onnxruntime_qnn:
        notes.append("placement not measured: onnxruntime-qnn is not installed in the target")
    else:
        from .placement import run_placement

        log(
            f"placement run on {options.backend} ({options.runs} runs, "
            f"timeout {options.timeout:g} s)"
        )
        placement = run_placement(
            target,
            model.path,
            nodes_in_file=len(model.nodes),
            backend=options.backend,
            runs=options.runs,
            timeout=options.timeout,
            runner=runner,
        )
        runtime = runtime.with_child(placement.child)
        log(f"placement: {placement.status}")
        devices = (placement.child or {}).get("ep_devices") or []
        if devices and all(str(d.get("device_type", "")).endswith("CPU") for d in devices):
            notes.append(
                "the QNN EP's device is a CPU (the x86-64 HTP simulator): QNN timings here "
                "are the simulator's, not an NPU's"
            )
    context_found, context = checks.context_findings(
        contexts, runtime, matrix, target.python if target else None
    )
    findings += context_found
    compiled_io = frozenset(model.io_quantization) if model.ep_contexts else frozenset()
    if placement is not None:
        findings += placement_findings(
            placement, context["compatible"] if context else None, compiled_io
        )
    extra: dict[str, Any] = {}
    if target is not None and placement is not None:
        from .experiment.run import run_experiments

        more, found = run_experiments(
            options, target, model, placement, compiled_io, notes, runner=runner, log=log
        )
        extra.update(more)
        findings += found
    elif options.min_npu_share is not None:
        from .guard import unmeasured

        findings.append(unmeasured(options.min_npu_share, notes))
    if target is not None and pip_target is not None:  # commands that work with its pip
        findings = _fitted(findings, pip_target)
    doc = document(
        model=model.to_json(),
        target=target.to_json() if target else None,
        runtime=runtime.to_json() if runtime else None,
        context=context,
        placement=placement,
        findings=findings,
        notes=notes,
    )
    doc.update(extra)
    if target is None:  # the model's own checks ran; the question "here?" was not answered
        return doc, exitcodes.COULD_NOT_CHECK
    from ..rules.findings import Severity

    return doc, exit_code(findings, Severity.parse(options.fail_on))


def _fitted(findings: list[ModelFinding], target: PipTarget) -> list[ModelFinding]:
    """Each fix as it works with the target's pip (consistency.PipTarget): a
    venv without pip gets its bundled one first, a system Python a new venv."""
    from dataclasses import replace

    done = []
    for item in findings:
        fix = item.finding.fix
        if fix is not None and fix.commands:
            item = replace(item, finding=replace(item.finding, fix=target.fitted(fix)))
        done.append(item)
    return done
