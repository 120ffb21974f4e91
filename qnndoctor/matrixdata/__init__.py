"""The runtime side of the matrix: loading the maintained data
(``qnndoctor.matrix``: SoCs, known issues, releases) into values.

The data itself lives in ``matrix/`` (shipped as ``qnndoctor.matrix``); the
maintainers' tool that regenerates ``releases.json`` is ``matrix/refresh/``
(not shipped). Here: ``releases`` (the release matrix as values),
``checked`` (a matrix file checked against its schema), ``update`` (a
published matrix downloaded into the user cache), ``command`` (``qnndoctor
recommend`` and ``qnndoctor matrix show|update``: arguments in, text out).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._layout import package_dir

if TYPE_CHECKING:
    from . import parsed_cache
    from .releases import ReleaseMatrix

# The release matrix's modules (and packaging's tags, logging, platform and
# subprocess with them) are imported when a release matrix is first loaded:
# `explain` reads only the SoC table (load_socs), and its start-up is timed
# (docs/speed.md).


def _empty_releases() -> ReleaseMatrix:
    from .releases import ReleaseMatrix

    return ReleaseMatrix((), (), {})


class MatrixError(Exception):
    """The matrix data is missing or malformed."""


@dataclass(frozen=True)
class Soc:
    part: str
    aliases: tuple[str, ...]
    marketing_names: tuple[str, ...]
    htp_arch: int | None
    qnn_soc_model: int | None
    linux_soc_ids: tuple[int, ...]
    windows_patterns: tuple[str, ...]


@dataclass(frozen=True)
class Matrix:
    socs: tuple[Soc, ...]
    source: str
    releases: ReleaseMatrix = field(default_factory=_empty_releases)
    releases_source: str | None = None
    notes: tuple[str, ...] = ()
    # The data files this matrix was read from (its identity: matrix_identity.py).
    files: tuple[Path, ...] = ()


def _soc(entry: dict[str, Any]) -> Soc:
    return Soc(
        part=str(entry["part"]),
        aliases=tuple(entry.get("part_aliases") or ()),
        marketing_names=tuple(entry.get("marketing_names") or ()),
        htp_arch=entry.get("htp_arch"),
        qnn_soc_model=entry.get("qnn_soc_model"),
        linux_soc_ids=tuple(int(i) for i in entry.get("linux_soc_ids") or ()),
        windows_patterns=tuple(entry.get("windows_processor_name_patterns") or ()),
    )


def user_matrix_dir() -> Path:
    """Where ``qnndoctor matrix update`` puts a newer release matrix."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("qnndoctor")) / "matrix"


def _parsed(path: Path, *, eager: bool) -> parsed_cache.Build:
    """Parse a releases document: ``eager`` builds every record now (a
    --matrix file: a bad one fails at once); one without releases is an error."""
    from .releases import ReleasesError, parse

    def build(_data: bytes, document: Any, issues: Any) -> ReleaseMatrix:
        loaded = parse(document, issues, eager=eager)
        if not loaded.releases:
            raise ReleasesError(f"{path}: contains no releases")
        return loaded

    return build


def _stamped(path: Path) -> parsed_cache.Build:
    """Check an updated matrix against the schema, once per content (checked.py)."""
    from .checked import checked_matrix

    def build(data: bytes, document: Any, issues: Any) -> ReleaseMatrix:
        return checked_matrix(path, data, document, issues, use_stamp=True)

    return build


def _releases(
    bundled_dir: Path, override: Path | None, *, cached: bool
) -> tuple[ReleaseMatrix, str | None, list[str], Path | None]:
    """``--matrix FILE`` first, then a valid user-cache update, then the bundled
    data. Known issues come from beside the chosen releases.json, else bundled.
    ``cached``: the installed matrix (not a folder of test data), whose
    parse is kept in the user cache."""
    from . import parsed_cache
    from .checked import read_checked
    from .releases import ReleasesError, read_documents

    notes: list[str] = []
    bundled_issues = bundled_dir / "known_issues.json"
    candidates: list[tuple[Path, str]] = []
    if override is not None:
        path = override / "releases.json" if override.is_dir() else override
        if not path.is_file():
            raise MatrixError(f"{override}: no such releases.json")
        candidates.append((path, f"--matrix {override}"))
    else:
        candidates.append((user_matrix_dir() / "releases.json", "updated matrix in the user cache"))
    candidates.append((bundled_dir / "releases.json", "bundled qnndoctor.matrix"))
    for path, label in candidates:
        if not path.is_file():
            continue
        beside = path.parent / "known_issues.json"
        issues = (
            beside if beside.is_file() else (bundled_issues if bundled_issues.is_file() else None)
        )
        try:
            # The updated matrix in the user cache is checked against the
            # schema (once per content, see checked.py); a file named with
            # --matrix is checked whole (every record built: hand-made test
            # matrices need not carry provenance); the bundled one is checked
            # by the tests.
            if label.startswith("--matrix"):
                loaded = _parsed(path, eager=True)(*read_documents(path, issues))
            else:
                read, build = (
                    (read_checked, _stamped(path))
                    if label.startswith("updated")
                    else (read_documents, _parsed(path, eager=False))
                )
                loaded = (  # parsed once per file content (parsed_cache.py)
                    parsed_cache.load(
                        path, issues, read, build, also_hash=(bundled_dir / "socs.json",)
                    )
                    if cached
                    else build(*read(path, issues))
                )
            if notes:
                notes.append(f"using the {label} ({path}) instead")
            return loaded, f"{label} ({path})", notes, path
        except ReleasesError as exc:
            if label.startswith("--matrix"):
                raise MatrixError(str(exc)) from exc
            notes.append(f"ignored the {label} ({path}): {exc}")
    return _empty_releases(), None, [*notes, "no release matrix found"], None


def load_socs(directory: Path | None = None) -> tuple[Soc, ...]:
    """Only the SoC table (cheap: diagnosis of a pasted log needs no releases)."""
    if directory is None:
        directory = package_dir("matrix")
        if directory is None:
            raise MatrixError("the qnndoctor.matrix package is missing from this installation")
    path = directory / "socs.json"
    try:
        data = json.loads(path.read_text("utf-8"))
        return tuple(_soc(e) for e in data["socs"])
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise MatrixError(f"{path}: {type(exc).__name__}: {exc}") from exc


@functools.cache
def load(directory: Path | None = None, releases: Path | None = None) -> Matrix:
    """The bundled matrix (or the one in ``directory``); ``releases`` is a
    releases.json (or its folder) given with ``--matrix``."""
    bundled = directory is None
    if directory is None:
        directory = package_dir("matrix")
        if directory is None:
            raise MatrixError("the qnndoctor.matrix package is missing from this installation")
    socs = load_socs(directory)
    release_matrix, release_source, notes, releases_path = _releases(
        directory, releases, cached=bundled
    )
    return Matrix(
        socs=socs,
        source="bundled qnndoctor.matrix" if bundled else str(directory),
        releases=release_matrix,
        releases_source=release_source,
        notes=tuple(notes),
        files=(*([releases_path] if releases_path else []), directory / "socs.json"),
    )


def load_or_empty(releases: Path | None = None) -> Matrix:
    """The matrix, or an empty one that says why: rules that need the matrix
    then find nothing, the rest of the diagnosis stands."""
    try:
        return load(None, releases)
    except MatrixError as exc:
        return Matrix(socs=(), source=f"unavailable: {exc}")


@dataclass(frozen=True)
class SocMatch:
    soc: Soc
    matched_by: str
    fact: str
    value: str


