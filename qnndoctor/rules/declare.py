"""How a rule is declared: the ``rule`` decorator records each rule function
with the probes it needs and the finding kinds it may emit. Below the rule
modules and the registry that runs them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..facts.probed import Facts
from ..matrixdata import Matrix
from .findings import Finding, FindingKind

RuleFunction = Callable[[Facts, Matrix], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    name: str
    needs: tuple[str, ...]
    emits: tuple[FindingKind, ...]
    check: RuleFunction


RULES: list[Rule] = []


def rule(
    *, needs: tuple[str, ...], emits: tuple[FindingKind, ...]
) -> Callable[[RuleFunction], RuleFunction]:
    """Register a rule function."""

    def register(function: RuleFunction) -> RuleFunction:
        RULES.append(Rule(function.__name__, needs, emits, function))
        return function

    return register
