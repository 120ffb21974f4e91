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
import configparser
import datetime as dt
import email.parser
import hashlib
import importlib
import importlib.util
import json
import os
import re
import ssl
import struct
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any, TextIO, TypeVar
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx
import platformdirs
from packaging.utils import (
    InvalidWheelFilename,
    canonicalize_name,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

if not __package__:  # run as a script (python matrix/refresh.py): find the package beside us
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from qnndoctor import __version__
from qnndoctor._layout import package_dir
from qnndoctor.binaries.pe import MACHINES, read_pe_bytes
from qnndoctor.libkinds import QNN_RUNTIME  # the kinds that carry the QNN VERSIONINFO

SCHEMA_VERSION = 1
# Bump when what is read out of a wheel changes: older cache entries (and the
# records of an older releases.json) are then read again instead of reused.
CACHE_VERSION = 1
DEFAULT_PROJECT = "onnxruntime-qnn"
JSON_SIMPLE = "application/vnd.pypi.simple.v1+json"

EXIT_OK = 0
EXIT_INDEX = 1
EXIT_USAGE = 2
EXIT_WHEELS = 3  # written, but some wheels could not be read (their records carry the error)
EXIT_SHRINK = 4  # nothing written: the new matrix would drop releases or wheel rows

_TAIL = 65536 + 22  # EOCD plus the longest zip comment: one read finds it
_HEAD_CHUNK = 2048  # compressed bytes fetched first for a header read
_HEAD_MAX = 65536  # never decompress more than this to find a header
_LOCAL_EXTRA_GUESS = 64  # local extra fields are usually empty; a guess saves a request
_VERSIONINFO_TRIES = 3
_FULL_READ_MAX = 256 * 1024 * 1024  # a directory claiming more is not trusted
_VERSIONINFO_MAX_COMPRESSED = 8 * 1024 * 1024
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})

_QNN_VERSION_RE = re.compile(r"^(\d+)\.(\d+)\.(\d+)")
_PKG_QNN_RE = re.compile(r"""(?m)^qnn_version\s*=\s*['"]([^'"]+)['"]""")
# The QNN build string compiled into QNN libraries, e.g. "v2.22.0.240425235059_92863"
# (1.18.x wheels carry no VERSIONINFO, but their QNN DLLs hold this string).
_QNN_BUILD_STRING_RE = re.compile(
    rb"(?<![0-9A-Za-z.])v?(2\.\d{1,3}\.\d{1,3}\.\d{12}_\d{1,8})(?![0-9])"
)
_METADATA_RE = re.compile(r"^[^/]+\.dist-info/METADATA$")
_CONTENT_RANGE_RE = re.compile(r"^bytes\s+(\d+)-(\d+)/(\d+|\*)$")
_PROJECT_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")  # PEP 508 names


# --------------------------------------------------------------------------
# Errors and logging


class UsageError(Exception):
    """Bad command line or settings (exit 2)."""


class IndexReadError(Exception):
    """The index page could not be read (exit 1)."""


class FileFailure(Exception):
    """A wheel could not be read: its record gets ``error``, the rest goes on."""


class MemberFailure(Exception):
    """One member of a wheel could not be read: that library gets ``error``."""


class Log:
    """Thread-safe stderr lines: warnings always, progress with ``-v``."""

    def __init__(self, stream: TextIO, verbose: bool) -> None:
        self.stream = stream
        self.verbose = verbose
        self._lock = threading.Lock()

    def _write(self, text: str) -> None:
        with self._lock:
            self.stream.write(text + "\n")
            self.stream.flush()

    def info(self, text: str) -> None:
        self._write(f"refresh: {text}")

    def debug(self, text: str) -> None:
        if self.verbose:
            self._write(f"refresh: {text}")

    def warning(self, text: str) -> None:
        self._write(f"refresh: warning: {text}")


# --------------------------------------------------------------------------
# Where the index is: pip's own configuration


@dataclass(frozen=True)
class Setting:
    """A pip setting and where it came from (for messages and provenance)."""

    value: str
    source: str


def _pip_user_config_dir() -> str:
    if sys.platform == "darwin":
        # pip prefers ~/Library/Application Support/pip, else ~/.config/pip.
        path = Path.home() / "Library" / "Application Support" / "pip"
        return str(path if path.is_dir() else Path.home() / ".config" / "pip")
    return platformdirs.user_config_dir("pip", appauthor=False, roaming=True)


def _pip_site_config_dirs() -> list[str]:
    if sys.platform == "darwin":
        return [platformdirs.site_data_dir("pip", appauthor=False, multipath=True)]
    value = platformdirs.site_config_dir("pip", appauthor=False, multipath=True)
    if sys.platform == "win32":
        return [value]
    return [*value.split(os.pathsep), "/etc"]


