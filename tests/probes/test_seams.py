"""OS-specific probe logic, tested on Linux through its seams, and the rules
that read those facts; plus probe and rule isolation."""

from __future__ import annotations

import json
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.pe_builder import MACHINE_AMD64, MACHINE_ARM64, MACHINE_I386, write_pe
from qnndoctor.probes import emulation, installs, os_linux, os_macos, os_windows, run_all
from qnndoctor.probes.base import ProbeOutput

from qnndoctor.facts.probed import Facts, ProbeFacts
from qnndoctor.facts.socs import identify as identify_soc
from qnndoctor.matrixdata import load
from qnndoctor.rules.declare import Rule
from qnndoctor.rules.findings import Finding, Severity
from qnndoctor.rules.registry import evaluate

ANSWERS = json.loads((Path(__file__).parents[1] / "data" / "windows_answers.json").read_text())
MATRIX = load()


def _facts(**probes: dict[str, Any]) -> Facts:
    return Facts.from_json(
        {name: {"status": "ok", "values": v, "sources": {}} for name, v in probes.items()}
    )


def _windows_emulation(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, answer: str, exe_machine: int, build_arch: str
) -> dict[str, Any]:
    exe = write_pe(tmp_path / "python.exe", exe_machine)
    monkeypatch.setattr(sys, "executable", str(exe))
    monkeypatch.setattr(sys, "_base_executable", str(exe), raising=False)
    recorded = ANSWERS["is_wow64_process2"][answer]
    monkeypatch.setattr(os_windows, "is_wow64_process2", lambda: tuple(recorded))
    out = ProbeOutput()
    emulation._windows(out, build_arch)
    values: dict[str, Any] = out.values
    return values


@pytest.mark.parametrize(
    ("answer", "machine", "build", "emulated", "emulator_word"),
    [
        ("x64_python_on_arm64", MACHINE_AMD64, "x86_64", True, "x64 emulation"),
        ("x86_python_on_arm64", MACHINE_I386, "x86", True, "WOW64"),
        ("arm64_python_on_arm64", MACHINE_ARM64, "arm64", False, None),
        ("x64_python_on_x64", MACHINE_AMD64, "x86_64", False, None),
        ("x86_python_on_x64", MACHINE_I386, "x86", True, "WOW64"),
    ],
)
def test_windows_emulation_from_recorded_answers(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    answer: str,
    machine: int,
    build: str,
    emulated: bool,
    emulator_word: str | None,
) -> None:
    values = _windows_emulation(monkeypatch, tmp_path, answer, machine, build)
    assert values["emulated"] is emulated
    assert values["executable_binary"]["machine"] in ("AMD64", "ARM64", "I386")
    if emulator_word:
        assert emulator_word in values["emulator"]
    else:
        assert values["emulator"] is None


def test_macos_rosetta(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os_macos, "proc_translated", lambda: 1)
    out = ProbeOutput()
    emulation._macos(out, "x86_64")
    assert out.values["emulated"] is True and out.values["emulator"] == "Rosetta 2"
    assert out.values["native_arch"] == "arm64"


def test_linux_qemu_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An aarch64 interpreter under qemu-user: uname says aarch64 (qemu fakes
    it), but /proc/cpuinfo is the x86 host's."""
    exe = tmp_path / "python3"
    exe.write_bytes(
        b"\x7fELF\x02\x01\x01" + b"\x00" * 11 + (183).to_bytes(2, "little") + b"\x00" * 64
    )
    monkeypatch.setattr(sys, "executable", str(exe))
    monkeypatch.setattr(os, "uname", lambda: types.SimpleNamespace(machine="aarch64"))
    monkeypatch.setattr(os_linux, "cpuinfo_kind", lambda: "x86")
    monkeypatch.setattr(os_linux, "binfmt_emulators", lambda: ["qemu-aarch64"])
    out = ProbeOutput()
    emulation._linux(out, "arm64")
    assert out.values["process_arch"] == "arm64"
    assert out.values["native_arch"] == "x86_64"
    assert out.values["emulated"] is True
    assert out.values["emulator"] == "qemu-user (binfmt_misc)"


def _emulated_x64_facts(machines: list[str]) -> Facts:
    libs = [
        {
            "name": f"Qnn{i}.dll",
            "path": f"C:/v/capi/Qnn{i}.dll",
            "kind": "backend_htp",
            "format": "PE",
            "machine": m,
        }
        for i, m in enumerate(machines)
    ]
    return _facts(
        interpreter={
            "sys_platform": "win32",
            "executable": "C:/v/Scripts/python.exe",
            "build_arch": "x86_64",
            "pointer_bits": 64,
            "sysconfig_platform": "win-amd64",
        },
        emulation={
            "emulated": True,
            "process_arch": "x86_64",
            "native_arch": "arm64",
            "emulator": "x64 emulation on ARM64 (Prism/xtajit64)",
        },
        installs={
            "distributions": [
                {
                    "name": "onnxruntime-qnn",
                    "canonical_name": "onnxruntime-qnn",
                    "version": "1.23.2",
                    "provides_modules": ["onnxruntime"],
                    "era": "monolithic-1.x",
                    "key_files": [],
                }
            ]
        },
        qnn_bundled={
            "bundles": [
                {
                    "dist": "q",
                    "name": "onnxruntime-qnn",
                    "version": "1.23.2",
                    "folders": [
                        {"path": "C:/v/capi", "role": "onnxruntime/capi", "libraries": libs}
                    ],
                    "stub_hexagon_versions": [73],
                }
            ]
        },
        binaries={"pe": {lib["path"]: {"machine": lib["machine"]} for lib in libs}},
    )


