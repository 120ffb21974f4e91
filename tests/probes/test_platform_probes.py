"""The platform probes (Linux sysfs / device tree / FastRPC / WSL, Android
properties, the Windows NPU driver) over trees and OS answers shaped like the
public reports in tests/data/platform_answers.json, through their seams; and
the rules that read those facts."""

from __future__ import annotations

import grp
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.pe_builder import MACHINE_ARM64, build_pe
from qnndoctor.probes import os_android, os_linux, os_windows, soc
from qnndoctor.probes.base import Context

from qnndoctor.facts.probed import Facts
from qnndoctor.facts.socs import identify
from qnndoctor.matrixdata import load
from qnndoctor.resolver.recommend import profile_from_facts
from qnndoctor.rules.registry import evaluate
from qnndoctor.target.binaries.pe import read_pe

ANSWERS = json.loads((Path(__file__).parents[1] / "data" / "platform_answers.json").read_text())
MATRIX = load()


def _tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content)
        else:
            path.write_bytes(content)
    return root


def _board(root: Path, name: str) -> Path:
    board = ANSWERS["linux"][name]
    files: dict[str, str | bytes] = {
        f"sys/devices/soc0/{k}": v for k, v in (board.get("soc0") or {}).items()
    }
    files["proc/device-tree/compatible"] = board["compatible"]
    files["proc/device-tree/model"] = board["model"]
    return _tree(root, files)


def _facts(**probes: dict[str, Any]) -> Facts:
    return Facts.from_json(
        {name: {"status": "ok", "values": v, "sources": {}} for name, v in probes.items()}
    )


QNN_INSTALLED = {
    "distributions": [
        {
            "name": "onnxruntime-qnn",
            "canonical_name": "onnxruntime-qnn",
            "version": "2.7.0",
            "provides_modules": ["onnxruntime_qnn"],
        }
    ]
}


def _linux(soc_values: dict[str, Any], arch: str = "arm64") -> Facts:
    return _facts(
        interpreter={"sys_platform": "linux", "version_info": [3, 12, 0]},
        emulation={"process_arch": arch, "native_arch": arch},
        installs=QNN_INSTALLED,
        soc=soc_values,
    )


def _ids(facts: Facts) -> set[str]:
    return {f.id for f in evaluate(facts, MATRIX).findings}


# ---------------------------------------------------------------- Linux


def test_socinfo_and_device_tree_of_a_qcs6490_board(tmp_path: Path) -> None:
    info = os_linux.soc_info(str(_board(tmp_path, "rb3gen2")))
    assert info["soc_id"] == "498" and info["machine"] == "QCS6490"
    assert info["device_tree_compatible"] == "qcom,qcs6490-rb3gen2,qcom,qcm6490"
    assert info["device_tree_model"] == "Qualcomm Technologies, Inc. Robotics RB3gen2"
    match = identify(_facts(soc={"socinfo": info}), MATRIX)
    assert match is not None and match.soc.part == "QCS6490" and match.soc.htp_arch == 68


def test_a_laptop_without_socinfo_is_identified_by_its_device_tree(tmp_path: Path) -> None:
    info = os_linux.soc_info(str(_board(tmp_path, "t14s_without_socinfo")))
    assert info["soc_id"] is None and info["machine"] is None
    match = identify(_facts(soc={"socinfo": info}), MATRIX)
    assert match is not None and match.soc.part == "SC8380XP"
    assert match.fact == "soc.socinfo.device_tree_compatible" and "x1e78100" in match.matched_by
    facts = _linux({"socinfo": info})
    assert profile_from_facts(facts, MATRIX).htp_arch == 73


def test_missing_and_corrupt_sysfs_values(tmp_path: Path) -> None:
    assert set(os_linux.soc_info(str(tmp_path)).values()) == {None}
    _tree(
        tmp_path,
        {"sys/devices/soc0/soc_id": b"\xff\xfe\n", "proc/device-tree/compatible": "\x00\x00"},
    )
    info = os_linux.soc_info(str(tmp_path))
    assert info["device_tree_compatible"] is None
    assert identify(_facts(soc={"socinfo": info}), MATRIX) is None  # garbage soc_id: no match


def _other_group() -> grp.struct_group:
    return next(g for g in grp.getgrall() if g.gr_gid != 0)


