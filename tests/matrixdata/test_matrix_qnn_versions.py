"""Every release x platform row of the committed matrix knows its bundled
QNN version, and the refresh tool reads it from the QNN build string the
libraries carry when they have no VERSIONINFO (onnxruntime-qnn 1.18.x)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from helpers.index_server import serve
from helpers.pe_builder import MACHINE_AMD64, MACHINE_ARM64, build_pe
from helpers.refresh_tool import refresh
from helpers.refresh_wheels import PROJECT, Run, make_wheel, noise, run_tool, served, wheel_2x_arm64

from qnndoctor._layout import package_dir
from qnndoctor.facts.libkinds import QNN_RUNTIME

__all__ = ["run_tool"]  # the fixture, shared from helpers.refresh_wheels

MATRIX_DIR = package_dir("matrix")
assert MATRIX_DIR is not None
RECORDS = [
    (release["version"], record)
    for release in json.loads((MATRIX_DIR / "releases.json").read_text("utf-8"))["releases"]
    for record in release["files"]
]


@pytest.mark.parametrize(("version", "record"), RECORDS, ids=[r["filename"] for _v, r in RECORDS])
def test_every_row_with_qnn_libraries_has_its_qnn_version(
    version: str, record: dict[str, Any]
) -> None:
    kinds = {lib["kind"] for lib in record.get("libraries") or []}
    qnn = record.get("qnn_version") or {}
    if not kinds & set(QNN_RUNTIME):
        assert version == "1.17.3", record["filename"]  # the one release without QNN libraries
        return
    assert qnn.get("version"), f"{record['filename']}: {record.get('qnn_version_note')}"
    assert qnn.get("evidence"), record["filename"]


def test_1_18_rows_read_from_the_build_string() -> None:
    found = {(v, r["platform"]): r["qnn_version"] for v, r in RECORDS if v in ("1.18.0", "1.18.1")}
    assert {k: q["build"] for k, q in found.items()} == {
        ("1.18.0", "win_amd64"): "2.22.0.240425235059_92863",
        ("1.18.0", "win_arm64"): "2.22.0.240425235059_92863",
        ("1.18.1", "win_amd64"): "2.22.10.240618114939_92936",
        ("1.18.1", "win_arm64"): "2.22.10.240618114939_92936",
    }
    assert all("QNN build string" in q["evidence"][0] for q in found.values())


def test_build_strings_in_bytes() -> None:
    data = b"\x00v2.22.0.240425235059_92863\x00 2.22.0.240425235059_92863.28c6d69e5a \x00"
    assert refresh.qnn_build_strings(data) == ["2.22.0.240425235059_92863"]
    assert refresh.qnn_build_strings(b"v12.22.0.240425235059_92863") == []
    assert refresh.qnn_build_strings(b"v2.22.0.2404_92863 and 2.22.0 alone") == []
    assert refresh.qnn_build_strings(b"") == []


def test_decide_from_build_strings_only_when_nothing_else_speaks() -> None:
    decide = refresh.decide_qnn_version
    version, note = decide(None, [], [("a.dll", "2.22.0.240425235059_92863")] * 2)
    assert version is not None and version.version == "2.22.0"
    assert version.build == "2.22.0.240425235059_92863"
    assert "build string" in (note or "")
    version, note = decide(None, [], [("a.dll", "2.22.0.1_1"), ("b.dll", "2.23.0.1_1")])
    assert version is None and "disagree" in (note or "") and "b.dll" in (note or "")
    # VERSIONINFO speaks: build strings are not consulted.
    version, _note = decide(
        None, [("c.dll", "2.37.1.250807093845_124904")], [("a.dll", "2.22.0.1_1")]
    )
    assert version is not None and version.version == "2.37.1"


def _with_build(machine: int, build: str, size: int, seed: int) -> bytes:
    return (
        build_pe(machine)
        + noise(size, seed)
        + b"\x00v"
        + build.encode()
        + b"\x00"
        + noise(size, seed + 1)
    )


def test_refresh_reads_the_build_string_of_a_1_18_like_wheel(run_tool: Callable[..., Run]) -> None:
    build = "2.22.0.240425235059_92863"
    capi = "onnxruntime/capi/"
    wheel = make_wheel(
        "1.18.0",
        "cp311-cp311-win_amd64",
        {
            capi + "QnnSaver.dll": _with_build(MACHINE_AMD64, build, 20_000, 1),
            capi + "QnnCpu.dll": _with_build(MACHINE_AMD64, build, 60_000, 3),
            capi + "QnnHtp.dll": build_pe(MACHINE_AMD64) + noise(200_000, 5),
            capi + "onnxruntime_providers_shared.dll": build_pe(MACHINE_AMD64),
        },
    )
    mixed = make_wheel(
        "1.18.1",
        "cp311-cp311-win_arm64",
        {
            capi + "QnnSaver.dll": _with_build(MACHINE_ARM64, build, 20_000, 7),
            capi + "QnnSystem.dll": _with_build(MACHINE_ARM64, "2.23.0.240501000000_1", 20_000, 9),
        },
    )
    with serve(PROJECT, [served(wheel), served(mixed), served(wheel_2x_arm64())]) as server:
        result = run_tool(server)
    assert result.code == 0, result.err
    files = result.files()
    qnn = files[wheel[0]]["qnn_version"]
    assert qnn["version"] == "2.22.0" and qnn["build"] == build
    assert qnn["evidence"][0] == f"QNN build string 'v{build}' inside {capi}QnnSaver.dll"
    assert files[mixed[0]]["qnn_version"] is None
    assert "QNN build strings disagree" in files[mixed[0]]["qnn_version_note"]
    # A wheel with VERSIONINFO keeps it as the evidence.
    two = files[wheel_2x_arm64()[0]]["qnn_version"]
    assert not any("build string" in e for e in two["evidence"])
