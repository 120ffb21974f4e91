"""Reading a remote wheel with stdlib ``zipfile`` over a ``RangedFile``: its
directory, whole members (size-capped, CRC-checked by zipfile), and just the
start of a binary member (enough for its PE or ELF headers).

Before each read the span it will touch is prefetched in one request (the
local header, a guess at its extra field, and the data zipfile will ask for),
so that zipfile's small reads are answered from memory.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Callable

from .common import (
    _FULL_READ_MAX,
    _HEAD_CHUNK,
    _HEAD_MAX,
    _LOCAL_EXTRA_GUESS,
    FileFailure,
    MemberFailure,
)
from .ranged_file import RangedFile

# Errors zipfile (and the decompressors under it) raise for damaged data.
_DAMAGED = (zipfile.BadZipFile, EOFError, zlib.error, ValueError, struct.error)


def open_wheel(remote: RangedFile) -> zipfile.ZipFile:
    """The wheel's central directory, read from its tail (usually one request,
    which also holds the .dist-info files just before the directory)."""
    remote.prefetch_tail()
    try:
        archive = zipfile.ZipFile(remote)
    except _DAMAGED as exc:
        raise FileFailure(f"bad zip: {exc}") from exc
    size = remote.size or 0
    for info in archive.infolist():
        # zipfile shifts offsets when the directory is not where the end
        # record says (data prepended to a zip); a wheel has none.
        if info.header_offset < 0 or info.header_offset + 30 + info.compress_size > size:
            archive.close()
            raise FileFailure(
                f"bad central directory: member {info.filename} lies outside the archive data"
            )
    return archive


def _check_method(info: zipfile.ZipInfo) -> None:
    if info.flag_bits & 0x1:
        raise MemberFailure("encrypted member")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise MemberFailure(
            f"compression method {info.compress_type} is not supported (only stored and deflated)"
        )


def _local_header(info: zipfile.ZipInfo) -> int:
    """The local header's likely length (its extra field is usually empty)."""
    return 30 + len(info.orig_filename.encode("utf-8")) + _LOCAL_EXTRA_GUESS


def read_member(archive: zipfile.ZipFile, remote: RangedFile, info: zipfile.ZipInfo) -> bytes:
    """The whole member, decompressed and checked against its CRC and size."""
    _check_method(info)
    if info.file_size > _FULL_READ_MAX:
        raise MemberFailure(f"{info.file_size} bytes uncompressed: too large to read whole")
    remote.prefetch(info.header_offset, _local_header(info) + info.compress_size)
    try:
        data = archive.read(info)
    except _DAMAGED as exc:
        raise MemberFailure(f"bad member data: {exc}") from exc
    if len(data) != info.file_size:
        raise MemberFailure(
            f"bad member data: {len(data)} bytes, the directory says {info.file_size}"
        )
    return data


def read_member_head(
    archive: zipfile.ZipFile,
    remote: RangedFile,
    info: zipfile.ZipInfo,
    need: Callable[[bytes], int],
) -> bytes:
    """The start of the member, as far as ``need(head_so_far)`` asks (at most
    ``_HEAD_MAX`` bytes): deflate streams are inflated only that far."""
    _check_method(info)
    remote.prefetch(info.header_offset, _local_header(info) + min(info.compress_size, _HEAD_CHUNK))
    try:
        with archive.open(info) as member:
            # zipfile reads compressed data 4 KiB at a time; a header sits in
            # the first 2 KiB, so read half as much per step (measured in
            # bench/bench_refresh.py: the same requests, ~20 % fewer bytes).
            if isinstance(member, zipfile.ZipExtFile):
                member.MIN_READ_SIZE = _HEAD_CHUNK
            head = b""
            while len(head) < min(need(head), _HEAD_MAX):
                more = member.read(min(need(head), _HEAD_MAX) - len(head))
                if not more:
                    break
                head += more
            return head
    except _DAMAGED as exc:
        raise MemberFailure(f"bad member data: {exc}") from exc
