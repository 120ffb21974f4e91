"""``qnndoctor bisect``: find the release that works here by experiment.

For each candidate pair (onnxruntime-qnn release x companion onnxruntime,
``plan``), a throwaway venv made by the target's own base interpreter gets
the pair installed by pip (``venvs``) and runs the real smoke session there
(``qnndoctor.smoke``; with a model also its placement, ``qnndoctor.model``);
``session`` runs them in order and classifies each (passed, failed with the
diagnosis engine's cause, not-installable with pip's reason, timeout);
``command`` parses arguments and renders. The target itself is never
written to; every throwaway venv is removed, on Ctrl-C too. Results are kept
as local evidence (``qnndoctor.evidence``).
"""
