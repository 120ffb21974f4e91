"""Where the shipped data packages are: ``probes/`` and ``matrix/`` live at the
top of the repository and install as ``qnndoctor.probes`` / ``qnndoctor.matrix``."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def package_dir(name: str) -> Path | None:
    """The folder of ``qnndoctor.<name>``: in the installed wheel, in an
    editable install, or beside a source checkout (``python -m qnndoctor`` in
    the repo root). Found without importing it."""
    installed = Path(__file__).resolve().parent / name
    if (installed / "__init__.py").is_file():  # the wheel layout: no import machinery needed
        return installed
    import importlib.util

    try:
        spec = importlib.util.find_spec(f"qnndoctor.{name}")
    except ModuleNotFoundError:
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    checkout = Path(__file__).resolve().parent.parent / name
    if (checkout / "__init__.py").is_file():
        return checkout
    return None


def shipped_table(file: str, key: str, problems: list[str]) -> Any:
    """``document[key]`` of the shipped ``matrix/<file>``, or None with the
    reason appended to ``problems``: a damaged install reads as no table."""
    folder = package_dir("matrix")
    if folder is None:
        problems.append("the qnndoctor.matrix package is missing")
        return None
    path = folder / file
    try:
        import json

        document = json.loads(path.read_text("utf-8"))
        return document[key]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        problems.append(f"{path}: {type(exc).__name__}: {exc}")
        return None
