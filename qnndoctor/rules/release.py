"""Rules that judge the installed onnxruntime-qnn release with the resolver."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import InvalidVersion, Version

from ..facts.probed import Facts
from ..matrixdata import Matrix
from ..resolver.compat_rules import confidence_words
from ..resolver.recommend import evaluate_release, profile_from_facts, recommend
from ._common import qnn_dists
from .declare import rule
from .findings import Evidence, Finding, FindingKind, Fix, Severity, make

UNSUITABLE = FindingKind(
    "installed-release-unsuitable",
    Severity.ERROR,
    "The installed onnxruntime-qnn release cannot work here",
)
UNKNOWN = FindingKind(
    "installed-release-not-in-matrix",
    Severity.INFO,
    "The installed onnxruntime-qnn release is not in the release matrix",
)
NEWER = FindingKind(
    "newer-release-available",
    Severity.INFO,
    "A newer onnxruntime-qnn release fits this machine",
)
_HARD = {"artifact", "documented", "maintainer-confirmed"}


@rule(needs=("installs", "interpreter", "emulation"), emits=(UNSUITABLE, UNKNOWN, NEWER))
def installed_release(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    releases = {r.version: r for r in matrix.releases.releases}
    if not releases:
        return
    profile = profile_from_facts(facts, matrix)
    best = recommend(profile, matrix.releases)
    # The commands' own release: under emulation they may set up native ARM64 Python.
    installs = best.installs
    fix = (
        Fix(
            f"Install onnxruntime-qnn {installs.version}"
            + (
                f" into native ARM64 Python {best.installs_into.python[0]}."
                f"{best.installs_into.python[1]}"
                if best.installs_into is not None and best.installs_into.arch != profile.arch
                else ""
            )
            + " (`qnndoctor recommend` explains why).",
            recommended=True,  # the command stage gives it the recommendation's commands
        )
        if installs and best.commands
        else Fix("See `qnndoctor recommend` for what to change instead.")
    )
    for dist in qnn_dists(facts):
        try:
            version = Version(str(dist.get("version")))
        except InvalidVersion:
            continue
        release = releases.get(version)
        evidence = Evidence("installs.distributions[onnxruntime-qnn].version", str(version))
        if release is None:
            yield make(
                UNKNOWN,
                f"onnxruntime-qnn {version} is not among the {len(releases)} releases of the matrix "
                f"({matrix.releases_source}): a nightly or local build, or newer than this matrix. "
                "Its compatibility is unknown to qnndoctor.",
                (evidence,),
                Fix("Update the matrix if a newer one exists: qnndoctor matrix update --from URL"),
            )
            continue
        verdict = evaluate_release(profile, release, matrix.releases, allow_prerelease=True)
        if verdict.reasons:
            hard = any(r.confidence in _HARD for r in verdict.reasons)
            yield make(
                UNSUITABLE,
                f"onnxruntime-qnn {version} is installed, but for this interpreter and machine: "
                + "; ".join(
                    f"{r.detail} ({confidence_words(r.confidence)}; see {', '.join(r.sources)})"
                    for r in verdict.reasons
                )
                + ".",
                (evidence, Evidence("recommendation.profile", profile.to_json())),
                fix,
                severity=Severity.ERROR if hard else Severity.WARNING,
            )
        elif best.chosen and best.chosen.version > version:
            yield make(
                NEWER,
                f"onnxruntime-qnn {version} fits, and so does the newer {best.chosen.version} "
                f"(bundled QNN {best.chosen.file.qnn_version if best.chosen.file else 'unknown'}).",
                (evidence,),
                fix,
            )
