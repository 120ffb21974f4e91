"""Regenerate the generated parts of docs/lint.md (the rule list and the
recall table) from qnndoctor/lint/rules.py and tests/lint_cases/catalogue.json.

python docs/regenerate_lint.py

The text outside the markers is written by hand (measured numbers, usage);
a test checks the generated parts are current.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from qnndoctor.lint import lint_paths
from qnndoctor.lint.rules import RULES

DOC = Path(__file__).resolve().parent / "lint.md"
CASES = Path(__file__).resolve().parents[1] / "tests" / "lint_cases"
_BLOCK = re.compile(r"(<!-- generated: (\w+) -->\n)(.*?)(<!-- end generated -->)", re.S)


def rules_table() -> str:
    rows = ["| code | name | what goes wrong silently | fix | evidence |", "|---|---|---|---|---|"]
    for rule in RULES:
        where = " (check_options only: needs the chip)" if rule.scope == "machine" else ""
        cells = [
            f"`{rule.code}`",
            rule.name,
            rule.title.replace("|", "\\|") + where,
            rule.fix.replace("|", "\\|"),
            "; ".join(rule.evidence).replace("|", "\\|"),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def recall_table() -> str:
    entries = json.loads((CASES / "catalogue.json").read_text("utf-8"))["entries"]
    classes = sorted({e["class"] for e in entries})
    by_file: dict[str, Counter[str]] = {}
    caught: Counter[str] = Counter()
    missed: dict[str, list[str]] = {}
    for entry in entries:
        by_file.setdefault(entry["file"], Counter())[entry["class"]] += 1
        if entry["class"] != "code":
            continue
        codes = [f.code for _, f in lint_paths([str(CASES / entry["case"])]).findings]
        if entry["expect"] != "MISS" and entry["expect"] in codes:
            caught[entry["file"]] += 1
        else:
            missed.setdefault(entry["file"], []).append(f"{entry['id']} ({entry['what']})")
    head = "| area (docs/silent-mistakes/) | entries | " + " | ".join(classes) + " | code cases caught | recall |"
    rows = [head, "|" + "---|" * (len(classes) + 4)]
    total_code = total_caught = 0
    for name in sorted(by_file):
        counts = by_file[name]
        code = counts["code"]
        got = caught[name]
        total_code += code
        total_caught += got
        recall = f"{100 * got / code:.0f} %" if code else "n/a"
        cells = [name, str(sum(counts.values())), *(str(counts[c]) for c in classes), f"{got} / {code}", recall]
        rows.append("| " + " | ".join(cells) + " |")
    all_counts: Counter[str] = sum(by_file.values(), Counter())
    rows.append(
        "| **all** | "
        + " | ".join([str(len(entries)), *(str(all_counts[c]) for c in classes)])
        + f" | **{total_caught} / {total_code}** | **{100 * total_caught / total_code:.1f} %** |"
    )
    lines = [*rows, "", "Missed (code cases lint does not catch):", ""]
    for name in sorted(missed):
        for item in missed[name]:
            lines.append(f"- {name} {item}")
    return "\n".join(lines) + "\n"


def options_table() -> str:
    data = json.loads((Path(__file__).resolve().parents[1] / "matrix" / "options.json").read_text("utf-8"))
    rows = [
        "| key | kind | releases | values compared with | default | another value | read at (newest source) |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in data["options"]:
        if not (row["read_by_qnn_ep"] or row["in_library_strings"]):
            continue
        cite = row["read_by_qnn_ep"][-1] if row["read_by_qnn_ep"] else None
        where = f"`{cite['path'].rsplit('/', 1)[-1]}:{cite['line']}` @ {cite['rev']}" if cite else "no source (library strings)"
        cells = [
            f"`{row['key']}`",
            row["kind"].replace("_", " "),
            ", ".join(row["releases"]),
            ", ".join(row["values"]) or "",
            "" if row["default"] is None else f"`{row['default']!r}`",
            (row["wrong_value"] or "").replace("_", " "),
            where,
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


GENERATORS = {"rules": rules_table, "recall": recall_table, "options": options_table}


def render(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        return match.group(1) + GENERATORS[match.group(2)]() + match.group(4)

    return _BLOCK.sub(replace, text)


def main() -> None:
    DOC.write_text(render(DOC.read_text("utf-8")), "utf-8")


if __name__ == "__main__":
    main()
