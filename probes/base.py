"""The probe interface: a probe reads the environment and returns values plus,
for each value, where it came from."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Any, Dict, Optional


class ProbeOutput:
    """Values found by one probe and the source of each (file, env var, API)."""

    def __init__(self) -> None:
        self.values: Dict[str, Any] = {}
        self.sources: Dict[str, str] = {}
        # Raw values for later probes only (e.g. undecodable paths): never printed.
        self.private: Dict[str, Any] = {}

    def put(self, key: str, value: Any, source: str) -> None:
        self.values[key] = value
        self.sources[key] = source


class Context:
    """What the probes share: options from the caller and earlier results."""

    def __init__(self, options: Optional[Dict[str, Any]] = None) -> None:
        self.options: Dict[str, Any] = dict(options or {})
        self.results: Dict[str, ProbeOutput] = {}

    def value(self, probe: str, key: str, default: Any = None) -> Any:
        """A value of an earlier probe, or ``default`` if that probe failed."""
        result = self.results.get(probe)
        if result is None:
            return default
        return result.values.get(key, default)

    def private(self, probe: str, key: str, default: Any = None) -> Any:
        result = self.results.get(probe)
        if result is None:
            return default
        return result.private.get(key, default)
