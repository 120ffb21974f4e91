"""The probe program's JSON output without importing ``json``.

``import json`` costs ~5 ms of the probe program's start-up, mostly for
``re`` (and ``enum``), which its decoder needs and the probe program does
not. This writes the text ``json.dumps(value, ensure_ascii=True,
default=repr, sort_keys=True)`` writes, with the same C string encoder
(``_json.encode_basestring_ascii``); where that is missing (not CPython),
``json`` itself is used. A test checks both give the same text.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Any, Callable, List, Optional

_quote: Optional[Callable[[str], str]]
try:
    import _json

    _quote = _json.encode_basestring_ascii
except ImportError:  # CPython always has _json; json's own fallback then
    _quote = None

_INFINITY = float("inf")


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == _INFINITY:
        return "Infinity"
    if value == -_INFINITY:
        return "-Infinity"
    return float.__repr__(value)


def _key(key: Any) -> str:
    """A dict key as json writes it (before quoting)."""
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError("keys must be str, int, float, bool or None, not %s" % type(key).__name__)


def _write(value: Any, parts: List[str], quote: Callable[[str], str]) -> None:
    if isinstance(value, str):
        parts.append(quote(value))
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, int):
        parts.append(int.__repr__(value))
    elif isinstance(value, float):
        parts.append(_float(value))
    elif isinstance(value, (list, tuple)):
        if not value:
            parts.append("[]")
            return
        parts.append("[")
        for index, item in enumerate(value):
            if index:
                parts.append(", ")
            _write(item, parts, quote)
        parts.append("]")
    elif isinstance(value, dict):
        if not value:
            parts.append("{}")
            return
        parts.append("{")
        for index, (key, item) in enumerate(sorted(value.items())):
            if index:
                parts.append(", ")
            parts.append(quote(_key(key)))
            parts.append(": ")
            _write(item, parts, quote)
        parts.append("}")
    else:
        _write(repr(value), parts, quote)


def dumps(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=True, default=repr, sort_keys=True)``."""
    if _quote is None:
        import json

        return json.dumps(value, ensure_ascii=True, default=repr, sort_keys=True)
    parts: List[str] = []
    _write(value, parts, _quote)
    return "".join(parts)
