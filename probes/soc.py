"""Probe 7: which SoC / NPU this machine has, and the NPU driver.

Raw identity only (registry strings, kernel socinfo); mapping a SoC to its
Hexagon HTP architecture is qnndoctor's job, from the maintained matrix.
"""

from __future__ import annotations

import sys

from . import os_linux, os_windows
from .base import Context, ProbeOutput

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Any, Dict, List

NAME = "soc"


def run(ctx: Context) -> ProbeOutput:
    out = ProbeOutput()
    if sys.platform == "win32":
        out.put(
            "processor_name", os_windows.processor_name(), r"HKLM\HARDWARE\...\CentralProcessor\0"
        )
        drivers: List[Dict[str, Any]] = os_windows.class_drivers()
        out.put("npu_drivers", drivers, r"HKLM\SYSTEM\CurrentControlSet\Control\Class")
    elif sys.platform.startswith("linux"):
        out.put("socinfo", os_linux.soc_info(), "/sys/devices/soc0, /proc/device-tree/compatible")
        out.put("dsp_device_nodes", os_linux.fastrpc_devices(), "/dev listing")
    else:
        out.put("note", "no SoC query for %s" % sys.platform, "sys.platform")
    return out