def pip_config_files(
    environ: Mapping[str, str] | None = None, prefix: str | None = None
) -> list[Path]:
    """The files pip reads, lowest precedence first (global, user, the venv's,
    $PIP_CONFIG_FILE), exactly as pip orders and filters them."""
    env = os.environ if environ is None else environ
    basename = "pip.ini" if sys.platform == "win32" else "pip.conf"
    env_file = env.get("PIP_CONFIG_FILE")
    if env_file == os.devnull:
        return []
    files = [Path(d) / basename for d in _pip_site_config_dirs()]
    if not (env_file and Path(env_file).exists()):
        legacy = Path.home() / ("pip" if sys.platform == "win32" else ".pip") / basename
        files += [legacy, Path(_pip_user_config_dir()) / basename]
    files.append(Path(prefix if prefix is not None else sys.prefix) / basename)
    if env_file:
        files.append(Path(env_file))
    return files


def pip_config_value(key: str, files: Iterable[Path]) -> Setting | None:
    """``key`` from pip config files: later files win, ``[install]`` beats
    ``[global]`` (the sections ``pip install`` reads)."""
    found: Setting | None = None
    for path in files:
        parser = configparser.RawConfigParser()
        try:
            with open(path, encoding="utf-8") as handle:
                parser.read_file(handle)
        except (OSError, UnicodeError):
            continue
        except configparser.Error as exc:
            raise UsageError(f"pip configuration file {path} is unreadable: {exc}") from exc
        for section in ("global", "install"):
            if not parser.has_section(section):
                continue
            for name, value in parser.items(section):
                if name.lower().replace("_", "-") == key and value.strip():
                    found = Setting(value.strip(), f"{path} [{section}] {key}")
    return found


def pip_default_index() -> str:
    """pip's built-in index, read from pip itself (no host name of our own)."""
    try:
        module = importlib.import_module("pip._internal.models.index")
        url = module.PyPI.simple_url
    except Exception as exc:
        raise UsageError(
            "no index is configured and pip (whose default it would be) is not importable "
            f"here ({type(exc).__name__}); pass --index-url"
        ) from exc
    return str(url)


def resolve_pip_setting(
    cli_value: str | None,
    key: str,
    environ: Mapping[str, str] | None = None,
    files: Iterable[Path] | None = None,
) -> Setting | None:
    """Option, else ``PIP_<KEY>``, else the config files: pip's precedence."""
    env = os.environ if environ is None else environ
    if cli_value:
        return Setting(cli_value, f"--{key}")
    env_name = "PIP_" + key.upper().replace("-", "_")
    if env.get(env_name, "").strip():
        return Setting(env[env_name].strip(), env_name)
    return pip_config_value(key, pip_config_files(env) if files is None else files)


PIP_DEFAULT = "pip's built-in default"


def resolve_index_url(
    cli_value: str | None,
    environ: Mapping[str, str] | None = None,
    files: Iterable[Path] | None = None,
) -> Setting:
    """The index to read: --index-url, PIP_INDEX_URL, pip config, pip's default."""
    found = resolve_pip_setting(cli_value, "index-url", environ, files)
    if found is None:
        found = Setting(pip_default_index(), PIP_DEFAULT)
    try:
        parts = urlsplit(found.value)
        parts.port  # noqa: B018 -- raises ValueError for a port that is not a number
    except ValueError as exc:
        raise UsageError(f"index URL from {found.source} is malformed: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(
            f"index URL {public_url(found.value)!r} (from {found.source}) is not an http(s) URL; "
            "this tool reads indexes over HTTP"
        )
    return found


