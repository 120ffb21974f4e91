"""Which QNN SDK version a wheel bundles, decided from the evidence read out
of it: build_and_package_info.py, the DLLs' VERSIONINFO, and (only when those
say nothing) the QNN build string compiled into the libraries. Never a guess."""

from __future__ import annotations

from collections.abc import Sequence

from .common import _QNN_BUILD_STRING_RE, _QNN_VERSION_RE
from .records import QnnVersion


def _numeric_version(text: str) -> str | None:
    match = _QNN_VERSION_RE.match(text.strip())
    return ".".join(match.groups()) if match else None


def qnn_build_strings(data: bytes) -> list[str]:
    """Every QNN build string inside a library's bytes, without the 'v'."""
    return sorted({m.group(1).decode("ascii") for m in _QNN_BUILD_STRING_RE.finditer(data)})


def decide_qnn_version(
    package_info: tuple[str, str] | None,
    pe_infos: Sequence[tuple[str, str]] = (),
    build_strings: Sequence[tuple[str, str]] = (),
) -> tuple[QnnVersion | None, str | None]:
    """The QNN version from build_and_package_info.py ((path, qnn_version))
    and DLL VERSIONINFO ((path, ProductVersion), one per library folder);
    only when both say nothing, from the QNN build strings compiled into the
    libraries ((path, build)). ``None`` plus a note when they disagree or say
    nothing usable: never a guess."""
    if package_info is None and not pe_infos and build_strings:
        return _from_build_strings(build_strings)
    evidence: list[str] = []
    claims: list[str] = []
    versions: set[str] = set()
    builds: set[str] = set()
    notes: list[str] = []
    if package_info is not None:
        path, value = package_info
        number = _numeric_version(value)
        if number is None:
            notes.append(f"{path} has qnn_version {value!r}, not a version number")
        else:
            versions.add(number)
            evidence.append(f"qnn_version {value!r} in {path}")
            claims.append(f"{path} says {value!r}")
            if value.strip() != number:
                builds.add(value.strip())
    for path, value in pe_infos:
        number = _numeric_version(value)
        if number is None:
            notes.append(f"ProductVersion {value!r} of {path} is not a version number")
            continue
        versions.add(number)
        evidence.append(f"PE VERSIONINFO ProductVersion of {path}")
        claims.append(f"ProductVersion of {path} says {value!r}")
        builds.add(value.strip())
    if len(versions) > 1:
        return None, "sources disagree: " + "; ".join(claims)
    if not versions:
        notes.append(
            "no evidence: no qnn_version in a build_and_package_info.py "
            "and no QNN DLL with a VERSIONINFO ProductVersion"
        )
        return None, "; ".join(notes)
    if len(builds) > 1:
        notes.append("build strings differ: " + ", ".join(sorted(builds)))
    build = next(iter(builds)) if len(builds) == 1 else None
    return QnnVersion(versions.pop(), build, tuple(evidence)), "; ".join(notes) or None


def _from_build_strings(
    build_strings: Sequence[tuple[str, str]],
) -> tuple[QnnVersion | None, str | None]:
    builds = sorted({build for _path, build in build_strings})
    if len(builds) > 1:
        return None, "QNN build strings disagree: " + "; ".join(
            f"{path} holds {build!r}" for path, build in build_strings
        )
    (build,) = builds
    number = _numeric_version(build)
    if number is None:  # the pattern guarantees a number; kept for safety
        return None, f"QNN build string {build!r} is not a version number"
    evidence = tuple(f"QNN build string 'v{b}' inside {path}" for path, b in build_strings)
    return (
        QnnVersion(number, build, evidence),
        "no VERSIONINFO in the QNN libraries: version read from the build string they carry",
    )
