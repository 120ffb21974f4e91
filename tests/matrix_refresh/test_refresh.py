"""The release-matrix refresh tool (matrix/refresh/) against a real local index
server: what it records, its cache, entry points, the committed matrix and
the guard against shrinking it. Faults: test_refresh_faults.py; the index and
pip's configuration: test_refresh_index.py.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import struct
import subprocess
import sys
import zipfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import pytest
from helpers.index_server import Served, serve
from helpers.pe_builder import MACHINE_ARM64, build_pe
from helpers.refresh_tool import refresh
from helpers.refresh_wheels import (
    PROJECT,
    QNN_BUILD,
    REPO,
    Run,
    big_pe,
    lib,
    make_wheel,
    package_info,
    qnn_strings,
    run_tool,
    served,
    validate,
    wheel_1x_amd64,
    wheel_1x_arm64,
    wheel_2x_amd64,
    wheel_2x_arm64,
    wheel_2x_linux,
)

__all__ = ["run_tool"]  # the fixture, shared from helpers.refresh_wheels


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
