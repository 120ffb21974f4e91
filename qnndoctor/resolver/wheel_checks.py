"""Judging a wheel's QNN libraries for an emulated x64 process on Windows on ARM."""

from __future__ import annotations

from ..facts.libkinds import QNN_RUNTIME
from ..matrixdata.releases import WheelFile


def under_x64_emulation(file: WheelFile) -> str | None:
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


def on_x64_machine(file: WheelFile) -> str | None:
    """Why a native x64 Windows PC cannot load this wheel's QNN libraries, or
    None when one of its folders holds x64 (AMD64) ones (or it has none).

    The win_amd64 wheels of 1.19 to 2.0 (except 1.22.2) are built for x64
    Python on Windows on ARM: QNN libraries with ARM64 headers (ARM64X), an
    ARM64EC ``onnxruntime_providers_shared.dll``. Windows on an x64 processor
    runs no ARM64 code, so nothing loads them there.
    """
    headers = {
        folder.path: folder.header["backend_htp"]
        for folder in file.folders
        if folder.header.get("backend_htp") is not None
    }
    if not headers or "AMD64" in headers.values():
        return None
    where = ", ".join(f"{path or '.'} ({machine})" for path, machine in sorted(headers.items()))
    return (
        f"its QNN libraries are Windows on ARM builds ({where}; ARM64 code): an x64 processor "
        "cannot load them, only x64 Python on a Windows on ARM PC can"
    )
