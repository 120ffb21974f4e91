"""How often the diagnosis engine names the maintainers' cause first (run by
hand; numbers go in docs/accuracy.md).

Corpora (tests/diagnosis_corpus/): real failure reports from public trackers,
each with its link and the cause the thread established.
  dev      cases read while the catalogue's patterns were written
  heldout  cases collected and labelled by someone else, never read while
           writing patterns
  runtime/heldout  failures made for real on the HTP simulator, each by one
           deliberate mistake, labelled blind by someone else (the cause is
           known by construction); never read while writing patterns
Each case is diagnosed as ``qnndoctor explain`` would: its text, its exit code
if reported, facts from the text only. Printed: top-1 / top-3 accuracy per
corpus, beside it the stage "where it failed" right against
tests/diagnosis_corpus/stages/labels.json (as `explain` says it, and from the
lines' wording alone, without the first answer's catalogue entry), and the number of error candidates raised by healthy logs:
  - tests/diagnosis_corpus/healthy/*.txt (known cosmetic warnings, real lines)
  - a real verbose ORT + QNN session that passes on the HTP simulator, and
  - `qnndoctor check -v` (text and JSON) of the same healthy venv
(the last two need the real wheels the tests download: --wheels).

Usage: python bench/bench_diagnosis.py [--wheels DIR] [--no-live] [--dev-only] [-v]

Use --dev-only while changing the catalogue: a held-out number seen after
every change turns the held-out part into one more development part.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from _common import add_wheels_argument, healthy_wheels, make_venv

if TYPE_CHECKING:
    from qnndoctor.diagnosis import Catalogue

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "diagnosis_corpus"
# The stage each labelled case failed at (read from its diagnosis or scenario).
STAGES: dict[str, str] = json.loads((CORPUS / "stages" / "labels.json").read_text("utf-8"))[
    "stages"
]


@dataclass
class Score:
    """One part's result. The miss kinds and the confidence split are totals
    only, so a held-out part can be broken down without showing a case."""

    total: int = 0
    top1: int = 0
    top3: int = 0
    misses: Counter[str] = field(default_factory=Counter)
    right_by_confidence: Counter[str] = field(default_factory=Counter)
    wrong_by_confidence: Counter[str] = field(default_factory=Counter)
    # "where it failed" against the stage labels (stages/labels.json): right, labelled
    stage_right: int = 0
    stage_labelled: int = 0
    # the same with the lines' wording alone (no answer's catalogue entry read)
    stage_right_wording: int = 0


def _score(cases: list[dict[str, Any]], verbose: bool, name: str, catalogue: Catalogue) -> Score:
    from qnndoctor.diagnosis import diagnose
    from qnndoctor.matrixdata import load_socs

    socs = load_socs()
    catalogued = {entry.id for entry in catalogue.signatures}
    score = Score(total=len(cases))
    for case in cases:
        result = diagnose(
            case["text"], exit_code=case.get("exit_code"), socs=socs, catalogue=catalogue
        )
        ids = result.ids()
        expected = case["expected"]
        right = ids[:1] == [expected]
        score.top1 += right
        score.top3 += expected in ids[:3]
        if ids:
            by = score.right_by_confidence if right else score.wrong_by_confidence
            by[result.confidence(0)] += 1
        if not right:
            score.misses[_miss_kind(expected, ids, catalogued)] += 1
        if (label := STAGES.get(case["id"])) is not None:
            score.stage_labelled += 1
            said = result.where().stage
            score.stage_right += said == label
            score.stage_right_wording += result.where(from_entry=False).stage == label
            if verbose and said != label:
                print(f"  {name} {case['id']}: failed at {label}, said {said}")
        if verbose and not right:
            print(f"  {name} {case['id']}: expected {expected}, got {ids[:3]}")
    return score


def _miss_kind(expected: str, ids: list[str], catalogued: set[str]) -> str:
    if expected not in catalogued:
        return "cause not catalogued"
    if not ids:
        return "nothing raised"
    if expected in ids[:3]:
        return "right one 2nd or 3rd"
    return "another cause first"


def wilson_lower(right: int, given: int, z: float = 1.96) -> float:
    """The Wilson score interval's lower bound (95 %) of right / given: the share a
    label can honestly promise from this many answers (0 when none were given)."""
    if given <= 0:
        return 0.0
    p = right / given
    centre = p + z * z / (2 * given)
    spread = z * math.sqrt((p * (1 - p) + z * z / (4 * given)) / given)
    return (centre - spread) / (1 + z * z / given)


def _print_score(name: str, score: Score) -> None:
    total = score.total
    print(
        f"{name:9} {total:3} cases   top-1 {score.top1:3} ({100 * score.top1 / total:5.1f} %)"
        f"   top-3 {score.top3:3} ({100 * score.top3 / total:5.1f} %)"
    )
    if score.misses:
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(score.misses.items()))
        print(f"{'':9}   misses: {kinds}")
    sure = ("high", "medium")
    right = sum(score.right_by_confidence[c] for c in sure)
    wrong = sum(score.wrong_by_confidence[c] for c in sure)
    low_right = score.right_by_confidence["low"]
    low_wrong = score.wrong_by_confidence["low"]
    print(
        f"{'':9}   first answers at high/medium: right {right} of {right + wrong};"
        f" at low: right {low_right} of {low_right + low_wrong}"
    )
    if score.stage_labelled:
        print(
            f"{'':9}   where it failed: stage right {score.stage_right} of"
            f" {score.stage_labelled} labelled ({100 * score.stage_right / score.stage_labelled:.0f} %);"
            f" from the lines' wording alone {score.stage_right_wording}"
        )
    if name.startswith("all "):  # the calibration table (docs/diagnosis.md)
        cells = []
        for label in ("high", "medium", "low"):
            r, w = score.right_by_confidence[label], score.wrong_by_confidence[label]
            cells.append(
                f"{label} {r}/{r + w}"
                + (
                    f" ({100 * r / (r + w):.0f} %, >= {math.floor(100 * wilson_lower(r, r + w))} %)"
                    if r + w
                    else ""
                )
            )
        print(f"{'':9}   calibration: {', '.join(cells)}")


def _healthy_texts(wheels: Path, live: bool) -> dict[str, str]:
    texts = {p.name: p.read_text("utf-8") for p in sorted((CORPUS / "healthy").glob("*.txt"))}
    if not live:
        return texts
    needed = healthy_wheels(wheels)
    if needed is None:
        print(f"(no real wheels in {wheels}: live healthy logs skipped; run the tests once)")
        return texts
    with tempfile.TemporaryDirectory() as tmp:
        python = make_venv(Path(tmp), needed)
        from qnndoctor.smoke import MODEL

        runs = {
            "verbose HTP session (simulator)": [
                python,
                str(ROOT / "tests" / "data" / "verbose_session.py"),
                str(MODEL),
            ],
            "qnndoctor check -v": [
                sys.executable,
                "-m",
                "qnndoctor",
                "check",
                "-v",
                "--python",
                python,
            ],
            "qnndoctor check -v --json": [
                sys.executable,
                "-m",
                "qnndoctor",
                "check",
                "-v",
                "--json",
                "--python",
                python,
            ],
        }
        sys.path.insert(0, str(ROOT / "tests"))
        try:
            from helpers import onnx_models  # the tests' model builders (need onnx)
        except ImportError as exc:  # a venv without the test extra
            print(f"(no {exc.name}: the verbose session with a node on the CPU EP is skipped)")
        else:
            # a node the QNN EP rejects (Det) runs on the CPU EP, narrated at verbose level
            runs["verbose session, Det on CPU"] = [
                python,
                str(ROOT / "tests" / "data" / "verbose_session.py"),
                str(onnx_models.with_det(Path(tmp) / "with_det.onnx")),
                "cpu-fallback",
            ]
        for label, argv in runs.items():
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=300,
                stdin=subprocess.DEVNULL,
            )
            texts[label] = done.stdout + done.stderr
    return texts


def main() -> int:
    parser = argparse.ArgumentParser()
    add_wheels_argument(parser)
    parser.add_argument("--no-live", action="store_true", help="skip the live healthy logs")
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="list every miss of the development parts, cause and stage (never a held-out one)",
    )
    parser.add_argument(
        "--dev-only",
        action="store_true",
        help="score the development parts only (while the catalogue is being changed)",
    )
    parser.add_argument(
        "--catalogue",
        type=Path,
        metavar="FOLDER",
        help="score a changed copy of the catalogue (a folder with signatures.json and"
        " harmless.json) instead of the installed one: try a proposal without touching the tree",
    )
    args = parser.parse_args()
    from qnndoctor.diagnosis import load
    from qnndoctor.diagnosis.catalogue import load_from

    catalogue = load_from(args.catalogue) if args.catalogue else load()
    # Every development part (dev*.json) and every held-out part (heldout*.json).
    # Misses are listed for development parts only: listing a held-out miss
    # would show its text's label to whoever tunes the patterns next.
    parts = sorted(CORPUS.glob("dev*.json")) + sorted(CORPUS.glob("runtime/dev*.json"))
    if not args.dev_only:
        parts += sorted(CORPUS.glob("heldout*.json"))
        # Failures made for real on the simulator by someone who saw only the
        # catalogue's ids, titles and causes (tests/diagnosis_corpus/runtime/).
        parts += sorted(CORPUS.glob("runtime/heldout*.json"))
    totals = {"development": Score(), "held-out": Score(), "runtime-made held-out": Score()}
    for path in parts:
        name = path.stem if path.parent == CORPUS else f"{path.parent.name}/{path.stem}"
        cases = json.loads(path.read_text("utf-8"))["cases"]
        if not cases:
            print(f"{name:9} (empty)")
            continue
        verbose = args.verbose and "heldout" not in name
        score = _score(cases, verbose, name, catalogue)
        _print_score(name, score)
        total = totals[
            "runtime-made held-out"
            if name.startswith("runtime/heldout")
            else "held-out"
            if name.startswith("heldout")
            else "development"
        ]
        total.total += score.total
        total.top1 += score.top1
        total.top3 += score.top3
        total.misses.update(score.misses)
        total.stage_right += score.stage_right
        total.stage_labelled += score.stage_labelled
        total.stage_right_wording += score.stage_right_wording
        total.right_by_confidence.update(score.right_by_confidence)
        total.wrong_by_confidence.update(score.wrong_by_confidence)
    for name, total in totals.items():
        if total.total:
            _print_score(f"all {name}", total)
    from qnndoctor.diagnosis import diagnose

    errors = 0
    texts = _healthy_texts(args.wheels, not args.no_live)
    for label, text in texts.items():
        found = diagnose(text, catalogue=catalogue).ids()
        errors += len(found)
        lines = len(text.splitlines())
        print(f"healthy  {label:34} {lines:5} lines: {len(found)} error candidates {found[:3]}")
    print(f"healthy  total error candidates: {errors} (target 0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
