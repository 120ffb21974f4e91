"""What to change when the target itself is the problem: native ARM64
Python instead of x64 under emulation, another Python version."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .commands import install_commands, native_arm64_launcher, windows_launcher
from .compat_rules import EMULATION, RULES

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..matrixdata.releases import Release, ReleaseMatrix
    from .profile import Profile
    from .verdict import Verdict

    # The resolver's ``evaluate_release``, passed in: the resolver uses this
    # module, not the reverse.
    Evaluate = Callable[[Profile, Release, ReleaseMatrix, bool], Verdict]


def alternatives(
    profile: Profile, matrix: ReleaseMatrix, allow_prerelease: bool, evaluate_release: Evaluate
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
    found: list[dict[str, Any]] = []
    for label, candidate in options:
        for release in matrix.releases:
            verdict = evaluate_release(candidate, release, matrix, allow_prerelease)
            if verdict.fits:
                commands = list(_commands_for(candidate, verdict))
                if all(commands != other["commands"] for other in found):  # one change, once
                    found.append(
                        {
                            "change": label,
                            "version": str(verdict.version),
                            "file": verdict.file.filename if verdict.file else None,
                            "python": f"{candidate.python[0]}.{candidate.python[1]}",
                            "arch": candidate.arch,
                            "commands": commands,
                        }
                    )
                break
        if len(found) >= 3:
            break
    return found


def native_route(
    profile: Profile, matrix: ReleaseMatrix, allow_prerelease: bool, evaluate_release: Evaluate
) -> tuple[Profile, Verdict] | None:
    """For x64 Python on a Windows ARM64 machine: native ARM64 CPython (the
    same version first, then the versions the wheels cover best) and the
    release that fits it, or None (another target, or no release fits)."""
    if not (profile.windows and profile.native_arch == "arm64" and profile.arch == "x86_64"):
        return None
    for minor in dict.fromkeys((profile.python[1], 12, 13, 11, 14)):
        python = (profile.python[0], minor)
        native = replace(
            profile,
            python=python,
            arch="arm64",
            emulated=False,
            installed=(),
            launcher=native_arm64_launcher(python),
            free_threaded=False,
        )
        for release in matrix.releases:
            verdict = evaluate_release(native, release, matrix, allow_prerelease)
            if verdict.fits:
                return native, verdict
    return None


def emulation_verdict(
    profile: Profile,
    route: tuple[Profile, Verdict] | None,
    chosen: Verdict | None,
    commands: tuple[str, ...],
) -> dict[str, Any] | None:
    """x64 Python on a Windows ARM64 machine: the native ARM64 commands come
    first (the validated setup); what works in this emulated interpreter second."""
    if not (profile.windows and profile.native_arch == "arm64" and profile.arch == "x86_64"):
        return None
    here = (
        f"this x64 Python runs under emulation; onnxruntime-qnn {chosen.version} can work in it "
        "(ARM64X QNN libraries), but native ARM64 Python is the validated setup"
        if chosen
        else "this x64 Python runs under emulation and no onnxruntime-qnn release can reach "
        "the NPU from it"
    )
    native_commands: list[str] = []
    if route is not None:
        native, native_choice = route
        major, minor = native.python
        native_commands = [
            f"winget install --exact --id Python.Python.{major}.{minor} --architecture arm64",
            *install_commands(native, native_choice),
        ]
    return {
        "verdict": here,
        "native_arm64": {
            "version": str(route[1].version) if route else None,
            "python": f"{route[0].python[0]}.{route[0].python[1]}" if route else None,
            "file": route[1].file.filename if route and route[1].file else None,
            "commands": native_commands,
        },
        "this_interpreter": {
            "version": str(chosen.version) if chosen else None,
            "file": chosen.file.filename if chosen and chosen.file else None,
            "notes": list(chosen.notes) if chosen else [],
        },
        "this_interpreter_commands": list(commands),
        "commands": native_commands or list(commands),
        "sources": list(RULES[EMULATION].sources),
    }


def _commands_for(candidate: Profile, verdict: Verdict) -> tuple[str, ...]:
    """Get that Python, then install into it: the same words in PowerShell
    and cmd on Windows (winget, the py launcher); on Linux the interpreter by
    its versioned name (how it is installed depends on the distribution)."""
    major, minor = candidate.python
    if candidate.windows:
        arm64 = candidate.arch == "arm64"
        launcher = windows_launcher(candidate.python, candidate.arch, candidate.free_threaded)
        get = f"winget install --exact --id Python.Python.{major}.{minor}" + (
            " --architecture arm64" if arm64 else ""
        )
        return (get, *install_commands(replace(candidate, launcher=launcher), verdict))
    return install_commands(replace(candidate, launcher=(f"python{major}.{minor}",)), verdict)