def public_url(url: str) -> str:
    """``url`` without a password: provenance and messages end up in git."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return re.sub(r"//[^/@]*@", "//<redacted>@", url)
    if parts.password is None and parts.username is None:
        return url
    host = parts.hostname or ""
    if port:
        host += f":{port}"
    user = f"{parts.username}:<redacted>@" if parts.password is not None else "<redacted>@"
    return urlunsplit((parts.scheme, user + host, parts.path, parts.query, parts.fragment))


# --------------------------------------------------------------------------
# HTTP with counting and a small bounded retry


T = TypeVar("T")


class Http:
    """One client for the whole run; counts requests and bytes."""

    def __init__(
        self,
        *,
        timeout: float,
        attempts: int = 3,
        backoff: float = 0.5,
        verify: ssl.SSLContext | bool = True,
        jobs: int = 8,
    ) -> None:
        self.client = httpx.Client(
            timeout=httpx.Timeout(timeout),
            follow_redirects=True,
            verify=verify,
            limits=httpx.Limits(max_connections=jobs * 2, max_keepalive_connections=jobs * 2),
            headers={"User-Agent": f"qnndoctor-matrix-refresh/{__version__}"},
        )
        self.attempts = max(1, attempts)
        self.backoff = backoff
        self._lock = threading.Lock()
        self.requests = 0
        self.bytes = 0

    def close(self) -> None:
        self.client.close()

    def count_bytes(self, n: int) -> None:
        with self._lock:
            self.bytes += n

    def request(
        self,
        url: str,
        headers: Mapping[str, str],
        on_response: Callable[[httpx.Response], T],
        *,
        counter: Callable[[], None] | None = None,
    ) -> T:
        """GET ``url`` and hand the streamed answer to ``on_response``;
        5xx/429 answers and connection errors are retried a few times."""
        last = ""
        for attempt in range(self.attempts):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            with self._lock:
                self.requests += 1
            if counter is not None:
                counter()
            try:
                with self.client.stream("GET", url, headers=dict(headers)) as response:
                    if response.status_code in _RETRY_STATUSES:
                        last = f"HTTP {response.status_code}"
                        continue
                    return on_response(response)
            except httpx.TransportError as exc:
                last = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            except httpx.InvalidURL as exc:
                raise FileFailure(f"invalid URL {public_url(url)!r}: {exc}") from exc
        tries = f"{self.attempts} attempt{'s' if self.attempts > 1 else ''}"
        raise FileFailure(f"GET {public_url(url)} failed after {tries}: {last}")


# --------------------------------------------------------------------------
# The index page (PEP 691 JSON simple API, PEP 700 fields)


@dataclass(frozen=True)
class IndexFile:
    """One file as the index lists it."""

    filename: str
    url: str  # as given by the index
    absolute_url: str  # resolved against the page
    size: int | None
    sha256: str | None
    upload_time: str | None
    yanked: bool
    yanked_reason: str | None
    requires_python: str | None


@dataclass(frozen=True)
class IndexPage:
    url: str
    files: tuple[IndexFile, ...]
    versions: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]  # (filename or entry, why)


def project_url(index_url: str, project: str) -> str:
    return index_url.rstrip("/") + "/" + canonicalize_name(project) + "/"


def parse_index_page(payload: Any, page_url: str) -> IndexPage:
    """Validate the JSON page; entries that make no sense are skipped, not fatal."""
    if not isinstance(payload, dict) or not isinstance(payload.get("files"), list):
        raise IndexReadError(f"{public_url(page_url)}: not a JSON simple API page (no files list)")
    meta = payload.get("meta")
    api = meta.get("api-version") if isinstance(meta, dict) else None
    if isinstance(api, str) and not api.startswith("1."):
        raise IndexReadError(
            f"{public_url(page_url)}: simple API version {api} is not supported (1.x only)"
        )
    files: list[IndexFile] = []
    skipped: list[tuple[str, str]] = []
    for entry in payload["files"]:
        if not isinstance(entry, dict):
            skipped.append((repr(entry)[:80], "index entry is not an object"))
            continue
        filename, url = entry.get("filename"), entry.get("url")
        if not isinstance(filename, str) or not isinstance(url, str) or not filename:
            skipped.append((str(filename)[:80], "index entry without filename/url"))
            continue
        hashes = entry.get("hashes")
        sha = hashes.get("sha256") if isinstance(hashes, dict) else None
        size = entry.get("size")
        yanked = entry.get("yanked", False)
        upload = entry.get("upload-time")
        requires = entry.get("requires-python")
        files.append(
            IndexFile(
                filename=filename,
                url=url,
                absolute_url=urljoin(page_url, url),
                size=size if isinstance(size, int) and size >= 0 else None,
                sha256=sha.lower()
                if isinstance(sha, str) and re.fullmatch(r"[0-9a-fA-F]{64}", sha)
                else None,
                upload_time=upload if isinstance(upload, str) else None,
                yanked=bool(yanked),
                yanked_reason=yanked if isinstance(yanked, str) and yanked else None,
                requires_python=requires if isinstance(requires, str) and requires else None,
            )
        )
    versions = payload.get("versions")
    return IndexPage(
        url=page_url,
        files=tuple(files),
        versions=tuple(v for v in versions if isinstance(v, str))
        if isinstance(versions, list)
        else (),
        skipped=tuple(skipped),
    )


def fetch_index(http: Http, index_url: str, project: str) -> tuple[IndexPage, int]:
    """The project page and its size in bytes."""
    url = project_url(index_url, project)

    def answer(response: httpx.Response) -> tuple[IndexPage, int]:
        if response.status_code == 404:
            raise IndexReadError(
                f"project {project!r} not found on the index {public_url(index_url)} (HTTP 404)"
            )
        if response.status_code != 200:
            raise IndexReadError(f"GET {public_url(url)}: HTTP {response.status_code}")
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != JSON_SIMPLE:
            raise IndexReadError(
                f"{public_url(url)} did not answer with the JSON simple API (PEP 691): "
                f"Content-Type {kind or 'missing'!r}; this tool needs an index that serves {JSON_SIMPLE}"
            )
        body = response.read()
        http.count_bytes(len(body))
        try:
            payload = json.loads(body)
        except ValueError as exc:
            raise IndexReadError(f"{public_url(url)}: malformed JSON: {exc}") from exc
        return parse_index_page(payload, str(response.url)), len(body)

    try:
        return http.request(url, {"Accept": JSON_SIMPLE}, answer)
    except FileFailure as exc:
        raise IndexReadError(str(exc)) from exc


# --------------------------------------------------------------------------
# Reading a remote file by ranges (or once whole, when ranges do not work)


class RemoteFile:
    """Byte access to one wheel: ranged reads, remembered segments, and a
    single whole download (hash-checked) when the server ignores ranges."""

    def __init__(self, http: Http, index_file: IndexFile, log: Log) -> None:
        self.http = http
        self.file = index_file
        self.log = log
        self.size = index_file.size
        self.fetched_whole = False
        self.bytes_read = 0
        self.requests = 0
        self._segments: list[tuple[int, bytes]] = []
        self._whole: IO[bytes] | None = None

    def close(self) -> None:
        if self._whole is not None:
            self._whole.close()
            self._whole = None

    def _count_request(self) -> None:
        self.requests += 1

    def _count(self, n: int) -> None:
        self.bytes_read += n
        self.http.count_bytes(n)

    def tail(self, length: int) -> tuple[int, bytes]:
        """The last ``length`` bytes and where they start (learns the size when
        the index did not give it, from a suffix range)."""
        if self.size is None and self._whole is None:
            self._fetch(f"bytes=-{length}", None, None)
        assert self.size is not None
        start = max(0, self.size - length)
        return start, self.read(start, self.size - start)

    def read(self, start: int, length: int) -> bytes:
        """Bytes ``start`` .. ``start+length`` (clamped to the file)."""
        if self.size is None:
            self.tail(_TAIL)
        assert self.size is not None
        end = min(start + length, self.size)
        if start < 0 or start >= end:
            return b""
        if self._whole is not None:
            self._whole.seek(start)
            return self._whole.read(end - start)
        for seg_start, data in self._segments:
            if seg_start <= start and end <= seg_start + len(data):
                return data[start - seg_start : end - seg_start]
        data = self._fetch(f"bytes={start}-{end - 1}", start, end)
        if self._whole is not None:  # the server sent everything instead
            self._whole.seek(start)
            return self._whole.read(end - start)
        return data

    def _fetch(self, range_header: str, start: int | None, end: int | None) -> bytes:
        """One Range request; falls back to one whole download."""
        headers = {"Range": range_header, "Accept-Encoding": "identity"}
        url = self.file.absolute_url

        def answer(response: httpx.Response) -> tuple[str, int, bytes]:
            status = response.status_code
            if status == 206:
                return "range", *self._ranged_body(response, range_header, start, end)
            if status == 200:
                self._take_whole(
                    response, "the server ignored the Range request (HTTP 200, whole body)"
                )
                return "whole", 0, b""
            if status in (416, 501) or (400 <= status < 500 and status not in (401, 403, 404)):
                return "refused", status, b""
            raise FileFailure(f"GET {public_url(url)} ({range_header}): HTTP {status}")

        kind, first, data = self.http.request(url, headers, answer, counter=self._count_request)
        if kind == "refused":
            reason = f"the server refused the Range request (HTTP {first})"

            def whole(response: httpx.Response) -> None:
                if response.status_code != 200:
                    raise FileFailure(f"GET {public_url(url)}: HTTP {response.status_code}")
                self._take_whole(response, reason)

            self.http.request(
                url, {"Accept-Encoding": "identity"}, whole, counter=self._count_request
            )
            return b""
        if kind == "range":
            self._segments.append((first, data))
        return data

    def _ranged_body(
        self, response: httpx.Response, range_header: str, start: int | None, end: int | None
    ) -> tuple[int, bytes]:
        """(first byte, body) of a 206 answer, checked against what was asked."""
        header = response.headers.get("content-range", "")
        match = _CONTENT_RANGE_RE.match(header.strip())
        if not match:
            raise FileFailure(
                f"answer to {range_header} has no valid Content-Range (got {header!r})"
            )
        first, last, total = int(match.group(1)), int(match.group(2)), match.group(3)
        if total != "*":
            if self.size is None:
                self.size = int(total)
            elif int(total) != self.size:
                raise FileFailure(
                    f"the index says the file has {self.size} bytes, the server's Content-Range says {total}"
                )
        if start is None or end is None:  # suffix range: the server chose the start
            if self.size is None:
                raise FileFailure(f"answer to {range_header} does not say the file size")
            start, end = first, self.size
        if first != start or last != end - 1:
            raise FileFailure(
                f"answer to {range_header} covers bytes {first}-{last} (Content-Range mismatch)"
            )
        wanted = end - start
        chunks: list[bytes] = []
        got = 0
        for chunk in response.iter_bytes():
            got += len(chunk)
            self._count(len(chunk))
            if got > wanted:
                raise FileFailure(f"answer to {range_header} is longer than the range asked for")
            chunks.append(chunk)
        if got != wanted:
            raise FileFailure(
                f"truncated answer: asked for {range_header} ({wanted} bytes), got {got} bytes"
            )
        return first, b"".join(chunks)

    def _take_whole(self, response: httpx.Response, reason: str) -> None:
        """Stream the whole file to a temporary file, checking the index's hash."""
        self.fetched_whole = True
        digest = hashlib.sha256()
        # Kept open past this call: it becomes the file's contents (closed in close()).
        spool: IO[bytes] = tempfile.TemporaryFile(prefix="qnndoctor-refresh-")  # noqa: SIM115
        try:
            got = 0
            for chunk in response.iter_bytes():
                got += len(chunk)
                self._count(len(chunk))
                digest.update(chunk)
                spool.write(chunk)
            if self.size is not None and got != self.size:
                raise FileFailure(
                    f"whole download has {got} bytes, the index says {self.size} ({reason})"
                )
            if self.file.sha256 and digest.hexdigest() != self.file.sha256:
                raise FileFailure(
                    f"sha256 mismatch: the index says {self.file.sha256}, "
                    f"the downloaded file hashes to {digest.hexdigest()}"
                )
        except BaseException:
            spool.close()
            raise
        self.close()
        self._whole = spool
        self.size = got
        checked = "sha256 verified" if self.file.sha256 else "no sha256 in the index to verify"
        self.log.warning(
            f"{self.file.filename}: {reason}; downloaded the whole file once ({got} bytes, {checked})"
        )


