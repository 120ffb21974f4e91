"""The check pipeline, once: choose target -> probe -> smoke -> matrix -> rules
-> resolver -> report -> redaction.

Every front door calls :func:`run_check`: the ``check`` sub-command (which
only parses arguments and renders), the Python API (``qnndoctor.check`` and
``qnndoctor.ensure_ready`` in :mod:`qnndoctor.api`), the tests and the
benchmarks. Nothing here writes to a stream: progress goes to an optional
``log`` callable and warnings come back as values, so a library caller
never sees text it did not ask for.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import exitcodes
from .children.launch import BACKENDS
from .report.envelope import envelope
from .report.envelope import now as now  # report documents made elsewhere (fleet) take it from here

if TYPE_CHECKING:
    from collections.abc import MutableMapping

    from .children.containment import Containment
    from .children.runner import Runner
    from .facts.probed import Facts, ProbeFacts
    from .matrixdata import Matrix
    from .report.build import Report
    from .report.memo import ToRemember
    from .smoke import PendingSmoke
    from .smoke.outcome import SmokeResult
    from .target.interpreter import Target

Log = Callable[[str], None]


def _quiet(_message: str) -> None:
    """The default log: a library call prints nothing."""


@dataclass(frozen=True)
class CheckOptions:
    """What one check does; the defaults are ``qnndoctor check``'s."""

    python: str | None = None  # a path, an environment folder, "auto", or None (this one)
    smoke: bool = True
    backend: str = "htp"
    smoke_timeout: float = 60.0
    timeout: float = 60.0  # the probe program's time limit
    deep: bool = False
    matrix: Path | None = None  # a releases.json or matrix folder instead of the installed one
    redact: bool = True
    from_report: str | None = None  # re-diagnose a saved JSON report instead of probing
    # True only when qnndoctor owns the process (its console command): it may
    # then adopt the smoke session's orphans (containment.py says why).
    owns_process: bool = False

    def problems(self) -> list[str]:
        """Option values no check can run with (a usage error, exit code 2)."""
        found = []
        if self.timeout <= 0 or self.smoke_timeout <= 0:
            found.append("--timeout and --smoke-timeout must be positive")
        if self.backend not in BACKENDS:
            found.append(f"backend must be htp, gpu or cpu, not {self.backend!r}")
        return found


@dataclass(frozen=True)
class CheckError:
    """Why nothing could be checked: ``kind`` ``bad-input`` (exit code 2) or
    ``could-not-check`` (exit code 3)."""

    kind: str
    message: str
    detail: str = ""  # e.g. the probe program's stderr tail (shown with --verbose)

    @property
    def exit_code(self) -> int:
        return exitcodes.USAGE if self.kind == "bad-input" else exitcodes.COULD_NOT_CHECK


@dataclass(frozen=True)
class CheckOutcome:
    """One run of the pipeline: the report (None when nothing could be
    checked), its JSON document (redacted when asked), the warnings the user
    should see (which matrix, and why), and the error if any."""

    document: dict[str, Any]
    report: Report | None
    error: CheckError | None = None
    warnings: tuple[str, ...] = field(default=())

    def exit_code(self, fail_on: str = "error") -> int:
        """0 healthy, 1 findings at or above ``fail_on``, 2 bad input, 3 could not check."""
        if self.error is not None or self.report is None:
            return self.error.exit_code if self.error is not None else exitcodes.COULD_NOT_CHECK
        from .rules.findings import Severity

        return self.report.exit_code(Severity.parse(fail_on))


def error_document(
    message: str, target: dict[str, str] | None, kind: str = "could-not-check", redact: bool = True
) -> dict[str, Any]:
    """The report of a run that could check nothing (same contract, empty facts)."""
    document = {
        **envelope(),
        "target": target,
        "error": {"kind": kind, "message": message},
        "facts": {},
        "findings": [],
        "skipped_checks": [],
        "smoke": None,
        "recommendation": None,
    }
    if not redact:  # an error message names paths too: redacted like any report
        return document
    from .report.redact import redact_document

    return redact_document(document)


def smoke_facts(result: SmokeResult) -> ProbeFacts:
    """The smoke session's result as a fact (rules read it like a probe's)."""
    from .facts.probed import ProbeFacts

    return ProbeFacts(
        "smoke",
        "ok",
        values=result.to_json(),
        sources={"status": "qnndoctor smoke child (qnndoctor/smoke/child.py) in the target"},
    )


