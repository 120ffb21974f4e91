"""The failure-signature catalogue (``matrix/signatures.json``) as values.

A signature is data: weighted patterns over log / traceback text, exit codes
and exception types that can only sharpen a text match, and conditions on
normalized facts that confirm or exclude the cause. The harmless-line list
(``matrix/harmless.json``) lives beside it: known cosmetic warnings and the
normal chatter of a healthy session, removed before matching.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._layout import package_dir
from . import plancache
from .prefilter import Literals, Requirement, holds
from .wrapping import compiled
from .wrapping import outside_classes as outside_classes  # re-exported (older imports)
from .wrapping import wrap_tolerant as wrap_tolerant

CATALOGUE_SCHEMA_VERSION = 2
EFFECTS = ("require", "support")


class CatalogueError(Exception):
    """The catalogue is missing or malformed."""


@dataclass(frozen=True)
class Pattern:
    """One regex and how specific it is (1 generic word … 10 a unique error string)."""

    wrapped: str  # the regex matched: ``wrap_tolerant(source)``
    weight: int
    context: bool = False  # only counts beside a pattern that raised the candidate
    source: str = ""  # the regex as the catalogue writes it (shown as evidence)
    # The literals a text must hold before the regex can match (prefilter),
    # read from the regex once and kept in the plan cache (plancache).
    requirement: Requirement = None

    @property
    def regex(self) -> re.Pattern[str]:
        return compiled(self.wrapped)

    @property
    def text(self) -> str:
        return self.source or self.wrapped

    def may_match(self, literals: Literals) -> bool:
        """False only when the text ``literals`` is about cannot hold a match."""
        return holds(self.requirement, literals)


@dataclass(frozen=True)
class Condition:
    """A condition on one normalized fact (see ``diagnosis.facts``)."""

    fact: str
    op: str  # equals | in | spec | contains
    expected: Any
    effect: str  # require | support

    def describe(self) -> str:
        if self.op == "spec":
            return f"{self.fact} {self.expected}"
        if self.op == "in":
            return f"{self.fact} in {list(self.expected)}"
        if self.op == "contains":
            return f"{self.fact} contains {self.expected!r}"
        return f"{self.fact} = {json.dumps(self.expected)}"

    def evaluate(self, value: Any) -> bool | None:
        """True / False for a known value, None when it cannot be judged."""
        if value is None:
            return None
        if self.op == "equals":
            return bool(value == self.expected)
        if self.op == "in":
            return value in self.expected
        if self.op == "contains":
            return isinstance(value, (list, tuple, frozenset, set)) and self.expected in value
        from packaging.specifiers import InvalidSpecifier, SpecifierSet
        from packaging.version import InvalidVersion, Version

        try:
            return Version(str(value)) in SpecifierSet(str(self.expected), prereleases=True)
        except (InvalidVersion, InvalidSpecifier):
            return None


@dataclass(frozen=True)
class Signature:
    id: str
    title: str
    patterns: tuple[Pattern, ...]
    exit_codes: frozenset[int]
    exception_types: frozenset[str]
    conditions: tuple[Condition, ...]
    cause: str
    fix: str | Mapping[str, str]
    confidence: str
    sources: tuple[str, ...]
    distinguishing: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()  # real symptom texts (what a resemblance compares with)
    # The message is what an earlier failure leads to (CPU fallback refused after
    # QNN set-up failed, Python's "EP Error" retry): a cause named earlier in the
    # log ranks before it (engine.root_cause_first).
    consequence: bool = False

    def fix_for(self, os_name: str | None, facts: Mapping[str, Any] | None = None) -> str:
        """The fix for the platform in question (``windows`` / ``posix`` / ``any``),
        with ``{fact}`` placeholders filled from the facts known."""
        if isinstance(self.fix, str):
            text = self.fix
        else:
            key = "windows" if os_name == "windows" else "posix" if os_name else None
            text = self.fix.get(key or "any") or self.fix.get("any") or ""
            if not text:
                text = "\n".join(f"{k}: {v}" for k, v in self.fix.items())
        known = facts or {}
        text = _PINNED_REINSTALL.sub(lambda m: _reinstall(m, known), text)
        return _PLACEHOLDER.sub(lambda m: _fill(m[1], known), text)


_PLACEHOLDER = re.compile(r"\{([a-z_.]+)\}")
# A catalogue command that pins distributions to versions from the facts:
# python -m pip install --force-reinstall --no-deps onnxruntime=={onnxruntime.version} ...
_PINNED_REINSTALL = re.compile(
    r"python -m pip install(?P<flags>(?: --[a-z-]+)*)"
    r"(?P<pins>(?: \"?[A-Za-z0-9_.-]+==\{[a-z_.]+\}\"?)+)"
)
_PIN = re.compile(r"([A-Za-z0-9_.-]+)==\{([a-z_.]+)\}")


def _reinstall(match: re.Match[str], facts: Mapping[str, Any]) -> str:
    """The pins filled from the facts; where a version is not known, a command
    that reinstalls whatever version is installed (read from its metadata by
    the interpreter that runs it), typed the same in sh, PowerShell and cmd
    (no ``$``, ``%``, ``!``, backtick or inner double quote): never a made-up pin."""
    pins = _PIN.findall(match["pins"])
    if all(facts.get(key) is not None for _name, key in pins):
        return match[0]  # the placeholders are filled as usual
    flags = ", ".join(f"'{flag}'" for flag in match["flags"].split())
    names = ", ".join(f"'{name}'" for name, _key in pins) + ("," if len(pins) == 1 else "")
    return (
        'python -c "import subprocess, sys; from importlib.metadata import version; '
        f"subprocess.check_call([sys.executable, '-m', 'pip', 'install', {flags}] + "
        f"[n + '==' + version(n) for n in ({names})])\""
    )
_UNKNOWN = {  # outside a pinned command (there: _reinstall)
    "htp_arch": "NN (the chip's Hexagon version, e.g. 73: `qnndoctor check` shows it)",
    "onnxruntime.version": "the installed version (`python -m pip show onnxruntime`)",
    "onnxruntime_qnn.version": "the installed version (`python -m pip show onnxruntime-qnn`)",
}


def _fill(key: str, facts: Mapping[str, Any]) -> str:
    value = facts.get(key)
    if value is None:
        return _UNKNOWN.get(key, key)
    return str(value).removeprefix("v") if key == "htp_arch" else str(value)


@dataclass(frozen=True)
class HarmlessLine:
    id: str
    pattern: str
    why: str
    sources: tuple[str, ...]
    requirement: Requirement = None  # as Pattern.requirement

    @property
    def regex(self) -> re.Pattern[str]:
        return compiled(self.pattern)

    def may_match(self, literals: Literals) -> bool:
        return holds(self.requirement, literals)


@dataclass(frozen=True)
class Catalogue:
    signatures: tuple[Signature, ...]
    harmless: tuple[HarmlessLine, ...]

    def by_id(self, signature_id: str) -> Signature | None:
        return next((s for s in self.signatures if s.id == signature_id), None)


def normalize_exit_code(code: int) -> int:
    """Windows NTSTATUS codes arrive signed (-1073741819) or unsigned (0xC0000005)."""
    return code & 0xFFFFFFFF if code >= 0 or code < -255 else code


def _condition(entry: Mapping[str, Any]) -> Condition:
    effect = str(entry.get("effect", "require"))
    if effect not in EFFECTS:
        raise ValueError(f"condition on {entry.get('fact')}: unknown effect {effect!r}")
    for op in ("equals", "in", "spec", "contains"):
        if op in entry:
            expected = entry[op]
            if op == "in":
                expected = tuple(expected)
            if op == "spec":
                from packaging.specifiers import SpecifierSet

                SpecifierSet(str(expected))  # raises InvalidSpecifier (a ValueError) early
            return Condition(str(entry["fact"]), op, expected, effect)
    raise ValueError(f"condition on {entry.get('fact')}: no operator")


def _signature(entry: Mapping[str, Any], plans: plancache.Plans) -> Signature:
    patterns = tuple(
        Pattern(
            *plans.pattern(str(p["regex"]))[:1],
            int(p.get("weight", 3)),
            bool(p.get("context", False)),
            str(p["regex"]),
            plans.pattern(str(p["regex"]))[1],
        )
        for p in entry.get("patterns") or ()
    )
    fix = entry.get("fix", "")
    return Signature(
        id=str(entry["id"]),
        title=str(entry.get("title", entry["id"])),
        patterns=patterns,
        exit_codes=frozenset(normalize_exit_code(int(c)) for c in entry.get("exit_codes") or ()),
        exception_types=frozenset(str(t) for t in entry.get("exception_types") or ()),
        conditions=tuple(_condition(c) for c in entry.get("facts") or ()),
        cause=str(entry.get("cause", "")),
        fix=dict(fix) if isinstance(fix, Mapping) else str(fix),
        confidence=str(entry.get("confidence", "field-report")),
        sources=tuple(str(s) for s in entry.get("sources") or ()),
        distinguishing=tuple(str(s) for s in entry.get("distinguishing_facts") or ()),
        examples=tuple(str(s) for s in entry.get("symptom_examples") or ()),
        consequence=bool(entry.get("consequence", False)),
    )


def _harmless(entry: Mapping[str, Any], plans: plancache.Plans) -> HarmlessLine:
    return HarmlessLine(
        id=str(entry["id"]),
        pattern=str(entry["regex"]),
        why=str(entry.get("why", "")),
        sources=tuple(str(s) for s in entry.get("sources") or ()),
        requirement=plans.harmless(str(entry["regex"])),
    )


def _read(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError as exc:
        raise ValueError("nested too deeply") from exc


def load_from(folder: Path, *, cache: bool = False) -> Catalogue:
    """The catalogue in ``folder`` (signatures.json + harmless.json). ``cache``:
    keep its regexes' plans in the user cache (plancache; the installed one)."""
    path = folder / "signatures.json"
    try:
        raw = path.read_bytes()
        data = _read(raw)
        if data.get("schema_version") != CATALOGUE_SCHEMA_VERSION:
            raise ValueError(
                f"schema_version {data.get('schema_version')!r}, expected {CATALOGUE_SCHEMA_VERSION}"
            )
        path = folder / "harmless.json"
        raw_harmless = path.read_bytes()
        harmless_data = _read(raw_harmless)
        # Each regex compiles when a text may hold a match: check them all
        # here once per catalogue (a bad one is the catalogue's error, not a
        # traceback halfway through a log); the plan cache remembers that.
        plans = plancache.load(raw + b"\0" + raw_harmless, data, harmless_data, cache=cache)
        path = folder / "signatures.json"
        signatures = tuple(_signature(e, plans) for e in data["signatures"])
        path = folder / "harmless.json"
        harmless = tuple(_harmless(e, plans) for e in harmless_data["harmless"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, re.error) as exc:
        raise CatalogueError(f"{path}: {type(exc).__name__}: {exc}") from exc
    seen: set[str] = set()
    for signature in signatures:
        if signature.id in seen:
            raise CatalogueError(f"{folder / 'signatures.json'}: duplicate id {signature.id}")
        seen.add(signature.id)
    return Catalogue(signatures, harmless)


@functools.cache
def load() -> Catalogue:
    """The installed catalogue (cached: it is read-only data)."""
    folder = package_dir("matrix")
    if folder is None:
        raise CatalogueError("the qnndoctor.matrix package is missing from this installation")
    return load_from(folder, cache=True)
