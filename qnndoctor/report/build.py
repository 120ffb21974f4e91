"""The report: everything one ``check`` found, in the JSON contract's shape."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .. import exitcodes
from ..facts.probed import Facts
from ..rules.findings import Finding, Severity, SkippedCheck
from ..target.interpreter import Target
from .envelope import envelope, now

if TYPE_CHECKING:  # the rules and the matrix are imported when a report is built, not read
    from ..matrixdata import Matrix
    from ..rules.declare import Rule
    from ..rules.registry import Evaluation


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
    from ..resolver.recommend import profile_from_facts, recommend

    try:
        if not facts.ok("interpreter"):
            return {"status": "could-not-check", "reason": "the interpreter probe failed"}
        profile = profile_from_facts(facts, matrix)
        from ..evidence import present

        records = []
        if present():  # what bisect measured here (a stat when there is nothing)
            from ..evidence.apply import records_for, with_evidence

            records = records_for(facts, matrix)
            matrix, _notes = with_evidence(matrix, records)
        answer = recommend(profile, matrix.releases, allow_prerelease=allow_prerelease).to_json()
        if records:
            from ..evidence.apply import evidence_json

            answer["local_evidence"] = evidence_json(records)
            said = " ".join(answer["notes"])
            answer["notes"] += [r.sentence() for r in records if r.sentence() not in said]
    except Exception as exc:  # the report must survive a resolver bug
        return {"status": "error", "reason": f"{type(exc).__name__}: {exc}"}
    answer["matrix"] = matrix.releases_source
    return answer


def with_smoke_diagnosis(facts: Facts, matrix: Matrix) -> Facts:
    """The diagnosis of a failed smoke session, made once, here, with the
    catalogue in use (a saved ticket gets today's)."""
    from ..smoke.outcome import diagnose_failure

    smoke = facts.probe("smoke")
    if smoke is None or smoke.get("status") in (None, "passed", "not_run"):
        return facts
    diagnosis = diagnose_failure(smoke.values, facts, matrix.socs)
    if diagnosis is None:
        values = {**smoke.values, "signatures": [], "diagnosis": [], "qnn_error_codes": []}
    else:
        summary = diagnosis.to_json()["candidates"][:3]
        values = {
            **smoke.values,
            "signatures": diagnosis.ids(),
            "qnn_error_codes": [m.to_json() for m in diagnosis.codes],
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


@dataclass(frozen=True)
class Prepared:
    """The part of a report that the smoke session cannot change, made from
    the probes' facts while the session still runs: every rule that neither
    needs the ``smoke`` fact nor reads all facts (``needs=()``), in rule
    order (None: evaluated later), and the resolver's recommendation."""

    rules: tuple[Rule, ...]
    parts: tuple[Evaluation | None, ...]
    recommendation: dict[str, Any]


def _after_smoke(registered: Rule) -> bool:
    return "smoke" in registered.needs or not registered.needs


def prepare(facts: Facts, matrix: Matrix) -> Prepared:
    """Diagnose what does not depend on the smoke session (``facts`` without it)."""
    from ..rules.registry import all_rules, evaluate

    rules = all_rules()
    parts = tuple(
        None if _after_smoke(registered) else evaluate(facts, matrix, (registered,))
        for registered in rules
    )
    return Prepared(rules, parts, recommendation_for(facts, matrix))


def _evaluate(facts: Facts, matrix: Matrix, prepared: Prepared | None) -> Evaluation:
    """``evaluate`` over every rule, taking the prepared rules' results as
    they are (same order, same sort: the same findings as one pass)."""
    from ..rules.registry import Evaluation, all_rules, evaluate

    if prepared is None or prepared.rules != all_rules():
        return evaluate(facts, matrix)
    findings: list[Finding] = []
    skipped: list[SkippedCheck] = []
    for registered, part in zip(prepared.rules, prepared.parts, strict=True):
        done = part if part is not None else evaluate(facts, matrix, (registered,))
        findings.extend(done.findings)
        skipped.extend(done.skipped)
    findings.sort(key=lambda f: (-f.severity, f.id))
    return Evaluation(tuple(findings), tuple(skipped))


def build(target: Target, facts: Facts, matrix: Matrix, prepared: Prepared | None = None) -> Report:
    """Diagnose: a pure function of the facts and the matrix (plus a clock).
    ``prepared`` (from :func:`prepare` on the same facts without the smoke
    session) is reused instead of evaluated again."""
    facts = with_smoke_diagnosis(facts, matrix)
    evaluation = _evaluate(facts, matrix, prepared)
    if prepared is not None:
        recommendation: dict[str, Any] = prepared.recommendation
    else:
        recommendation = recommendation_for(facts, matrix)
    from ..resolver.consistency import PipTarget
    from ..resolver.fixes import make_commands

    return Report(
        target=target,
        facts=facts,
        findings=make_commands(evaluation.findings, recommendation, PipTarget.of(facts)),
        skipped=evaluation.skipped,
        created=now(),
        matrix_source=matrix.source,
        recommendation=recommendation,
    )
