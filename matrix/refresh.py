"""Regenerate ``releases.json``, the release matrix of onnxruntime-qnn, from the
package index.

qnndoctor's rules need to know what each published wheel really contains (its
QNN version, stub/skel Hexagon versions, machine types, dependencies) without
anyone downloading ~20 GB of wheels. This tool reads the index's JSON simple
API (PEP 691/700), then reads each wheel with HTTP Range requests: its zip
central directory and only the members that answer those questions. Results
are cached per (filename, sha256), so a refresh with nothing new published
costs one request.

Run ``python -m qnndoctor.matrix.refresh --help`` (or ``python
matrix/refresh.py`` from the repository). See ``docs/matrix.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import ssl
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import platformdirs
from packaging.utils import (
    InvalidWheelFilename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

if not __package__:  # run as a script (python matrix/refresh.py): run the package's module
    import runpy

    _root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(_root))
    import qnndoctor

    if not (Path(qnndoctor.__path__[0]) / "matrix").is_dir():  # a source tree: matrix/ beside it
        qnndoctor.__path__.append(str(_root))
    runpy.run_module("qnndoctor.matrix.refresh", run_name="__main__", alter_sys=True)
    raise SystemExit(0)

from qnndoctor import __version__

from .refresh_cache import (
    Cache,
    _write_atomic,
    file_record,
    platform_bucket,
    release_record,
)
from .refresh_common import (
    _PROJECT_RE,
    CACHE_VERSION,
    DEFAULT_PROJECT,
    EXIT_INDEX,
    EXIT_OK,
    EXIT_SHRINK,
    EXIT_USAGE,
    EXIT_WHEELS,
    SCHEMA_VERSION,
    IndexReadError,
    Log,
    UsageError,
)
from .refresh_index import (
    PIP_DEFAULT,
    Http,
    IndexFile,
    IndexPage,
    Setting,
    fetch_index,
    pip_config_files,
    public_url,
    resolve_index_url,
    resolve_pip_setting,
)
from .refresh_wheel import (
    Analysis,
    decide_qnn_version,
    load_probes,
    qnn_build_strings,
    read_wheel,
)

# Re-exported: the tool's interface (tests, bench) predates its split into modules.
__all__ = [
    "CACHE_VERSION",
    "DEFAULT_PROJECT",
    "EXIT_INDEX",
    "EXIT_OK",
    "EXIT_SHRINK",
    "EXIT_USAGE",
    "EXIT_WHEELS",
    "SCHEMA_VERSION",
    "IndexReadError",
    "Log",
    "Options",
    "Setting",
    "UsageError",
    "decide_qnn_version",
    "dump",
    "main",
    "pip_config_files",
    "platform_bucket",
    "public_url",
    "qnn_build_strings",
    "refresh",
    "resolve_index_url",
]

# --------------------------------------------------------------------------
# The refresh


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


def _wheels(page: IndexPage) -> tuple[dict[Version, list[IndexFile]], list[tuple[str, str]]]:
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
        releases, skipped = _wheels(page)
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


# --------------------------------------------------------------------------
# Command line


def default_output() -> Path:
    """``releases.json`` beside this module (matrix/ in a checkout)."""
    return Path(__file__).resolve().parent / "releases.json"


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("qnndoctor")) / "matrix-refresh"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m qnndoctor.matrix.refresh",
        description="Regenerate the onnxruntime-qnn release matrix (releases.json) from the "
        "package index pip is configured with, reading wheels by HTTP range requests.",
    )
    parser.add_argument(
        "--index-url",
        metavar="URL",
        help="simple index root (default: PIP_INDEX_URL, else pip's config files, else pip's default)",
    )
    parser.add_argument(
        "--project", default=DEFAULT_PROJECT, help="project name (default %(default)s)"
    )
    parser.add_argument(
        "--output",
        type=Path,
        metavar="PATH",
        help="where to write (default: releases.json beside this tool)",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        metavar="DIR",
        help=f"per-wheel cache (default {default_cache_dir()})",
    )
    parser.add_argument(
        "--previous",
        type=Path,
        metavar="PATH",
        help="an earlier releases.json whose records count as cached (default: the output path)",
    )
    parser.add_argument(
        "--limit", type=_positive_int, metavar="N", help="only the N newest releases (quick runs)"
    )
    parser.add_argument(
        "--timeout",
        type=_positive_float,
        default=60.0,
        metavar="S",
        help="per request (default 60)",
    )
    parser.add_argument(
        "--jobs",
        type=_positive_int,
        default=8,
        metavar="N",
        help="wheels read in parallel (default 8)",
    )
    parser.add_argument(
        "--allow-shrink",
        action="store_true",
        help="write the new matrix even if it drops releases or wheels the output lists now",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="progress per wheel")
    return parser


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


def _current(output: Path, log: Log) -> Mapping[str, Any] | None:
    """The matrix ``output`` holds now, if it can be read (else nothing to compare)."""
    from qnndoctor import safejson

    try:
        document = safejson.loads(output.read_bytes(), str(output))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning(f"cannot read the current {output} to compare: {exc}")
        return None
    return document if isinstance(document, Mapping) else None


def _verify(environ: Mapping[str, str]) -> ssl.SSLContext | bool:
    """pip's ``cert`` setting (a CA bundle), if configured."""
    cert = resolve_pip_setting(None, "cert", environ)
    if cert is None:
        return True
    try:
        return ssl.create_default_context(cafile=cert.value)
    except (OSError, ssl.SSLError) as exc:
        raise UsageError(f"CA bundle {cert.value} (from {cert.source}) unusable: {exc}") from exc


