"""The shape of the smoke child's result line, checked before anything reads it.

The child runs in someone else's interpreter, where a sitecustomize, a
patched ``json`` or a broken install can print anything on the marked line.
Rules, signatures and renderers call ``.get`` on the fields they read, so a
field of an unexpected type (``"exception": "notadict"``) must be caught here:
the result then counts as ``failed`` with the raw text kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

RAW_KEPT = 20_000  # characters of an unexpected result line kept in the report


def _optional(kind: type | tuple[type, ...]) -> Callable[[Any], bool]:
    return lambda value: value is None or (isinstance(value, kind) and not isinstance(value, bool))


def _list_of(kind: type | tuple[type, ...]) -> Callable[[Any], bool]:
    return lambda value: (
        value is None or (isinstance(value, list) and all(isinstance(item, kind) for item in value))
    )


def _exception(value: Any) -> bool:
    return value is None or (
        isinstance(value, dict)
        and all(_optional(str)(value.get(key)) for key in ("type", "message", "traceback"))
    )


def _assignment(value: Any) -> bool:
    return value is None or (
        isinstance(value, list)
        and all(
            isinstance(sub, dict)
            and isinstance(sub.get("ep"), str)
            and isinstance(sub.get("nodes"), list)
            for sub in value
        )
    )


def _timings(value: Any) -> bool:
    return value is None or (
        isinstance(value, dict) and all(_optional((int, float))(v) for v in value.values())
    )


_NUMBER = (int, float)
# Every field the child writes and something on this side reads. Fields not
# listed are kept as they are (a newer child may add some).
FIELDS: dict[str, Callable[[Any], bool]] = {
    "status": lambda value: isinstance(value, str),
    "stage": _optional(str),
    "path": _optional(str),
    "onnxruntime_version": _optional(str),
    "onnxruntime_path": _optional(str),
    "onnxruntime_qnn_version": _optional(str),
    "qnn_version": _optional(str),
    "ep_library": _optional(str),
    "backend_path_option": _optional(str),
    "ep_devices": _list_of(dict),
    "available_providers": _list_of(str),
    "session_providers": _list_of(str),
    "loaded_libraries": _list_of(str),
    "assignment": _assignment,
    "output": _list_of(_NUMBER),
    "nodes_not_on_qnn": _list_of(str),
    "max_abs_error": _optional(_NUMBER),
    "tolerance": _optional(_NUMBER),
    "child_duration_s": _optional(_NUMBER),
    "exception": _exception,
    "timings_s": _timings,
}


def problems(result: dict[str, Any]) -> list[str]:
    """What is wrong with a result line's fields (empty: the shape is right)."""
    from ..safejson import MAX_DEPTH, depth_exceeds

    found = []
    if depth_exceeds(result):  # renderers and the redactor walk it recursively
        found.append(f"nested deeper than {MAX_DEPTH} levels")
    if "status" not in result:
        found.append("no status")
    for key, check in FIELDS.items():
        if key in result and not check(result[key]):
            found.append(f"{key} is {type(result[key]).__name__} {_short(result[key])}")
    return found


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
