"""The facts model: what the probes (and qnndoctor's binary readers) found.

Facts are plain JSON values wrapped in immutable objects. A saved report's
``facts`` section loads back into the same objects, so rules and the
resolver can re-diagnose an old ticket with a newer matrix.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

OK = "ok"
ERROR = "error"


@dataclass(frozen=True)
class ProbeFacts:
    """One probe's result: values, and for each value where it came from."""

    name: str
    status: str
    values: Mapping[str, Any] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)
    error: Mapping[str, Any] | None = None
    duration_ms: float | None = None

    @property
    def ok(self) -> bool:
        return self.status == OK

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def error_text(self) -> str:
        if not self.error:
            return "unknown error"
        return f"{self.error.get('type', 'Error')}: {self.error.get('message', '')}".strip()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "status": self.status,
            "values": dict(self.values),
            "sources": dict(self.sources),
        }
        if self.error is not None:
            data["error"] = dict(self.error)
        if self.duration_ms is not None:
            data["duration_ms"] = self.duration_ms
        return data

    @classmethod
    def from_json(cls, name: str, data: Mapping[str, Any]) -> ProbeFacts:
        status = data.get("status")
        if status not in (OK, ERROR):
            return cls(name, ERROR, error={"type": "BadFacts", "message": f"status {status!r}"})
        values = data.get("values")
        sources = data.get("sources")
        return cls(
            name=name,
            status=str(status),
            values=MappingProxyType(dict(values)) if isinstance(values, Mapping) else {},
            sources=MappingProxyType(dict(sources)) if isinstance(sources, Mapping) else {},
            error=data.get("error") if isinstance(data.get("error"), Mapping) else None,
            duration_ms=data.get("duration_ms"),
        )

    @classmethod
    def failed(cls, name: str, kind: str, message: str) -> ProbeFacts:
        return cls(name, ERROR, error={"type": kind, "message": message})


@dataclass(frozen=True)
class Facts:
    """All probes' facts, by probe name."""

    probes: Mapping[str, ProbeFacts]

    def __iter__(self) -> Iterator[ProbeFacts]:
        return iter(self.probes.values())

    def probe(self, name: str) -> ProbeFacts | None:
        return self.probes.get(name)

    def ok(self, name: str) -> bool:
        probe = self.probes.get(name)
        return probe is not None and probe.ok

    def value(self, probe: str, key: str, default: Any = None) -> Any:
        found = self.probes.get(probe)
        if found is None or not found.ok:
            return default
        return found.get(key, default)

    def with_probe(self, probe: ProbeFacts) -> Facts:
        return Facts(MappingProxyType({**self.probes, probe.name: probe}))

    def to_json(self) -> dict[str, Any]:
        return {name: probe.to_json() for name, probe in self.probes.items()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Facts:
        probes = {
            str(name): ProbeFacts.from_json(str(name), body)
            if isinstance(body, Mapping)
            else ProbeFacts.failed(str(name), "BadFacts", "not an object")
            for name, body in data.items()
        }
        return cls(MappingProxyType(probes))


def bundles(facts: Facts) -> list[Mapping[str, Any]]:
    """The onnxruntime-qnn installs the qnn_bundled probe found."""
    found = facts.value("qnn_bundled", "bundles", []) or []
    return [b for b in found if isinstance(b, Mapping)]


def bundle_libraries(bundle: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every library of one install, across its library folders."""
    for folder in bundle.get("folders", []):
        yield from folder.get("libraries", [])


def pe_details(facts: Facts, lib: Mapping[str, Any]) -> Mapping[str, Any]:
    """What qnndoctor's PE reader found for a bundled library ({} if nothing)."""
    found = (facts.value("binaries", "pe", {}) or {}).get(lib.get("path"))
    return found if isinstance(found, Mapping) else {}


def target_pip(facts: Facts) -> str:
    """Whether the target can run ``-m pip``: ``present``; ``absent`` (but
    ``-m ensurepip`` can install the pip bundled with its Python);
    ``unobtainable`` (no pip and no ensurepip); ``unknown`` (a ticket from
    before the installs probe looked, or a probe that failed): then commands
    are printed as they always were."""
    tools = facts.value("installs", "pip_tools")
    if not isinstance(tools, Mapping):
        return "unknown"
    pip, ensurepip = tools.get("pip"), tools.get("ensurepip")
    if not isinstance(pip, Mapping) or "found" not in pip:
        return "unknown"
    if pip.get("found"):
        return "present"
    return "absent" if isinstance(ensurepip, Mapping) and ensurepip.get("found") else "unobtainable"


def externally_managed(facts: Facts) -> str | None:
    """The PEP 668 marker that makes pip refuse to install into the target
    (a system Python outside a venv), or None."""
    marker = facts.value("interpreter", "externally_managed")
    return str(marker) if marker else None
