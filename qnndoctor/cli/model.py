"""``qnndoctor model MODEL``: the command line of ``diagnose`` (options in,
the document rendered out). Exit codes as for ``check``: 0 nothing at or
above ``--fail-on``, 1 such findings, 2 bad options, 3 could not check.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from .. import exitcodes
from ..render.json_out import for_stream
from . import options

if TYPE_CHECKING:
    from ..children.runner import Runner
    from ..model.options import ModelOptions


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
    options.python(model, "interpreter that will run the model")
    options.backend(model, "the placement session")
    model.add_argument("--no-run", action="store_true", help="static checks only: no session")
    options.json_output(model)
    model.add_argument("--runs", type=int, default=10, metavar="N", help="timed runs per EP (10)")
    model.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="time limit for the placement run and for each experiment child; its process "
        "tree is killed after it",
    )
    options.fail_on(model)
    options.no_redact(model)
    model.add_argument(
        "--find-culprit",
        action="store_true",
        help="find the node(s) a session with CPU fallback off fails on, by compiling "
        "sub-models in contained children",
    )
    model.add_argument(
        "--profile", action="store_true", help="per-op time on the HTP from QNN's own profiling"
    )
    model.add_argument(
        "--min-npu-share",
        type=float,
        metavar="X",
        help="exit 1 when less than this share (0..1) of the nodes runs on QNN",
    )
    model.add_argument(
        "--compare",
        action="store_true",
        help="run the same inputs on the CPU EP and on QNN; locate the first diverging node",
    )
    model.add_argument(
        "--inputs", metavar="FILE.npz", help="inputs for --compare (default: seeded random)"
    )
    model.add_argument(
        "--tolerance",
        type=float,
        default=1e-2,
        metavar="ABS",
        help="largest absolute difference per output element --compare accepts (0.01)",
    )
    model.add_argument(
        "--qnn-option",
        action="append",
        metavar="KEY=VALUE",
        help="a further QNN provider option for the experiment children, as the application "
        "sets it (e.g. enable_htp_fp16_precision=1, soc_model=57); repeatable",
    )
    options.verbose(model)


def _emit(doc: dict[str, Any], args: argparse.Namespace, out: TextIO) -> None:
    if args.json:
        if not args.no_redact:
            from ..report.redact import redact_document

            doc = redact_document(doc)
        else:
            doc["redacted"] = False
        out.write(for_stream(doc, out) + "\n")
    else:
        from ..render.model import render_text

        render_text(doc, out)


def _options(args: argparse.Namespace) -> ModelOptions:
    from ..model.options import ModelOptions

    return ModelOptions(
        path=args.model_path,
        python=args.python,
        backend=args.backend,
        no_run=args.no_run,
        runs=args.runs,
        timeout=args.timeout,
        fail_on=args.fail_on,
        find_culprit=args.find_culprit,
        profile=args.profile,
        min_npu_share=args.min_npu_share,
        compare=args.compare,
        inputs=args.inputs,
        tolerance=args.tolerance,
        qnn_options=tuple(_option(text) for text in args.qnn_option or ()),
    )


def _option(text: str) -> tuple[str, str]:
    key, _, value = text.partition("=")
    return key.strip(), value.strip()


def run_model(
    args: argparse.Namespace, out: TextIO, err: TextIO, runner: Runner | None = None
) -> int:
    from ..model.diagnose import diagnose

    def log(message: str) -> None:
        if args.verbose:
            err.write(f"qnndoctor: {message}\n")

    def warn(message: str) -> None:
        err.write(f"qnndoctor: {message}\n")

    options = _options(args)
    problem = options.problem()
    if problem:
        err.write(f"qnndoctor: error: {problem}\n")
        return exitcodes.USAGE
    doc, code = diagnose(options, runner=runner, log=log, warn=warn)
    _emit(doc, args, out)
    return code