def _unwritable(output: Path) -> str | None:
    """Why ``output`` could not be written, found before a minute of reading."""
    if output.is_dir():
        return "it is a folder"
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return exc.strerror or str(exc)
    if not os.access(output.parent, os.W_OK):
        return f"{output.parent} is not writable"
    return None


def main(argv: Sequence[str] | None = None, *, stderr: TextIO | None = None) -> int:
    err = stderr or sys.stderr
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: 2 on usage errors, 0 for --help
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    log = Log(err, args.verbose)
    try:
        index = resolve_index_url(args.index_url)
        verify = _verify(os.environ)
    except UsageError as exc:
        err.write(f"refresh: error: {exc}\n")
        return EXIT_USAGE
    if not _PROJECT_RE.match(args.project):
        err.write(f"refresh: error: {args.project!r} is not a valid project name\n")
        return EXIT_USAGE
    output: Path = args.output or default_output()
    problem = _unwritable(output)
    if problem:
        err.write(f"refresh: error: cannot write {output}: {problem}\n")
        return EXIT_USAGE
    options = Options(
        index=index,
        project=args.project,
        cache_dir=args.cache_dir or default_cache_dir(),
        previous=args.previous if args.previous is not None else output,
        limit=args.limit,
        timeout=args.timeout,
        jobs=args.jobs,
        verify=verify,
    )
    log.info(f"index {public_url(index.value)} (from {index.source}), project {args.project}")
    if args.limit is not None and args.output is None:
        log.warning(
            f"--limit without --output: {output} would list only {args.limit} releases "
            "(refused unless --allow-shrink)"
        )
    try:
        result = refresh(options, log)
    except IndexReadError as exc:
        err.write(f"refresh: error: could not read the index: {exc}\n")
        return EXIT_INDEX
    except UsageError as exc:
        err.write(f"refresh: error: {exc}\n")
        return EXIT_USAGE
    for filename, message in result.errors:
        log.info(f"error in {filename}: {message}")
    log.info(result.stats.summary())
    current = _current(output, log)
    dropped = shrinkage(current, result.document) if current is not None else []
    if dropped and not args.allow_shrink:
        shown = "; ".join(dropped[:10]) + (
            f"; and {len(dropped) - 10} more" if len(dropped) > 10 else ""
        )
        err.write(
            f"refresh: error: the new matrix would drop {len(dropped)} release(s) or wheel(s) "
            f"that {output} lists ({shown}). Did the index answer in full? Nothing written; "
            "pass --allow-shrink to accept.\n"
        )
        return EXIT_SHRINK
    for lost in dropped:
        log.warning(f"dropped (--allow-shrink): {lost}")
    try:
        _write_atomic(output, dump(result.document))
    except OSError as exc:
        err.write(f"refresh: error: could not write {output}: {exc}\n")
        return EXIT_INDEX
    log.info(f"wrote {output}")
    if result.errors:
        err.write(
            f"refresh: error: {len(result.errors)} wheel(s) could not be read (listed above); "
            "their records carry the error and the next run retries them\n"
        )
        return EXIT_WHEELS
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
