"""``qnndoctor matrix update --from URL``: a newer published release matrix,
downloaded over HTTPS within a size and time limit, checked whole against its
schema, and only then installed into the user cache (the bundled matrix stays
in use until a download fully passes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import matrixdata, safejson
from ..safejson import replace_atomically
from . import checked
from .releases import ReleasesError


def _download(url: str, *, max_bytes: int, verify: Any, timeout: float, deadline: float) -> bytes:
    """The body at ``url``, within ``deadline`` seconds in all.

    ``timeout`` bounds each read; a server that drips a byte now and then
    never trips it, so the download runs in a worker thread and is abandoned
    at the deadline (the worker stops at its next chunk or read timeout).
    """
    import threading

    import httpx

    body = bytearray()
    failure: list[BaseException] = []
    abandoned = threading.Event()

    def work() -> None:
        try:
            with (
                httpx.Client(verify=verify, timeout=timeout, follow_redirects=True) as client,
                client.stream("GET", url, headers={"Accept": "application/json"}) as response,
            ):
                if response.url.scheme != "https":
                    raise UpdateError(f"redirected to a non-HTTPS URL: {response.url}")
                if response.status_code != 200:
                    raise UpdateError(f"HTTP {response.status_code} from {url}")
                for chunk in response.iter_bytes():
                    if abandoned.is_set():
                        return
                    body.extend(chunk)
                    if len(body) > max_bytes:
                        raise UpdateError(f"larger than the {max_bytes} byte limit")
        except httpx.HTTPError as exc:
            failure.append(UpdateError(f"download failed: {type(exc).__name__}: {exc}"))
        except UpdateError as exc:
            failure.append(exc)

    worker = threading.Thread(target=work, name="matrix-update", daemon=True)
    worker.start()
    worker.join(deadline)
    if worker.is_alive():
        abandoned.set()
        raise UpdateError(
            f"the download did not finish within {deadline:g} s "
            f"({len(body)} bytes received); the server is too slow or stalling"
        )
    if failure:
        raise failure[0]
    return bytes(body)


def update_from(
    url: str,
    *,
    max_bytes: int,
    verify: Any = True,
    timeout: float = 30.0,
    deadline: float = 120.0,
) -> Path:
    """Download a releases.json over HTTPS into the user cache, after checking
    it is data of the right shape. Raises ``UpdateError``; the bundled matrix
    stays in use until a download fully passes."""
    if not url.lower().startswith("https://"):
        raise UpdateError("only https:// URLs are accepted")
    body = _download(url, max_bytes=max_bytes, verify=verify, timeout=timeout, deadline=deadline)
    try:
        document = safejson.loads(bytes(body), "the download")
    except safejson.BadJSON as exc:
        raise UpdateError(str(exc)) from exc
    return install(document)


def install(document: Any) -> Path:
    """Check ``document`` against the releases schema, then put it in the user
    cache atomically (a reader sees the old matrix or the new, never half)."""
    _validate(document)
    folder = matrixdata.user_matrix_dir()
    folder.mkdir(parents=True, exist_ok=True)
    data = json.dumps(document, indent=1).encode("utf-8")
    target = folder / "releases.json"
    replace_atomically(target, data)
    checked.stamp(target, data)  # checked just now: later runs need not re-check
    return target


class UpdateError(Exception):
    """The downloaded matrix was refused; nothing was changed."""


def _validate(document: Any) -> None:
    try:
        checked.check_document(document)
    except ReleasesError as exc:
        raise UpdateError(str(exc)) from exc
