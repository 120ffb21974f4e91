"""The order things happened in a failure text, which is not always the
order of its lines: Python prints a chained exception's cause first only
when the program ends (``root_cause_first`` in the engine uses this)."""

from __future__ import annotations

import re
from collections.abc import Callable

# Python prints a chained exception's cause first, but only when the program
# ends: log lines of the later failure come before it in the text although
# they happened after it. What precedes one of these markers (up to the next
# traceback) was raised before the exception that follows the marker.
_CHAINED = re.compile(
    r"The above exception was the direct cause of the following exception"
    r"|During handling of the above exception, another exception occurred"
)
_TRACEBACK = "Traceback (most recent call last)"


def chained_at(text: str) -> list[int]:
    """Where ``text`` has Python's exception-chaining lines (``_CHAINED``);
    read once per text, for the causal order and for the follow-on markers."""
    if "above exception" not in text:  # both lines say it: skip the scan of a long log
        return []
    return [m.start() for m in _CHAINED.finditer(text)]


def causal_order(text: str, chained: list[int] | None = None) -> Callable[[int], tuple[int, int]]:
    """A sort key for positions in ``text`` in the order things happened:
    a position in a chained exception's cause (before a ``_CHAINED`` marker,
    with no new traceback in between) comes before every other position.
    ``chained``: ``chained_at(text)``, when the caller has it already."""
    markers = sorted(
        [(at, True) for at in (chained_at(text) if chained is None else chained)]
        + [(m.start(), False) for m in re.finditer(re.escape(_TRACEBACK), text)]
    )

    def when(position: int) -> tuple[int, int]:
        following = next((chained for at, chained in markers if at > position), False)
        return (0 if following else 1, position)

    return when
