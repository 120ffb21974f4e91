"""How qnndoctor knows its children's descendants: the marker variable put in
each child's environment, and (Linux) this process as their subreaper.

Below both the head start and containment: the head start needs these
before anything else is imported, so this module imports only ``os`` and
``sys`` at load time (containment.py says why only a process qnndoctor owns
becomes a subreaper).
"""

from __future__ import annotations

import sys

MARKER_VARIABLE = "QNNDOCTOR_CONTAINMENT"
PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
subreaper = False  # this process adopts its orphaned descendants (containment.py reads it)


def become_subreaper() -> bool:
    """Linux: this process adopts its orphaned descendants, so that what the
    session leaves is re-parented here, not to init. True if it now does."""
    global subreaper
    if subreaper or not sys.platform.startswith("linux"):
        return subreaper
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        subreaper = False
    return subreaper
