"""Literal values from Python's AST, never by running the code: constants,
names bound earlier in the same scope or at module level, dict/list/tuple
literals, ``dict(...)``, ``{**a, 'k': v}``, string concatenation. Anything
else is :data:`UNKNOWN` and no rule judges it."""

from __future__ import annotations

import ast
from typing import Any


class _Unknown:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()


class Ref:
    """A name bound to something the reader tracks (a SessionOptions, ...)."""

    __slots__ = ("kind", "node", "state")

    def __init__(self, kind: str, node: ast.AST) -> None:
        self.kind = kind
        self.node = node
        self.state: dict[str, Any] = {}


class Dotted(str):
    """An attribute chain such as ``ort.ExecutionMode.ORT_PARALLEL`` (its text)."""

    __slots__ = ()


def dotted(node: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def call_name(node: ast.Call) -> str:
    """The last name of what is called: ``ort.InferenceSession`` -> ``InferenceSession``."""
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


class Scope:
    """Names bound so far, looked up here then in the module scope."""

    __slots__ = ("names", "parent")

    def __init__(self, parent: Scope | None = None) -> None:
        self.names: dict[str, Any] = {}
        self.parent = parent

    def lookup(self, name: str) -> Any:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        return UNKNOWN

    def evaluate(self, node: ast.AST | None, depth: int = 0) -> Any:
        if node is None or depth > 20:
            return UNKNOWN
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.lookup(node.id)
        rule = _EVALUATORS.get(type(node))
        return rule(self, node, depth + 1) if rule is not None else UNKNOWN

    def _dict(self, node: ast.Dict, depth: int) -> Any:
        out: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:  # {**other}
                merge_into(out, self.evaluate(value, depth))
                continue
            k = self.evaluate(key, depth)
            if isinstance(k, (str, int)) and not isinstance(k, _Unknown):
                out[k] = self.evaluate(value, depth)
            else:
                out[PARTIAL] = True
        return out

    def _sequence(self, node: ast.List | ast.Tuple, depth: int) -> Any:
        items = [self.evaluate(e, depth) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)

    def _call(self, node: ast.Call, depth: int) -> Any:
        name = call_name(node)
        if name == "dict" and isinstance(node.func, ast.Name):
            base: dict[Any, Any] = {}
            merged = [(None, a) for a in node.args[:1]] + [(k.arg, k.value) for k in node.keywords]
            for key, given in merged:  # dict(a, k=v, **b): a and b must be known dicts
                value = self.evaluate(given, depth)
                if key is not None:
                    base[key] = value
                elif isinstance(value, dict):
                    base.update(value)
                else:
                    return UNKNOWN
            return base
        if name == "str" and len(node.args) == 1:
            inner = self.evaluate(node.args[0], depth)
            return str(inner) if isinstance(inner, (int, float, str)) else UNKNOWN
        return UNKNOWN

    def _binop(self, node: ast.BinOp, depth: int) -> Any:
        if not isinstance(node.op, ast.Add):
            return UNKNOWN
        left = self.evaluate(node.left, depth)
        right = self.evaluate(node.right, depth)
        return left + right if isinstance(left, str) and isinstance(right, str) else UNKNOWN

    def _unary(self, node: ast.UnaryOp, depth: int) -> Any:
        if not isinstance(node.op, ast.USub):
            return UNKNOWN
        inner = self.evaluate(node.operand, depth)
        return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else UNKNOWN

    def _attribute(self, node: ast.Attribute, depth: int) -> Any:
        text = dotted(node)
        return Dotted(text) if text else UNKNOWN


_EVALUATORS: dict[type[ast.AST], Any] = {
    ast.Dict: Scope._dict,
    ast.List: Scope._sequence,
    ast.Tuple: Scope._sequence,
    ast.Call: Scope._call,
    ast.BinOp: Scope._binop,
    ast.UnaryOp: Scope._unary,
    ast.Attribute: Scope._attribute,
}

# A dict value with this key holds entries that could not be read (a ``**x``
# or ``update(x)`` of an unknown x): its known entries are judged, no more.
PARTIAL = "\0partial"


def merge_into(target: dict[Any, Any], value: Any) -> None:
    """``target.update(value)`` when ``value`` is a known dict, else mark
    ``target`` partial (``{**value}``, ``target.update(value)``)."""
    if isinstance(value, dict):
        target.update(value)
    else:
        target[PARTIAL] = True


def known_entries(value: dict[Any, Any]) -> dict[str, Any]:
    """The string-keyed entries of a resolved dict (without the markers)."""
    return {k: v for k, v in value.items() if isinstance(k, str) and not k.startswith("\0")}


def known_str(value: Any) -> bool:
    return isinstance(value, str) and not isinstance(value, Dotted)


def as_option_text(value: Any) -> str | None:
    """The text the QNN EP receives for a Python value (onnxruntime takes
    strings; ``True`` would reach it as 'True'), None if not known."""
    if isinstance(value, Dotted) or value is UNKNOWN:
        return None
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (str, int, float)):
        return str(value)
    return None