# --------------------------------------------------------------------------
# Zip structure read through RemoteFile


@dataclass(frozen=True)
class Member:
    """A central directory entry."""

    name: str
    flags: int
    method: int
    crc: int
    compressed_size: int
    size: int
    offset: int


def _zip64_extra(extra: bytes, size: int, csize: int, offset: int) -> tuple[int, int, int]:
    pos = 0
    while pos + 4 <= len(extra):
        tag, length = struct.unpack_from("<HH", extra, pos)
        body = extra[pos + 4 : pos + 4 + length]
        if tag == 0x0001:
            values = list(struct.unpack_from(f"<{len(body) // 8}Q", body))
            if size == 0xFFFFFFFF and values:
                size = values.pop(0)
            if csize == 0xFFFFFFFF and values:
                csize = values.pop(0)
            if offset == 0xFFFFFFFF and values:
                offset = values.pop(0)
            break
        pos += 4 + length
    return size, csize, offset


def read_directory(remote: RemoteFile) -> list[Member]:
    """The central directory, via the end records at the tail of the file."""
    tail_start, tail = remote.tail(_TAIL)
    assert remote.size is not None
    if remote.size < 22:
        raise FileFailure(f"not a zip file: only {remote.size} bytes")
    pos = len(tail)
    eocd = -1
    while True:
        pos = tail.rfind(b"PK\x05\x06", 0, pos)
        if pos < 0:
            break
        if pos + 22 <= len(tail):
            (comment_length,) = struct.unpack_from("<H", tail, pos + 20)
            if pos + 22 + comment_length <= len(tail):
                eocd = pos
                break
    if eocd < 0:
        raise FileFailure("bad zip: no end-of-central-directory record")
    disk, cd_disk, _, count, cd_size, cd_offset = struct.unpack_from("<4H2I", tail, eocd + 4)
    end_of_cd = tail_start + eocd
    locator = remote.read(end_of_cd - 20, 20) if end_of_cd >= 20 else b""
    if locator[:4] == b"PK\x06\x07":
        _, eocd64_offset, _ = struct.unpack_from("<IQI", locator, 4)
        record = remote.read(eocd64_offset, 56)
        if len(record) < 56 or record[:4] != b"PK\x06\x06":
            raise FileFailure("bad zip: zip64 locator points to no zip64 end record")
        disk, cd_disk, _, count, cd_size, cd_offset = struct.unpack_from("<2I4Q", record, 16)
        end_of_cd = eocd64_offset
    if disk != cd_disk or disk != 0:
        raise FileFailure("bad zip: multi-disk archives are not wheels")
    if cd_offset + cd_size > end_of_cd:
        raise FileFailure(
            f"bad central directory: it would end at {cd_offset + cd_size}, after its end record at {end_of_cd}"
        )
    directory = remote.read(cd_offset, cd_size)
    members: list[Member] = []
    pos = 0
    for index in range(count):
        if pos + 46 > len(directory) or directory[pos : pos + 4] != b"PK\x01\x02":
            raise FileFailure(
                f"bad central directory: entry {index} of {count} is not where expected"
            )
        (flags, method, _, _, crc, csize, size, nlen, elen, clen, _, _, _, offset) = (
            struct.unpack_from("<8xHHHHIIIHHHHHII", directory, pos)
        )
        name_bytes = directory[pos + 46 : pos + 46 + nlen]
        extra = directory[pos + 46 + nlen : pos + 46 + nlen + elen]
        if len(name_bytes) != nlen or len(extra) != elen:
            raise FileFailure(f"bad central directory: entry {index} runs past its end")
        name = name_bytes.decode("utf-8" if flags & 0x800 else "cp437", "replace")
        size, csize, offset = _zip64_extra(extra, size, csize, offset)
        if offset + 30 + csize > cd_offset:
            raise FileFailure(f"bad central directory: member {name} lies outside the archive data")
        members.append(Member(name, flags, method, crc, csize, size, offset))
        pos += 46 + nlen + elen + clen
    return members


