"""Choosing the interpreter to diagnose (``--python PATH|auto``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


def _which(name: str, path: str | None) -> str | None:
    import shutil  # only for PATH lookups; keeps the common start-up light

    return shutil.which(name, path=path)


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


def resolve(spec: str | None, environ: Mapping[str, str] | None = None) -> Target:
    """Turn the ``--python`` value into an interpreter path and say why."""
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
        for name in ("python", "python3"):
            found_path = _which(name, path=env.get("PATH"))
            if found_path:
                return Target(found_path, f"auto: `{name}` on PATH")
        raise TargetError("auto: no active environment and no python on PATH")
    # Absolute, but not resolved: a venv's python is a symlink that must stay in
    # the venv; and the smoke child runs in another working directory.
    path = Path(spec).expanduser().absolute()
    if path.is_dir():
        found = _python_in_env(path)
        if found is None:
            raise TargetError(f"{spec} is a folder without a python in bin/ or Scripts/")
        return Target(str(found), f"--python {spec} (environment folder)")
    if not path.exists():
        on_path = _which(spec, path=env.get("PATH"))
        if on_path:
            return Target(str(Path(on_path).absolute()), f"--python {spec} (found on PATH)")
        raise TargetError(f"{spec}: no such interpreter")
    if not os.access(path, os.X_OK):
        raise TargetError(f"{spec}: not executable")
    return Target(str(path), f"--python {spec}")
