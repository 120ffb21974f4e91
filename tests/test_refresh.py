"""The release-matrix refresh tool against a real local index server.

Wheels are built here (zipfile) in the shapes the real ones have: 1.x keeps
everything in ``onnxruntime/capi``; 2.x in ``onnxruntime_qnn`` (win_amd64: in
``libs/amd64`` and ``libs/arm64ec``) with ``build_and_package_info.py``. Big
members are incompressible, so reading by range is visibly cheaper than
downloading.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import stat
import struct
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from helpers.index_server import IndexServer, Served, serve
from helpers.pe_builder import MACHINE_AMD64, MACHINE_ARM64, build_pe

if TYPE_CHECKING:  # mypy sees matrix/ as the top-level package ``matrix`` (mypy_path ".")
    from matrix import refresh
else:  # the maintainers' tool is not in the wheel: loaded from the repository
    from helpers.refresh_tool import load_refresh_tool

    refresh = load_refresh_tool()

from qnndoctor.binaries.pe import read_pe, read_pe_bytes, read_pe_header

PROJECT = "onnxruntime-qnn"
SCHEMA = json.loads(
    resources.files("qnndoctor.matrix").joinpath("releases.schema.json").read_text("utf-8")
)
REPO = Path(__file__).resolve().parent.parent

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


# ---------------------------------------------------------------- happy path


def test_records_read_by_range(run_tool: Callable[..., Run]) -> None:
    wheels = [
        wheel_1x_arm64(),
        wheel_1x_amd64(),
        wheel_2x_arm64(),
        wheel_2x_amd64(),
        wheel_2x_linux(),
    ]
    with serve(PROJECT, [served(w) for w in wheels]) as server:
        result = run_tool(server)
        seen = server.seen()
    assert result.code == 0, result.err
    files = result.files()
    assert set(files) == {w[0] for w in wheels}
    for record in files.values():
        assert record["error"] is None
        assert record["fetched_whole"] is False
        assert record["sha256"] == hashlib.sha256(dict(wheels)[record["filename"]]).hexdigest()

    one = files[wheels[0][0]]
    assert one["platform"] == "win_arm64"
    assert (one["python_tags"], one["abi_tags"], one["platform_tags"]) == (
        ["cp312"],
        ["cp312"],
        ["win_arm64"],
    )
    assert one["library_folders"] == ["onnxruntime/capi"]
    assert one["requires_dist"] == ["coloredlogs", "numpy>=1.21.6", "protobuf"]
    assert one["requires_python"] == ">=3.10"
    assert one["requires_python_source"] == "metadata"
    assert one["qnn_version"] == {
        "version": "2.37.1",
        "build": QNN_BUILD,
        "evidence": ["PE VERSIONINFO ProductVersion of onnxruntime/capi/QnnHtpV73Stub.dll"],
    }
    stub = lib(one, "onnxruntime/capi/QnnHtpV73Stub.dll")
    assert stub["kind"] == "htp_stub"
    assert stub["hexagon_version"] == 73
    assert (stub["machine"], stub["machine_source"]) == ("ARM64X", "pe-load-config")
    assert stub["product_version"] == QNN_BUILD
    assert stub["file_version"] == "2.37.1.0"
    htp = lib(one, "onnxruntime/capi/QnnHtp.dll")
    assert (htp["kind"], htp["machine"], htp["machine_source"]) == (
        "backend_htp",
        "ARM64",
        "pe-header",
    )
    assert htp["size"] == len(big_pe(MACHINE_ARM64, 3_000_000, 1))
    skel = lib(one, "onnxruntime/capi/libQnnHtpV73Skel.so")
    assert (skel["kind"], skel["machine"], skel["machine_source"], skel["hexagon_version"]) == (
        "htp_skel",
        "hexagon",
        "elf-header",
        73,
    )
    catalog = lib(one, "onnxruntime/capi/libqnnhtpv73.cat")
    assert (catalog["kind"], catalog["machine"], catalog["machine_source"]) == (
        "signed_catalog",
        None,
        None,
    )
    assert lib(one, "onnxruntime/capi/onnxruntime_pybind11_state.pyd")["kind"] == "ort_pybind"
    shared = lib(one, "onnxruntime/capi/onnxruntime_providers_shared.dll")
    assert (shared["machine"], shared["machine_source"]) == ("ARM64", "pe-load-config")
    assert one["stub_hexagon_versions"] == [73]
    assert one["skel_hexagon_versions"] == [73]
    assert one["signed_catalogs"] == ["libqnnhtpv73.cat"]
    assert one["qnn_libraries_present"] == [
        "backend_htp",
        "htp_prepare",
        "htp_skel",
        "htp_stub",
        "signed_catalog",
        "system",
    ]

    amd = files[wheels[1][0]]
    assert amd["platform"] == "win_amd64"
    shared = lib(amd, "onnxruntime/capi/onnxruntime_providers_shared.dll")
    assert (shared["machine"], shared["machine_source"]) == ("ARM64EC", "pe-load-config")
    assert lib(amd, "onnxruntime/capi/onnxruntime.dll")["machine"] == "AMD64"

    two = files[wheels[2][0]]
    assert two["library_folders"] == ["onnxruntime_qnn"]
    assert two["requires_dist"] == ["numpy>=1.21.6", "onnxruntime>=1.24.2"]
    assert two["stub_hexagon_versions"] == [68, 73]
    assert two["qnn_version"] == {
        "version": "2.37.1",
        "build": QNN_BUILD,
        "evidence": [
            "qnn_version '2.37.1' in onnxruntime_qnn/build_and_package_info.py",
            "PE VERSIONINFO ProductVersion of onnxruntime_qnn/QnnHtpV68Stub.dll",
        ],
    }

    two_amd = files[wheels[3][0]]
    assert two_amd["library_folders"] == [
        "onnxruntime_qnn/libs/amd64",
        "onnxruntime_qnn/libs/arm64ec",
    ]
    assert two_amd["qnn_version"]["evidence"] == [
        "qnn_version '2.37.1' in onnxruntime_qnn/build_and_package_info.py",
        "PE VERSIONINFO ProductVersion of onnxruntime_qnn/libs/amd64/QnnSaver.dll",
        "PE VERSIONINFO ProductVersion of onnxruntime_qnn/libs/arm64ec/QnnHtpV73Stub.dll",
    ]
    assert lib(two_amd, "onnxruntime_qnn/libs/amd64/QnnSaver.dll")["machine"] == "AMD64"
    assert lib(two_amd, "onnxruntime_qnn/libs/arm64ec/QnnHtpV73Stub.dll")["machine"] == "ARM64X"
    assert lib(two_amd, "onnxruntime_qnn/libs/arm64ec/QnnHtp.dll")["machine"] == "ARM64"

    linux = files[wheels[4][0]]
    assert linux["platform"] == "linux_aarch64"
    assert linux["requires_python"] is None and linux["requires_python_source"] is None
    assert linux["library_folders"] == ["onnxruntime_qnn"]  # not onnxruntime_qnn.libs
    assert lib(linux, "onnxruntime_qnn/libQnnHtp.so")["machine"] == "aarch64"
    assert lib(linux, "onnxruntime_qnn/libQnnHtpV73Skel.so")["machine"] == "hexagon"
    assert lib(linux, "onnxruntime_qnn/libonnxruntime_providers_qnn.so")["machine_source"] == (
        "elf-header"
    )
    assert linux["qnn_version"] == {
        "version": "2.37.1",
        "build": None,
        "evidence": ["qnn_version '2.37.1' in onnxruntime_qnn/build_and_package_info.py"],
    }

    release = result.release("2.7.0")
    assert release["era"] == "plugin-2.x" and release["prerelease"] is False
    assert release["requires_dist_differs_between_files"] is False
    assert result.release("1.22.0")["era"] == "monolithic-1.x"

    # Reading by range is cheap: a small fraction of the wheels' bytes.
    assert result.document is not None
    provenance = result.document["provenance"]
    assert provenance["index_url"] == server.url
    assert provenance["index_source"] == "--index-url"
    assert provenance["project"] == PROJECT
    assert provenance["files"] == 5
    assert provenance["bytes_total"] == sum(len(w[1]) for w in wheels)
    assert provenance["bytes_read"] < 0.06 * provenance["bytes_total"]
    assert all(s.range for s in seen if s.path.startswith("/files/"))
    assert seen[0].accept == "application/vnd.pypi.simple.v1+json"
    assert "5 files: 0 from cache, 5 read by range, 0 fetched whole, 0 with errors" in result.err


def test_warm_cache_costs_only_the_index_page(run_tool: Callable[..., Run]) -> None:
    with serve(PROJECT, [served(wheel_1x_arm64()), served(wheel_2x_linux())]) as server:
        first = run_tool(server)
        server.reset()
        second = run_tool(server)
        assert [s.path for s in server.seen()] == [f"/simple/{PROJECT}/"]
    assert first.code == second.code == 0
    assert "2 from cache" in second.err and "1 requests" in second.err
    assert first.document is not None and second.document is not None
    first.document["provenance"].pop("generated")
    second.document["provenance"].pop("generated")
    assert first.document == second.document


def test_previous_matrix_counts_as_cache(run_tool: Callable[..., Run], tmp_path: Path) -> None:
    with serve(PROJECT, [served(wheel_2x_arm64())]) as server:
        assert run_tool(server, cache="cache-a").code == 0
        server.reset()
        # A fresh cache folder: the previous output (the default --previous) answers.
        again = run_tool(server, cache="cache-b")
        assert [s.path for s in server.seen()] == [f"/simple/{PROJECT}/"]
        server.reset()
        # --previous pointing elsewhere: that file is the cache.
        other = tmp_path / "other.json"
        other.write_text((tmp_path / "releases.json").read_text("utf-8"), "utf-8")
        third = run_tool(server, "--previous", str(other), cache="cache-c")
        assert [s.path for s in server.seen()] == [f"/simple/{PROJECT}/"]
    assert again.code == third.code == 0
    record = next(iter(again.files().values()))
    assert record["qnn_version"]["version"] == "2.37.1"
    assert record["requires_python_source"] == "metadata"


def test_only_new_files_are_read(run_tool: Callable[..., Run]) -> None:
    with serve(PROJECT, [served(wheel_2x_arm64())]) as server:
        assert run_tool(server).code == 0
        new = wheel_2x_arm64("2.8.0", qnn="2.38.0", product="2.38.0.251001_1")
        server.publish(served(new))
        server.reset()
        result = run_tool(server)
        paths = {s.path for s in server.file_requests()}
    assert paths == {f"/files/{new[0]}"}
    assert result.code == 0 and result.document is not None
    assert [r["version"] for r in result.document["releases"]] == ["2.7.0", "2.8.0"]
    assert "1 from cache, 1 read by range" in result.err


def test_limit_keeps_the_newest_releases(run_tool: Callable[..., Run]) -> None:
    wheels = [wheel_1x_arm64("1.20.2.dev20250213004"), wheel_1x_arm64("1.17.3"), wheel_2x_arm64()]
    with serve(PROJECT, [served(w) for w in wheels]) as server:
        result = run_tool(server, "--limit", "2")
    assert result.code == 0
    assert result.document is not None
    assert [r["version"] for r in result.document["releases"]] == [
        "1.20.2.dev20250213004",
        "2.7.0",
    ]
    dev = result.release("1.20.2.dev20250213004")
    assert dev["prerelease"] is True and dev["era"] == "monolithic-1.x"
    assert result.document["provenance"]["limit"] == 2


def test_index_details_flow_into_records(run_tool: Callable[..., Run]) -> None:
    no_rp = make_wheel("1.22.0", "cp311-cp311-win_arm64", {}, requires_python=None)
    other_deps = make_wheel("1.22.0", "cp312-cp312-win_arm64", {}, requires=("numpy<2",))
    mac = make_wheel("1.22.0", "cp312-cp312-macosx_11_0_arm64", {})
    files = [
        served(no_rp, requires_python=">=3.9", yanked="broken build", absolute_url=True),
        served(other_deps),
        served(mac),
        Served("onnxruntime_qnn-1.22.0.tar.gz", b"not a wheel"),
    ]
    with serve(PROJECT, files) as server:
        result = run_tool(server)
    assert result.code == 0, result.err
    records = result.files()
    first = records[no_rp[0]]
    assert first["requires_python"] == ">=3.9"
    assert first["requires_python_source"] == "index"
    assert first["yanked"] is True and first["yanked_reason"] == "broken build"
    assert "url" not in first  # filename + sha256 identify it; no host in the matrix
    assert records[mac[0]]["platform"] == "macosx_11_0_arm64"
    assert records[mac[0]]["libraries"] == [] and records[mac[0]]["qnn_version"] is None
    assert (records[mac[0]]["qnn_version_note"] or "").startswith("no evidence")
    release = result.release("1.22.0")
    assert release["requires_dist_differs_between_files"] is True
    assert release["yanked"] is False
    assert result.document is not None
    assert result.document["provenance"]["skipped_files"] == [
        {"filename": "onnxruntime_qnn-1.22.0.tar.gz", "reason": "not a wheel"}
    ]


def test_index_without_sizes(run_tool: Callable[..., Run]) -> None:
    wheel = wheel_2x_linux()
    with serve(PROJECT, [served(wheel, list_size=False)]) as server:
        result = run_tool(server)
        first = server.file_requests()[0]
    assert result.code == 0
    assert first.range == f"bytes=-{65536 + 22}"  # a suffix range tells the size
    record = result.files()[wheel[0]]
    assert record["error"] is None and record["size"] == len(wheel[1])
    assert lib(record, "onnxruntime_qnn/libQnnHtp.so")["machine"] == "aarch64"


def test_output_is_written_like_any_file(run_tool: Callable[..., Run], tmp_path: Path) -> None:
    with serve(PROJECT, [served(wheel_2x_linux(big=10_000))]) as server:
        assert run_tool(server).code == 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "releases.json").stat().st_mode) == 0o666 & ~umask
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_stored_members_and_zip64_end_records(run_tool: Callable[..., Run]) -> None:
    stored = make_wheel(
        "2.7.0",
        "cp312-cp312-win_arm64",
        {
            "onnxruntime_qnn/build_and_package_info.py": package_info("2.7.0", "2.37.1"),
            "onnxruntime_qnn/QnnHtp.dll": big_pe(MACHINE_ARM64, 500_000, 51),
            "onnxruntime_qnn/QnnHtpV73Stub.dll": build_pe(
                MACHINE_ARM64, version=(2, 37, 1, 0), strings=qnn_strings()
            ),
        },
        compression=zipfile.ZIP_STORED,
    )
    zip64 = (
        wheel_2x_linux()[0].replace("cp312-cp312", "cp313-cp313"),
        to_zip64(wheel_2x_linux()[1]),
    )
    with zipfile.ZipFile(io.BytesIO(zip64[1])) as check:  # still a valid zip for Python
        assert check.testzip() is None
    with serve(PROJECT, [served(stored), served(zip64)]) as server:
        result = run_tool(server)
    assert result.code == 0
    records = result.files()
    assert records[stored[0]]["error"] is None
    assert lib(records[stored[0]], "onnxruntime_qnn/QnnHtp.dll")["machine"] == "ARM64"
    assert records[stored[0]]["qnn_version"]["build"] == QNN_BUILD
    assert records[zip64[0]]["error"] is None
    assert lib(records[zip64[0]], "onnxruntime_qnn/libQnnHtp.so")["machine"] == "aarch64"


def to_zip64(data: bytes) -> bytes:
    """Rewrite a zip's end records the zip64 way (as big wheels have them)."""
    eocd = data.rfind(b"PK\x05\x06")
    _, _, _, count, cd_size, cd_offset, _ = struct.unpack_from("<4H2IH", data, eocd + 4)
    record = struct.pack(
        "<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, cd_size, cd_offset
    )
    locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, eocd, 1)
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return data[:eocd] + record + locator + end