def _data_start(remote: RemoteFile, member: Member, read_ahead: int) -> int:
    """Where the member's data starts: after its local header, which is read
    together with ``read_ahead`` bytes of data (usually one request)."""
    guess = 30 + len(member.name.encode()) + _LOCAL_EXTRA_GUESS
    head = remote.read(member.offset, guess + read_ahead)
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        raise MemberFailure(f"no local file header at offset {member.offset}")
    nlen, elen = struct.unpack_from("<HH", head, 26)
    return int(member.offset + 30 + nlen + elen)


def _check_method(member: Member) -> None:
    if member.flags & 0x1:
        raise MemberFailure("encrypted member")
    if member.method not in (0, 8):
        raise MemberFailure(
            f"compression method {member.method} is not supported (only stored and deflated)"
        )


def read_member(remote: RemoteFile, member: Member) -> bytes:
    """The whole member, decompressed and checked against its CRC."""
    _check_method(member)
    if member.size > _FULL_READ_MAX:
        raise MemberFailure(f"{member.size} bytes uncompressed: too large to read whole")
    start = _data_start(remote, member, member.compressed_size)
    raw = remote.read(start, member.compressed_size)
    if len(raw) != member.compressed_size:
        raise MemberFailure("bad member data: it runs past the end of the file")
    if member.method == 0:
        data = raw
    else:
        try:
            inflater = zlib.decompressobj(-15)
            data = (
                inflater.decompress(raw, member.size + 1)
                if member.size
                else inflater.decompress(raw)
            )
        except zlib.error as exc:
            raise MemberFailure(f"bad member data: deflate stream: {exc}") from exc
    if len(data) != member.size or zlib.crc32(data) != member.crc:
        raise MemberFailure(
            f"bad member data: {len(data)} bytes with CRC {zlib.crc32(data):08x}, "
            f"the directory says {member.size} bytes with CRC {member.crc:08x}"
        )
    return data


