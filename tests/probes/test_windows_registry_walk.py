"""The registry walks of probes/os_windows.py, run here over a small
in-memory ``winreg`` (the real one exists only on Windows). The keys follow
the documented layout (``Control\\Class\\{class}\\NNNN`` holding a driver's
values, ``Services\\<name>``); the values are illustrative, not recorded."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest
from qnndoctor.probes import os_windows

NPU_CLASS = "{f01a9d53-3ff6-48d2-9f97-c8a7004be10c}"  # the class the NPU instance sits under
REGISTRY: dict[str, Any] = {
    "SYSTEM": {
        "CurrentControlSet": {
            "Control": {
                "Class": {
                    NPU_CLASS: {
                        "0000": {
                            "DriverDesc": "Snapdragon(R) X Elite - X1E78100 - Qualcomm(R) Hexagon(TM) NPU",
                            "DriverVersion": "30.0.140.1000",
                            "MatchingDeviceId": "acpi\\qcom0d0a",
                            "ProviderName": "Qualcomm Technologies, Inc.",
                        },
                        "Properties": {},  # not an instance: no driver values
                    },
                    os_windows.DISPLAY_CLASS: {
                        "0000": {
                            "DriverDesc": "Qualcomm(R) Adreno(TM) X1-85 GPU",
                            "OpenCLDriverName": ["qcgpuopencl.dll", "qcgpuopencl32.dll"],
                        },
                        "Configuration": {"DriverDesc": "not an adapter"},
                    },
                },
            },
            "Services": {"qcnspmcdm8380": {}, "QcNspMcdm": {}, "Tcpip": {}},
        }
    }
}


class _Key:
    def __init__(self, node: dict[str, Any]) -> None:
        self.node = node

    def __enter__(self) -> _Key:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def _fake_winreg() -> types.ModuleType:
    winreg = types.ModuleType("winreg")
    root = _Key(REGISTRY)

    def open_key(key: _Key, path: str) -> _Key:
        node: Any = key.node
        for part in path.split("\\"):
            if not isinstance(node.get(part), dict):
                raise FileNotFoundError(path)
            node = node[part]
        return _Key(node)

    def enum_key(key: _Key, index: int) -> str:
        names = [k for k, v in key.node.items() if isinstance(v, dict)]
        if index >= len(names):
            raise OSError("no more data")
        return names[index]

    def query_value(key: _Key, name: str) -> tuple[Any, int]:
        value = key.node.get(name)
        if value is None or isinstance(value, dict):
            raise FileNotFoundError(name)
        return value, 1

    winreg.HKEY_LOCAL_MACHINE = root  # type: ignore[attr-defined]
    winreg.OpenKey = open_key  # type: ignore[attr-defined]
    winreg.EnumKey = enum_key  # type: ignore[attr-defined]
    winreg.QueryValueEx = query_value  # type: ignore[attr-defined]
    return winreg


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "winreg", _fake_winreg())


@pytest.mark.usefixtures("registry")
def test_class_drivers_keeps_the_npu_instance_with_its_values() -> None:
    (npu,) = os_windows.class_drivers()
    assert npu["class_guid"] == NPU_CLASS and npu["instance"] == "0000"
    assert npu["DriverVersion"] == "30.0.140.1000"
    assert "InfPath" not in npu  # absent values are left out, not guessed


@pytest.mark.usefixtures("registry")
def test_services_with_prefix_is_case_insensitive_and_sorted() -> None:
    assert os_windows.services_with_prefix(("qcnspmcdm",)) == ["QcNspMcdm", "qcnspmcdm8380"]


@pytest.mark.usefixtures("registry")
def test_gpu_drivers_reads_numbered_adapters_and_multi_string_values() -> None:
    (adapter,) = os_windows.gpu_drivers()
    assert adapter["instance"] == "0000"
    assert adapter["OpenCLDriverName"] == ["qcgpuopencl.dll", "qcgpuopencl32.dll"]
