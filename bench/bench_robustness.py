"""Does a first answer survive the way people paste a log? (run by hand;
numbers go in docs/diagnosis.md)

Every development case whose first answer is right (tests/diagnosis_corpus/
dev*.json and runtime/dev*.json, never a held-out part) is diagnosed again
after one change of form that leaves its content alone:

  fenced     inside a Markdown code fence
  crlf       Windows line ends
  quoted     every line as a Markdown quote ("> ")
  logcat     every line behind an Android logcat prefix at level E
  numbered   every line behind a line number (an editor or a pastebin)
  wrapped80  every line longer than 80 characters wrapped at a space

Printed per form: how many stay right, and the ids of those that do not.

Usage: python bench/bench_robustness.py
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from qnndoctor.diagnosis import diagnose
from qnndoctor.matrixdata import load_socs

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "diagnosis_corpus"


def _each_line(prefix: Callable[[int], str]) -> Callable[[str], str]:
    return lambda text: "\n".join(prefix(i) + line for i, line in enumerate(text.splitlines()))


def _wrapped(text: str, width: int = 80) -> str:
    out: list[str] = []
    for line in text.splitlines():
        while len(line) > width and (cut := line.rfind(" ", 0, width)) > 0:
            out.append(line[:cut])
            line = line[cut + 1 :]
        out.append(line)
    return "\n".join(out)


FORMS: dict[str, Callable[[str], str]] = {
    "fenced": lambda text: f"```\n{text}\n```",
    "crlf": lambda text: text.replace("\n", "\r\n"),
    "quoted": _each_line(lambda _: "> "),
    "logcat": _each_line(lambda i: f"11-27 13:56:51.{i % 1000:03d} 20286 20355 E onnxruntime: "),
    "numbered": _each_line(lambda i: f"{i + 1:>4}  "),
    "wrapped80": _wrapped,
}


def main() -> int:
    socs = load_socs()
    parts = sorted(CORPUS.glob("dev*.json")) + sorted(CORPUS.glob("runtime/dev*.json"))
    right = 0
    kept = dict.fromkeys(FORMS, 0)
    lost: dict[str, list[str]] = {form: [] for form in FORMS}
    for path in parts:
        for case in json.loads(path.read_text("utf-8"))["cases"]:
            code = case.get("exit_code")
            if diagnose(case["text"], exit_code=code, socs=socs).ids()[:1] != [case["expected"]]:
                continue
            right += 1
            for form, change in FORMS.items():
                ids = diagnose(change(case["text"]), exit_code=code, socs=socs).ids()
                if ids[:1] == [case["expected"]]:
                    kept[form] += 1
                else:
                    lost[form].append(case["id"])
    print(f"development cases right first as written: {right}")
    for form in FORMS:
        print(f"  {form:10} {kept[form]:4} stay right   lost: {' '.join(lost[form]) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
