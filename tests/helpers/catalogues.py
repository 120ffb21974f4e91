"""Small diagnosis catalogues written for a test: entries with every
required field filled, and unrelated filler entries (rarity is measured
against the whole catalogue, as in the real one)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from qnndoctor.diagnosis import catalogue


def write_catalogue(folder: Path, signatures: list[dict[str, Any]]) -> catalogue.Catalogue:
    base = {
        "symptom_examples": ["x"],
        "distinguishing_facts": [],
        "cause": "c",
        "fix": "f",
        "confidence": "documented",
        "sources": ["https://example.org/a"],
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "signatures.json").write_text(
        json.dumps({"schema_version": 2, "signatures": [{**base, **s} for s in signatures]})
    )
    (folder / "harmless.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "harmless": [
                    {
                        "id": "cosmetic",
                        "regex": "Initializing HtpProvider",
                        "why": "w",
                        "sources": ["https://example.org/b"],
                    }
                ],
            }
        )
    )
    return catalogue.load_from(folder)


# Rarity is measured against the whole catalogue: unrelated entries, as in the real one.
_NATO = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike"
# Rarity is measured against the whole catalogue: unrelated entries, as in the real one.
FILLER = [
    {
        "id": f"other-{n}",
        "title": f"Unrelated cause number {n} of the {word} kind",
        "patterns": [{"regex": f"unrelated message {n}", "weight": 9}],
        "symptom_examples": [f"{word} went wrong in step {n}"],
    }
    for n, word in enumerate(_NATO.split())
]