# ---------------------------------------------------------------- servers that misbehave


def test_server_ignoring_ranges_gives_one_whole_download(run_tool: Callable[..., Run]) -> None:
    whole, ranged = wheel_2x_arm64(), wheel_2x_linux()
    with serve(PROJECT, [served(whole, mode="ignore-range"), served(ranged)]) as server:
        result = run_tool(server)
        requests = [s for s in server.file_requests() if s.path == f"/files/{whole[0]}"]
    assert result.code == 0
    assert len(requests) == 1
    record = result.files()[whole[0]]
    assert record["fetched_whole"] is True and record["error"] is None
    assert record["bytes_read"] == len(whole[1])
    assert record["qnn_version"]["build"] == QNN_BUILD
    assert lib(record, "onnxruntime_qnn/QnnHtp.dll")["machine"] == "ARM64"
    assert result.files()[ranged[0]]["fetched_whole"] is False
    assert f"warning: {whole[0]}: the server ignored the Range request" in result.err
    assert "sha256 verified" in result.err
    assert "1 read by range, 1 fetched whole" in result.err


@pytest.mark.parametrize("mode", ["refuse-416", "refuse-501"])
def test_server_refusing_ranges_gives_one_whole_download(
    run_tool: Callable[..., Run], mode: str
) -> None:
    wheel = wheel_1x_amd64()
    with serve(PROJECT, [served(wheel, mode=mode)]) as server:
        result = run_tool(server)
        requests = server.file_requests()
    assert result.code == 0
    assert [bool(s.range) for s in requests] == [True, False]
    record = result.files()[wheel[0]]
    assert record["fetched_whole"] is True and record["error"] is None
    assert record["qnn_version"]["version"] == "2.37.1"
    assert f"the server refused the Range request (HTTP {mode[-3:]})" in result.err


