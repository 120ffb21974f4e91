"""The diagnosis engine: which known cause explains a failure text.

One interface for ``qnndoctor explain``, the smoke session's failure
classification and re-diagnosed tickets::

    diagnose(text, exit_code=..., exception_type=..., facts=..., socs=...) -> Diagnosis

``facts`` are measured facts (a saved ticket's or a probe's); facts stated in
the text itself fill the keys they leave open. A pure function of its
inputs and the catalogue, so a saved ticket is re-diagnosed the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..matrixdata import Soc
from . import contradict, qnn_codes, stage, textfacts
from .catalogue import Catalogue, CatalogueError, Signature, load
from .cleaning import clean_lines
from .compact import Compacted, compact
from .engine import CLOSE_MARGIN, Candidate, Excluded, Verdict, score
from .facts import DiagnosisFacts, Fact, from_report_facts, merge
from .logfile import readable
from .resemblance import MIN_SIMILARITY, failure_lines
from .severity import level

__all__ = [
    "Candidate",
    "Catalogue",
    "CatalogueError",
    "Diagnosis",
    "DiagnosisFacts",
    "Excluded",
    "Fact",
    "Signature",
    "diagnose",
    "from_report_facts",
    "load",
]

DECIDE_HINT = "run `qnndoctor check` on the affected machine to decide"


def _competes(other: Candidate, candidate: Candidate, follow_on_at: tuple[int, ...] = ()) -> bool:
    """Whether ``other`` speaks against ``candidate``'s confidence: a
    consequence (a follow-on message) never does against a cause, nor does a
    message first printed after a follow-on marker (``Verdict.follow_on_at``:
    Python's retry banner or exception chaining) that ``candidate``'s precedes:
    it only happened because the earlier attempt failed. Nor does a candidate
    raised by verbose narration alone (``quiet``) against one an error line raised."""
    if other.signature.consequence and not candidate.signature.consequence:
        return False
    if other.quiet and not candidate.quiet:
        return False  # a verbose session's narration does not doubt an error line's cause
    start, end = candidate.first_at, other.first_at
    if start is None or end is None:
        return True
    return not any(start < at < end for at in follow_on_at)


# The earlier failure a consequence follows is an error line of the runtime's
# own log, tagged at error level (severity.level: onnxruntime's [E:...], QNN's
# <E> or [ ERROR ], logcat's E): a wrapper's summary or an issue title that says
# "failed" is not one.
_ERROR_LEVELS = frozenset("EF")
_NOT_THE_FAILURE = re.compile(
    r"\[W:onnxruntime|<W>|\bWARNING\b|UserWarning|^\s*Traceback \(most recent call last\)"
)


@dataclass(frozen=True)
class Diagnosis:
    verdict: Verdict
    facts: DiagnosisFacts
    # The QNN API error codes the text names, matched by a cause or not.
    codes: tuple[qnn_codes.Mention, ...] = ()
    # When the first candidate only follows from an earlier failure that no
    # catalogued cause matched: that failure's line (number, text).
    earlier: tuple[int, str] | None = None
    # The text as it was read (compact: a long log's repeated lines blanked).
    read: Compacted | None = None
    # What the text's own wording says that can contradict a cause (contradict.said).
    wording: tuple[tuple[str, str], ...] = ()

    @property
    def candidates(self) -> tuple[Candidate, ...]:
        return self.verdict.candidates

    @property
    def top(self) -> Candidate | None:
        return self.verdict.candidates[0] if self.verdict.candidates else None

    def ids(self) -> list[str]:
        return [c.signature.id for c in self.verdict.candidates]

    def failure_lines(self, text: str | None = None) -> tuple[tuple[int, str], ...]:
        """The lines of ``text`` (the one diagnosed; by default as it was read)
        that read like the failure, harmless lines left out: what to show when
        no cause matched."""
        if text is None or (self.read is not None and self.read.compacted):
            text = self.read.text if self.read is not None else ""
        skip = frozenset(number for number, _id in self.verdict.harmless)
        return failure_lines(clean_lines(text), skip)

    def where(self, *, from_entry: bool = True) -> stage.Where:
        """Where it failed (stage, component, the line that shows it, the
        experiment that would settle it): the first answer's catalogue entry
        says the stage and component (``matrix/stages.json``), shown with its
        own matched line; with no answer (or one that table does not place),
        the answer's own line, else the lines that read like the failure, are
        read for them (diagnosis.stage). ``from_entry=False``: the lines are
        read even when there is an answer (what the benchmark compares)."""
        lines = clean_lines(self.read.text if self.read is not None else "")
        top = self.top
        own = self._own_lines(lines)
        skip = frozenset(number for number, _id in self.verdict.harmless)
        # the lines that read like the failure: read only when the answer's own are none
        # (a long log's pass over every line)
        shown = own or list(failure_lines(lines, skip, first=len(lines)))
        model = stage.model_named(lines, shown[0][0] if shown else None)
        if top is not None and from_entry:
            placed = stage.of_entry(top.signature.id, shown, model)
            if placed is not None:
                return placed
        found_where = stage.where(own, model)
        if found_where.line is not None:
            return found_where
        failing = list(failure_lines(lines, skip, first=len(lines))) if own else shown
        return stage.where(failing, model)

    def _own_lines(self, lines: list[str]) -> list[tuple[int, str]]:
        """The lines (number, text) where the first answer's own patterns
        matched first, in order: none for a guess (raised by resemblance)."""
        top = self.top
        if top is None or top.raised_by == "resemblance":
            return []
        joined = "\n".join(lines)
        shown: list[tuple[int, str]] = []
        for pattern in top.signature.patterns:
            if not pattern.context and (found := pattern.regex.search(joined)):
                number = joined.count("\n", 0, found.start()) + 1
                shown.append((number, lines[number - 1]))
        return sorted(shown)

    def doubt(self, rank: int) -> str | None:
        """Why a matched candidate, however high it scored, is only a weak answer
        (None when nothing speaks against it): measured by leave-one-out, these
        are the first answers that were most often wrong."""
        candidate = self.verdict.candidates[rank]
        if candidate.raised_by == "resemblance":
            return None
        if rank == 0 and self.earlier is not None:
            return (
                "its message only follows from an earlier failure that no catalogued cause "
                f"matched (line {self.earlier[0]})"
            )
        if candidate.contradicted:
            return f"a known fact speaks against it: {candidate.contradicted[0]}"
        if against := contradict.contradiction(candidate.signature, dict(self.wording)):
            return f"the error's own words speak against it: {against}"
        if candidate.resemblance is None:
            return None
        if candidate.resemblance < MIN_SIMILARITY:
            return "its message matched, but little else in the text resembles this cause's reports"
        if rank == 0 and len(self.verdict.candidates) > 1:
            second = self.verdict.candidates[1]
            if (
                _competes(second, candidate, self.verdict.follow_on_at)
                and second.raised_by != "resemblance"
                and candidate.score - second.score <= CLOSE_MARGIN
                and (second.resemblance or 0.0) > candidate.resemblance
            ):
                return f"{second.signature.id} is close behind and resembles the text more"
        return None

    def confidence(self, rank: int) -> str:
        """How sure the ranking is of this candidate: high / medium / low."""
        candidate = self.verdict.candidates[rank]
        if (rank == 0 and self.verdict.tie) or candidate.raised_by == "resemblance":
            return "low"
        if self.doubt(rank):
            return "low"
        # What resemblance added only orders look-alikes: it never makes an answer surer.
        others = [
            c.matched_score
            for i, c in enumerate(self.verdict.candidates)
            if i != rank and _competes(c, candidate, self.verdict.follow_on_at)
        ]
        margin = candidate.matched_score - max(others, default=0)
        sure = candidate.sure_score
        if candidate.matched_score >= 12 and margin > CLOSE_MARGIN:
            return "high"
        if sure >= 7 and margin > 0:
            return "medium"
        return "low"

    def tell_apart(self, rank: int) -> str:
        """The one fact that would separate this runner-up from the top candidate:
        a fact one of them is conditioned on that nobody measured, else the first
        of the runner-up's own distinguishing facts (from the catalogue), which
        says what the reader should look for."""
        top, other = self.verdict.candidates[0], self.verdict.candidates[rank]
        for unknown in (*other.unknown_facts, *top.unknown_facts):
            return f"{unknown} would decide ({DECIDE_HINT})"
        for fact in other.signature.distinguishing:
            if fact not in top.signature.distinguishing and not fact.startswith("look-alike"):
                return f"it is this one if {fact} ({DECIDE_HINT})"
        return DECIDE_HINT

    def to_json(self) -> dict[str, Any]:
        os_name = self.facts.value("os")
        known = {f.key: f.value for f in self.facts}
        candidates = []
        for rank, c in enumerate(self.verdict.candidates):
            s = c.signature
            item: dict[str, Any] = {
                "id": s.id,
                "title": s.title,
                "score": c.score,
                "specificity": c.specificity,
                "confidence": self.confidence(rank),
                "doubt": self.doubt(rank),
                "raised_by": c.raised_by,
                # matched on verbose / info lines only: what a session narrated
                "verbose_only": c.quiet,
                "consequence": s.consequence,
                "catalogue_confidence": s.confidence,
                "cause": s.cause,
                "fix": s.fix_for(os_name, known),
                "evidence": [e.to_json() for e in c.evidence],
                "undecided_facts": list(c.unknown_facts),
                "sources": list(s.sources),
            }
            if rank > 0:
                item["tell_apart"] = self.tell_apart(rank)
            candidates.append(item)
        return {
            "candidates": candidates,
            "tie": self.verdict.tie,
            "why_first": list(self.verdict.why_first),
            "excluded": [
                {"id": e.signature.id, "title": e.signature.title, "because": e.because}
                for e in self.verdict.excluded
            ],
            "harmless_lines": [
                {"line": number, "id": harmless_id} for number, harmless_id in self.verdict.harmless
            ],
            "facts": self.facts.to_json(),
            "qnn_error_codes": [m.to_json() for m in self.codes],
            "follows_from": (
                {"line": self.earlier[0], "text": self.earlier[1]} if self.earlier else None
            ),
            "where": self.where().to_json(),
        }


def diagnose(
    text: str | Compacted,
    *,
    exit_code: int | None = None,
    exception_type: str | None = None,
    facts: DiagnosisFacts | None = None,
    socs: tuple[Soc, ...] = (),
    catalogue: Catalogue | None = None,
    text_facts: bool = True,
    resemblance: bool = True,
) -> Diagnosis:
    """Rank the catalogued causes of ``text``. Raises CatalogueError when the
    installed catalogue is unusable and none is given. ``text_facts=False``
    ignores what the text says about its machine (matching on the text alone).
    ``resemblance=False`` offers no guess when no catalogued message matched.
    A long text is read once per distinct line (``compact``); a line that does
    not read as text is not read at all (``logfile.readable``)."""
    read = text if isinstance(text, Compacted) else compact(readable(text))
    text = read.text
    lines = clean_lines(text)  # once, for the text's facts, its QNN codes, its earlier failure
    stated = textfacts.from_lines(lines, socs) if text_facts else DiagnosisFacts()
    used = merge(facts, stated) if facts is not None else stated
    verdict = score(
        text,
        catalogue if catalogue is not None else load(),
        exit_code=exit_code,
        exception_type=exception_type,
        facts=used,
        resemblance=resemblance,
    )
    wording = tuple(contradict.said(text).items()) if verdict.candidates else ()
    return Diagnosis(
        verdict, used, qnn_codes.find(lines), _follows_from(verdict, lines), read, wording
    )


def _follows_from(verdict: Verdict, lines: list[str]) -> tuple[int, str] | None:
    """When the first candidate only follows from an earlier failure
    (``consequence``) and no catalogued cause was found before it: the first
    error line of the runtime's own log that is not the consequence's own
    message, the one to act on (line number, text)."""
    if not verdict.candidates or not verdict.candidates[0].signature.consequence:
        return None
    own = [p.regex for p in verdict.candidates[0].signature.patterns if not p.context]
    skip = frozenset(number for number, _id in verdict.harmless)
    for number, line in failure_lines(lines, skip):
        if (
            level(line) in _ERROR_LEVELS
            and not _NOT_THE_FAILURE.search(line)
            and not any(regex.search(line) for regex in own)
        ):
            return number, line
    return None
