"""The last resort: which catalogued cause a text *resembles*, when no
catalogued error message matched it.

Users often paste prose ("the NPU is never used"), a message worded a little
differently from the one a pattern expects, or a message from a neighbouring
tool. Patterns miss those, and "no known cause" helps nobody. This module
compares the distinctive words of the text with each entry's title, real
symptom examples and cause (TF-IDF over the catalogue: a word that many
entries share counts little), and offers at most a few entries that share
enough rare words. The choices were measured by leave-one-out on the
development reports (bench/bench_generalisation.py, docs/diagnosis.md).

A resemblance is a guess and is always shown as one: its candidates carry
``raised_by == "resemblance"``, the words they share, and low confidence; the
facts still confirm or exclude them as they do for matched patterns. It only
runs when no pattern raised anything strong and the text reads like a failure, so a
healthy log stays without candidates; beside a weak match (engine.WEAK_SCORE)
it adds guesses that rank after every matched candidate. When messages did
match, ``Comparison.by_id`` (the same measure, no threshold, no gate) tells
look-alike candidates apart and backs their confidence (engine._told_apart,
Diagnosis.doubt); it raises nothing by itself.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass

from . import prefilter
from .catalogue import Signature
from .severity import QUIET, record_levels

MIN_SIMILARITY = 1.0  # below this, the shared words are coincidence (see docs/diagnosis.md)
MIN_SHARED = 2  # one shared word is never a resemblance
MAX_OFFERED = 3
# Words on a line that reads like a failure (or one line either side) count 1.5 times.
FAILURE_LINE_BOOST = 1.5
FAILURE_LINE_REACH = 1
CAUSE_WEIGHT = 1.0  # the cause's words count as much as the title's (0.5 and 1.5 measured worse)
SHOWN_TERMS = 5

# Words that appear in nearly every report about this stack, or in any prose:
# they say nothing about which cause it is.
_COMMON_WORDS = """
    the and for with from that this are was were not but you your have has had can could would
    should will into when then than there their them they its our out use using used any all
    one two get got error errors failed failure fail fails exception traceback line file files
    python import model models run running runs session create created creating onnxruntime
    onnx qnn ort npu version versions install installed also just only same what which while
    does did done how why work works working issue issues problem please help need want try
    tried trying after before still more some here like see seems
