"""``qnndoctor model MODEL``: will this model run on the NPU here, and how much of it?

Static checks first (the ``onnx`` package, in qnndoctor's own environment),
then the probes in the target (versions, chip, paths), then, unless
``--no-run``, the placement child in the target. Exit codes as for ``check``:
0 nothing at or above ``--fail-on``, 1 such findings, 3 could not check.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from .. import exitcodes
from ..render.json_out import for_stream

if TYPE_CHECKING:
    from ..consistency import PipTarget
    from ..runner import Runner
    from .findings import ModelFinding


def add_parser(sub: Any) -> None:
    """The ``model`` sub-command's options (called from cli.py)."""
    model = sub.add_parser(
        "model",
        help="will this ONNX model run on the NPU here, and how much of it?",
        description="Static checks of an ONNX model against the target's onnxruntime and chip "
        "(opsets, precision, dynamic shapes, operators, external data, EPContext binaries), "
        "then, unless --no-run, a session in the target that measures which nodes run on QNN "
        "and times QNN against the CPU. " + exitcodes.described("model"),
    )
    model.add_argument("model_path", metavar="MODEL.onnx", help="the ONNX model to diagnose")
    model.add_argument("--python", metavar="PATH|auto", help="interpreter that will run the model")
    model.add_argument(
        "--backend",
        choices=("htp", "gpu", "cpu"),
        default="htp",
        help="QNN backend for the placement session (default htp)",
    )
    model.add_argument("--no-run", action="store_true", help="static checks only: no session")
    model.add_argument("--json", action="store_true", help="one JSON document on stdout")
    model.add_argument("--runs", type=int, default=10, metavar="N", help="timed runs per EP (10)")
    model.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="time limit for the placement run; its process tree is killed after it",
    )
    model.add_argument(
        "--fail-on",
        choices=("error", "warning"),
        default="error",
        help="lowest severity that makes the exit code 1 (default: error)",
    )
    model.add_argument(
        "--no-redact", action="store_true", help="keep user name, host name and home paths in JSON"
    )
    model.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")


def _emit(doc: dict[str, Any], args: argparse.Namespace, out: TextIO) -> None:
    if args.json:
        if not args.no_redact:
            from ..redact import redact_document

            doc = redact_document(doc)
        else:
            doc["redacted"] = False
        out.write(for_stream(doc, out) + "\n")
    else:
        from .render import render_text

        render_text(doc, out)


def run_model(
    args: argparse.Namespace, out: TextIO, err: TextIO, runner: Runner | None = None
) -> int:
    from . import checks
    from .context import read_context
    from .loading import ModelError, read_model
    from .report import document, exit_code, placement_findings

    def log(message: str) -> None:
        if args.verbose:
            err.write(f"qnndoctor: {message}\n")

    if args.runs < 1 or args.timeout <= 0:
        err.write("qnndoctor: error: --runs and --timeout must be positive\n")
        return exitcodes.USAGE
    try:
        model = read_model(args.model_path)
    except ModelError as exc:
        err.write(f"qnndoctor: cannot read the model: {exc}\n")
        if args.json:
            _emit(
                document(
                    model=None,
                    target=None,
                    runtime=None,
                    context=None,
                    placement=None,
                    findings=[],
                    notes=[],
                    error=str(exc),
                ),
                args,
                out,
            )
        return exitcodes.COULD_NOT_CHECK
    log(f"model: IR {model.ir_version}, {len(model.nodes)} nodes, {model.precision}")
    contexts = [read_context(model.path, node) for node in model.ep_contexts]
    notes: list[str] = []
    runtime = None
    target = None
    pip_target = None
    from .. import matrixdata
    from ..collect import CouldNotCheck, run_probes
    from ..consistency import PipTarget
    from ..target import TargetError, resolve
    from .runtime import target_runtime

    matrix = matrixdata.load_or_empty()
    try:
        target = resolve(args.python)
        log(f"target: {target.python} ({target.how_chosen})")
        probe_run = run_probes(target, runner=runner, model=str(model.path.resolve()))
        runtime = target_runtime(probe_run.facts, matrix)
        pip_target = PipTarget.of(probe_run.facts)
    except (TargetError, CouldNotCheck, OSError) as exc:
        err.write(f"qnndoctor: could not check the target: {exc}\n")
        notes.append(f"target not probed ({exc}): only the model's own checks ran")
        target = None
    findings = [
        *checks.version_findings(model, runtime),
        *checks.shape_findings(
            model, bool(runtime and runtime.windows), target.python if target else None
        ),
        *checks.file_findings(model, runtime),
    ]
    if args.backend == "htp":
        findings += checks.precision_findings(model, runtime)
    findings += checks.op_findings(model)
    placement = None
    if target is None or runtime is None:
        pass
    elif args.no_run:
        notes.append("placement not measured (--no-run)")
    elif not runtime.onnxruntime_qnn:
        notes.append("placement not measured: onnxruntime-qnn is not installed in the target")
    else:
        from .placement import run_placement

        log(f"placement run on {args.backend} ({args.runs} runs, timeout {args.timeout:g} s)")
        placement = run_placement(
            target,
            model.path,
            nodes_in_file=len(model.nodes),
            backend=args.backend,
            runs=args.runs,
            timeout=args.timeout,
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
    if placement is not None:
        findings += placement_findings(
            placement,
            context["compatible"] if context else None,
            frozenset(model.io_quantization) if model.ep_contexts else frozenset(),
        )
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
    _emit(doc, args, out)
    if target is None:  # the model's own checks ran; the question "here?" was not answered
        return exitcodes.COULD_NOT_CHECK
    from ..findings import Severity  # here: cli.py builds this parser on every start

    return exit_code(findings, Severity.parse(args.fail_on))


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
