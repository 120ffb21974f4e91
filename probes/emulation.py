"""Probe 2: is this process emulated, and what is the machine really?

Each OS answers differently; every OS query goes through one seam in
``os_<name>.py``. ``platform.machine()`` alone is not trusted: on Windows on
ARM it reports the emulated machine on some Python versions and the native
one on others.
"""

from __future__ import annotations

import os
import sys

from . import os_linux
from ._util import PE_MACHINES, binary_format, machine, normalize_arch, show
from .base import Context, ProbeOutput

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Any, Dict, Optional

NAME = "emulation"


def _binary_arch(path: Optional[str]) -> Dict[str, Any]:
    if not path:
        return {"path": None}
    try:
        info = binary_format(os.path.realpath(path))
    except OSError as exc:
        return {"path": show(path), "error": "%s: %s" % (type(exc).__name__, exc)}
    info["path"] = show(path)
    info["arch"] = normalize_arch(info.get("machine"))
    return info


def _windows(out: ProbeOutput, build_arch: Optional[str]) -> None:
    from . import os_windows  # here: elsewhere the probe program never loads it

    answer = os_windows.is_wow64_process2()
    out.put(
        "is_wow64_process2",
        None if answer is None else {"process_machine": answer[0], "native_machine": answer[1]},
        "kernel32.IsWow64Process2",
    )
    native: Optional[str] = None
    wow64_guest: Optional[str] = None
    if answer is not None:
        native = normalize_arch(PE_MACHINES.get(answer[1]))
        if answer[0]:
            wow64_guest = normalize_arch(PE_MACHINES.get(answer[0]))
    exe = _binary_arch(sys.executable)
    base = _binary_arch(getattr(sys, "_base_executable", None))
    out.put("executable_binary", exe, "PE header of sys.executable")
    out.put("base_executable_binary", base, "PE header of sys._base_executable")
    # The running code is what sysconfig says it was built for; the PE header
    # of the base interpreter backs that up (a venv's python.exe is a launcher).
    process = build_arch or base.get("arch") or exe.get("arch")
    out.put("process_arch", process, "sysconfig.get_platform() / PE header")
    out.put("native_arch", native, "IsWow64Process2 native machine")
    emulated: Optional[bool] = None
    emulator: Optional[str] = None
    if native and process:
        emulated = native != process
        if emulated:
            if wow64_guest:
                emulator = "WOW64 (%s guest)" % wow64_guest
            elif native == "arm64" and process == "x86_64":
                emulator = "x64 emulation on ARM64 (Prism/xtajit64)"
            else:
                emulator = "unknown"
    out.put("emulated", emulated, "process_arch != native_arch")
    out.put("emulator", emulator, "IsWow64Process2 + interpreter build")


def _macos(out: ProbeOutput, build_arch: Optional[str]) -> None:
    from . import os_macos  # here: elsewhere the probe program never loads it

    translated = os_macos.proc_translated()
    out.put("proc_translated", translated, "sysctlbyname(sysctl.proc_translated)")
    process = build_arch or normalize_arch(machine())
    out.put("process_arch", process, "sysconfig.get_platform() / platform.machine()")
    native = "arm64" if translated == 1 else process
    out.put("native_arch", native, "sysctl.proc_translated")
    out.put("emulated", None if translated is None else translated == 1, "sysctl.proc_translated")
    out.put("emulator", "Rosetta 2" if translated == 1 else None, "sysctl.proc_translated")


_COMPAT = {("x86", "x86_64"), ("arm", "arm64")}


def _linux(out: ProbeOutput, build_arch: Optional[str]) -> None:
    exe = _binary_arch(sys.executable)
    out.put("executable_binary", exe, "ELF header of sys.executable")
    kernel = normalize_arch(os.uname().machine)
    out.put("kernel_arch", kernel, "os.uname().machine")
    cpu_kind = os_linux.cpuinfo_kind()
    out.put("cpuinfo_kind", cpu_kind, "/proc/cpuinfo")
    binfmt = os_linux.binfmt_emulators()
    out.put("binfmt_emulators", binfmt, "/proc/sys/fs/binfmt_misc")
    process = exe.get("arch") or build_arch
    out.put("process_arch", process, "ELF header of sys.executable")
    native = kernel
    # qemu-user reports the guest's machine from uname(); cpuinfo is the host's.
    cpu_native = {"x86": "x86_64", "arm": "arm64"}.get(cpu_kind or "")
    family = {"x86_64": "x86", "x86": "x86", "arm64": "arm", "arm": "arm"}
    if cpu_native and family.get(kernel or "") != cpu_kind:
        native = cpu_native
    out.put("native_arch", native, "os.uname() and /proc/cpuinfo")
    emulated: Optional[bool] = None
    emulator: Optional[str] = None
    if process and native:
        emulated = process != native and (process, native) not in _COMPAT
        if emulated:
            emulator = "qemu-user (binfmt_misc)" if binfmt else "user-mode emulator"
    out.put("emulated", emulated, "ELF machine vs kernel/cpuinfo machine")
    out.put("emulator", emulator, "/proc/sys/fs/binfmt_misc")


def run(ctx: Context) -> ProbeOutput:
    out = ProbeOutput()
    build_arch = ctx.value("interpreter", "build_arch")
    if sys.platform == "win32":
        _windows(out, build_arch)
    elif sys.platform == "darwin":
        _macos(out, build_arch)
    elif sys.platform.startswith("linux"):
        _linux(out, build_arch)
    else:
        out.put("emulated", None, "unsupported platform %s" % sys.platform)
    out.put("platform_machine", machine(), "platform.machine()")
    return out
