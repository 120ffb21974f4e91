"""The keys every report document starts with, and its time stamp: below the
report, the decisions memo and the pipeline, which all make report documents."""

from __future__ import annotations

from typing import Any

from .. import REPORT_SCHEMA_VERSION, __version__


def now() -> str:
    """A report's ``created``: UTC, to the second."""
    import datetime  # here: the smoke child starts before this import

    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def envelope() -> dict[str, Any]:
    """The keys every report document starts with: the one place that names
    the report's ``schema_version``."""
    return {
        "schema_version": REPORT_SCHEMA_VERSION,
        "tool": {"name": "qnndoctor", "version": __version__},
        "created": now(),
    }