def test_wrong_sha256_is_an_error_for_that_file_only(run_tool: Callable[..., Run]) -> None:
    bad, good = wheel_2x_arm64(), wheel_2x_linux()
    with serve(
        PROJECT, [served(bad, mode="ignore-range", sha256="0" * 64), served(good)]
    ) as server:
        result = run_tool(server)
    assert result.code == refresh.EXIT_WHEELS  # written, but an error in the exit code
    record = result.files()[bad[0]]
    assert record["error"] is not None and record["error"].startswith("sha256 mismatch")
    assert hashlib.sha256(bad[1]).hexdigest() in record["error"]
    assert record["libraries"] == [] and record["qnn_version"] is None
    assert result.files()[good[0]]["error"] is None
    assert f"error in {bad[0]}: sha256 mismatch" in result.err
    assert "1 with errors" in result.err


def test_errors_are_not_cached(run_tool: Callable[..., Run]) -> None:
    bad = wheel_2x_arm64()
    with serve(PROJECT, [served(bad, mode="truncate")]) as server:
        first = run_tool(server)
        server.publish(served(bad))  # the server got fixed
        second = run_tool(server)
    assert first.files()[bad[0]]["error"] is not None
    assert second.files()[bad[0]]["error"] is None


@pytest.mark.parametrize(
    ("mode", "message"),
    [("truncate", "truncated answer"), ("wrong-range", "Content-Range mismatch")],
)
def test_short_or_misplaced_answers(run_tool: Callable[..., Run], mode: str, message: str) -> None:
    bad, good = wheel_1x_arm64(), wheel_2x_linux()
    with serve(PROJECT, [served(bad, mode=mode), served(good)]) as server:
        result = run_tool(server)
    assert result.code == refresh.EXIT_WHEELS  # written, but an error in the exit code
    assert message in (result.files()[bad[0]]["error"] or "")
    assert result.files()[good[0]]["error"] is None


