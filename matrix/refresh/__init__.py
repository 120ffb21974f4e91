"""The maintainers' tool that regenerates ``matrix/releases.json`` from the
package index (never shipped in the qnndoctor wheel: users never run it).

Run it from the repository root: ``python -m matrix.refresh --help``. It
reads the index's JSON simple API (PEP 691/700), then each wheel with HTTP
Range requests: stdlib ``zipfile`` over a range-reading file object reads the
central directory and only the members that answer the matrix's questions.
Results are cached per (filename, sha256), so a refresh with nothing new
published costs one request. See docs/matrix.md.

The reading itself ships in the qnndoctor package
(``qnndoctor.matrixdata.wheelreader``: ``qnndoctor matrix update`` uses it
too); this folder holds what only maintainers run: ``cli`` (the command
line), ``companions`` (the companion experiments) and ``qnn_errors``.
"""

from __future__ import annotations

from qnndoctor.matrixdata.wheelreader.assemble import (
    Options,
    Result,
    Stats,
    dump,
    refresh,
    shrinkage,
)
from qnndoctor.matrixdata.wheelreader.cache import platform_bucket
from qnndoctor.matrixdata.wheelreader.common import (
    CACHE_VERSION,
    DEFAULT_PROJECT,
    EXIT_INDEX,
    EXIT_OK,
    EXIT_SHRINK,
    EXIT_USAGE,
    EXIT_WHEELS,
    SCHEMA_VERSION,
    IndexReadError,
    Log,
    UsageError,
)
from qnndoctor.matrixdata.wheelreader.pip_config import (
    Setting,
    pip_config_files,
    public_url,
    resolve_index_url,
)
from qnndoctor.matrixdata.wheelreader.qnn_version import decide_qnn_version, qnn_build_strings

from .cli import main

# The tool's interface (tests, bench).
__all__ = [
    "CACHE_VERSION",
    "DEFAULT_PROJECT",
    "EXIT_INDEX",
    "EXIT_OK",
    "EXIT_SHRINK",
    "EXIT_USAGE",
    "EXIT_WHEELS",
    "SCHEMA_VERSION",
    "IndexReadError",
    "Log",
    "Options",
    "Result",
    "Setting",
    "Stats",
    "UsageError",
    "decide_qnn_version",
    "dump",
    "main",
    "pip_config_files",
    "platform_bucket",
    "public_url",
    "qnn_build_strings",
    "refresh",
    "resolve_index_url",
    "shrinkage",
]
