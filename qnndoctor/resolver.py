"""The resolver: which onnxruntime-qnn to install, and why not anything newer.

A pure function of the target's profile (derived from facts, or given in
what-if mode) and the release matrix built from the published wheels. Every
release newer than the recommendation is listed with the rule that rules it
out, how sure that rule is and the public sources behind it
(``compat_rules``). A system QNN SDK never rules a release out: it is a
shadowing risk, reported as a note with what avoids it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from .advice import install_commands, situation_notes
from .alternatives import alternatives, emulation_verdict
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
    YANKED,
)
from .facts import Facts, externally_managed, target_pip
from .matrixdata import Matrix
from .matrixdata.companions import SOURCE as COMPANIONS
from .matrixdata.companions import proven
from .matrixdata.releases import Release, ReleaseMatrix, WheelFile
from .socs import identify as identify_soc
from .values import records
from .wheel_checks import under_x64_emulation

__all__ = [
    "EMULATION",
    "KNOWN_ISSUE",
    "NO_PLATFORM",
    "NO_PYTHON",
    "NO_QNN_LIBRARIES",
    "NO_STUB",
    "PRERELEASE",
    "REQUIRES_PYTHON",
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

CONFIDENCE = {axis: rule.confidence for axis, rule in RULES.items()}

_PLATFORM_BUCKET = {
    ("windows", "x86_64"): "win_amd64",
    ("windows", "arm64"): "win_arm64",
    ("windows", "x86"): "win32",
    ("linux", "x86_64"): "linux_x86_64",
    ("linux", "arm64"): "linux_aarch64",
}
_LEGACY_MANYLINUX = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
_PLATFORM_WORDS = {
    "win_arm64": "Windows on ARM64",
    "win_amd64": "Windows x64",
    "win32": "Windows 32-bit",
    "linux_x86_64": "Linux x86-64",
    "linux_aarch64": "Linux ARM64",
}


def _platform_words(profile: Profile) -> str:
    return _PLATFORM_WORDS.get(profile.bucket or "", profile.bucket or profile.os)


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


@dataclass(frozen=True)
class Profile:
    """The target as the resolver sees it."""

    python: tuple[int, int]
    free_threaded: bool
    os: str
    arch: str | None  # the interpreter process's architecture
    native_arch: str | None
    emulated: bool
    glibc: tuple[int, int] | None
    htp_arch: int | None
    htp_arch_source: str | None
    system_qnn: Version | None
    system_qnn_source: str | None
    python_exe: str
    installed: tuple[tuple[str, str, tuple[str, ...]], ...] = ()  # (name, version, modules)
    notes: tuple[str, ...] = ()
    # What-if mode names no interpreter path: the command that starts the
    # right Python instead (``py -V:3.12-arm64`` on Windows, ``python3.12``).
    launcher: tuple[str, ...] = ()
    npu_driver: str | None = None
    npu_driver_source: str | None = None
    # facts.target_pip: "absent" puts `-m ensurepip` before the pip commands.
    pip: str = "unknown"
    # A system Python pip refuses to change (PEP 668): install into a new venv.
    externally_managed: bool = False

    @property
    def windows(self) -> bool:
        return self.os == "windows"

    @property
    def bucket(self) -> str | None:
        return _PLATFORM_BUCKET.get((self.os, self.arch or ""))

    def platform_tags(self) -> list[str]:
        if self.os == "windows":
            return {"x86_64": ["win_amd64"], "arm64": ["win_arm64"], "x86": ["win32"]}.get(
                self.arch or "", []
            )
        if self.os == "linux" and self.arch in ("x86_64", "arm64"):
            machine = "x86_64" if self.arch == "x86_64" else "aarch64"
            major, minor = self.glibc or (2, 99)
            tags = []
            for glibc_minor in range(minor, 4, -1):
                tags.append(f"manylinux_{major}_{glibc_minor}_{machine}")
                legacy = _LEGACY_MANYLINUX.get(glibc_minor)
                if legacy and (legacy != "manylinux1" or machine == "x86_64"):
                    tags.append(f"{legacy}_{machine}")
            return [*tags, f"linux_{machine}"]
        return []

    def tags(self) -> frozenset[Tag]:
        return _supported_tags(self.python, self.free_threaded, tuple(self.platform_tags()))

    def accepts(self, wheel_tags: frozenset[Tag]) -> bool:
        """Whether pip would install a wheel with these tags here: the same
        answer as ``wheel_tags & self.tags()``, from packaging's supported tags
        for only the wheel's own platforms (each supported tag names one
        platform, or "any"): ~30 tags instead of ~930 on Linux."""
        own = self.platform_tags()
        if not own:  # packaging would read no platforms as "this machine's"
            return not wheel_tags.isdisjoint(self.tags())
        wheel_platforms = {tag.platform for tag in wheel_tags}
        platforms = tuple(p for p in own if p in wheel_platforms)
        if not platforms and "any" in wheel_platforms:
            platforms = (own[0],)  # the "any" tags come with every platform list
        return bool(platforms) and not wheel_tags.isdisjoint(
            _supported_tags(self.python, self.free_threaded, platforms)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "python": ".".join(map(str, self.python)) + ("t" if self.free_threaded else ""),
            "os": self.os,
            "arch": self.arch,
            "native_arch": self.native_arch,
            "emulated": self.emulated,
            "platform_tags": self.platform_tags()[:3],
            "glibc": ".".join(map(str, self.glibc)) if self.glibc else None,
            "htp_arch": self.htp_arch,
            "htp_arch_source": self.htp_arch_source,
            "system_qnn": str(self.system_qnn) if self.system_qnn else None,
            "system_qnn_source": self.system_qnn_source,
            "npu_driver": self.npu_driver,
            "npu_driver_source": self.npu_driver_source,
            "pip": self.pip,
            "externally_managed": self.externally_managed,
            "notes": list(self.notes),
        }


@functools.lru_cache(maxsize=64)
def _supported_tags(
    python: tuple[int, int], free_threaded: bool, platforms: tuple[str, ...]
) -> frozenset[Tag]:
    """What pip would accept for such an interpreter (computed once per target)."""
    abi = f"cp{python[0]}{python[1]}{'t' if free_threaded else ''}"
    interpreter = f"cp{python[0]}{python[1]}"
    return frozenset(
        [
            *cpython_tags(python, abis=[abi], platforms=platforms),
            *compatible_tags(python, interpreter=interpreter, platforms=platforms),
        ]
    )


def _os_name(sys_platform: str | None) -> str:
    if sys_platform == "win32":
        return "windows"
    if sys_platform and sys_platform.startswith("linux"):
        return "linux"
    if sys_platform == "darwin":
        return "macos"
    return str(sys_platform or "unknown")


def _version(text: Any) -> Version | None:
    try:
        return Version(str(text)) if text else None
    except InvalidVersion:
        return None


def profile_from_facts(facts: Facts, matrix: Matrix) -> Profile:
    """What the resolver needs, read from the probes' facts."""
    notes: list[str] = []
    info = facts.value("interpreter", "version_info") or [3, 0, 0]
    libc = facts.value("interpreter", "libc") or {}
    glibc: tuple[int, int] | None = None
    if libc.get("name") == "glibc" and libc.get("version"):
        parts = str(libc["version"]).split(".")
        glibc = (int(parts[0]), int(parts[1])) if len(parts) >= 2 and parts[1].isdigit() else None
    os_name = _os_name(facts.value("interpreter", "sys_platform"))
    if os_name == "linux" and glibc is None:
        notes.append("glibc version unknown: assumed new enough for every manylinux wheel")
    arch = facts.value("emulation", "process_arch") or facts.value("interpreter", "build_arch")
    htp_arch = htp_source = None
    soc = identify_soc(facts, matrix)
    if soc is not None and soc.soc.htp_arch is not None:
        htp_arch, htp_source = soc.soc.htp_arch, f"{soc.soc.part} ({soc.matched_by})"
    system_qnn = system_source = None
    for root in facts.value("qnn_sdk", "roots", []) or []:
        if not isinstance(root, dict) or root.get("exists") is False:
            continue
        found = root.get("version") or {}
        version = _version(found.get("sdk_yaml")) or _version(found.get("from_folder_name"))
        if system_source is None or (system_qnn is None and version is not None):
            system_qnn, system_source = version, f"{root.get('origin')}: {root.get('path')}"
    installed = tuple(
        (str(d.get("name")), str(d.get("version")), tuple(d.get("provides_modules") or ()))
        for d in facts.value("installs", "distributions", []) or []
    )
    npu_driver, npu_driver_source = _npu_driver(facts)
    return Profile(
        python=(int(info[0]), int(info[1])),
        free_threaded=bool(facts.value("interpreter", "free_threaded")),
        os=os_name,
        arch=str(arch) if arch else None,
        native_arch=facts.value("emulation", "native_arch"),
        emulated=facts.value("emulation", "emulated") is True,
        glibc=glibc,
        htp_arch=htp_arch,
        htp_arch_source=htp_source,
        system_qnn=system_qnn,
        system_qnn_source=system_source,
        python_exe=str(facts.value("interpreter", "executable") or "python"),
        installed=installed,
        notes=tuple(notes),
        npu_driver=npu_driver,
        npu_driver_source=npu_driver_source,
        pip=target_pip(facts),
        externally_managed=externally_managed(facts) is not None,
    )