def test_transient_5xx_is_retried(tmp_path: Path) -> None:
    wheel = wheel_2x_linux()
    with serve(PROJECT, [served(wheel, fail_first=2)]) as server:
        result = refresh.refresh(
            options(server, tmp_path, backoff=0.01), refresh.Log(io.StringIO(), False)
        )
        statuses = len(server.file_requests())
    record = result.document["releases"][0]["files"][0]
    assert record["error"] is None
    assert result.stats.requests == 1 + statuses  # the index page + every attempt
    assert record["requests"] == statuses


def test_persistent_5xx_gives_up(tmp_path: Path) -> None:
    wheel = wheel_2x_linux()
    with serve(PROJECT, [served(wheel, fail_first=100)]) as server:
        result = refresh.refresh(
            options(server, tmp_path, backoff=0.01), refresh.Log(io.StringIO(), False)
        )
        attempts = len(server.file_requests())
    record = result.document["releases"][0]["files"][0]
    assert attempts == 3
    assert "failed after 3 attempts: HTTP 503" in (record["error"] or "")


def options(server: IndexServer, tmp_path: Path, **kwargs: Any) -> refresh.Options:
    return refresh.Options(
        index=refresh.Setting(server.url, "test"),
        cache_dir=tmp_path / "cache",
        **kwargs,
    )


# ---------------------------------------------------------------- broken wheels


