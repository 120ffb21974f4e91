"""macOS queries, one seam each (tests replace them)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Optional


def proc_translated() -> Optional[int]:
    """``sysctl.proc_translated``: 1 under Rosetta 2, 0 native, None if unknown."""
    import ctypes
    import ctypes.util

    path = ctypes.util.find_library("c")
    libc = ctypes.CDLL(path or "libc.dylib", use_errno=True)
    value = ctypes.c_int(0)
    size = ctypes.c_size_t(ctypes.sizeof(value))
    result = libc.sysctlbyname(
        b"sysctl.proc_translated", ctypes.byref(value), ctypes.byref(size), None, 0
    )
    if result != 0:
        return None
    return int(value.value)