"""
_STOP = frozenset(_COMMON_WORDS.split())
_TOKEN = re.compile(r"[a-z][a-z0-9_]{2,}|\d{3,}")
# A path says which file, not who the user is: keep its last component only
# (libQnnHtp.so, onnxruntime_pybind11_state.pyd), drop folders and user names.
# Separators may come doubled (a path quoted inside JSON: C:\\\\Users\\\\...).
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\\/]+[^\\/\s\"'<>|:,]+)+[\\/]*")
# A text that reads like a failure (after harmless lines are removed).
# Every alternative starts at a word boundary (or at a "["): one leading \b lets
# the scan skip the inside of words cheaply, which matters on long healthy logs.
FAILURE_WORDS = re.compile(
    r"\b(?:"
    r"(?:error|exception|fatal)\b\s*[:\]!]|traceback \(most recent"
    r"|fail(?:s|ed|ure)?\b(?!\s*[\"']?\s*[:=])|crash(?:es|ed)?\b|abort(?:ed)?\b"
    r"|segmentation fault|cannot\b|can't\b|could ?n[o']t\b|unable to\b"
    r"|not (?:found|supported|working|recognized|available|(?:being )?used)\b"
    r"|do(?:es)?n[o']t work|do(?:es)? not work|(?:falls|fell|falling) back\b"
    r"|slower\b|hangs?\b|killed\b|exit(?:ed)? (?:with )?(?:code|status)\s*-?[1-9]"
    # An error named in prose ("throws a 5005 error", "error code: 1100", "this error"),
    # and the ways users say a setting had no effect or something went missing.
    r"|(?:an|the|this|that|same|following|above|below|another|\d{3,})\s+(?:\w+\s+)?errors?\b"
    r"|error\s+(?:code|occurs?|occurred|when|while|during|creating|loading|message|happens)\b"
    r"|thr(?:ows?|own|ew)\b|invalid\b|unsupported\b"
    r"|not (?:effective|shown|showing|listed|detected|loaded)\b|never (?:shows?|appears?|listed|used)\b"
    r"|(?:is|are|gets?|being) ignored\b|no module named\b|regression\b|disappear(?:s|ed)?\b"
    r"|unexpected\b|wrong\b|incompatible\b|missing\b|no longer\b|(?:stuck|freez(?:es|ing)|froze|hung)\b"
    r"|(?:does|did|do)(?:n[o']t| not) (?:show|appear|detect|find|load|run|use|start|exist)\b"
    r"|returns? (?:zero|nothing|none|an empty)\b"
    # ORT's own error markers and [E] / [ERROR] tags.
    r")|\[(?:e\]|error\]|e:onnxruntime|onnxruntimeerror\])",
    re.IGNORECASE,
)
# The same regex for a case-folded copy (its literals are all lower case): on a
# big log, case-sensitive matching is about 3 times faster, with the same spans.
_FAILURE_FOLDED = re.compile(FAILURE_WORDS.pattern)
# A Python exception (ModuleNotFoundError: ..., RuntimeError: ...) or ORT's "FAIL :" status:
# case matters here (a JSON key "error": or a counter "fail: 0" is no failure).
_RAISED = re.compile(r"\b[A-Za-z_]*(?:Error|Exception)\s*:|\bFAIL\s*:")


def failure_lines(
    lines: list[str], skip: frozenset[int], *, first: int = 2, width: int = 240
) -> tuple[tuple[int, str], ...]:
    """The lines (1-based number, text) that read like the failure: the first
    ``first`` of them and the last, the harmless ones (``skip``) left out. Said
    when no catalogued cause matched: what to search for or to report."""
    loud: list[tuple[int, str]] = []
    quiet: list[tuple[int, str]] = []
    for number, (line, record) in enumerate(record_levels(lines), 1):
        if number in skip or not line.strip():
            continue
        if _RAISED.search(line) or _FAILURE_FOLDED.search(line.lower()):
            # a verbose session's narration ("Validation FAILED for 1 nodes") only
            # when nothing louder reads like a failure
            (quiet if record in QUIET else loud).append((number, line.strip()[:width]))
    found = loud or quiet
    if len(found) > first + 1:
        found = [*found[:first], found[-1]]
    return tuple(found)


def reads_like_failure(text: str) -> bool:
    """Whether ``text`` (without its harmless lines and its verbose narration,
    ``severity.loud_records``: "Validation FAILED for 1 nodes" at [V] is a
    healthy session's account) reports something going wrong
    (through the literal pre-filter: a healthy 20,000-line log is not scanned
    character by character)."""
    return bool(prefilter.search(FAILURE_WORDS, text) or prefilter.search(_RAISED, text))


def _basename(match: re.Match[str]) -> str:
    return " " + re.split(r"[\\/]+", match.group(0).rstrip("\\/"))[-1] + " "


def terms(text: str) -> frozenset[str]:
    """The distinctive words of ``text``: lower case, paths reduced to their
    file names, common words dropped."""
    text = _PATH.sub(_basename, text)
    return frozenset(t for t in _TOKEN.findall(text.lower()) if t not in _STOP)


@dataclass(frozen=True)
class Resemblance:
    signature: Signature
    similarity: float
    shared: tuple[str, ...]  # the rarest shared words first

    def describe(self) -> str:
        words = ", ".join(repr(t) for t in self.shared[:SHOWN_TERMS])
        return (
            f"no catalogued message matched; the text shares rare words with this cause's "
            f"symptoms ({words}; similarity {self.similarity:.1f})"
        )


@dataclass(frozen=True)
class _Index:
    """A catalogue's side of the comparison, the same for every text: each
    entry's words, weighted by where they stand (its title and real symptom
    examples, and its cause, the maintainers' explanation: a new reporter
    often describes the mechanism, not the message, at CAUSE_WEIGHT), how
    rare each word is across entries, and each entry's vocabulary size."""

    signatures: tuple[Signature, ...]
    documents: tuple[tuple[Signature, dict[str, float]], ...]
    idf: dict[str, float]
    norms: dict[str, float]


