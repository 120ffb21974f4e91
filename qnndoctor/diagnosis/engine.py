"""Scoring: which catalogued cause explains this text, given these facts.

Evidence is weighted, not counted: each pattern carries its specificity, so
one exact error string outweighs several generic words. Text must raise a
candidate; an exit code or exception type only sharpens one the text raised.
Facts confirm a candidate (+) or, for a ``require`` condition, exclude it,
naming the fact. Ties are broken by specificity and confirmed facts, never
by catalogue order; a tie that remains is reported as a tie with the fact
that would tell the two apart.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .catalogue import Catalogue, Condition, HarmlessLine, Pattern, Signature, normalize_exit_code
from .causal import causal_order, chained_at
from .cleaning import clean_lines
from .codelines import code_spans, outside_code
from .facts import DiagnosisFacts
from .prefilter import LineGate, Literals, fold, search
from .resemblance import (
    MIN_SIMILARITY,
    SHOWN_TERMS,
    Comparison,
    Resemblance,
    compare,
    reads_like_failure,
)
from .severity import loud_match, loud_records, without_narration
from .unwrap import rejoined

MIN_SPECIFICITY = 3  # generic words alone (weight 1-2) never raise a candidate
CORROBORATION = 1  # what each further matched pattern of a candidate adds
MAX_CORROBORATIONS = 2
EXIT_CODE_WEIGHT = 3
EXCEPTION_WEIGHT = 2
FACT_WEIGHT = 3
PLATFORM_FACTS = ("os", "wsl")  # confirm which platform, not which of its causes
CLOSE_MARGIN = 4  # a runner-up this close gets "why the first one won"
WEAK_SCORE = 7  # a best match scoring below this (under "medium") gets guesses beside it
RESEMBLANCE_SCALE = 2  # a guess's score: its similarity, doubled and rounded
# Look-alikes matched within CLOSE_MARGIN of each other: the rest of the text decides,
# each adding its similarity to the entry's symptoms, rounded, at most this much.
MAX_RESEMBLANCE_BONUS = 3
# onnxruntime's Python API, after a failed session with an EP: it retries on the
# fallback providers, whose own failure then follows from the first one.
_RETRY = re.compile(r"Falling back to \[[^\]\n]*\] and retrying")


@dataclass(frozen=True)
class Evidence:
    kind: str  # pattern | context | resemblance | exit_code | exception | fact
    detail: str  # for patterns: the text that matched, as it stands in the log (hex codes read in decimal too)
    weight: int
    pattern: str | None = None
    fact: str | None = None  # for facts: the key of the condition judged

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "detail": self.detail, "weight": self.weight}
        if self.pattern is not None:
            data["pattern"] = self.pattern
        return data


def _quoted(match: re.Match[str]) -> str:
    text = " ".join(match.group(0).split())
    return repr(text if len(text) <= 100 else text[:97] + "...")


@dataclass(frozen=True)
class Candidate:
    signature: Signature
    score: int
    specificity: int  # the weight of its most specific matched pattern
    evidence: tuple[Evidence, ...]
    unknown_facts: tuple[str, ...]  # conditions nobody could judge: what would decide
    raised_by: str = "pattern"  # pattern (or a measured fact) | resemblance (a guess)
    # How much the text resembles this entry's symptoms (resemblance.Comparison.by_id);
    # None when it was not asked (no matched candidate, or a guess: see evidence).
    resemblance: float | None = None
    # Known facts that fit none of its ``support`` values for that fact (one line each):
    # not enough to exclude it, but it speaks against it.
    contradicted: tuple[str, ...] = ()
    # Where in the (harmless-free) text its most specific pattern matched:
    # which of two causes the log names first (None for a guess).
    first_at: int | None = None
    # Every pattern that raised it matched on verbose / info lines only (severity).
    quiet: bool = False

    @property
    def confirmed_facts(self) -> int:
        return sum(1 for e in self.evidence if e.kind == "fact" and e.weight > 0)

    @property
    def sure_score(self) -> int:
        """What confidence is judged on: the matched score without the +1s of
        corroborating patterns (they usually match the same line again) and
        without confirmed platform facts (every cause of that platform fits
        them: they rank look-alikes, they do not make an answer surer)."""
        patterns = [e.weight for e in self.evidence if e.kind == "pattern"]
        platform = sum(
            e.weight
            for e in self.evidence
            if e.kind == "fact" and e.fact in PLATFORM_FACTS and e.weight > 0
        )
        return self.matched_score - sum(patterns[1:]) - platform

    @property
    def matched_score(self) -> int:
        """The score without what resemblance added: what the matched
        messages, exit code and facts say."""
        return self.score - sum(e.weight for e in self.evidence if e.kind == "resemblance")

    def rank_key(self) -> tuple[int, int, int, bool, float]:
        """Score, then specificity, then confirmed facts, then a cause before a
        message that only follows from an earlier failure (``consequence``),
        then how closely the text resembles the entry's symptoms (unrounded:
        look-alikes whose rounded resemblance bonus came out equal are still
        told apart by it)."""
        return (
            self.score,
            self.specificity,
            self.confirmed_facts,
            not self.signature.consequence,
            self.resemblance or 0.0,
        )


@dataclass(frozen=True)
class Excluded:
    signature: Signature
    text_score: int
    because: str  # the contradicting fact, named


@dataclass(frozen=True)
class Verdict:
    """Ranked candidates plus what was excluded and what was ignored as harmless."""

    candidates: tuple[Candidate, ...]
    excluded: tuple[Excluded, ...]
    harmless: tuple[tuple[int, str], ...]  # (line number, harmless id)
    tie: bool
    why_first: tuple[str, ...]
    # Where the text says that what follows came from handling what preceded
    # (Python's exception-chaining lines, onnxruntime's "Falling back to [...]
    # and retrying." banner): a message first printed after one of these
    # followed from an earlier failure.
    follow_on_at: tuple[int, ...] = ()


def split_harmless(
    lines: list[str], harmless: Iterable[HarmlessLine]
) -> tuple[str, tuple[tuple[int, str], ...]]:
    """The text without known-harmless lines, and which lines were dropped."""
    rules = tuple(harmless)
    if rules:  # a rule whose literals the text lacks is not even compiled
        literals = Literals(fold("\n".join(lines)))
        rules = tuple(rule for rule in rules if rule.may_match(literals))
    gate = LineGate(lines, [h.regex for h in rules])  # which rule may match which line
    # Rule by rule, each only on the lines that hold its literals; a line goes
    # to the first rule (in catalogue order) that matches it.
    hits: dict[int, str] = {}
    for rule in rules:
        candidates = gate.lines_for((rule.regex,))
        for index in range(len(lines)) if candidates is None else sorted(candidates):
            if index not in hits and rule.regex.search(lines[index]):
                hits[index] = rule.id
    kept = [line for index, line in enumerate(lines) if index not in hits]
    dropped = tuple((index + 1, hits[index]) for index in sorted(hits))
    return "\n".join(kept), dropped


def _judge(condition: Condition, facts: DiagnosisFacts) -> tuple[bool | None, str]:
    fact = facts.facts.get(condition.fact)
    if fact is None:
        return None, condition.describe()
    verdict = condition.evaluate(fact.value)
    shown = sorted(fact.value) if isinstance(fact.value, frozenset) else fact.value
    return verdict, f"{condition.fact} is {shown!r} ({fact.source})"


def _score(
    signature: Signature,
    text: str,
    exit_code: int | None,
    exception_type: str | None,
    facts: DiagnosisFacts,
    resemblance: Resemblance | None = None,
    literals: Literals | None = None,
    code: tuple[tuple[int, int], ...] = (),
    rejoined: str | None = None,
) -> Candidate | Excluded | None:
    # Each pattern's own search, skipped when its literals are not in the text
    # (``literals``: of ``text``, shared by all signatures).
    literals = Literals(fold(text)) if literals is None else literals
    found = [
        (p, m)
        for p in signature.patterns
        if p.may_match(literals) and (m := _search(p, text, literals, rejoined))
    ]
    raising = sorted(((p, m) for p, m in found if not p.context), key=lambda pm: -pm[0].weight)
    by_text = (
        bool(raising)
        and raising[0][0].weight >= MIN_SPECIFICITY
        and not (code and _only_code(found, text, code))
    )
    by_code = exit_code is not None and exit_code in signature.exit_codes
    if resemblance is not None:
        by_text, raising = True, []
    if not (by_text or by_code):
        return None
    evidence: list[Evidence] = []
    if resemblance is not None:
        weight = max(1, round(resemblance.similarity * RESEMBLANCE_SCALE))
        evidence.append(Evidence("resemblance", resemblance.describe(), weight))
    elif by_text:
        # The most specific pattern counts in full; further ones only corroborate
        # (+1 each, at most +2), so many patterns over one line cannot outvote
        # one exact string. Context patterns (the cues that tell look-alikes
        # apart) count in full, but only beside a pattern that raised the candidate.
        for rank, (p, m) in enumerate(raising):
            weight = p.weight if rank == 0 else CORROBORATION if rank <= MAX_CORROBORATIONS else 0
            evidence.append(Evidence("pattern", _quoted(m), weight, p.text))
        evidence += [
            Evidence("context", _quoted(m), p.weight, p.text) for p, m in found if p.context
        ]
    text_score = sum(e.weight for e in evidence)
    if by_code:
        shown = f"{exit_code:#x}" if exit_code is not None and exit_code > 255 else str(exit_code)
        evidence.append(Evidence("exit_code", f"exit code {shown}", EXIT_CODE_WEIGHT))
    if exception_type and exception_type in signature.exception_types:
        evidence.append(Evidence("exception", exception_type, EXCEPTION_WEIGHT))
    unknown: list[str] = []
    required_confirmed = False
    # support conditions on one fact are alternatives ("flavours contains onnxruntime",
    # "... onnxruntime-gpu"): the fact speaks against the entry only when it fits none
    supports: dict[str, list[tuple[bool, str, Condition]]] = {}
    for condition in signature.conditions:
        verdict, detail = _judge(condition, facts)
        if verdict is not None and condition.effect == "support":
            supports.setdefault(condition.fact, []).append((verdict, detail, condition))
        if verdict is None:
            unknown.append(detail)
        elif verdict:
            # A guess is ranked by its resemblance alone: facts may exclude it, not promote it.
            weight = 0 if resemblance is not None else FACT_WEIGHT
            evidence.append(
                Evidence(
                    "fact", f"{detail} fits {condition.describe()}", weight, fact=condition.fact
                )
            )
            required_confirmed |= condition.effect == "require"
        elif condition.effect == "require":
            return Excluded(signature, text_score, f"{detail} contradicts {condition.describe()}")
    if not by_text and not required_confirmed:
        return None  # an exit code alone says too little; with a measured fact it may speak
    contradicted = _unsupported(supports)
    # A fact that fits none of the entry's supporting values counts against it as
    # much as a fitting one counts for it (a guess: it only speaks, see above).
    for line in contradicted:
        evidence.append(Evidence("fact", line, 0 if resemblance is not None else -FACT_WEIGHT))
    # Matched only on verbose / info lines (a healthy session's narration, see
    # severity): ranked after what an error line raised, dropped when nothing was.
    # One of its patterns on an error or warning line ties it to that line.
    # (Read here, for a candidate only: the lines' levels cost a look each.)
    quiet = (
        bool(raising)  # a guess has no matched pattern: it is no narration
        and not by_code
        and not any(loud_match(p.regex, text, m) for p, m in found)
    )
    return Candidate(
        signature,
        score=sum(e.weight for e in evidence),
        specificity=raising[0][0].weight if raising and by_text else 0,
        evidence=tuple(evidence),
        unknown_facts=tuple(unknown),
        raised_by="resemblance" if resemblance is not None else "pattern",
        contradicted=contradicted,
        first_at=raising[0][1].start() if raising and by_text else None,
        quiet=quiet,
    )


def _search(
    pattern: Pattern, text: str, literals: Literals, rejoined: str | None
) -> re.Match[str] | None:
    """``pattern``'s first match in ``text``, else (a text re-wrapped at a fixed
    width: ``unwrap``) in ``rejoined``, the same text with its wraps joined
    (positions are the same in both)."""
    found = search(pattern.regex, text, literals, pattern.source)
    if found is None and rejoined is not None:
        found = search(pattern.regex, rejoined, literals, pattern.source)
    return found


def _only_code(
    found: list[tuple[Pattern, re.Match[str]]], text: str, code: tuple[tuple[int, int], ...]
) -> bool:
    """Whether every matched pattern matched only on a traceback's source lines
    (``code``: ``codelines.code_spans``): a line of the program's own code says
    what it called, not what failed, so it never raises a candidate by itself.
    Beside a match outside the code (a context cue too) it counts as before."""
    return all(outside_code(p.regex, text, m, code) is None for p, m in found)


def _unsupported(supports: dict[str, list[tuple[bool, str, Condition]]]) -> tuple[str, ...]:
    """For each fact whose known value fits none of the entry's ``support``
    values, one line naming the fact and the values it does not fit."""
    return tuple(
        f"{judged[0][1]} does not fit " + " or ".join(c.describe() for _, _, c in judged)
        for judged in supports.values()
        if not any(verdict for verdict, _, _ in judged)
    )


_LABELS = {
    "pattern": "matched",
    "context": "cue",
    "resemblance": "",
    "fact": "fact",
    "exit_code": "",
    "exception": "exception",
}


def _why_first(first: Candidate, second: Candidate) -> tuple[str, ...]:
    """What the winner had that the runner-up did not (only asked when close)."""
    if first.raised_by == "resemblance":
        return (
            f"its symptoms resemble the text more closely (score {first.score} against {second.score})",
        )
    reasons: list[str] = []
    theirs = {e.detail for e in second.evidence}
    extra = [e for e in first.evidence if e.detail not in theirs and e.weight > 0]
    for item in extra[:3]:
        reasons.append(f"{_LABELS[item.kind]} {item.detail} (+{item.weight})".strip())
    # What speaks against the runner-up decides as much as what speaks for the winner.
    ours = {e.detail for e in first.evidence}
    for item in [e for e in second.evidence if e.weight < 0 and e.detail not in ours][:1]:
        reasons.append(f"against {second.signature.id}: {item.detail} ({item.weight})")
    if first.score == second.score:
        if first.specificity != second.specificity:
            reasons.append(
                f"same score; its most specific pattern weighs {first.specificity} against {second.specificity}"
            )
        elif first.confirmed_facts != second.confirmed_facts:
            reasons.append(
                f"same score; {first.confirmed_facts} confirmed facts against {second.confirmed_facts}"
            )
        elif (first.resemblance or 0.0) != (second.resemblance or 0.0):
            reasons.append(
                f"same score; the text resembles its symptoms more"
                f" (similarity {first.resemblance or 0.0:.2f} against {second.resemblance or 0.0:.2f})"
            )
    if not reasons:
        reasons.append(f"score {first.score} against {second.score}")
    return tuple(reasons)


def _told_apart(candidates: list[Candidate], compared: Comparison) -> list[Candidate]:
    """Each matched candidate with how much the text resembles its symptoms;
    those within CLOSE_MARGIN of the best (look-alikes: often the same
    message, shared by several causes) also gain that similarity, rounded
    and capped, so what else the text says decides between them."""
    similarity = compared.by_id()
    best = max(c.score for c in candidates)
    close = sum(1 for c in candidates if best - c.score <= CLOSE_MARGIN)
    told: list[Candidate] = []
    for c in candidates:
        found = similarity.get(c.signature.id)
        value = found.similarity if found else 0.0
        bonus = min(MAX_RESEMBLANCE_BONUS, round(value))
        if found and close > 1 and best - c.score <= CLOSE_MARGIN and bonus > 0:
            words = ", ".join(repr(t) for t in found.shared[:SHOWN_TERMS])
            detail = (
                f"the text shares rare words with its symptoms ({words}; similarity {value:.1f})"
            )
            c = dataclasses.replace(
                c,
                score=c.score + bonus,
                evidence=(*c.evidence, Evidence("resemblance", detail, bonus)),
            )
        told.append(dataclasses.replace(c, resemblance=value))
    return told


def _weak_and_doubtful(candidate: Candidate) -> bool:
    """A matched candidate under WEAK_SCORE that a known fact speaks against, or
    whose reports the text resembles less than a guess would need: a guess
    that resembles the text more may rank before it (measured by leave-one-out)."""
    if candidate.raised_by == "resemblance" or candidate.matched_score >= WEAK_SCORE:
        return False
    resemblance = candidate.resemblance
    return bool(candidate.contradicted) or (
        resemblance is not None and resemblance < MIN_SIMILARITY
    )


def root_cause_first(
    candidates: list[Candidate], when: Callable[[int], tuple[int, int]]
) -> int | None:
    """The index of the candidate to rank before a first candidate whose
    message only follows from an earlier failure (``consequence`` in the
    catalogue): the best-ranked cause raised by its own message (neither a
    guess, nor weak and doubtful, nor a consequence itself) that happened
    before the consequence's message (``when``: ``causal_order`` of the
    text). None: the order stands."""
    if not candidates:
        return None
    top = candidates[0]
    if not top.signature.consequence or top.first_at is None:
        return None
    for index, c in enumerate(candidates[1:], 1):
        if c.signature.consequence or c.raised_by == "resemblance" or _weak_and_doubtful(c):
            continue
        if (
            c.first_at is not None
            and when(c.first_at) < when(top.first_at)
            and c.matched_score >= WEAK_SCORE
        ):
            return index
    return None


def _root_cause_order(
    candidates: list[Candidate], when: Callable[[int], tuple[int, int]]
) -> tuple[list[Candidate], Candidate, bool] | None:
    """When ``root_cause_first`` finds one: the new order (that cause, the
    other causes that happened before the consequence, then the rest), the
    consequence it moved ahead of, and whether the next cause ties with it."""
    root = root_cause_first(candidates, when)
    if root is None:
        return None
    first, consequence = candidates[root], candidates[0]
    limit = consequence.first_at
    assert limit is not None  # root_cause_first checked it
    earlier = [
        c
        for c in candidates
        if c is not first
        and not c.signature.consequence
        and c.first_at is not None
        and when(c.first_at) < when(limit)
    ]
    rest = [c for c in candidates if c is not first and c not in earlier]
    tie = bool(earlier) and earlier[0].rank_key() == first.rank_key()
    return [first, *earlier, *rest], consequence, tie


def score(
    text: str,
    catalogue: Catalogue,
    *,
    exit_code: int | None = None,
    exception_type: str | None = None,
    facts: DiagnosisFacts | None = None,
    resemblance: bool = True,
) -> Verdict:
    """``resemblance=False`` never guesses: only matched messages (and
    measured facts) raise candidates."""
    facts = facts or DiagnosisFacts()
    active, harmless = split_harmless(clean_lines(text), catalogue.harmless)
    code = None if exit_code is None else normalize_exit_code(exit_code)
    candidates: list[Candidate] = []
    excluded: list[Excluded] = []
    literals = Literals(fold(active))
    quoted_code = code_spans(active)  # a traceback's source lines: they raise nothing alone
    joined = rejoined(active)  # a text re-wrapped at a fixed width, its wraps joined
    for signature in catalogue.signatures:
        result = _score(
            signature, active, code, exception_type, facts, None, literals, quoted_code, joined
        )
        if isinstance(result, Candidate):
            candidates.append(result)
        elif isinstance(result, Excluded):
            excluded.append(result)
    if not any(not c.quiet for c in candidates):
        # Narration alone: a verbose session explains its choices (a node left
        # to the CPU EP) whether or not anything failed. It is no error.
        candidates = []
    # What reads like a failure and what the text resembles come from its loud
    # records, not from a verbose session's narration of every node it placed
    # (severity); read once, and only when a comparison or a guess needs it.
    weak = max((c.matched_score for c in candidates), default=0) < WEAK_SCORE
    guessing = resemblance and weak
    read = active if joined is None else joined  # a wrapped message's words together
    loud = loud_records(read) if candidates or guessing else ""
    worded = without_narration(read, loud)
    compared = compare(worded, catalogue.signatures) if candidates else None
    if compared is not None:
        candidates = _told_apart(candidates, compared)
    if guessing and reads_like_failure(loud):
        # Nothing (or only something weak) matched: offer what the text resembles,
        # as a guess (facts still judge).
        raised = {c.signature.id for c in candidates}
        if compared is None:
            compared = compare(worded, catalogue.signatures)
        for similar in compared.offered():
            if similar.signature.id in raised:
                continue
            result = _score(similar.signature, "", None, exception_type, facts, similar)
            if isinstance(result, Candidate):
                candidates.append(result)
            elif isinstance(result, Excluded):
                excluded.append(result)
    # A guess never outranks a matched message, unless that match is weak and
    # doubtful itself: then it is ranked among the guesses. id only makes the
    # order of true ties reproducible; a true tie is flagged.
    candidates.sort(
        key=lambda c: (
            c.raised_by == "resemblance" or _weak_and_doubtful(c),
            c.quiet,
            *(-k for k in c.rank_key()),
            c.signature.id,
        )
    )
    chained = chained_at(active)
    reordered = _root_cause_order(candidates, causal_order(active, chained))
    why: tuple[str, ...] = ()
    if reordered is not None:
        candidates, consequence, tie = reordered
        why = (
            f"its failure comes earlier than {consequence.signature.id}'s, "
            "which only follows from an earlier failure",
        )
    else:
        tie = len(candidates) > 1 and candidates[0].rank_key() == candidates[1].rank_key()
        if len(candidates) > 1 and candidates[0].score - candidates[1].score <= CLOSE_MARGIN:
            why = () if tie else _why_first(candidates[0], candidates[1])
    excluded.sort(key=lambda e: (-e.text_score, e.signature.id))
    follow_on = sorted([*chained, *(m.start() for m in _RETRY.finditer(active))])
    return Verdict(tuple(candidates), tuple(excluded), harmless, tie, why, tuple(follow_on))
