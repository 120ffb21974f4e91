"""The Python API: ``qnndoctor.check``, ``recommend``, ``explain``, ``ensure_ready``.

For installers and applications. Every call runs the same pipeline as the
command line (:mod:`qnndoctor.pipeline`) and returns frozen values; nothing
is printed. The JSON form of a :class:`Report` is the report contract of
``qnndoctor check --json`` (docs/report-schema.md): ``report.to_dict()``
equals what the CLI prints for the same environment.

Stability: the names exported from ``qnndoctor`` and the fields of these
dataclasses only gain members within a major version.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Finding:
    """One problem found: ``severity`` is ``error``, ``warning`` or ``info``;
    ``cause`` says why it happens; ``fix`` what to do (empty when nothing),
    ``commands`` the exact commands (shown, never run)."""

    id: str
    severity: str
    title: str
    cause: str
    fix: str
    commands: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Finding:
        fix = data.get("fix") or {}
        return cls(
            id=str(data.get("id")),
            severity=str(data.get("severity")),
            title=str(data.get("title")),
            cause=str(data.get("explanation") or ""),
            fix=str(fix.get("text") or ""),
            commands=tuple(str(c) for c in fix.get("commands") or ()),
        )


@dataclass(frozen=True)
class Recommendation:
    """The resolver's answer: ``status`` ``ok`` (install ``version`` with
    ``commands``), ``nothing-fits``, ``could-not-check`` or ``error``
    (``reason``). ``details`` is the full JSON object (ruled-out releases and why)."""

    status: str
    version: str | None
    commands: tuple[str, ...]
    reason: str | None
    details: Mapping[str, Any]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Recommendation:
        version = data.get("version")
        reason = data.get("reason")
        return cls(
            status=str(data.get("status")),
            version=str(version) if version is not None else None,
            commands=tuple(str(c) for c in data.get("commands") or ()),
            reason=str(reason) if reason is not None else None,
            details=data,
        )


@dataclass(frozen=True)
class Smoke:
    """The isolated smoke session: ``status`` ``passed``, ``not_run`` or a
    failure status (docs/report-schema.md); ``reason`` why, when not passed."""

    status: str
    backend: str | None
    reason: str | None
    duration_s: float | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Smoke:
        duration = data.get("duration_s")
        reason = data.get("reason")
        backend = data.get("backend")
        return cls(
            status=str(data.get("status")),
            backend=str(backend) if backend is not None else None,
            reason=str(reason) if reason is not None else None,
            duration_s=float(duration) if isinstance(duration, (int, float)) else None,
        )


@dataclass(frozen=True)
class Report:
    """The result of one check. ``ok``: nothing at or above ``fail_on`` and
    the check could run; ``exit_code`` is the CLI's (0, 1, 2 bad input, 3 could
    not check); ``error`` says why nothing could be checked."""

    ok: bool
    exit_code: int
    findings: tuple[Finding, ...]
    recommendation: Recommendation | None
    smoke: Smoke | None
    error: str | None
    document: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The report contract's JSON object (a deep copy)."""
        copied: dict[str, Any] = json.loads(json.dumps(self.document))
        return copied

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.document, indent=indent, ensure_ascii=False)

    @property
    def top(self) -> Finding | None:
        """The most severe finding (findings are sorted errors first)."""
        return self.findings[0] if self.findings else None

    @classmethod
    def from_document(cls, document: Mapping[str, Any], exit_code: int) -> Report:
        error = document.get("error")
        smoke = document.get("smoke")
        recommendation = document.get("recommendation")
        return cls(
            ok=exit_code == 0,
            exit_code=exit_code,
            findings=tuple(Finding.from_json(f) for f in document.get("findings") or ()),
            recommendation=Recommendation.from_json(recommendation)
            if isinstance(recommendation, Mapping)
            else None,
            smoke=Smoke.from_json(smoke) if isinstance(smoke, Mapping) else None,
            error=str(error.get("message")) if isinstance(error, Mapping) else None,
            document=document,
        )


