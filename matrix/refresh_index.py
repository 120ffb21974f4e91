"""The package index: pip's own configuration says where it is; HTTP with
counting and a small bounded retry; the PEP 691/700 JSON simple page."""

from __future__ import annotations

import configparser
import importlib
import importlib.util
import json
import os
import re
import ssl
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx
import platformdirs
from packaging.utils import (
    canonicalize_name,
)

from qnndoctor import __version__

from .refresh_common import (
    _RETRY_STATUSES,
    JSON_SIMPLE,
    FileFailure,
    IndexReadError,
    UsageError,
)

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
