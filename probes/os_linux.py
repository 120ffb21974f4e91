"""Linux queries, one seam each (tests replace them with recorded answers)."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Dict, List, Optional


def _read(path: str, limit: int = 65536) -> Optional[str]:
    try:
        with open(path, "rb") as handle:
            return handle.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def cpuinfo_kind() -> Optional[str]:
    """Which CPU family ``/proc/cpuinfo`` describes: "x86", "arm" or None.

    qemu-user fakes ``uname`` for its guest but passes the host's cpuinfo
    through, so a mismatch with the interpreter's ELF machine reveals it.
    """
    text = _read("/proc/cpuinfo")
    if not text:
        return None
    if "vendor_id" in text or "\nflags\t" in text or text.startswith("processor\t: 0\nvendor_id"):
        return "x86"
    if "CPU implementer" in text or "\nFeatures\t" in text:
        return "arm"
    return None


def binfmt_emulators() -> List[str]:
    """Registered binfmt_misc handlers that are qemu (or box64/FEX) emulators."""
    folder = "/proc/sys/fs/binfmt_misc"
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    keep = ("qemu", "box64", "box86", "fex")
    return sorted(name for name in names if name.lower().startswith(keep))


def soc_info() -> Dict[str, Optional[str]]:
    """Qualcomm SoC identity exported by the kernel's socinfo driver."""
    base = "/sys/devices/soc0"
    info: Dict[str, Optional[str]] = {}
    for field in ("soc_id", "machine", "family", "revision", "vendor"):
        value = _read(os.path.join(base, field), 256)
        info[field] = value.strip() if value else None
    compatible = _read("/proc/device-tree/compatible", 4096)
    info["device_tree_compatible"] = (
        ",".join(part for part in compatible.split("\x00") if part) if compatible else None
    )
    return info


def fastrpc_devices() -> List[str]:
    """Device nodes through which user space reaches the Hexagon DSPs."""
    try:
        names = os.listdir("/dev")
    except OSError:
        return []
    wanted = ("fastrpc", "adsprpc", "cdsprpc")
    return sorted(name for name in names if name.startswith(wanted))
