"""The resolver: which onnxruntime-qnn to install, and why not anything newer.

A pure function of the target's profile (derived from facts, or given in
what-if mode) and the release matrix built from the published wheels. Every
release newer than the recommendation is listed with the rule that rules it
out, how sure that rule is and the public sources behind it
(``compat_rules``). A system QNN SDK never rules a release out: it is a
shadowing risk, reported as a note with what avoids it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from ..matrixdata.companions import SOURCE as COMPANIONS
from ..matrixdata.companions import proven
from ..matrixdata.releases import Release, ReleaseMatrix, WheelFile, python_tag_order
from .alternatives import alternatives, emulation_verdict, native_route
from .commands import install_commands, situation_notes
from .compat_rules import (
    EMULATION,
    KNOWN_ISSUE,
    NO_PLATFORM,
    NO_PYTHON,
    NO_QNN_LIBRARIES,
    NO_STUB,
    PRERELEASE,
    REQUIRES_PYTHON,
    RULES,
    X64_MACHINE,
    YANKED,
)
from .profile import PLATFORM_WORDS, Profile, platform_words, profile_from_facts, python_words
from .verdict import Reason, Verdict
from .wheel_checks import on_x64_machine, under_x64_emulation

__all__ = [
    "EMULATION",
    "KNOWN_ISSUE",
    "NO_PLATFORM",
    "NO_PYTHON",
    "NO_QNN_LIBRARIES",
    "NO_STUB",
    "PRERELEASE",
    "REQUIRES_PYTHON",
    "X64_MACHINE",
    "YANKED",
    "Profile",
    "Reason",
    "Recommendation",
    "Verdict",
    "evaluate_release",
    "install_commands",
    "profile_from_facts",
    "recommend",
]


def _glibc_needed(release: Release, profile: Profile) -> tuple[int, int] | None:
    """The oldest glibc the release's wheels for this platform accept, when
    only an older glibc kept them out."""
    if profile.os != "linux" or profile.glibc is None:
        return None
    levels = []
    for file in release.files:
        if file.platform != profile.bucket or file.yanked:
            continue
        for tag in file.tags:
            parts = tag.platform.split("_")
            if tag.platform.startswith("manylinux_") and parts[1].isdigit() and parts[2].isdigit():
                levels.append((int(parts[1]), int(parts[2])))
    return min(levels) if levels else None


def _python_words(tag: str) -> str:
    """cp312 -> 3.12, cp313t -> 3.13 (free-threaded)."""
    if tag.startswith("cp") and tag[2:].rstrip("t").isdigit() and len(tag) >= 4:
        return f"{tag[2]}.{tag[3:].rstrip('t')}" + (" (free-threaded)" if tag.endswith("t") else "")
    return tag


def _reason(axis: str, detail: str) -> Reason:
    rule = RULES[axis]
    return Reason(axis, detail, rule.confidence, rule.sources)


def _file_reasons(
    profile: Profile, release: Release, file: WheelFile
) -> tuple[list[Reason], list[str]]:
    reasons: list[Reason] = []
    notes: list[str] = []
    if file.requires_python:
        try:
            if not SpecifierSet(file.requires_python).contains(
                Version("{}.{}".format(*profile.python)), True
            ):
                reasons.append(
                    _reason(
                        REQUIRES_PYTHON,
                        f"declares Requires-Python {file.requires_python}",
                    )
                )
        except InvalidSpecifier:
            notes.append(f"unparseable Requires-Python {file.requires_python!r}")
    has_htp = any("backend_htp" in folder.header for folder in file.folders)
    if not has_htp:
        # 1.17.x expected a separately installed QNN SDK; qnndoctor never
        # recommends such a wheel for the NPU, whatever SDK is on the machine.
        reasons.append(
            _reason(
                NO_QNN_LIBRARIES,
                "ships no QNN HTP library: it cannot use the NPU without a separately "
                "installed QNN SDK, which onnxruntime-qnn 1.18.0 and newer bundle instead",
            )
        )
    if profile.htp_arch is not None and profile.drives_npu and has_htp:
        if not file.stub_hexagon_versions:
            reasons.append(
                _reason(
                    NO_STUB,
                    "ships no HTP stub library at all, so it cannot reach any Hexagon NPU; "
                    f"this chip is Hexagon v{profile.htp_arch}",
                )
            )
        elif profile.htp_arch not in file.stub_hexagon_versions:
            reasons.append(
                _reason(
                    NO_STUB,
                    "ships HTP libraries for Hexagon "
                    f"v{', v'.join(map(str, file.stub_hexagon_versions))} "
                    f"only; this chip is Hexagon v{profile.htp_arch}",
                )
            )
    if profile.windows and profile.arch == "x86_64" and profile.native_arch == "x86_64":
        blocked = on_x64_machine(file)
        if blocked is not None:
            reasons.append(_reason(X64_MACHINE, blocked))
    if (
        profile.emulated
        and profile.windows
        and profile.arch == "x86_64"
        and profile.native_arch == "arm64"
    ):
        judged = under_x64_emulation(file)
        if judged is not None and judged.startswith("blocked: "):
            reasons.append(_reason(EMULATION, judged.removeprefix("blocked: ")))
        elif judged is not None:
            notes.append(judged)
    if file.error:
        notes.append(f"matrix could not read this wheel fully: {file.error}")
    return reasons, notes


def evaluate_release(
    profile: Profile, release: Release, matrix: ReleaseMatrix, allow_prerelease: bool = False
) -> Verdict:
    """Whether pip would install a file of ``release`` here, and whether it can
    work. Remembered per matrix by what it depends on: the alternatives ask it
    again for the same Python and machine."""
    key = (
        "evaluate",
        profile.python,
        profile.free_threaded,
        profile.os,
        profile.arch,
        profile.native_arch,
        profile.emulated,
        profile.glibc,
        profile.htp_arch,
        release.version,
        id(release),  # the same version with other known issues or companion rows is another release
        allow_prerelease,
    )
    remembered = matrix.memo.get(key)
    if remembered is None or remembered[0] is not release:  # an id is reused only after its object died
        remembered = (release, _evaluate_release(profile, release, matrix, allow_prerelease))
        matrix.memo[key] = remembered
    verdict: Verdict = remembered[1]
    return verdict


def _evaluate_release(
    profile: Profile, release: Release, matrix: ReleaseMatrix, allow_prerelease: bool
) -> Verdict:
    platforms = set(profile.platform_tags())
    on_platform = [
        f for f in release.files if not f.yanked and any(t.platform in platforms for t in f.tags)
    ]
    candidates = [f for f in on_platform if profile.accepts(f.tags)]
    base: list[Reason] = []
    if release.prerelease and not allow_prerelease:
        base.append(_reason(PRERELEASE, "a pre-release (pass --pre to consider it)"))
    if release.files and all(f.yanked for f in release.files):
        base.append(_reason(YANKED, "every file was yanked"))
    if not on_platform:
        have = sorted({f.platform for f in release.files})
        detail = f"no wheel for {platform_words(profile)} (wheels exist for: " + (
            f"{', '.join(PLATFORM_WORDS.get(h, h) for h in have) or 'nothing'})"
        )
        needed = _glibc_needed(release, profile)
        if needed is not None:
            detail = (
                f"its {platform_words(profile)} wheels need glibc {needed[0]}.{needed[1]} or "
                f"newer; this system has glibc {'.'.join(map(str, profile.glibc or ()))}"
            )
        return Verdict(release.version, release.era, None, (*base, _reason(NO_PLATFORM, detail)))
    if not candidates:
        have = sorted({t for f in on_platform for t in f.python_tags}, key=python_tag_order)
        return Verdict(
            release.version,
            release.era,
            None,
            (
                *base,
                _reason(
                    NO_PYTHON,
                    f"no wheel for Python {profile.python[0]}.{profile.python[1]}"
                    f"{' (free-threaded)' if profile.free_threaded else ''} on "
                    f"{platform_words(profile)} (wheels exist for Python "
                    f"{', '.join(_python_words(t) for t in have)})",
                ),
            ),
        )
    best: Verdict | None = None
    measured = proven(release)  # the companion experiments: they replace a hand pin
    for file in candidates:
        reasons, notes = _file_reasons(profile, release, file)
        pin = None
        for issue in matrix.known_issues:
            if not issue.applies(release.version, file.platform):
                continue
            if not issue.sources:
                # No public evidence: it may inform, never rule out or pin.
                notes.append(f"unconfirmed report (no public source): {issue.title}")
            elif issue.effect == "pin-companion" and issue.companion_pin:
                if measured is not None and not issue.id.startswith("local-"):
                    continue  # measured here (local evidence) still wins over the matrix
                pin = issue.companion_pin
                notes.append(
                    f"{issue.title}: installing together with {pin} (source: {issue.sources[0]})"
                )
            else:
                reasons.append(Reason(KNOWN_ISSUE, issue.title, issue.confidence, issue.sources))
        if measured is not None and pin is None:
            pin = measured.pin
            notes.append(measured.note)
            if measured.none_passed:
                reasons.append(Reason(KNOWN_ISSUE, measured.text, "measured", (COMPANIONS,)))
        verdict = Verdict(release.version, release.era, file, (*base, *reasons), tuple(notes), pin)
        if best is None or (verdict.fits and not best.fits):
            best = verdict
    assert best is not None
    return best


@dataclass(frozen=True)
class Recommendation:
    """The answer. ``chosen``: the release that fits this interpreter (None:
    nothing fits it). ``installs`` / ``installs_into``: what ``commands``
    install, and into which Python: ``chosen`` and the target itself, except
    for x64 Python under emulation on Windows on ARM, whose commands set up
    native ARM64 Python (the validated setup) when a release fits there."""

    status: str  # "ok" | "nothing-fits" | "no-matrix"
    profile: Profile
    chosen: Verdict | None
    ruled_out: tuple[Verdict, ...]
    commands: tuple[str, ...] = ()
    alternatives: tuple[dict[str, Any], ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    emulation: dict[str, Any] | None = None
    installs: Verdict | None = None
    installs_into: Profile | None = None

    def to_json(self) -> dict[str, Any]:
        # version / era / file / bundled_qnn / python / arch describe what
        # `commands` install, never another release.
        installs, into = self.installs, self.installs_into
        return {
            "emulation": self.emulation,
            "status": self.status,
            "version": str(installs.version) if installs else None,
            "era": installs.era if installs else None,
            "file": installs.file.filename if installs and installs.file else None,
            "bundled_qnn": installs.file.qnn_version if installs and installs.file else None,
            "python": python_words(into) if installs and into else None,
            "arch": into.arch if installs and into else None,
            "commands": list(self.commands),
            "already_installed": self.chosen is not None and not self.commands,
            "ruled_out": [v.to_json() for v in self.ruled_out],
            "alternatives": list(self.alternatives),
            "notes": list(self.notes) + (list(installs.notes) if installs else []),
            "profile": self.profile.to_json(),
        }


def recommend(
    profile: Profile, matrix: ReleaseMatrix, *, allow_prerelease: bool = False
) -> Recommendation:
    """Pure, so remembered per matrix: the report and the installed-release
    rule ask the same question."""
    key = ("recommend", profile, allow_prerelease)
    if key not in matrix.memo:
        matrix.memo[key] = _recommend(profile, matrix, allow_prerelease)
    result: Recommendation = matrix.memo[key]
    return result


def _recommend(profile: Profile, matrix: ReleaseMatrix, allow_prerelease: bool) -> Recommendation:
    if not matrix.releases:
        return Recommendation(
            "no-matrix", profile, None, (), notes=("the release matrix is empty",)
        )
    ruled_out: list[Verdict] = []
    chosen: Verdict | None = None
    for release in matrix.releases:
        verdict = evaluate_release(profile, release, matrix, allow_prerelease)
        if verdict.fits:
            chosen = verdict
            break
        ruled_out.append(verdict)
    # Pre-releases excluded only for being pre-releases are noise here.
    shown = tuple(v for v in ruled_out if {r.axis for r in v.reasons} != {PRERELEASE})
    # x64 Python on Windows on ARM: native ARM64 Python is the route the commands take.
    route = native_route(profile, matrix, allow_prerelease, evaluate_release)
    installs, into = (route[1], route[0]) if route else (chosen, profile)
    if chosen is None:
        emulation = emulation_verdict(profile, route, None, ())
        instead = tuple(alternatives(profile, matrix, allow_prerelease, evaluate_release))
        return Recommendation(
            "nothing-fits",
            profile,
            None,
            shown,
            tuple(emulation["commands"]) if emulation else (),
            alternatives=instead,
            notes=(
                *profile.notes,
                *situation_notes(into if installs else profile, installs),
                *([] if route or instead else _undriven_chip(profile, matrix)),
            ),
            emulation=emulation,
            installs=installs,
            installs_into=into if installs else None,
        )
    # Under emulation something may fit, but native ARM64 is still the better change.
    better = (
        alternatives(profile, matrix, allow_prerelease, evaluate_release)[:1]
        if profile.emulated
        else []
    )
    commands = install_commands(profile, chosen)
    emulation = emulation_verdict(profile, route, chosen, commands)
    return Recommendation(
        "ok",
        profile,
        chosen,
        shown,
        tuple(emulation["commands"]) if emulation else commands,
        alternatives=tuple(better),
        notes=(*profile.notes, *situation_notes(into, installs)),
        emulation=emulation,
        installs=installs,
        installs_into=into,
    )


def _undriven_chip(profile: Profile, matrix: ReleaseMatrix) -> list[str]:
    """When no wheel for this operating system carries the HTP stub of the
    chip: say so, and where wheels with it exist."""
    if profile.htp_arch is None or not profile.drives_npu:
        return []
    system = "win_" if profile.windows else profile.os
    with_stub = sorted(
        {
            f.platform
            for r in matrix.releases
            for f in r.files
            if not f.yanked and profile.htp_arch in f.stub_hexagon_versions
        }
    )
    if any(p.startswith(system) for p in with_stub):
        return []
    where = ", ".join(PLATFORM_WORDS.get(p, p) for p in with_stub)
    return [
        f"no onnxruntime-qnn wheel for {platform_words(profile).split(' ')[0]} ships an HTP "
        f"stub for Hexagon v{profile.htp_arch}, so no release can drive this chip there "
        + (f"(wheels with one exist for: {where})" if where else "(nor for any other platform)")
    ]


def companion_requirement(file: WheelFile) -> Requirement | None:
    for text in file.requires_dist:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        if canonicalize_name(requirement.name) == "onnxruntime":
            return requirement
    return None


def releases_summary(matrix: ReleaseMatrix) -> Iterable[dict[str, Any]]:
    """One row per release x platform, for `qnndoctor matrix`."""
    for release in matrix.releases:
        by_platform: dict[str, list[WheelFile]] = {}
        for file in release.files:
            by_platform.setdefault(file.platform, []).append(file)
        for platform, files in sorted(by_platform.items()):
            companion = companion_requirement(files[0])
            yield {
                "version": str(release.version),
                "prerelease": release.prerelease,
                "era": release.era,
                "platform": platform,
                "python": sorted({t for f in files for t in f.python_tags}, key=python_tag_order),
                "qnn_version": files[0].qnn_version,
                "stubs": sorted({v for f in files for v in f.stub_hexagon_versions}),
                "machines": dict(files[0].library_machines),
                "companion": str(companion.specifier) if companion else None,
            }
