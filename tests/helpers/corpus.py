"""The diagnosis corpus (tests/diagnosis_corpus/): one case by part and id."""

from __future__ import annotations

import json
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "diagnosis_corpus"


def corpus_case(part: str, case_id: str) -> dict[str, str]:
    """Case ``case_id`` of the part file ``part`` (a path under the corpus)."""
    cases = json.loads((CORPUS / part).read_text("utf-8"))["cases"]
    found: dict[str, str] = next(c for c in cases if c["id"] == case_id)
    return found
