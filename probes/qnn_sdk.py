"""Probe 5: a QNN / QAIRT SDK installed on the system, and library search paths
that make the loader pick QNN libraries from it instead of the bundled ones."""

from __future__ import annotations

import os
import stat
import sys

from ._util import LazyPattern, open_regular, show, version_in_name
from .base import Context, ProbeOutput

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Any, Dict, List, Tuple

NAME = "qnn_sdk"

ROOT_VARIABLES = ("QNN_SDK_ROOT", "QAIRT_SDK_ROOT", "SNPE_ROOT")

WINDOWS_DEFAULT_ROOTS = (
    r"C:\Qualcomm\AIStack\QAIRT\*",
    r"C:\Qualcomm\AIStack\QNN\*",
    r"C:\Qualcomm\AIStack\SNPE\*",
)
LINUX_DEFAULT_ROOTS = (
    "/opt/qcom/aistack/qairt/*",
    "/opt/qcom/aistack/qnn/*",
    "/opt/qcom/aistack/snpe/*",
)

_QNN_LIB = LazyPattern(r"^(lib)?qnn[a-z0-9]*\.(dll|so)$", ignore_case=True)
_SDK_YAML_VERSION = LazyPattern(r"""(?m)^\s*version\s*:\s*['"]?([0-9][0-9A-Za-z._-]*)""")
_DRIVE = LazyPattern(r"(^|;)[A-Za-z]:(?=[\\/])")
_QNN_PREFIXES = ("qnn", "libqnn")  # every name _QNN_LIB matches starts so (ASCII)


def _sdk_version(root: str) -> Dict[str, Any]:
    """Version from sdk.yaml (authoritative) and from the folder name (a hint)."""
    result: Dict[str, Any] = {
        "from_folder_name": version_in_name(os.path.basename(root.rstrip("\\/")))
    }
    path = os.path.join(root, "sdk.yaml")
    try:
        with open_regular(path) as handle:
            text = handle.read(65536).decode("utf-8", "replace")
    except OSError:
        result["sdk_yaml"] = None
        return result
    match = _SDK_YAML_VERSION.search(text)
    result["sdk_yaml"] = match.group(1) if match else None
    if not match:
        result["sdk_yaml_error"] = "no 'version:' key"
    return result


def _describe_root(root: str, origin: str) -> Dict[str, Any]:
    info: Dict[str, Any] = {"path": show(root), "origin": origin, "exists": os.path.isdir(root)}
    if not info["exists"]:
        return info
    info["version"] = _sdk_version(root)
    lib = os.path.join(root, "lib")
    try:
        names = sorted(os.listdir(lib))
    except OSError:
        names = []
    info["lib_targets"] = [n for n in names if not n.startswith("hexagon-")]
    info["hexagon_folders"] = [n for n in names if n.startswith("hexagon-")]
    return info


def _qnn_libs_in(folder: str) -> List[str]:
    """QNN libraries among a folder's names. PATH folders hold thousands of
    names: one substring test over all of them (every match contains "qnn";
    no other letter folds onto q or n) mostly ends it, and a prefix test
    spares the regex nearly all names of the folders that go on."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    if "qnn" not in "\n".join(names).lower():  # one pass in C: most folders have none
        return []
    return sorted(n for n in names if _may_be_qnn_lib(n) and _QNN_LIB.match(n))


def _may_be_qnn_lib(name: str) -> bool:
    # Non-ASCII names go to the regex: its case folding is Unicode's.
    return not name.isascii() or name[:6].lower().startswith(_QNN_PREFIXES)


def _path_list(
    variable: str, separator: str, listed: Dict[Tuple[int, int], List[str]]
) -> List[Dict[str, Any]]:
    """Each entry of a search-path variable and the QNN libraries in it.
    ``listed`` holds the answers by folder identity (device, inode): PATH
    names folders twice (often /bin and /usr/bin, one folder), and listing a
    folder of thousands of names is the cost here."""
    value = os.environ.get(variable)
    if not value:
        return []
    entries: List[Dict[str, Any]] = []
    for part in value.split(separator):
        if not part:
            continue
        try:
            info = os.stat(part)
        except (OSError, ValueError):  # what os.path.isdir() treats as "not a folder"
            info = None
        is_dir = info is not None and stat.S_ISDIR(info.st_mode)
        if is_dir and info is not None and info.st_ino:
            key = (info.st_dev, info.st_ino)
            if key not in listed:
                listed[key] = _qnn_libs_in(part)
            libs = listed[key]
        else:
            libs = _qnn_libs_in(part)
        entries.append({"path": show(part), "exists": is_dir, "qnn_libraries": libs[:40]})
    return entries


def adsp_library_path() -> Dict[str, Any]:
    """ADSP_LIBRARY_PATH is read by the DSP loader, which splits on ';' on
    every OS: a ':'-separated value (the Unix habit) is one bogus entry."""
    value = os.environ.get("ADSP_LIBRARY_PATH")
    if value is None:
        return {"set": False}
    entries = []
    for part in value.split(";"):
        if not part:
            continue
        entries.append(
            {
                "path": show(part),
                "exists": os.path.isdir(part),
                "skels": sorted(n for n in _qnn_libs_or_skels(part)),
            }
        )
    # A ':' other than a Windows drive letter's means ':' was used as a separator.
    without_drives = _DRIVE.sub(r"\1", value) if sys.platform == "win32" else value
    colon_separated = ":" in without_drives
    return {
        "set": True,
        "value": show(value),
        "entries": entries,
        "colon_separated": colon_separated,
    }


def _qnn_libs_or_skels(folder: str) -> List[str]:
    try:
        return [n for n in os.listdir(folder) if "skel" in n.lower() or n.lower().endswith(".cat")]
    except OSError:
        return []


def run(ctx: Context) -> ProbeOutput:
    out = ProbeOutput()
    roots: List[Dict[str, Any]] = []
    seen = set()
    for variable in ROOT_VARIABLES:
        value = os.environ.get(variable)
        out.put("env_" + variable, show(value) if value is not None else None, "env " + variable)
        if value:
            seen.add(os.path.normcase(os.path.abspath(value)))
            roots.append(_describe_root(value, "env " + variable))
    patterns = WINDOWS_DEFAULT_ROOTS if sys.platform == "win32" else LINUX_DEFAULT_ROOTS
    for pattern in patterns:
        if not os.path.isdir(os.path.dirname(pattern)):
            continue  # glob would find nothing; importing it costs ~1 ms
        import glob

        for root in sorted(glob.glob(pattern)):
            if os.path.normcase(os.path.abspath(root)) in seen:
                continue
            seen.add(os.path.normcase(os.path.abspath(root)))
            roots.append(_describe_root(root, "default install location"))
    out.put("roots", roots, "env vars %s and default install roots" % "/".join(ROOT_VARIABLES))
    loader_vars = ["PATH"] if sys.platform == "win32" else ["LD_LIBRARY_PATH", "PATH"]
    listed: Dict[Tuple[int, int], List[str]] = {}
    for variable in loader_vars:
        entries = [e for e in _path_list(variable, os.pathsep, listed) if e["qnn_libraries"]]
        out.put("qnn_on_" + variable.lower(), entries, "env " + variable)
    out.put("adsp_library_path", adsp_library_path(), "env ADSP_LIBRARY_PATH")
    return out
