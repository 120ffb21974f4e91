"""Static model checks: pure functions of the model, its context binaries, the
target runtime and the release matrix (no onnxruntime, nothing run)."""

from __future__ import annotations

from typing import Any

from packaging.version import InvalidVersion, Version

from ..matrixdata import Matrix
from ..rules.findings import Severity
from ..shell import pip_command, quote
from . import knowledge as K
from .context import ContextInfo
from .findings import ModelFinding, finding
from .loading import ModelInfo
from .runtime import TargetRuntime

CONTEXT_5000 = "https://github.com/qualcomm/ai-hub-apps/issues/148"
LFS_SPEC = "https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md"
NON_ASCII_SOURCES = (
    "https://github.com/microsoft/onnxruntime/pull/27724",
    "https://github.com/microsoft/WindowsAppSDK/issues/6173",
)


def _version(text: str | None) -> Version | None:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def _ort_for(ir: int, opset: int) -> str | None:
    """The oldest measured onnxruntime release that loads this IR and opset."""
    for version, (max_ir, max_opset) in sorted(K.ORT_LIMITS.items(), key=lambda kv: Version(kv[0])):
        if ir <= max_ir and opset <= max_opset:
            return version
    return None


def version_findings(model: ModelInfo, runtime: TargetRuntime | None) -> list[ModelFinding]:
    found: list[ModelFinding] = []
    ort = runtime.onnxruntime if runtime else None
    max_ir, max_opset, exact = K.ort_limits(ort)
    severity = None if exact else Severity.WARNING
    measured = (
        "measured with that minor release"
        if exact
        else "the limit of the newest older release measured; this one may load more"
    )
    opset = model.opsets.get("", 0)
    newer = _ort_for(model.ir_version, opset)

    def fix(rest: str) -> str:
        return (
            f"Install onnxruntime {newer} or newer, or {rest}"
            if newer
            else rest[:1].upper() + rest[1:]
        )

    if max_ir is not None and model.ir_version > max_ir:
        found.append(
            finding(
                "model-ir-too-new",
                f"The model has IR version {model.ir_version}; onnxruntime {ort} loads up to IR "
                f'{max_ir} ({measured}). Loading fails with "Unsupported model IR version". '
                "An EPContext wrapper written by a newer onnxruntime has this problem.",
                fix=fix("re-export or re-compile the model with the onnxruntime that will run it."),
                evidence={"model.ir_version": model.ir_version, "runtime.onnxruntime": ort},
                sources=K.ORT_LIMITS_SOURCES,
                severity=severity,
            )
        )
    if max_opset is not None and opset > max_opset:
        found.append(
            finding(
                "model-opset-too-new",
                f"The model imports ai.onnx opset {opset}; onnxruntime {ort} implements up to "
                f"{max_opset} ({measured}).",
                fix=fix(f"export the model with opset {max_opset} or lower."),
                evidence={"model.opsets.ai.onnx": opset, "runtime.onnxruntime": ort},
                sources=K.ORT_LIMITS_SOURCES,
                severity=severity,
            )
        )
    return found


