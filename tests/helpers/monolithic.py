"""A wheel shaped like onnxruntime-qnn 1.x for Windows (the monolithic
layout), built from real PE files made by ``pe_builder``."""

from __future__ import annotations

from pathlib import Path

from helpers.pe_builder import MACHINE_ARM64, build_pe
from helpers.wheels import build_wheel

QNN_STRINGS = {
    "FileVersion": "2.37.1.0",
    "ProductVersion": "2.37.1.250807093845_124904",
    "ProductName": "Qualcomm AI Stack",
}


def monolithic_qnn_wheel(out: Path, version: str = "1.23.2", machine: int = MACHINE_ARM64) -> Path:
    """A wheel shaped like onnxruntime-qnn 1.x for Windows: the whole
    ``onnxruntime`` package with QNN DLLs in ``onnxruntime/capi``."""
    dll = build_pe(machine, version=(2, 37, 1, 0), strings=QNN_STRINGS)
    files = {
        "onnxruntime/__init__.py": b"__version__ = '%s'\n" % version.encode(),
        "onnxruntime/capi/__init__.py": b"",
        "onnxruntime/capi/_pybind_state.py": b"from .onnxruntime_pybind11_state import *\n",
        "onnxruntime/capi/onnxruntime_pybind11_state.pyd": build_pe(
            machine, strings={"FileDescription": "qnn 1.x pybind"}
        ),
        "onnxruntime/capi/onnxruntime.dll": build_pe(machine, version=(1, 23, 25, 1021)),
        "onnxruntime/capi/onnxruntime_providers_qnn.dll": build_pe(
            machine, version=(1, 23, 25, 1021)
        ),
        "onnxruntime/capi/QnnHtp.dll": dll,
        "onnxruntime/capi/QnnSystem.dll": dll,
        "onnxruntime/capi/QnnHtpPrepare.dll": dll,
        "onnxruntime/capi/QnnHtpV73Stub.dll": dll,
        "onnxruntime/capi/libQnnHtpV73Skel.so": b"\x7fELF\x01\x01\x01"
        + b"\x00" * 11
        + b"\xa4\x00"
        + b"\x00" * 40,
        "onnxruntime/capi/libqnnhtpv73.cat": b"catalog",
    }
    return build_wheel(out, "onnxruntime-qnn", version, files, requires=["numpy>=1.21.6"])
