"""Reading a wheel on the index by HTTP ranges: the range-reading file object
and the zip structure read through it (central directory, members, headers)."""

from __future__ import annotations

import hashlib
import struct
import tempfile
import zlib
from dataclasses import dataclass
from typing import IO

import httpx

from .common import (
    _CONTENT_RANGE_RE,
    _FULL_READ_MAX,
    _HEAD_CHUNK,
    _HEAD_MAX,
    _LOCAL_EXTRA_GUESS,
    _TAIL,
    FileFailure,
    Log,
    MemberFailure,
)
from .index import Http, IndexFile
from .pip_config import public_url

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