def test_fastrpc_nodes_and_who_may_open_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group = _other_group()
    _tree(
        tmp_path,
        {
            "dev/fastrpc-cdsp": "",
            "dev/fastrpc-cdsp-secure": "",
            "dev/fastrpc-adsp": "",
            "dev/tty0": "",
            "dev/dma_heap/system": "",
        },
    )
    for name in ("fastrpc-cdsp", "fastrpc-adsp"):
        os.chown(tmp_path / "dev" / name, -1, group.gr_gid)
        (tmp_path / "dev" / name).chmod(0o660)
    assert os_linux.fastrpc_devices(str(tmp_path)) == [
        "fastrpc-adsp",
        "fastrpc-cdsp",
        "fastrpc-cdsp-secure",
    ]
    monkeypatch.setattr(os_linux, "can_open", lambda path: path.endswith("secure"))
    nodes = os_linux.fastrpc_access(str(tmp_path))
    by_path = {n["path"]: n for n in nodes}
    assert by_path["/dev/fastrpc-cdsp"] == {
        "path": "/dev/fastrpc-cdsp",
        "mode": "0o660",
        "group": group.gr_name,
        "gid": group.gr_gid,
        "secure": False,
        "accessible": False,
    }
    assert by_path["/dev/fastrpc-cdsp-secure"]["accessible"] is True
    assert by_path["/dev/dma_heap/system"] == {
        "path": "/dev/dma_heap/system",
        "accessible": False,
        "dma_heap": True,
    }
    finding = next(
        f
        for f in evaluate(
            _linux({"fastrpc_access": nodes, "dsp_device_nodes": ["fastrpc-cdsp"]}), MATRIX
        ).findings
        if f.id == "fastrpc-access-denied"
    )
    assert finding.fix is not None
    assert finding.fix.commands == (f'sudo usermod -aG {group.gr_name} "$USER"',)
    assert "https://github.com/qualcomm/fastrpc/issues/366" in finding.explanation
    monkeypatch.setattr(os_linux, "can_open", lambda path: True)
    open_nodes = os_linux.fastrpc_access(str(tmp_path))
    assert "fastrpc-access-denied" not in _ids(_linux({"fastrpc_access": open_nodes}))
    # Nothing installed: nothing to say.
    no_qnn = _facts(
        interpreter={"sys_platform": "linux"},
        installs={"distributions": []},
        soc={"fastrpc_access": nodes},
    )
    assert "fastrpc-access-denied" not in _ids(no_qnn)


def test_no_fastrpc_node_on_a_qualcomm_board(tmp_path: Path) -> None:
    info = os_linux.soc_info(str(_board(tmp_path, "rb3gen2")))
    facts = _linux({"socinfo": info, "dsp_device_nodes": [], "wsl": {"wsl": False}})
    finding = next(f for f in evaluate(facts, MATRIX).findings if f.id == "fastrpc-device-missing")
    assert "QCS6490" in finding.explanation and finding.fix is not None
    assert "sudo modprobe fastrpc" in finding.fix.commands
    assert "fastrpc-device-missing" not in _ids(
        _linux({"socinfo": info, "dsp_device_nodes": ["fastrpc-cdsp"]})
    )
    assert "fastrpc-device-missing" not in _ids(
        _linux({"socinfo": info, "dsp_device_nodes": []}, arch="x86_64")
    )
    not_qcom = {
        "soc_id": None,
        "machine": None,
        "device_tree_compatible": "raspberrypi,5-model-b,brcm,bcm2712",
    }
    assert "fastrpc-device-missing" not in _ids(
        _linux({"socinfo": not_qcom, "dsp_device_nodes": []})
    )


def test_dsp_library_folders_and_their_skels(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "usr/lib/dsp/cdsp/libQnnHtpV68Skel.so": b"",
            "usr/lib/dsp/cdsp/fastrpc_shell_3": b"",
            "usr/lib/rfsa/adsp/readme": "",
        },
    )
    assert os_linux.dsp_library_dirs(str(tmp_path)) == [
        {"path": "/usr/lib/rfsa/adsp", "qnn_skels": []},
        {"path": "/usr/lib/dsp", "qnn_skels": []},
        {"path": "/usr/lib/dsp/cdsp", "qnn_skels": ["libQnnHtpV68Skel.so"]},
    ]
    assert os_linux.dsp_library_dirs(str(tmp_path / "nothing")) == []


