"""A resolver profile to vary in tests: native ARM64 CPython on a Snapdragon X
Elite (HTP v73) under Windows, no system QNN SDK."""

from __future__ import annotations

import dataclasses
from typing import Any

from qnndoctor.resolver.recommend import Profile


def win_arm64(**changes: Any) -> Profile:
    base = Profile(
        python=(3, 12),
        free_threaded=False,
        os="windows",
        arch="arm64",
        native_arch="arm64",
        emulated=False,
        glibc=None,
        htp_arch=73,
        htp_arch_source="SC8380XP",
        system_qnn=None,
        system_qnn_source=None,
        python_exe=r"C:\py\python.exe",
    )
    return dataclasses.replace(base, **changes)
