"""Checking a release matrix file against its schema before it is used.

A releases.json from ``matrix update`` (the user cache) is checked whole: JSON that parses, nests sanely, matches
``releases.schema.json``, builds every wheel record and has releases. Checking
the schema takes about half a second, so a cached file that passed is
stamped with its SHA-256 (``releases.json.checked``): later runs re-check it
only if its bytes changed.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from .. import safejson
from .._layout import package_dir
from .releases import ReleaseMatrix, ReleasesError, parse

STAMP_SUFFIX = ".checked"


@functools.cache
def _schema() -> dict[str, Any]:
    folder = package_dir("matrix")
    if folder is None:
        raise ReleasesError("the bundled releases schema is missing from this installation")
    loaded: dict[str, Any] = json.loads((folder / "releases.schema.json").read_text("utf-8"))
    return loaded


def check_document(document: Any, issues: Any = None) -> ReleaseMatrix:
    """The matrix in ``document``, or ``ReleasesError`` saying what is wrong."""
    import jsonschema

    try:
        jsonschema.validate(document, _schema())
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "the top level"
        raise ReleasesError(
            f"does not match the releases schema at {where}: {exc.message}"
        ) from exc
    matrix = parse(document, issues, eager=True)
    if not matrix.releases:
        raise ReleasesError("contains no releases")
    return matrix


def _digest(data: bytes) -> str:
    import hashlib  # here: a check that finds its parsed matrix cached needs none

    return hashlib.sha256(data).hexdigest()


def stamp(path: Path, data: bytes) -> None:
    """Record that ``path`` with these bytes passed ``check_document``."""
    try:
        path.with_name(path.name + STAMP_SUFFIX).write_text(_digest(data), "utf-8")
    except OSError:
        pass  # only costs a re-check next time


def read_checked(path: Path, issues_path: Path | None) -> tuple[bytes, Any, Any]:
    """The bytes of ``path``, its document (an object) and the known issues'."""
    try:
        data = path.read_bytes()
        document = safejson.loads(data, str(path))
        issues = safejson.loads(issues_path.read_bytes(), str(issues_path)) if issues_path else None
    except OSError as exc:
        raise ReleasesError(f"{path}: {exc.strerror or exc}") from exc
    except safejson.BadJSON as exc:
        raise ReleasesError(str(exc)) from exc
    if not isinstance(document, dict):
        raise ReleasesError(f"{path}: not a JSON object")
    return data, document, issues


def checked_matrix(
    path: Path, data: bytes, document: Any, issues: Any, *, use_stamp: bool
) -> ReleaseMatrix:
    """The matrix of ``document`` (read from ``path``), checked; with
    ``use_stamp``, the schema check is skipped when the stamp says these exact
    bytes passed it before."""
    if use_stamp:
        try:
            stamped = path.with_name(path.name + STAMP_SUFFIX).read_text("utf-8").strip()
        except OSError:
            stamped = ""
        if stamped == _digest(data):
            return parse(document, issues)
    matrix = check_document(document, issues)
    if use_stamp:
        stamp(path, data)
    return matrix
