"""Local evidence: what was tried on this machine and how it ended
(``store``: record / lookup in the user cache, JSON lines), and how the
resolver uses it (``apply``: a pair that passed here pins the companion, a
release whose every pair failed here is ruled out, with the evidence).

Evidence is keyed by a fingerprint of the facts that decide whether a pair
works (``store.fingerprint``): when they change, the old evidence no longer
applies. The format is documented in docs/bisect.md.
"""

from __future__ import annotations

import os
from pathlib import Path

FILE_NAME = "pairs.jsonl"


def store_dir() -> Path:
    """``QNNDOCTOR_EVIDENCE_DIR`` if set, else the user cache's ``evidence/``."""
    override = os.environ.get("QNNDOCTOR_EVIDENCE_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("qnndoctor")) / "evidence"


def disabled() -> bool:
    """``QNNDOCTOR_NO_EVIDENCE=1``: neither read nor written (the test suite)."""
    return os.environ.get("QNNDOCTOR_NO_EVIDENCE", "") not in ("", "0")


def present() -> bool:
    """Whether there is evidence to read (a stat, no imports): every check asks."""
    return not disabled() and (store_dir() / FILE_NAME).is_file()