@pytest.mark.parametrize(
    ("answer", "env", "expected"),
    [
        ("proc_version_wsl2", {}, (True, 2, "5.15.167.4-microsoft-standard-WSL2")),
        ("proc_version_wsl1", {}, (True, 1, "4.4.0-19041-Microsoft")),
        ("proc_version_plain", {}, (False, None, "6.8.0-48-generic")),
        ("proc_version_plain", {"WSL_DISTRO_NAME": "Ubuntu"}, (True, None, "6.8.0-48-generic")),
    ],
)
def test_wsl_detection(
    tmp_path: Path, answer: str, env: dict[str, str], expected: tuple[Any, ...]
) -> None:
    _tree(tmp_path, {"proc/version": ANSWERS["linux"][answer]})
    found = os_linux.wsl(str(tmp_path), env)
    assert (found["wsl"], found["version"], found["kernel_release"]) == expected
    assert "root@" not in json.dumps(found) and "buildd@" not in json.dumps(found)
    ids = _ids(_facts(interpreter={"sys_platform": "linux"}, soc={"wsl": found}))
    assert ("wsl-no-npu" in ids) is expected[0]


def test_one_failing_query_is_one_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(root: str = "/") -> list[Any]:
        raise PermissionError(13, "Permission denied", "/dev")

    monkeypatch.setattr(os_linux, "fastrpc_access", broken)
    out = soc.run(Context())
    assert out.values["errors"] == {
        "fastrpc_access": "PermissionError: [Errno 13] Permission denied: '/dev'"
    }
    assert "fastrpc_access" not in out.values
    assert {"socinfo", "dsp_device_nodes", "dsp_library_dirs", "wsl"} <= set(out.values)
    assert all(out.sources[k] for k in out.values)


# ---------------------------------------------------------------- Android


def test_android_properties_and_vendor_libraries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = ANSWERS["android"]["sm8650"]
    monkeypatch.setattr(os_android, "getprop", lambda name: recorded.get(name))
    props = os_android.properties()
    assert props["ro.soc.model"] == "SM8650"
    match = identify(_facts(soc={"android_properties": props}), MATRIX)
    assert match is not None and match.soc.htp_arch == 75 and "ro.soc.model" in match.matched_by
    _tree(
        tmp_path,
        {
            "vendor/lib64/libQnnHtp.so": b"",
            "vendor/lib64/libc++.so": b"",
            "vendor/lib/rfsa/adsp/libQnnHtpV75Skel.so": b"",
            "system/build.prop": "",
        },
    )
    assert os_android.vendor_qnn_libraries(str(tmp_path)) == [
        {"path": "/vendor/lib64", "qnn_libraries": ["libQnnHtp.so"]},
        {"path": "/vendor/lib/rfsa/adsp", "qnn_libraries": ["libQnnHtpV75Skel.so"]},
    ]
    assert os_android.is_android(str(tmp_path), {}) is True
    assert os_android.is_android(str(tmp_path / "x"), {}) is False
    assert os_android.is_android(str(tmp_path / "x"), {"ANDROID_ROOT": "/system"}) is True


def test_getprop_missing_tool_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    assert os_android.getprop("ro.soc.model") is None


# ---------------------------------------------------------------- Windows


def _driver_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_files: bool = True
) -> dict[str, str]:
    image = ANSWERS["windows"]["qcnspmcdm_image_path"]
    windows = tmp_path / "Windows"
    package = image.split("\\")[-2]
    folder = windows / "System32" / "DriverStore" / "FileRepository" / package
    folder.mkdir(parents=True)
    if with_files:
        version = tuple(ANSWERS["windows"]["libcdsprpc_version"])
        (folder / "libcdsprpc.dll").write_bytes(build_pe(MACHINE_ARM64, version=version))
    # The service carries the chip in its name on some machines ("qcnspmcdm8380").
    monkeypatch.setattr(os_windows, "services_with_prefix", lambda prefixes: ["qcnspmcdm8380"])
    monkeypatch.setattr(
        os_windows, "service_image_path", lambda name: image if name == "qcnspmcdm8380" else None
    )
    monkeypatch.setattr(
        os_windows, "file_version", lambda path: read_pe(path).get("file_version_fixed")
    )
    return {"SystemRoot": str(windows)}


