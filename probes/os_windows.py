"""Windows queries, one small seam each.

Tests on Linux replace these functions with recorded real answers; nothing else
in the probes touches ``ctypes.windll`` or ``winreg``. Imports of Windows-only
modules stay inside the functions.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Any, Dict, Iterator, List, Optional, Tuple


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


def _subkeys(key: Any) -> Iterator[str]:
    """The names of a registry key's subkeys (winreg enumerates by index only)."""
    import winreg  # type: ignore[import-not-found,unused-ignore]

    index = 0
    while True:
        try:
            name = winreg.EnumKey(key, index)  # type: ignore[attr-defined,unused-ignore]
        except OSError:
            return
        index += 1
        yield str(name)


def _present_values(key: Any, fields: Tuple[str, ...]) -> Dict[str, Any]:
    """The values of ``fields`` that the key has, as stored."""
    import winreg  # type: ignore[import-not-found,unused-ignore]

    values: Dict[str, Any] = {}
    for field in fields:
        try:
            values[field] = winreg.QueryValueEx(key, field)[0]  # type: ignore[attr-defined,unused-ignore]
        except OSError:
            continue
    return values


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
        for class_guid in _subkeys(classes):
            try:
                class_key = winreg.OpenKey(classes, class_guid)  # type: ignore[attr-defined,unused-ignore]
            except OSError:
                continue
            with class_key:
                for instance in _subkeys(class_key):
                    try:
                        with winreg.OpenKey(class_key, instance) as inst:  # type: ignore[attr-defined,unused-ignore]
                            values = _present_values(inst, _DRIVER_FIELDS)
                    except OSError:
                        continue
                    entry: Dict[str, Any] = {"class_guid": class_guid, "instance": instance}
                    entry.update((k, str(v)) for k, v in values.items())
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


def services_with_prefix(prefixes: Tuple[str, ...]) -> List[str]:
    """Names of the services (``HKLM\\SYSTEM\\CurrentControlSet\\Services``)
    that start with one of ``prefixes``, case-insensitively."""
    import winreg  # type: ignore[import-not-found,unused-ignore]

    root = "SYSTEM\\CurrentControlSet\\Services"
    with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, root) as services:  # type: ignore[attr-defined,unused-ignore]
        return sorted(name for name in _subkeys(services) if name.lower().startswith(prefixes))


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
    names = list(NPU_SERVICES)
    try:
        # Chip-specific service names ("qcnspmcdm8380") as well as the plain ones.
        names += [n for n in services_with_prefix(NPU_SERVICES) if n.lower() not in NPU_SERVICES]
    except OSError as exc:
        found.append({"service": "*", "error": "%s: %s" % (type(exc).__name__, exc)})
    for service in names:
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


# Device Manager problem codes (CM_PROB_*) a user meets with an NPU, in the
# words of Microsoft's "Device Manager error messages" page.
PROBLEM_CODES = {
    1: "the device is not configured correctly (code 1)",
    3: "the driver may be corrupted, or the system is low on memory (code 3)",
    10: "the device cannot start (code 10)",
    18: "the drivers for this device need to be reinstalled (code 18)",
    22: "the device is disabled (code 22)",
    24: "the device is not present, not working, or lacks its drivers (code 24)",
    28: "the drivers for this device are not installed (code 28)",
    31: "the device is not working properly: Windows cannot load its drivers (code 31)",
    39: "Windows cannot load the driver: it may be corrupted or missing (code 39)",
    43: "Windows stopped the device because it reported problems (code 43)",
    45: "the device is not connected (code 45)",
    52: "Windows cannot verify the driver's digital signature (code 52)",
}


