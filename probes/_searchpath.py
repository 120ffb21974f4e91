"""The import system's search path as the installs probe reads it: each
``sys.path`` entry with its folder listing, and where a module would be
found (path search only, nothing imported). Stdlib only, CPython 3.8+."""

from __future__ import annotations

import os
import sys

from ._util import absolute, show, working_folder

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Any, Dict, List, Optional, Set, Tuple


class SearchEntry:
    """One ``sys.path`` entry, as the import system would see it."""

    def __init__(self, index: int, raw: str, kind: str) -> None:
        self.index = index
        self.raw = raw
        self.path = absolute(raw or working_folder() or "")
        self.kind = kind
        self.names: List[str] = []
        self.error: Optional[str] = None

    def as_json(self) -> Dict[str, Any]:
        return {
            "index": self.index,
            "path": show(self.path),
            "kind": self.kind,
            "error": self.error,
        }


def entry_kind(raw: str, site_dirs: Set[str], user_site: Optional[str]) -> str:
    pythonpath = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if raw == "":
        return "cwd"
    norm = os.path.normcase(absolute(raw))
    if user_site and norm == os.path.normcase(absolute(user_site)):
        return "user_site"
    if norm in site_dirs:
        return "site"
    if raw in pythonpath:
        return "pythonpath"
    if raw.endswith(".zip"):
        return "zip"
    return "other"


def search_path(
    site_dirs: Set[str], user_site: Optional[str]
) -> Tuple[List[SearchEntry], List[Dict[str, Any]]]:
    """The entries of sys.path with their folder listings, and the entries
    that repeat an earlier one (same real path)."""
    # sys.path[0] is the script directory (cwd for ``python -c``): searched,
    # but reported as the working directory it stands for.
    entries: List[SearchEntry] = []
    seen_real: Dict[str, int] = {}
    duplicates: List[Dict[str, Any]] = []
    for index, raw in enumerate(sys.path):
        entry = SearchEntry(index, raw, entry_kind(raw, site_dirs, user_site))
        # (a relative entry under a removed working folder leads nowhere: kept as written)
        real = os.path.normcase(
            os.path.realpath(entry.path) if os.path.isabs(entry.path) else entry.path
        )
        if real in seen_real:
            duplicates.append(
                {"index": index, "same_as": seen_real[real], "path": show(entry.path)}
            )
            continue
        seen_real[real] = index
        if entry.kind != "zip":
            _list_entry(entry)
        entries.append(entry)
    return entries, duplicates


def _list_entry(entry: SearchEntry) -> None:
    try:
        entry.names = os.listdir(entry.path)
    except FileNotFoundError:
        entry.error = "does not exist"
    except NotADirectoryError:
        entry.error = "not a directory"
    except OSError as exc:
        entry.error = "%s: %s" % (type(exc).__name__, exc.strerror or exc)


def module_resolution(entries: List[SearchEntry], module: str) -> Dict[str, Any]:
    """Where ``import module`` would land, found by the import system's rules
    applied to the directory listings (a regular package or module wins at
    once; namespace portions only if nothing else is found)."""
    namespace: List[str] = []
    for entry in entries:
        if entry.kind == "zip" or entry.error:
            continue
        names = set(entry.names)
        if module in names:
            folder = os.path.join(entry.path, module)
            if os.path.isdir(folder):
                init = [
                    n
                    for n in ("__init__.py", "__init__.pyc")
                    if os.path.exists(os.path.join(folder, n))
                ]
                if init:
                    return {
                        "found": True,
                        "kind": "package",
                        "path": show(folder),
                        "init": show(os.path.join(folder, init[0])),
                        "_init_raw": os.path.join(folder, "__init__.py"),
                        "entry_index": entry.index,
                        "entry_kind": entry.kind,
                    }
                namespace.append(show(folder))
        for name in names:
            if name == module + ".py" or (
                name.startswith(module + ".") and name.endswith((".so", ".pyd"))
            ):
                return {
                    "found": True,
                    "kind": "module",
                    "path": show(os.path.join(entry.path, name)),
                    "entry_index": entry.index,
                    "entry_kind": entry.kind,
                }
    if namespace:
        return {"found": True, "kind": "namespace", "path": namespace[0], "portions": namespace}
    return {"found": False}
