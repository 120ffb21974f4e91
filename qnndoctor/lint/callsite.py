"""A call as the Python reader sees it: the name called, what it is called
on and where (``CallSite``), its arguments by position or keyword, and the
small readings of argument expressions the rules need."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from .events import Loc
from .values import Ref, call_name, known_str


@dataclass(frozen=True)
class CallSite:
    """A call being read: the name called, what it is called on, where."""

    name: str
    receiver: Any  # a Ref for a tracked object, else its value or UNKNOWN
    loc: Loc

    @property
    def owner(self) -> int:
        return id(self.receiver) if isinstance(self.receiver, Ref) else 0


def loc_of(node: ast.AST) -> Loc:
    return Loc(getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1)


def kwarg(node: ast.Call, name: str) -> ast.expr | None:
    for keyword in node.keywords:
        if keyword.arg == name:
            return keyword.value
    return None


def call_arg(node: ast.Call, index: int, name: str) -> ast.expr | None:
    if len(node.args) > index and not isinstance(node.args[index], ast.Starred):
        return node.args[index]
    return kwarg(node, name)


def provider_name(entry: Any) -> str | None:
    if known_str(entry):
        return str(entry)
    if isinstance(entry, tuple) and entry and known_str(entry[0]):
        return str(entry[0])
    return None


def key_locs(node: ast.expr | None) -> dict[str, Loc]:
    if isinstance(node, ast.Dict):
        return {k.value: loc_of(k) for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return {}


def not_c_order(node: ast.expr) -> bool:
    """``np.asfortranarray(x)``, ``x.T``, ``np.array(x, order='F')``."""
    if isinstance(node, ast.Attribute) and node.attr == "T":
        return True
    if isinstance(node, ast.Call):
        if call_name(node) == "asfortranarray":
            return True
        order = kwarg(node, "order")
        return isinstance(order, ast.Constant) and order.value == "F"
    return False
