"""What-if mode: ``qnndoctor recommend --platform ... --python-version X.Y``.

Answers for a machine you are not on, without probing anything: a support
engineer, the docs, an installer that builds for other machines. The
profile is built from the arguments alone; the resolver is the same one
``check`` uses.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from ..facts.socs import SocLookupError, find_soc, find_socs
from ..matrixdata import Matrix
from .commands import windows_launcher
from .recommend import Profile, recommend

PLATFORMS = {
    "win_arm64": ("windows", "arm64"),
    "win_amd64": ("windows", "x86_64"),
    "linux_aarch64": ("linux", "arm64"),
    "linux_x86_64": ("linux", "x86_64"),
}


OLDEST_PYTHON = (3, 8)


class WhatIfError(ValueError):
    """The what-if arguments do not describe a machine."""


@dataclass(frozen=True)
class WhatIf:
    """The machine a what-if question describes: ``recommend --platform ...``'s
    values (``what_if``'s arguments), as text the way a person writes them."""

    platform: str
    python_version: str
    soc: str | None = None
    htp_arch: str | None = None
    native_arch: str | None = None
    npu_driver: str | None = None
    glibc: str | None = None
    qnn_sdk: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The values given (a report's ``target.what_if``)."""
        return {key: value for key, value in asdict(self).items() if value is not None}


def _python(text: str) -> tuple[tuple[int, int], bool]:
    match = re.fullmatch(r"(\d)\.(\d{1,2})(t?)", text.strip())
    if match is None:
        raise WhatIfError(
            f"--python-version {text!r}: write it as 3.12 (or 3.13t for free-threaded)"
        )
    python = (int(match.group(1)), int(match.group(2)))
    if python[0] != 3 or python < OLDEST_PYTHON:
        raise WhatIfError(
            f"--python-version {text.strip()}: qnndoctor answers for CPython 3.8 and newer "
            "(no onnxruntime-qnn wheel was ever published for older versions)"
        )
    return python, bool(match.group(3))


def _htp_arch(text: str) -> int:
    match = re.fullmatch(r"[vV]?(\d{2})", text.strip())
    if match is None:
        raise WhatIfError(f"--htp-arch {text!r}: write it as v73 (the Hexagon version)")
    return int(match.group(1))


def _glibc(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    match = re.fullmatch(r"(\d+)\.(\d+)", text.strip())
    if match is None:
        raise WhatIfError(f"--glibc {text!r}: write it as 2.35")
    return int(match.group(1)), int(match.group(2))


def _launcher(
    os_name: str, arch: str, python: tuple[int, int], free_threaded: bool
) -> tuple[str, ...]:
    """How a person starts that Python there: the Windows launcher (same words
    in PowerShell and cmd) or ``python3.12`` elsewhere."""
    if os_name == "windows":
        return windows_launcher(python, arch, free_threaded)
    return (f"python{python[0]}.{python[1]}{'t' if free_threaded else ''}",)


def _chip(machine: WhatIf, matrix: Matrix) -> tuple[int | None, str | None, list[str]]:
    """The HTP arch --soc or --htp-arch gives, where it came from, and notes.
    A SoC the table does not know is answered without the chip, with a caveat."""
    if machine.soc is not None and not machine.soc.strip():
        raise WhatIfError(
            "--soc '': give the chip's name (e.g. 'Snapdragon X Elite', 'SM8650'), or leave "
            "--soc out to answer without the chip"
        )
    if machine.soc:
        try:
            soc = find_soc(machine.soc, matrix.socs)
        except SocLookupError as exc:
            if re.fullmatch(r"\s*\d+\s*", machine.soc) or find_socs(machine.soc, matrix.socs):
                raise WhatIfError(
                    f"--soc: {exc}; or give its Hexagon version with --htp-arch vNN"
                ) from exc
            return (
                None,
                None,
                [
                    f"--soc {machine.soc!r} is not in qnndoctor's SoC table, so this answer is "
                    "for no particular chip: the release may lack the HTP stub for its "
                    "Hexagon version. Give the chip's Hexagon version with --htp-arch vNN "
                    "(e.g. --htp-arch v73 for a Snapdragon X Elite) for an answer that "
                    "checks it."
                ],
            )
        names = ", ".join(soc.marketing_names) or "no marketing name"
        return soc.htp_arch, f"--soc {machine.soc}: {soc.part} ({names}) in the SoC table", []
    if machine.htp_arch:
        return _htp_arch(machine.htp_arch), f"--htp-arch {machine.htp_arch}", []
    return None, None, []


def profile_for(machine: WhatIf, matrix: Matrix) -> Profile:
    """The target the values describe. Raises ``WhatIfError``."""
    os_name, arch = PLATFORMS[machine.platform]
    python, free_threaded = _python(machine.python_version)
    notes: list[str] = []
    if machine.native_arch == "arm64" and machine.platform == "linux_x86_64":
        raise WhatIfError(
            "--native-arch arm64 with linux_x86_64: x64 Linux programs do not run on ARM64 "
            "Linux by default; use --platform linux_aarch64"
        )
    native = "arm64" if machine.native_arch == "arm64" else arch
    htp_arch, htp_source, chip_notes = _chip(machine, matrix)
    notes += chip_notes
    if machine.platform == "win_amd64" and native != "arm64" and (machine.soc or htp_arch):
        # A Snapdragon (a Hexagon NPU) is an ARM64 machine: x64 Python there is emulated.
        native = "arm64"
        notes.append(
            f"{'--soc' if machine.soc else '--htp-arch'} names a Snapdragon NPU, so the machine "
            "is a Windows on ARM64 PC: a win_amd64 (x64) Python runs there under emulation "
            "(answered as with --native-arch arm64)"
        )
    # x64 Python on a Windows ARM64 machine runs under emulation.
    emulated = machine.platform == "win_amd64" and native == "arm64"
    if machine.platform == "win_amd64" and not emulated:
        notes.append(
            "answered for an x64 PC, which has no NPU (onnxruntime-qnn prepares models there); "
            "for x64 Python on a Snapdragon PC give --soc NAME or --native-arch arm64"
        )
    if machine.glibc is not None and os_name != "linux":
        raise WhatIfError(
            f"--glibc {machine.glibc}: glibc is the C library of Linux; {machine.platform} has none "
            "(leave --glibc out)"
        )
    glibc = _glibc(machine.glibc)
    if os_name == "linux" and glibc is None:
        notes.append(
            "glibc version not given (--glibc): assumed new enough for every manylinux wheel"
        )
    if machine.npu_driver and not re.fullmatch(r"\d+(\.\d+){1,3}", machine.npu_driver.strip()):
        raise WhatIfError(f"--npu-driver {machine.npu_driver!r}: write it as 30.0.140.1000")
    if machine.npu_driver and os_name != "windows":
        notes.append(
            f"NPU driver {machine.npu_driver}: only the Windows NPU driver's version is known to "
            "qnndoctor; it is not used here"
        )
    system_qnn = system_source = None
    if machine.qnn_sdk:
        from packaging.version import InvalidVersion, Version

        try:
            system_qnn = Version(machine.qnn_sdk)
        except InvalidVersion as exc:
            raise WhatIfError(f"--qnn-sdk {machine.qnn_sdk!r}: not a version") from exc
        system_source = "--qnn-sdk"
    return Profile(
        python=python,
        free_threaded=free_threaded,
        os=os_name,
        arch=arch,
        native_arch=native,
        emulated=emulated,
        glibc=glibc,
        htp_arch=htp_arch,
        htp_arch_source=htp_source,
        system_qnn=system_qnn,
        system_qnn_source=system_source,
        python_exe=" ".join(_launcher(os_name, arch, python, free_threaded)),
        notes=tuple(notes),
        launcher=_launcher(os_name, arch, python, free_threaded),
        npu_driver=machine.npu_driver,
        npu_driver_source="--npu-driver" if machine.npu_driver else None,
    )


def what_if(
    platform: str,
    python_version: str,
    *,
    soc: str | None = None,
    htp_arch: str | None = None,
    native_arch: str | None = None,
    npu_driver: str | None = None,
    glibc: str | None = None,
    qnn_sdk: str | None = None,
    allow_prerelease: bool = False,
    matrix: Matrix | None = None,
) -> dict[str, Any]:
    """The recommendation for a machine described by these values (the
    Python API of ``qnndoctor recommend --platform ...``, for installers).
    Raises ``WhatIfError`` for values that describe no machine."""
    from ..matrixdata import load

    if platform not in PLATFORMS:
        raise WhatIfError(f"platform {platform!r}: one of {', '.join(PLATFORMS)}")
    if soc and htp_arch:
        raise WhatIfError("give soc or htp_arch, not both")
    if native_arch not in (None, "arm64"):
        raise WhatIfError(f"native_arch {native_arch!r}: only 'arm64' (x64 Python on ARM64)")
    machine = WhatIf(
        platform=platform,
        python_version=python_version,
        soc=soc,
        htp_arch=htp_arch,
        native_arch=native_arch,
        npu_driver=npu_driver,
        glibc=glibc,
        qnn_sdk=qnn_sdk,
    )
    used = matrix if matrix is not None else load()
    return recommend(
        profile_for(machine, used), used.releases, allow_prerelease=allow_prerelease
    ).to_json()
