"""JSON renderer: exactly one document."""

from __future__ import annotations

import json
from typing import Any, TextIO


def render(report: dict[str, Any], stream: TextIO) -> None:
    stream.write(json.dumps(report, indent=2, ensure_ascii=False, sort_keys=False))
    stream.write("\n")
