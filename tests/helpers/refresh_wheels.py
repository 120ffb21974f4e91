"""Wheels for the refresh tool's tests, built with zipfile in the shapes the
real ones have: 1.x keeps everything in ``onnxruntime/capi``; 2.x in
``onnxruntime_qnn`` (win_amd64: in ``libs/amd64`` and ``libs/arm64ec``) with
``build_and_package_info.py``. Big members are incompressible, so reading by
range is visibly cheaper than downloading. Also the ``run_tool`` fixture (the
tool's CLI in-process against a real local index server) and its result.
"""

from __future__ import annotations

import io
import json
import random
import struct
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from helpers.index_server import IndexServer, Served
from helpers.pe_builder import MACHINE_AMD64, MACHINE_ARM64, build_pe
from helpers.refresh_tool import refresh

PROJECT = "onnxruntime-qnn"
SCHEMA = json.loads(
    resources.files("qnndoctor.matrix").joinpath("releases.schema.json").read_text("utf-8")
)
REPO = Path(__file__).resolve().parents[2]

EM_X86_64 = 62
EM_AARCH64 = 183
EM_HEXAGON = 164

QNN_BUILD = "2.37.1.250807093845_124904"


def qnn_strings(product: str = QNN_BUILD) -> dict[str, str]:
    return {
        "CompanyName": "Qualcomm Technologies, Inc.",
        "FileVersion": product.split("_")[0].rsplit(".", 1)[0] + ".0",
        "ProductName": "Qualcomm AI Stack",
        "ProductVersion": product,
    }


def noise(size: int, seed: int) -> bytes:
    """Incompressible bytes: deflate cannot shrink them."""
    return random.Random(seed).randbytes(size)


def big_pe(machine: int, size: int, seed: int) -> bytes:
    """A DLL whose header is real and whose body is large and incompressible."""
    return build_pe(machine) + noise(size, seed)


def elf(machine: int, size: int = 0, seed: int = 0) -> bytes:
    """A 64-bit little-endian ELF shared object header (+ body)."""
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    header = ident + struct.pack("<HHIQQQIHHHHHH", 3, machine, 1, 0, 64, 0, 0, 64, 56, 0, 64, 0, 0)
    assert len(header) == 64
    return header + noise(size, seed)


def metadata(version: str, requires: Sequence[str], requires_python: str | None) -> bytes:
    lines = ["Metadata-Version: 2.1", f"Name: {PROJECT}", f"Version: {version}"]
    if requires_python:
        lines.append(f"Requires-Python: {requires_python}")
    lines += [f"Requires-Dist: {r}" for r in requires]
    return ("\n".join(lines) + "\n\nlong description\n").encode()


def make_wheel(
    version: str,
    tag: str,
    members: Mapping[str, bytes],
    *,
    requires: Sequence[str] = ("numpy>=1.21.6",),
    requires_python: str | None = ">=3.10",
    compression: int = zipfile.ZIP_DEFLATED,
    member_compression: Mapping[str, int] | None = None,
) -> tuple[str, bytes]:
    """(filename, bytes) of a wheel with METADATA, WHEEL, RECORD and ``members``."""
    dist = PROJECT.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            method = (member_compression or {}).get(name, compression)
            archive.writestr(zipfile.ZipInfo(name, (2025, 1, 2, 3, 4, 6)), data, method)
        archive.writestr(f"{info}/METADATA", metadata(version, requires, requires_python))
        archive.writestr(f"{info}/WHEEL", f"Wheel-Version: 1.0\nTag: {tag}\n")
        archive.writestr(f"{info}/RECORD", "")
    return f"{dist}-{version}-{tag}.whl", buffer.getvalue()


