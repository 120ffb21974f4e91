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


def service_image_path(name: str) -> Optional[str]:
    """``ImagePath`` of a driver service (``HKLM\\SYSTEM\\CurrentControlSet\\Services\\<name>``);
    None when the service does not exist."""
    import winreg  # type: ignore[import-not-found,unused-ignore]

    key_path = "SYSTEM\\CurrentControlSet\\Services\\" + name
    try:
        with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, key_path) as key:  # type: ignore[attr-defined,unused-ignore]
            value, _kind = winreg.QueryValueEx(key, "ImagePath")  # type: ignore[attr-defined,unused-ignore]
    except FileNotFoundError:
        return None
    return str(value) if value else None


def file_version(path: str) -> Optional[str]:
    """The fixed file version ("30.0.220.3000") from a DLL's VERSIONINFO,
    through version.dll; None when it has none."""
    import ctypes
    from ctypes import wintypes

    version = ctypes.WinDLL("version", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]
    size = version.GetFileVersionInfoSizeW(path, None)
    if not size:
        return None
    buffer = ctypes.create_string_buffer(size)
    if not version.GetFileVersionInfoW(path, 0, size, buffer):
        return None
    pointer = ctypes.c_void_p()
    length = wintypes.UINT()
    if not version.VerQueryValueW(buffer, "\\", ctypes.byref(pointer), ctypes.byref(length)):
        return None
    if length.value < 52 or not pointer.value:
        return None
    fixed = (wintypes.DWORD * 13).from_address(pointer.value)
    if fixed[0] != 0xFEEF04BD:
        return None
    ms, ls = fixed[2], fixed[3]  # dwFileVersionMS, dwFileVersionLS
    return "%d.%d.%d.%d" % (ms >> 16, ms & 0xFFFF, ls >> 16, ls & 0xFFFF)


# The NPU driver's runtime services: the Hexagon NPU MCDM driver, and the
# older FastRPC driver as a fallback (folder names as in llama.cpp#22204).
NPU_SERVICES = ("qcnspmcdm", "qcadsprpc")
NPU_RUNTIME_FILES = ("HtpUsrDrv.dll", "libcdsprpc.dll")


def _image_folder(image_path: str, system_root: str) -> str:
    """The folder of a service's ImagePath, in a form ``open`` understands."""
    import ntpath

    path = image_path.strip().strip('"')
    lowered = path.lower()
    for prefix in ("\\systemroot\\", "%systemroot%\\"):
        if lowered.startswith(prefix):
            path = ntpath.join(system_root, path[len(prefix) :])
            break
    else:
        if lowered.startswith("\\??\\"):
            path = path[4:]
        elif lowered.startswith("system32\\"):
            path = ntpath.join(system_root, path)
    return ntpath.dirname(path)


def npu_runtime(environ: Optional[Dict[str, str]] = None) -> List[Dict[str, Any]]:
    """Per NPU service: its ImagePath, the DriverStore folder it runs from,
    and the file versions of the NPU runtime DLLs there, each with its source."""
    import os

    env = os.environ if environ is None else environ
    system_root = env.get("SystemRoot") or env.get("SYSTEMROOT") or "C:\\Windows"
    found: List[Dict[str, Any]] = []
    for service in NPU_SERVICES:
        key = "HKLM\\SYSTEM\\CurrentControlSet\\Services\\%s\\ImagePath" % service
        try:
            image = service_image_path(service)
        except OSError as exc:
            found.append({"service": service, "error": "%s: %s" % (type(exc).__name__, exc)})
            continue
        if image is None:
            continue
        folder = _image_folder(image, system_root)
        # Off Windows (tests over a recorded tree) the same path with '/'.
        native = folder if os.sep == "\\" else folder.replace("\\", os.sep)
        entry: Dict[str, Any] = {
            "service": service,
            "image_path": image,
            "image_path_source": key,
            "folder": folder,
            "folder_exists": os.path.isdir(native),
            "files": [],
        }
        for name in NPU_RUNTIME_FILES:
            path = folder + "\\" + name
            local = os.path.join(native, name)
            item: Dict[str, Any] = {"name": name, "path": path, "exists": os.path.isfile(local)}
            if item["exists"]:
                try:
                    item["version"] = file_version(local)
                    item["version_source"] = "VERSIONINFO of " + path
                except OSError as exc:
                    item["error"] = "%s: %s" % (type(exc).__name__, exc)
            entry["files"].append(item)
        found.append(entry)
    return found
