"""Leave-one-out on the development parts: does the engine find a catalogued
cause in a report the catalogue was never fitted to? (run by hand; numbers
go in docs/diagnosis.md)

The dev reports (tests/diagnosis_corpus/dev*.json, never a held-out part)
were read while the catalogue was written, so ``bench_diagnosis.py`` scores
them with patterns and examples fitted to them. Here each case is scored
against a catalogue with that fitting undone, as if the entry existed but a
new reporter had worded the failure:

  examples  every ``symptom_examples`` text of every entry that overlaps
            the case (a shared normalised run of 40 characters, or the
            whole example when it is shorter) is removed, and so is every
            sentence of an entry's ``cause`` that overlaps it, and a title
            that overlaps it is blanked; ``--strict`` also
            removes all examples of entries whose ``sources`` cite the case's
            URL (the entry may have been written from that very thread)
  guess     patterns and exit codes off: the resemblance path alone
  engine    the full engine, with every pattern of the expected entry that
            matches the case but neither a remaining example of its entry
            nor another dev report (another URL) of the same cause turned
            off: it matches only because it was written for this case
  absent    the engine as above without the expected entry: any answer is
            wrong, so this counts what guessing costs

Printed: top-1 / top-3 per mode, how many cases had something removed, the
confidence of first answers (engine mode right / wrong, absent mode), and
error candidates on healthy texts (the full catalogue, as ``explain`` runs;
and with patterns off, the guess path alone) which must stay 0.

Usage: python bench/bench_generalisation.py [--strict] [--live] [-v]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from _common import add_wheels_argument
from bench_diagnosis import _healthy_texts

from qnndoctor.diagnosis import Catalogue, Diagnosis, Signature, diagnose, load
from qnndoctor.matrixdata import load_socs

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "diagnosis_corpus"
OVERLAP = 40  # normalised characters shared with a case: the example came from it
_NOT_WORD = re.compile(r"[^a-z0-9]+")
_SENTENCE = re.compile(r"(?<=[.;:])\s+")


def _normal(text: str) -> str:
    return _NOT_WORD.sub(" ", text.lower()).strip()


def _overlaps(example: str, windows: set[str], case_text: str) -> bool:
    ex = _normal(example)
    if len(ex) < OVERLAP:
        return ex in case_text
    return any(ex[i : i + OVERLAP] in windows for i in range(len(ex) - OVERLAP + 1))


def _windows(text: str) -> set[str]:
    return {text[i : i + OVERLAP] for i in range(max(0, len(text) - OVERLAP + 1))}


def _dev_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for path in sorted(CORPUS.glob("dev*.json")):
        cases += json.loads(path.read_text("utf-8"))["cases"]
    return cases


def _pruned(
    catalogue: Catalogue, case: dict[str, Any], strict: bool
) -> tuple[Catalogue, int]:
    """The catalogue without the examples this case could have given it."""
    text = _normal(case["text"])
    windows = _windows(text)
    removed = 0
    signatures: list[Signature] = []
    for s in catalogue.signatures:
        if strict and case["url"] in s.sources:
            kept: tuple[str, ...] = ()
        else:
            kept = tuple(e for e in s.examples if not _overlaps(e, windows, text))
        removed += len(s.examples) - len(kept)
        # The cause may quote the report too: its sentences that overlap go as well.
        cause = " ".join(
            c for c in _SENTENCE.split(s.cause) if not _overlaps(c, windows, text)
        )
        # So may its title: one that quotes the report is blanked.
        title = "" if _overlaps(s.title, windows, text) else s.title
        signatures.append(dataclasses.replace(s, title=title, examples=kept, cause=cause))
    return dataclasses.replace(catalogue, signatures=tuple(signatures)), removed


def _guess_only(catalogue: Catalogue) -> Catalogue:
    signatures = tuple(
        dataclasses.replace(s, patterns=(), exit_codes=frozenset()) for s in catalogue.signatures
    )
    return dataclasses.replace(catalogue, signatures=signatures)


def _unfitted(
    catalogue: Catalogue, case: dict[str, Any], cases: list[dict[str, Any]]
) -> tuple[Catalogue, int]:
    """The pruned catalogue without the expected entry's patterns that match
    only this case."""
    expected = case["expected"]
    witnesses = [
        c["text"] for c in cases if c["expected"] == expected and c["url"] != case["url"]
    ]
    signatures: list[Signature] = []
    off = 0
    for s in catalogue.signatures:
        if s.id != expected:
            signatures.append(s)
            continue
        others = [*s.examples, *witnesses]
        kept = tuple(
            p
            for p in s.patterns
            if not p.regex.search(case["text"]) or any(p.regex.search(t) for t in others)
        )
        off += len(s.patterns) - len(kept)
        signatures.append(dataclasses.replace(s, patterns=kept))
    return dataclasses.replace(catalogue, signatures=tuple(signatures)), off


LEVELS = ("high", "medium", "low", "guess")


def _level(diagnosis: Diagnosis) -> str:
    """The first answer's confidence, a guess counted apart from a low match."""
    top = diagnosis.top
    if top is None:
        return "none"
    return "guess" if top.raised_by == "resemblance" else diagnosis.confidence(0)


