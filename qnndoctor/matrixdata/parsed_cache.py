"""The release matrix, parsed once per file: a compact form in the user cache.

Every check reads releases.json (about 1.6 MB of JSON, ~20 ms to read,
check for depth and turn into values). What the resolver reads of it
(``releases.compact_document``, about an eighth) is kept here with
``marshal``, with the known issues and the SHA-256 of the data files (the
report's matrix identity), keyed on each source file's path, size and
mtime_ns, on qnndoctor's version and on the module that defines the compact
form. Any difference and the entry is rebuilt from the files; an entry that
cannot be read (truncated, corrupt, another format) is recorded in
``events`` and rebuilt, never a traceback. Entries are written atomically;
one that cannot be written only costs the parse next time (also recorded).
"""

from __future__ import annotations

import binascii
import functools
import marshal
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from . import releases as _releases_module
from .releases import ReleaseMatrix, ReleasesError, compact_document, parse

FORMAT = 1
_MAGIC = b"qnndoctor parsed matrix\n"
# What happened to the cache in this process (shown by ``check --verbose``).
events: list[str] = []
# SHA-256 of data files, by (path, size, mtime_ns), and of identity texts
# (``files_sha256``): from a cache entry, or computed while building one.
_digests: dict[tuple[str, int, int], str] = {}
_texts: dict[str, str] = {}

Build = Callable[[bytes, Any, Any], ReleaseMatrix]


def cache_dir() -> Path:
    """``parsed`` in qnndoctor's user cache folder."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("qnndoctor")) / "parsed"


def known_digest(path: Path, size: int, mtime_ns: int) -> str | None:
    """The SHA-256 of ``path`` if a cache entry (or its building) recorded it
    for exactly this size and mtime."""
    return _digests.get((str(path), size, mtime_ns))


@functools.cache
def file_sha256(path: Path, size: int, mtime_ns: int) -> str:
    """The SHA-256 of ``path`` (as it is at this size and mtime)."""
    known = known_digest(path, size, mtime_ns)
    if known is not None:
        return known
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _identity_text(paths: Iterable[Path]) -> str:
    lines = []
    for path in paths:
        try:
            stat = path.stat()
            lines.append(f"{path.name} {file_sha256(path, stat.st_size, stat.st_mtime_ns)}\n")
        except OSError as exc:
            lines.append(f"{path.name} unreadable: {exc.strerror}\n")
    return "".join(lines)


def files_sha256(paths: Iterable[Path]) -> str:
    """One SHA-256 over a line "name sha256" per data file: the matrix
    identity in reports (``tickets.matrix_identity``). Two equal ones were
    made from the same data."""
    text = _identity_text(paths)
    known = _texts.get(text)
    if known is None:
        import hashlib

        known = _texts[text] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return known


def _stat(path: Path | None) -> list[Any]:
    if path is None:
        return [None, None, None]
    stat = path.stat()
    return [str(path), stat.st_size, stat.st_mtime_ns]


def _key(releases_path: Path, issues_path: Path | None) -> list[Any] | None:
    """What an entry must have been built from; None when a file cannot be stat'ed."""
    try:
        return [
            FORMAT,
            __version__,
            *_stat(Path(_releases_module.__file__)),
            *_stat(releases_path),
            *_stat(issues_path),
        ]
    except OSError as exc:
        events.append(f"parsed matrix not cached: {exc}")
        return None


def entry_path(folder: Path, releases_path: Path) -> Path:
    """One entry per releases.json (the bundled one, an updated one)."""
    return folder / f"releases-{binascii.crc32(str(releases_path).encode()):08x}.marshal"


def _read(entry: Path, key: list[Any]) -> tuple[Any, Any, Any] | None:
    """The entry's compact releases document, issues document and digests,
    when it was built from exactly ``key``; None (recorded) otherwise."""
    try:
        data = entry.read_bytes()
    except (FileNotFoundError, NotADirectoryError):  # no entry yet
        return None
    except OSError as exc:
        events.append(f"ignored the parsed matrix cache {entry}: {exc.strerror or exc}")
        return None
    head = len(_MAGIC) + 4
    if data[: len(_MAGIC)] != _MAGIC or len(data) < head:
        events.append(f"ignored the parsed matrix cache {entry}: not a cache entry")
        return None
    payload = data[head:]
    if int.from_bytes(data[len(_MAGIC) : head], "big") != binascii.crc32(payload):
        events.append(f"ignored the parsed matrix cache {entry}: damaged (checksum differs)")
        return None
    try:
        stored = marshal.loads(payload)
        if not isinstance(stored, list) or not stored or stored[0] != key:
            return None  # built from other files or by another qnndoctor: rebuilt
        _key_again, releases, issues, digests, texts = stored
    except (EOFError, ValueError, TypeError) as exc:
        events.append(f"ignored the parsed matrix cache {entry}: unreadable ({exc})")
        return None
    return releases, issues, (digests, texts)