def test_windows_npu_runtime_from_service_to_file_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _driver_store(tmp_path, monkeypatch)
    (entry,) = os_windows.npu_runtime(env)
    assert entry["service"] == "qcnspmcdm8380" and entry["folder_exists"] is True
    assert entry["image_path_source"].endswith(r"Services\qcnspmcdm8380\ImagePath")
    files = {f["name"]: f for f in entry["files"]}
    assert files["HtpUsrDrv.dll"] == {
        "name": "HtpUsrDrv.dll",
        "path": files["HtpUsrDrv.dll"]["path"],
        "exists": False,
    }
    assert files["libcdsprpc.dll"]["version"] == "30.0.220.3000"
    assert files["libcdsprpc.dll"]["version_source"].startswith("VERSIONINFO of ")
    facts = _facts(
        interpreter={"sys_platform": "win32", "version_info": [3, 12, 0]},
        emulation={"process_arch": "arm64", "native_arch": "arm64"},
        soc={"npu_runtime": [entry], "npu_drivers": []},
    )
    profile = profile_from_facts(facts, MATRIX)
    assert profile.npu_driver == "libcdsprpc.dll 30.0.220.3000"
    assert profile.npu_driver_source is not None and "libcdsprpc.dll" in profile.npu_driver_source


def test_windows_image_path_forms() -> None:
    root = r"C:\Windows"
    assert (
        os_windows._image_folder(r"\SystemRoot\System32\drivers\x.sys", root)
        == r"C:\Windows\System32\drivers"
    )
    assert (
        os_windows._image_folder(r"System32\drivers\x.sys", root) == r"C:\Windows\System32\drivers"
    )
    assert os_windows._image_folder(r"\??\C:\Drivers\x.sys", root) == r"C:\Drivers"
    assert (
        os_windows._image_folder(r'"%SystemRoot%\System32\y.sys"', root) == r"C:\Windows\System32"
    )


def test_windows_registry_errors_and_missing_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def denied(name: str) -> str:
        raise PermissionError(5, "Access is denied")

    def enumeration_denied(prefixes: tuple[str, ...]) -> list[str]:
        raise PermissionError(5, "Access is denied")

    monkeypatch.setattr(os_windows, "services_with_prefix", enumeration_denied)
    monkeypatch.setattr(os_windows, "service_image_path", denied)
    entries = os_windows.npu_runtime({"SystemRoot": str(tmp_path)})
    assert [e["service"] for e in entries] == ["*", "qcnspmcdm", "qcadsprpc"]
    assert all(e["error"].startswith("PermissionError") for e in entries)
    monkeypatch.setattr(os_windows, "services_with_prefix", lambda prefixes: [])
    monkeypatch.setattr(os_windows, "service_image_path", lambda name: None)
    assert os_windows.npu_runtime({"SystemRoot": str(tmp_path)}) == []

    def windows(runtime: Any, drivers: Any, native: str = "arm64") -> Facts:
        return _facts(
            interpreter={"sys_platform": "win32"},
            emulation={"process_arch": native, "native_arch": native},
            installs=QNN_INSTALLED,
            soc={"npu_runtime": runtime, "npu_drivers": drivers},
        )

    finding = next(
        f for f in evaluate(windows([], []), MATRIX).findings if f.id == "npu-driver-missing"
    )
    assert "docs.qualcomm.com" in finding.explanation
    assert "npu-driver-missing" not in _ids(windows([{"service": "qcnspmcdm"}], []))
    assert "npu-driver-missing" not in _ids(windows(None, None))  # could not check
    assert "npu-driver-missing" not in _ids(windows([], [], native="x86_64"))  # not an ARM64 PC


def _npu_device_facts(devices: list[dict[str, Any]]) -> Facts:
    return _facts(
        interpreter={"sys_platform": "win32"},
        emulation={"process_arch": "arm64", "native_arch": "arm64"},
        installs=QNN_INSTALLED,
        soc={"npu_devices": devices, "npu_runtime": [], "npu_drivers": []},
    )


