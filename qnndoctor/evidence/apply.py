"""Local evidence into the resolver: the matrix's known issues plus one
issue per release measured here (``qnndoctor bisect``), so the resolver's own
rules carry it and every answer shows it with its date:

- a pair that passed here pins that companion (``pin-companion``: the
  recommended commands install exactly it);
- a release whose every pair failed here is ruled out (``rule-out``), unless a
  companion pin of the matrix already avoids the companion that failed;
- not-installable and timeout outcomes say nothing about the release: a note.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ..matrixdata.releases import KnownIssue, ReleaseMatrix
from . import store

if TYPE_CHECKING:
    from ..facts.probed import Facts
    from ..matrixdata import Matrix

SOURCE = "local evidence: qnndoctor bisect on this machine (docs/bisect.md)"
CONFIDENCE = "measured-here"


def _version(text: str | None) -> Version:
    try:
        return Version(text or "0")
    except InvalidVersion:
        return Version("0")


def _pins(matrix: ReleaseMatrix, release: Version) -> list[str]:
    """The companion pins the matrix gives this release: its companion
    experiments' (they win), else its known issues'."""
    from ..matrixdata.companions import proven

    found = next((r for r in matrix.releases if r.version == release), None)
    measured = proven(found) if found is not None else None
    if measured is not None:
        return [measured.pin] if measured.pin else []
    return [
        issue.companion_pin
        for issue in matrix.known_issues
        if issue.effect == "pin-companion"
        and issue.companion_pin
        and issue.versions.contains(release, prereleases=True)
    ]


def _pinned_away(matrix: ReleaseMatrix, item: store.Record) -> bool:
    """Whether the matrix already pins a companion for this release that the
    failed companion does not satisfy (the failure is avoided already)."""
    if item.onnxruntime is None:
        return False
    for pin in _pins(matrix, _version(item.onnxruntime_qnn)):
        try:
            spec = SpecifierSet(pin.split("onnxruntime", 1)[-1].strip())
        except InvalidSpecifier:
            continue
        if not spec.contains(_version(item.onnxruntime), prereleases=True):
            return True
    return False


def local_issues(
    records: list[store.Record], matrix: ReleaseMatrix
) -> tuple[tuple[KnownIssue, ...], tuple[str, ...]]:
    """Known issues and notes from this machine's records (``store.lookup``)."""
    by_release: dict[str, list[store.Record]] = {}
    for item in records:
        by_release.setdefault(item.onnxruntime_qnn, []).append(item)
    issues: list[KnownIssue] = []
    notes: list[str] = []
    for release, items in by_release.items():
        try:
            versions = SpecifierSet(f"=={release}")
        except InvalidSpecifier:
            continue
        passed = [i for i in items if i.outcome == "passed"]
        failed = [i for i in items if i.outcome == "failed"]
        platforms = tuple(sorted({i.platform for i in items if i.platform})) or None
        if passed:
            best = max(passed, key=lambda i: (_version(i.onnxruntime), i.recorded))
            if best.onnxruntime:
                issues.append(
                    KnownIssue(
                        id=f"local-passed-{release}",
                        title=best.sentence(),
                        versions=versions,
                        platforms=platforms,
                        effect="pin-companion",
                        companion_pin=f"onnxruntime=={best.onnxruntime}",
                        explanation="measured on this machine",
                        confidence=CONFIDENCE,
                        sources=(SOURCE,),
                    )
                )
            else:  # a 1.x release: nothing to pin, the note says it
                notes.append(best.sentence())
            notes.extend(i.sentence() for i in failed)
        elif failed and not all(_pinned_away(matrix, i) for i in failed):
            newest = max(failed, key=lambda i: i.recorded)
            issues.append(
                KnownIssue(
                    id=f"local-failed-{release}",
                    title=newest.sentence(),
                    versions=versions,
                    platforms=platforms,
                    effect="rule-out",
                    companion_pin=None,
                    explanation="measured on this machine",
                    confidence=CONFIDENCE,
                    sources=(SOURCE,),
                )
            )
        else:
            notes.extend(i.sentence() for i in items)
    return tuple(issues), tuple(notes)


def records_for(facts: Facts, matrix: Matrix) -> list[store.Record]:
    """This machine's records for these facts' fingerprint ([] when the store
    is off, missing or unreadable: evidence never stops a check)."""
    if store.disabled():
        return []
    from ..resolver.recommend import profile_from_facts

    try:
        profile = profile_from_facts(facts, matrix).to_json()
        return store.lookup(store.fingerprint(store.machine_facts(profile)))
    except store.EvidenceError:
        return []


def with_evidence(matrix: Matrix, records: list[store.Record]) -> tuple[Matrix, tuple[str, ...]]:
    """The matrix with this machine's evidence as known issues, and the notes
    that say what was measured here."""
    if not records:
        return matrix, ()
    issues, notes = local_issues(records, matrix.releases)
    releases = dataclasses.replace(
        matrix.releases, known_issues=(*matrix.releases.known_issues, *issues), memo={}
    )
    return dataclasses.replace(matrix, releases=releases), notes


def evidence_json(records: list[store.Record]) -> list[dict[str, Any]]:
    """What a recommendation's ``local_evidence`` lists."""
    return [
        {
            "onnxruntime_qnn": r.onnxruntime_qnn,
            "onnxruntime": r.onnxruntime,
            "outcome": r.outcome,
            "cause": r.cause,
            "recorded": r.recorded,
            "source": r.source,
            "text": r.sentence(),
        }
        for r in records
    ]
