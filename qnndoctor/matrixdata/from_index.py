"""``qnndoctor matrix update`` without ``--from``: the releases the package
index pip is configured with lists and the current matrix lacks, read from
their wheels by HTTP range requests (``wheelreader``), added to a copy of the
current matrix, checked against the schema and installed like ``--from``.

Nothing changes unless every new wheel was read whole-heartedly: a wheel that
cannot be read, a byte total over the cap or a run past the deadline refuses
the update and the current matrix stays in use."""

from __future__ import annotations

import copy
import io
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from packaging.version import InvalidVersion, Version

from .. import matrixdata, safejson
from .update import UpdateError, install
from .wheelreader.common import DEFAULT_PROJECT, FileFailure, IndexReadError, Log, UsageError
from .wheelreader.index import Http, fetch_index

_LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


@dataclass(frozen=True)
class Added:
    version: str
    wheels: int


@dataclass(frozen=True)
class IndexUpdate:
    """What one update did: the releases added (none: already current)."""

    index: str  # public form (no credentials) and where it was configured
    current: str  # the matrix compared with
    added: tuple[Added, ...]
    installed: Path | None
    bytes_read: int
    requests: int


class _CappedHttp(Http):
    """``Http`` that stops the run once ``max_bytes`` have been received
    (bytes are counted per chunk, so no single answer can run past it)."""

    def __init__(self, *, max_bytes: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_bytes = max_bytes
        self.abandoned = threading.Event()

    def count_bytes(self, n: int) -> None:
        super().count_bytes(n)
        if self.abandoned.is_set():
            raise FileFailure("abandoned at the deadline")
        if self.bytes > self.max_bytes:
            raise FileFailure(f"more than the {self.max_bytes} byte limit read from the index")


def _allowed(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme == "https":
        return
    if parts.scheme == "http" and (parts.hostname or "") in _LOOPBACK:
        return  # a local index on this machine (the tests' server)
    raise UpdateError(
        f"the configured index {url} is not https:// (only a loopback index may use http)"
    )


def _current() -> tuple[Path, dict[str, Any]]:
    """The releases.json in use (user-cache update, else bundled) and its document."""
    try:
        matrix = matrixdata.load()
    except matrixdata.MatrixError as exc:
        raise UpdateError(f"no current matrix to update: {exc}") from exc
    if not matrix.files or matrix.files[0].name != "releases.json":
        raise UpdateError("no current release matrix to update")
    path = matrix.files[0]
    try:
        document = safejson.loads(path.read_bytes(), str(path))
    except (OSError, safejson.BadJSON) as exc:
        raise UpdateError(f"cannot read the current matrix {path}: {exc}") from exc
    if not isinstance(document, dict) or not isinstance(document.get("releases"), list):
        raise UpdateError(f"the current matrix {path} has no releases list")
    return path, document


def _version_key(release: Mapping[str, Any]) -> tuple[int, Any]:
    try:
        return 0, Version(str(release.get("version")))
    except InvalidVersion:
        return 1, str(release.get("version"))


def update_from_index(
    *,
    max_bytes: int,
    deadline: float = 120.0,
    timeout: float = 30.0,
    environ: Mapping[str, str] | None = None,
    log: Log | None = None,
) -> IndexUpdate:
    """Add the index's new releases to the current matrix and install it.
    Raises ``UpdateError``; then nothing was changed."""
    from .wheelreader.pip_config import pip_verify, public_url, resolve_index_url

    env = os.environ if environ is None else environ
    try:
        index = resolve_index_url(None, env)
        verify = pip_verify(env)
    except UsageError as exc:
        raise UpdateError(str(exc)) from exc
    _allowed(index.value)
    where = f"{public_url(index.value)} (from {index.source})"
    path, document = _current()
    http = _CappedHttp(max_bytes=max_bytes, timeout=timeout, verify=verify, jobs=4, attempts=2)
    outcome: list[tuple[dict[str, Any], tuple[Added, ...]]] = []
    failure: list[UpdateError] = []

    def work() -> None:
        try:
            outcome.append(_read_new(http, index.value, document, log or Log(io.StringIO(), False)))
        except UpdateError as exc:
            failure.append(exc)
        except (IndexReadError, FileFailure) as exc:
            failure.append(UpdateError(f"could not read the index {where}: {exc}"))
        finally:
            http.close()  # here: a run abandoned at the deadline still owns the client

    worker = threading.Thread(target=work, name="matrix-update-index", daemon=True)
    worker.start()
    worker.join(deadline)
    if worker.is_alive():
        http.abandoned.set()
        raise UpdateError(
            f"the update did not finish within {deadline:g} s ({http.bytes} bytes read "
            f"from {where}); the index is too slow or stalling"
        )
    if failure:
        raise failure[0]
    if not outcome:  # the worker died of something unforeseen (its traceback is on stderr)
        raise UpdateError(f"the update from {where} stopped unexpectedly")
    new_document, added = outcome[0]
    installed = install(new_document) if added else None
    return IndexUpdate(
        index=where,
        current=str(path),
        added=added,
        installed=installed,
        bytes_read=http.bytes,
        requests=http.requests,
    )


def _read_new(
    http: Http, index_url: str, document: dict[str, Any], log: Log
) -> tuple[dict[str, Any], tuple[Added, ...]]:
    """A copy of ``document`` with the releases on the index it lacks."""
    from .wheelreader.assemble import wheels_by_version
    from .wheelreader.cache import file_record, release_record
    from .wheelreader.wheel import load_probes, read_wheel

    page, _ = fetch_index(http, index_url, DEFAULT_PROJECT)
    releases, _skipped = wheels_by_version(page)
    known = {str(r.get("version")) for r in document["releases"] if isinstance(r, Mapping)}
    new = [v for v in sorted(releases) if str(v) not in known]
    if not new:
        return document, ()
    probes = load_probes()
    merged = copy.deepcopy(document)
    added: list[Added] = []
    for version in new:
        files = sorted(releases[version], key=lambda f: f.filename)
        records = []
        for item in files:
            analysis = read_wheel(http, item, probes, log)
            if analysis.error is not None:
                raise UpdateError(f"could not read {item.filename}: {analysis.error}")
            records.append(file_record(item, analysis))
        merged["releases"].append(release_record(version, records))
        added.append(Added(str(version), len(records)))
    merged["releases"].sort(key=_version_key)
    return merged, tuple(added)
