"""Does this checkout's ``explain`` answer exactly as another checkout's does?
(run by hand when the diagnosis engine is changed for speed, not for answers)

Both checkouts' ``explain --json`` documents (candidates with evidence, facts,
excluded causes, harmless lines; redacted as the CLI prints them) are made, in
one child process per checkout, for every case of the development corpora
(tests/diagnosis_corpus/dev*.json, never a held-out part), each healthy log in
tests/diagnosis_corpus/healthy/, and any further log files named on the
command line (big verbose sessions, binary junk, CRLF). Each case is explained
twice: facts read from the text (as ``explain`` does by default) and with
``--no-facts``. Prints the first differences and a total; exit code 1 when any
document differs.

Usage: python bench/explain_equivalence.py --baseline /path/to/main [LOG ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "diagnosis_corpus"

# Run inside each checkout (its own qnndoctor first on sys.path): explain
# every case and write the documents as JSON.
CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import qnndoctor
assert qnndoctor.__file__.startswith(sys.argv[1]), qnndoctor.__file__
from qnndoctor.diagnosis.document import explain
from qnndoctor.matrixdata import load_socs
from qnndoctor.report.redact import redact_document
socs = load_socs()
cases = json.load(open(sys.argv[2], encoding="utf-8"))
out = {}
for key, case in cases.items():
    for text_facts in (True, False):
        doc = explain(case["text"], case.get("exit_code"), None, socs=socs, text_facts=text_facts)
        doc.pop("tool", None)
        out[f"{key} text_facts={text_facts}"] = redact_document(doc)
json.dump(out, open(sys.argv[3], "w", encoding="utf-8"), ensure_ascii=False)
"""


def _cases(logs: list[Path]) -> dict[str, dict[str, Any]]:
    cases: dict[str, dict[str, Any]] = {}
    for part in sorted(CORPUS.glob("dev*.json")):
        for case in json.loads(part.read_text("utf-8"))["cases"]:
            cases[f"{part.stem}/{case['id']}"] = {
                "text": case["text"],
                "exit_code": case.get("exit_code"),
            }
    for path in sorted((CORPUS / "healthy").glob("*.txt")) + logs:
        # As explain --log reads a file: bytes decoded with errors="replace".
        cases[str(path)] = {"text": path.read_bytes().decode("utf-8", errors="replace")}
    return cases


def _documents(checkout: Path, cases_file: Path, out: Path) -> dict[str, Any]:
    subprocess.run(
        [sys.executable, "-c", CHILD, str(checkout), str(cases_file), str(out)],
        check=True,
        stdin=subprocess.DEVNULL,
        cwd=checkout,
        timeout=3600,
    )
    documents: dict[str, Any] = json.loads(out.read_text("utf-8"))
    return documents


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", type=Path, required=True, help="the other checkout")
    parser.add_argument("logs", nargs="*", type=Path, help="further log files")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cases_file = Path(tmp) / "cases.json"
        cases_file.write_text(json.dumps(_cases(args.logs)), "utf-8")
        before = _documents(args.baseline.resolve(), cases_file, Path(tmp) / "before.json")
        after = _documents(ROOT, cases_file, Path(tmp) / "after.json")
    differing = [key for key in before if before[key] != after.get(key)]
    for key in differing[:10]:
        print(f"DIFFERS {key}")
        print(f"  baseline: {json.dumps(before[key])[:600]}")
        print(f"  this:     {json.dumps(after.get(key))[:600]}")
    print(f"{len(before) - len(differing)} of {len(before)} documents identical")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
