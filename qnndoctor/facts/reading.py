"""Reading fact values defensively: a saved ticket may hold anything."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


def records(value: Any) -> list[Mapping[str, Any]]:
    """The mappings of a list value; [] for anything that is not a list."""
    if not isinstance(value, list):
        return []
    return [item for item in value if type(item) is dict or isinstance(item, Mapping)]


def strings(value: Any) -> list[str]:
    """The strings of a list value; [] for anything that is not a list."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, str)]


def elements(value: Any) -> tuple[Any, ...]:
    """The items of a list value, of any type; () for anything that is not a list."""
    return tuple(value) if isinstance(value, list) else ()


_EMPTY: Mapping[str, Any] = {}


@dataclass(frozen=True)
class Fields:
    """A defensive reader of one JSON object whose shape the report schema
    leaves open (a probe's values, the smoke child's result): every accessor
    returns its default for a missing or wrong-typed value, never raises."""

    data: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, value: Any) -> Fields:
        """The reader of ``value``, empty unless it is a JSON object."""
        return cls(value if type(value) is dict or isinstance(value, Mapping) else _EMPTY)

    def __bool__(self) -> bool:
        return bool(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def value(self, key: str, default: Any = None) -> Any:
        """The value as it is (any JSON value), for showing it."""
        return self.data.get(key, default)

    def text(self, key: str) -> str | None:
        """The value if it is a string, else None."""
        found = self.data.get(key)
        return found if isinstance(found, str) else None

    def mapping(self, key: str) -> Fields:
        return Fields.of(self.data.get(key))

    def records(self, key: str) -> tuple[Fields, ...]:
        """The objects of a list value (other items are skipped)."""
        return tuple(Fields(item) for item in records(self.data.get(key)))

    def strings(self, key: str) -> tuple[str, ...]:
        return tuple(strings(self.data.get(key)))

    def elements(self, key: str) -> tuple[Any, ...]:
        return elements(self.data.get(key))

    def keys(self) -> tuple[str, ...]:
        return tuple(str(k) for k in self.data)

    def items(self) -> tuple[tuple[str, Any], ...]:
        return tuple((str(k), v) for k, v in self.data.items())

    def children(self) -> tuple[tuple[str, Fields], ...]:
        """(key, reader) for each value that is an object (others are skipped)."""
        return tuple((str(k), Fields(v)) for k, v in self.data.items() if isinstance(v, Mapping))