def test_corrupt_zips(run_tool: Callable[..., Run]) -> None:
    good = wheel_2x_linux()
    no_eocd = ("onnxruntime_qnn-2.7.0-cp311-cp311-win_arm64.whl", noise(300_000, 61))
    name, data = wheel_2x_arm64()
    eocd = data.rfind(b"PK\x05\x06")
    moved = bytearray(data)
    struct.pack_into("<I", moved, eocd + 16, len(data))  # CD offset past the end record
    bad_cd = (name.replace("cp312-cp312", "cp313-cp313"), bytes(moved))
    cd_offset = struct.unpack_from("<I", data, eocd + 16)[0]
    scribbled = bytearray(data)
    scribbled[cd_offset : cd_offset + 4] = b"XXXX"
    bad_entry = (name.replace("cp312-cp312", "cp314-cp314"), bytes(scribbled))
    files = [served(good), served(no_eocd), served(bad_cd), served(bad_entry)]
    with serve(PROJECT, files) as server:
        result = run_tool(server)
    assert result.code == refresh.EXIT_WHEELS  # written, but an error in the exit code
    records = result.files()
    assert records[good[0]]["error"] is None
    # zipfile's own words, behind "bad zip" / "bad central directory".
    assert records[no_eocd[0]]["error"] == "bad zip: File is not a zip file"
    assert records[bad_cd[0]]["error"] == (
        "bad central directory: member onnxruntime_qnn/__init__.py lies outside the archive data"
    )
    assert records[bad_entry[0]]["error"] == "bad zip: Bad magic number for central directory"
    for name in (no_eocd[0], bad_cd[0], bad_entry[0]):
        assert records[name]["libraries"] == [] and records[name]["qnn_version"] is None
        assert f"error in {name}: bad " in result.err
    assert "Traceback" not in result.err


