"""What to change when the target itself is the problem: native ARM64
Python instead of x64 under emulation, another Python version."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .advice import install_commands, native_arm64_launcher
from .compat_rules import EMULATION, RULES

if TYPE_CHECKING:
    from .matrixdata.releases import ReleaseMatrix
    from .resolver import Profile, Verdict


def alternatives(
    profile: Profile, matrix: ReleaseMatrix, allow_prerelease: bool
) -> list[dict[str, Any]]:
    """What to change when nothing fits: native ARM64 Python, another Python version."""
    from .resolver import evaluate_release

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
                        "commands": list(_commands_for(candidate, verdict)),
                    }
                )
                break
        if len(found) >= 3:
            break
    return found


def emulation_verdict(
    profile: Profile,
    matrix: ReleaseMatrix,
    allow_prerelease: bool,
    chosen: Verdict | None,
    commands: tuple[str, ...],
) -> dict[str, Any] | None:
    """x64 Python on a Windows ARM64 machine: the native ARM64 commands come
    first (the validated setup); what works in this emulated interpreter second."""
    if not (profile.windows and profile.native_arch == "arm64" and profile.arch == "x86_64"):
        return None
    from .resolver import evaluate_release

    native_choice = native = None
    # Same Python version first, then the versions the wheels cover best.
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
        native_choice = next(
            (
                v
                for v in (
                    evaluate_release(native, r, matrix, allow_prerelease) for r in matrix.releases
                )
                if v.fits
            ),
            None,
        )
        if native_choice is not None:
            break
    here = (
        f"this x64 Python runs under emulation; onnxruntime-qnn {chosen.version} can work in it "
        "(ARM64X QNN libraries), but native ARM64 Python is the validated setup"
        if chosen
        else "this x64 Python runs under emulation and no onnxruntime-qnn release can reach "
        "the NPU from it"
    )
    native_commands: list[str] = []
    if native_choice is not None and native is not None:
        major, minor = native.python
        native_commands = [
            f"winget install --exact --id Python.Python.{major}.{minor} --architecture arm64",
            *install_commands(native, native_choice),
        ]
    return {
        "verdict": here,
        "native_arm64": {
            "version": str(native_choice.version) if native_choice else None,
            "python": f"{native.python[0]}.{native.python[1]}"
            if native_choice and native
            else None,
            "commands": native_commands,
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
        launcher = (
            native_arm64_launcher(candidate.python) if arm64 else ("py", f"-V:{major}.{minor}")
        )
        get = f"winget install --exact --id Python.Python.{major}.{minor}" + (
            " --architecture arm64" if arm64 else ""
        )
        return (get, *install_commands(replace(candidate, launcher=launcher), verdict))
    return install_commands(replace(candidate, launcher=(f"python{major}.{minor}",)), verdict)
