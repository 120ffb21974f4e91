"""Android queries (Termux, or an app's embedded Python), one seam each."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Any, Dict, List, Mapping, Optional

PROPERTIES = ("ro.soc.model", "ro.soc.manufacturer", "ro.board.platform", "ro.hardware")
# Where vendor QNN libraries live; an app's own copies can be shadowed by them.
VENDOR_LIBRARY_DIRS = (
    "vendor/lib64",
    "vendor/lib",
    "odm/lib64",
    "system/lib64",
    "vendor/lib/rfsa/adsp",
    "vendor/dsp/cdsp",
)


def is_android(root: str = "/", environ: Optional[Mapping[str, str]] = None) -> bool:
    env = os.environ if environ is None else environ
    return (
        sys.platform == "android"
        or bool(env.get("ANDROID_ROOT"))
        or os.path.isfile(os.path.join(root, "system/build.prop"))
    )


def getprop(name: str) -> Optional[str]:
    """One system property through the ``getprop`` tool (the seam)."""
    import subprocess  # only on Android: elsewhere the probe program never starts one

    try:
        done = subprocess.run(
            ["getprop", name],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=3,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    value = done.stdout[:4096].decode("utf-8", "replace").strip()
    return value or None


def properties() -> Dict[str, Optional[str]]:
    return {name: getprop(name) for name in PROPERTIES}


def vendor_qnn_libraries(root: str = "/") -> List[Dict[str, Any]]:
    """QNN libraries and HTP skels the system image ships, folder by folder."""
    found: List[Dict[str, Any]] = []
    for folder in VENDOR_LIBRARY_DIRS:
        try:
            names = os.listdir(os.path.join(root, folder))
        except OSError:
            continue
        qnn = sorted(n for n in names if n.lower().startswith("libqnn") and n.endswith(".so"))
        if qnn:
            found.append({"path": "/" + folder, "qnn_libraries": qnn[:60]})
    return found