def shape_findings(
    model: ModelInfo, windows: bool, python: str | None = None
) -> list[ModelFinding]:
    """``python``: the target's interpreter, which runs the fix (it has the
    onnxruntime tools); plain ``python`` when the target is unknown."""
    free = [
        (kind, t, i)
        for kind, tensors in (("input", model.inputs), ("output", model.outputs))
        for t in tensors
        for i in t.free_dims
    ]
    if not free or model.ep_contexts:
        return []
    described = "; ".join(
        f"{kind} {t.name!r} dim {i} = {t.dims[i] if t.dims else None!r}" for kind, t, i in free
    )
    params = sorted(
        {str(t.dims[i]) for kind, t, i in free if t.dims and isinstance(t.dims[i], str)}
    )
    path = quote(str(model.path), windows)
    fixed = quote(str(model.path.with_suffix(".fixed.onnx")), windows)
    program = quote(python, windows) if python else "python"
    commands = tuple(
        f"{program} -m onnxruntime.tools.make_dynamic_shape_fixed --dim_param {p} --dim_value 1 {path} {fixed}"
        for p in params
    )
    if not commands:
        first = (
            next(t for kind, t, i in free if kind == "input")
            if any(kind == "input" for kind, _, _ in free)
            else None
        )
        if first is not None and first.dims is not None:
            shape = ",".join(str(d) if isinstance(d, int) and d > 0 else "1" for d in first.dims)
            commands = (
                f"{program} -m onnxruntime.tools.make_dynamic_shape_fixed --input_name {first.name} "
                f"--input_shape {shape} {path} {fixed}",
            )
    if commands:
        # onnxruntime's tool imports the onnx package, which onnxruntime does not install.
        commands = (f"{program} -m pip install onnx", *commands)
    return [
        finding(
            "model-dynamic-shape",
            f"QNN needs static shapes: nodes whose shapes are not known are refused by the QNN EP "
            f'("Cannot get shape") and run on the CPU. Dynamic: {described}.',
            fix="Fix the dimensions to the values you run with (or export with fixed shapes); "
            "onnxruntime's tool for it needs the onnx package.",
            commands=commands,
            evidence={"model.free_dims": described},
            sources=K.DYNAMIC_SHAPE_SOURCES,
        )
    ]


def precision_findings(model: ModelInfo, runtime: TargetRuntime | None) -> list[ModelFinding]:
    precision = model.precision
    if precision not in ("float32", "float16", "mixed-float"):
        return []
    arch = runtime.htp_arch if runtime else None
    if arch is not None and arch < K.FP16_MIN_ARCH:
        return [
            finding(
                "model-fp16-unsupported-chip",
                f"The model computes in {precision}; HTP runs float models in fp16, which needs "
                f"HTP v{K.FP16_MIN_ARCH} or newer. This chip ({runtime.soc if runtime else '?'}) "
                f'has v{arch}: expect "doesn\'t support FP16" or a CPU fallback.',
                fix="Quantize the model to QDQ (uint8/uint16 activations) for this chip.",
                evidence={"model.precision": precision, "runtime.htp_arch": arch},
                sources=K.FP16_SOURCES,
            )
        ]
    chip = f"this chip has v{arch}" if arch is not None else "this machine's HTP arch is unknown"
    return [
        finding(
            "model-float-on-htp",
            f"The model computes in {precision} (no QuantizeLinear/DequantizeLinear). HTP runs "
            f"float models in fp16 (the 2.x EP's enable_htp_fp16_precision, on by default), which "
            f"needs HTP v{K.FP16_MIN_ARCH} or newer ({chip}). A QDQ model is faster and also runs "
            "on older chips.",
            fix="For speed or for chips older than v73: quantize to QDQ with "
            "onnxruntime.quantization (get_qnn_qdq_config).",
            evidence={"model.precision": precision, "runtime.htp_arch": arch},
            sources=(*K.FP16_SOURCES, K.FP32_AS_FP16_SOURCE),
        )
    ]


def op_findings(model: ModelInfo) -> list[ModelFinding]:
    if model.ep_contexts:
        return []
    unknown = {
        op: count
        for op, count in model.op_counts.items()
        if op not in K.QNN_OPS and op.split(":", 1)[0] in ("ai.onnx", "com.microsoft")
    }
    if not unknown:
        return []
    listed = ", ".join(f"{op} ({n})" for op, n in sorted(unknown.items()))
    return [
        finding(
            "model-ops-not-on-qnn",
            f"Not in the QNN EP's supported-operator list: {listed}. These nodes run on the CPU "
            "and split the QNN graph into more partitions (each boundary copies data).",
            fix="Replace them with supported operators in the exporter, or accept the CPU part; "
            "the placement run shows what really happens.",
            evidence={"model.ops_not_listed": unknown},
            sources=(K.QNN_OPS_SOURCE, K.QNN_OPS_RELEASE_SOURCE),
            confidence="medium: the documented list lags releases and ignores data types",
        )
    ]


