"""``--python auto``: which interpreter it picks when no environment is
active, with Windows' Store alias, the py launcher and a real python on PATH
(stand-ins: the alias folder's stub and the launcher are real executables)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CliResult
from helpers.fake_python import write_fake_python

Cli = Callable[..., CliResult]


STORE_STUB = (
    "import sys\n"
    "sys.stderr.write('Python was not found; run without arguments to install from the "
    "Microsoft Store, or disable this shortcut from Settings > Apps > Advanced app "
    "settings > App execution aliases.\\r\\n')\n"
    "sys.exit(9009 % 256)"
)


def test_the_microsoft_store_alias_without_a_python_behind_it_is_named_so(
    cli: Cli, tmp_path: Path
) -> None:
    """On a fresh Windows, `python` on PATH is the Store's app execution alias:
    it prints this line and exits 9009 (here 9009 % 256: a POSIX exit code)."""
    alias = write_fake_python(tmp_path, STORE_STUB)
    result = cli("check", "--python", str(alias), "--no-smoke", "--quiet")
    assert result.code == 3 and result.out.count("\n") == 1
    assert "app execution alias for the Microsoft Store" in result.out
    assert "Python.Python.3.12 --architecture arm64" in result.out
    assert "is it a Python interpreter?" not in result.out


def _alias_folder(root: Path) -> Path:
    """A stand-in for %LOCALAPPDATA%\\Microsoft\\WindowsApps holding the Store stub."""
    folder = root / "Microsoft" / "WindowsApps"
    folder.mkdir(parents=True)
    write_fake_python(folder, STORE_STUB)
    return folder


def _py_launcher(folder: Path, default: Path) -> None:
    """A py launcher whose default interpreter is ``default``: it runs the
    command it is given with that interpreter, as the real one does."""
    folder.mkdir(parents=True, exist_ok=True)
    launcher = folder / "py"
    launcher.write_text(f'#!/bin/sh\nexec "{default}" "$@"\n', encoding="utf-8")
    launcher.chmod(0o755)


def _without_active_env(monkeypatch: pytest.MonkeyPatch, path: list[Path]) -> None:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    monkeypatch.setenv("PATH", os.pathsep.join(map(str, path)))


def test_auto_asks_the_py_launcher_before_the_store_alias(
    cli: Cli, healthy_venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """python.org's installer puts `py` on PATH, not `python`: the first
    `python` found is then the Store stub, which must not hide the real one."""
    aliases = _alias_folder(tmp_path)
    _py_launcher(tmp_path / "launcher", healthy_venv)
    _without_active_env(monkeypatch, [aliases, tmp_path / "launcher"])
    result = cli("check", "--python", "auto", "--no-smoke", "--json", "--no-redact")
    report = result.json()
    assert result.code == 0, result.err
    assert report["target"]["python"] == str(healthy_venv)
    assert "py launcher's default" in report["target"]["how_chosen"]


def test_auto_takes_a_real_python_behind_the_alias_on_path(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    aliases = _alias_folder(tmp_path)
    real = tmp_path / "real"
    real.mkdir()
    (real / "python").symlink_to(sys.executable)
    _without_active_env(monkeypatch, [aliases, real])
    report = cli("check", "--python", "auto", "--no-smoke", "--json", "--no-redact").json()
    assert report["target"]["python"] == str(real / "python")
    assert report["target"]["how_chosen"] == "auto: `python` on PATH"


def test_auto_with_only_the_store_alias_says_what_it_is(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    aliases = _alias_folder(tmp_path)
    _without_active_env(monkeypatch, [aliases])
    result = cli("check", "--python", "auto", "--no-smoke", "--quiet")
    assert result.code == 3
    assert "app execution alias for the Microsoft Store" in result.out
    assert "`py -0p` lists where" in result.out


@pytest.mark.parametrize(
    ("path", "alias"),
    [
        ("C:\\Users\\bob\\AppData\\Local\\Microsoft\\WindowsApps\\python.exe", True),
        ("c:/users/bob/appdata/local/microsoft/windowsapps/python3.exe", True),
        ("C:\\Users\\bob\\AppData\\Local\\Programs\\Python\\Python312-arm64\\python.exe", False),
        ("C:\\WindowsApps\\python.exe", False),
        ("/usr/bin/python3", False),
    ],
)
def test_app_alias_folder_is_known_by_its_path(path: str, alias: bool) -> None:
    from qnndoctor.target.interpreter import is_app_alias

    assert is_app_alias(path) is alias


@pytest.mark.skipif(sys.platform == "win32", reason="a venv's bin/python symlink")
def test_a_venv_whose_python_is_gone_is_named_so(cli: Cli, tmp_path: Path) -> None:
    """A venv made by a Python that was removed or upgraded keeps bin/python
    as a link to nothing: the message says which link and what to do."""
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "venv" / "bin" / "python").symlink_to(tmp_path / "gone" / "python3.11")
    result = cli("check", "--python", str(tmp_path / "venv"), "--no-smoke")
    assert result.code == 3
    assert f"bin/python is a link to {tmp_path / 'gone' / 'python3.11'}, which does not exist" in result.err
    assert "make the environment again" in result.err and "Traceback" not in result.err
