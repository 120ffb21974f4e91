"""``fleet``'s one orchestration: list the inputs, read and re-diagnose
every ticket (in worker processes), aggregate, and hand each row to the
per-ticket writers (CSV, Parquet) as it arrives. No output is written here
except through the ``on_row`` callables; the CLI and the API both call
:func:`run_fleet`."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from .aggregate import Fleet
from .rows import Row

FLEET_SCHEMA_VERSION = 1
_DATE = re.compile(r"\d{4}-\d\d-\d\d")


class FleetError(ValueError):
    """Options no fleet run can use (exit code 2)."""


@dataclass(frozen=True)
class FleetOptions:
    paths: tuple[str, ...]
    jobs: int = 0  # 0: one worker per CPU; 1: in this process
    since: str | None = None  # YYYY-MM-DD: tickets created on or after it
    matrix: Path | None = None

    def problems(self) -> list[str]:
        found = []
        if not self.paths:
            found.append("name at least one ticket file, folder or archive")
        if self.since is not None and not _DATE.fullmatch(self.since):
            found.append(f"--since {self.since!r}: write the date as YYYY-MM-DD")
        if self.jobs < 0:
            found.append("--jobs must be 0 (one per CPU) or more")
        return found


def run_fleet(
    options: FleetOptions,
    on_row: Sequence[Callable[[Row], None]] = (),
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The fleet summary document (``fleet --json``); ``on_row`` callables
    see every readable ticket's row, in a stable order."""
    problems = options.problems()
    if problems:
        raise FleetError("; ".join(problems))
    from ..pipeline import load_matrix, now
    from ..report.redact import Redactor
    from ..report.ticket_changes import matrix_identity
    from ..rules.registry import all_finding_kinds
    from .sources import units
    from .workers import default_jobs, run_units

    matrix = load_matrix(options.matrix)  # a bad --matrix fails here, before any worker starts
    jobs = options.jobs or default_jobs()
    work = list(units(list(options.paths)))
    if len(work) <= 1:
        jobs = 1  # one unit: a pool would only add its start-up
    if log is not None:
        log(f"{len(work)} units of work, {jobs} worker process(es)")
    from .rediagnose import Rediagnoser

    fleet = Fleet()
    redactor = Redactor.for_this_machine()
    for results, computed in run_units(
        work,
        jobs=jobs,
        matrix_path=str(options.matrix) if options.matrix else None,
        since=options.since,
        in_process=Rediagnoser(matrix, options.since) if jobs == 1 else None,
    ):
        fleet.distinct_setups += computed
        for result in results:
            result = dataclasses.replace(result, path=redactor.text(result.path))
            fleet.add(result)
            if isinstance(result, Row):
                for write in on_row:
                    write(result)
    titles = {kind.id: kind.title for kind in all_finding_kinds()}
    identity = matrix_identity(matrix)
    return {
        "schema_version": FLEET_SCHEMA_VERSION,
        "tool": {"name": "qnndoctor", "version": __version__},
        "created": now(),
        "inputs": [redactor.text(p) for p in options.paths],
        "since": options.since,
        "matrix": {"source": matrix.source, **identity},
        **fleet.summary(titles),
        "redacted": True,
    }
