"""A Python installer that decides with qnndoctor before it copies anything.

Run with the interpreter the application will use:
    python installer.py [PATH-TO-PYTHON]
"""

from __future__ import annotations

import sys

import qnndoctor


def preflight(python: str | None) -> int:
    # No smoke session yet: onnxruntime-qnn may not be installed at all.
    report = qnndoctor.check(python, smoke=False)
    if report.error is not None:
        print(f"cannot check {python or sys.executable}: {report.error}", file=sys.stderr)
        return int(report.exit_code)
    for finding in report.findings:
        if finding.severity == "error":
            print(f"{finding.title}\n  {finding.fix}", file=sys.stderr)
            for command in finding.commands:
                print(f"    {command}", file=sys.stderr)
    recommendation = report.recommendation
    if recommendation is not None and recommendation.status == "ok":
        print(f"install onnxruntime-qnn {recommendation.version}:")
        for command in recommendation.commands:
            print(f"    {command}")
    # Keep the redacted report for support (the same JSON as `check --json`).
    with open("qnndoctor-preflight.json", "w", encoding="utf-8") as handle:
        handle.write(report.to_json())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(preflight(sys.argv[1] if len(sys.argv) > 1 else None))
