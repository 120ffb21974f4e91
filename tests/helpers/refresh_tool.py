"""The maintainers' refresh tool, loaded from the repository (``matrix/refresh/``).

It is not part of the qnndoctor wheel, while the tests run against the
installed wheel: the repository's ``matrix`` folder is loaded as the
top-level package ``matrix`` by its path, without putting the repository on
``sys.path`` (which would let the source tree shadow the installed qnndoctor).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

REPO = Path(__file__).resolve().parents[2]


def load_refresh_tool() -> ModuleType:
    """``matrix.refresh`` from this checkout (imported once)."""
    loaded = sys.modules.get("matrix")
    folder = REPO / "matrix"
    if loaded is None:
        spec = importlib.util.spec_from_file_location(
            "matrix", folder / "__init__.py", submodule_search_locations=[str(folder)]
        )
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {folder}")
        loaded = importlib.util.module_from_spec(spec)
        sys.modules["matrix"] = loaded
        spec.loader.exec_module(loaded)
    elif Path(getattr(loaded, "__file__", "") or "").resolve().parent != folder:
        raise ImportError(f"another top-level 'matrix' is imported: {loaded!r}")
    return importlib.import_module("matrix.refresh")


if TYPE_CHECKING:  # mypy sees matrix/ as the top-level package ``matrix`` (mypy_path ".")
    from matrix import refresh as refresh
else:  # the maintainers' tool is not in the wheel: loaded from the repository
    refresh = load_refresh_tool()
