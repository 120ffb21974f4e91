"""Linux queries, one seam each (tests replace them with recorded answers)."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Any, Dict, List, Optional


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


def soc_info(root: str = "/") -> Dict[str, Optional[str]]:
    """Qualcomm SoC identity exported by the kernel's socinfo driver, and the
    device tree's ``compatible`` / ``model`` (boards without socinfo)."""
    base = os.path.join(root, "sys/devices/soc0")
    info: Dict[str, Optional[str]] = {}
    for field in ("soc_id", "machine", "family", "revision", "vendor"):
        value = _read(os.path.join(base, field), 256)
        info[field] = value.strip() if value else None
    for field in ("compatible", "model"):
        text = None
        for folder in ("proc/device-tree", "sys/firmware/devicetree/base"):
            text = _read(os.path.join(root, folder, field), 4096)
            if text is not None:
                break
        parts = [part.strip() for part in (text or "").split("\x00") if part.strip()]
        info["device_tree_" + field] = ",".join(parts) if parts else None
    return info


FASTRPC_PREFIXES = ("fastrpc", "adsprpc", "cdsprpc")


def fastrpc_devices(root: str = "/") -> List[str]:
    """Device nodes through which user space reaches the Hexagon DSPs."""
    try:
        names = os.listdir(os.path.join(root, "dev"))
    except OSError:
        return []
    return sorted(name for name in names if name.startswith(FASTRPC_PREFIXES))


def can_open(path: str) -> bool:
    """Whether this process may open ``path`` for reading and writing (the
    seam: tests run as root, where every node is open)."""
    return os.access(path, os.R_OK | os.W_OK)


def _group_name(gid: int) -> Optional[str]:
    try:
        import grp

        return grp.getgrgid(gid).gr_name
    except (ImportError, KeyError, OverflowError):
        return None


def fastrpc_access(root: str = "/") -> List[Dict[str, Any]]:
    """Each FastRPC node with its owner group, mode and whether this user can
    open it: without that, the HTP backend fails with a permission error
    (qualcomm/fastrpc#366)."""
    nodes: List[Dict[str, Any]] = []
    for name in fastrpc_devices(root):
        path = os.path.join(root, "dev", name)
        entry: Dict[str, Any] = {"path": "/dev/" + name}
        try:
            status = os.stat(path)
        except OSError as exc:
            entry["error"] = "%s: %s" % (type(exc).__name__, exc)
            nodes.append(entry)
            continue
        entry["mode"] = oct(status.st_mode & 0o777)
        entry["group"] = _group_name(status.st_gid)
        entry["gid"] = status.st_gid
        entry["secure"] = name.endswith("-secure")
        entry["accessible"] = can_open(path)
        nodes.append(entry)
    dma_heap = os.path.join(root, "dev/dma_heap/system")
    if os.path.exists(dma_heap):
        nodes.append(
            {"path": "/dev/dma_heap/system", "accessible": can_open(dma_heap), "dma_heap": True}
        )
    return nodes


# Where the FastRPC loader looks for DSP skels after ADSP_LIBRARY_PATH
# (search order seen in qualcomm/fastrpc#180).
DSP_LIBRARY_DIRS = (
    "usr/lib/rfsa/adsp",
    "vendor/lib/rfsa/adsp",
    "vendor/dsp",
    "usr/lib/dsp",
    "lib/dsp",
    "dsp",
)


def dsp_library_dirs(root: str = "/") -> List[Dict[str, Any]]:
    """The default DSP library folders that exist, and the QNN HTP skels in
    them (``libQnnHtpV73Skel.so``), also in their ``cdsp`` subfolder."""
    found: List[Dict[str, Any]] = []
    for folder in DSP_LIBRARY_DIRS:
        for sub in ("", "cdsp"):
            path = os.path.join(root, folder, sub) if sub else os.path.join(root, folder)
            try:
                names = os.listdir(path)
            except OSError:
                continue
            skels = sorted(
                n for n in names if n.lower().startswith("libqnnhtpv") and "skel" in n.lower()
            )
            found.append({"path": "/" + folder + ("/" + sub if sub else ""), "qnn_skels": skels})
    return found


def wsl(root: str = "/", environ: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """Whether this Linux runs under WSL, and which: WSL has no FastRPC
    device, so the NPU is out of reach from inside it."""
    env = dict(os.environ) if environ is None else environ
    version_text = _read(os.path.join(root, "proc/version"), 4096) or ""
    lowered = version_text.lower()
    markers = [name for name in ("WSL_DISTRO_NAME", "WSL_INTEROP") if env.get(name)]
    in_wsl = "microsoft" in lowered or bool(markers)
    kind = None  # WSL2 kernels: "...-microsoft-standard[-WSL2]"; WSL1: "...-Microsoft"
    if "microsoft-standard" in lowered or "wsl2" in lowered:
        kind = 2
    elif "microsoft" in lowered:
        kind = 1
    words = version_text.split()
    release = words[2] if len(words) > 2 and words[:2] == ["Linux", "version"] else None
    return {"wsl": in_wsl, "version": kind, "kernel_release": release, "env": markers}
