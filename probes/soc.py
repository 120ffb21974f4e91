"""Probe 7: which SoC / NPU this machine has, the NPU driver, and whether
this user can reach the NPU.

Raw identity only (registry strings, kernel socinfo, device tree, Android
properties); mapping a SoC to its Hexagon HTP architecture is qnndoctor's
job, from the maintained matrix. Each value carries its source; a query that
fails is recorded under ``errors`` and the others still run.
"""

from __future__ import annotations

import sys

from . import os_android, os_linux
from .base import Context, ProbeOutput

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Any, Callable, Dict

NAME = "soc"


def _query(
    out: ProbeOutput, errors: Dict[str, str], key: str, query: Callable[[], Any], source: str
) -> None:
    try:
        out.put(key, query(), source)
    except Exception as exc:  # one broken OS query is one "could not check" entry
        errors[key] = "%s: %s" % (type(exc).__name__, exc)


def run(ctx: Context) -> ProbeOutput:
    out = ProbeOutput()
    errors: Dict[str, str] = {}
    if sys.platform == "win32":
        from . import os_windows  # here: elsewhere the probe program never loads it

        _query(
            out,
            errors,
            "processor_name",
            os_windows.processor_name,
            r"HKLM\HARDWARE\DESCRIPTION\System\CentralProcessor\0\ProcessorNameString",
        )
        _query(
            out,
            errors,
            "npu_drivers",
            os_windows.class_drivers,
            r"HKLM\SYSTEM\CurrentControlSet\Control\Class\{class}\NNNN",
        )
        _query(
            out,
            errors,
            "npu_devices",
            lambda: os_windows.describe_devices(os_windows.npu_devices()),
            "SetupAPI (present devices: Compute Accelerator class or an NPU / Hexagon "
            "description) and CM_Get_DevNode_Status",
        )
        _query(
            out,
            errors,
            "npu_runtime",
            os_windows.npu_runtime,
            r"HKLM\SYSTEM\CurrentControlSet\Services\{qcnspmcdm,qcadsprpc}\ImagePath, "
            "then VERSIONINFO of HtpUsrDrv.dll / libcdsprpc.dll in that DriverStore folder",
        )
        _query(
            out,
            errors,
            "gpu_drivers",
            os_windows.gpu_drivers,
            r"HKLM\SYSTEM\CurrentControlSet\Control\Class\{4d36e968-...}\NNNN (display adapters)",
        )
        _query(
            out,
            errors,
            "opencl_vendors",
            os_windows.opencl_vendors,
            r"HKLM\SOFTWARE\Khronos\OpenCL\Vendors",
        )
    elif sys.platform.startswith("linux") or sys.platform == "android":
        _query(
            out,
            errors,
            "socinfo",
            os_linux.soc_info,
            "/sys/devices/soc0/*, /proc/device-tree/{compatible,model}",
        )
        _query(out, errors, "dsp_device_nodes", os_linux.fastrpc_devices, "/dev listing")
        _query(
            out,
            errors,
            "fastrpc_access",
            os_linux.fastrpc_access,
            "stat() and access(R_OK|W_OK) of /dev/fastrpc-*, /dev/dma_heap/system",
        )
        _query(
            out,
            errors,
            "dsp_library_dirs",
            os_linux.dsp_library_dirs,
            "listing of the FastRPC default DSP library folders",
        )
        _query(out, errors, "wsl", os_linux.wsl, "/proc/version, env WSL_DISTRO_NAME/WSL_INTEROP")
        if os_android.is_android():
            _query(out, errors, "android_properties", os_android.properties, "getprop")
            _query(
                out,
                errors,
                "android_vendor_qnn",
                os_android.vendor_qnn_libraries,
                "listing of /vendor, /odm, /system library folders",
            )
    else:
        out.put("note", "no SoC query for %s" % sys.platform, "sys.platform")
    out.put("errors", errors, "exceptions raised by the queries above")
    return out
