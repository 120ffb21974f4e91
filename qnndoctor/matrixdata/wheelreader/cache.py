"""Records of files and releases, and the per-file cache keyed by (filename, sha256)."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from packaging.utils import (
    parse_wheel_filename,
)
from packaging.version import Version

from .common import (
    CACHE_VERSION,
    Log,
)
from .index import (
    IndexFile,
)
from .records import Analysis

# --------------------------------------------------------------------------
# Records


def platform_bucket(platform_tags: Sequence[str]) -> str:
    """One platform name per wheel: Windows tags as they are, Linux tags
    (manylinux/musllinux/linux) by CPU, anything else as found."""
    buckets: set[str] = set()
    for tag in platform_tags:
        linux = re.match(r"^(?:manylinux\d*|musllinux|linux)(?:_\d+_\d+)?_(.+)$", tag)
        if linux:
            buckets.add(f"linux_{linux.group(1)}")
        else:
            buckets.add(tag)
    return "+".join(sorted(buckets)) if buckets else "unknown"


def era_of(version: Version) -> str:
    return "monolithic-1.x" if version.major < 2 else "plugin-2.x"


def file_record(index_file: IndexFile, analysis: Analysis) -> dict[str, Any]:
    """The releases.json record of one wheel."""
    _, _, _, tags = parse_wheel_filename(index_file.filename)
    platform_tags = sorted({t.platform for t in tags})
    libraries = analysis.libraries
    requires_python = analysis.requires_python or index_file.requires_python
    if analysis.requires_python:
        rp_source: str | None = "metadata"
    elif index_file.requires_python:
        rp_source = "index"
    else:
        rp_source = None
    folders = sorted({lib.path.rsplit("/", 1)[0] for lib in libraries if "/" in lib.path})
    return {
        # No URL: filename + sha256 identify the wheel on any mirror, and a
        # committed matrix must not name a package-registry host.
        "filename": index_file.filename,
        "size": index_file.size if index_file.size is not None else analysis.file_size,
        "sha256": index_file.sha256,
        "upload_time": index_file.upload_time,
        "yanked": index_file.yanked,
        "yanked_reason": index_file.yanked_reason,
        "python_tags": sorted({t.interpreter for t in tags}),
        "abi_tags": sorted({t.abi for t in tags}),
        "platform_tags": platform_tags,
        "platform": platform_bucket(platform_tags),
        "requires_python": requires_python,
        "requires_python_source": rp_source,
        "requires_dist": list(analysis.requires_dist),
        "requires_dist_source": "metadata" if analysis.metadata_read else None,
        "library_folders": folders,
        "libraries": [lib.to_json() for lib in libraries],
        "qnn_libraries_present": sorted(
            {lib.kind for lib in libraries if not lib.kind.startswith("ort_")}
        ),
        "stub_hexagon_versions": sorted(
            {
                lib.hexagon_version
                for lib in libraries
                if lib.kind == "htp_stub" and lib.hexagon_version
            }
        ),
        "skel_hexagon_versions": sorted(
            {
                lib.hexagon_version
                for lib in libraries
                if lib.kind == "htp_skel" and lib.hexagon_version
            }
        ),
        "signed_catalogs": sorted(
            {lib.path.rsplit("/", 1)[-1] for lib in libraries if lib.kind == "signed_catalog"}
        ),
        "qnn_version": analysis.qnn_version.to_json() if analysis.qnn_version else None,
        "qnn_version_note": analysis.qnn_version_note,
        "fetched_whole": analysis.fetched_whole,
        "bytes_read": analysis.bytes_read,
        "requests": analysis.requests,
        "error": analysis.error,
    }


def _earliest(times: Iterable[str | None]) -> str | None:
    def key(text: str) -> tuple[int, Any]:
        try:
            return 0, dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return 1, text

    present = [t for t in times if t]
    parsed = [(key(t), t) for t in present]
    known = [p for p in parsed if p[0][0] == 0]
    if known:
        return min(known, key=lambda p: p[0][1])[1]
    return min(present) if present else None


def release_record(version: Version, files: Sequence[dict[str, Any]]) -> dict[str, Any]:
    ordered = sorted(files, key=lambda f: str(f["filename"]))
    dists = {
        tuple(f["requires_dist"])
        for f in ordered
        if f["error"] is None and f["requires_dist_source"] == "metadata"
    }
    return {
        "version": str(version),
        "prerelease": version.is_prerelease,
        "era": era_of(version),
        "upload_time": _earliest(f["upload_time"] for f in ordered),
        "yanked": all(f["yanked"] for f in ordered),
        "files": ordered,
        "requires_dist_differs_between_files": len(dists) > 1,
    }


# --------------------------------------------------------------------------
# Cache: per-file analyses keyed by (filename, sha256)


class Cache:
    """One JSON file per analysed wheel, plus the records of a previous
    releases.json: either spares reading that wheel again."""

    def __init__(self, directory: Path | None, log: Log) -> None:
        self.directory = directory
        self.log = log
        self.previous: dict[tuple[str, str], Analysis] = {}
        if directory is not None:
            try:
                directory.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                log.warning(f"cache folder {directory} unusable ({exc}); running without a cache")
                self.directory = None

    def _path(self, filename: str, sha256: str) -> Path | None:
        if self.directory is None or "/" in filename or "\\" in filename:
            return None
        return self.directory / f"{sha256}-{filename}.json"

    def load_previous(self, path: Path) -> None:
        """Reuse the error-free records of an earlier output of this tool."""
        try:
            document = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            self.log.warning(f"previous matrix {path} unreadable ({exc}); not used as a cache")
            return
        provenance = document.get("provenance") if isinstance(document, dict) else None
        if not isinstance(provenance, dict) or provenance.get("cache_version") != CACHE_VERSION:
            self.log.debug(f"previous matrix {path} is from another tool version; not reused")
            return
        count = 0
        releases = document.get("releases")
        for release in releases if isinstance(releases, list) else ():
            files = release.get("files") if isinstance(release, dict) else None
            for record in files if isinstance(files, list) else ():
                try:
                    if record.get("error") is None and record.get("sha256"):
                        key = (str(record["filename"]), str(record["sha256"]))
                        self.previous[key] = Analysis.from_record(record)
                        count += 1
                except (KeyError, TypeError, ValueError, AttributeError):
                    continue
        self.log.debug(f"previous matrix {path}: {count} reusable records")

    def get(self, filename: str, sha256: str | None) -> Analysis | None:
        if not sha256:
            return None
        path = self._path(filename, sha256)
        if path is not None:
            try:
                entry = json.loads(path.read_text("utf-8"))
                if (
                    entry.get("cache_version") == CACHE_VERSION
                    and entry.get("filename") == filename
                    and entry.get("sha256") == sha256
                ):
                    return Analysis.from_json(entry["analysis"])
            except FileNotFoundError:
                pass
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
                self.log.debug(f"cache entry {path.name} unreadable ({exc}); reading the wheel")
        return self.previous.get((filename, sha256))

    def put(self, filename: str, sha256: str | None, analysis: Analysis) -> None:
        if not sha256 or analysis.error is not None:
            return  # failures are retried next time
        path = self._path(filename, sha256)
        if path is None:
            return
        entry = {
            "cache_version": CACHE_VERSION,
            "filename": filename,
            "sha256": sha256,
            "analysis": analysis.to_json(),
        }
        try:
            write_text_atomically(path, json.dumps(entry, sort_keys=True))
        except OSError as exc:
            self.log.warning(f"could not write cache entry {path} ({exc})")


def write_text_atomically(path: Path, text: str) -> None:
    """``text`` at ``path`` in one step (``safejson.replace_atomically``), its
    folder made first: the wheel cache's entries and the refresh tool's outputs."""
    from ...safejson import replace_atomically

    path.parent.mkdir(parents=True, exist_ok=True)
    replace_atomically(path, text.encode("utf-8"), durable=False)
