"""Windows queries, one small seam each.

Tests on Linux replace these functions with recorded real answers; nothing else
in the probes touches ``ctypes.windll`` or ``winreg``. Imports of Windows-only
modules stay inside the functions.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Any, Dict, List, Optional, Tuple


def is_wow64_process2() -> Optional[Tuple[int, int]]:
    """(process machine, native machine) from ``IsWow64Process2``.

    The process machine is IMAGE_FILE_MACHINE_UNKNOWN (0) when the process is
    *not* a WOW64 guest; note that an x64 process emulated on ARM64 is not
    WOW64 either, so it also reports 0. None when the API is missing
    (Windows < 10 1709).
    """
    import ctypes
    from ctypes import wintypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]
    function = getattr(kernel32, "IsWow64Process2", None)
    if function is None:
        return None
    function.argtypes = [
        wintypes.HANDLE,
        ctypes.POINTER(wintypes.USHORT),
        ctypes.POINTER(wintypes.USHORT),
    ]
    function.restype = wintypes.BOOL
    process_machine = wintypes.USHORT(0)
    native_machine = wintypes.USHORT(0)
    handle = kernel32.GetCurrentProcess()
    if not function(handle, ctypes.byref(process_machine), ctypes.byref(native_machine)):
        raise OSError(ctypes.get_last_error(), "IsWow64Process2 failed")  # type: ignore[attr-defined,unused-ignore]
    return int(process_machine.value), int(native_machine.value)


def code_pages() -> Dict[str, int]:
    """The ANSI and OEM code pages: what narrow-string Windows APIs convert to."""
    import ctypes

    kernel32 = ctypes.WinDLL("kernel32")  # type: ignore[attr-defined,unused-ignore]
    return {"ansi": int(kernel32.GetACP()), "oem": int(kernel32.GetOEMCP())}


def processor_name() -> Optional[str]:
    """``ProcessorNameString`` of CPU 0, e.g. "Snapdragon(R) X Elite - X1E78100 - ..."."""
    import winreg  # type: ignore[import-not-found,unused-ignore]

    key_path = r"HARDWARE\DESCRIPTION\System\CentralProcessor\0"
    with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, key_path) as key:  # type: ignore[attr-defined,unused-ignore]
        value, _kind = winreg.QueryValueEx(key, "ProcessorNameString")  # type: ignore[attr-defined,unused-ignore]
    return str(value).strip() if value else None


_DRIVER_FIELDS = (
    "DriverDesc",
    "DriverVersion",
    "DriverDate",
    "ProviderName",
    "MatchingDeviceId",
    "InfPath",
)


def class_drivers() -> List[Dict[str, Any]]:
    """Installed drivers of the device classes that an NPU registers under.

    Reads ``HKLM\\SYSTEM\\CurrentControlSet\\Control\\Class\\{class}\\NNNN``,
    the same data Device Manager shows, without needing PnP APIs.
    """
    import winreg  # type: ignore[import-not-found,unused-ignore]

    root = r"SYSTEM\CurrentControlSet\Control\Class"
    found: List[Dict[str, Any]] = []
    hklm = winreg.HKEY_LOCAL_MACHINE  # type: ignore[attr-defined,unused-ignore]
    with winreg.OpenKey(hklm, root) as classes:  # type: ignore[attr-defined,unused-ignore]
        index = 0
        while True:
            try:
                class_guid = winreg.EnumKey(classes, index)  # type: ignore[attr-defined,unused-ignore]
            except OSError:
                break
            index += 1
            try:
                class_key = winreg.OpenKey(classes, class_guid)  # type: ignore[attr-defined,unused-ignore]
            except OSError:
                continue
            with class_key:
                sub_index = 0
                while True:
                    try:
                        instance = winreg.EnumKey(class_key, sub_index)  # type: ignore[attr-defined,unused-ignore]
                    except OSError:
                        break
                    sub_index += 1
                    entry: Dict[str, Any] = {"class_guid": class_guid, "instance": instance}
                    try:
                        with winreg.OpenKey(class_key, instance) as inst:  # type: ignore[attr-defined,unused-ignore]
                            for field in _DRIVER_FIELDS:
                                try:
                                    entry[field] = str(winreg.QueryValueEx(inst, field)[0])  # type: ignore[attr-defined,unused-ignore]
                                except OSError:
                                    pass
                    except OSError:
                        continue
                    text = (entry.get("DriverDesc", "") + entry.get("MatchingDeviceId", "")).lower()
                    if "npu" in text or "hexagon" in text or "qcnspmcdm" in text:
                        found.append(entry)
    return found
