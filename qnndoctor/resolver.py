"""The resolver: which onnxruntime-qnn to install, and why not anything newer.

A pure function of the target's profile (derived from facts) and the release
matrix built from the published wheels. Every release newer than the
recommendation is listed with the axis that rules it out and how sure that
rule is: ``artifact`` (read from the wheels), ``documented`` (packaging
metadata), ``maintainer-confirmed`` or ``field-observation``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from . import shell
from .facts import Facts
from .libkinds import QNN_RUNTIME
from .matrixdata import Matrix, identify_soc
from .releases import Release, ReleaseMatrix, WheelFile

# Axes that rule a release out, with how sure each rule is.
NO_PLATFORM = "no-wheel-for-platform"
NO_PYTHON = "no-wheel-for-python"
REQUIRES_PYTHON = "requires-python"
NO_STUB = "no-stub-for-htp-arch"
QNN_NEWER = "bundled-qnn-newer-than-system"
EMULATION = "x64-libraries-under-emulation"
NO_QNN_LIBRARIES = "no-bundled-qnn"
KNOWN_ISSUE = "known-issue"
PRERELEASE = "prerelease"
YANKED = "yanked"

CONFIDENCE = {
    NO_PLATFORM: "artifact",
    NO_PYTHON: "artifact",
    REQUIRES_PYTHON: "documented",
    NO_STUB: "artifact",
    QNN_NEWER: "field-observation",
    EMULATION: "artifact",
    NO_QNN_LIBRARIES: "documented",
    PRERELEASE: "documented",
    YANKED: "documented",
}

_PLATFORM_BUCKET = {
    ("windows", "x86_64"): "win_amd64",
    ("windows", "arm64"): "win_arm64",
    ("windows", "x86"): "win32",
    ("linux", "x86_64"): "linux_x86_64",
    ("linux", "arm64"): "linux_aarch64",
}
_LEGACY_MANYLINUX = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}


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
        found = root.get("version") or {}
        version = _version(found.get("sdk_yaml")) or _version(found.get("from_folder_name"))
        if version is not None:
            system_qnn, system_source = version, f"{root.get('origin')}: {root.get('path')}"
            break
    installed = tuple(
        (str(d.get("name")), str(d.get("version")), tuple(d.get("provides_modules") or ()))
        for d in facts.value("installs", "distributions", []) or []
    )
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
    )


@dataclass(frozen=True)
class Reason:
    axis: str
    detail: str
    confidence: str

    def to_json(self) -> dict[str, str]:
        return {"axis": self.axis, "detail": self.detail, "confidence": self.confidence}


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


def _under_x64_emulation(file: WheelFile) -> str | None:
    """Can an emulated x64 process drive the NPU with this wheel's QNN libraries?

    Plain x64 QNN code cannot reach the ARM64 NPU driver and plain ARM64 code
    cannot load into an x64 process; ARM64X can do both. A file header says
    only 0xAA64 / 0x8664, so a folder's QNN build is judged by its QNN library
    whose load config was read (the HTP stub: same build, same version
    resource). A wheel with several folders fits if one of them does.
    """
    verdicts: list[str] = []
    for folder in file.folders:
        header = folder.header.get("backend_htp")
        if header is None:
            continue
        certain = next((m for kind, m in folder.certain.items() if kind in QNN_RUNTIME), None)
        if header == "AMD64":
            verdicts.append(
                f"blocked: {folder.path} holds x64 (AMD64) QNN libraries, which cannot reach the ARM64 NPU driver"
            )
        elif certain == "ARM64X":
            return (
                f"QNN libraries in {folder.path} are ARM64X builds (read from the stub's load "
                "config): loadable from emulated x64; native ARM64 Python is still the validated setup"
            )
        elif certain == "ARM64":
            verdicts.append(
                f"blocked: {folder.path} holds plain ARM64 QNN libraries, which an x64 process cannot load"
            )
        else:
            verdicts.append(
                f"QNN library build (ARM64 or ARM64X) in {folder.path} not verified for emulated x64"
            )
    unverified = [v for v in verdicts if not v.startswith("blocked: ")]
    if unverified:
        return unverified[0]
    if verdicts:
        return "blocked: " + "; ".join(v.removeprefix("blocked: ") for v in verdicts)
    return None


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
                    Reason(
                        REQUIRES_PYTHON,
                        f"Requires-Python {file.requires_python}",
                        CONFIDENCE[REQUIRES_PYTHON],
                    )
                )
        except InvalidSpecifier:
            notes.append(f"unparseable Requires-Python {file.requires_python!r}")
    if not any("backend_htp" in folder.header for folder in file.folders):
        # Wheels before 1.18.0 expected a separately installed QNN SDK.
        if profile.system_qnn is None:
            reasons.append(
                Reason(
                    NO_QNN_LIBRARIES,
                    "bundles no QNN HTP library and no system QNN SDK was found to supply one",
                    CONFIDENCE[NO_QNN_LIBRARIES],
                )
            )
        else:
            notes.append(f"bundles no QNN libraries: uses the system QNN SDK {profile.system_qnn}")
    if (
        profile.htp_arch is not None
        and file.stub_hexagon_versions
        and profile.htp_arch not in file.stub_hexagon_versions
    ):
        reasons.append(
            Reason(
                NO_STUB,
                f"ships HTP stubs for v{', v'.join(map(str, file.stub_hexagon_versions))} only; "
                f"this SoC is v{profile.htp_arch}",
                CONFIDENCE[NO_STUB],
            )
        )
    if profile.system_qnn is not None and file.qnn_version:
        bundled = _version(file.qnn_version)
        if bundled is not None and bundled.release[:2] > profile.system_qnn.release[:2]:
            reasons.append(
                Reason(
                    QNN_NEWER,
                    f"bundles QNN {file.qnn_version}, newer than the system QNN SDK {profile.system_qnn} "
                    "(seen to crash when the bundle is newer than the NPU driver)",
                    CONFIDENCE[QNN_NEWER],
                )
            )
    if (
        profile.emulated
        and profile.windows
        and profile.arch == "x86_64"
        and profile.native_arch == "arm64"
    ):
        judged = _under_x64_emulation(file)
        if judged is not None and judged.startswith("blocked: "):
            reasons.append(
                Reason(EMULATION, judged.removeprefix("blocked: "), CONFIDENCE[EMULATION])
            )
        elif judged is not None:
            notes.append(judged)
    if file.error:
        notes.append(f"matrix could not read this wheel fully: {file.error}")
    return reasons, notes


def evaluate_release(
    profile: Profile, release: Release, matrix: ReleaseMatrix, allow_prerelease: bool = False
) -> Verdict:
    """Whether pip would install a file of ``release`` here, and whether it can work."""
    tags = profile.tags()
    platforms = set(profile.platform_tags())
    on_platform = [
        f for f in release.files if not f.yanked and any(t.platform in platforms for t in f.tags)
    ]
    candidates = [f for f in on_platform if f.tags & tags]
    base: list[Reason] = []
    if release.prerelease and not allow_prerelease:
        base.append(
            Reason(PRERELEASE, "a pre-release (pass --pre to consider it)", CONFIDENCE[PRERELEASE])
        )
    if release.files and all(f.yanked for f in release.files):
        base.append(Reason(YANKED, "every file was yanked", CONFIDENCE[YANKED]))
    if not on_platform:
        have = sorted({f.platform for f in release.files})
        return Verdict(
            release.version,
            release.era,
            None,
            (
                *base,
                Reason(
                    NO_PLATFORM,
                    f"no wheel for {profile.bucket or profile.os} (wheels: {', '.join(have) or 'none'})",
                    CONFIDENCE[NO_PLATFORM],
                ),
            ),
        )
    if not candidates:
        have = sorted({t for f in on_platform for t in f.python_tags})
        return Verdict(
            release.version,
            release.era,
            None,
            (
                *base,
                Reason(
                    NO_PYTHON,
                    f"no wheel for Python {profile.python[0]}.{profile.python[1]}"
                    f"{'t' if profile.free_threaded else ''} on this platform (has {', '.join(have)})",
                    CONFIDENCE[NO_PYTHON],
                ),
            ),
        )
    best: Verdict | None = None
    for file in candidates:
        reasons, notes = _file_reasons(profile, release, file)
        pin = None
        for issue in matrix.known_issues:
            if issue.applies(release.version, file.platform):
                if issue.effect == "pin-companion" and issue.companion_pin:
                    pin = issue.companion_pin
                    notes.append(f"known issue {issue.id}: {issue.title}; installing with {pin}")
                else:
                    reasons.append(
                        Reason(KNOWN_ISSUE, f"{issue.id}: {issue.title}", issue.confidence)
                    )
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

    def to_json(self) -> dict[str, Any]:
        return {
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


def install_commands(profile: Profile, verdict: Verdict) -> tuple[str, ...]:
    """Uninstall what conflicts, then install the exact version with the target's pip."""
    keep = {"onnxruntime-qnn"} | ({"onnxruntime"} if verdict.era == "plugin-2.x" else set())
    remove = []
    for name, version, modules in profile.installed:
        canonical = canonicalize_name(name)
        wrong_era = canonical == "onnxruntime-qnn" and (version.split(".")[0] == "1") != (
            verdict.era == "monolithic-1.x"
        )
        if (
            ("onnxruntime" in modules and canonical not in keep) or wrong_era
        ) and name not in remove:
            remove.append(name)
    installed_already = any(
        canonicalize_name(name) == "onnxruntime-qnn" and version == str(verdict.version)
        for name, version, _modules in profile.installed
    )
    if installed_already and not remove and not verdict.companion_pin:
        return ()  # nothing to do; the report says it is already installed
    commands = []
    if remove:
        commands.append(
            shell.pip_command(profile.python_exe, profile.windows, "uninstall", "-y", *remove)
        )
    install = [f"onnxruntime-qnn=={verdict.version}"]
    if verdict.companion_pin:
        install.append(verdict.companion_pin)
    commands.append(shell.pip_command(profile.python_exe, profile.windows, "install", *install))
    return tuple(commands)


