"""Probe 4: paths with non-ASCII characters.

QNN and parts of onnxruntime pass paths through narrow (ANSI code page)
Windows APIs; a character the code page cannot represent fails with "No
mapping for the Unicode character exists in the target multi-byte code page".
"""

from __future__ import annotations

import codecs
import os
import sys

from ._util import non_ascii_chars, show, working_folder
from .base import Context, ProbeOutput

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Any, Dict, List, Optional, Tuple

NAME = "paths"


def _labelled_paths(ctx: Context) -> List[Tuple[str, str]]:
    paths: List[Tuple[str, str]] = [
        ("interpreter", sys.executable),
        ("prefix", sys.prefix),
        ("base_prefix", getattr(sys, "base_prefix", sys.prefix)),
    ]
    here = working_folder()
    if here is not None:  # None: the working folder was removed
        paths.append(("cwd", here))
    for variable in ("TEMP", "TMP", "TMPDIR", "HOME", "USERPROFILE", "APPDATA", "LOCALAPPDATA"):
        value = os.environ.get(variable)
        if value:
            paths.append(("env " + variable, value))
    paths.append(("home", os.path.expanduser("~")))
    for site_dir in ctx.value("interpreter", "site_packages", []) or []:
        paths.append(("site-packages", site_dir))
    user_site = ctx.value("interpreter", "user_site")
    if user_site:
        paths.append(("user site", user_site))
    raw_locations = ctx.private("installs", "raw_locations", {}) or {}
    for dist in ctx.value("installs", "distributions", []) or []:
        location = raw_locations.get(dist["location"], dist["location"])
        for module in dist.get("provides_modules", []):
            paths.append(("package %s (%s)" % (module, dist["id"]), os.path.join(location, module)))
    for root in ctx.value("qnn_sdk", "roots", []) or []:
        paths.append(("QNN SDK root (%s)" % root["origin"], root["path"]))
    model = ctx.options.get("model_path")
    if model:
        paths.append(("model", model))
    return paths


def _char_names(chars: List[str]) -> List[Dict[str, str]]:
    import unicodedata  # only for paths with non-ASCII characters

    return [
        {"char": ch, "codepoint": "U+%04X" % ord(ch), "name": unicodedata.name(ch, "?")}
        for ch in chars
    ]


def _encodable(text: str, encoding: Optional[str]) -> Optional[bool]:
    if not encoding:
        return None
    try:
        codecs.lookup(encoding)
    except LookupError:
        return None
    try:
        text.encode(encoding)
        return True
    except UnicodeError:
        return False


def run(ctx: Context) -> ProbeOutput:
    out = ProbeOutput()
    code_pages = ctx.value("interpreter", "windows_code_pages")
    ansi = "cp%d" % code_pages["ansi"] if code_pages else None
    out.put("ansi_code_page", ansi, "GetACP() via the interpreter probe")
    checked: List[Dict[str, Any]] = []
    flagged: List[Dict[str, Any]] = []
    seen = set()
    for label, raw in _labelled_paths(ctx):
        key = (label, raw)
        if key in seen:
            continue
        seen.add(key)
        text = show(raw)
        chars = non_ascii_chars(raw)
        undecodable = any(0xD800 <= ord(c) <= 0xDFFF for c in chars)
        entry: Dict[str, Any] = {"label": label, "path": text}
        checked.append(entry)
        if chars or undecodable:
            entry["non_ascii"] = _char_names([c for c in chars if not 0xDC80 <= ord(c) <= 0xDCFF])
            entry["undecodable_bytes"] = undecodable
            entry["encodable_in_ansi_code_page"] = (
                _encodable(raw, ansi) if not undecodable else False
            )
            flagged.append(entry)
    out.put("checked", [e["label"] for e in checked], "labelled paths of the other probes")
    out.put("non_ascii", flagged, "character scan of each path")
    return out
