"""The inventory of QNN EP sources: packages with which one this interpreter
loads, system SDKs and QNN libraries on the loader path that can shadow the
bundled ones, DSP skel folders; from facts and from a real `check`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult, validate_report

from qnndoctor.facts.probed import Facts
from qnndoctor.report.inventory import inventory

Cli = Callable[..., CliResult]


def _facts(**probes: dict[str, Any]) -> Facts:
    return Facts.from_json(
        {name: {"status": "ok", "values": v, "sources": {}} for name, v in probes.items()}
    )


def _dist(name: str, version: str, modules: list[str], index: int = 4) -> dict[str, Any]:
    return {
        "id": f"{name}=={version}@{index}",
        "name": name,
        "version": version,
        "location": f"/env/site-packages-{index}",
        "provides_modules": modules,
        "era": None,
    }


def test_packages_loaded_and_shadowed() -> None:
    facts = _facts(
        installs={
            "distributions": [
                _dist("onnxruntime-qnn", "1.23.2", ["onnxruntime"], 5),
                _dist("onnxruntime-gpu", "1.22.0", ["onnxruntime"], 4),
                _dist("onnxruntime-qnn", "2.7.0", ["onnxruntime_qnn"], 4),
            ],
            "would_import": {
                "onnxruntime": {
                    "found": True,
                    "owners": ["onnxruntime-gpu==1.22.0@4"],
                    "path": "/env/x",
                },
                "onnxruntime_qnn": {"found": True, "owners": ["onnxruntime-qnn==2.7.0@4"]},
            },
        },
        qnn_bundled={"bundles": [{"dist": "onnxruntime-qnn==2.7.0@4", "qnn_version": "2.51.0"}]},
    )
    items = {f"{i['name']} {i['version']}": i for i in inventory(facts)}
    assert items["onnxruntime-gpu 1.22.0"]["loaded_by_this_interpreter"] is True
    old = items["onnxruntime-qnn 1.23.2"]
    assert old["loaded_by_this_interpreter"] is False
    assert old["shadowed_by"] == ["onnxruntime-gpu==1.22.0@4"]
    assert items["onnxruntime-qnn 2.7.0"]["qnn_version"] == "2.51.0"


def test_a_local_folder_that_shadows_every_package() -> None:
    facts = _facts(
        installs={
            "distributions": [_dist("onnxruntime", "1.31.1", ["onnxruntime"])],
            "would_import": {
                "onnxruntime": {"found": True, "owners": [], "path": "/src/onnxruntime"}
            },
        }
    )
    (item,) = inventory(facts)
    assert item["loaded_by_this_interpreter"] is False and item["shadowed_by"] == [
        "/src/onnxruntime"
    ]


def test_sdks_and_loader_paths() -> None:
    facts = _facts(
        qnn_sdk={
            "roots": [
                {
                    "path": r"C:\Qualcomm\AIStack\QAIRT\2.40.0.251030",
                    "exists": True,
                    "origin": "env QNN_SDK_ROOT",
                    "version": {"sdk_yaml": "2.40.0.251030"},
                },
                {
                    "path": r"C:\Qualcomm\AIStack\QAIRT\2.22.0",
                    "exists": True,
                    "origin": "default install location",
                    "version": {"from_folder_name": "2.22.0"},
                },
            ],
            "qnn_on_path": [
                {
                    "path": r"C:\qualcomm\aistack\qairt\2.40.0.251030\lib\aarch64-windows-msvc",
                    "qnn_libraries": ["QnnHtp.dll"],
                },
                {"path": r"D:\tools\qnn", "qnn_libraries": ["QnnSystem.dll"]},
            ],
            "adsp_library_path": {
                "set": True,
                "entries": [
                    {"path": "/opt/skels", "exists": True, "skels": ["libQnnHtpV73Skel.so"]}
                ],
            },
        },
        soc={
            "dsp_library_dirs": [
                {"path": "/usr/lib/dsp/cdsp", "qnn_skels": ["libQnnHtpV68Skel.so"]},
                {"path": "/usr/lib/dsp", "qnn_skels": []},
            ]
        },
    )
    items = inventory(facts)
    sdk_new, sdk_old, loose, adsp, default = items
    assert sdk_new["kind"] == "qnn-sdk" and sdk_new["on_loader_path"] == [
        "PATH"
    ]  # case-insensitive match
    assert sdk_new["shadows_bundled_qnn"] is True and sdk_new["version"] == "2.40.0.251030"
    assert sdk_old["shadows_bundled_qnn"] is False and sdk_old["version"] == "2.22.0"
    assert loose == {
        "kind": "qnn-libraries-on-loader-path",
        "path": r"D:\tools\qnn",
        "variable": "PATH",
        "libraries": ["QnnSystem.dll"],
        "shadows_bundled_qnn": True,
        "source": "qnn_sdk.qnn_on_path",
    }
    assert (
        adsp["kind"] == "dsp-skels-on-adsp-library-path" and default["path"] == "/usr/lib/dsp/cdsp"
    )
    assert len(items) == 5  # the empty /usr/lib/dsp is not a source


@pytest.mark.parametrize("broken", [{"distributions": "garbage", "would_import": None}, {}])
def test_missing_or_odd_facts_give_an_empty_inventory(broken: dict[str, Any]) -> None:
    assert inventory(_facts(installs=broken)) == []
    assert inventory(Facts.from_json({})) == []


def test_check_reports_the_inventory(cli: Cli, healthy_venv: Path) -> None:
    report = cli("check", "--python", str(healthy_venv), "--json", "--no-smoke").json()
    validate_report(report)
    items = {i["name"]: i for i in report["inventory"] if i["kind"] == "python-package"}
    assert items["onnxruntime-qnn"]["loaded_by_this_interpreter"] is True
    assert items["onnxruntime-qnn"]["qnn_version"] == "2.51.0"
    assert items["onnxruntime"]["loaded_by_this_interpreter"] is True
    text = cli("check", "--python", str(healthy_venv), "--no-smoke").out
    assert (
        "QNN EP sources" in text
        and "onnxruntime-qnn 2.7.0, QNN 2.51.0: loaded by this interpreter" in text
    )