def npu_devices() -> List[Dict[str, Any]]:
    """Present devices that are an NPU (Compute Accelerator class, or a
    description naming an NPU / Hexagon), with their Device Manager status
    and problem code, through SetupAPI and CfgMgr32."""
    import ctypes
    from ctypes import wintypes

    setupapi = ctypes.WinDLL("setupapi", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]
    cfgmgr = ctypes.WinDLL("cfgmgr32")  # type: ignore[attr-defined,unused-ignore]

    class DevInfoData(ctypes.Structure):
        _fields_ = [
            ("cbSize", wintypes.DWORD),
            ("ClassGuid", ctypes.c_byte * 16),
            ("DevInst", wintypes.DWORD),
            ("Reserved", ctypes.c_void_p),
        ]

    setupapi.SetupDiGetClassDevsW.restype = ctypes.c_void_p
    setupapi.SetupDiGetClassDevsW.argtypes = [
        ctypes.c_void_p,
        wintypes.LPCWSTR,
        wintypes.HWND,
        wintypes.DWORD,
    ]
    setupapi.SetupDiEnumDeviceInfo.argtypes = [
        ctypes.c_void_p,
        wintypes.DWORD,
        ctypes.POINTER(DevInfoData),
    ]
    setupapi.SetupDiGetDeviceRegistryPropertyW.argtypes = [
        ctypes.c_void_p,
        ctypes.POINTER(DevInfoData),
        wintypes.DWORD,
        ctypes.POINTER(wintypes.DWORD),
        ctypes.c_void_p,
        wintypes.DWORD,
        ctypes.POINTER(wintypes.DWORD),
    ]
    setupapi.SetupDiDestroyDeviceInfoList.argtypes = [ctypes.c_void_p]
    digcf_present, digcf_allclasses = 0x2, 0x4
    handle = setupapi.SetupDiGetClassDevsW(None, None, None, digcf_present | digcf_allclasses)
    if handle in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_last_error(), "SetupDiGetClassDevsW failed")  # type: ignore[attr-defined,unused-ignore]

    def prop(data: DevInfoData, code: int) -> Optional[str]:
        buffer = ctypes.create_unicode_buffer(1024)
        ok = setupapi.SetupDiGetDeviceRegistryPropertyW(
            handle, ctypes.byref(data), code, None, buffer, ctypes.sizeof(buffer), None
        )
        return buffer.value if ok else None

    found: List[Dict[str, Any]] = []
    try:
        index = 0
        while True:
            data = DevInfoData()
            data.cbSize = ctypes.sizeof(DevInfoData)
            if not setupapi.SetupDiEnumDeviceInfo(handle, index, ctypes.byref(data)):
                break
            index += 1
            description = prop(data, 0x0) or ""  # SPDRP_DEVICEDESC
            friendly = prop(data, 0xC)  # SPDRP_FRIENDLYNAME
            device_class = prop(data, 0x7)  # SPDRP_CLASS
            text = (description + " " + (friendly or "")).lower()
            if device_class != "ComputeAccelerator" and "npu" not in text and "hexagon" not in text:
                continue
            status, problem = wintypes.ULONG(0), wintypes.ULONG(0)
            result = cfgmgr.CM_Get_DevNode_Status(
                ctypes.byref(status), ctypes.byref(problem), data.DevInst, 0
            )
            instance = ctypes.create_unicode_buffer(512)
            cfgmgr.CM_Get_Device_IDW(data.DevInst, instance, 512, 0)
            found.append(
                {
                    "description": description,
                    "friendly_name": friendly,
                    "class": device_class,
                    "instance_id": instance.value,
                    "cm_result": int(result),
                    "status_flags": int(status.value),
                    "problem_code": int(problem.value),
                }
            )
    finally:
        setupapi.SetupDiDestroyDeviceInfoList(handle)
    return found


def describe_devices(devices: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Device Manager's view of each NPU device: started, or its problem."""
    described = []
    for device in devices:
        flags = int(device.get("status_flags") or 0)
        problem = int(device.get("problem_code") or 0)
        entry = dict(device)
        entry["started"] = bool(flags & 0x8)  # DN_STARTED
        entry["has_problem"] = bool(flags & 0x400) or problem != 0  # DN_HAS_PROBLEM
        entry["problem"] = (
            PROBLEM_CODES.get(problem, "problem code %d" % problem) if problem else None
        )
        if device.get("cm_result"):
            entry["problem"] = "status could not be read (CONFIGRET %s)" % device["cm_result"]
        described.append(entry)
    return described


DISPLAY_CLASS = "{4d36e968-e325-11ce-bfc1-08002be10318}"


def gpu_drivers() -> List[Dict[str, Any]]:
    """Display adapters' drivers (Adreno on Snapdragon) with the OpenCL
    driver they register (``OpenCLDriverName``): the QNN GPU backend needs
    an OpenCL runtime."""
    import winreg  # type: ignore[import-not-found,unused-ignore]

    root = "SYSTEM\\CurrentControlSet\\Control\\Class\\" + DISPLAY_CLASS
    found: List[Dict[str, Any]] = []
    hklm = winreg.HKEY_LOCAL_MACHINE  # type: ignore[attr-defined,unused-ignore]
    try:
        display = winreg.OpenKey(hklm, root)  # type: ignore[attr-defined,unused-ignore]
    except FileNotFoundError:
        return found
    with display:
        for instance in _subkeys(display):
            if not instance.isdigit():
                continue
            try:
                with winreg.OpenKey(display, instance) as key:  # type: ignore[attr-defined,unused-ignore]
                    values = _present_values(key, (*_DRIVER_FIELDS, "OpenCLDriverName"))
            except OSError:
                continue
            entry: Dict[str, Any] = {"instance": instance}
            entry.update(
                (k, [str(v) for v in value] if isinstance(value, list) else str(value))
                for k, value in values.items()
            )
            found.append(entry)
    return found


def opencl_vendors() -> List[str]:
    """OpenCL ICDs registered system-wide (``HKLM\\SOFTWARE\\Khronos\\OpenCL\\Vendors``)."""
    import winreg  # type: ignore[import-not-found,unused-ignore]

    names: List[str] = []
    try:
        key = winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, "SOFTWARE\\Khronos\\OpenCL\\Vendors")  # type: ignore[attr-defined,unused-ignore]
    except FileNotFoundError:
        return names
    with key:
        index = 0
        while True:
            try:
                name, _value, _kind = winreg.EnumValue(key, index)  # type: ignore[attr-defined,unused-ignore]
            except OSError:
                break
            index += 1
            names.append(str(name))
    return names
