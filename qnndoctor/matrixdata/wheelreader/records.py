"""What is read out of one wheel, as values: its libraries, its QNN version
and the whole analysis (the part of a file record that is cached), with
their JSON forms (cache entries and releases.json records)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Library:
    """A native library in a wheel (one ``classify()`` kind)."""

    path: str
    kind: str
    size: int
    hexagon_version: int | None
    machine: str | None = None
    machine_source: str | None = None
    product_version: str | None = None
    file_version: str | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "size": self.size,
            "hexagon_version": self.hexagon_version,
            "machine": self.machine,
            "machine_source": self.machine_source,
            "product_version": self.product_version,
            "file_version": self.file_version,
            "error": self.error,
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Library:
        return Library(
            path=str(data["path"]),
            kind=str(data["kind"]),
            size=int(data["size"]),
            hexagon_version=_opt_int(data.get("hexagon_version")),
            machine=_opt_str(data.get("machine")),
            machine_source=_opt_str(data.get("machine_source")),
            product_version=_opt_str(data.get("product_version")),
            file_version=_opt_str(data.get("file_version")),
            error=_opt_str(data.get("error")),
        )


@dataclass(frozen=True)
class QnnVersion:
    """The bundled QNN SDK version and what says so."""

    version: str
    build: str | None
    evidence: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "build": self.build, "evidence": list(self.evidence)}

    @staticmethod
    def from_json(data: Any) -> QnnVersion | None:
        if not isinstance(data, Mapping):
            return None
        return QnnVersion(
            version=str(data["version"]),
            build=_opt_str(data.get("build")),
            evidence=tuple(str(e) for e in data.get("evidence") or ()),
        )


@dataclass(frozen=True)
class Analysis:
    """What was read out of one wheel (the cacheable part of its record)."""

    requires_python: str | None = None  # from METADATA
    requires_dist: tuple[str, ...] = ()
    metadata_read: bool = False
    libraries: tuple[Library, ...] = ()
    qnn_version: QnnVersion | None = None
    qnn_version_note: str | None = None
    fetched_whole: bool = False
    bytes_read: int = 0
    requests: int = 0
    file_size: int | None = None  # as the server told it (for indexes without sizes)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "requires_python": self.requires_python,
            "requires_dist": list(self.requires_dist),
            "metadata_read": self.metadata_read,
            "libraries": [lib.to_json() for lib in self.libraries],
            "qnn_version": self.qnn_version.to_json() if self.qnn_version else None,
            "qnn_version_note": self.qnn_version_note,
            "fetched_whole": self.fetched_whole,
            "bytes_read": self.bytes_read,
            "requests": self.requests,
            "file_size": self.file_size,
            "error": self.error,
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Analysis:
        """Strict: an entry missing a field raises (KeyError), so a damaged
        cache entry is read again rather than trusted."""
        return Analysis(
            requires_python=_opt_str(data["requires_python"]),
            requires_dist=tuple(str(r) for r in data["requires_dist"]),
            metadata_read=bool(data.get("metadata_read")),
            libraries=tuple(Library.from_json(lib) for lib in data["libraries"]),
            qnn_version=QnnVersion.from_json(data["qnn_version"]),
            qnn_version_note=_opt_str(data["qnn_version_note"]),
            fetched_whole=bool(data["fetched_whole"]),
            bytes_read=int(data["bytes_read"]),
            requests=int(data["requests"]),
            file_size=_opt_int(data.get("file_size", data.get("size"))),
            error=_opt_str(data["error"]),
        )

    @staticmethod
    def from_record(record: Mapping[str, Any]) -> Analysis:
        """The analysis inside a releases.json file record (``--previous``)."""
        from_metadata = record["requires_python_source"] == "metadata"
        return replace(
            Analysis.from_json(record),
            requires_python=_opt_str(record["requires_python"]) if from_metadata else None,
            metadata_read=record["requires_dist_source"] == "metadata",
        )


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)