def _header_need(head: bytes) -> int:
    """How many leading bytes identify the binary: the ELF header, or the PE
    signature and machine that the DOS header points to."""
    if len(head) < 64:
        return 64
    if head[:2] == b"MZ":
        (e_lfanew,) = struct.unpack_from("<I", head, 0x3C)
        return min(int(e_lfanew) + 6, _HEAD_MAX)
    return 64


def read_member_head(remote: RemoteFile, member: Member) -> bytes:
    """Just enough of the start of a member to read its binary header:
    deflate streams are inflated incrementally from a few KiB."""
    _check_method(member)
    chunk = min(_HEAD_CHUNK, member.compressed_size)
    start = _data_start(remote, member, chunk)
    end = start + member.compressed_size
    if member.method == 0:
        head = remote.read(start, min(member.compressed_size, 64))
        need = _header_need(head)
        if need > len(head):
            head = remote.read(start, min(member.compressed_size, need))
        return head
    inflater = zlib.decompressobj(-15)
    head = b""
    pos = start
    while pos < end and not inflater.eof:
        if len(head) >= _header_need(head):
            break
        data = remote.read(pos, min(chunk, end - pos))
        if not data:
            break
        pos += len(data)
        chunk = min(chunk * 2, 1 << 20)
        try:
            head += inflater.decompress(data, _HEAD_MAX - len(head))
        except zlib.error as exc:
            raise MemberFailure(f"bad member data: deflate stream: {exc}") from exc
        if len(head) >= _HEAD_MAX:
            break
    return head


# --------------------------------------------------------------------------
# What a wheel contains


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


@dataclass(frozen=True)
class Probes:
    """The library naming rules of the probes (one source of truth)."""

    classify: Callable[[str], str | None]
    hexagon_version: Callable[[str, str], int | None]
    elf_machines: Mapping[int, str]


def load_probes() -> Probes:
    """``classify``/``hexagon_version`` from ``qnndoctor.probes``; from a plain
    source checkout the probes folder is loaded under a private name."""
    try:
        bundled = importlib.import_module("qnndoctor.probes.qnn_bundled")
        util = importlib.import_module("qnndoctor.probes._util")
    except ImportError:
        folder = package_dir("probes")
        if folder is None:
            raise UsageError("the qnndoctor.probes package is missing") from None
        name = "_qnndoctor_refresh_probes"
        if name not in sys.modules:
            spec = importlib.util.spec_from_file_location(
                name, folder / "__init__.py", submodule_search_locations=[str(folder)]
            )
            if spec is None or spec.loader is None:
                raise UsageError(f"cannot load the probes from {folder}") from None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        bundled = importlib.import_module(f"{name}.qnn_bundled")
        util = importlib.import_module(f"{name}._util")
    return Probes(bundled.classify, bundled.hexagon_version, dict(util.ELF_MACHINES))