def _npu_driver(facts: Facts) -> tuple[str | None, str | None]:
    """The NPU driver's version and where it was read (Windows): the runtime
    DLLs in the driver's DriverStore folder first, else the class driver."""
    for service in records(facts.value("soc", "npu_runtime")):
        for item in records(service.get("files")):
            if item.get("version"):
                return f"{item.get('name')} {item['version']}", str(item.get("version_source"))
    for driver in records(facts.value("soc", "npu_drivers")):
        if driver.get("DriverVersion"):
            return (
                f"{driver.get('DriverDesc') or 'NPU driver'} {driver['DriverVersion']}",
                f"registry class driver {driver.get('class_guid')}\\{driver.get('instance')}",
            )
    return None, None


@dataclass(frozen=True)
class Reason:
    """Why one release is ruled out: the rule, how sure, and where to check."""

    axis: str
    detail: str
    confidence: str
    sources: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "axis": self.axis,
            "detail": self.detail,
            "confidence": self.confidence,
            "sources": list(self.sources),
        }


def _reason(axis: str, detail: str) -> Reason:
    rule = RULES[axis]
    return Reason(axis, detail, rule.confidence, rule.sources)


@dataclass(frozen=True)
class Verdict:
    """One release for this target: the file pip would take, or why none fits."""

    version: Version
    era: str
    file: WheelFile | None
    reasons: tuple[Reason, ...]
    notes: tuple[str, ...] = ()
    companion_pin: str | None = None

    @property
    def fits(self) -> bool:
        return self.file is not None and not self.reasons

    def to_json(self) -> dict[str, Any]:
        return {
            "version": str(self.version),
            "era": self.era,
            "fits": self.fits,
            "file": self.file.filename if self.file else None,
            "qnn_version": self.file.qnn_version if self.file else None,
            "reasons": [r.to_json() for r in self.reasons],
            "notes": list(self.notes),
        }


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
    if not any("backend_htp" in folder.header for folder in file.folders):
        # 1.17.x expected a separately installed QNN SDK; qnndoctor never
        # recommends such a wheel for the NPU, whatever SDK is on the machine.
        reasons.append(
            _reason(
                NO_QNN_LIBRARIES,
                "ships no QNN HTP library: it cannot use the NPU without a separately "
                "installed QNN SDK, which onnxruntime-qnn 1.18.0 and newer bundle instead",
            )
        )
    if (
        profile.htp_arch is not None
        and file.stub_hexagon_versions
        and profile.htp_arch not in file.stub_hexagon_versions
    ):
        reasons.append(
            _reason(
                NO_STUB,
                f"ships HTP libraries for Hexagon v{', v'.join(map(str, file.stub_hexagon_versions))} "
                f"only; this chip is Hexagon v{profile.htp_arch}",
            )
        )
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
    """Whether pip would install a file of ``release`` here, and whether it can work."""
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
        detail = f"no wheel for {_platform_words(profile)} (wheels exist for: " + (
            f"{', '.join(_PLATFORM_WORDS.get(h, h) for h in have) or 'nothing'})"
        )
        needed = _glibc_needed(release, profile)
        if needed is not None:
            detail = (
                f"its {_platform_words(profile)} wheels need glibc {needed[0]}.{needed[1]} or "
                f"newer; this system has glibc {'.'.join(map(str, profile.glibc or ()))}"
            )
        return Verdict(release.version, release.era, None, (*base, _reason(NO_PLATFORM, detail)))
    if not candidates:
        have = sorted({t for f in on_platform for t in f.python_tags})
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
                    f"{_platform_words(profile)} (wheels exist for Python "
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
    status: str  # "ok" | "nothing-fits" | "no-matrix"
    profile: Profile
    chosen: Verdict | None
    ruled_out: tuple[Verdict, ...]
    commands: tuple[str, ...] = ()
    alternatives: tuple[dict[str, Any], ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    emulation: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "emulation": self.emulation,
            "status": self.status,
            "version": str(self.chosen.version) if self.chosen else None,
            "era": self.chosen.era if self.chosen else None,
            "file": self.chosen.file.filename if self.chosen and self.chosen.file else None,
            "bundled_qnn": self.chosen.file.qnn_version
            if self.chosen and self.chosen.file
            else None,
            "commands": list(self.commands),
            "already_installed": self.chosen is not None and not self.commands,
            "ruled_out": [v.to_json() for v in self.ruled_out],
            "alternatives": list(self.alternatives),
            "notes": list(self.notes) + (list(self.chosen.notes) if self.chosen else []),
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
    if chosen is None:
        emulation = emulation_verdict(profile, matrix, allow_prerelease, None, ())
        return Recommendation(
            "nothing-fits",
            profile,
            None,
            shown,
            tuple(emulation["commands"]) if emulation else (),
            alternatives=tuple(alternatives(profile, matrix, allow_prerelease)),
            notes=(*profile.notes, *situation_notes(profile, None)),
            emulation=emulation,
        )
    # Under emulation something may fit, but native ARM64 is still the better change.
    better = alternatives(profile, matrix, allow_prerelease)[:1] if profile.emulated else []
    commands = install_commands(profile, chosen)
    emulation = emulation_verdict(profile, matrix, allow_prerelease, chosen, commands)
    return Recommendation(
        "ok",
        profile,
        chosen,
        shown,
        tuple(emulation["commands"]) if emulation else commands,
        alternatives=tuple(better),
        notes=(*profile.notes, *situation_notes(profile, chosen)),
        emulation=emulation,
    )


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
                "python": sorted({t for f in files for t in f.python_tags}),
                "qnn_version": files[0].qnn_version,
                "stubs": sorted({v for f in files for v in f.stub_hexagon_versions}),
                "machines": dict(files[0].library_machines),
                "companion": str(companion.specifier) if companion else None,
            }
