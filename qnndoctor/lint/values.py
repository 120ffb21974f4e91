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
        if isinstance(node, ast.Dict):
            out: dict[Any, Any] = {}
            for key, value in zip(node.keys, node.values, strict=True):
                if key is None:  # {**other}
                    inner = self.evaluate(value, depth + 1)
                    if isinstance(inner, dict):
                        out.update(inner)
                    else:
                        out["\0partial"] = True
                    continue
                k = self.evaluate(key, depth + 1)
                if isinstance(k, (str, int)) and not isinstance(k, _Unknown):
                    out[k] = self.evaluate(value, depth + 1)
                else:
                    out["\0partial"] = True
            return out
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [self.evaluate(e, depth + 1) for e in node.elts]
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.Call):
            if call_name(node) == "dict" and isinstance(node.func, ast.Name):
                base: dict[Any, Any] = {}
                if node.args:
                    first = self.evaluate(node.args[0], depth + 1)
                    if not isinstance(first, dict):
                        return UNKNOWN
                    base.update(first)
                for keyword in node.keywords:
                    if keyword.arg is None:
                        inner = self.evaluate(keyword.value, depth + 1)
                        if not isinstance(inner, dict):
                            return UNKNOWN
                        base.update(inner)
                    else:
                        base[keyword.arg] = self.evaluate(keyword.value, depth + 1)
                return base
            if call_name(node) == "str" and len(node.args) == 1:
                inner = self.evaluate(node.args[0], depth + 1)
                return str(inner) if isinstance(inner, (int, float, str)) else UNKNOWN
            return UNKNOWN
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = self.evaluate(node.left, depth + 1)
            right = self.evaluate(node.right, depth + 1)
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            return UNKNOWN
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self.evaluate(node.operand, depth + 1)
            if isinstance(inner, (int, float)) and not isinstance(inner, bool):
                return -inner
            return UNKNOWN
        if isinstance(node, ast.Attribute):
            text = dotted(node)
            return Dotted(text) if text else UNKNOWN
        return UNKNOWN


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
