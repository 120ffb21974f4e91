"""Probe 1: the interpreter itself, as the target process sees it."""

from __future__ import annotations

import os
import site
import struct
import sys
import sysconfig

from ._util import (
    is_windows,
    libc_version,
    machine,
    normalize_arch,
    python_version_fields,
    show,
    uname_fields,
    working_folder,
)
from .base import Context, ProbeOutput

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Any, Dict, List, Optional

NAME = "interpreter"


def marker_environment() -> Dict[str, str]:
    """PEP 508 marker variables, computed like ``packaging.markers``, so that
    qnndoctor can evaluate requirement markers for *this* interpreter."""
    info = sys.implementation.version
    iver = "{0.major}.{0.minor}.{0.micro}".format(info)
    if info.releaselevel != "final":
        iver += info.releaselevel[0] + str(info.serial)
    system, release, version, machine_name = uname_fields()
    full_version, implementation = python_version_fields()
    return {
        "implementation_name": sys.implementation.name,
        "implementation_version": iver,
        "os_name": os.name,
        "platform_machine": machine_name,
        "platform_release": release,
        "platform_system": system,
        "platform_version": version,
        "python_full_version": full_version,
        "platform_python_implementation": implementation,
        "python_version": ".".join(full_version.split(".")[:2]),
        "sys_platform": sys.platform,
    }


def locale_encoding() -> str:
    """``locale.getpreferredencoding(False)``."""
    import locale

    return locale.getpreferredencoding(False)


def _user_site() -> Optional[str]:
    try:
        return show(site.getusersitepackages())
    except Exception:
        return None


def _site_packages() -> List[str]:
    getter = getattr(site, "getsitepackages", None)
    if getter is None:  # virtualenv < 20 ships a site.py without it
        paths = sysconfig.get_paths()
        return [show(paths["purelib"]), show(paths["platlib"])]
    return [show(path) for path in getter()]


def venv_created_by(prefix: str) -> Optional[str]:
    """Which tool made this venv, from its pyvenv.cfg: uv writes ``uv = X``,
    virtualenv ``virtualenv = X``, the stdlib's venv neither (None: no
    pyvenv.cfg). It decides how a missing pip is best put back."""
    try:
        with open(os.path.join(prefix, "pyvenv.cfg"), encoding="utf-8", errors="replace") as f:
            text = f.read(64 * 1024)
    except OSError:
        return None
    keys: Dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            keys[key.strip().lower()] = value.strip()
    for tool in ("uv", "virtualenv"):
        if tool in keys:
            return "%s %s" % (tool, keys[tool]) if keys[tool] else tool
    return "venv"


def run(ctx: Context) -> ProbeOutput:
    out = ProbeOutput()
    out.put("executable", show(sys.executable), "sys.executable")
    base_exe = getattr(sys, "_base_executable", None)
    out.put("base_executable", show(base_exe) if base_exe else None, "sys._base_executable")
    out.put("version", sys.version, "sys.version")
    out.put("version_info", list(sys.version_info[:3]), "sys.version_info")
    out.put("implementation", sys.implementation.name, "sys.implementation.name")
    out.put("cache_tag", sys.implementation.cache_tag, "sys.implementation.cache_tag")
    out.put("pointer_bits", struct.calcsize("P") * 8, "struct.calcsize('P')")
    out.put("sysconfig_platform", sysconfig.get_platform(), "sysconfig.get_platform()")
    out.put("platform_machine", machine(), "platform.machine()")
    out.put("sys_platform", sys.platform, "sys.platform")
    out.put("soabi", sysconfig.get_config_var("SOABI"), "sysconfig SOABI")
    out.put("ext_suffix", sysconfig.get_config_var("EXT_SUFFIX"), "sysconfig EXT_SUFFIX")
    # The architecture the interpreter was *built* for: the reliable answer,
    # unlike platform.machine(), which reports the OS's idea on some versions.
    plat = sysconfig.get_platform()
    built_for = plat.split("-", 1)[1] if "-" in plat else plat
    if plat.startswith("macosx") and plat.endswith("universal2"):
        built_for = machine()
    out.put("build_arch", normalize_arch(built_for), "sysconfig.get_platform()")
    gil_disabled = sysconfig.get_config_var("Py_GIL_DISABLED")
    out.put("free_threaded", bool(gil_disabled), "sysconfig Py_GIL_DISABLED")
    is_gil_enabled = getattr(sys, "_is_gil_enabled", None)
    out.put(
        "gil_enabled",
        bool(is_gil_enabled()) if is_gil_enabled else True,
        "sys._is_gil_enabled()",
    )
    out.put("prefix", show(sys.prefix), "sys.prefix")
    out.put("base_prefix", show(getattr(sys, "base_prefix", sys.prefix)), "sys.base_prefix")
    in_venv = getattr(sys, "base_prefix", sys.prefix) != sys.prefix or hasattr(sys, "real_prefix")
    out.put("in_venv", in_venv, "sys.prefix != sys.base_prefix")
    out.put(
        "venv_created_by",
        venv_created_by(sys.prefix) if in_venv else None,
        "pyvenv.cfg in sys.prefix (uv = / virtualenv = keys)",
    )
    # PEP 668: outside a venv, this file in the stdlib folder makes pip refuse
    # to install ("externally-managed-environment"), as on Debian 12+, Ubuntu
    # 23.04+, Fedora 38+ and Homebrew.
    marker = os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")
    out.put(
        "externally_managed",
        show(marker) if not in_venv and os.path.isfile(marker) else None,
        "EXTERNALLY-MANAGED in sysconfig stdlib, outside a venv (PEP 668)",
    )
    conda = os.path.isdir(os.path.join(sys.prefix, "conda-meta"))
    out.put("conda", conda, "conda-meta folder in sys.prefix")
    out.put("user_site_enabled", bool(site.ENABLE_USER_SITE), "site.ENABLE_USER_SITE")
    out.put("user_site", _user_site(), "site.getusersitepackages()")
    out.put("site_packages", _site_packages(), "site.getsitepackages()")
    out.put("utf8_mode", bool(sys.flags.utf8_mode), "sys.flags.utf8_mode")
    out.put("filesystem_encoding", sys.getfilesystemencoding(), "sys.getfilesystemencoding()")
    out.put("filesystem_errors", sys.getfilesystemencodeerrors(), "sys.getfilesystemencodeerrors()")
    out.put("locale_encoding", locale_encoding(), "locale.getpreferredencoding(False)")
    code_pages: Optional[Dict[str, int]] = None
    if is_windows():
        from . import os_windows  # here: elsewhere the probe program never loads it

        code_pages = os_windows.code_pages()
    out.put("windows_code_pages", code_pages, "GetACP()/GetOEMCP()")
    out.put("marker_environment", marker_environment(), "platform/sys (PEP 508)")
    libc, libc_release = libc_version() if sys.platform.startswith("linux") else ("", "")
    out.put(
        "libc",
        {"name": libc or None, "version": libc_release or None},
        "platform.libc_ver() (decides manylinux wheel tags)",
    )
    entries: List[Dict[str, Any]] = []
    pythonpath = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    for index, entry in enumerate(sys.path):
        entries.append(
            {"index": index, "path": show(entry), "from_pythonpath": entry in pythonpath}
        )
    out.put("sys_path", entries, "sys.path")
    here = working_folder()
    out.put(
        "cwd",
        show(here) if here is not None else None,
        "os.getcwd()",
    )
    return out
