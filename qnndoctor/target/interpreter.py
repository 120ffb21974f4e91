"""Choosing the interpreter to diagnose (``--python PATH|auto``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..children.runner import Runner

# The folder of Windows' app execution aliases: on a fresh Windows its
# python.exe only opens the Microsoft Store (docs.python.org/3/using/windows.html,
# "Troubleshooting"). ``auto`` tries it last, after the py launcher.
_ALIAS_FOLDER = ("microsoft", "windowsapps")
_PY_LAUNCHER_TIMEOUT_S = 15.0


def _which(name: str, path: str | None) -> str | None:
    import shutil  # only for PATH lookups; keeps the common start-up light

    return shutil.which(name, path=path)


def _all_on_path(name: str, path: str | None) -> Iterator[str]:
    """Every ``name`` on PATH, in PATH order (``_which`` gives only the first)."""
    for folder in (path if path is not None else os.environ.get("PATH", "")).split(os.pathsep):
        hit = _which(name, path=folder) if folder else None
        if hit:
            yield hit


def is_app_alias(path: str) -> bool:
    """Whether ``path`` is in Windows' app execution alias folder
    (``...\\Microsoft\\WindowsApps``), judged by its path alone."""
    folders = [part.lower() for part in PureWindowsPath(path).parts[:-1]]
    return tuple(folders[-2:]) == _ALIAS_FOLDER


def _py_launcher_default(launcher: str, runner: Runner | None) -> str | None:
    """The interpreter the Windows py launcher starts by default, or None when
    it does not answer with an existing file."""
    if runner is None:
        from ..children.runner import SubprocessRunner

        runner = SubprocessRunner()
    completed = runner.run(
        [launcher, "-c", "import sys; print(sys.executable)"], timeout=_PY_LAUNCHER_TIMEOUT_S
    )
    lines = completed.stdout_text().strip().splitlines()
    if completed.exit_code != 0 or not lines or not Path(lines[-1]).is_file():
        return None
    return lines[-1]


class TargetError(Exception):
    """The requested interpreter does not exist or cannot be run."""


@dataclass(frozen=True)
class Target:
    python: str
    how_chosen: str

    def to_json(self) -> dict[str, str]:
        return {"python": self.python, "how_chosen": self.how_chosen}


def _python_in_env(root: Path) -> Path | None:
    for candidate in (
        root / "bin" / "python",
        root / "bin" / "python3",
        root / "Scripts" / "python.exe",
        root / "python.exe",
    ):
        if candidate.is_file():
            return candidate
    return None


def _no_python_in(spec: str, root: Path) -> str:
    """Why an environment folder has no interpreter: a venv whose base Python
    was removed or upgraded keeps ``bin/python`` as a link to nothing."""
    for name in ("bin/python", "bin/python3", "Scripts/python.exe"):
        link = root / name
        if link.is_symlink() and not link.exists():
            return (
                f"{spec}: {name} is a link to {link.readlink()}, which does not exist "
                "(the Python this environment was made with is gone): make the environment again"
            )
    return f"{spec} is a folder without a python in bin/ or Scripts/"


def resolve(
    spec: str | None,
    environ: Mapping[str, str] | None = None,
    *,
    runner: Runner | None = None,
) -> Target:
    """Turn the ``--python`` value into an interpreter path and say why.
    ``runner`` asks the py launcher for its default under ``auto``."""
    env = os.environ if environ is None else environ
    if spec is None:
        return Target(sys.executable, "default: the interpreter qnndoctor runs in")
    if spec == "auto":
        for variable in ("VIRTUAL_ENV", "CONDA_PREFIX"):
            root = env.get(variable)
            if root:
                found = _python_in_env(Path(root))
                if found is None:
                    raise TargetError(f"auto: ${variable} is {root}, but it holds no python")
                return Target(str(found), f"auto: active environment ${variable}={root}")
        return _auto_on_path(env.get("PATH"), runner)
    # Absolute, but not resolved: a venv's python is a symlink that must stay in
    # the venv; and the smoke child runs in another working directory.
    path = Path(spec).expanduser().absolute()
    if path.is_dir():
        found = _python_in_env(path)
        if found is None:
            raise TargetError(_no_python_in(spec, path))
        return Target(str(found), f"--python {spec} (environment folder)")
    if not path.exists():
        on_path = _which(spec, path=env.get("PATH"))
        if on_path:
            return Target(str(Path(on_path).absolute()), f"--python {spec} (found on PATH)")
        raise TargetError(f"{spec}: no such interpreter")
    if not os.access(path, os.X_OK):
        raise TargetError(f"{spec}: not executable")
    return Target(str(path), f"--python {spec}")


def _auto_on_path(path: str | None, runner: Runner | None) -> Target:
    """``auto`` without an active environment: the first ``python`` /
    ``python3`` on PATH that is no app execution alias, else the py launcher's
    default interpreter (python.org's installer adds ``py``, not ``python``, to
    PATH by default), else an alias (a Store Python answers through one)."""
    aliases: list[tuple[str, str]] = []
    for name in ("python", "python3"):
        for found in _all_on_path(name, path):
            if not is_app_alias(found):
                return Target(found, f"auto: `{name}` on PATH")
            aliases.append((name, found))
    launcher = _which("py", path=path)
    if launcher and not is_app_alias(launcher):
        default = _py_launcher_default(launcher, runner)
        if default:
            return Target(
                default, f"auto: the py launcher's default ({launcher}; `py -0p` lists the others)"
            )
    if aliases:
        name, found = aliases[0]
        return Target(
            found, f"auto: `{name}` on PATH, an app execution alias (no other python found)"
        )
    raise TargetError("auto: no active environment and no python on PATH")