@dataclasses.dataclass
class Result:
    scores: dict[str, list[int]]  # mode -> [top-1, top-3]
    touched: dict[str, int]  # cases with examples / patterns removed, absent answers
    # confidence level of the first answer -> count: engine mode right / wrong, absent (all wrong)
    levels: dict[str, Counter[str]]
    total: int


def evaluate(strict: bool, verbose: bool = False) -> Result:
    """top-1 / top-3 per mode, how many cases had examples / patterns removed,
    the confidence of first answers, and the case count."""
    catalogue = load()
    socs = load_socs()
    cases = _dev_cases()
    scores = {"guess": [0, 0], "engine": [0, 0]}
    touched = {"examples": 0, "patterns": 0, "absent named": 0, "absent guessed": 0}
    levels: dict[str, Counter[str]] = {"right": Counter(), "wrong": Counter(), "absent": Counter()}
    for case in cases:
        pruned, removed = _pruned(catalogue, case, strict)
        touched["examples"] += removed > 0
        unfitted, off = _unfitted(pruned, case, cases)
        touched["patterns"] += off > 0
        for mode, cat in (("guess", _guess_only(pruned)), ("engine", unfitted)):
            diagnosis = diagnose(
                case["text"], exit_code=case.get("exit_code"), socs=socs, catalogue=cat
            )
            ids = diagnosis.ids()
            if mode == "engine" and ids:
                levels["right" if ids[0] == case["expected"] else "wrong"][_level(diagnosis)] += 1
            scores[mode][0] += ids[:1] == [case["expected"]]
            scores[mode][1] += case["expected"] in ids[:3]
            if verbose and ids[:1] != [case["expected"]]:
                print(f"  {mode:6} {case['id']}: expected {case['expected']}, got {ids[:3]}")
        # The price of guessing: without its entry, every answer is wrong.
        absent = dataclasses.replace(
            unfitted,
            signatures=tuple(s for s in unfitted.signatures if s.id != case["expected"]),
        )
        without = diagnose(
            case["text"], exit_code=case.get("exit_code"), socs=socs, catalogue=absent
        )
        found = without.candidates
        touched["absent named"] += bool(found)
        touched["absent guessed"] += bool(found) and found[0].raised_by == "resemblance"
        if found:
            levels["absent"][_level(without)] += 1
    return Result(scores, touched, levels, len(cases))


def _row(counts: Counter[str]) -> str:
    return "  ".join(f"{level} {counts[level]:2}" for level in LEVELS)


def main() -> int:
    parser = argparse.ArgumentParser()
    add_wheels_argument(parser)
    parser.add_argument("--strict", action="store_true", help="also drop every example of entries citing the case's URL")
    parser.add_argument("--live", action="store_true", help="also the live healthy logs (real wheels, slow)")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the misses (dev cases only)")
    args = parser.parse_args()
    result = evaluate(args.strict, args.verbose)
    scores, touched, total, levels = result.scores, result.touched, result.total, result.levels
    print(
        f"dev LOO ({'strict' if args.strict else 'overlap'}): {total} cases, examples removed "
        f"for {touched['examples']}, fitted patterns off for {touched['patterns']}"
    )
    for mode, (top1, top3) in scores.items():
        print(
            f"  {mode:6} top-1 {top1:3} ({100 * top1 / total:5.1f} %)"
            f"   top-3 {top3:3} ({100 * top3 / total:5.1f} %)"
        )
    print(
        f"  absent (engine, the case's entry removed): a wrong first answer for "
        f"{touched['absent named']}, of them a guess for {touched['absent guessed']}"
    )
    print("  confidence of first answers (guess = raised by resemblance, shown as low):")
    print(f"    engine, right  {_row(levels['right'])}")
    print(f"    engine, wrong  {_row(levels['wrong'])}")
    print(f"    absent (wrong) {_row(levels['absent'])}")
    catalogue = load()
    texts = _healthy_texts(args.wheels, args.live)
    guessing = _guess_only(catalogue)
    full = sum(bool(diagnose(t).ids()) for t in texts.values())
    guessed = sum(bool(diagnose(t, catalogue=guessing).ids()) for t in texts.values())
    print(
        f"healthy texts {len(texts)}: with an error candidate {full} (full catalogue), "
        f"{guessed} (patterns off, guess path alone) (target 0)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