def wheel_1x_arm64(version: str = "1.22.0", big: int = 3_000_000) -> tuple[str, bytes]:
    capi = "onnxruntime/capi/"
    return make_wheel(
        version,
        "cp312-cp312-win_arm64",
        {
            capi + "__init__.py": b"",
            capi + "QnnHtp.dll": big_pe(MACHINE_ARM64, big, 1),
            capi + "QnnHtpPrepare.dll": big_pe(MACHINE_ARM64, big, 2),
            capi + "QnnHtpV73Stub.dll": build_pe(
                MACHINE_ARM64, version=(2, 37, 1, 0), strings=qnn_strings(), chpe_arm64x=True
            ),
            capi + "QnnSystem.dll": build_pe(
                MACHINE_ARM64, version=(2, 37, 1, 0), strings=qnn_strings()
            )
            + noise(200_000, 3),
            capi + "libQnnHtpV73Skel.so": elf(EM_HEXAGON, 100_000, 4),
            capi + "libqnnhtpv73.cat": b"catalog" * 100,
            capi + "onnxruntime.dll": big_pe(MACHINE_ARM64, big, 5),
            capi + "onnxruntime_providers_qnn.dll": big_pe(MACHINE_ARM64, 400_000, 6),
            capi + "onnxruntime_providers_shared.dll": build_pe(MACHINE_ARM64),
            capi + "onnxruntime_pybind11_state.pyd": big_pe(MACHINE_ARM64, big, 7),
        },
        requires=("numpy>=1.21.6", "coloredlogs", "protobuf"),
    )


def wheel_1x_amd64(version: str = "1.22.0", big: int = 3_000_000) -> tuple[str, bytes]:
    capi = "onnxruntime/capi/"
    return make_wheel(
        version,
        "cp312-cp312-win_amd64",
        {
            capi + "QnnHtp.dll": big_pe(MACHINE_ARM64, big, 11),
            capi + "QnnHtpV73Stub.dll": build_pe(
                MACHINE_ARM64, version=(2, 37, 1, 0), strings=qnn_strings(), chpe_arm64x=True
            ),
            capi + "onnxruntime.dll": big_pe(MACHINE_AMD64, big, 12),
            capi + "onnxruntime_providers_shared.dll": build_pe(MACHINE_AMD64, chpe_arm64x=True),
            capi + "onnxruntime_pybind11_state.pyd": big_pe(MACHINE_AMD64, big, 13),
        },
        requires=("numpy>=1.21.6", "coloredlogs", "protobuf"),
    )


def package_info(version: str, qnn: str) -> bytes:
    return (
        f"package_name = 'onnxruntime-qnn'\n__version__ = '{version}'\nqnn_version = '{qnn}'\n"
    ).encode()


def wheel_2x_arm64(
    version: str = "2.7.0", qnn: str = "2.37.1", product: str = QNN_BUILD, big: int = 3_000_000
) -> tuple[str, bytes]:
    base = "onnxruntime_qnn/"
    return make_wheel(
        version,
        "cp312-cp312-win_arm64",
        {
            base + "__init__.py": b"",
            base + "build_and_package_info.py": package_info(version, qnn),
            base + "QnnHtp.dll": big_pe(MACHINE_ARM64, big, 21),
            base + "QnnHtpV68Stub.dll": build_pe(
                MACHINE_ARM64, version=(2, 37, 1, 0), strings=qnn_strings(product)
            ),
            base + "QnnHtpV73Stub.dll": build_pe(
                MACHINE_ARM64, version=(2, 37, 1, 0), strings=qnn_strings(product)
            )
            + noise(50_000, 22),
            base + "libQnnHtpV68Skel.so": elf(EM_HEXAGON, 50_000, 23),
            base + "libQnnHtpV73Skel.so": elf(EM_HEXAGON, 50_000, 24),
            base + "libqnnhtpv73.cat": b"catalog" * 100,
            base + "onnxruntime_providers_qnn.dll": big_pe(MACHINE_ARM64, big, 25),
        },
        requires=("numpy>=1.21.6", "onnxruntime>=1.24.2"),
        requires_python=">=3.11",
    )


