"""Rules: pure functions from facts to findings.

One module per topic; each rule declares the probes it needs and the finding
kinds it may emit. ``evaluate`` runs every rule in isolation: a rule whose
probe failed, or that raises, becomes a skipped check with its reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..facts.probed import Facts
from ..matrixdata import Matrix
from .declare import RULES, Rule
from .findings import Finding, FindingKind, SkippedCheck


def all_rules() -> tuple[Rule, ...]:
    """Every registered rule (importing the rule modules registers them)."""
    from . import coverage, installs, interpreter, paths, pip, platform, qnn, release, smoke  # noqa: F401 - registers rules

    return tuple(RULES)


def all_finding_kinds() -> tuple[FindingKind, ...]:
    seen: dict[str, FindingKind] = {}
    for registered in all_rules():
        for kind in registered.emits:
            seen.setdefault(kind.id, kind)
    return tuple(seen.values())


@dataclass(frozen=True)
class Evaluation:
    findings: tuple[Finding, ...]
    skipped: tuple[SkippedCheck, ...]


def evaluate(facts: Facts, matrix: Matrix, rules: Iterable[Rule] | None = None) -> Evaluation:
    findings: list[Finding] = []
    skipped: list[SkippedCheck] = []
    for registered in all_rules() if rules is None else rules:
        ids = tuple(kind.id for kind in registered.emits)
        missing = [name for name in registered.needs if not facts.ok(name)]
        if missing:
            reasons = []
            for name in missing:
                probe = facts.probe(name)
                reasons.append(f"{name}: {probe.error_text() if probe else 'not run'}")
            skipped.append(
                SkippedCheck(registered.name, "probe failed: " + "; ".join(reasons), ids)
            )
            continue
        try:
            findings.extend(registered.check(facts, matrix))
        except Exception as exc:
            skipped.append(
                SkippedCheck(registered.name, f"rule error: {type(exc).__name__}: {exc}", ids)
            )
    findings.sort(key=lambda f: (-f.severity, f.id))
    return Evaluation(tuple(findings), tuple(skipped))