def _by_id(findings: tuple[Finding, ...]) -> dict[str, Finding]:
    return {f.id: f for f in findings}


def test_emulated_x64_with_pure_arm64_dlls_is_an_error() -> None:
    found = _by_id(evaluate(_emulated_x64_facts(["ARM64", "ARM64"]), MATRIX).findings)
    assert found["emulated-interpreter"].severity is Severity.ERROR
    assert found["qnn-libs-wrong-arch"].severity is Severity.ERROR
    assert "ARM64" in found["qnn-libs-wrong-arch"].explanation


def test_emulated_x64_with_arm64x_dlls_is_a_warning() -> None:
    """The real 1.23.2 win_amd64 wheel ships ARM64X QNN DLLs (seen with pefile)."""
    found = _by_id(evaluate(_emulated_x64_facts(["ARM64X", "ARM64EC"]), MATRIX).findings)
    assert found["emulated-interpreter"].severity is Severity.WARNING
    assert "qnn-libs-wrong-arch" not in found


@pytest.mark.parametrize(
    ("name", "part", "arch"),
    [
        ("snapdragon_x_elite", "SC8380XP", 73),
        ("snapdragon_x_plus", "X1P64100", 73),
        ("intel", None, None),
    ],
)
def test_soc_from_windows_processor_name(name: str, part: str | None, arch: int | None) -> None:
    facts = _facts(soc={"processor_name": ANSWERS["processor_name"][name]})
    match = identify_soc(facts, MATRIX)
    assert (match.soc.part if match else None) == part
    assert (match.soc.htp_arch if match else None) == arch


def test_soc_from_linux_socinfo() -> None:
    match = identify_soc(_facts(soc={"socinfo": {"soc_id": "519\n".strip()}}), MATRIX)
    assert match is not None and match.soc.part == "SM8550" and match.soc.htp_arch == 73


def test_missing_stub_for_the_soc_htp_arch() -> None:
    facts = _emulated_x64_facts(["ARM64"])
    data = facts.to_json()
    data["soc"] = {
        "status": "ok",
        "values": {"processor_name": ANSWERS["processor_name"]["snapdragon_x_elite"]},
        "sources": {},
    }
    data["qnn_bundled"]["values"]["bundles"][0]["stub_hexagon_versions"] = [68]
    found = _by_id(evaluate(Facts.from_json(data), MATRIX).findings)
    assert "v73" in found["qnn-stub-missing-for-htp-arch"].explanation
    data["qnn_bundled"]["values"]["bundles"][0]["stub_hexagon_versions"] = [68, 73]
    assert "qnn-stub-missing-for-htp-arch" not in _by_id(
        evaluate(Facts.from_json(data), MATRIX).findings
    )


def test_non_ascii_unmappable_in_ansi_code_page_is_an_error_on_windows() -> None:
    flagged = [
        {
            "label": "site-packages",
            "path": "C:/Users/李/venv/Lib/site-packages",
            "non_ascii": [{"char": "李", "codepoint": "U+674E", "name": "CJK"}],
            "undecodable_bytes": False,
            "encodable_in_ansi_code_page": False,
        }
    ]
    windows = _facts(
        interpreter={"sys_platform": "win32"},
        paths={"non_ascii": flagged, "ansi_code_page": "cp1252"},
    )
    linux = _facts(
        interpreter={"sys_platform": "linux"}, paths={"non_ascii": flagged, "ansi_code_page": None}
    )
    assert _by_id(evaluate(windows, MATRIX).findings)["non-ascii-path"].severity is Severity.ERROR
    assert _by_id(evaluate(linux, MATRIX).findings)["non-ascii-path"].severity is Severity.WARNING


def test_a_failing_probe_does_not_stop_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(ctx: object) -> ProbeOutput:
        raise PermissionError(13, "Permission denied", "/site-packages")

    monkeypatch.setattr(installs, "run", broken)
    document = run_all()
    probes = document["probes"]
    assert probes["installs"]["status"] == "error"
    assert probes["installs"]["error"]["type"] == "PermissionError"
    assert probes["qnn_bundled"]["status"] == "error"  # depends on installs, says so
    assert probes["interpreter"]["status"] == probes["paths"]["status"] == "ok"
    evaluation = evaluate(Facts.from_json(probes), MATRIX)
    skipped = {s.rule: s.reason for s in evaluation.skipped}
    assert "installs: PermissionError" in skipped["multiple_owners"]
    assert "probe-failed" in {f.id for f in evaluation.findings}


def test_a_crashing_rule_becomes_a_skipped_check() -> None:
    def explode(facts: Facts, matrix: object) -> Iterator[Finding]:
        raise KeyError("boom")

    rules = [Rule("explode", (), (), explode)]
    evaluation = evaluate(Facts.from_json({}), MATRIX, rules)
    assert evaluation.skipped[0].reason == "rule error: KeyError: 'boom'"


def test_saved_facts_round_trip() -> None:
    facts = Facts.from_json(run_all()["probes"])
    again = Facts.from_json(json.loads(json.dumps(facts.to_json())))
    assert again.to_json() == facts.to_json()
    assert isinstance(again.probe("interpreter"), ProbeFacts)
