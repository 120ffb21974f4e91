"""A wheel on the index as a seekable, read-only file whose reads are HTTP
Range requests, so that stdlib ``zipfile`` reads its central directory and
the few members the matrix needs without downloading the wheel.

Fetched byte ranges are kept (a wheel's tail, a member and its local header),
so that ``zipfile``'s small reads (the end record, the zip64 locator, a local
header) cost no request of their own; ``prefetch`` names a span the caller is
about to read, which then costs one request. When the server ignores or
refuses ranges, the file is downloaded whole, once, into a temporary file
and checked against the index's sha256.
"""

from __future__ import annotations

import bisect
import errno
import hashlib
import io
import tempfile
from typing import IO, TYPE_CHECKING

import httpx

from .common import _CONTENT_RANGE_RE, _TAIL, FileFailure, Log
from .index import Http, IndexFile
from .pip_config import public_url

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer


class RangedFile(io.RawIOBase):
    """Byte access to one wheel on the index: ranged reads, remembered
    segments, and a single whole download (hash-checked) when the server
    ignores ranges. Counts its requests and bytes for the matrix's provenance."""

    def __init__(self, http: Http, index_file: IndexFile, log: Log) -> None:
        super().__init__()
        self.http = http
        self.file = index_file
        self.log = log
        self.size = index_file.size
        self.fetched_whole = False
        self.bytes_read = 0
        self.requests = 0
        self._pos = 0
        self._starts: list[int] = []  # sorted, non-overlapping segments
        self._data: dict[int, bytes] = {}
        self._whole: IO[bytes] | None = None

    # -- io.RawIOBase

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_SET:
            position = offset
        elif whence == io.SEEK_CUR:
            position = self._pos + offset
        elif whence == io.SEEK_END:
            position = self._known_size() + offset
        else:
            raise ValueError(f"invalid whence {whence}")
        if position < 0:  # zipfile expects OSError for a file shorter than an end record
            raise OSError(errno.EINVAL, "seek before the start of the file")
        self._pos = position
        return position

    def readinto(self, buffer: WriteableBuffer) -> int:
        """Always the whole request (up to the end of the file): zipfile
        treats a short read of a header or the directory as corruption."""
        view = memoryview(buffer).cast("B")
        data = self.read_at(self._pos, len(view))
        view[: len(data)] = data
        self._pos += len(data)
        return len(data)

    def close(self) -> None:
        if self._whole is not None:
            self._whole.close()
            self._whole = None
        self._starts.clear()
        self._data.clear()
        super().close()

    # -- ranged access

    def prefetch(self, start: int, length: int) -> None:
        """Fetch ``start`` .. ``start+length`` now, in one request if none of
        it is held yet: the caller is about to read it in small pieces."""
        self.read_at(max(0, start), length)

    def prefetch_tail(self) -> None:
        """The end record, the zip64 records and usually the whole central
        directory: the last 64 KiB + 22 bytes, in one request."""
        size = self._known_size()
        self.prefetch(size - _TAIL, _TAIL)

    def read_at(self, start: int, length: int) -> bytes:
        """Bytes ``start`` .. ``start+length`` (clamped to the file): held
        segments are reused, only the gaps between them are fetched."""
        end = min(start + length, self._known_size())
        pieces: list[bytes] = []
        position = start
        while position < end:
            if self._whole is not None:
                self._whole.seek(position)
                pieces.append(self._whole.read(end - position))
                break
            index = bisect.bisect_right(self._starts, position) - 1
            if index >= 0:
                seg_start = self._starts[index]
                data = self._data[seg_start]
                if position < seg_start + len(data):
                    piece = data[position - seg_start : end - seg_start]
                    pieces.append(piece)
                    position += len(piece)
                    continue
            following = self._starts[index + 1] if index + 1 < len(self._starts) else end
            gap_end = min(end, following)
            fetched = self._fetch(f"bytes={position}-{gap_end - 1}", position, gap_end)
            if self._whole is None:  # the server may have sent everything instead
                self._remember(position, fetched)
        return b"".join(pieces)

    def _remember(self, start: int, data: bytes) -> None:
        if data:
            bisect.insort(self._starts, start)
            self._data[start] = data

    def _known_size(self) -> int:
        """The file size, from the index or else from a suffix range (which
        also fetches the tail that zipfile reads first)."""
        if self.size is None and self._whole is None:
            data = self._fetch(f"bytes=-{_TAIL}", None, None)
            if self._whole is None and self.size is not None:
                self._remember(self.size - len(data), data)
        assert self.size is not None
        return self.size

    def _count_request(self) -> None:
        self.requests += 1

    def _count(self, n: int) -> None:
        self.bytes_read += n
        self.http.count_bytes(n)

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
        if self._whole is not None:
            self._whole.close()
        self._whole = spool
        self.size = got
        self._starts.clear()  # the whole file answers every read from now on
        self._data.clear()
        checked = "sha256 verified" if self.file.sha256 else "no sha256 in the index to verify"
        self.log.warning(
            f"{self.file.filename}: {reason}; downloaded the whole file once ({got} bytes, {checked})"
        )
