"""A real package index on 127.0.0.1 for the refresh tests: the PEP 691 JSON
simple API page plus file downloads with HTTP Range support, and the ways real
servers get it wrong (ranges ignored or refused, short answers, 5xx)."""

from __future__ import annotations

import hashlib
import json
import re
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

__all__ = ["IndexServer", "Seen", "Served", "serve"]

# How the file URL answers:
#   range         206 with Content-Range, as a good server does
#   ignore-range  200 with the whole body, whatever Range says
#   refuse-416    416 to any Range request, 200 without one
#   refuse-501    501 to any Range request, 200 without one
#   truncate      206 whose body is shorter than the range (Content-Length matches the body)
#   wrong-range   206 whose Content-Range names other bytes than those asked for
#   missing       404, although the index lists the file
#   hang          no answer at all until the server stops (or 30 s pass)
MODES = (
    "range",
    "ignore-range",
    "refuse-416",
    "refuse-501",
    "truncate",
    "wrong-range",
    "missing",
    "hang",
)


@dataclass(frozen=True)
class Served:
    """One file on the index and how the server treats it."""

    filename: str
    data: bytes
    mode: str = "range"
    sha256: str | None = None  # what the index claims; default: the real hash
    upload_time: str = "2025-01-02T03:04:05.000000Z"
    requires_python: str | None = None
    yanked: bool | str = False
    fail_first: int = 0  # answer 503 to this many requests for the file first
    absolute_url: bool = False  # list an absolute URL instead of a relative one
    list_size: bool = True  # False: the index omits "size" (PEP 700 is optional)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}; one of {MODES}")

    @property
    def index_sha256(self) -> str:
        return self.sha256 or hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class Seen:
    """One request the server answered."""

    path: str
    range: str | None
    accept: str | None


class _QuietServer(ThreadingHTTPServer):
    """Clients that hang up early (the tool stops reading a body it has
    rejected) are normal here: no traceback on stderr for them."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class IndexServer:
    """``url`` is the index root (``.../simple/``) to pass as --index-url."""

    def __init__(self, project: str, files: Sequence[Served] = (), *, page: str = "json") -> None:
        self.project = project
        self.page = page  # "json", "html" (a PEP 503-only index) or "garbage"
        self._files: dict[str, Served] = {f.filename: f for f in files}
        self._failures: dict[str, int] = {}
        self._seen: list[Seen] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _QuietServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def root(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def url(self) -> str:
        return f"{self.root}/simple/"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)

    def publish(self, served: Served) -> None:
        with self._lock:
            self._files[served.filename] = served

    def seen(self) -> list[Seen]:
        with self._lock:
            return list(self._seen)

    def file_requests(self) -> list[Seen]:
        return [s for s in self.seen() if s.path.startswith("/files/")]

    def reset(self) -> None:
        with self._lock:
            self._seen.clear()

    def page_json(self) -> dict[str, Any]:
        with self._lock:
            files = sorted(self._files.values(), key=lambda f: f.filename)
        entries = []
        for served in files:
            url = f"../../files/{served.filename}"
            if served.absolute_url:
                url = f"{self.root}/files/{served.filename}"
            entry: dict[str, Any] = {
                "filename": served.filename,
                "url": url,
                "hashes": {"sha256": served.index_sha256},
                "upload-time": served.upload_time,
                "requires-python": served.requires_python,
                "yanked": served.yanked,
            }
            if served.list_size:
                entry["size"] = len(served.data)
            entries.append(entry)
        return {
            "meta": {"api-version": "1.1"},
            "name": self.project,
            "files": entries,
            "versions": sorted({f.filename.split("-")[1] for f in files}),
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(
                self, status: int, body: bytes, headers: Mapping[str, str] | None = None
            ) -> None:
                self.send_response(status)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                path = unquote(urlsplit(self.path).path)
                with server._lock:
                    server._seen.append(
                        Seen(path, self.headers.get("Range"), self.headers.get("Accept"))
                    )
                if path.rstrip("/") == f"/simple/{server.project}":
                    self._page()
                elif path.startswith("/files/"):
                    self._file(path[len("/files/") :])
                else:
                    self._send(404, b"not found")

            def _page(self) -> None:
                if server.page == "html":
                    body = b"<html><body><a href='x.whl'>x.whl</a></body></html>"
                    self._send(200, body, {"Content-Type": "text/html"})
                elif server.page == "garbage":
                    self._send(
                        200, b"{not json", {"Content-Type": "application/vnd.pypi.simple.v1+json"}
                    )
                else:
                    body = json.dumps(server.page_json()).encode()
                    self._send(200, body, {"Content-Type": "application/vnd.pypi.simple.v1+json"})

            def _file(self, name: str) -> None:
                with server._lock:
                    served = server._files.get(name)
                    failures = server._failures.get(name, 0)
                    if served is not None and failures < served.fail_first:
                        server._failures[name] = failures + 1
                        served_now: Served | None = None
                    else:
                        served_now = served
                if served is None:
                    self._send(404, b"no such file")
                    return
                if served_now is None:
                    self._send(503, b"try again")
                    return
                if served.mode == "missing":
                    self._send(404, b"gone")
                    return
                if served.mode == "hang":
                    server._stopping.wait(30)  # bounded: the test never waits this long
                    self.close_connection = True
                    return
                data = served.data
                wanted = self.headers.get("Range")
                if wanted is None or served.mode == "ignore-range":
                    self._send(200, data, {"Content-Type": "application/octet-stream"})
                    return
                if served.mode == "refuse-416":
                    self._send(416, b"", {"Content-Range": f"bytes */{len(data)}"})
                    return
                if served.mode == "refuse-501":
                    self._send(501, b"ranges not implemented")
                    return
                span = _parse_range(wanted, len(data))
                if span is None:
                    self._send(416, b"", {"Content-Range": f"bytes */{len(data)}"})
                    return
                first, last = span
                body = data[first : last + 1]
                if served.mode == "truncate":
                    body = body[: max(0, len(body) // 2)]
                shown = (first + 1, last + 1) if served.mode == "wrong-range" else (first, last)
                self._send(
                    206,
                    body,
                    {
                        "Content-Type": "application/octet-stream",
                        "Content-Range": f"bytes {shown[0]}-{shown[1]}/{len(data)}",
                    },
                )

        return Handler


def _parse_range(header: str, size: int) -> tuple[int, int] | None:
    """(first, last) of a single ``bytes=`` range, or None when unsatisfiable."""
    match = re.fullmatch(r"bytes=(\d*)-(\d*)", header.strip())
    if not match or (not match.group(1) and not match.group(2)):
        return None
    if not match.group(1):
        length = int(match.group(2))
        if length == 0:
            return None
        return max(0, size - length), size - 1
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) else size - 1
    if first >= size or last < first:
        return None
    return first, min(last, size - 1)


@contextmanager
def serve(
    project: str, files: Sequence[Served] = (), *, page: str = "json"
) -> Iterator[IndexServer]:
    """A running index server, stopped afterwards."""
    server = IndexServer(project, files, page=page)
    server.start()
    try:
        yield server
    finally:
        server.stop()