def test_truncated_and_tiny_wheels_are_recorded_errors(run_tool: Callable[..., Run]) -> None:
    """A wheel cut short (an interrupted upload or mirror sync), a few bytes, or
    nothing at all: each is that file's error, the others are read."""
    good = wheel_2x_linux()
    name, data = wheel_2x_arm64()
    half = (name.replace("cp312-cp312", "cp311-cp311"), data[: len(data) // 2])
    # Cut just before the end record: the directory is there, its end is not.
    no_end = (name.replace("cp312-cp312", "cp313-cp313"), data[:-22])
    tiny = (name.replace("cp312-cp312", "cp314-cp314"), b"PK\x05\x06")
    empty = (name.replace("cp312-cp312", "cp310-cp310"), b"")
    with serve(PROJECT, [served(w) for w in (good, half, no_end, tiny, empty)]) as server:
        result = run_tool(server)
    assert result.code == refresh.EXIT_WHEELS
    records = result.files()
    assert records[good[0]]["error"] is None
    for broken in (half, no_end, tiny, empty):
        assert records[broken[0]]["error"] == "bad zip: File is not a zip file", broken[0]
    assert "Traceback" not in result.err
    assert "4 with errors" in result.err


def test_damaged_members_are_that_library_s_error(run_tool: Callable[..., Run]) -> None:
    """A destroyed local header (METADATA) and a library whose bytes are no
    PE although they start like one: errors on those entries, the rest read."""
    base = "onnxruntime_qnn/"
    name, data = make_wheel(
        "2.7.0",
        "cp312-cp312-win_arm64",
        {
            base + "build_and_package_info.py": package_info("2.7.0", "2.37.1"),
            base + "QnnHtp.dll": big_pe(MACHINE_ARM64, 100_000, 81),
            base + "QnnHtpPrepare.dll": b"MZ" + noise(50_000, 82),
        },
    )
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        info = archive.getinfo("onnxruntime_qnn-2.7.0.dist-info/METADATA")
    damaged = bytearray(data)
    damaged[info.header_offset : info.header_offset + 4] = b"XXXX"
    with serve(PROJECT, [Served(name, bytes(damaged))]) as server:
        result = run_tool(server)
    assert result.code == refresh.EXIT_WHEELS
    record = result.files()[name]
    assert record["requires_dist_source"] != "metadata"
    assert "METADATA: bad member data: Bad magic number for file header" in record["error"]
    prepare = lib(record, base + "QnnHtpPrepare.dll")
    assert prepare["machine"] is None and "PEFormatError" in prepare["error"]
    assert lib(record, base + "QnnHtp.dll")["machine"] == "ARM64"
    assert record["qnn_version"]["version"] == "2.37.1"
    assert "Traceback" not in result.err


def test_bad_member_data_and_unsupported_methods(run_tool: Callable[..., Run]) -> None:
    base = "onnxruntime_qnn/"
    name, data = make_wheel(
        "2.7.0",
        "cp312-cp312-win_arm64",
        {
            base + "build_and_package_info.py": package_info("2.7.0", "2.37.1"),
            base + "QnnHtpV73Stub.dll": build_pe(
                MACHINE_ARM64, version=(2, 37, 1, 0), strings=qnn_strings()
            )
            + noise(5000, 71),
            base + "QnnSystem.dll": build_pe(MACHINE_ARM64) + noise(20000, 72),
            base + "QnnHtp.dll": big_pe(MACHINE_ARM64, 100_000, 73),
        },
        member_compression={base + "QnnSystem.dll": zipfile.ZIP_BZIP2},
    )
    # Flip bytes inside the stub's data: its CRC no longer matches.
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        info = archive.getinfo(base + "QnnHtpV73Stub.dll")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    corrupt = bytearray(data)
    corrupt[start + info.compress_size - 40 : start + info.compress_size - 30] = bytes(10)
    with serve(PROJECT, [Served(name, bytes(corrupt))]) as server:
        result = run_tool(server)
    assert result.code == refresh.EXIT_WHEELS  # written, but an error in the exit code
    record = result.files()[name]
    stub = lib(record, base + "QnnHtpV73Stub.dll")
    assert stub["error"] is not None and stub["error"].startswith("bad member data")
    system = lib(record, base + "QnnSystem.dll")
    assert system["error"] == "compression method 12 is not supported (only stored and deflated)"
    assert lib(record, base + "QnnHtp.dll")["machine"] == "ARM64"
    assert record["error"] is not None and record["error"].startswith("member errors: ")
    assert base + "QnnSystem.dll" in record["error"]
    # build_and_package_info.py still names the version; no PE evidence though.
    assert record["qnn_version"]["evidence"] == [
        f"qnn_version '2.37.1' in {base}build_and_package_info.py"
    ]


def test_disagreeing_versions_give_null_and_a_note(run_tool: Callable[..., Run]) -> None:
    wheel = wheel_2x_arm64(qnn="2.38.0")
    with serve(PROJECT, [served(wheel)]) as server:
        result = run_tool(server)
    record = result.files()[wheel[0]]
    assert record["qnn_version"] is None
    note = record["qnn_version_note"] or ""
    assert note.startswith("sources disagree: ")
    assert "'2.38.0'" in note and QNN_BUILD in note


def test_decide_qnn_version_rules() -> None:
    decide = refresh.decide_qnn_version
    version, note = decide(None, [])
    assert version is None and (note or "").startswith("no evidence")
    version, note = decide(("x/build_and_package_info.py", "main"), [])
    assert version is None and "not a version number" in (note or "")
    version, note = decide(None, [("a.dll", "2.1.0.1_1"), ("b.dll", "2.1.0.1_2")])
    assert version is not None and version.version == "2.1.0" and version.build is None
    assert "build strings differ" in (note or "")
    version, note = decide(None, [("a.dll", "2.1.0.1_1"), ("b.dll", "2.2.0.1_1")])
    assert version is None and "a.dll" in (note or "") and "b.dll" in (note or "")


# ---------------------------------------------------------------- the index itself


@pytest.mark.parametrize(
    ("page", "message"),
    [
        ("html", "did not answer with the JSON simple API"),
        ("garbage", "malformed JSON"),
    ],
)
def test_unreadable_index_exits_1(run_tool: Callable[..., Run], page: str, message: str) -> None:
    with serve(PROJECT, page=page) as server:
        result = run_tool(server)
    assert result.code == 1
    assert message in result.err
    assert "Traceback" not in result.err


def test_unknown_project_and_unreachable_index_exit_1(run_tool: Callable[..., Run]) -> None:
    with serve(PROJECT) as server:
        missing = run_tool(server, "--project", "no-such-project")
        root = server.url
    assert missing.code == 1 and "'no-such-project' not found" in missing.err
    gone = run_tool(None, "--index-url", root, "--timeout", "5")  # the server has stopped
    assert gone.code == 1
    assert "could not read the index" in gone.err and "Traceback" not in gone.err


@pytest.mark.parametrize(
    "argv",
    [
        ["--limit", "0"],
        ["--limit", "many"],
        ["--timeout", "-1"],
        ["--index-url", "ftp://127.0.0.1/simple/"],
        ["--index-url", "not a url"],
        ["--index-url", "http://[bad/simple/"],
        ["--index-url", "http://127.0.0.1:port/simple/"],
        ["--index-url", "http://127.0.0.1:1/simple/", "--project", ""],
        ["--index-url", "http://127.0.0.1:1/simple/", "--project", "../etc"],
        ["--bogus"],
    ],
)
def test_usage_errors_exit_2(
    argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = refresh.main([*argv, "--output", str(tmp_path / "out.json")])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err and err.strip()
    assert not (tmp_path / "out.json").exists()


def test_output_that_cannot_be_written_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = refresh.main(["--index-url", "http://127.0.0.1:1/simple/", "--output", str(tmp_path)])
    assert code == 2
    assert "it is a folder" in capsys.readouterr().err


def test_damaged_previous_matrix_and_cache_are_ignored(
    run_tool: Callable[..., Run], tmp_path: Path
) -> None:
    wheel = wheel_2x_linux(big=10_000)
    sha = hashlib.sha256(wheel[1]).hexdigest()
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / f"{sha}-{wheel[0]}.json").write_text("[1, 2", "utf-8")
    damaged = [
        "{not json",
        "[]",
        json.dumps({"provenance": {"cache_version": refresh.CACHE_VERSION}, "releases": 7}),
        json.dumps(
            {
                "provenance": {"cache_version": refresh.CACHE_VERSION},
                "releases": [{"files": [{"error": None, "sha256": sha, "filename": wheel[0]}]}, 3],
            }
        ),
    ]
    with serve(PROJECT, [served(wheel)]) as server:
        for text in damaged:
            previous = tmp_path / "previous.json"
            previous.write_text(text, "utf-8")
            (cache / f"{sha}-{wheel[0]}.json").write_text('{"cache_version": 1}', "utf-8")
            result = run_tool(server, "--previous", str(previous))
            assert result.code == 0, (text, result.err)
            record = result.files()[wheel[0]]
            assert record["error"] is None
            assert lib(record, "onnxruntime_qnn/libQnnHtp.so")["machine"] == "aarch64"


# ---------------------------------------------------------------- pip configuration


def test_index_url_precedence(tmp_path: Path) -> None:
    low = tmp_path / "global.conf"
    low.write_text("[global]\nindex-url = http://127.0.0.1:1/low/\n", "utf-8")
    high = tmp_path / "env.conf"
    high.write_text(
        "[global]\nindex_url = http://127.0.0.1:1/global/\n"
        "[install]\nindex-url = http://127.0.0.1:1/install/\n",
        "utf-8",
    )
    files = [low, tmp_path / "missing.conf", high]
    resolve = refresh.resolve_index_url
    assert resolve("http://127.0.0.1:1/cli/", {"PIP_INDEX_URL": "http://x/"}, files).value == (
        "http://127.0.0.1:1/cli/"
    )
    from_env = resolve(None, {"PIP_INDEX_URL": "http://127.0.0.1:1/env/"}, files)
    assert (from_env.value, from_env.source) == ("http://127.0.0.1:1/env/", "PIP_INDEX_URL")
    from_file = resolve(None, {}, files)
    assert from_file.value == "http://127.0.0.1:1/install/"
    assert from_file.source == f"{high} [install] index-url"
    assert resolve(None, {}, [low]).value == "http://127.0.0.1:1/low/"
    default = resolve(None, {}, [])
    assert default.source == "pip's built-in default"
    from pip._internal.models.index import PyPI

    assert default.value == PyPI.simple_url


def test_config_files_are_the_ones_pip_reads(tmp_path: Path) -> None:
    from pip._internal import configuration

    # pip 26 renamed the `kinds` namespace to the `Kind` enum.
    kinds: Any = getattr(configuration, "kinds", None) or getattr(configuration, "Kind")  # noqa: B009
    pip_files = configuration.get_configuration_files()
    expected = [
        *pip_files[kinds.GLOBAL],
        *pip_files[kinds.USER],
        *pip_files[kinds.SITE],
    ]
    environ = {k: v for k, v in os.environ.items() if k != "PIP_CONFIG_FILE"}
    assert [str(p) for p in refresh.pip_config_files(environ)] == expected
    custom = tmp_path / "custom.conf"
    custom.write_text("[global]\n", "utf-8")
    with_env = refresh.pip_config_files({**environ, "PIP_CONFIG_FILE": str(custom)})
    assert with_env[-1] == custom
    assert [str(p) for p in with_env[:-1]] == [*pip_files[kinds.GLOBAL], *pip_files[kinds.SITE]]
    assert refresh.pip_config_files({"PIP_CONFIG_FILE": os.devnull}) == []


def test_environment_index_url_is_used_by_the_cli(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve(PROJECT, [served(wheel_2x_linux())]) as server:
        monkeypatch.setenv("PIP_INDEX_URL", server.url)
        code = refresh.main(
            ["--output", str(tmp_path / "r.json"), "--cache-dir", str(tmp_path / "c")]
        )
        assert len(server.file_requests()) > 0
    err = capsys.readouterr().err
    assert code == 0, err
    assert "(from PIP_INDEX_URL)" in err


def test_passwords_stay_out_of_the_matrix() -> None:
    assert refresh.public_url("https://me:secret@127.0.0.1:8080/simple/") == (
        "https://me:<redacted>@127.0.0.1:8080/simple/"
    )
    assert refresh.public_url("http://127.0.0.1/simple/") == "http://127.0.0.1/simple/"


# ---------------------------------------------------------------- entry points and helpers


def test_runs_as_module_and_as_script(tmp_path: Path) -> None:
    """As documented: ``python -m matrix.refresh`` from the repository root, and
    the folder run as a script from anywhere."""
    tool = REPO / "matrix" / "refresh"
    if not (tool / "__main__.py").is_file():
        pytest.skip("the refresh tool is only in a source checkout")
    wheel = wheel_2x_linux(big=10_000)
    with serve(PROJECT, [served(wheel)]) as server:
        argv = ["--index-url", server.url, "--cache-dir", str(tmp_path / "c")]
        runs = {
            "m.json": ([sys.executable, "-m", "matrix.refresh"], REPO),
            "s.json": ([sys.executable, str(tool)], tmp_path),
        }
        for output, (command, cwd) in runs.items():
            done = subprocess.run(
                [*command, *argv, "--output", str(tmp_path / output)],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
            )
            assert done.returncode == 0, (command, done.stderr)
            document = json.loads((tmp_path / output).read_text("utf-8"))
            validate(document)
            assert document["releases"][0]["version"] == "2.7.0"


def test_bench_reports_the_fraction_read(tmp_path: Path) -> None:
    bench = REPO / "bench" / "bench_refresh.py"
    if not bench.is_file():
        pytest.skip("bench/ is only in a source checkout")
    wheels = [served(wheel_1x_arm64()), served(wheel_2x_linux())]
    with serve(PROJECT, wheels) as server:
        done = subprocess.run(
            [sys.executable, str(bench), "--index-url", server.url, "--target", "10"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert "wheels             2 (0 with errors)" in done.stdout
    assert "fraction read" in done.stdout and "(target <= 10.0 %)" in done.stdout


def test_platform_buckets() -> None:
    bucket = refresh.platform_bucket
    assert bucket(["win_arm64"]) == "win_arm64"
    assert bucket(["manylinux_2_27_x86_64", "manylinux_2_28_x86_64"]) == "linux_x86_64"
    assert bucket(["manylinux2014_aarch64"]) == "linux_aarch64"
    assert bucket(["musllinux_1_2_aarch64"]) == "linux_aarch64"
    assert bucket(["linux_armv7l"]) == "linux_armv7l"
    assert bucket(["any"]) == "any"


def test_read_pe_bytes_matches_read_pe(tmp_path: Path) -> None:
    image = build_pe(MACHINE_AMD64, version=(2, 37, 1, 0), strings=qnn_strings(), chpe_arm64x=True)
    path = tmp_path / "QnnSystem.dll"
    path.write_bytes(image)
    assert read_pe_bytes(image) == read_pe(str(path))
    assert read_pe_bytes(image)["machine"] == "ARM64EC"
    truncated = read_pe_bytes(image[:0x300])
    assert "truncated: 768 bytes in memory" in truncated["error"]
    assert "PEFormatError" in read_pe_bytes(b"MZ nonsense")["error"]


def test_read_pe_header_needs_only_the_headers() -> None:
    """The refresh tool reads a DLL's machine from its first KiB (inflated out
    of a wheel) with the same pefile reader as installed DLLs."""
    image = build_pe(MACHINE_ARM64, version=(2, 37, 1, 0), strings=qnn_strings())
    assert read_pe_header(image[:1024]) == {"machine_code": MACHINE_ARM64, "machine": "ARM64"}
    assert read_pe_header(build_pe(MACHINE_AMD64)[:1024])["machine"] == "AMD64"
    assert "PEFormatError" in read_pe_header(image[:0x50])["error"]  # cut inside the headers
    assert "PEFormatError" in read_pe_header(b"MZ" + bytes(100))["error"]


# ---------------------------------------------------------------- the committed matrix


def test_committed_matrix_is_valid_and_complete() -> None:
    text = resources.files("qnndoctor.matrix").joinpath("releases.json").read_text("utf-8")
    document = json.loads(text)
    validate(document)
    assert text == refresh.dump(document)  # the tool's own deterministic form
    provenance = document["provenance"]
    assert provenance["project"] == PROJECT and provenance["limit"] is None
    releases = document["releases"]
    versions = [r["version"] for r in releases]
    assert "1.17.3" in versions and "2.7.0" in versions
    from packaging.version import Version

    assert versions == sorted(versions, key=Version)
    files = [f for r in releases for f in r["files"]]
    assert provenance["files"] == len(files)
    assert provenance["bytes_total"] == sum(f["size"] for f in files)
    for record in files:
        assert record["platform"]
        assert record["sha256"] and len(record["sha256"]) == 64
        assert record["filename"].split("-")[1] in versions
    for release in releases:
        assert {f["filename"].split("-")[1] for f in release["files"]} == {release["version"]}


# ---------------------------------------------------------------- exit codes and shrink guard


@pytest.mark.parametrize(("mode", "message"), [("missing", "HTTP 404"), ("hang", "")])
def test_a_wheel_that_404s_or_hangs_is_an_error_in_the_exit_code(
    run_tool: Callable[..., Run], mode: str, message: str
) -> None:
    bad, good = wheel_2x_arm64(), wheel_2x_linux()
    with serve(PROJECT, [served(bad, mode=mode), served(good)]) as server:
        result = run_tool(server, "--timeout", "0.5")
    assert result.code == refresh.EXIT_WHEELS
    assert "1 wheel(s) could not be read" in result.err
    error = result.files()[bad[0]]["error"]
    assert error is not None and message in error
    assert result.files()[good[0]]["error"] is None


def test_an_index_listing_fewer_releases_is_refused_unless_allowed(
    run_tool: Callable[..., Run], tmp_path: Path
) -> None:
    wheels = [wheel_1x_arm64("1.17.3"), wheel_1x_arm64(), wheel_2x_arm64(), wheel_2x_linux()]
    with serve(PROJECT, [served(w) for w in wheels]) as server:
        assert run_tool(server).code == 0
    before = (tmp_path / "releases.json").read_bytes()
    # The index now answers with one release of the three (a partial mirror).
    with serve(PROJECT, [served(wheels[2])]) as server:
        refused = run_tool(server)
        assert refused.code == refresh.EXIT_SHRINK
        assert "would drop 3 release(s) or wheel(s)" in refused.err
        assert "release 1.17.3" in refused.err and "Nothing written" in refused.err
        assert (tmp_path / "releases.json").read_bytes() == before
        allowed = run_tool(server, "--allow-shrink")
    assert allowed.code == 0
    assert allowed.document is not None
    assert [r["version"] for r in allowed.document["releases"]] == ["2.7.0"]
    assert "dropped (--allow-shrink): release 1.17.3" in allowed.err


def test_dropping_one_wheel_of_a_release_is_a_shrink_too(
    run_tool: Callable[..., Run], tmp_path: Path
) -> None:
    kept, lost = wheel_2x_arm64(), wheel_2x_linux()
    with serve(PROJECT, [served(kept), served(lost)]) as server:
        assert run_tool(server).code == 0
    with serve(PROJECT, [served(kept)]) as server:
        refused = run_tool(server)
    assert refused.code == refresh.EXIT_SHRINK
    assert f"2.7.0: {lost[0]}" in refused.err