def wheel_2x_amd64(version: str = "2.7.0", big: int = 3_000_000) -> tuple[str, bytes]:
    amd, ec = "onnxruntime_qnn/libs/amd64/", "onnxruntime_qnn/libs/arm64ec/"
    return make_wheel(
        version,
        "cp312-cp312-win_amd64",
        {
            "onnxruntime_qnn/__init__.py": b"",
            "onnxruntime_qnn/build_and_package_info.py": package_info(version, "2.37.1"),
            amd + "QnnHtp.dll": big_pe(MACHINE_AMD64, big, 31),
            amd + "QnnSaver.dll": build_pe(
                MACHINE_AMD64, version=(2, 37, 1, 0), strings=qnn_strings()
            ),
            ec + "QnnHtp.dll": big_pe(MACHINE_ARM64, big, 32),
            ec + "QnnHtpV73Stub.dll": build_pe(
                MACHINE_ARM64, version=(2, 37, 1, 0), strings=qnn_strings(), chpe_arm64x=True
            ),
            ec + "onnxruntime_providers_qnn.dll": big_pe(MACHINE_AMD64, 300_000, 33),
        },
        requires=("numpy>=1.21.6", "onnxruntime>=1.24.2"),
        requires_python=">=3.11",
    )


def wheel_2x_linux(version: str = "2.7.0", big: int = 3_000_000) -> tuple[str, bytes]:
    base = "onnxruntime_qnn/"
    return make_wheel(
        version,
        "cp312-cp312-manylinux_2_34_aarch64",
        {
            base + "__init__.py": b"",
            base + "build_and_package_info.py": package_info(version, "2.37.1"),
            base + "libQnnHtp.so": elf(EM_AARCH64, big, 41),
            base + "libQnnHtpV73Stub.so": elf(EM_AARCH64, 100_000, 42),
            base + "libQnnHtpV73Skel.so": elf(EM_HEXAGON, big, 43),
            base + "libQnnSystem.so": elf(EM_AARCH64, 200_000, 44),
            base + "libonnxruntime_providers_qnn.so": elf(EM_AARCH64, big, 45),
            "onnxruntime_qnn.libs/libc++-71bc274c.so.1.0": elf(EM_AARCH64, 1000, 46),
        },
        requires=("numpy>=1.21.6", "onnxruntime>=1.24.2"),
        requires_python=None,
    )


def served(wheel: tuple[str, bytes], **kwargs: Any) -> Served:
    return Served(wheel[0], wheel[1], **kwargs)


@dataclass(frozen=True)
class Run:
    code: int
    err: str
    document: dict[str, Any] | None

    def files(self) -> dict[str, dict[str, Any]]:
        assert self.document is not None
        return {f["filename"]: f for r in self.document["releases"] for f in r["files"]}

    def release(self, version: str) -> dict[str, Any]:
        assert self.document is not None
        return next(r for r in self.document["releases"] if r["version"] == version)


def validate(document: Mapping[str, Any]) -> None:
    import jsonschema

    jsonschema.Draft202012Validator(SCHEMA).validate(document)


@pytest.fixture
def run_tool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[Callable[..., Run]]:
    """Run the CLI in-process: a fixed output and cache unless told otherwise."""

    def run(server: IndexServer | None, *args: str, cache: str = "cache") -> Run:
        output = tmp_path / "releases.json"
        argv = ["--output", str(output), "--cache-dir", str(tmp_path / cache), *args]
        if server is not None:
            argv = ["--index-url", server.url, *argv]
        capsys.readouterr()
        code = refresh.main(argv)
        err = capsys.readouterr().err
        assert "Traceback" not in err, err  # clear errors only, whatever goes wrong
        document = (
            json.loads(output.read_text("utf-8"))
            if output.exists() and code in (0, refresh.EXIT_WHEELS)
            else None
        )
        if document is not None:
            validate(document)
        return Run(code, err, document)

    yield run


def lib(record: Mapping[str, Any], path: str) -> dict[str, Any]:
    found = [entry for entry in record["libraries"] if entry["path"] == path]
    assert len(found) == 1, (path, [e["path"] for e in record["libraries"]])
    result: dict[str, Any] = found[0]
    return result