def test_npu_device_status_and_problem_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    recorded = ANSWERS["windows"]["npu_devices_ok"]
    (ok,) = os_windows.describe_devices(recorded)
    assert ok["started"] is True and ok["has_problem"] is False and ok["problem"] is None
    ids = _ids(_npu_device_facts([ok]))
    assert "npu-device-problem" not in ids and "npu-driver-missing" not in ids
    disabled = dict(recorded[0], status_flags=0x400, problem_code=22)
    (off,) = os_windows.describe_devices([disabled])
    assert off["started"] is False and off["problem"] == "the device is disabled (code 22)"
    finding = next(
        f
        for f in evaluate(_npu_device_facts([off]), MATRIX).findings
        if f.id == "npu-device-problem"
    )
    assert "Hexagon(TM) NPU" in finding.explanation and "code 22" in finding.explanation
    assert finding.fix is not None
    assert finding.fix.commands == ('pnputil /enable-device "ACPI\\QCOM0D0A\\2&DABA3FF&0"',)
    (no_driver,) = os_windows.describe_devices(
        [dict(recorded[0], status_flags=0x400, problem_code=28)]
    )
    finding = next(
        f
        for f in evaluate(_npu_device_facts([no_driver]), MATRIX).findings
        if f.id == "npu-device-problem"
    )
    assert "not installed (code 28)" in finding.explanation and finding.fix is not None
    assert finding.fix.commands == ()
    (odd,) = os_windows.describe_devices([dict(recorded[0], problem_code=99)])
    assert odd["problem"] == "problem code 99"
    (unread,) = os_windows.describe_devices([dict(recorded[0], cm_result=13)])
    assert unread["problem"] == "status could not be read (CONFIGRET 13)"
    # The probe records the seam's answer, described.
    monkeypatch.setattr(os_windows, "npu_devices", lambda: recorded)
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(
        os_windows,
        "processor_name",
        lambda: "Snapdragon(R) X Elite - X1E80100 - Qualcomm(R) Oryon(TM) CPU",
    )
    monkeypatch.setattr(os_windows, "class_drivers", lambda: [])
    monkeypatch.setattr(os_windows, "npu_runtime", lambda: [])
    gpu = {
        "instance": "0000",
        "DriverDesc": "Qualcomm(R) Adreno(TM) X1-85 GPU",
        "DriverVersion": "31.0.101.0",
    }
    monkeypatch.setattr(os_windows, "gpu_drivers", lambda: [gpu])
    monkeypatch.setattr(os_windows, "opencl_vendors", lambda: [])
    out = soc.run(Context())
    assert out.values["npu_devices"][0]["started"] is True
    assert out.values["errors"] == {}
    from qnndoctor.facts.reading import Fields
    from qnndoctor.render.summary import _soc

    lines = _soc(Fields.of(out.values))
    assert (
        "GPU driver: Qualcomm(R) Adreno(TM) X1-85 GPU 31.0.101.0, no OpenCL driver registered"
        in lines
    )
    with_cl = dict(gpu, OpenCLDriverName=["qcclx8380.dll"])
    assert (
        "GPU driver: Qualcomm(R) Adreno(TM) X1-85 GPU 31.0.101.0, OpenCL driver qcclx8380.dll"
        in _soc(Fields.of({"gpu_drivers": [with_cl]}))
    )
    # Without the seams, on this Linux machine: each Windows query is one error entry.
    monkeypatch.undo()
    monkeypatch.setattr(sys, "platform", "win32")
    out = soc.run(Context())
    assert set(out.values["errors"]) == {
        "processor_name",
        "npu_drivers",
        "npu_devices",
        "npu_runtime",
        "gpu_drivers",
        "opencl_vendors",
    }


@pytest.mark.parametrize(
    "garbage",
    [
        {
            "socinfo": "x",
            "fastrpc_access": {"a": 1},
            "wsl": [],
            "npu_runtime": "y",
            "npu_devices": 3,
        },
        {
            "socinfo": {"device_tree_compatible": 5},
            "fastrpc_access": [None, "z"],
            "android_properties": ["a"],
        },
        {
            "npu_runtime": [{"files": "nope"}],
            "npu_drivers": [{"DriverVersion": None}],
            "dsp_device_nodes": None,
        },
        {"fastrpc_access": [{"accessible": False}, {"dma_heap": True, "accessible": False}]},
    ],
)
def test_odd_soc_facts_in_a_saved_ticket_never_break_a_rule(garbage: dict[str, Any]) -> None:
    for platform in ("linux", "win32"):
        facts = _facts(
            interpreter={"sys_platform": platform, "version_info": [3, 12, 0]},
            emulation={"process_arch": "arm64", "native_arch": "arm64"},
            installs=QNN_INSTALLED,
            soc=garbage,
        )
        evaluation = evaluate(facts, MATRIX)
        assert [s for s in evaluation.skipped if s.reason.startswith("rule error")] == []
        profile_from_facts(facts, MATRIX)  # no exception
        identify(facts, MATRIX)
