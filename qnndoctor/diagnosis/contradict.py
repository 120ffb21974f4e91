"""Wording in the text that contradicts a candidate's cause.

A message can match a cause's pattern while the rest of the error says
something else happened: "Failed to open libQnnHtp.so ... Permission denied"
matches a missing-library pattern, yet the file is there and the process may
not read it. When the text's own words contradict the kind of cause a
candidate names, that candidate is never given as a confident answer
(``Diagnosis.doubt``: its confidence is capped at low, with the line that
contradicts it). A candidate whose own title or cause speaks of the same
thing (a permission cause, for permission wording) is not contradicted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import prefilter
from .catalogue import Signature


@dataclass(frozen=True)
class Rule:
    name: str  # what the text says, in a few words
    wording: re.Pattern[str]  # how the text says it
    contradicts: re.Pattern[str]  # a cause (title + cause text) this speaks against
    unless: re.Pattern[str]  # a cause that says the same itself is not contradicted


RULES = (
    Rule(
        "the file exists but may not be read (a permission error)",
        re.compile(
            r"Access is denied|Permission denied|\[Errno 13\]|\berrno[ =:]*13\b|\bEACCES\b"
            r"|\bPermissionError\b|system error number 13|ERROR_ACCESS_DENIED",
            re.IGNORECASE,
        ),
        re.compile(
            r"\bnot found\b|\bmissing\b|does(?: not|n't) exist|\bno such file\b"
            r"|cannot find|can't find|not present",
            re.IGNORECASE,
        ),
        re.compile(r"permission|access (?:is )?denied|errno 13|not readable", re.IGNORECASE),
    ),
    Rule(
        "the file does not exist (not a permission error)",
        re.compile(
            r"No such file or directory|\[Errno 2\]|\bENOENT\b|\bFileNotFoundError\b"
            r"|The system cannot find the (?:file|path) specified",
            re.IGNORECASE,
        ),
        re.compile(r"permission|access (?:is )?denied|not readable", re.IGNORECASE),
        re.compile(r"\bnot found\b|\bmissing\b|does(?: not|n't) exist|no such file", re.IGNORECASE),
    ),
)


def said(text: str) -> dict[str, str]:
    """What ``text`` says that a rule reads, by rule name: its first wording,
    quoted with its line (one search of the whole text per rule)."""
    found: dict[str, str] = {}
    for rule in RULES:
        if (match := prefilter.search(rule.wording, text)) is not None:
            number = text.count("\n", 0, match.start()) + 1
            found[rule.name] = f"the text says {match.group(0)!r} (line {number}): {rule.name}"
    return found


def contradiction(signature: Signature, wording: dict[str, str]) -> str | None:
    """Why the text's wording (``said``) speaks against ``signature``'s cause,
    or None."""
    if not wording:
        return None
    about = f"{signature.title}\n{signature.cause}"
    for rule in RULES:
        if (
            rule.name in wording
            and rule.contradicts.search(about)
            and not rule.unless.search(about)
        ):
            return wording[rule.name]
    return None
