"""The catalogue's regexes read once per catalogue, not once per `explain`.

Every pattern of the catalogue is made wrap-tolerant (``wrapping``) and read
for the literals a text must hold before it can match (``prefilter``); that
took about half a second per run, before any text was read, and compiling
every regex another half (docs/speed.md). Both results depend only on the
catalogue's bytes and on the code that computes them, so the installed
catalogue's are kept in qnndoctor's user cache folder, in a file named for
the SHA-256 of those bytes, qnndoctor's version and the prefilter module. A
regex then compiles only when a text holds its literals (``catalogue.compiled``).

Building the plans compiles every regex once (a malformed one is the
catalogue's error at load, as before). An entry that cannot be read (cut
short, another format) is rebuilt; one that cannot be written (a read-only
home, a full disk) only costs the build next time: ``events`` says so.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import __version__
from . import prefilter, wrapping
from .prefilter import Requirement
from .wrapping import compiled, wrap_tolerant

FORMAT = 1
# Entries kept: each catalogue (an update, a new qnndoctor) gets its own file,
# so older ones are removed once a new one is written; a few stay for
# qnndoctor installations side by side that share the cache folder.
KEEP = 4
events: list[str] = []  # what happened to the cache in this process


class Plans:
    """Each catalogue regex's wrap-tolerant form and requirement, by its source."""

    def __init__(
        self, patterns: dict[str, tuple[str, Requirement]], harmless: dict[str, Requirement]
    ) -> None:
        self._patterns, self._harmless = patterns, harmless

    def pattern(self, source: str) -> tuple[str, Requirement]:
        found = self._patterns.get(source)
        if found is None:  # not in a cache entry of this catalogue: read it now
            wrapped = wrap_tolerant(source)
            found = (wrapped, prefilter.requirement_of(wrapped, re.IGNORECASE, source))
        return found

    def harmless(self, source: str) -> Requirement:
        if source not in self._harmless:
            return prefilter.requirement_of(source, re.IGNORECASE)
        return self._harmless[source]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "patterns": {s: [w, _encode(r)] for s, (w, r) in self._patterns.items()},
            "harmless": {s: _encode(r) for s, r in self._harmless.items()},
        }


def _encode(requirement: Requirement) -> Any:
    if requirement is None or isinstance(requirement, str):
        return requirement
    kind, parts = requirement
    return [kind, [_encode(p) for p in parts]]


def _decode(value: Any) -> Requirement:
    if value is None or isinstance(value, str):
        return value
    kind, parts = value
    if kind not in ("all", "any") or not isinstance(parts, list):
        raise ValueError(f"not a requirement: {value!r}")
    return (kind, tuple(_decode(p) for p in parts))


def _sources(data: Mapping[str, Any], harmless: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    patterns = [str(p["regex"]) for e in data["signatures"] for p in e.get("patterns") or ()]
    return patterns, [str(e["regex"]) for e in harmless["harmless"]]


def build(data: Mapping[str, Any], harmless: Mapping[str, Any]) -> Plans:
    """Read every regex of a catalogue (compiling each once: raises re.error
    for a malformed one)."""
    patterns: dict[str, tuple[str, Requirement]] = {}
    sources, harmless_sources = _sources(data, harmless)
    for source in sources:
        if source not in patterns:
            wrapped = wrap_tolerant(source)
            re.compile(wrapped, re.IGNORECASE)  # not kept: most are never needed
            patterns[source] = (wrapped, prefilter.requirement_of(wrapped, re.IGNORECASE, source))
    rules: dict[str, Requirement] = {}
    for source in harmless_sources:
        compiled(source)  # harmless rules are few and read on every text
        rules[source] = prefilter.requirement_of(source, re.IGNORECASE)
    return Plans(patterns, rules)


def cache_dir() -> Path:
    """``catalogue`` in qnndoctor's user cache folder."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("qnndoctor")) / "catalogue"


def entry_name(material: bytes) -> str:
    """The cache file of a catalogue's bytes, for this code."""
    digest = hashlib.sha256(material)
    for code in (Path(prefilter.__file__), Path(wrapping.__file__)):
        try:
            stat = code.stat()
            digest.update(f"\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
        except OSError:
            digest.update(f"\0no {code.name}".encode())
    digest.update(f"\0{FORMAT}\0{__version__}\0{sys.version_info[:2]}".encode())
    return f"plans-{digest.hexdigest()[:32]}.json"


def _read(path: Path, sources: list[str], harmless_sources: list[str]) -> Plans | None:
    try:
        document = json.loads(path.read_text("utf-8"))
        if document.get("format") != FORMAT:
            raise ValueError(f"format {document.get('format')!r}")
        patterns = {
            str(s): (str(w), _decode(r)) for s, (w, r) in dict(document["patterns"]).items()
        }
        rules = {str(s): _decode(r) for s, r in dict(document["harmless"]).items()}
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        events.append(f"catalogue plan cache {path} unreadable ({type(exc).__name__}): rebuilt")
        return None
    if any(s not in patterns for s in sources) or any(s not in rules for s in harmless_sources):
        events.append(f"catalogue plan cache {path} incomplete: rebuilt")
        return None
    return Plans(patterns, rules)


def _write(path: Path, plans: Plans) -> None:
    from ..safejson import keep_newest, write_atomically

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, plans.to_json(), indent=None, durable=False)  # a cache: checked when read
    except OSError as exc:
        events.append(f"catalogue plan cache not written ({exc.strerror or exc}): built each run")
        return
    # Older catalogues' entries, and temporary files of runs killed while
    # writing (a minute old: a run writing now is left alone).
    for pattern, keep, settled_s in (("plans-*.json", KEEP, 0.0), (".plans-*.tmp", 0, 60.0)):
        for problem in keep_newest(path.parent, pattern, keep, settled_s=settled_s):
            events.append(f"catalogue plan cache: {problem}")


def load(
    material: bytes, data: Mapping[str, Any], harmless: Mapping[str, Any], *, cache: bool
) -> Plans:
    """The plans of the catalogue whose files' bytes are ``material``: from the
    cache when ``cache`` and an entry exists, else built (and written when ``cache``)."""
    if not cache:
        return build(data, harmless)
    path = cache_dir() / entry_name(material)
    sources, harmless_sources = _sources(data, harmless)
    found = _read(path, sources, harmless_sources)
    if found is not None:
        return found
    plans = build(data, harmless)
    _write(path, plans)
    return plans
