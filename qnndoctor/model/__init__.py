"""``qnndoctor model``: will this ONNX model run on the NPU here, and how much of it?

Modules by concern: ``loading`` (static reading with the ``onnx`` package),
``context`` (EPContext / QNN context binaries), ``knowledge`` (sourced facts),
``checks`` (static findings), ``runtime`` (the target's versions and chip
from the probe facts), ``placement`` + ``placement_child`` (the isolated run
in the target), ``report`` and ``render``, ``command`` (the CLI flow).
"""
