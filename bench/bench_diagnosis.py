"""How often the diagnosis engine names the maintainers' cause first (run by
hand; numbers go in the README).

Corpora (tests/diagnosis_corpus/): real failure reports from public trackers,
each with its link and the cause the thread established.
  dev      cases read while the catalogue's patterns were written
  heldout  cases collected and labelled by someone else, never read while
           writing patterns
Each case is diagnosed as ``qnndoctor explain`` would: its text, its exit code
if reported, facts from the text only. Printed: top-1 / top-3 accuracy per
corpus, and the number of error candidates raised by healthy logs:
  - tests/diagnosis_corpus/healthy/*.txt (known cosmetic warnings, real lines)
  - a real verbose ORT + QNN session that passes on the HTP simulator, and
  - `qnndoctor check -v` (text and JSON) of the same healthy venv
(the last two need the real wheels the tests download: --wheels).

Usage: python bench/bench_diagnosis.py [--wheels DIR] [--no-live] [-v]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import add_wheels_argument, healthy_wheels, make_venv

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "diagnosis_corpus"


def _score(cases: list[dict[str, Any]], verbose: bool, name: str) -> tuple[int, int, int]:
    from qnndoctor.diagnosis import diagnose
    from qnndoctor.matrixdata import load_socs

    socs = load_socs()
    top1 = top3 = 0
    for case in cases:
        result = diagnose(case["text"], exit_code=case.get("exit_code"), socs=socs)
        ids = result.ids()
        top1 += ids[:1] == [case["expected"]]
        top3 += case["expected"] in ids[:3]
        if verbose and ids[:1] != [case["expected"]]:
            print(f"  {name} {case['id']}: expected {case['expected']}, got {ids[:3]}")
    return top1, top3, len(cases)


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
    parser.add_argument("-v", "--verbose", action="store_true", help="list every miss of the development parts (never a held-out one)")
    args = parser.parse_args()
    # Every development part (dev*.json) and every held-out part (heldout*.json).
    # Misses are listed for development parts only: listing a held-out miss
    # would show its text's label to whoever tunes the patterns next.
    parts = sorted(CORPUS.glob("dev*.json")) + sorted(CORPUS.glob("heldout*.json"))
    for path in parts:
        name = path.stem
        cases = json.loads(path.read_text("utf-8"))["cases"]
        if not cases:
            print(f"{name:9} (empty)")
            continue
        verbose = args.verbose and name.startswith("dev")
        top1, top3, total = _score(cases, verbose, name)
        print(
            f"{name:9} {total:3} cases   top-1 {top1:3} ({100 * top1 / total:5.1f} %)"
            f"   top-3 {top3:3} ({100 * top3 / total:5.1f} %)"
        )
    from qnndoctor.diagnosis import diagnose

    errors = 0
    texts = _healthy_texts(args.wheels, not args.no_live)
    for label, text in texts.items():
        found = diagnose(text).ids()
        errors += len(found)
        lines = len(text.splitlines())
        print(f"healthy  {label:34} {lines:5} lines: {len(found)} error candidates {found[:3]}")
    print(f"healthy  total error candidates: {errors} (target 0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
