"""Where the shipped data packages are: ``probes/`` and ``matrix/`` live at the
top of the repository and install as ``qnndoctor.probes`` / ``qnndoctor.matrix``."""

from __future__ import annotations

from pathlib import Path


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