class _Recording:
    """A containment that also remembers the child's pid, so that a session
    whose probes failed can be ended at once instead of waited for."""

    def __init__(self, inner: Containment, pids: list[int]) -> None:
        self.inner, self.pids = inner, pids

    def prepare(self, env: MutableMapping[str, str]) -> None:
        self.inner.prepare(env)

    def resume(self, marker: str, started: float) -> None:
        self.inner.resume(marker, started)

    def attach(self, pid: int, handle: Any) -> None:
        self.pids.append(pid)
        self.inner.attach(pid, handle)

    def sweep(self) -> tuple[int, ...]:
        return self.inner.sweep()


class _Smoke:
    """The smoke session, started before the probe program and running beside
    it (it needs none of the probes' results to start; only whether
    onnxruntime-qnn is installed decides, afterwards, if its result is used)."""

    def __init__(
        self, options: CheckOptions, target: Target, runner: Runner | None, log: Log
    ) -> None:
        self.options, self.target, self.runner, self.log = options, target, runner, log
        self.thread: threading.Thread | None = None
        self.result: SmokeResult | None = None
        self.failure: BaseException | None = None
        self.pids: list[int] = []
        if runner is None:  # the real runner: remember the child to be able to end it
            from .children.containment import for_this_platform
            from .children.runner import SubprocessRunner

            self.runner = SubprocessRunner(
                containment=lambda: _Recording(for_this_platform(), self.pids)
            )

    def start(self) -> None:
        """Start the child now, in this thread, then wait for it in another
        (the runner of each child marks it as its own, so neither run's sweep
        takes the other's child). A runner other than the real one runs the
        whole session in that thread."""
        if not self.options.smoke:
            return
        from .children.runner import SubprocessRunner
        from .smoke import start_smoke

        options = self.options
        self.log(
            f"smoke session on the {options.backend} backend (timeout {options.smoke_timeout:g} s)"
        )
        if not isinstance(self.runner, SubprocessRunner):
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()
            return
        try:
            pending = start_smoke(
                self.target,
                backend=options.backend,
                timeout=options.smoke_timeout,
                runner=self.runner,
            )
        except BaseException as exc:  # re-raised in the caller's thread by finish()
            self.failure = exc
            return
        if pending.pid is not None:
            self.pids.append(pending.pid)
        self.thread = threading.Thread(target=self._wait, args=(pending,), daemon=True)
        self.thread.start()

    def _wait(self, pending: PendingSmoke) -> None:
        try:
            self.result = pending.result()
        except BaseException as exc:  # re-raised in the caller's thread by finish()
            self.failure = exc

    def _run(self) -> None:
        from .facts.probed import Facts
        from .smoke import run_smoke

        try:  # no facts yet: run_smoke runs it; finish() decides whether it counts
            self.result = run_smoke(
                self.target,
                Facts({}),
                backend=self.options.backend,
                timeout=self.options.smoke_timeout,
                runner=self.runner,
            )
        except BaseException as exc:  # re-raised in the caller's thread by finish()
            self.failure = exc

    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def cancel(self) -> None:
        """The probes failed: the session's result cannot count, end it now
        (nothing to do once ``finish`` returned)."""
        from .children.runner import kill_tree

        killed: set[int] = set()
        while self.thread is not None and self.thread.is_alive():
            for pid in set(self.pids) - killed:  # a child attached late is ended too
                kill_tree(pid)
                killed.add(pid)
            self.thread.join(0.05)
        # Its result and any failure are dropped: the probes' error is the one to report.

    def finish(self, facts: Facts | None) -> SmokeResult:
        """The session's result for these probe facts (waits for the child)."""
        from .smoke.outcome import not_run, reason_not_to_run

        if self.thread is not None:
            self.thread.join()
        if self.failure is not None:
            raise self.failure
        if not self.options.smoke:
            return not_run("skipped with --no-smoke", self.options.backend)
        why_not = reason_not_to_run(facts) if facts is not None else None
        if why_not or self.result is None:
            return not_run(why_not or "the smoke session did not run", self.options.backend)
        self.log(f"smoke session: {self.result.status} in {self.result.duration_s} s")
        return self.result


