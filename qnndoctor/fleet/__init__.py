"""``qnndoctor fleet``: many tickets (``report -o`` files) read, re-diagnosed
and summarised: who is ready, which fix unblocks most machines, what the
fleet runs on, and which SoC x NPU driver x onnxruntime-qnn x onnxruntime
combinations passed the smoke session. docs/fleet.md is the reference.

Modules, one concern each: ``sources`` (inputs -> units of work),
``workers`` (reading units, in worker processes), ``rediagnose`` (one
ticket -> one row), ``aggregate`` (rows -> the summary), ``run`` (the one
orchestration), ``text`` / ``html`` / ``tables`` (outputs), ``compat`` (the
table exported and imported as local evidence), ``command`` (the CLI).
"""

from __future__ import annotations

from .run import FLEET_SCHEMA_VERSION, FleetError, FleetOptions, run_fleet

__all__ = ["FLEET_SCHEMA_VERSION", "FleetError", "FleetOptions", "run_fleet"]
