"""Rules about the interpreter: emulation and architecture."""

from __future__ import annotations

from collections.abc import Iterator

from ..facts.libkinds import PROCESS_LOADED
from ..facts.probed import Facts, bundle_libraries, bundles, pe_details
from ..matrixdata import Matrix
from ._common import native_arch, process_arch, qnn_dists, target_is_windows
from .declare import rule
from .findings import Evidence, Finding, FindingKind, Fix, Severity, make

EMULATED = FindingKind(
    "emulated-interpreter", Severity.ERROR, "The Python interpreter runs under emulation"
)
WRONG_ARCH = FindingKind(
    "wrong-arch-interpreter", Severity.ERROR, "The interpreter's architecture cannot drive the NPU"
)
X64_HOST = FindingKind(
    "x86-64-host-no-npu",
    Severity.INFO,
    "x86-64 host: model preparation and simulation only, no Hexagon NPU",
)

_NATIVE_PYTHON_FIX = Fix(
    "Install a native ARM64 CPython (the 'ARM64' installer from python.org, 3.11 or newer), "
    "create a fresh virtual environment with it and install onnxruntime-qnn there. "
    "Keep x64-only packages in a separate process if your app needs them.",
    ("py -V:3.12-arm64 -m venv .venv-npu",),
    pip_runs=(("install", "onnxruntime-qnn"),),
    pip_python=r".venv-npu\Scripts\python",
)


def _bundle_machines(facts: Facts) -> set[str]:
    """Machine types of the installed QNN / ORT DLLs, as pefile reads them."""
    machines = set()
    for bundle in bundles(facts):
        for lib in bundle_libraries(bundle):
            if lib.get("kind") in PROCESS_LOADED:
                machine = pe_details(facts, lib).get("machine") or lib.get("machine")
                if machine:
                    machines.add(str(machine))
    return machines


@rule(needs=("interpreter", "emulation"), emits=(EMULATED,))
def emulated_interpreter(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    if facts.value("emulation", "emulated") is not True:
        return
    process, native = process_arch(facts), native_arch(facts)
    evidence = [
        Evidence("emulation.process_arch", process),
        Evidence("emulation.native_arch", native),
        Evidence("emulation.emulator", facts.value("emulation", "emulator")),
        Evidence(
            "interpreter.sysconfig_platform", facts.value("interpreter", "sysconfig_platform")
        ),
        Evidence("interpreter.platform_machine", facts.value("interpreter", "platform_machine")),
    ]
    machines = _bundle_machines(facts) if qnn_dists(facts) else set()
    severity = Severity.ERROR
    detail = ""
    if target_is_windows(facts) and process == "x86_64" and native == "arm64" and machines:
        evidence.append(Evidence("binaries.pe[*].machine", sorted(machines)))
        if machines <= {"ARM64X", "ARM64EC"}:
            severity = Severity.WARNING
            detail = (
                " The installed onnxruntime-qnn libraries are ARM64X/ARM64EC builds, which an "
                "emulated x64 process can load, so this may work; native ARM64 Python is still "
                "the configuration Qualcomm and Microsoft validate."
            )
        else:
            detail = (
                " The installed libraries are " + ", ".join(sorted(machines)) + " builds; an "
                "emulated x64 process cannot load pure ARM64 DLLs, and pure x64 QNN DLLs cannot "
                "reach the NPU driver."
            )
    yield make(
        EMULATED,
        f"This Python is an {process} build running on an {native} machine through "
        f"{facts.value('emulation', 'emulator') or 'emulation'}. The Hexagon NPU driver and the "
        "QNN HTP libraries are native ARM64 code: from an emulated process, the session typically "
        "dies on creation with no Python exception (exit code 127 or an access violation)."
        + detail,
        tuple(evidence),
        _NATIVE_PYTHON_FIX,
        severity=severity,
    )


@rule(needs=("interpreter", "emulation"), emits=(WRONG_ARCH, X64_HOST))
def interpreter_architecture(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    process, native = process_arch(facts), native_arch(facts)
    bits = facts.value("interpreter", "pointer_bits")
    evidence = (
        Evidence("emulation.process_arch", process),
        Evidence("emulation.native_arch", native),
        Evidence("interpreter.pointer_bits", bits),
    )
    if bits == 32 or process in ("x86", "arm"):
        yield make(
            WRONG_ARCH,
            f"This is a {bits}-bit {process} interpreter. onnxruntime-qnn publishes wheels for "
            "64-bit Python only (ARM64 for the NPU, x86-64 for model preparation), so pip cannot "
            "install it here and the NPU libraries could not load into this process anyway.",
            evidence,
            _NATIVE_PYTHON_FIX,
        )
        return
    if facts.value("emulation", "emulated") is True:
        return  # emulated-interpreter says it all
    if process == "x86_64" and native in ("x86_64", None):
        yield make(
            X64_HOST,
            "This machine is x86-64, so it has no Hexagon NPU. onnxruntime-qnn is still useful "
            "here: to quantize models and prepare QNN context binaries offline, and on Linux the "
            "HTP backend even runs, in a simulator. To use the NPU, run on a Snapdragon device "
            "with native ARM64 Python.",
            evidence,
        )
