"""Probes that failed: what could not be checked, said plainly."""

from __future__ import annotations

from collections.abc import Iterator

from ..facts.probed import Facts
from ..matrixdata import Matrix
from .declare import rule
from .findings import Evidence, Finding, FindingKind, Fix, Severity, make

PROBE_FAILED = FindingKind(
    "probe-failed", Severity.WARNING, "Could not check part of the environment"
)


@rule(needs=(), emits=(PROBE_FAILED,))
def failed_probes(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    for probe in facts:
        if probe.ok or (probe.name == "binaries" and (probe.error or {}).get("type") == "Skipped"):
            continue
        yield make(
            PROBE_FAILED,
            f"The {probe.name} probe failed ({probe.error_text()}); checks that depend on it were "
            "skipped and are listed as such. The rest of the report stands.",
            (Evidence(f"{probe.name}.error", dict(probe.error or {})),),
            Fix("Run `qnndoctor check -v` and attach the JSON output (`--json`) to a bug report."),
            title=f"Could not check: {probe.name}",
        )
