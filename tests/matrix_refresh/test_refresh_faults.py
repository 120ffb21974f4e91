"""The refresh tool when servers misbehave and wheels are broken: every fault is
that file's (or that member's) recorded error, never a traceback.
"""

from __future__ import annotations

import hashlib
import io
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.index_server import IndexServer, Served, serve
from helpers.pe_builder import MACHINE_AMD64, MACHINE_ARM64, build_pe
from helpers.refresh_tool import refresh
from helpers.refresh_wheels import (
    PROJECT,
    QNN_BUILD,
    Run,
    big_pe,
    lib,
    make_wheel,
    noise,
    package_info,
    qnn_strings,
    run_tool,
    served,
    wheel_1x_amd64,
    wheel_1x_arm64,
    wheel_2x_arm64,
    wheel_2x_linux,
)

from qnndoctor.target.binaries.pe import read_pe, read_pe_bytes, read_pe_header

__all__ = ["run_tool"]  # the fixture, shared from helpers.refresh_wheels


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


# ---------------------------------------------------------------- reading PE headers


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
