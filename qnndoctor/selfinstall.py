"""How to add one of qnndoctor's extras to the installation that is running.

qnndoctor is not on the package index, so ``pip install "qnndoctor[model]"``
fails. What always works is installing the extra's requirements (read from
qnndoctor's own metadata) with the interpreter qnndoctor runs in
(``sys.executable``); where the installation says how it was made
(``direct_url.json``: an editable or plain local folder, a wheel file that
still exists; a pipx venv), that way is offered too.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

from packaging.requirements import InvalidRequirement, Requirement

from .shell import pip_command, quote

# What the extras require when the metadata cannot be read (pyproject.toml).
_FALLBACK = {"model": ("onnx>=1.16",)}


@dataclass(frozen=True)
class ExtraAdvice:
    extra: str
    requirements: tuple[str, ...]
    commands: tuple[str, ...]  # the first one always works as printed
    installed_from: str  # "editable folder", "pipx", ... (for the message)

    def sentence(self) -> str:
        return (
            f'add the "{self.extra}" extra to this installation of qnndoctor '
            f"({self.installed_from}): " + " or ".join(f"`{c}`" for c in self.commands)
        )


def _requirements(dist: metadata.Distribution | None, extra: str) -> tuple[str, ...]:
    found: list[str] = []
    for text in (dist.requires if dist is not None else None) or ():
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        marker = requirement.marker
        if marker is not None and marker.evaluate({"extra": extra}) and not marker.evaluate(
            {"extra": ""}
        ):
            requirement.marker = None
            found.append(str(requirement))
    return tuple(found) or _FALLBACK.get(extra, ())


def _local_path(url: str) -> Path | None:
    parsed = urlparse(url)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if os.name == "nt" and path.startswith("/") and path[2:3] == ":":
        path = path[1:]
    return Path(path)


def extra_advice(extra: str) -> ExtraAdvice:
    windows = os.name == "nt"
    # A source checkout's own egg-info can come first on sys.path: the
    # installed one says how it was installed (direct_url.json, PEP 610).
    found = list(metadata.distributions(name="qnndoctor"))
    dist = next((d for d in found if d.read_text("direct_url.json")), found[0] if found else None)
    requirements = _requirements(dist, extra)
    commands = [pip_command(sys.executable, windows, "install", *requirements)]
    origin = "qnndoctor's own interpreter"
    direct = None
    if dist is not None:
        try:
            direct = json.loads(dist.read_text("direct_url.json") or "null")
        except ValueError:
            direct = None
    if isinstance(direct, dict) and isinstance(direct.get("url"), str):
        path = _local_path(direct["url"])
        editable = bool((direct.get("dir_info") or {}).get("editable"))
        if path is not None and path.exists():
            target = f"{path}[{extra}]"
            if editable:
                origin = "an editable install of a local folder"
                commands.append(pip_command(sys.executable, windows, "install", "-e", target))
            elif path.is_dir():
                origin = "a local folder"
                commands.append(pip_command(sys.executable, windows, "install", target))
            else:
                origin = "a local wheel or archive"
                commands.append(pip_command(sys.executable, windows, "install", target))
        elif path is not None:
            origin = f"{path}, which is no longer there"
    if "pipx" in Path(sys.prefix).parts:
        origin = "pipx"
        inject = ["pipx", "inject", "qnndoctor", *(quote(r, windows) for r in requirements)]
        commands.append(" ".join(inject))
    return ExtraAdvice(extra, requirements, tuple(commands), origin)