_last_index: _Index | None = None


def _index(signatures: tuple[Signature, ...]) -> _Index:
    """The index of this catalogue, made once (the last one is kept: a
    process diagnoses with one catalogue)."""
    global _last_index
    if _last_index is not None and _last_index.signatures is signatures:
        return _last_index
    documents = []
    for s in signatures:
        words = dict.fromkeys(terms(s.cause), CAUSE_WEIGHT) if CAUSE_WEIGHT else {}
        words.update(dict.fromkeys(terms("\n".join((s.title, *s.examples))), 1.0))
        documents.append((s, words))
    frequency = Counter(t for _, words in documents for t in words)
    idf = {t: math.log(len(documents) / n) for t, n in frequency.items()}
    # Normalised by the size of the entry's vocabulary, so that an entry with
    # many examples is not favoured for being long.
    norms = {s.id: math.sqrt(sum(idf[t] * w for t, w in words.items())) for s, words in documents}
    _last_index = _Index(signatures, tuple(documents), idf, norms)
    return _last_index


def _failure_terms(text: str) -> frozenset[str]:
    """The words on the lines that say what went wrong, and on their neighbours:
    the error line names the cause more often than the environment lines do."""
    lines = text.split("\n")
    starts = list(itertools.accumulate([len(line) + 1 for line in lines], initial=0))
    folded = prefilter.fold(text)
    if len(folded) == len(text):  # positions line up: the folded copy is searched
        found = (*_FAILURE_FOLDED.finditer(folded), *_RAISED.finditer(text))
    else:
        found = (*FAILURE_WORDS.finditer(text), *_RAISED.finditer(text))
    hot = {bisect.bisect_right(starts, m.start()) - 1 for m in found}
    near = {j for i in hot for j in range(i - FAILURE_LINE_REACH, i + FAILURE_LINE_REACH + 1)}
    return terms("\n".join(lines[i] for i in sorted(near) if 0 <= i < len(lines)))


@dataclass(frozen=True)
class Comparison:
    """``text`` against each entry sharing at least MIN_SHARED words with it:
    its ranking similarity and its unboosted one (what the threshold judges).
    Made once per text; the engine asks it twice (look-alikes, guesses)."""

    found: tuple[tuple[Resemblance, float], ...]

    def by_id(self) -> dict[str, Resemblance]:
        """How closely the text resembles each entry's symptoms (no threshold,
        no gate): what tells apart candidates that matched the same message."""
        return {r.signature.id: r for r, _ in self.found}

    def offered(self) -> tuple[Resemblance, ...]:
        """The entries the text resembles most, best first (at most a few):
        the guesses, for a text that reads like a failure (``reads_like_failure``,
        asked first by the engine: on a healthy log nothing is compared)."""
        # the threshold weighs all words alike: the failing-line boost only reorders
        kept = [r for r, plain in self.found if plain >= MIN_SIMILARITY]
        kept.sort(key=lambda r: (-r.similarity, r.signature.id))
        return tuple(kept[:MAX_OFFERED])


def compare(text: str, signatures: tuple[Signature, ...]) -> Comparison:
    """``text`` (already free of harmless lines) against the catalogue."""
    query = terms(text)
    if not query:
        return Comparison(())
    on_failure = _failure_terms(text)
    index = _index(signatures)
    idf = index.idf
    found: list[tuple[Resemblance, float]] = []
    for signature, words in index.documents:
        shared = query.intersection(words)  # iterates the entry's words, not the text's
        norm = index.norms[signature.id]
        if len(shared) < MIN_SHARED or not norm:
            continue
        plain = sum(idf[t] * words[t] for t in shared) / norm
        similarity = (
            sum(idf[t] * words[t] * (FAILURE_LINE_BOOST if t in on_failure else 1) for t in shared)
            / norm
        )
        ranked = tuple(sorted(shared, key=lambda t: (-idf[t] * words[t], t)))
        found.append((Resemblance(signature, similarity, ranked), plain))
    return Comparison(tuple(found))