def file_findings(model: ModelInfo, runtime: TargetRuntime | None) -> list[ModelFinding]:
    found: list[ModelFinding] = []
    missing = [e.location for e in model.external_data if not e.exists]
    if missing:
        found.append(
            finding(
                "model-external-data-missing",
                f"The model keeps weights in external files that are not beside it: "
                f"{', '.join(missing)}. onnxruntime cannot load it.",
                fix=f"Copy {', '.join(missing)} into {model.path.parent} (the names are relative "
                "to the model's folder).",
                evidence={"model.external_data_missing": missing},
                sources=("https://onnx.ai/onnx/repo-docs/ExternalData.html",),
            )
        )
    text = str(model.path.resolve())
    if any(ord(c) > 127 for c in text):
        windows = bool(runtime and runtime.windows)
        unmappable = windows and runtime is not None and runtime.model_path_in_code_page is False
        code_page = runtime.ansi_code_page if runtime else None
        found.append(
            finding(
                "model-non-ascii-path",
                f"The model path {text!r} has non-ASCII characters. "
                + (
                    'On Windows, onnxruntime and the QNN EP have failed on such paths with "No '
                    'mapping for the Unicode character exists in the target multi-byte code page" '
                    "(fixed in onnxruntime in 2026)"
                    + (
                        f"; and this path has characters the ANSI code page {code_page} cannot "
                        "represent."
                        if unmappable
                        else "."
                    )
                    if windows
                    else "Harmless on this target; on Windows it has broken model loading."
                ),
                fix="Move the model (and its context binaries) to an ASCII-only folder.",
                evidence={"model.path": text, "paths.ansi_code_page": code_page},
                sources=NON_ASCII_SOURCES,
                severity=Severity.ERROR if unmappable else (None if windows else Severity.INFO),
            )
        )
    return found


def _first_release_with(matrix: Matrix, qnn: Version) -> str | None:
    best: tuple[Version, str] | None = None
    for release in matrix.releases.releases:
        versions = {_version(f.qnn_version) for f in release.files if f.qnn_version}
        newer = any(v is not None and v >= qnn for v in versions)
        if newer and not release.prerelease and (best is None or release.version < best[0]):
            best = (release.version, str(release.version))
    return best[1] if best else None


