"""The refresh itself: read the index page, analyse every wheel not cached
(in parallel), and assemble the releases.json document; and the check that a
new matrix does not silently drop what the current one lists."""

from __future__ import annotations

import datetime as dt
import json
import ssl
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from qnndoctor import __version__

from .cache import Cache, file_record, release_record
from .common import CACHE_VERSION, DEFAULT_PROJECT, SCHEMA_VERSION, Log
from .index import Http, IndexFile, IndexPage, fetch_index
from .pip_config import PIP_DEFAULT, Setting, public_url
from .records import Analysis
from .wheel import load_probes, read_wheel


@dataclass(frozen=True)
class Options:
    """Everything one refresh needs (the CLI fills it in)."""

    index: Setting
    project: str = DEFAULT_PROJECT
    cache_dir: Path | None = None
    previous: Path | None = None
    limit: int | None = None
    timeout: float = 60.0
    jobs: int = 8
    attempts: int = 3
    backoff: float = 0.5
    verify: ssl.SSLContext | bool = True


@dataclass(frozen=True)
class Stats:
    """What one run cost; printed as the summary line."""

    files: int
    from_cache: int
    by_range: int
    fetched_whole: int
    errors: int
    requests: int
    bytes_read: int
    bytes_total: int
    seconds: float

    def summary(self) -> str:
        percent = 100.0 * self.bytes_read / self.bytes_total if self.bytes_total else 0.0
        return (
            f"{self.files} files: {self.from_cache} from cache, {self.by_range} read by range, "
            f"{self.fetched_whole} fetched whole, {self.errors} with errors; "
            f"{self.requests} requests; read {_human(self.bytes_read)} "
            f"of {_human(self.bytes_total)} of wheels ({percent:.2f} %) in {self.seconds:.1f} s"
        )


@dataclass(frozen=True)
class Result:
    document: dict[str, Any]
    stats: Stats
    errors: tuple[tuple[str, str], ...] = field(default=())


def _human(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1024
    return f"{n} B"


def wheels_by_version(
    page: IndexPage,
) -> tuple[dict[Version, list[IndexFile]], list[tuple[str, str]]]:
    """The page's wheels by release, and what was skipped (and why)."""
    releases: dict[Version, list[IndexFile]] = {}
    skipped = list(page.skipped)
    for item in page.files:
        if not item.filename.endswith(".whl"):
            skipped.append((item.filename, "not a wheel"))
            continue
        try:
            _, version, _, _ = parse_wheel_filename(item.filename)
        except (InvalidWheelFilename, InvalidVersion) as exc:
            skipped.append((item.filename, f"invalid wheel file name: {exc}"))
            continue
        releases.setdefault(version, []).append(item)
    return releases, skipped


def refresh(options: Options, log: Log) -> Result:
    """Read the index, analyse every wheel not cached, assemble the matrix."""
    started = time.perf_counter()
    probes = load_probes()
    cache = Cache(options.cache_dir, log)
    if options.previous is not None:
        cache.load_previous(options.previous)
    http = Http(
        timeout=options.timeout,
        attempts=options.attempts,
        backoff=options.backoff,
        verify=options.verify,
        jobs=options.jobs,
    )
    try:
        page, index_bytes = fetch_index(http, options.index.value, options.project)
        log.debug(
            f"index page {public_url(page.url)}: {len(page.files)} files, {index_bytes} bytes"
        )
        releases, skipped = wheels_by_version(page)
        versions = sorted(releases)
        if options.limit is not None:
            versions = versions[-options.limit :]
        todo = [f for v in versions for f in sorted(releases[v], key=lambda f: f.filename)]
        analyses: dict[str, Analysis] = {}
        cached: set[str] = set()
        pending: list[IndexFile] = []
        for item in todo:
            hit = cache.get(item.filename, item.sha256)
            if hit is not None:
                analyses[item.filename] = hit
                cached.add(item.filename)
            else:
                pending.append(item)
        log.debug(f"{len(todo)} wheels, {len(cached)} cached, {len(pending)} to read")

        def work(item: IndexFile) -> tuple[IndexFile, Analysis]:
            analysis = read_wheel(http, item, probes, log)
            cache.put(item.filename, item.sha256, analysis)
            return item, analysis

        done = 0
        with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
            for item, analysis in pool.map(work, pending):
                analyses[item.filename] = analysis
                done += 1
                state = f"error: {analysis.error}" if analysis.error else "ok"
                how = ", fetched whole" if analysis.fetched_whole else ""
                log.debug(
                    f"[{done}/{len(pending)}] {item.filename}: {analysis.requests} requests, "
                    f"{analysis.bytes_read} bytes{how}; {state}"
                )
        requests = http.requests
    finally:
        http.close()

    release_records = []
    for version in versions:
        records = [file_record(item, analyses[item.filename]) for item in releases[version]]
        release_records.append(release_record(version, records))
    all_files = [f for r in release_records for f in r["files"]]
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "provenance": {
            # Named by how it was configured; the URL only when someone set one.
            "index_url": None
            if options.index.source == PIP_DEFAULT
            else public_url(options.index.value),
            "index_source": options.index.source,
            "project": options.project,
            "generated": dt.datetime.now(dt.timezone.utc)
            .replace(microsecond=0)
            .isoformat()
            .replace("+00:00", "Z"),
            "tool": f"qnndoctor matrix refresh {__version__}",
            "cache_version": CACHE_VERSION,
            "limit": options.limit,
            "files": len(all_files),
            "bytes_read": sum(int(f["bytes_read"]) for f in all_files),
            "bytes_total": sum(int(f["size"] or 0) for f in all_files),
            "requests": sum(int(f["requests"]) for f in all_files),
            "skipped_files": [
                {"filename": name, "reason": why} for name, why in sorted(set(skipped))
            ],
        },
        "releases": release_records,
    }
    fresh = [analyses[item.filename] for item in pending]
    errors = tuple(
        (str(f["filename"]), str(f["error"])) for f in all_files if f["error"] is not None
    )
    stats = Stats(
        files=len(all_files),
        from_cache=len(cached),
        by_range=sum(1 for a in fresh if not a.fetched_whole),
        fetched_whole=sum(1 for a in fresh if a.fetched_whole),
        errors=len(errors),
        requests=requests,
        bytes_read=sum(a.bytes_read for a in fresh),
        bytes_total=document["provenance"]["bytes_total"],
        seconds=time.perf_counter() - started,
    )
    return Result(document, stats, errors)


def dump(document: Mapping[str, Any]) -> str:
    """The committed form: sorted keys, one-space indent, trailing newline."""
    return json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _rows(document: Mapping[str, Any]) -> dict[str, set[str]]:
    """Version -> wheel file names of a releases.json document."""
    rows: dict[str, set[str]] = {}
    for release in document.get("releases") or ():
        if isinstance(release, Mapping):
            files = release.get("files") or ()
            rows[str(release.get("version"))] = {
                str(f.get("filename")) for f in files if isinstance(f, Mapping)
            }
    return rows


def shrinkage(current: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What ``new`` would drop of ``current``: whole releases, then single wheels."""
    before, after = _rows(current), _rows(new)
    dropped = [f"release {v}" for v in sorted(set(before) - set(after), key=_version_key)]
    for version in sorted(set(before) & set(after), key=_version_key):
        dropped += [f"{version}: {name}" for name in sorted(before[version] - after[version])]
    return dropped


def _version_key(text: str) -> tuple[int, Any]:
    try:
        return 0, Version(text)
    except InvalidVersion:
        return 1, text