class NotReady(RuntimeError):
    """The environment cannot run onnxruntime-qnn as asked; the message is
    the top finding and its fix."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.findings = report.findings
        super().__init__(_verdict(report))


def _verdict(report: Report) -> str:
    if report.error is not None:
        return f"could not check: {report.error}"
    top = report.top
    if top is None:
        return "ok"
    text = f"{top.title} ({top.id})"
    if top.fix:
        text += f"; fix: {top.fix}"
    if top.commands:  # all of them, in order (the first may be `-m ensurepip` or `pushd`)
        text += " " + "; then ".join(top.commands)
    return text


def check(
    python: PathLike | None = None,
    *,
    smoke: bool = True,
    backend: str = "htp",
    matrix: PathLike | None = None,
    redact: bool = True,
    timeout: float = 60.0,
    smoke_timeout: float = 60.0,
    fail_on: str = "error",
) -> Report:
    """Check an interpreter (None: this one; a path to a python or an
    environment folder; "auto": the active venv/conda env) exactly like
    ``qnndoctor check``. A machine that cannot be checked is a report with
    ``exit_code`` 3 and ``error``; bad arguments raise ``ValueError``."""
    if fail_on not in ("error", "warning"):
        raise ValueError(f"fail_on must be 'error' or 'warning', not {fail_on!r}")
    from . import headstart

    # The children start before the pipeline's modules are imported (the
    # pipeline claims them only if they are exactly its own; headstart.py).
    spec = os.fspath(python) if python is not None else None
    headstart.begin_check(spec, smoke=smoke, backend=backend, timeout=timeout)
    try:
        from .pipeline import CheckOptions, run_check

        options = CheckOptions(
            python=spec,
            smoke=smoke,
            backend=backend,
            smoke_timeout=smoke_timeout,
            timeout=timeout,
            matrix=Path(matrix) if matrix is not None else None,
            redact=redact,
        )
        if options.problems():
            raise ValueError("; ".join(options.problems()))
        outcome = run_check(options)
    finally:
        headstart.discard()  # whatever this check did not claim
    return Report.from_document(outcome.document, outcome.exit_code(fail_on))


@dataclass(frozen=True)
class OptionFinding:
    """A silent mistake in options about to be given to the QNN EP: the
    ``qnndoctor lint`` rule ``code`` (QNDnnn), what is wrong, the fix, and
    the evidence the rule stands on (docs/lint.md)."""

    code: str
    title: str
    message: str
    fix: str
    evidence: tuple[str, ...]


def _installed_qnn_version() -> str | None:
    from importlib import metadata

    try:
        return metadata.version("onnxruntime-qnn")
    except metadata.PackageNotFoundError:
        return None


def check_options(
    provider_options: Mapping[str, Any] | None = None,
    session_config: Mapping[str, Any] | None = None,
    run_config: Mapping[str, Any] | None = None,
    *,
    onnxruntime_qnn: str | None = None,
    soc: str | None = None,
    probe: bool = False,
) -> list[OptionFinding]:
    """The QNN provider options, session-config and run-config entries an
    application is about to use, judged by the rules of ``qnndoctor lint``
    for ``onnxruntime_qnn`` (None: the version installed here, else the
    newest known). The chip: ``soc`` names it (``"SM8650"``), or ``probe=True``
    identifies this machine's with check's probes (about a second); then
    htp_arch / soc_model that do not match it and FP16 precision on an HTP
    older than v73 are findings too. Nothing is imported from onnxruntime."""
    from .lint.rules import BY_CODE
    from .lint.runtime import Machine, machine_of_soc
    from .lint.runtime import check_options as judge_options

    machine: Machine | None = None
    if soc is not None:
        machine = machine_of_soc(soc)
        if machine is None:
            raise ValueError(f"unknown SoC {soc!r} (not in qnndoctor's SoC table)")
    elif probe:
        machine = _probed_machine(None)
    found = judge_options(
        provider_options,
        session_config,
        run_config,
        onnxruntime_qnn=onnxruntime_qnn or _installed_qnn_version(),
        machine=machine,
    )
    return [
        OptionFinding(f.code, BY_CODE[f.code].title, f.message, f.fix, BY_CODE[f.code].evidence) for f in found
    ]


def _probed_machine(facts_json: Mapping[str, Any] | None) -> Any:
    from .facts.probed import Facts
    from .lint.runtime import machine_from_facts

    if facts_json is None:
        from .target.collect import run_probes
        from .target.interpreter import resolve

        return machine_from_facts(run_probes(resolve(None)).facts)
    return machine_from_facts(Facts.from_json(facts_json))


def ensure_ready(
    python: PathLike | None = None,
    *,
    smoke: bool = True,
    backend: str = "htp",
    timeout: float = 60.0,
    smoke_timeout: float = 60.0,
    model: PathLike | None = None,
    min_npu_share: float | None = None,
    model_timeout: float = 120.0,
    provider_options: Mapping[str, Any] | None = None,
    session_config: Mapping[str, Any] | None = None,
) -> Report:
    """The report if the environment is fit (no error finding, the smoke
    session passed unless ``smoke=False``); else raises :class:`NotReady`.
    Runs a real check: with the smoke session about 1.2 to 1.3 times what
    importing onnxruntime and running one tiny model session costs, about a
    third of that without when these facts were judged before, half the
    first time (docs/cli.md, "Python API").

    With ``model``, that model must then load here too (``qnndoctor model``,
    its placement run in a contained child); with ``min_npu_share`` (0 to 1)
    at least that share of its nodes must run on QNN, else ``NotReady``
    carries the same findings as ``qnndoctor model --min-npu-share``
    (each node that left QNN and why). Returns the environment's report.
    """
    if min_npu_share is not None and model is None:
        raise ValueError("min_npu_share needs a model")
    report = check(
        python,
        smoke=smoke,
        backend=backend,
        timeout=timeout,
        smoke_timeout=smoke_timeout,
        redact=False,  # stays in the process; the caller decides what leaves the machine
    )
    if not report.ok:
        raise NotReady(report)
    if provider_options is not None or session_config is not None:
        option_findings = _options_on_report(report, provider_options, session_config)
        if option_findings:
            from dataclasses import replace

            raise NotReady(replace(report, ok=False, exit_code=1, findings=option_findings + report.findings))
    if model is not None:
        _ensure_model(python, model, backend, min_npu_share, model_timeout)
    return report


def _ensure_model(
    python: PathLike | None,
    model: PathLike,
    backend: str,
    min_npu_share: float | None,
    timeout: float,
) -> None:
    from .model.diagnose import diagnose
    from .model.options import ModelOptions

    options = ModelOptions(
        path=os.fspath(model),
        python=os.fspath(python) if python is not None else None,
        backend=backend,
        runs=1,
        timeout=timeout,
        min_npu_share=min_npu_share,
    )
    problem = options.problem()
    if problem:
        raise ValueError(problem.replace("--min-npu-share", "min_npu_share"))
    document, code = diagnose(options)
    if code == 0:
        return
    error = document.get("error")
    raise NotReady(
        Report(
            ok=False,
            exit_code=code,
            findings=tuple(Finding.from_json(f) for f in document.get("findings") or ()),
            recommendation=None,
            smoke=None,
            error=str(error.get("message")) if isinstance(error, dict) else None,
            document=document,
        )
    )


def _options_on_report(
    report: Report, provider_options: Mapping[str, Any] | None, session_config: Mapping[str, Any] | None
) -> tuple[Finding, ...]:
    """The options judged for the onnxruntime-qnn and the chip the report found."""
    from .lint.runtime import check_options as judge_options

    facts_json = report.document.get("facts")
    version = None
    machine = None
    if isinstance(facts_json, Mapping):
        from .facts.probed import Facts

        facts = Facts.from_json(facts_json)
        machine = _probed_machine(facts_json)
        for dist in facts.value("installs", "distributions", []) or []:
            if isinstance(dist, Mapping) and dist.get("canonical_name") == "onnxruntime-qnn" and dist.get("version"):
                version = str(dist["version"])
    from .lint.rules import BY_CODE

    found = judge_options(provider_options, session_config, None, onnxruntime_qnn=version, machine=machine)
    return tuple(
        Finding(f.code, "error", BY_CODE[f.code].title, f.message, f.fix) for f in found
    )


def recommend(
    python: PathLike | None = None,
    *,
    platform: str | None = None,
    python_version: str | None = None,
    soc: str | None = None,
    matrix: PathLike | None = None,
    pre: bool = False,
    timeout: float = 60.0,
) -> Recommendation:
    """The onnxruntime-qnn version to install, and why newer ones are ruled
    out: for an interpreter here (probed, no smoke session), or, with
    ``platform`` and ``python_version``, for a machine described by values
    (``qnndoctor recommend --platform ...``). Raises ``ValueError`` for
    values that describe no machine or an unusable matrix, ``RuntimeError``
    when the interpreter cannot be probed."""
    from . import matrixdata

    try:
        used = matrixdata.load(None, Path(matrix) if matrix is not None else None)
    except matrixdata.MatrixError as exc:
        raise ValueError(f"matrix: {exc}") from exc
    if platform is not None or python_version is not None:
        from .resolver.whatif import what_if

        if platform is None or python_version is None:
            raise ValueError("platform and python_version go together (what-if mode)")
        answer = what_if(platform, python_version, soc=soc, allow_prerelease=pre, matrix=used)
        return Recommendation.from_json(answer)
    from .pipeline import recommend_here
    from .target.collect import CouldNotCheck
    from .target.interpreter import TargetError

    try:
        _target, answer = recommend_here(
            os.fspath(python) if python else None, used, allow_prerelease=pre, timeout=timeout
        )
    except (TargetError, CouldNotCheck) as exc:
        raise RuntimeError(f"could not check: {exc}") from exc
    return Recommendation.from_json(answer)


@dataclass(frozen=True)
class Cause:
    """One candidate cause of an error text, from the failure-signature catalogue."""

    id: str
    title: str
    confidence: str  # high / medium / low
    cause: str
    fix: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Explanation:
    """``qnndoctor explain``'s answer: candidates, most likely first."""

    causes: tuple[Cause, ...]
    document: Mapping[str, Any]

    @property
    def top(self) -> Cause | None:
        return self.causes[0] if self.causes else None

    def to_dict(self) -> dict[str, Any]:
        copied: dict[str, Any] = json.loads(json.dumps(self.document))
        return copied


