"""One bisect: the plan's pairs in order, each in a throwaway venv; the
next venv is made while the current pair's session runs."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .plan import Pair, make_plan
from .venvs import (
    BudgetError,
    TrackingRunner,
    VenvError,
    Workspace,
    base_interpreter,
    installed_version,
    pip_error,
    venv_python,
)

if TYPE_CHECKING:
    from ..facts.probed import Facts
    from ..matrixdata import Matrix
    from ..resolver.recommend import Profile
    from ..smoke.outcome import SmokeResult
    from ..target.interpreter import Target

Progress = Callable[[str], None]


def _quiet(_message: str) -> None:
    """No progress display."""


@dataclass(frozen=True)
class BisectOptions:
    python: str | None = None
    model: Path | None = None
    releases: str | None = None
    companions: str | None = None
    all: bool = False
    find_links: str | None = None
    backend: str = "htp"
    smoke_timeout: float = 60.0
    install_timeout: float = 600.0
    time_budget: float = 3600.0  # seconds for the whole bisect
    disk_budget_mb: int = 2048  # free space a new venv needs
    work_dir: str | None = None  # where the throwaway venvs go (default: the temp folder)
    matrix: Path | None = None
    record: bool = True  # keep the results as local evidence

    def problems(self) -> list[str]:
        found = []
        for name in ("smoke_timeout", "install_timeout", "time_budget"):
            if getattr(self, name) <= 0:
                found.append(f"--{name.replace('_', '-')} must be positive")
        if self.disk_budget_mb < 0:
            found.append("--disk-budget must not be negative")
        if self.find_links is not None and not Path(self.find_links).is_dir():
            found.append(f"--find-links {self.find_links}: no such folder")
        if self.model is not None and not self.model.is_file():
            found.append(f"--model {self.model}: no such file")
        return found


@dataclass(frozen=True)
class PairResult:
    onnxruntime_qnn: str
    onnxruntime: str | None  # the version installed (the requirement when none was)
    outcome: str  # passed | failed | not-installable | timeout
    cause: str | None
    seconds: float
    why: str  # why this pair was tried
    model: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "onnxruntime_qnn": self.onnxruntime_qnn,
            "onnxruntime": self.onnxruntime,
            "outcome": self.outcome,
            "cause": self.cause,
            "seconds": round(self.seconds, 2),
            "tried_because": self.why,
            "model": self.model,
        }


@dataclass(frozen=True)
class BisectResult:
    target: Target
    base_python: str
    profile: Profile
    results: tuple[PairResult, ...]
    skipped: tuple[str, ...]
    stopped: str | None  # why pairs were left untried (a budget), if so
    commands: tuple[str, ...]  # the winner's install commands for the target
    evidence: str | None  # where the results were kept
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def best(self) -> PairResult | None:
        return next((r for r in self.results if r.outcome == "passed"), None)

    def to_json(self) -> dict[str, Any]:
        best = self.best
        return {
            "target": self.target.to_json(),
            "base_python": self.base_python,
            "results": [r.to_json() for r in self.results],
            "best": {"onnxruntime_qnn": best.onnxruntime_qnn, "onnxruntime": best.onnxruntime}
            if best
            else None,
            "commands": list(self.commands),
            "skipped": list(self.skipped),
            "stopped": self.stopped,
            "evidence": self.evidence,
            "notes": list(self.notes),
        }


class _Prepared:
    """A venv being made in a thread while the current session runs."""

    def __init__(self, workspace: Workspace) -> None:
        self.folder: Path | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(workspace,), daemon=True)
        self.thread.start()

    def _run(self, workspace: Workspace) -> None:
        try:
            self.folder = workspace.create()
        except (VenvError, BudgetError, OSError) as exc:
            self.error = exc

    def get(self) -> Path:
        self.thread.join()
        if self.error is not None:
            raise self.error
        assert self.folder is not None
        return self.folder


def _cause(smoke: SmokeResult, folder: Path, runner: TrackingRunner, matrix: Matrix) -> str:
    """The diagnosis engine's cause for a failed session, ranked with the
    throwaway venv's own facts; the session's own reason when none matched."""
    from ..smoke.outcome import diagnose_failure
    from ..target.collect import CouldNotCheck, run_probes
    from ..target.interpreter import Target

    try:
        facts = run_probes(Target(str(venv_python(folder)), "bisect venv"), runner=runner).facts
    except CouldNotCheck:
        facts = None
    diagnosis = diagnose_failure(smoke.to_json(), facts, matrix.socs) if facts else None
    top = diagnosis.top if diagnosis is not None else None
    reason = (smoke.reason or smoke.status).splitlines()[0][:300]
    if top is None:
        return f"{smoke.status}: {reason}"
    return f"{top.signature.title} [{top.signature.id}]"


def _model_run(
    model: Path, folder: Path, runner: TrackingRunner, backend: str, timeout: float
) -> dict[str, Any]:
    from ..model.loading import ModelError, read_model
    from ..model.placement import run_placement
    from ..target.interpreter import Target

    try:
        nodes = len(read_model(str(model)).nodes)
    except ModelError as exc:
        return {"status": "not_run", "reason": str(exc)}
    placement = run_placement(
        Target(str(venv_python(folder)), "bisect venv"),
        model,
        nodes_in_file=nodes,
        backend=backend,
        timeout=timeout,
        runner=runner,
    )
    qnn = (placement.timings or {}).get("qnn") or {}
    return {
        "status": placement.status,
        "reason": placement.reason,
        "nodes_total": placement.nodes_total,
        "nodes_on_qnn": placement.nodes_on_qnn,
        "median_ms": qnn.get("median_ms") if isinstance(qnn, dict) else None,
    }


def requested(pair: Pair) -> str | None:
    """The companion a pair asked for: a version when exact, else the requirement."""
    if pair.companion and pair.companion.startswith("onnxruntime=="):
        return pair.companion.removeprefix("onnxruntime==")
    return pair.companion


def _try(
    pair: Pair,
    folder: Path,
    workspace: Workspace,
    options: BisectOptions,
    matrix: Matrix,
    started: float,
    tried: set[tuple[str, str | None]],
    prepare_next: Callable[[], None],
    progress: Progress,
) -> PairResult | None:
    """Install and run one pair in ``folder``; None when pip installed a pair
    that was tried already (two companion requirements, one version)."""
    from ..smoke import start_smoke
    from ..target.interpreter import Target

    label = f"{pair.onnxruntime_qnn} + {pair.companion or 'onnxruntime (pip chooses)'}"
    progress(f"{label}: installing")
    completed = workspace.install(folder, pair.requirements())
    companion = installed_version(folder, "onnxruntime")
    if completed.timed_out:
        return PairResult(
            pair.onnxruntime_qnn,
            companion or requested(pair),
            "timeout",
            f"pip install did not finish within {options.install_timeout:g} s",
            time.monotonic() - started,
            pair.why,
        )
    if completed.exit_code != 0:
        prepare_next()
        return PairResult(
            pair.onnxruntime_qnn,
            requested(pair),
            "not-installable",
            pip_error(completed),
            time.monotonic() - started,
            pair.why,
        )
    if (pair.onnxruntime_qnn, companion) in tried:
        prepare_next()
        return None
    tried.add((pair.onnxruntime_qnn, companion))
    progress(f"{pair.onnxruntime_qnn} + onnxruntime {companion}: smoke session")
    pending = start_smoke(
        Target(str(venv_python(folder)), "bisect venv"),
        backend=options.backend,
        timeout=options.smoke_timeout,
        runner=workspace.runner,
    )
    prepare_next()  # the next venv is made while this session runs
    smoke = pending.result()
    model: dict[str, Any] | None = None
    if smoke.status == "passed" and options.model is not None:
        progress(f"{pair.onnxruntime_qnn} + onnxruntime {companion}: model placement")
        model = _model_run(
            options.model, folder, workspace.runner, options.backend, options.smoke_timeout * 2
        )
    seconds = time.monotonic() - started
    if smoke.status == "timed_out":
        return PairResult(
            pair.onnxruntime_qnn, companion, "timeout", smoke.reason, seconds, pair.why
        )
    if smoke.status != "passed":
        cause = _cause(smoke, folder, workspace.runner, matrix)
        return PairResult(pair.onnxruntime_qnn, companion, "failed", cause, seconds, pair.why)
    if model is not None and model.get("status") != "passed":
        outcome = "timeout" if model.get("status") == "timed_out" else "failed"
        why = f"the smoke session passed; the model did not: {model.get('reason')}"
        return PairResult(pair.onnxruntime_qnn, companion, outcome, why, seconds, pair.why, model)
    return PairResult(pair.onnxruntime_qnn, companion, "passed", None, seconds, pair.why, model)


def run_pairs(
    pairs: tuple[Pair, ...],
    options: BisectOptions,
    base_python: str,
    matrix: Matrix,
    progress: Progress = _quiet,
) -> tuple[tuple[PairResult, ...], str | None]:
    """Try ``pairs`` in order (stopping at the first that passes unless
    ``options.all``); the results and why the rest was left, if it was.
    Every venv is removed before this returns or raises (KeyboardInterrupt too)."""
    runner = TrackingRunner()
    workspace = Workspace(
        base_python,
        runner=runner,
        root=options.work_dir,
        find_links=options.find_links,
        install_timeout=options.install_timeout,
        disk_budget_mb=options.disk_budget_mb,
    )
    results: list[PairResult] = []
    stopped: str | None = None
    tried: set[tuple[str, str | None]] = set()
    begun = time.monotonic()
    prepared: _Prepared | None = None
    try:
        for index, pair in enumerate(pairs):
            if time.monotonic() - begun > options.time_budget:
                stopped = (
                    f"time budget of {options.time_budget:g} s spent; "
                    f"{len(pairs) - index} pair(s) not tried (--time-budget)"
                )
                break
            progress(f"[{index + 1}/{len(pairs)}] {pair.onnxruntime_qnn}: making a venv")
            started = time.monotonic()
            try:
                folder = prepared.get() if prepared is not None else workspace.create()
            except BudgetError as exc:
                stopped = str(exc)
                break
            prepared = None
            more = index + 1 < len(pairs)

            def prepare_next(more: bool = more) -> None:
                nonlocal prepared
                if more and prepared is None:
                    prepared = _Prepared(workspace)

            result = _try(
                pair, folder, workspace, options, matrix, started, tried, prepare_next, progress
            )
            workspace.remove_later(folder)
            if result is not None:
                results.append(result)
                progress(f"{pair.onnxruntime_qnn} + {result.onnxruntime}: {result.outcome}")
                if result.outcome == "passed" and not options.all:
                    break
    finally:
        if prepared is not None:
            runner.kill_all()
            prepared.thread.join(timeout=30)
        workspace.close()
    return tuple(results), stopped


def winner_commands(
    profile: Profile, matrix: Matrix, best: PairResult | None, find_links: str | None = None
) -> tuple[str, ...]:
    """The exact commands that install the winning pair into the target (the
    resolver's command rules: uninstall what conflicts, the target's pip), from
    the wheelhouse the pair was tried from when there was one (--find-links)."""
    if best is None:
        return ()
    from packaging.version import Version

    from ..resolver.commands import install_commands
    from ..resolver.recommend import Verdict, evaluate_release

    version = Version(best.onnxruntime_qnn)
    release = next((r for r in matrix.releases.releases if r.version == version), None)
    if release is not None:
        verdict = evaluate_release(profile, release, matrix.releases, allow_prerelease=True)
    else:
        era = "plugin-2.x" if version.major >= 2 else "monolithic-1.x"
        verdict = Verdict(version, era, None, ())
    pin = f"onnxruntime=={best.onnxruntime}" if best.onnxruntime else None
    return install_commands(
        profile, dataclasses.replace(verdict, companion_pin=pin), find_links=find_links
    )


def run_bisect(
    options: BisectOptions,
    *,
    progress: Progress = _quiet,
    log: Progress = _quiet,
) -> BisectResult:
    """The whole bisect. Raises ``TargetError`` / ``CouldNotCheck`` (the
    target), ``MatrixError``, ``PlanError`` (options), ``VenvError``."""
    from ..pipeline import load_matrix
    from ..resolver.recommend import profile_from_facts
    from ..target.collect import run_probes
    from ..target.interpreter import resolve

    target = resolve(options.python)
    log(f"target: {target.python} ({target.how_chosen})")
    facts: Facts = run_probes(target).facts
    matrix = load_matrix(options.matrix)
    profile = profile_from_facts(facts, matrix)
    plan = make_plan(
        profile, matrix.releases, releases=options.releases, companions=options.companions
    )
    base = base_interpreter(target, facts)
    log(f"base interpreter: {base}; {len(plan.pairs)} pair(s) to try")
    results, stopped = run_pairs(plan.pairs, options, base, matrix, progress)
    evidence = None
    notes: list[str] = []
    if options.record and results:
        from ..evidence import store

        if not store.disabled():
            try:
                evidence = str(record_results(results, profile))
            except store.EvidenceError as exc:
                notes.append(f"results not kept as evidence: {exc}")
    best = next((r for r in results if r.outcome == "passed"), None)
    return BisectResult(
        target,
        base,
        profile,
        results,
        plan.skipped,
        stopped,
        winner_commands(
            profile, matrix, best, str(Path(options.find_links).resolve()) if options.find_links else None
        ),
        evidence,
        tuple(notes),
    )


def record_results(results: tuple[PairResult, ...], profile: Profile) -> Path:
    from ..evidence import store

    machine = store.machine_facts(profile.to_json())
    print_ = store.fingerprint(machine)
    when = store.now()
    return store.record(
        store.Record(
            onnxruntime_qnn=r.onnxruntime_qnn,
            onnxruntime=r.onnxruntime if r.outcome != "not-installable" else None,
            outcome=r.outcome,
            cause=r.cause,
            seconds=round(r.seconds, 2),
            recorded=when,
            fingerprint=print_,
            machine=machine,
            platform=profile.bucket,
        )
        for r in results
    )