def context_findings(
    contexts: list[ContextInfo],
    runtime: TargetRuntime | None,
    matrix: Matrix,
    python: str | None,
) -> tuple[list[ModelFinding], dict[str, Any] | None]:
    """Findings, and the report's ``context`` summary (None: no EPContext)."""
    if not contexts:
        return [], None
    found: list[ModelFinding] = []
    compatible: bool | None = True
    unknown: list[str] = []
    for ctx in contexts:
        if not ctx.present:
            compatible = False
            found.append(
                finding(
                    "model-context-binary-missing",
                    f"EPContext node {ctx.node!r}: {ctx.error}. The model cannot load without it.",
                    fix="Put the context binary the node names beside the model (same folder, same "
                    "name), or re-compile the EPContext model.",
                    evidence={"context.location": ctx.location},
                    sources=K.CONTEXT_SOURCES,
                )
            )
            continue
        if ctx.lfs_pointer:
            compatible = False
            found.append(
                finding(
                    "model-context-lfs-pointer",
                    f"EPContext node {ctx.node!r}: {ctx.error}. onnxruntime-qnn cannot load it "
                    "('Failed to get context binary info', measured with 2.7.0 on the simulator).",
                    fix="Fetch the real file: in the model's repository run the commands below "
                    "(or download the .bin itself rather than the repository's pointer).",
                    commands=("git lfs install", "git lfs pull"),
                    evidence={"context.location": ctx.location, "context.size": ctx.size},
                    sources=(LFS_SPEC, *K.CONTEXT_SOURCES),
                )
            )
            continue
        if ctx.error:
            found.append(
                finding(
                    "model-context-unreadable",
                    f"EPContext node {ctx.node!r}: {ctx.error}.",
                    evidence={"context.location": ctx.location, "context.size": ctx.size},
                    sources=K.CONTEXT_SOURCES,
                    confidence="medium: the binary format is not documented",
                )
            )
        made_by, runs_on = (
            _version(ctx.qnn_version),
            _version(runtime.qnn_version if runtime else None),
        )
        if made_by and runs_on and made_by > runs_on:
            compatible = False
            release = _first_release_with(matrix, made_by)
            windows = bool(runtime and runtime.windows)
            commands = (
                (pip_command(python, windows, "install", f"onnxruntime-qnn=={release}"),)
                if release and python
                else ()
            )
            found.append(
                finding(
                    "model-context-newer-than-runtime",
                    f"The context binary was compiled by QNN {ctx.qnn_build or ctx.qnn_version}; "
                    f"the target's onnxruntime-qnn {runtime.onnxruntime_qnn if runtime else '?'} "
                    f"bundles QNN {runtime.qnn_version if runtime else '?'}. A QNN runtime older "
                    "than the one that compiled a context cannot load it (error 5000 on devices; "
                    "QNN_CONTEXT_ERROR_INVALID_ARGUMENT measured on the simulator).",
                    fix="Install a runtime at least as new as the compiler"
                    + (f" (onnxruntime-qnn {release} bundles QNN >= {made_by})" if release else "")
                    + ", or re-compile the model with this runtime's QAIRT "
                    f"{runtime.qnn_version if runtime else ''}.",
                    commands=commands,
                    evidence={
                        "context.qnn_build": ctx.qnn_build,
                        "runtime.qnn_version": runtime.qnn_version if runtime else None,
                        "runtime.qnn_version_source": runtime.qnn_version_source
                        if runtime
                        else None,
                    },
                    sources=(CONTEXT_5000, *K.CONTEXT_SOURCES),
                )
            )
        elif not (made_by and runs_on):
            unknown.append("the runtime's QNN version" if made_by else "the binary's QNN version")
        chip = runtime.htp_arch if runtime else None
        if ctx.htp_arch is not None and chip is not None and ctx.htp_arch != chip:
            compatible = False
            found.append(
                finding(
                    "model-context-other-arch",
                    f"The context binary targets HTP v{ctx.htp_arch} (soc {ctx.soc}); this chip "
                    f"({runtime.soc if runtime else '?'}) is v{chip}. A context binary is compiled "
                    "for one HTP arch.",
                    fix=f"Re-compile the model for this chip (QNN EP options htp_arch={chip}"
                    + (f", soc_model for {runtime.soc}" if runtime and runtime.soc else "")
                    + ").",
                    evidence={"context.htp_arch": ctx.htp_arch, "runtime.htp_arch": chip},
                    sources=(CONTEXT_5000, *K.CONTEXT_SOURCES),
                    confidence="medium: the arch is read from an undocumented binary",
                )
            )
        elif ctx.htp_arch is None or chip is None:
            unknown.append(
                "the chip's HTP arch" if ctx.htp_arch is not None else "the binary's HTP arch"
            )
    # The QNN version check is the one that decides; an unknown chip arch
    # (the simulator, another machine) is listed in not_checked instead.
    if compatible and any("QNN version" in u for u in unknown):
        compatible = None
    if unknown and compatible is not False:
        found.append(
            finding(
                "model-context-unchecked",
                f"Could not compare the context binary with this target: {', '.join(sorted(set(unknown)))} "
                "unknown"
                + (
                    " (no Qualcomm SoC identified: another machine, or the x86-64 simulator)."
                    if "the chip's HTP arch" in unknown
                    else "."
                ),
                sources=K.CONTEXT_SOURCES,
            )
        )
    first = contexts[0]
    summary = {
        "qnn_version": first.qnn_version,
        "qnn_build": first.qnn_build,
        "htp_arch": first.htp_arch,
        "soc": first.soc,
        "compatible": compatible,
        "not_checked": sorted(set(unknown)),
        "binaries": [c.to_json() for c in contexts],
    }
    return found, summary
