"""Small helpers shared by the probes.

Everything in ``probes/`` runs inside the *target* interpreter, which may be any
CPython 3.8+ with nothing but the standard library: no third-party imports, no
syntax newer than 3.8, and never an import of onnxruntime.
"""

from __future__ import annotations

import errno
import os
import stat
import struct
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import IO, Any, Dict, List, Optional, Tuple

# PE machine types (IMAGE_FILE_MACHINE_*), named as Microsoft names them.
PE_MACHINES = {
    0x014C: "I386",
    0x01C4: "ARMNT",
    0x8664: "AMD64",
    0xAA64: "ARM64",
    0xA641: "ARM64EC",
    0xA64E: "ARM64X",
}

# ELF e_machine values we care about (EM_*).
ELF_MACHINES = {
    3: "i386",
    40: "arm",
    62: "x86_64",
    164: "hexagon",
    183: "aarch64",
    243: "riscv",
}

# One spelling per architecture, so facts from different APIs compare equal.
_ARCH_ALIASES = {
    "amd64": "x86_64",
    "x86_64": "x86_64",
    "x64": "x86_64",
    "em64t": "x86_64",
    "arm64": "arm64",
    "aarch64": "arm64",
    "arm64ec": "arm64",
    "arm64x": "arm64",
    "i386": "x86",
    "i486": "x86",
    "i586": "x86",
    "i686": "x86",
    "x86": "x86",
    "win32": "x86",
    "armnt": "arm",
    "arm": "arm",
    "armv7l": "arm",
    "armv8l": "arm",
    "hexagon": "hexagon",
}


def normalize_arch(name: Optional[str]) -> Optional[str]:
    """Map the many spellings of a CPU architecture onto one."""
    if not name:
        return None
    return _ARCH_ALIASES.get(name.strip().lower(), name.strip().lower())


def working_folder() -> Optional[str]:
    """``os.getcwd()``, or None when the working folder no longer exists (a
    shell still standing in a removed folder): the import system then finds
    nothing through ``''`` or a relative entry either."""
    try:
        return os.getcwd()
    except OSError:
        return None


def absolute(path: str) -> str:
    """``os.path.abspath``, except that a relative path stays as it is when
    the working folder is gone (it leads nowhere then)."""
    if os.path.isabs(path) or working_folder() is not None:
        return os.path.abspath(path)
    return path


def show(path: Any) -> str:
    """Text that can always be printed and put into JSON.

    File names that are not valid in the filesystem encoding arrive as lone
    surrogates; they become ``\\xNN`` escapes instead of crashing the output.
    """
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    text = str(path)
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "backslashreplace")


def non_ascii_chars(text: str) -> List[str]:
    """The distinct non-ASCII characters of ``text``, in order of appearance."""
    seen: List[str] = []
    for ch in text:
        if ord(ch) > 127 and ch not in seen:
            seen.append(ch)
    return seen


class NotRegularFile(OSError):
    """A FIFO, device or socket where a file was expected: never read, since
    opening a FIFO blocks until a writer comes (forever)."""


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def open_regular(path: str) -> IO[bytes]:
    """Open ``path`` for binary reading only if it is a regular file.

    O_NONBLOCK makes the open of a FIFO return at once (POSIX); fstat on the
    opened descriptor then decides, so no swap between a check and the open
    can fool it. Windows has no FIFOs in folders: a stat check suffices.
    """
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
    if not hasattr(os, "O_NONBLOCK"):
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file", path)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            raise NotRegularFile(errno.EINVAL, "not a regular file (%s)" % kind, path)
        if hasattr(os, "O_NONBLOCK"):  # back to blocking reads (no effect on files)
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_head(path: str, size: int) -> bytes:
    with open_regular(path) as handle:
        return handle.read(size)