def explain(
    text: str,
    *,
    facts: Report | Mapping[str, Any] | PathLike | None = None,
    exit_code: int | None = None,
) -> Explanation:
    """Name the cause of an error message or log (the diagnosis engine of
    ``qnndoctor explain``). ``facts``: a :class:`Report` of the machine, its
    JSON form, or a saved ``check --json`` file; they rank the candidates.
    Raises ``ValueError`` for facts that are not a usable report."""
    from .diagnosis import from_report_facts
    from .diagnosis.document import explain as explain_document
    from .matrixdata import load_socs
    from .target.ticket import from_document, read_document

    socs = load_socs()
    diagnosis_facts = None
    if facts is not None:
        if isinstance(facts, Report):
            data: Any = facts.document
            name = "the report given"
        elif isinstance(facts, Mapping):
            data, name = facts, "the report given"
        else:
            name = os.fspath(facts)
            data = read_document(name)
        _target, probe_facts = from_document(data, name)
        diagnosis_facts = from_report_facts(probe_facts, name, socs)
    document = explain_document(text, exit_code, diagnosis_facts, socs=socs)
    causes = tuple(
        Cause(
            id=str(c["id"]),
            title=str(c["title"]),
            confidence=str(c["confidence"]),
            cause=str(c["cause"]),
            fix=str(c["fix"]),
            sources=tuple(str(s) for s in c.get("sources") or ()),
        )
        for c in document["candidates"]
    )
    return Explanation(causes, document)
