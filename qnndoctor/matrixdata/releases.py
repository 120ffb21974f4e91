"""The release matrix (``matrix/releases.json``) and known issues as values.

Written by the maintainers' refresh tool (``matrix/refresh/``, not shipped) from
the published wheels; read here into
immutable objects for the resolver.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from .. import safejson


class ReleasesError(Exception):
    """releases.json or known_issues.json is missing or malformed."""


@dataclass(frozen=True)
class LibraryFolder:
    """One folder of native libraries in a wheel. 2.1+ win_amd64 wheels carry
    two (``libs/amd64`` and ``libs/arm64ec``); onnxruntime_qnn picks one at run time."""

    path: str
    header: Mapping[str, str | None]  # library kind -> machine in the file header
    # Kinds whose machine was read from the PE load config: only these tell
    # ARM64X from ARM64 and ARM64EC from AMD64 (a header says only 0xAA64/0x8664).
    certain: Mapping[str, str]


@dataclass(frozen=True)
class WheelFile:
    filename: str
    version: Version
    tags: frozenset[Tag]
    platform: str
    size: int | None
    sha256: str | None
    yanked: bool
    requires_python: str | None
    requires_dist: tuple[str, ...]
    stub_hexagon_versions: tuple[int, ...]
    qnn_version: str | None
    folders: tuple[LibraryFolder, ...]
    error: str | None

    @property
    def library_machines(self) -> dict[str, str | None]:
        """Header machine per library kind, first folder first (for summaries)."""
        machines: dict[str, str | None] = {}
        for folder in self.folders:
            for kind, machine in folder.header.items():
                machines.setdefault(kind, machine)
        return machines

    @property
    def python_tags(self) -> tuple[str, ...]:
        return tuple(sorted({t.interpreter for t in self.tags}, key=python_tag_order))


def python_tag_order(tag: str) -> tuple[int, int, str]:
    """cp38 before cp310 (numbers, not strings); other tags after them."""
    digits = tag[2:].rstrip("t")
    if tag.startswith("cp") and len(digits) >= 2 and digits.isdigit():
        return int(digits[0]), int(digits[1:]), tag
    return 99, 0, tag


@dataclass(frozen=True)
class Release:
    version: Version
    era: str
    raw_files: tuple[Mapping[str, Any], ...] = field(repr=False, compare=False)
    # The companion experiments' rows (matrix/refresh/companions.py), as read.
    companions: tuple[Mapping[str, Any], ...] = field(default=(), repr=False, compare=False)

    @functools.cached_property
    def files(self) -> tuple[WheelFile, ...]:
        """Built on first use: a recommendation usually reads one or two
        releases of the ~250 wheels (startup time matters for `check`)."""
        return tuple(_file(f, self.version) for f in self.raw_files)

    @property
    def prerelease(self) -> bool:
        return self.version.is_prerelease


@dataclass(frozen=True)
class KnownIssue:
    id: str
    title: str
    versions: SpecifierSet
    platforms: tuple[str, ...] | None
    effect: str  # "rule-out" or "pin-companion"
    companion_pin: str | None
    explanation: str
    confidence: str
    sources: tuple[str, ...]

    def applies(self, version: Version, platform: str) -> bool:
        if not self.versions.contains(version, prereleases=True):
            return False
        return self.platforms is None or platform in self.platforms


@dataclass(frozen=True)
class ReleaseMatrix:
    releases: tuple[Release, ...]  # newest first
    known_issues: tuple[KnownIssue, ...]
    provenance: Mapping[str, Any]
    # Answers computed from this matrix (by the resolver), per target: bound
    # to this instance, never shared with an equal-looking other matrix.
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)


def _file(entry: Mapping[str, Any], release_version: Version) -> WheelFile:
    filename = str(entry["filename"])
    pythons, abis, platforms = (entry.get(k) for k in ("python_tags", "abi_tags", "platform_tags"))
    if pythons and abis and platforms:
        # The refresh tool records the filename's tag sets: no need to parse it.
        version = release_version
        tags = frozenset(Tag(i, a, p) for i in pythons for a in abis for p in platforms)
    else:
        try:
            _name, version, _build, tags = parse_wheel_filename(filename)
        except InvalidWheelFilename as exc:
            raise ReleasesError(f"bad wheel file name {filename!r}: {exc}") from exc
    headers: dict[str, dict[str, str | None]] = {}
    certain: dict[str, dict[str, str]] = {}
    for lib in entry.get("libraries") or []:
        folder = str(lib.get("path", "")).rsplit("/", 1)[0]
        kind = str(lib.get("kind"))
        headers.setdefault(folder, {}).setdefault(kind, lib.get("machine"))
        if lib.get("machine_source") == "pe-load-config" and lib.get("machine"):
            certain.setdefault(folder, {}).setdefault(kind, str(lib["machine"]))
    folders = tuple(
        LibraryFolder(path, header, certain.get(path, {}))
        for path, header in sorted(headers.items())
    )
    qnn = entry.get("qnn_version") or {}
    return WheelFile(
        filename=filename,
        version=version,
        tags=frozenset(tags),
        platform=str(entry.get("platform") or "other"),
        size=entry.get("size"),
        sha256=entry.get("sha256"),
        yanked=bool(entry.get("yanked")),
        requires_python=entry.get("requires_python"),
        requires_dist=tuple(str(r) for r in entry.get("requires_dist") or ()),
        stub_hexagon_versions=tuple(int(v) for v in entry.get("stub_hexagon_versions") or ()),
        qnn_version=qnn.get("version") if isinstance(qnn, Mapping) else None,
        folders=folders,
        error=entry.get("error"),
    )


# What ``_file`` reads of a wheel record besides its libraries and QNN version.
_FILE_KEYS = (
    "filename",
    "python_tags",
    "abi_tags",
    "platform_tags",
    "platform",
    "size",
    "sha256",
    "yanked",
    "requires_python",
    "requires_dist",
    "stub_hexagon_versions",
    "error",
)
_LIBRARY_KEYS = ("path", "kind", "machine", "machine_source")


def compact_file(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a wheel record that ``_file`` reads, as a record of the
    same shape (``_file`` makes the same ``WheelFile`` of it): per library
    folder and kind, the first library and the first whose machine came from
    the PE load config, named by its folder. About an eighth of the bytes."""
    kept = {key: entry[key] for key in _FILE_KEYS if key in entry}
    libraries = []
    first: set[tuple[str, str]] = set()
    certain: set[tuple[str, str]] = set()
    for lib in entry.get("libraries") or []:
        where = (str(lib.get("path", "")).rsplit("/", 1)[0], str(lib.get("kind")))
        is_certain = bool(lib.get("machine_source") == "pe-load-config" and lib.get("machine"))
        if where in first and (not is_certain or where in certain):
            continue
        first.add(where)
        if is_certain:
            certain.add(where)
        kept_lib = {key: lib[key] for key in _LIBRARY_KEYS if key in lib}
        path = kept_lib.get("path")
        if isinstance(path, str) and "/" in path:  # only its folder is read
            kept_lib["path"] = path.rsplit("/", 1)[0] + "/"
        libraries.append(kept_lib)
    kept["libraries"] = libraries
    qnn = entry.get("qnn_version")
    kept["qnn_version"] = {"version": qnn.get("version")} if isinstance(qnn, Mapping) else qnn
    return kept