def binary_format(path: str) -> Dict[str, Any]:
    """Container format and machine of a native binary, read from its header.

    Only a few hundred bytes are read, so this is cheap even for 100 MB files.
    """
    head = read_head(path, 4096)
    if head[:2] == b"MZ" and len(head) >= 0x40:
        (pe_offset,) = struct.unpack_from("<I", head, 0x3C)
        if pe_offset + 6 > len(head):
            with open_regular(path) as handle:
                handle.seek(pe_offset)
                header = handle.read(6)
        else:
            header = head[pe_offset : pe_offset + 6]
        if len(header) < 6 or header[:4] != b"PE\x00\x00":
            return {"format": "PE", "machine": None, "error": "no PE signature (truncated?)"}
        (machine,) = struct.unpack_from("<H", header, 4)
        return {
            "format": "PE",
            "machine": PE_MACHINES.get(machine, "0x%04X" % machine),
            "machine_code": machine,
        }
    if head[:4] == b"\x7fELF":
        if len(head) < 64:
            return {"format": "ELF", "machine": None, "error": "truncated ELF header"}
        endian = "<" if head[5] == 1 else ">"
        bits = 64 if head[4] == 2 else 32
        (machine,) = struct.unpack_from(endian + "H", head, 18)
        info: Dict[str, Any] = {
            "format": "ELF",
            "machine": ELF_MACHINES.get(machine, str(machine)),
            "machine_code": machine,
            "bits": bits,
        }
        # The section header table sits at the end of the file: a copy cut
        # short (interrupted download or install) no longer reaches it.
        if bits == 64:
            (table,) = struct.unpack_from(endian + "Q", head, 0x28)
            entry_size, count = struct.unpack_from(endian + "HH", head, 0x3A)
        else:
            (table,) = struct.unpack_from(endian + "I", head, 0x20)
            entry_size, count = struct.unpack_from(endian + "HH", head, 0x2E)
        needed = table + entry_size * count
        size = os.path.getsize(path)
        if table and needed > size:
            info["error"] = "truncated: %d bytes on disk, section headers end at %d" % (
                size,
                needed,
            )
        return info
    if head[:4] in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe"):
        return {"format": "Mach-O", "machine": None}
    return {"format": "unknown", "machine": None, "error": "unrecognised header"}


class LazyPattern:
    """A regular expression compiled when first used. The probe program pays
    for each compile (~0.05-0.3 ms) on every check, and most runs need only
    a few of them (no SDK, no stub libraries, no missing top_level.txt)."""

    def __init__(self, pattern: Any, ignore_case: bool = False) -> None:
        self._pattern = pattern
        self._ignore_case = ignore_case
        self._compiled: Any = None

    def compiled(self) -> Any:
        if self._compiled is None:
            import re  # only here: a typical run needs no regex at all

            flags = re.IGNORECASE if self._ignore_case else 0
            self._compiled = re.compile(self._pattern, flags)
        return self._compiled

    def search(self, text: Any) -> Any:
        return self.compiled().search(text)

    def match(self, text: Any) -> Any:
        return self.compiled().match(text)

    def sub(self, replacement: Any, text: Any) -> Any:
        return self.compiled().sub(replacement, text)


_VERSION_IN_NAME = LazyPattern(r"(\d+\.\d+\.\d+(?:\.\d+)?)")


def version_in_name(name: str) -> Optional[str]:
    match = _VERSION_IN_NAME.search(name)
    return match.group(1) if match else None


def canonical_name(name: str) -> str:
    """PEP 503 normalised distribution name: ``re.sub(r"[-_.]+", "-", name).lower()``,
    without the regex (a typical run then never imports ``re``)."""
    parts: List[str] = []
    after_separator = False
    for char in name:
        if char in "-_.":
            if not after_separator:
                parts.append("-")
            after_separator = True
        else:
            parts.append(char)
            after_separator = False
    return "".join(parts).lower()


def is_windows() -> bool:
    return sys.platform == "win32"


def uname_fields() -> Tuple[str, str, str, str]:
    """(system, release, version, machine) from ``platform.uname()``."""
    import platform

    found = platform.uname()
    return found.system, found.release, found.version, found.machine


def machine() -> str:
    """``platform.machine()``."""
    return uname_fields()[3]


def python_version_fields() -> Tuple[str, str]:
    """(``platform.python_version()``, ``platform.python_implementation()``)."""
    import platform

    return platform.python_version(), platform.python_implementation()


def libc_version() -> Tuple[str, str]:
    """``platform.libc_ver()``."""
    import platform

    return platform.libc_ver()


def hash_file(path: str, algorithm: str) -> str:
    """The file's digest as RECORD writes it (urlsafe base64, no padding)."""
    import base64
    import hashlib

    digest = hashlib.new(algorithm)
    with open_regular(path) as handle:
        for block in iter(lambda: handle.read(1024 * 1024), b""):
            digest.update(block)
    return base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode("ascii")
