"""Renderers: they only read the report (its JSON form), never the machine."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

Renderer = Callable[[dict[str, Any], TextIO], None]


def renderer(name: str) -> Renderer:
    if name == "json":
        from .json_out import render
    elif name == "markdown":
        from .markdown import render
    else:
        from .text import render
    return render
