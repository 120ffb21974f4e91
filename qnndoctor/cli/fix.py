"""``qnndoctor fix``: check, plan, and with --yes apply, prove, or roll back.

Exit codes: 0 fixed and proven (or nothing to fix); 1 not fixed: a dry run
with steps to apply, a refusal, a failed step or proof (rolled back), an
interrupt; 2 usage.
"""

from __future__ import annotations

import argparse
import signal
from typing import Any, TextIO

from .. import exitcodes
from . import options


def add_parser(sub: Any) -> None:
    fix = sub.add_parser(
        "fix",
        help="apply the recommendation with the target's pip, prove it, roll back if it fails",
        description="Without --yes: a dry run that prints the plan and changes nothing.",
    )
    options.python(fix, "interpreter (or environment) to fix")
    fix.add_argument("--yes", action="store_true", help="apply the plan (otherwise a dry run)")
    options.json_output(fix)
    options.backend(fix, "the smoke sessions before and after")
    fix.add_argument(
        "--break-system-packages",
        action="store_true",
        help="consent to change a system-managed interpreter (PEP 668)",
    )
    fix.add_argument(
        "--step-timeout",
        type=float,
        default=900.0,
        metavar="SECONDS",
        help="time limit for each pip call (default 900)",
    )
    # Test-only: force the install step onto these requirements (a plan the
    # resolver would not make), to prove that a failing proof rolls back.
    fix.add_argument("--x-force-install", action="append", default=[], help=argparse.SUPPRESS)