def header_machine(head: bytes, probes: Probes) -> tuple[str | None, str | None, str | None]:
    """(machine, machine_source, error) from a binary's first bytes."""
    if head[:4] == b"\x7fELF":
        if len(head) < 20:
            return None, None, "truncated ELF header"
        endian = "<" if head[5] == 1 else ">"
        (code,) = struct.unpack_from(endian + "H", head, 18)
        return probes.elf_machines.get(code, str(code)), "elf-header", None
    if head[:2] == b"MZ" and len(head) >= 64:
        (e_lfanew,) = struct.unpack_from("<I", head, 0x3C)
        sig = head[e_lfanew : e_lfanew + 6]
        if len(sig) < 6 or sig[:4] != b"PE\0\0":
            return None, None, "no PE signature where the DOS header points"
        (code,) = struct.unpack_from("<H", sig, 4)
        return MACHINES.get(code, f"0x{code:04X}"), "pe-header", None
    if not head:
        return None, None, "empty member"
    return None, None, "unrecognised binary header"


def _metadata(data: bytes) -> tuple[str | None, tuple[str, ...]]:
    message = email.parser.Parser().parsestr(data.decode("utf-8", "replace"), headersonly=True)
    requires = message.get("Requires-Python")

    def clean(value: Any) -> str:
        return " ".join(str(value).split())

    dist = tuple(sorted({clean(v) for v in message.get_all("Requires-Dist") or ()}))
    return (clean(requires) if requires else None), dist


def _numeric_version(text: str) -> str | None:
    match = _QNN_VERSION_RE.match(text.strip())
    return ".".join(match.groups()) if match else None


def qnn_build_strings(data: bytes) -> list[str]:
    """Every QNN build string inside a library's bytes, without the 'v'."""
    return sorted({m.group(1).decode("ascii") for m in _QNN_BUILD_STRING_RE.finditer(data)})


def decide_qnn_version(
    package_info: tuple[str, str] | None,
    pe_infos: Sequence[tuple[str, str]] = (),
    build_strings: Sequence[tuple[str, str]] = (),
) -> tuple[QnnVersion | None, str | None]:
    """The QNN version from build_and_package_info.py ((path, qnn_version))
    and DLL VERSIONINFO ((path, ProductVersion), one per library folder);
    only when both say nothing, from the QNN build strings compiled into the
    libraries ((path, build)). ``None`` plus a note when they disagree or say
    nothing usable: never a guess."""
    if package_info is None and not pe_infos and build_strings:
        return _from_build_strings(build_strings)
    evidence: list[str] = []
    claims: list[str] = []
    versions: set[str] = set()
    builds: set[str] = set()
    notes: list[str] = []
    if package_info is not None:
        path, value = package_info
        number = _numeric_version(value)
        if number is None:
            notes.append(f"{path} has qnn_version {value!r}, not a version number")
        else:
            versions.add(number)
            evidence.append(f"qnn_version {value!r} in {path}")
            claims.append(f"{path} says {value!r}")
            if value.strip() != number:
                builds.add(value.strip())
    for path, value in pe_infos:
        number = _numeric_version(value)
        if number is None:
            notes.append(f"ProductVersion {value!r} of {path} is not a version number")
            continue
        versions.add(number)
        evidence.append(f"PE VERSIONINFO ProductVersion of {path}")
        claims.append(f"ProductVersion of {path} says {value!r}")
        builds.add(value.strip())
    if len(versions) > 1:
        return None, "sources disagree: " + "; ".join(claims)
    if not versions:
        notes.append(
            "no evidence: no qnn_version in a build_and_package_info.py "
            "and no QNN DLL with a VERSIONINFO ProductVersion"
        )
        return None, "; ".join(notes)
    if len(builds) > 1:
        notes.append("build strings differ: " + ", ".join(sorted(builds)))
    build = next(iter(builds)) if len(builds) == 1 else None
    return QnnVersion(versions.pop(), build, tuple(evidence)), "; ".join(notes) or None


def _from_build_strings(
    build_strings: Sequence[tuple[str, str]],
) -> tuple[QnnVersion | None, str | None]:
    builds = sorted({build for _path, build in build_strings})
    if len(builds) > 1:
        return None, "QNN build strings disagree: " + "; ".join(
            f"{path} holds {build!r}" for path, build in build_strings
        )
    (build,) = builds
    number = _numeric_version(build)
    if number is None:  # the pattern guarantees a number; kept for safety
        return None, f"QNN build string {build!r} is not a version number"
    evidence = tuple(f"QNN build string 'v{b}' inside {path}" for path, b in build_strings)
    return (
        QnnVersion(number, build, evidence),
        "no VERSIONINFO in the QNN libraries: version read from the build string they carry",
    )


