"""Reading fact values defensively: a saved ticket may hold anything."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def records(value: Any) -> list[Mapping[str, Any]]:
    """The mappings of a list value; [] for anything that is not a list."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, Mapping)]


def strings(value: Any) -> list[str]:
    """The strings of a list value; [] for anything that is not a list."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, str)]