class _Warmup:
    """Work done in a thread while the probe program runs in the target: the
    imports that diagnosis and rendering need, and the decisions memo's
    fingerprint (memo.py). When the memo probably knows the answer, only
    what renders it is imported."""

    def __init__(self, options: CheckOptions, output_format: str) -> None:
        self.options, self.output_format = options, output_format
        self.fingerprint: list[Any] | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def memo_applies(self) -> bool:
        from .report import memo

        return not (self.options.smoke or self.options.from_report) and memo.enabled()

    def _run(self) -> None:
        decided_before = False
        try:
            if self.memo_applies():
                from .report import memo
                from .target.interpreter import resolve

                self.fingerprint = memo.read_fingerprint(self.options.matrix)
                python = resolve(self.options.python).python
                decided_before = memo.probably_known(python, self.fingerprint)
        except Exception:  # only a guess: the check asks the memo itself later
            decided_before = False
        _warm_imports(self.output_format, decided_before)

    def wait(self) -> list[Any] | None:
        """Wait for the thread (if it was started); the memo's fingerprint."""
        if self.thread.is_alive():
            self.thread.join()
        return self.fingerprint


def _warm_imports(output_format: str, decided_before: bool) -> None:
    """Import what diagnosis and rendering need while the probe program runs
    in the target: the child's run and our imports overlap. When the
    decisions are probably remembered, only what renders them."""
    try:
        from . import render
        from .smoke import outcome  # noqa: F401 - imported ahead, while the child runs

        render.renderer(output_format)
        if output_format == "text":
            import rich.console  # noqa: F401
        if decided_before:
            return
        from . import matrixdata
        from .rules import registry as rules

        rules.all_rules()
        matrixdata.load_or_empty()
    except Exception:  # only a head start: the real imports below report any error
        pass


def load_matrix(path: Path | None) -> Matrix:
    """The matrix in use: ``path`` if given (``MatrixError`` if unusable), else
    the user's updated one or the bundled one."""
    from . import matrixdata

    return matrixdata.load(None, path) if path else matrixdata.load_or_empty()


def collect(
    options: CheckOptions,
    *,
    runner: Runner | None = None,
    log: Log = _quiet,
    on_start: Callable[[], None] | None = None,
) -> tuple[Target, Facts, dict[str, Any] | None, _Smoke | None]:
    """Target, facts, the saved report they came from (None for a live
    probe of the chosen interpreter) and the smoke session, still running
    (None for a saved report): ``_Smoke.finish`` adds its result. Raises
    what :func:`run_check` turns into errors."""
    if options.from_report:
        from .target.ticket import from_document, read_document

        saved = read_document(options.from_report)
        target, facts = from_document(saved, options.from_report)
        return target, facts, saved, None
    from .target.interpreter import resolve

    target = resolve(options.python, runner=runner)
    log(f"target: {target.python} ({target.how_chosen})")
    if options.smoke and options.owns_process:
        from .children.containment import become_subreaper

        become_subreaper()
    smoke = _Smoke(options, target, runner, log)
    smoke.start()  # the longest part: first (each run's sweep spares the other's child)
    try:
        from .target.collect import run_probes

        probe_run = run_probes(
            target, runner=runner, timeout=options.timeout, deep=options.deep, on_start=on_start
        )
    except BaseException:
        smoke.cancel()  # never leave the session running behind an error
        raise
    finally:
        from . import headstart

        headstart.discard()  # a child the console started that this check did not need
        for event in headstart.events:
            log(event)
        headstart.events.clear()
    log(f"probes finished in {probe_run.completed.duration_s:.3f} s")
    return target, probe_run.facts, None, smoke


def recommend_here(
    python: str | None,
    matrix: Matrix,
    *,
    allow_prerelease: bool = False,
    timeout: float = 60.0,
    runner: Runner | None = None,
) -> tuple[Target, dict[str, Any]]:
    """Probe an interpreter (no smoke session) and ask the resolver: the one
    orchestration behind ``qnndoctor recommend`` and ``qnndoctor.recommend``.
    Raises ``TargetError`` / ``CouldNotCheck`` when the interpreter cannot be
    probed."""
    from .report.build import recommendation_for
    from .target.collect import run_probes
    from .target.interpreter import resolve

    target = resolve(python, runner=runner)
    facts = run_probes(target, runner=runner, timeout=timeout).facts
    return target, recommendation_for(facts, matrix, allow_prerelease=allow_prerelease)


def _failed_target(options: CheckOptions) -> dict[str, str] | None:
    if options.python is None and options.from_report:
        return None
    import sys

    return {
        "python": str(options.python or sys.executable),
        "how_chosen": "--python" if options.python else "default",
    }


