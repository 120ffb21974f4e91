"""``qnndoctor fix``: apply the report's recommendation, prove it with a smoke
session, and roll back to the exact previous state if the proof fails.

One module per concern: ``checking`` (the report, from one function),
``plan`` (steps from the report's findings and recommendation), ``state``
(snapshot, backup, rollback), ``apply`` (the target's own pip), ``proof``,
``render`` and ``command`` (the CLI).
"""