def compact_document(releases: Mapping[str, Any]) -> dict[str, Any]:
    """What ``parse`` reads of a releases.json document, with compacted wheel
    records: the form the parsed-matrix cache keeps (``parsed_cache.py``)."""
    return {
        "provenance": releases.get("provenance"),
        "releases": [
            {
                **{key: entry[key] for key in ("version", "era", "companions") if key in entry},
                "files": [compact_file(f) for f in entry.get("files") or ()],
            }
            for entry in releases["releases"]
        ],
    }


def _issue(entry: Mapping[str, Any]) -> KnownIssue:
    try:
        versions = SpecifierSet(str(entry["onnxruntime_qnn"]))
    except InvalidSpecifier as exc:
        raise ReleasesError(f"known issue {entry.get('id')}: {exc}") from exc
    platforms = entry.get("platforms")
    return KnownIssue(
        id=str(entry["id"]),
        title=str(entry["title"]),
        versions=versions,
        platforms=tuple(platforms) if platforms else None,
        effect=str(entry.get("effect", "rule-out")),
        companion_pin=entry.get("companion_pin"),
        explanation=str(entry.get("explanation", "")),
        confidence=str(entry.get("confidence", "field-report")),
        sources=tuple(str(s) for s in entry.get("sources") or ()),
    )


def parse(
    releases: Mapping[str, Any], issues: Mapping[str, Any] | None, *, eager: bool = False
) -> ReleaseMatrix:
    """``eager`` builds every wheel record now, so a bad one fails here."""
    try:
        parsed = []
        for entry in releases["releases"]:
            version = Version(str(entry["version"]))
            parsed.append(
                Release(
                    version=version,
                    era=str(
                        entry.get("era")
                        or ("plugin-2.x" if version.major >= 2 else "monolithic-1.x")
                    ),
                    raw_files=tuple(entry.get("files") or ()),
                    companions=tuple(
                        c for c in entry.get("companions") or () if isinstance(c, dict)
                    ),
                )
            )
        known = tuple(_issue(e) for e in (issues or {}).get("issues") or ())
    except (KeyError, TypeError, InvalidVersion) as exc:
        raise ReleasesError(f"malformed matrix: {type(exc).__name__}: {exc}") from exc
    parsed.sort(key=lambda r: r.version, reverse=True)
    if eager:
        try:
            for release in parsed:
                _ = release.files
        except (KeyError, TypeError, ValueError) as exc:
            raise ReleasesError(f"malformed matrix: {type(exc).__name__}: {exc}") from exc
    return ReleaseMatrix(tuple(parsed), known, dict(releases.get("provenance") or {}))


def read_documents(releases_path: Path, issues_path: Path | None) -> tuple[bytes, Any, Any]:
    """The bytes of a releases.json, its document (an object) and the known
    issues' document (None without ``issues_path``)."""
    try:
        data = releases_path.read_bytes()
        releases = safejson.loads(data, str(releases_path))
        issues = safejson.loads(issues_path.read_bytes(), str(issues_path)) if issues_path else None
    except safejson.BadJSON as exc:
        raise ReleasesError(str(exc)) from exc
    except OSError as exc:
        raise ReleasesError(f"{releases_path}: {type(exc).__name__}: {exc}") from exc
    if not isinstance(releases, dict):
        raise ReleasesError(f"{releases_path}: not a JSON object")
    return data, releases, issues


def load(releases_path: Path, issues_path: Path | None, *, eager: bool = False) -> ReleaseMatrix:
    """A releases.json, with the known issues from ``issues_path`` (if any)."""
    _data, releases, issues = read_documents(releases_path, issues_path)
    return parse(releases, issues, eager=eager)
