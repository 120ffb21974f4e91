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


def remove_command(path: str, windows: bool, *, folder: bool = True) -> str:
    """Delete ``path`` (a leftover folder, or a file). On Windows through cmd,
    so the same line works in PowerShell too (where ``rmdir`` is Remove-Item)."""
    if windows:
        return f"cmd /c {'rmdir /s /q' if folder else 'del /f /q'} {quote(path, windows)}"
    return f"rm -rf {quote(path, windows)}"


def ensurepip_command(python: str, windows: bool) -> str:
    """Installs the pip bundled with this Python into the environment (the
    stdlib's ``ensurepip``; nothing is downloaded)."""
    return f"{quote(python, windows)} -m ensurepip"


def with_pip_bootstrap(commands: tuple[str, ...], python: str, windows: bool) -> tuple[str, ...]:
    """``commands`` for a target without pip: the first one that runs this
    interpreter's pip is preceded by its ``-m ensurepip`` (once; commands for
    another interpreter, whose pip is not known, are left as they are)."""
    program = quote(python, windows)
    bootstrap = ensurepip_command(python, windows)
    if bootstrap in commands:
        return commands
    for index, command in enumerate(commands):
        if command.startswith(f"{program} -m pip "):
            return (*commands[:index], bootstrap, *commands[index:])
    return commands


# Where a system Python's install goes instead (PEP 668), beside the user's work.
NEW_VENV = ".venv-npu"


def new_venv_command(python: str, windows: bool) -> str:
    """Make the NEW_VENV folder with ``python`` (in the current folder)."""
    return f"{quote(python, windows)} -m venv {NEW_VENV}"


def new_venv_python(windows: bool) -> str:
    """The interpreter of the NEW_VENV folder, as typed from the folder it is in."""
    return f"{NEW_VENV}\\Scripts\\python.exe" if windows else f"{NEW_VENV}/bin/python"
