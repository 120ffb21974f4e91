"""Rules about non-ASCII paths."""

from __future__ import annotations

from collections.abc import Iterator

from ..facts.probed import Facts
from ..matrixdata import Matrix
from ._common import target_is_windows
from .declare import rule
from .findings import Evidence, Finding, FindingKind, Fix, Severity, make

NON_ASCII = FindingKind("non-ascii-path", Severity.WARNING, "Paths with non-ASCII characters")

# Paths the QNN libraries or the model loader actually open.
_CRITICAL = (
    "interpreter",
    "prefix",
    "site-packages",
    "package ",
    "model",
    "tempdir",
    "env TEMP",
    "env TMP",
    "QNN SDK",
)


@rule(needs=("paths",), emits=(NON_ASCII,))
def non_ascii_paths(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    flagged = facts.value("paths", "non_ascii", []) or []
    if not flagged:
        return
    code_page = facts.value("paths", "ansi_code_page")
    lines = []
    severity = Severity.WARNING
    for entry in flagged:
        chars = ", ".join(f"{c['char']} ({c['codepoint']})" for c in entry.get("non_ascii", []))
        if entry.get("undecodable_bytes"):
            chars = (chars + ", " if chars else "") + "bytes not valid in the filesystem encoding"
        lines.append(f"{entry['label']}: {entry['path']} [{chars}]")
        unmappable = entry.get("encodable_in_ansi_code_page") is False
        if target_is_windows(facts) and unmappable and str(entry["label"]).startswith(_CRITICAL):
            severity = Severity.ERROR
    explanation = (
        "QNN and parts of onnxruntime pass paths through narrow-character APIs. "
        + (
            f"On Windows those use the ANSI code page ({code_page}); a character it cannot "
            'represent fails with "No mapping for the Unicode character exists in the target '
            'multi-byte code page", and even representable ones have broken QNN builds. '
            if code_page
            else "Non-ASCII paths have broken QNN builds before. "
        )
        + "Affected: "
        + "; ".join(lines)
    )
    yield make(
        NON_ASCII,
        explanation,
        (Evidence("paths.non_ascii", flagged), Evidence("paths.ansi_code_page", code_page)),
        Fix(
            "Put the virtual environment, the models and the temp folder under an ASCII-only "
            + (
                "path (e.g. C:\\ai\\venv, and TEMP=C:\\ai\\tmp for the app's process)."
                if target_is_windows(facts)
                else "path (e.g. /opt/ai/venv, and TMPDIR=/opt/ai/tmp for the app's process)."
            ),
        ),
        severity=severity,
    )
