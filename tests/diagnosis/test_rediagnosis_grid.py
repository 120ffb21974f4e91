"""The issue's own method: facts edited into a saved report (platform,
Python, SoC, a system QNN SDK folder) and re-diagnosed with
`check --from-report`. The recommendation must match the answer derived
from the wheel records (as in the what-if grid), be the same with and
without the SDK folder, and no finding may tell the user to install
another onnxruntime-qnn than the recommendation."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult
from helpers.raw_matrix import expected as _expected

Cli = Callable[..., CliResult]

# (platform, process arch, sys.platform, SoC facts, HTP arch of that SoC)
TARGETS = {
    "win_arm64 X Elite": (
        "win_arm64",
        "arm64",
        "win32",
        {"processor_name": "Snapdragon(R) X Elite - X1E78100 - Qualcomm(R) Oryon(TM) CPU"},
        73,
    ),
    "win_arm64 X2 Elite": (
        "win_arm64",
        "arm64",
        "win32",
        {"processor_name": "Snapdragon(R) X2 Elite - X2E88100"},
        81,
    ),
    "linux_aarch64 8 Gen 3": (
        "linux_aarch64",
        "arm64",
        "linux",
        {"socinfo": {"soc_id": "557"}},
        75,
    ),
    "linux_aarch64 QCS6490": (
        "linux_aarch64",
        "arm64",
        "linux",
        {"socinfo": {"soc_id": "498"}},
        68,
    ),
    "linux_x86_64": ("linux_x86_64", "x86_64", "linux", {}, None),
}


@pytest.fixture(scope="module")
def saved(healthy_venv: Path) -> dict[str, Any]:
    """A real saved report of the healthy venv, to edit."""
    import contextlib
    import io

    from qnndoctor.cli.main import main

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        main(["check", "--python", str(healthy_venv), "--json", "--no-smoke", "--no-redact"])
    document: dict[str, Any] = json.loads(buffer.getvalue())
    return document


def _edited(saved: dict[str, Any], target: str, python: str, sdk: bool) -> dict[str, Any]:
    _platform, arch, sys_platform, soc, _htp = TARGETS[target]
    doc = copy.deepcopy(saved)
    facts = doc["facts"]
    interp = facts["interpreter"]["values"]
    major, minor = (int(p) for p in python.split("."))
    interp["version_info"] = [major, minor, 0, "final", 0]
    interp["sys_platform"] = sys_platform
    interp["build_arch"] = arch
    interp["libc"] = {"name": "glibc", "version": "2.39"} if sys_platform == "linux" else None
    emulation = facts["emulation"]["values"]
    emulation.update(process_arch=arch, native_arch=arch, emulated=False)
    facts["soc"] = {"status": "ok", "values": soc, "sources": {}}
    roots = []
    if sdk:
        roots = [
            {
                "path": "C:\\Qualcomm\\AIStack\\QAIRT\\2.22.0.240425"
                if sys_platform == "win32"
                else "/opt/qcom/aistack/qairt/2.22.0.240425",
                "origin": "env QNN_SDK_ROOT",
                "exists": True,
                "version": {"sdk_yaml": "2.22.0.240425", "from_folder_name": "2.22.0.240425"},
            }
        ]
    facts["qnn_sdk"]["values"]["roots"] = roots
    return doc


def _pip_installs_of_qnn(command: str) -> bool:
    return (
        " pip " in f" {command} " and " install " in f" {command} " and "onnxruntime-qnn" in command
    )


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_rediagnosed_grid(cli: Cli, saved: dict[str, Any], tmp_path: Path, target: str) -> None:
    platform, _arch, _sys, _soc, htp = TARGETS[target]
    for python in ("3.10", "3.11", "3.12", "3.13", "3.14"):
        answers = []
        for sdk in (False, True):
            path = tmp_path / f"{python}-{sdk}.json"
            path.write_text(json.dumps(_edited(saved, target, python, sdk)))
            result = cli("check", "--from-report", str(path), "--json")
            report = result.json()
            rec = report["recommendation"]
            cell = f"{target} {python} sdk={sdk}"
            assert rec["version"] == _expected(platform, python, htp), (cell, rec)
            assert rec["profile"]["htp_arch"] == htp, cell
            assert not any(
                r["axis"] == "bundled-qnn-newer-than-system"
                for v in rec["ruled_out"]
                for r in v["reasons"]
            )
            for finding in report["findings"]:
                for command in (finding.get("fix") or {}).get("commands") or []:
                    if _pip_installs_of_qnn(command) and rec["commands"]:
                        assert command in rec["commands"], (cell, finding["id"], command)
            answers.append((rec["version"], rec["commands"]))
        assert answers[0] == answers[1], (target, python)