def analyse_wheel(remote: RemoteFile, probes: Probes) -> Analysis:
    """Read what the matrix records from one wheel, by ranges. Member
    problems stay with that member; file problems raise FileFailure."""
    members = read_directory(remote)
    member_errors: list[str] = []

    requires_python: str | None = None
    requires_dist: tuple[str, ...] = ()
    metadata_read = False
    metadata = sorted((m for m in members if _METADATA_RE.match(m.name)), key=lambda m: m.name)
    if not metadata:
        member_errors.append("no *.dist-info/METADATA")
    else:
        try:
            requires_python, requires_dist = _metadata(read_member(remote, metadata[0]))
            metadata_read = True
        except MemberFailure as exc:
            member_errors.append(f"{metadata[0].name}: {exc}")

    package_info: tuple[str, str] | None = None
    for member in sorted(members, key=lambda m: m.name):
        if not member.name.endswith("/build_and_package_info.py"):
            continue
        try:
            text = read_member(remote, member).decode("utf-8", "replace")
        except MemberFailure as exc:
            member_errors.append(f"{member.name}: {exc}")
            continue
        match = _PKG_QNN_RE.search(text)
        if match:
            package_info = (member.name, match.group(1))
            break

    libs: dict[str, Library] = {}
    lib_members: dict[str, Member] = {}
    for member in members:
        if member.name.endswith("/"):
            continue
        base = member.name.rsplit("/", 1)[-1]
        kind = probes.classify(base)
        if kind is None:
            continue
        lib_members[member.name] = member
        libs[member.name] = Library(
            path=member.name,
            kind=kind,
            size=member.size,
            hexagon_version=probes.hexagon_version(base, kind),
        )

    build_strings: list[tuple[str, str]] = []

    def read_whole_pe(name: str) -> None:
        try:
            data = read_member(remote, lib_members[name])
        except MemberFailure as exc:
            libs[name] = replace(libs[name], error=str(exc))
            return
        machine, source, error = header_machine(data[:_HEAD_MAX], probes)
        if libs[name].kind in QNN_RUNTIME:
            build_strings.extend((name, b) for b in qnn_build_strings(data))
        info: dict[str, Any] = read_pe_bytes(data) if source == "pe-header" else {"error": error}
        strings = info.get("strings") or {}
        parsed = "error" not in info
        libs[name] = replace(
            libs[name],
            machine=str(info["machine"]) if parsed and info.get("machine") else machine,
            machine_source="pe-load-config" if parsed else source,
            product_version=strings.get("ProductVersion"),
            file_version=strings.get("FileVersion"),
            error=info.get("error") or error,
        )

    # VERSIONINFO: the smallest QNN DLL of each library folder that has one
    # (win_amd64 2.x wheels carry an amd64 and an arm64ec folder).
    fully_read: set[str] = set()
    pe_infos: list[tuple[str, str]] = []
    by_folder: dict[str, list[Member]] = {}
    for name, member in lib_members.items():
        if (
            libs[name].kind in QNN_RUNTIME
            and name.lower().endswith(".dll")
            and member.compressed_size <= _VERSIONINFO_MAX_COMPRESSED
        ):
            by_folder.setdefault(name.rsplit("/", 1)[0], []).append(member)
    for folder in sorted(by_folder):
        candidates = sorted(by_folder[folder], key=lambda m: (m.compressed_size, m.name))
        for member in candidates[:_VERSIONINFO_TRIES]:
            fully_read.add(member.name)
            read_whole_pe(member.name)
            product = libs[member.name].product_version
            if product:
                pe_infos.append((member.name, product))
                break
    for name, lib in sorted(libs.items()):
        if lib.kind == "ort_providers_shared" and name.lower().endswith(".dll"):
            fully_read.add(name)
            read_whole_pe(name)

    for name in sorted(libs):
        lib = libs[name]
        if name in fully_read or lib.kind == "signed_catalog":
            continue
        try:
            head = read_member_head(remote, lib_members[name])
        except MemberFailure as exc:
            libs[name] = replace(lib, error=str(exc))
            continue
        machine, source, error = header_machine(head, probes)
        libs[name] = replace(lib, machine=machine, machine_source=source, error=error)

    for name, lib in sorted(libs.items()):
        if lib.error:
            member_errors.append(f"{name}: {lib.error}")
    version, note = decide_qnn_version(package_info, pe_infos, build_strings)
    return Analysis(
        requires_python=requires_python,
        requires_dist=requires_dist,
        metadata_read=metadata_read,
        libraries=tuple(libs[name] for name in sorted(libs)),
        qnn_version=version,
        qnn_version_note=note,
        fetched_whole=remote.fetched_whole,
        bytes_read=remote.bytes_read,
        requests=remote.requests,
        file_size=remote.size,
        error=("member errors: " + "; ".join(member_errors)) if member_errors else None,
    )


def read_wheel(http: Http, index_file: IndexFile, probes: Probes, log: Log) -> Analysis:
    """``analyse_wheel`` that never raises: failures become the record's error."""
    remote = RemoteFile(http, index_file, log)
    try:
        return analyse_wheel(remote, probes)
    except (FileFailure, MemberFailure) as exc:
        error = str(exc)
    except (struct.error, ValueError, OSError) as exc:
        error = f"bad zip: {type(exc).__name__}: {exc}"
    finally:
        remote.close()
    return Analysis(
        fetched_whole=remote.fetched_whole,
        bytes_read=remote.bytes_read,
        requests=remote.requests,
        file_size=remote.size,
        error=error,
    )


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
            _write_atomic(path, json.dumps(entry, sort_keys=True))
        except OSError as exc:
            self.log.warning(f"could not write cache entry {path} ({exc})")


def _write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` in one step, so a reader or an interrupted run never
    sees half a file; created with the umask's permissions like any file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


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