def run_fix(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..render import fix as render

    if args.step_timeout <= 0:
        err.write("qnndoctor: error: --step-timeout must be positive\n")
        return exitcodes.USAGE
    result: dict[str, Any] = {"python": args.python, "dry_run": not args.yes}
    try:
        code = _run(args, err, result)
    except KeyboardInterrupt:  # before anything changed
        result.update(outcome="interrupted", state="old", message="interrupted: nothing changed")
        code = exitcodes.FINDINGS
    result["exit_code"] = code
    if args.json:
        render.json_document(result, out)
    else:
        render.text(result, out)
    return code


def _log(err: TextIO, message: str) -> None:
    err.write(f"qnndoctor: {message}\n")
    err.flush()


def _run(args: argparse.Namespace, err: TextIO, result: dict[str, Any]) -> int:
    from ..fix.checking import CheckFailed, run_check
    from ..fix.dependencies import pip_check
    from ..fix.environment import InspectFailed, inspect
    from ..fix.plan import build_plan

    _log(err, "checking the target (probes + smoke session)")
    try:
        before = run_check(
            args.python,
            smoke=True,
            backend=args.backend,
            owns_process=getattr(args, "owns_process", False),
        )
        python = str(before["target"]["python"])
        environment = inspect(python).environment
    except (CheckFailed, InspectFailed) as exc:
        result.update(outcome="could-not-check", message=f"could not check: {exc}")
        return exitcodes.FINDINGS
    result.update(python=python, before=_summary(before))
    checked = pip_check(python) if environment.has_pip else None
    if checked is not None:
        result["pip_check_before"] = checked.to_json()
    plan = build_plan(
        before,
        environment,
        break_system_packages=args.break_system_packages,
        force_install=tuple(args.x_force_install),
        problems=checked.problems if checked is not None else (),
    )
    result["plan"] = plan.to_json()
    from ..fix.apply import command

    result["plan"]["commands"] = [command(s, python) for s in plan.steps]
    if plan.refusals:
        result.update(outcome="refused", message="refused: " + " | ".join(plan.refusals))
        return exitcodes.FINDINGS
    if plan.healthy:
        result.update(outcome="nothing-to-do", message="already working: smoke session passed")
        return exitcodes.OK
    if not plan.steps:
        result.update(outcome="nothing-applicable", message="; ".join(plan.notes))
        return exitcodes.FINDINGS
    if not args.yes:
        result.update(
            outcome="dry-run",
            message="dry run: nothing was changed; run again with --yes to apply this plan",
        )
        return exitcodes.FINDINGS
    return _apply(args, err, python, plan, before, checked, result)


def _touched(python: str, plan: Any, timeout: float) -> tuple[str, ...]:
    """The plan's distributions, and the installed ones its dependency-
    resolving pip calls would replace (pip's own dry run), so the snapshot
    backs those up too. Where pip cannot say: every installed distribution."""
    from ..fix.dependencies import would_replace
    from ..fix.environment import inspect

    installed = [c for c, _v, _w in inspect(python).dists]
    names = set(plan.touched)
    for step in plan.steps:
        if step.kind not in ("install", "dependencies") or "--no-deps" in step.pip_args:
            continue
        replaced = would_replace(python, step.pip_args, installed, timeout)
        names |= set(installed) if replaced is None else replaced
    return (*plan.touched, *sorted(names - set(plan.touched)))


def _apply(
    args: argparse.Namespace,
    err: TextIO,
    python: str,
    plan: Any,
    before: dict[str, Any],
    checked: Any,
    result: dict[str, Any],
) -> int:
    from ..fix import state
    from ..fix.apply import describe, run_pip
    from ..fix.checking import CheckFailed, run_check
    from ..fix.dependencies import pip_check
    from ..fix.environment import InspectFailed
    from ..fix.proof import compare_reports, failure_text, next_step

    def echo(line: str) -> None:
        err.write(f"  pip | {line}\n")
        err.flush()

    def pip(pip_args: tuple[str, ...]) -> bool:
        return run_pip(python, pip_args, timeout=args.step_timeout, echo=echo).ok

    try:
        touched = _touched(python, plan, args.step_timeout)
        _log(err, f"recording the current state of {', '.join(touched) or 'the environment'}")
        snapshot = state.record(python, touched)
    except (OSError, InspectFailed) as exc:
        result.update(
            outcome="could-not-fix",
            state="old",
            message=f"could not record the current state, so nothing was changed: {exc}",
        )
        return exitcodes.FINDINGS
    result["snapshot"] = snapshot.to_json()
    applied: list[dict[str, Any]] = []
    result["applied"] = applied
    failure: str | None = None
    try:
        for number, step in enumerate(plan.steps, 1):
            _log(err, f"step {number}/{len(plan.steps)}: {describe(step, python)}")
            if step.kind == "remove-leftover" and step.path:
                state.move_leftover(snapshot, step.path)
                applied.append({"step": number, "ok": True})
                continue
            run = run_pip(python, step.pip_args, timeout=args.step_timeout, echo=echo)
            applied.append({"step": number, "ok": run.ok, "pip": run.to_json()})
            if not run.ok:
                failure = f"step {number} failed: " + (
                    "timed out" if run.timed_out else f"pip exited {run.exit_code}"
                )
                result["next"] = next_step(python, plan, result, failed_step=number)
                break
        if failure is None:
            _log(err, "proving it: a fresh check with the smoke session")
            try:
                after = run_check(
                    python,
                    smoke=True,
                    backend=args.backend,
                    owns_process=getattr(args, "owns_process", False),
                )
            except CheckFailed as exc:
                failure = f"the proof could not run: {exc}"
            else:
                _log(err, "proving it: pip check")
                result["proof"] = compare_reports(before, after, checked, pip_check(python))
                if result["proof"]["proven"]:
                    state.discard(snapshot)
                    result.update(outcome="fixed", state="new", message="fixed and proven")
                    return exitcodes.OK
                failure = "the proof failed: " + failure_text(after, result["proof"])
                result["next"] = next_step(python, plan, result, after=after)
    except KeyboardInterrupt:
        failure = "interrupted"
    except (OSError, InspectFailed) as exc:
        failure = f"a step could not be applied: {exc}"
    return _roll_back(err, snapshot, pip, failure, result)


def _roll_back(err: TextIO, snapshot: Any, pip: Any, failure: str, result: dict[str, Any]) -> int:
    from ..fix import state
    from ..fix.environment import InspectFailed

    _log(err, f"{failure}; rolling back to the recorded state")
    try:  # the way back must finish: Ctrl-C is ignored while it runs
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: signals stay as they are
        previous = None
    try:
        verification = state.rollback(snapshot, pip)
    except (OSError, InspectFailed) as exc:
        result.update(
            outcome="rollback-failed",
            state="unknown",
            message=f"{failure}; the rollback stopped ({exc}); the recorded files are kept in "
            f"{snapshot.backup}",
        )
        return exitcodes.FINDINGS
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    result["rollback"] = verification.to_json()
    if verification.ok:
        state.discard(snapshot)
        result.update(
            outcome="interrupted" if failure == "interrupted" else "rolled-back",
            state="old",
            message=f"{failure}; rolled back: the previous state is restored and verified "
            f"({len(snapshot.before.freeze())} distributions, "
            f"{verification.files_checked} files)",
        )
    else:
        result.update(
            outcome="rollback-failed",
            state="unknown",
            message=f"{failure}; the rollback did not restore everything (see rollback); "
            f"the recorded files are kept in {snapshot.backup}",
        )
    return exitcodes.FINDINGS


def _summary(report: dict[str, Any]) -> dict[str, Any]:
    from ..report.view import view

    doc = view(report)
    return {
        "smoke": doc.smoke.status if doc.smoke else None,
        "findings": [
            f"{f.id} ({f.severity})" for f in doc.findings if f.severity in ("error", "warning")
        ],
        "recommendation": doc.recommendation.version if doc.recommendation else None,
    }