def _alternatives(
    profile: Profile, matrix: ReleaseMatrix, allow_prerelease: bool
) -> list[dict[str, Any]]:
    """What to change when nothing fits: native ARM64 Python, another Python version."""
    options: list[tuple[str, Profile]] = []
    if profile.windows and profile.native_arch == "arm64" and profile.arch != "arm64":
        options.append(
            (
                f"install native ARM64 CPython {profile.python[0]}.{profile.python[1]} "
                "(the 'ARM64' installer from python.org)",
                replace(profile, arch="arm64", emulated=False, installed=()),
            )
        )
    arches = [o[1].arch for o in options] or [profile.arch]
    for minor in (12, 13, 11, 14, 10):
        for arch in dict.fromkeys([*arches, profile.arch]):
            if (3, minor) == profile.python and arch == profile.arch:
                continue
            label = f"install CPython 3.{minor}" + (
                " ARM64 (python.org 'ARM64' installer)"
                if arch == "arm64" and profile.windows
                else ""
            )
            options.append(
                (
                    label,
                    replace(
                        profile,
                        python=(3, minor),
                        arch=arch,
                        emulated=False if arch == profile.native_arch else profile.emulated,
                        free_threaded=False,
                        installed=(),
                    ),
                )
            )
    found = []
    for label, candidate in options:
        for release in matrix.releases:
            verdict = evaluate_release(candidate, release, matrix, allow_prerelease)
            if verdict.fits:
                found.append(
                    {
                        "change": label,
                        "version": str(verdict.version),
                        "file": verdict.file.filename if verdict.file else None,
                    }
                )
                break
        if len(found) >= 3:
            break
    return found


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
        return Recommendation(
            "nothing-fits",
            profile,
            None,
            shown,
            alternatives=tuple(_alternatives(profile, matrix, allow_prerelease)),
            notes=profile.notes,
        )
    # Under emulation something may fit, but native ARM64 is still the better change.
    better = _alternatives(profile, matrix, allow_prerelease)[:1] if profile.emulated else []
    return Recommendation(
        "ok",
        profile,
        chosen,
        shown,
        install_commands(profile, chosen),
        alternatives=tuple(better),
        notes=profile.notes,
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
