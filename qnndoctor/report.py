"""The report: everything one ``check`` found, in the JSON contract's shape."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from . import exitcodes
from .facts import Facts
from .findings import Finding, Severity, SkippedCheck
from .matrixdata import Matrix
from .pipeline import envelope
from .rules import evaluate
from .target import Target


@dataclass(frozen=True)
class Report:
    target: Target
    facts: Facts
    findings: tuple[Finding, ...]
    skipped: tuple[SkippedCheck, ...]
    created: str
    matrix_source: str
    # The smoke session is a fact like the probes' (rules read it); the JSON
    # contract shows it at the top level as ``smoke`` instead of in ``facts``.
    recommendation: Mapping[str, Any] | None = None

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), default=None)

    def exit_code(self, fail_on: Severity) -> int:
        worst = self.worst()
        return exitcodes.FINDINGS if worst is not None and worst >= fail_on else exitcodes.OK

    def to_json(self) -> dict[str, Any]:
        return {
            **envelope(),
            "created": self.created,
            "target": self.target.to_json(),
            "facts": {k: v for k, v in self.facts.to_json().items() if k != "smoke"},
            "findings": [f.to_json() for f in self.findings],
            "skipped_checks": [s.to_json() for s in self.skipped],
            "matrix": {"source": self.matrix_source},
            "smoke": dict(smoke.values) if (smoke := self.facts.probe("smoke")) else None,
            "recommendation": dict(self.recommendation)
            if self.recommendation is not None
            else None,
            "inventory": _inventory(self.facts),
        }


def _inventory(facts: Facts) -> list[dict[str, Any]]:
    from .inventory import inventory

    return inventory(facts)


def recommendation_for(
    facts: Facts, matrix: Matrix, *, allow_prerelease: bool = False
) -> dict[str, Any]:
    """The resolver's answer for these facts; an error entry, never an exception."""
    from .resolver import profile_from_facts, recommend

    try:
        if not facts.ok("interpreter"):
            return {"status": "could-not-check", "reason": "the interpreter probe failed"}
        profile = profile_from_facts(facts, matrix)
        answer = recommend(profile, matrix.releases, allow_prerelease=allow_prerelease).to_json()
    except Exception as exc:  # the report must survive a resolver bug
        return {"status": "error", "reason": f"{type(exc).__name__}: {exc}"}
    answer["matrix"] = matrix.releases_source
    return answer


def with_smoke_diagnosis(facts: Facts, matrix: Matrix) -> Facts:
    """The diagnosis of a failed smoke session, made once, here, with the
    catalogue in use (a saved ticket gets today's)."""
    from .smoke import diagnose_failure

    smoke = facts.probe("smoke")
    if smoke is None or smoke.get("status") in (None, "passed", "not_run"):
        return facts
    diagnosis = diagnose_failure(smoke.values, facts, matrix.socs)
    if diagnosis is None:
        values = {**smoke.values, "signatures": [], "diagnosis": []}
    else:
        summary = diagnosis.to_json()["candidates"][:3]
        values = {
            **smoke.values,
            "signatures": diagnosis.ids(),
            "diagnosis": [
                {
                    **{k: c[k] for k in ("id", "title", "confidence", "score", "cause", "fix")},
                    "evidence": [e["detail"] for e in c["evidence"]],
                    **({"tell_apart": c["tell_apart"]} if "tell_apart" in c else {}),
                }
                for c in summary
            ],
        }
    return facts.with_probe(replace(smoke, values=values))


def build(target: Target, facts: Facts, matrix: Matrix) -> Report:
    """Diagnose: a pure function of the facts and the matrix (plus a clock)."""
    facts = with_smoke_diagnosis(facts, matrix)
    evaluation = evaluate(facts, matrix)
    recommendation = recommendation_for(facts, matrix)
    from .consistency import align_fixes

    return Report(
        target=target,
        facts=facts,
        findings=align_fixes(evaluation.findings, recommendation),
        skipped=evaluation.skipped,
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        matrix_source=matrix.source,
        recommendation=recommendation,
    )
