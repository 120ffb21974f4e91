"""What the resolver tells a user besides the version: the exact commands
(for the target's shell and interpreter) and notes about the machine."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from .. import shell
from .compat_rules import LINUX_X86_SIMULATOR, NPU_DRIVER_COMPAT

if TYPE_CHECKING:
    from .profile import Profile
    from .verdict import Verdict


def install_commands(
    profile: Profile, verdict: Verdict, *, find_links: str | None = None
) -> tuple[str, ...]:
    """Uninstall what conflicts, then install the exact version with the target's pip;
    ``find_links``: the wheelhouse the version was found in (bisect's), searched too."""
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
    # A plugin release needs plain onnxruntime beside it (other flavours were removed above).
    companion_missing = verdict.era == "plugin-2.x" and not any(
        canonicalize_name(name) == "onnxruntime" for name, _version, _modules in profile.installed
    )
    if (
        installed_already
        and not remove
        and not companion_missing
        and _companion_satisfied(profile, verdict)
    ):
        return ()  # nothing to do; the report says it is already installed
    where = ("--find-links", find_links) if find_links else ()
    if profile.externally_managed and not profile.launcher:
        return in_new_venv(profile, verdict, where)
    calls: list[tuple[str, ...]] = []
    if remove:
        calls.append(("uninstall", "-y", *remove))
        calls += _restore_shared_files(profile, remove)
    install = [f"onnxruntime-qnn=={verdict.version}"]
    if verdict.companion_pin:
        install.append(verdict.companion_pin)
    elif companion_missing and installed_already:
        # pip would install it as a dependency anyway; named, the command says why it is there.
        install.append("onnxruntime")
    calls.append(("install", *where, *install))
    return pip_commands(profile, calls)


def in_new_venv(
    profile: Profile, verdict: Verdict, where: tuple[str, ...] = ()
) -> tuple[str, ...]:
    """For a Python that pip refuses to change (PEP 668, the system's): a new
    venv made by it, in the current folder, and the release installed there
    by the venv's own pip (nothing of the system's to uninstall)."""
    install = [f"onnxruntime-qnn=={verdict.version}"]
    if verdict.companion_pin:
        install.append(verdict.companion_pin)
    return (
        shell.new_venv_command(profile.python_exe, profile.windows),
        shell.pip_command(
            shell.new_venv_python(profile.windows), profile.windows, "install", *where, *install
        ),
    )


def _restore_shared_files(profile: Profile, removed: list[str]) -> list[tuple[str, ...]]:
    """Uninstalling one owner of the ``onnxruntime`` module deletes the files
    it shares with the owner that stays (pip removes every path in its
    RECORD), and pip then calls the survivor "already satisfied": reinstall
    the survivor, same version, so its files are whole again."""
    owners = [(n, v) for n, v, modules in profile.installed if "onnxruntime" in modules]
    if not any(name in removed for name, _version in owners):
        return []
    kept = [f"{name}=={version}" for name, version in owners if name not in removed]
    return [("install", "--force-reinstall", "--no-deps", *kept)] if kept else []


def _companion_satisfied(profile: Profile, verdict: Verdict) -> bool:
    """No companion pin, or the installed onnxruntime already meets it."""
    if not verdict.companion_pin:
        return True
    try:
        pin = Requirement(verdict.companion_pin)
    except InvalidRequirement:
        return False
    return any(
        canonicalize_name(name) == canonicalize_name(pin.name)
        and pin.specifier.contains(version, prereleases=True)
        for name, version, _modules in profile.installed
    )


def pip_commands(profile: Profile, calls: list[tuple[str, ...]]) -> tuple[str, ...]:
    """pip run by the target's interpreter, typed the same in PowerShell and
    cmd on Windows: PowerShell cannot start a quoted path without ``&``,
    which cmd rejects, so a path that needs quotes is entered with ``pushd``
    (both shells) and run as ``.\\python.exe``. A target without pip (a uv
    or ``--without-pip`` venv) first gets the pip bundled with its Python."""
    if profile.launcher:  # another interpreter than the one probed: its pip is not known
        return tuple(
            " ".join(shell.quote(a, profile.windows) for a in (*profile.launcher, "-m", "pip", *c))
            for c in calls
        )
    exe = profile.python_exe
    program = exe
    folder = ""
    if profile.windows and shell.quote(exe, True) != exe:
        folder, _sep, name = exe.rpartition("\\")
        if folder:
            program = ".\\" + name
    commands = tuple(shell.pip_command(program, profile.windows, *c) for c in calls)
    if profile.pip == "absent":
        commands = shell.with_pip_bootstrap(commands, program, profile.windows)
    return (f'pushd "{folder}"', *commands, "popd") if folder else commands


def native_arm64_launcher(python: tuple[int, int]) -> tuple[str, ...]:
    """The Python launcher's way to start native ARM64 CPython X.Y: the same
    words in PowerShell and cmd."""
    return windows_launcher(python, "arm64")


def windows_launcher(
    python: tuple[int, int], arch: str | None, free_threaded: bool = False
) -> tuple[str, ...]:
    """The Python launcher's words for CPython X.Y (the same in PowerShell and
    cmd). ``-V:TAG`` came with the launcher of Python 3.11; a machine whose
    newest Python is 3.8 to 3.10 has an older launcher, which knows only
    ``-3.10`` (the newer one reads it the same way). ARM64 CPython builds
    (tag ``3.12-arm64``) and free-threaded ones (``3.13t``) are 3.11+ only."""
    version = f"{python[0]}.{python[1]}{'t' if free_threaded else ''}"
    if arch == "arm64":
        return ("py", f"-V:{version}-arm64")
    if python < (3, 11) and not free_threaded:
        return ("py", f"-{version}")
    return ("py", f"-V:{version}")


def situation_notes(profile: Profile, chosen: Verdict | None) -> tuple[str, ...]:
    """What the user should know about this machine, whatever is installed:
    a system QNN SDK (a shadowing risk, never a reason to rule out), the
    Linux x86-64 simulator."""
    notes: list[str] = []
    if profile.system_qnn_source:
        bundled = chosen.file.qnn_version if chosen and chosen.file else None
        sdk = f"QNN SDK {profile.system_qnn}" if profile.system_qnn else "A QNN SDK"
        notes.append(
            f"{sdk} is installed ({profile.system_qnn_source}). It does not limit which "
            "onnxruntime-qnn you can use: onnxruntime-qnn loads the QNN libraries it ships"
            + (f" (QNN {bundled})" if bundled else "")
            + ", and the Windows NPU driver is documented as compatible with older and newer "
            f"QNN versions ({NPU_DRIVER_COMPAT}). The risk is shadowing: if that SDK's library "
            "folder is on "
            + ("PATH" if profile.windows else "LD_LIBRARY_PATH")
            + ", the loader can take the SDK's QNN libraries instead of the bundled ones "
            "(a version mix: 'Unable to find a valid interface' or a crash). Keep it off "
            "that variable for the process that runs onnxruntime-qnn; `qnndoctor check` "
            "tells whether it is on it and gives the exact command."
        )
    if profile.os == "linux" and profile.arch == "x86_64":
        notes.append(
            "On Linux x86-64 there is no NPU: onnxruntime-qnn 2.3.0 and newer run the HTP "
            "backend in a simulator there (real sessions and context-binary compilation, "
            f"for preparing models; no NPU speed) ({LINUX_X86_SIMULATOR})."
        )
    driver_note = _npu_driver_note(profile)
    if driver_note:
        notes.append(driver_note)
    return tuple(notes)


# The only published NPU driver minimum seen for a QNN execution provider is
# Windows ML's (for its own QNN EP, not the onnxruntime-qnn wheels): a note,
# never a rule.
WINML_QNN_MIN_DRIVER = "30.0.140.0"
WINML_QNN_EPS = (
    "https://learn.microsoft.com/windows/ai/new-windows-ml/supported-execution-providers"
)


def _npu_driver_note(profile: Profile) -> str | None:
    if not profile.npu_driver or not profile.windows:
        return None
    match = re.search(r"(\d+(?:\.\d+){1,3})\s*$", profile.npu_driver)
    if match is None:
        return f"NPU driver {profile.npu_driver!r}: not a version number qnndoctor can compare"
    found = tuple(int(p) for p in match.group(1).split("."))
    minimum = tuple(int(p) for p in WINML_QNN_MIN_DRIVER.split("."))
    if found >= minimum:
        return None
    return (
        f"NPU driver {match.group(1)} ({profile.npu_driver_source}) is older than "
        f"{WINML_QNN_MIN_DRIVER}, the minimum Windows ML lists for its QNN execution provider "
        f"({WINML_QNN_EPS}). onnxruntime-qnn documents no minimum, so this rules nothing out; "
        "if sessions fail to create the device, update the NPU driver first."
    )
