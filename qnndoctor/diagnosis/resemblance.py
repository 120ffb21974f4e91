"""The last resort: which catalogued cause a text *resembles*, when no
catalogued error message matched it.

Users often paste prose ("the NPU is never used"), a message worded a little
differently from the one a pattern expects, or a message from a neighbouring
tool. Patterns miss those, and "no known cause" helps nobody. This module
compares the distinctive words of the text with each entry's title and real
symptom examples (TF-IDF over the catalogue: a word that many entries share
counts little), and offers at most a few entries that share enough rare words.

A resemblance is a guess and is always shown as one: its candidates carry
``raised_by == "resemblance"``, the words they share, and low confidence; the
facts still confirm or exclude them as they do for matched patterns. It only
runs when no pattern raised anything and the text reads like a failure, so a
healthy log stays without candidates.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from .catalogue import Signature
from .prefilter import search

MIN_SIMILARITY = 1.0  # below this, the shared words are coincidence (see docs/diagnosis.md)
MIN_SHARED = 2  # one shared word is never a resemblance
MAX_OFFERED = 3
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
FAILURE_WORDS = re.compile(
    r"\b(?:error|exception|fatal)\b\s*[:\]!]|\[(?:e|error)\]|traceback \(most recent"
    r"|\bfail(?:s|ed|ure)?\b(?!\s*[\"']?\s*[:=])|\bcrash(?:es|ed)?\b|\babort(?:ed)?\b"
    r"|segmentation fault|\bcannot\b|\bcan't\b|\bcould ?n[o']t\b|\bunable to\b"
    r"|\bnot (?:found|supported|working|recognized|available|(?:being )?used)\b"
    r"|\bdo(?:es)?n[o']t work|\bdo(?:es)? not work|\b(?:falls|fell|falling) back\b"
    r"|\bslower\b|\bhangs?\b|\bkilled\b|\bexit(?:ed)? (?:with )?(?:code|status)\s*-?[1-9]",
    re.IGNORECASE,
)


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


def _documents(signatures: Iterable[Signature]) -> dict[str, tuple[Signature, frozenset[str]]]:
    return {s.id: (s, terms("\n".join((s.title, *s.examples)))) for s in signatures}


def resemble(text: str, signatures: tuple[Signature, ...]) -> tuple[Resemblance, ...]:
    """The entries ``text`` resembles most, best first (at most a few).
    ``text`` should already be free of harmless lines."""
    if not search(FAILURE_WORDS, text):  # FAILURE_WORDS.search(text), pre-filtered
        return ()
    query = terms(text)
    if not query:
        return ()
    documents = _documents(signatures)
    frequency = Counter(t for _, words in documents.values() for t in words)
    idf = {t: math.log(len(documents) / n) for t, n in frequency.items()}
    found: list[Resemblance] = []
    for signature, words in documents.values():
        shared = query & words
        if len(shared) < MIN_SHARED or not words:
            continue
        # Shared rarity, normalised by the size of the entry's vocabulary so
        # that an entry with many examples is not favoured for being long.
        similarity = sum(idf[t] for t in shared) / math.sqrt(sum(idf[t] for t in words))
        if similarity >= MIN_SIMILARITY:
            ranked = tuple(sorted(shared, key=lambda t: (-idf[t], t)))
            found.append(Resemblance(signature, similarity, ranked))
    found.sort(key=lambda r: (-r.similarity, r.signature.id))
    return tuple(found[:MAX_OFFERED])
