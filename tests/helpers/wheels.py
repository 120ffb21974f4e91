"""Build small but real wheels and install them into real venvs with pip."""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest


def _record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def build_wheel(
    out_dir: Path,
    name: str,
    version: str,
    files: Mapping[str, bytes],
    *,
    requires: Sequence[str] = (),
    top_level: Sequence[str] | None = None,
    tag: str = "py3-none-any",
) -> Path:
    """A wheel with METADATA, WHEEL, top_level.txt and a hashed RECORD."""
    out_dir.mkdir(parents=True, exist_ok=True)
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    metadata = (
        "\n".join(
            ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
            + [f"Requires-Dist: {r}" for r in requires]
        )
        + "\n\n"
    )
    tops = top_level if top_level is not None else sorted({p.split("/", 1)[0] for p in files})
    members: dict[str, bytes] = dict(files)
    members[f"{info}/METADATA"] = metadata.encode()
    members[f"{info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: qnndoctor-tests\nRoot-Is-Purelib: false\nTag: {tag}\n"
    ).encode()
    members[f"{info}/top_level.txt"] = ("\n".join(tops) + "\n").encode()
    record = [f"{path},{_record_hash(data)},{len(data)}" for path, data in members.items()]
    record.append(f"{info}/RECORD,,")
    members[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = out_dir / f"{dist}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    return path


def make_venv(root: Path, python: str = sys.executable, *, with_pip: bool = False) -> Path:
    """A real venv (by default without pip: the host's pip installs into it)."""
    subprocess.run(
        [python, "-m", "venv", *([] if with_pip else ["--without-pip"]), str(root)],
        check=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    return root / "bin" / "python"


def pip_install(venv_python: Path, *args: str) -> None:
    """Install with the host's pip into the venv, offline, no dependency resolution."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv_python),
            "install",
            "--no-index",
            "--no-deps",
            "--disable-pip-version-check",
            "-q",
            *args,
        ],
        check=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


def pip_uninstall(venv_python: Path, *names: str) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv_python),
            "uninstall",
            "-y",
            "-q",
            *names,
        ],
        check=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


def site_packages(venv_python: Path) -> Path:
    out = subprocess.run(
        [str(venv_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    return Path(out.stdout.strip())


def system_like_python(root: Path) -> Path:
    """A real CPython that is not a venv, with its own stdlib folder (links to
    this interpreter's) holding a real EXTERNALLY-MANAGED file, and pip."""
    import pip

    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    base = Path(sys.base_prefix)
    (root / "bin").mkdir(parents=True)
    shutil.copy2(base / "bin" / version, root / "bin" / version)
    stdlib = root / "lib" / version
    stdlib.mkdir(parents=True)
    for entry in (base / "lib" / version).iterdir():
        if entry.name != "site-packages":
            (stdlib / entry.name).symlink_to(entry)
    (stdlib / "site-packages").mkdir()
    (stdlib / "site-packages" / "pip").symlink_to(Path(pip.__file__).parent)
    (stdlib / "EXTERNALLY-MANAGED").write_text(
        "[externally-managed]\nError=This Python is managed by the test's system.\n"
    )
    python = root / "bin" / version
    probe = subprocess.run(
        [str(python), "-c", "import sys; print(sys.prefix)"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if probe.returncode != 0 or probe.stdout.strip() != str(root):
        pytest.skip(f"this CPython cannot run from a copied prefix: {probe.stderr[-300:]}")
    return python


def copy_venv(venv_python: Path, where: Path) -> Path:
    """A copy of ``venv_python``'s venv at ``where`` (symlinks kept, so the copy
    still runs the same base interpreter): its python."""
    shutil.copytree(venv_python.parent.parent, where, symlinks=True)
    return where / "bin" / "python"


def pip_check(venv_python: Path) -> str:
    """`pip check`'s complaints ("" when clean)."""
    done = subprocess.run(
        [str(venv_python), "-m", "pip", "check"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    return "" if done.returncode == 0 else done.stdout + done.stderr


def add_second_flavour(venv_python: Path, scratch: Path) -> None:
    """Install onnxruntime-directml 1.31.1 over the venv's onnxruntime: a
    second distribution owning the `onnxruntime` module, whose install
    overwrote onnxruntime/__init__.py (the users' most common two-flavour case)."""
    other = build_wheel(
        scratch / "other",
        "onnxruntime-directml",
        "1.31.1",
        {"onnxruntime/__init__.py": b"__version__ = '1.31.1'\n"},
    )
    pip_install(venv_python, str(other))


def add_uninstall_leftover(venv_python: Path) -> Path:
    """A `~nnxruntime` folder, as pip leaves it after a half-finished uninstall."""
    leftover = site_packages(venv_python) / "~nnxruntime"
    shutil.copytree(site_packages(venv_python) / "onnxruntime" / "tools", leftover)
    return leftover