def _interned(value: Any) -> Any:
    """The same data with equal strings as one object: ``marshal`` writes a
    repeated object once (folder names, kinds and machines repeat thousands
    of times), which halves the entry and its reading time."""
    if isinstance(value, str):
        return sys.intern(value)
    if isinstance(value, list):
        return [_interned(item) for item in value]
    if isinstance(value, dict):
        return {_interned(key): _interned(item) for key, item in value.items()}
    return value


def _write(entry: Path, key: list[Any], document: Any, issues: Any, digests: Any) -> None:
    try:
        payload = marshal.dumps(_interned([key, compact_document(document), issues, *digests]))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        # A malformed record: not cached, so it fails where it always did (when read).
        events.append(f"parsed matrix not cached: {type(exc).__name__}: {exc}")
        return
    data = _MAGIC + binascii.crc32(payload).to_bytes(4, "big") + payload
    from ..safejson import replace_atomically

    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        replace_atomically(entry, data, durable=False)  # the CRC checks what is read back
    except OSError as exc:
        events.append(f"parsed matrix not cached in {entry.parent}: {exc.strerror or exc}")


def _sha256_files(paths: Iterable[Path], first: tuple[Path, bytes]) -> list[Any]:
    """[path, size, mtime_ns, sha256] of each file (``first`` already read)."""
    import hashlib

    rows = []
    for path in (first[0], *paths):
        try:
            stat = path.stat()
            data = first[1] if path == first[0] else path.read_bytes()
        except OSError:
            continue  # the identity reports an unreadable file itself
        rows.append([str(path), stat.st_size, stat.st_mtime_ns, hashlib.sha256(data).hexdigest()])
    return rows


def _remember(digests: Any) -> None:
    files, texts = digests
    for path, size, mtime_ns, digest in files:
        _digests[(str(path), int(size), int(mtime_ns))] = str(digest)
    for text, digest in texts:
        _texts[str(text)] = str(digest)


def load(
    releases_path: Path,
    issues_path: Path | None,
    read: Callable[[Path, Path | None], tuple[bytes, Any, Any]],
    build: Build,
    *,
    also_hash: Sequence[Path] = (),
    folder: Path | None = None,
) -> ReleaseMatrix:
    """The matrix of ``releases_path``: from its cache entry when one was
    built from these exact files, else ``build(*read(...))`` (which raises
    ``ReleasesError`` as without a cache) and a new entry. ``also_hash``:
    the other data files of the matrix identity (``files_sha256`` of
    ``releases_path`` and these is kept with the entry)."""
    key = _key(releases_path, issues_path)
    entry = None
    if key is not None:
        try:
            entry = entry_path(folder or cache_dir(), releases_path)
        except Exception as exc:  # platformdirs found no cache folder: parse as without
            events.append(f"parsed matrix not cached: {type(exc).__name__}: {exc}")
    if key is not None and entry is not None:
        found = _read(entry, key)
        if found is not None:
            releases, issues, digests = found
            try:
                matrix = parse(releases, issues)
                _remember(digests)
            except (ReleasesError, AttributeError, KeyError, TypeError, ValueError) as exc:
                events.append(f"ignored the parsed matrix cache {entry}: {exc}")
            else:
                return matrix
    data, document, issues = read(releases_path, issues_path)
    matrix = build(data, document, issues)
    if key is not None and entry is not None:
        files = _sha256_files(also_hash, (releases_path, data))
        _remember((files, []))
        text = _identity_text([releases_path, *also_hash])
        files_sha256([releases_path, *also_hash])
        _write(entry, key, document, issues, (files, [[text, _texts[text]]]))
    return matrix
