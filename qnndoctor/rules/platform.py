"""Rules about reaching the NPU from this OS: FastRPC device nodes and their
permissions on Linux, WSL, and the Windows NPU driver."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..facts.probed import Facts
from ..facts.reading import records
from ..facts.socs import identify
from ..matrixdata import Matrix
from ._common import native_arch, process_arch, qnn_dists, quote
from .declare import rule
from .findings import Evidence, Finding, FindingKind, Fix, Severity, make

FASTRPC_DENIED = FindingKind(
    "fastrpc-access-denied",
    Severity.ERROR,
    "This user cannot open the FastRPC device that reaches the NPU",
)
FASTRPC_MISSING = FindingKind(
    "fastrpc-device-missing",
    Severity.WARNING,
    "No FastRPC device node: the NPU (cDSP) is not reachable",
)
WSL = FindingKind(
    "wsl-no-npu",
    Severity.INFO,
    "Running under WSL: the Snapdragon NPU is not reachable from here",
)
NPU_DEVICE_PROBLEM = FindingKind(
    "npu-device-problem",
    Severity.ERROR,
    "Windows reports a problem with the NPU device",
)
NPU_DRIVER_MISSING = FindingKind(
    "npu-driver-missing",
    Severity.WARNING,
    "No Qualcomm NPU driver found on this Windows on ARM machine",
)

FASTRPC_PERMISSIONS = (
    "https://github.com/qualcomm/fastrpc/issues/366",
    "https://github.com/qualcomm/fastrpc/pull/333",
)
FASTRPC_TROUBLESHOOTING = "https://github.com/qualcomm/fastrpc/pull/390"
WSL_SOURCES = (
    "https://github.com/microsoft/foundry-dev-tools/issues/151",
    "https://github.com/pytorch/executorch/pull/12423",
)
DEVICE_MANAGER_CODES = "https://learn.microsoft.com/en-us/windows-hardware/drivers/install/device-manager-error-messages"
NPU_DRIVER_DOC = (
    "https://docs.qualcomm.com/bundle/publicresource/80-63442-10/topics/"
    "htp_hexagon_npu_runtime_driver.md"
)


def _on_linux(facts: Facts) -> bool:
    return str(facts.value("interpreter", "sys_platform") or "").startswith(("linux", "android"))


def _in_wsl(facts: Facts) -> bool:
    wsl = facts.value("soc", "wsl") or {}
    return isinstance(wsl, dict) and wsl.get("wsl") is True


@rule(needs=("soc", "interpreter", "installs"), emits=(FASTRPC_DENIED,))
def fastrpc_permissions(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    if not _on_linux(facts) or not qnn_dists(facts):
        return
    nodes = [dict(n) for n in records(facts.value("soc", "fastrpc_access"))]
    devices = [n for n in nodes if not n.get("dma_heap") and not n.get("secure")]
    heaps = [n for n in nodes if n.get("dma_heap")]
    blocked_devices = devices and not any(n.get("accessible") for n in devices)
    blocked_heap = [n for n in heaps if n.get("accessible") is False]
    if not blocked_devices and not blocked_heap:
        return
    blocked: list[dict[str, Any]] = (devices if blocked_devices else []) + blocked_heap
    groups = sorted({str(n["group"]) for n in blocked if n.get("group") not in (None, "root")})
    commands = tuple(f'sudo usermod -aG {quote(facts, g)} "$USER"' for g in groups)
    yield make(
        FASTRPC_DENIED,
        "The HTP backend reaches the NPU through "
        + ", ".join(
            f"{n.get('path')} ({n.get('mode', '?')}, group {n.get('group') or '?'})"
            for n in blocked
        )
        + ", which this user cannot open for reading and writing. Session creation then fails "
        "(a FastRPC session error or a permission error), although it works with sudo. "
        f"Sources: {', '.join(FASTRPC_PERMISSIONS)}.",
        (Evidence("soc.fastrpc_access", nodes),),
        Fix(
            (
                "Add this user to the group that owns the device nodes, then log out and back in"
                if commands
                else "Install the fastrpc udev rules (fastrpc 1.0.6 and newer grant access to the "
                "'fastrpc' group), add this user to that group, then log out and back in"
            )
            + " (running as root is not the fix).",
            commands,
        ),
    )


@rule(needs=("soc", "interpreter", "installs", "emulation"), emits=(FASTRPC_MISSING,))
def fastrpc_device(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    if not _on_linux(facts) or _in_wsl(facts) or not qnn_dists(facts):
        return
    if process_arch(facts) != "arm64":
        return  # the x86-64 wheel runs the HTP simulator, no DSP needed
    if facts.value("soc", "dsp_device_nodes"):
        return
    match = identify(facts, matrix)
    socinfo = facts.value("soc", "socinfo") or {}
    compatible = (
        str(socinfo.get("device_tree_compatible") or "") if isinstance(socinfo, dict) else ""
    )
    if match is None and "qcom" not in compatible:
        return  # not a Qualcomm board as far as the facts tell
    yield make(
        FASTRPC_MISSING,
        (
            f"This is {match.soc.part} ({match.matched_by}), "
            if match
            else "This is a Qualcomm board "
        )
        + "but /dev has no fastrpc-* (or adsprpc/cdsprpc) node, so the HTP backend cannot open "
        "a session on the NPU: the kernel's FastRPC driver is not loaded or the cDSP firmware "
        f"is not running. Source: {FASTRPC_TROUBLESHOOTING}.",
        (Evidence("soc.dsp_device_nodes", []), Evidence("soc.socinfo", socinfo)),
        Fix(
            "Load the FastRPC driver and check the cDSP is running (the board's BSP provides "
            "the firmware):",
            ("sudo modprobe fastrpc", "ls -l /dev/fastrpc-*", "cat /sys/class/remoteproc/*/state"),
        ),
    )


@rule(needs=("soc", "interpreter"), emits=(WSL,))
def wsl_no_npu(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    if not _on_linux(facts) or not _in_wsl(facts):
        return
    wsl = facts.value("soc", "wsl") or {}
    yield make(
        WSL,
        f"This Linux runs under WSL{wsl.get('version') or ''}: it has no FastRPC device, so "
        "onnxruntime-qnn cannot use the Snapdragon NPU from here (how sure: reported by "
        "users, not documented by Qualcomm or Microsoft). "
        "WSL is fine for preparing models with the Linux x86-64 wheel's HTP simulator; to "
        "run on the NPU, use native ARM64 Python on Windows. "
        f"Sources: {', '.join(WSL_SOURCES)}.",
        (Evidence("soc.wsl", wsl),),
    )


@rule(needs=("soc", "interpreter", "installs", "emulation"), emits=(NPU_DRIVER_MISSING,))
def windows_npu_driver(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    if facts.value("interpreter", "sys_platform") != "win32" or native_arch(facts) != "arm64":
        return
    if not qnn_dists(facts):
        return
    runtime = facts.value("soc", "npu_runtime")
    drivers = facts.value("soc", "npu_drivers")
    if runtime is None or drivers is None or runtime or drivers:
        return  # not checked (None), or a driver is there
    if facts.value("soc", "npu_devices"):
        return  # the device is there: npu-device-problem says what is wrong with it
    yield make(
        NPU_DRIVER_MISSING,
        "No Hexagon NPU driver is installed: no qcnspmcdm / qcadsprpc service and no NPU "
        "device driver in the registry. onnxruntime-qnn's HTP backend needs it to reach the "
        "NPU; the driver ships with the PC maker's drivers (BSP) and Windows Update, separately "
        f"from any SDK. Source: {NPU_DRIVER_DOC}.",
        (Evidence("soc.npu_runtime", runtime), Evidence("soc.npu_drivers", drivers)),
        Fix(
            "Install the Qualcomm Hexagon NPU driver from the PC maker's support site or "
            "Windows Update (optional driver updates), then restart."
        ),
    )


@rule(needs=("soc", "interpreter"), emits=(NPU_DEVICE_PROBLEM,))
def windows_npu_device(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    if facts.value("interpreter", "sys_platform") != "win32":
        return
    for device in records(facts.value("soc", "npu_devices")):
        if not device.get("has_problem"):
            continue
        name = device.get("friendly_name") or device.get("description") or "the NPU"
        instance = str(device.get("instance_id") or "")
        disabled = device.get("problem_code") == 22
        commands = (f'pnputil /enable-device "{instance}"',) if disabled and instance else ()
        yield make(
            NPU_DEVICE_PROBLEM,
            f"Device Manager shows {name}: {device.get('problem') or 'a problem'}. Until it "
            "is fixed the HTP backend cannot reach the NPU (session creation fails, often "
            f"'Failed to create device'). Source: {DEVICE_MANAGER_CODES}.",
            (Evidence("soc.npu_devices", device),),
            Fix(
                (
                    "Enable the device (Device Manager, or as administrator:)"
                    if disabled
                    else "Reinstall or update the NPU driver from the PC maker or Windows "
                    "Update, then restart; Device Manager shows the device's status."
                ),
                commands,
            ),
        )
