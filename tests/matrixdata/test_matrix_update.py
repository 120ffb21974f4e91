"""`qnndoctor matrix update --from URL`: a real HTTPS server on 127.0.0.1
(certificates from trustme), size cap, schema check, fallback on error."""

from __future__ import annotations

import http.server
import json
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import trustme
from conftest import CliResult

from qnndoctor import matrixdata
from qnndoctor._layout import package_dir
from qnndoctor.matrixdata.update import UpdateError, update_from

Cli = Callable[..., CliResult]
BUNDLED = json.loads((package_dir("matrix") or Path()).joinpath("releases.json").read_text("utf-8"))


class _TLSServer(http.server.ThreadingHTTPServer):
    """Wraps each connection in its handler thread, so a refused handshake
    (untrusted certificate) closes its socket instead of leaking it."""

    context: ssl.SSLContext

    def finish_request(self, request: object, client_address: object) -> None:
        assert isinstance(request, socket.socket)
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        try:
            self.RequestHandlerClass(tls, client_address, self)  # type: ignore[arg-type]
        finally:
            tls.close()


@pytest.fixture(scope="module")
def tls() -> Iterator[tuple[trustme.CA, dict[str, bytes], str]]:
    """An HTTPS server on 127.0.0.1 serving whatever ``pages`` holds."""
    ca = trustme.CA()
    pages: dict[str, bytes] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = pages.get(self.path)
            if body is None:
                self.send_response(404)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = _TLSServer(("127.0.0.1", 0), Handler)
    server.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server.context)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield ca, pages, f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    matrixdata.load.cache_clear()
    yield tmp_path / "cache" / "qnndoctor" / "matrix"
    matrixdata.load.cache_clear()


def _client_context(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


def test_update_installs_a_valid_matrix_and_it_is_used(
    tls: tuple[trustme.CA, dict[str, bytes], str], user_cache: Path
) -> None:
    ca, pages, base = tls
    newer = json.loads(json.dumps(BUNDLED))
    newer["releases"] = newer["releases"][:3]
    pages["/releases.json"] = json.dumps(newer).encode()
    path = update_from(f"{base}/releases.json", max_bytes=10_000_000, verify=_client_context(ca))
    assert path == user_cache / "releases.json"
    loaded = matrixdata.load()
    assert "user cache" in (loaded.releases_source or "")
    assert len(loaded.releases.releases) == 3


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"not json at all", "not valid JSON"),
        (b'{"schema_version": 1, "releases": "nope"}', "does not match the releases schema"),
        (b"{" + b" " * 2_000_000 + b"}", "byte limit"),
        (b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
        (b'{"a":' * 500 + b"1" + b"}" * 500, "nested deeper than 64 levels"),
        (json.dumps({**BUNDLED, "releases": []}).encode(), "contains no releases"),
    ],
)
def test_bad_downloads_are_refused_and_nothing_changes(
    tls: tuple[trustme.CA, dict[str, bytes], str], user_cache: Path, body: bytes, message: str
) -> None:
    ca, pages, base = tls
    pages["/bad.json"] = body
    with pytest.raises(UpdateError, match=message):
        update_from(f"{base}/bad.json", max_bytes=1_000_000, verify=_client_context(ca))
    assert not (user_cache / "releases.json").exists()
    assert "bundled" in (matrixdata.load().releases_source or "")


def test_plain_http_and_untrusted_certificates_are_refused(
    tls: tuple[trustme.CA, dict[str, bytes], str], user_cache: Path
) -> None:
    _ca, pages, base = tls
    pages["/releases.json"] = json.dumps(BUNDLED).encode()
    with pytest.raises(UpdateError, match="only https"):
        update_from(base.replace("https", "http") + "/releases.json", max_bytes=10_000_000)
    with pytest.raises(UpdateError, match="download failed"):
        update_from(f"{base}/releases.json", max_bytes=10_000_000)  # system trust store


def test_a_corrupt_cached_matrix_falls_back_to_the_bundled_one(user_cache: Path) -> None:
    user_cache.mkdir(parents=True)
    (user_cache / "releases.json").write_text('{"releases": [{"version": "x"}]}')
    loaded = matrixdata.load()
    assert "bundled" in (loaded.releases_source or "")
    assert any("ignored the updated matrix" in note for note in loaded.notes)


def test_matrix_cli_show_and_update_errors(cli: Cli, user_cache: Path) -> None:
    shown = cli("matrix", "--json").json()
    assert shown["rows"] and shown["known_issues"]
    assert {"version", "platform", "qnn_version", "stubs"} <= set(shown["rows"][0])
    text = cli("matrix")
    assert "2.7.0" in text.out and "win_arm64" in text.out
    refused = cli("matrix", "update", "--from", "http://127.0.0.1:9/x.json")
    assert refused.code == 3 and "only https" in refused.err


def test_a_dripping_server_meets_the_total_deadline(user_cache: Path) -> None:
    """A real HTTPS server that sends one byte every 0.2 s: no single read
    times out, the whole download never ends; the deadline ends it."""
    ca = trustme.CA()
    stop = threading.Event()

    class Drip(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            for _ in range(300):  # bounded: 60 s at most, far beyond the deadline
                if stop.wait(0.2):
                    return
                try:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                except OSError:
                    return

        def log_message(self, format: str, *args: object) -> None:
            return

    server = _TLSServer(("127.0.0.1", 0), Drip)
    server.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server.context)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"https://127.0.0.1:{server.server_address[1]}/releases.json"
        with pytest.raises(UpdateError, match=r"did not finish within 1\.5 s \(\d+ bytes"):
            update_from(
                url, max_bytes=1_000_000, verify=_client_context(ca), timeout=30, deadline=1.5
            )
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
    assert not (user_cache / "releases.json").exists()
