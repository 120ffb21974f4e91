"""The package index client: HTTP with counting and a small bounded retry,
and the PEP 691/700 JSON simple page of one project."""

from __future__ import annotations

import json
import re
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urljoin

import httpx
from packaging.utils import canonicalize_name

from qnndoctor import __version__

from .common import _RETRY_STATUSES, JSON_SIMPLE, FileFailure, IndexReadError
from .pip_config import public_url

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
        chunks: list[bytes] = []
        for chunk in response.iter_bytes():  # counted as it comes: a cap stops a huge page
            http.count_bytes(len(chunk))
            chunks.append(chunk)
        body = b"".join(chunks)
        try:
            payload = json.loads(body)
        except ValueError as exc:
            raise IndexReadError(f"{public_url(url)}: malformed JSON: {exc}") from exc
        return parse_index_page(payload, str(response.url)), len(body)

    try:
        return http.request(url, {"Accept": JSON_SIMPLE}, answer)
    except FileFailure as exc:
        raise IndexReadError(str(exc)) from exc
