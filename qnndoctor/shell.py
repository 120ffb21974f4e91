"""Fix commands as a person types them: quoted for the target's shell, and
always run by the target's own interpreter (never a bare ``pip``)."""

from __future__ import annotations

import shlex

_CMD_SPECIAL = " &()[]{}^=;!'+,`~<>|\""


def quote(text: str, windows: bool) -> str:
    if windows:
        return f'"{text}"' if any(c in text for c in _CMD_SPECIAL) else text
    return shlex.quote(text)


def pip_command(python: str, windows: bool, *args: str) -> str:
    return " ".join([quote(python, windows), "-m", "pip", *(quote(a, windows) for a in args)])
