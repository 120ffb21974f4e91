"""The failure-signature catalogue (``matrix/signatures.json``) and matching.

A signature is data: patterns over log / exception text and exit codes, plus
conditions on the environment facts that tell look-alike causes apart. The
same text often has several causes; ``match`` ranks the candidates by how
many of their patterns and conditions the evidence meets.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._layout import package_dir
from .facts import Facts


class CatalogueError(Exception):
    """The catalogue is missing or malformed."""


@dataclass(frozen=True)
class Condition:
    """``fact`` is ``probe.key[.subkey...]``; the condition holds when its value
    equals ``equals`` (or is one of ``in``)."""

    fact: str
    expected: tuple[Any, ...]

    def evaluate(self, facts: Facts) -> bool | None:
        """True / False, or None when the fact is unknown."""
        probe, _, path = self.fact.partition(".")
        value: Any = facts.value(probe, path.split(".")[0]) if path else None
        for part in path.split(".")[1:]:
            value = value.get(part) if isinstance(value, Mapping) else None
        if value is None:
            return None
        return value in self.expected


@dataclass(frozen=True)
class Signature:
    id: str
    title: str
    regexes: tuple[re.Pattern[str], ...]
    exit_codes: frozenset[int]
    exception_types: frozenset[str]
    conditions: tuple[Condition, ...]
    cause: str
    fix: str
    confidence: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Match:
    signature: Signature
    score: int
    matched: tuple[str, ...]  # what matched: "log: <pattern>", "exit code 127", "fact ..."

    def to_json(self) -> dict[str, Any]:
        s = self.signature
        return {
            "id": s.id,
            "title": s.title,
            "score": self.score,
            "matched": list(self.matched),
            "cause": s.cause,
            "fix": s.fix,
            "confidence": s.confidence,
            "sources": list(s.sources),
        }


def _signature(entry: Mapping[str, Any]) -> Signature:
    patterns = entry.get("patterns") or {}
    conditions = []
    for cond in entry.get("when") or []:
        expected = cond["in"] if "in" in cond else [cond["equals"]]
        conditions.append(Condition(str(cond["fact"]), tuple(expected)))
    return Signature(
        id=str(entry["id"]),
        title=str(entry.get("title", entry["id"])),
        regexes=tuple(re.compile(p, re.IGNORECASE) for p in patterns.get("log_regex") or ()),
        exit_codes=frozenset(
            int(c) & 0xFFFFFFFF if int(c) >= 0 else int(c) for c in patterns.get("exit_codes") or ()
        ),
        exception_types=frozenset(str(t) for t in patterns.get("exception_types") or ()),
        conditions=tuple(conditions),
        cause=str(entry.get("cause", "")),
        fix=str(entry.get("fix", "")),
        confidence=str(entry.get("confidence", "field-report")),
        sources=tuple(str(s) for s in entry.get("sources") or ()),
    )


@functools.cache
def load() -> tuple[Signature, ...]:
    folder = package_dir("matrix")
    if folder is None:
        raise CatalogueError("the qnndoctor.matrix package is missing from this installation")
    path = folder / "signatures.json"
    try:
        data = json.loads(path.read_text("utf-8"))
        return tuple(_signature(e) for e in data["signatures"])
    except (OSError, ValueError, KeyError, TypeError, re.error) as exc:
        raise CatalogueError(f"{path}: {type(exc).__name__}: {exc}") from exc


def by_ids(ids: list[str]) -> list[Signature]:
    """Catalogue entries by id, in the given order; unknown ids are skipped."""
    known = {s.id: s for s in load()}
    return [known[i] for i in ids if i in known]


def match(
    text: str,
    *,
    exit_code: int | None = None,
    exception_type: str | None = None,
    facts: Facts | None = None,
    catalogue: tuple[Signature, ...] | None = None,
) -> list[Match]:
    """Candidate signatures for this evidence, best first.

    A signature needs at least one of its log patterns, exit codes or
    exception types to match; facts then raise (condition holds) or rule out
    (condition fails) a candidate. Unknown facts neither help nor hurt.
    """
    found: list[Match] = []
    code = None if exit_code is None else (exit_code & 0xFFFFFFFF if exit_code >= 0 else exit_code)
    for signature in load() if catalogue is None else catalogue:
        matched: list[str] = []
        score = 0
        for regex in signature.regexes:
            if regex.search(text):
                matched.append(f"log: {regex.pattern}")
                score += 3
        if code is not None and code in signature.exit_codes:
            matched.append(f"exit code {exit_code}")
            score += 2
        if exception_type and exception_type in signature.exception_types:
            matched.append(f"exception {exception_type}")
            score += 1
        if not matched or (score == 1 and signature.regexes):
            continue  # an exception type alone says too little
        ruled_out = False
        for condition in signature.conditions:
            verdict = condition.evaluate(facts) if facts is not None else None
            if verdict is True:
                matched.append(f"fact {condition.fact} in {list(condition.expected)}")
                score += 2
            elif verdict is False:
                ruled_out = True
        if ruled_out:
            continue
        found.append(Match(signature, score, tuple(matched)))
    found.sort(key=lambda m: (-m.score, m.signature.id))
    return found
