"""Which pairs to try, newest first: the releases the matrix has a wheel of
for this target (platform, Python), or those ``--releases`` names, each with
the companion ``onnxruntime`` versions worth trying."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ..matrixdata.companions import proven
from ..matrixdata.releases import Release, ReleaseMatrix
from ..resolver.compat_rules import (
    NO_PLATFORM,
    NO_PYTHON,
    NO_QNN_LIBRARIES,
    REQUIRES_PYTHON,
    YANKED,
)
from ..resolver.recommend import Profile, companion_requirement, evaluate_release

# What makes a release impossible here whatever happens (no experiment needed).
_STRUCTURAL = frozenset({NO_PLATFORM, NO_PYTHON, REQUIRES_PYTHON, YANKED, NO_QNN_LIBRARIES})


class PlanError(Exception):
    """A --releases or --companions value that cannot be read."""


@dataclass(frozen=True)
class Pair:
    """One experiment: ``onnxruntime_qnn`` exactly, with ``companion`` (a
    requirement for onnxruntime; None: what pip takes by itself)."""

    onnxruntime_qnn: str
    era: str
    companion: str | None
    why: str  # "newest allowed", "matrix pin ...", "--companions"

    def requirements(self) -> tuple[str, ...]:
        return (f"onnxruntime-qnn=={self.onnxruntime_qnn}",) + (
            (self.companion,) if self.companion else ()
        )


@dataclass(frozen=True)
class Plan:
    pairs: tuple[Pair, ...]
    skipped: tuple[str, ...]  # releases left out, with why


def parse_releases(spec: str | None) -> tuple[SpecifierSet | None, tuple[Version, ...]]:
    """``2.3.0`` / ``2.3.0,2.7.0`` (exactly these), ``2.4.0..2.7.0`` (an
    inclusive range) or a PEP 440 specifier (``>=2.4``)."""
    if spec is None or not spec.strip():
        return None, ()
    text = spec.strip()
    try:
        if ".." in text:
            low, _sep, high = text.partition("..")
            if not low.strip() and not high.strip():
                raise PlanError(f"--releases {spec!r}: a range needs a start or an end")
            parts = [f">={Version(low.strip())}"] if low.strip() else []
            parts += [f"<={Version(high.strip())}"] if high.strip() else []
            return SpecifierSet(",".join(parts)), ()
        if any(c in text for c in "<>=!~"):
            return SpecifierSet(text), ()
        return None, tuple(Version(v.strip()) for v in text.split(",") if v.strip())
    except (InvalidSpecifier, InvalidVersion) as exc:
        raise PlanError(f"--releases {spec!r}: {exc}") from exc


def parse_companions(spec: str | None) -> tuple[str, ...]:
    if spec is None:
        return ()
    found = []
    for part in spec.split(","):
        if not part.strip():
            continue
        try:
            found.append(Version(part.strip()))
        except InvalidVersion as exc:
            raise PlanError(f"--companions {spec!r}: {exc}") from exc
    if not found:
        raise PlanError(f"--companions {spec!r}: no version")
    return tuple(str(v) for v in sorted(set(found), reverse=True))


def _companions(
    release: Release | None,
    era: str,
    matrix: ReleaseMatrix,
    chosen: Sequence[str],
    allowed: str | None,
) -> list[tuple[str | None, str]]:
    """The companions worth trying for a 2.x release: the newest its metadata
    allows (pip's own choice), then the boundary the matrix knows (the pin its
    companion experiments prove, else a known issue's pin), or ``chosen`` exactly."""
    if era != "plugin-2.x":
        return [(None, "no companion (1.x is monolithic)")]
    if chosen:
        return [(f"onnxruntime=={v}", "--companions") for v in chosen]
    found: list[tuple[str | None, str]] = [(None, f"newest allowed ({allowed or 'onnxruntime'})")]
    measured = proven(release) if release is not None else None
    if measured is not None:
        if measured.pin:
            found.append((measured.pin, "the matrix's companion experiments"))
        return found
    for issue in matrix.known_issues:
        if (
            release is not None
            and issue.effect == "pin-companion"
            and issue.companion_pin
            and issue.versions.contains(release.version, prereleases=True)
        ):
            found.append((issue.companion_pin, f"matrix pin ({issue.id})"))
    return found


def make_plan(
    profile: Profile,
    matrix: ReleaseMatrix,
    *,
    releases: str | None = None,
    companions: str | None = None,
) -> Plan:
    """Raises ``PlanError`` for unreadable options."""
    spec, exact = parse_releases(releases)
    chosen = parse_companions(companions)
    known = {r.version: r for r in matrix.releases}
    pairs: list[Pair] = []
    skipped: list[str] = []
    versions = sorted(set(known) | set(exact), reverse=True)
    for version in versions:
        if exact and version not in exact:
            continue
        if spec is not None and not spec.contains(version, prereleases=True):
            continue
        release = known.get(version)
        named = bool(exact) or spec is not None
        if release is None:  # named but unknown to the matrix: pip will say
            era = "plugin-2.x" if version.major >= 2 else "monolithic-1.x"
            allowed = None
        else:
            verdict = evaluate_release(profile, release, matrix, allow_prerelease=named)
            structural = [r for r in verdict.reasons if r.axis in _STRUCTURAL]
            if verdict.file is None or structural or (release.prerelease and not named):
                if named:  # unasked releases without a wheel here: `recommend` says why
                    why = "; ".join(r.detail for r in (structural or verdict.reasons)[:1])
                    skipped.append(f"{version}: {why or 'no wheel for this target'}")
                continue
            era = release.era
            requirement = companion_requirement(verdict.file)
            allowed = str(requirement) if requirement else None
        for companion, why in _companions(release, era, matrix, chosen, allowed):
            pairs.append(Pair(str(version), era, companion, why))
    return Plan(tuple(pairs), tuple(skipped))
