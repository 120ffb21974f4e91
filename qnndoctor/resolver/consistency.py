"""Commands as they work with the target: every command is typed
the same in PowerShell and cmd (``shell_neutral``), and works with the target's
pip as it is (``PipTarget``): a venv without pip first gets its bundled one
(``-m ensurepip``); a system Python that pip refuses to change (PEP 668) gets
the recommendation's new venv instead. The command stage
(``resolver/fixes.py``) applies it to every finding's fix, ``model`` and
``fix`` to theirs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..facts.probed import Facts, externally_managed, target_pip
from ..rules.findings import Fix
from ..shell import new_venv_command, quote, with_pip_bootstrap

_SYSTEM_MANAGED = (
    "This Python is the system's (PEP 668): pip refuses to change it, so set up "
    "onnxruntime-qnn in a new virtual environment instead (the recommendation's commands):"
)
_SYSTEM_MANAGED_NO_VENV = (
    "This Python is the system's (PEP 668): pip refuses to change it; run these pip "
    "commands in a virtual environment made with it (`{make_venv}`)."
)

# A Windows command that starts with a quoted program path: PowerShell
# needs `&` before it, which cmd rejects.
_QUOTED_WINDOWS_PROGRAM = re.compile(r'^"([A-Za-z]:\\[^"]*)\\([^"\\]+\.exe)"( .*)?$')


def shell_neutral(commands: tuple[str, ...]) -> tuple[str, ...]:
    """The same commands, typed the same in PowerShell and cmd: a run of
    commands starting with one quoted program path becomes ``pushd "folder"``,
    ``.\\program ...`` lines and ``popd``."""
    result: list[str] = []
    folder_open: str | None = None
    for command in commands:
        match = _QUOTED_WINDOWS_PROGRAM.match(command)
        folder = match.group(1) if match else None
        if folder_open is not None and folder != folder_open:
            result.append("popd")
            folder_open = None
        if match is None:
            result.append(command)
            continue
        if folder_open is None:
            result.append(f'pushd "{folder}"')
            folder_open = folder
        result.append(f".\\{match.group(2)}{match.group(3) or ''}")
    if folder_open is not None:
        result.append("popd")
    return tuple(result)


@dataclass(frozen=True)
class PipTarget:
    """The target's interpreter as its pip commands name it, and what its pip
    can do there (facts.target_pip; a system Python pip refuses, PEP 668)."""

    python: str
    windows: bool
    pip: str = "unknown"
    system_managed: bool = False

    @classmethod
    def of(cls, facts: Facts) -> PipTarget:
        return cls(
            str(facts.value("interpreter", "executable") or "python"),
            facts.value("interpreter", "sys_platform") == "win32",
            target_pip(facts),
            externally_managed(facts) is not None,
        )

    def runs_pip(self, commands: tuple[str, ...]) -> bool:
        program = f"{quote(self.python, self.windows)} -m pip "
        return any(c.startswith(program) for c in commands)

    def fitted(self, fix: Fix, instead: tuple[str, ...] = ()) -> Fix:
        """``fix`` as it works with this target's pip, typed for both Windows
        shells: a system Python's pip commands give way to ``instead`` (the
        recommendation's new venv) or say where to run them; a venv without
        pip gets its bundled one first."""
        found = fix.commands
        if self.system_managed and self.runs_pip(found):
            if instead:
                return Fix(f"{fix.text} {_SYSTEM_MANAGED}", instead)
            where = _SYSTEM_MANAGED_NO_VENV.format(
                make_venv=new_venv_command(self.python, self.windows)
            )
            return Fix(f"{fix.text} {where}", shell_neutral(found))
        if self.pip == "absent":
            found = with_pip_bootstrap(found, self.python, self.windows)
        return replace(fix, commands=shell_neutral(found))