def run_check(
    options: CheckOptions,
    *,
    runner: Runner | None = None,
    log: Log = _quiet,
    output_format: str = "json",
) -> CheckOutcome:
    """The whole check; never raises for a machine it cannot check or a bad
    ticket (those are :class:`CheckError` values). ``output_format`` only
    picks which renderer to import early, while the target is probed."""
    problems = options.problems()
    if problems:
        message = "; ".join(problems)
        return CheckOutcome(
            error_document(message, None, "bad-input", options.redact),
            None,
            CheckError("bad-input", message),
        )
    warm = _Warmup(options, output_format)
    started = time.perf_counter()
    try:
        target, facts, saved, smoke = collect(
            options, runner=runner, log=log, on_start=warm.thread.start
        )
    except Exception as exc:
        return _failed(options, exc)
    try:
        fingerprint = warm.wait()
        to_remember = None
        if warm.memo_applies() and saved is None and smoke is not None:
            from .report import memo

            facts = facts.with_probe(smoke_facts(smoke.finish(facts)))  # "not run"
            smoke = None
            remembered = memo.recall(options.matrix, target, facts, fingerprint, log)
            if isinstance(remembered, memo.Remembered):
                document = finished(remembered.document, options.redact)
                return CheckOutcome(document, remembered.report, None, remembered.warnings)
            to_remember = remembered
        return _diagnose(options, target, facts, saved, smoke, log, started, to_remember)
    finally:
        if smoke is not None:
            smoke.cancel()  # does something only when the session was not finished


def _failed(options: CheckOptions, exc: Exception) -> CheckOutcome:
    """The outcome of a check that could not collect its facts; re-raises
    what is not a bad ticket or a machine that could not be checked."""
    from .target.collect import CouldNotCheck  # imported only now: the smoke child starts first
    from .target.interpreter import TargetError
    from .target.ticket import SavedReportError

    if isinstance(exc, SavedReportError):  # bad input, not a machine that could not be checked
        error = CheckError("bad-input", f"--from-report: {exc}")
        return CheckOutcome(
            error_document(str(exc), None, "bad-input", options.redact), None, error
        )
    if not isinstance(exc, (TargetError, CouldNotCheck, OSError, ValueError)):
        raise exc
    detail = ""
    if isinstance(exc, CouldNotCheck) and exc.completed is not None:
        detail = exc.completed.stderr_text()[-4000:]
    document = error_document(str(exc), _failed_target(options), redact=options.redact)
    return CheckOutcome(document, None, CheckError("could-not-check", str(exc), detail))


def _diagnose(
    options: CheckOptions,
    target: Target,
    facts: Facts,
    saved: dict[str, Any] | None,
    smoke: _Smoke | None,
    log: Log,
    started: float,
    to_remember: ToRemember | None = None,
) -> CheckOutcome:
    """Matrix -> rules -> resolver -> report -> redaction. What the smoke
    session cannot change is diagnosed while it still runs; then its result
    is added and only what reads it is evaluated."""
    from . import matrixdata
    from .report.build import build, prepare
    from .report.ticket_changes import changes, matrix_identity

    try:
        matrix = load_matrix(options.matrix)
    except matrixdata.MatrixError as exc:
        message = f"--matrix: {exc}"
        document = error_document(message, target.to_json(), redact=options.redact)
        return CheckOutcome(document, None, CheckError("could-not-check", message))
    from .matrixdata import parsed_cache  # (imported by the first load of the matrix)

    for event in parsed_cache.events:  # a cache that could not help: --verbose
        log(event)
    warnings = [] if matrix.socs else [f"matrix {matrix.source}"]
    warnings += [f"matrix: {note}" for note in matrix.notes]  # which matrix, and why
    identity = matrix_identity(matrix)
    prepared = None
    if smoke is not None:
        if smoke.running():
            prepared = prepare(facts, matrix)
        try:
            result = smoke.finish(facts)
        except Exception as exc:
            return _failed(options, exc)
        facts = facts.with_probe(smoke_facts(result))
    report = build(target, facts, matrix, prepared)
    log(f"diagnosed in {time.perf_counter() - started:.3f} s")
    document = report.to_json()
    document["matrix"].update(releases=matrix.releases_source, notes=list(matrix.notes), **identity)
    if saved is not None:
        document["changes_since_report"] = changes(saved, document)
    if to_remember is not None:
        to_remember.remember(document, report, warnings, log)
    return CheckOutcome(finished(document, options.redact), report, None, tuple(warnings))


def finished(document: dict[str, Any], redact: bool) -> dict[str, Any]:
    """A report's document as it leaves the pipeline: redacted unless asked not to."""
    if not redact:
        document["redacted"] = False
        return document
    from .report.redact import redact_document

    return redact_document(document)
