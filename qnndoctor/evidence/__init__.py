"""Local evidence: what was tried on this machine and how it ended
(``store``: record / lookup in the user cache, JSON lines), and how the
resolver uses it (``apply``: a pair that passed here pins the companion, a
release whose every pair failed here is ruled out, with the evidence).

Evidence is keyed by a fingerprint of the facts that decide whether a pair
works (``store.fingerprint``): when they change, the old evidence no longer
applies. The format is documented in docs/bisect.md and docs/evidence.md.
"""

from __future__ import annotations

# The folder, its files and how they are written live in ``store`` alone.
from .store import FILE_NAME, disabled, present, store_dir

__all__ = ["FILE_NAME", "disabled", "present", "store_dir"]
