"""qnndoctor: diagnose onnxruntime-qnn installations and prove they run on the NPU.

Data flows one way: probes -> facts -> rules -> findings -> report -> renderers.
"""

__version__ = "0.1.0"

# The JSON report contract (docs/report-schema.md): later versions add keys, never rename.
REPORT_SCHEMA_VERSION = 1
