"""A test double of a target interpreter: a real executable that runs a
Python body. A ``/bin/sh`` wrapper ``exec``s Python (same pid, signals and
exit codes), so no shebang carries a long venv path (Linux caps it at 127 bytes)."""

from __future__ import annotations

import shlex
import stat
import sys
from pathlib import Path

BODY = "fake_body.py"


def write_fake_python(folder: Path, body: str) -> Path:
    """``folder/python`` running ``body``; ``sys.argv[0]`` is ``folder/fake_body.py``."""
    script = folder / BODY
    script.write_text(body + "\n", encoding="utf-8")
    wrapper = folder / "python"
    wrapper.write_text(
        f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(script))} "$@"\n',
        encoding="utf-8",
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper
