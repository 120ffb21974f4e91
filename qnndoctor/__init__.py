"""qnndoctor: diagnose onnxruntime-qnn installations and prove they run on the NPU.

Data flows one way: probes -> facts -> rules -> findings -> report -> renderers.
"""

__version__ = "0.1.0"

# The JSON report contract (docs/report-schema.md): later versions add keys, never rename.
REPORT_SCHEMA_VERSION = 1
# The other JSON documents' contracts, named here too: one place for every schema_version.
RECOMMEND_SCHEMA_VERSION = 1  # recommend --json, recommend --platform ... --json
EXPLAIN_SCHEMA_VERSION = 2  # explain --json
MATRIX_SCHEMA_VERSION = 1  # matrix --json
FIX_SCHEMA_VERSION = 1  # fix --json
MODEL_SCHEMA_VERSION = 1  # model --json (also named by its older "schema": "qnndoctor-model/1")

# The Python API (qnndoctor/api.py), imported on first use: `import qnndoctor`
# stays as cheap as reading this file.
__all__ = [
    "Cause",
    "Explanation",
    "Finding",
    "NotReady",
    "OptionFinding",
    "Recommendation",
    "Report",
    "Smoke",
    "check",
    "check_options",
    "ensure_ready",
    "explain",
    "recommend",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .api import (
        Cause,
        Explanation,
        Finding,
        NotReady,
        OptionFinding,
        Recommendation,
        Report,
        Smoke,
        check,
        check_options,
        ensure_ready,
        explain,
        recommend,
    )


def __getattr__(name: str) -> object:
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'qnndoctor' has no attribute {name!r}")
