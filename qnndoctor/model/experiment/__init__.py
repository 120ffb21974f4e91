"""Experiments on a model in contained children of the target interpreter:
``--find-culprit`` (delta debugging over sub-models), ``--profile`` (QNN's
own per-op profile) and ``--compare`` (QNN against the CPU EP).

``graph`` cuts sub-models with ``onnx`` in qnndoctor's environment;
``child`` runs one experiment in the target; ``runs`` starts it contained;
``culprit``, ``profile`` and ``compare`` read what came back.
"""
