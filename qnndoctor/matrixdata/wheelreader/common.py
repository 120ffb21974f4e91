"""What every part of the matrix refresh shares: constants, errors, the log."""

from __future__ import annotations

import re
import threading
from typing import TextIO

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
_HEAD_CHUNK = 2048  # compressed bytes fetched (and read per step) for a header read
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

    def __init__(self, stream: TextIO, verbose: bool, prefix: str = "refresh") -> None:
        self.stream = stream
        self.verbose = verbose
        self.prefix = prefix
        self._lock = threading.Lock()

    def _write(self, text: str) -> None:
        with self._lock:
            self.stream.write(text + "\n")
            self.stream.flush()

    def info(self, text: str) -> None:
        self._write(f"{self.prefix}: {text}")

    def debug(self, text: str) -> None:
        if self.verbose:
            self._write(f"{self.prefix}: {text}")

    def warning(self, text: str) -> None:
        self._write(f"{self.prefix}: warning: {text}")
