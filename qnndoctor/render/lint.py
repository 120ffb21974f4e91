"""Lint results as text (ruff-like), JSON, or SARIF 2.1.0 for code scanning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO

from .. import __version__
from ..lint import LintRun
from ..lint.rules import RULES

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def text(run: LintRun, out: TextIO, err: TextIO) -> None:
    for path, finding in run.findings:
        out.write(f"{path}:{finding.loc.line}:{finding.loc.col}: {finding.code} {finding.message}\n")
        out.write(f"  fix: {finding.fix}\n")
    for path, error in run.errors:
        err.write(f"{path}: error: {error}\n")
    count = len(run.findings)
    err.write(
        f"qnndoctor lint: {count} finding{'s' if count != 1 else ''} in {len(run.files)} file"
        f"{'s' if len(run.files) != 1 else ''} (onnxruntime-qnn {run.target.version})\n"
    )


def document(run: LintRun) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "tool": f"qnndoctor {__version__}",
        "onnxruntime_qnn": run.target.version,
        "options_data_release": run.target.data_release,
        "files": len(run.files),
        "findings": [
            {
                "path": path,
                "line": f.loc.line,
                "column": f.loc.col,
                "code": f.code,
                "rule": f.rule.name,
                "message": f.message,
                "fix": f.fix,
                "evidence": list(f.rule.evidence),
                "source": f.source,
            }
            for path, f in run.findings
        ],
        "errors": [{"path": path, "error": error} for path, error in run.errors],
    }


def _uri(path: str) -> str:
    p = Path(path)
    return p.as_posix() if not p.is_absolute() else p.as_uri()


def sarif(run: LintRun) -> dict[str, Any]:
    rules = [
        {
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.title},
            "help": {"text": f"{r.fix}\nEvidence: {'; '.join(r.evidence)}"},
            "defaultConfiguration": {"level": "warning"},
        }
        for r in RULES
        if r.scope == "code"
    ]
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results = [
        {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": "warning",
            "message": {"text": f"{f.message}. Fix: {f.fix}" + (f" (read at {f.source})" if f.source else "")},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(path)},
                        "region": {"startLine": max(f.loc.line, 1), "startColumn": max(f.loc.col, 1)},
                    }
                }
            ],
        }
        for path, f in run.findings
    ]
    notifications = [
        {
            "level": "error",
            "message": {"text": error},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(path)}}}],
        }
        for path, error in run.errors
    ]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "qnndoctor",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "invocations": [
                    {"executionSuccessful": not run.errors, "toolExecutionNotifications": notifications}
                ],
                "results": results,
            }
        ],
    }


def dump(doc: dict[str, Any], out: TextIO) -> None:
    out.write(json.dumps(doc, indent=2) + "\n")
