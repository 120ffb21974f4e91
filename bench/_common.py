"""What the benchmarks share: where the real wheels are, and a wall-clock timer."""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

# What an application does without qnndoctor: import, register the QNN
# plugin, one session on the smoke model with CPU fallback disabled, one run.
BARE_SCRIPT = """
import numpy as np, onnxruntime as ort, onnxruntime_qnn as q
ort.register_execution_provider_library("QNNExecutionProvider", q.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]
options = ort.SessionOptions()
options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
options.add_provider_for_devices(devices, {"backend_type": "htp"})
session = ort.InferenceSession(open(MODEL, "rb").read(), sess_options=options)
print(session.run(None, {"x": np.arange(8, dtype=np.float32).reshape(1, 8)})[0])
"""


def add_wheels_argument(parser: argparse.ArgumentParser) -> None:
    default = (
        os.environ.get("QNNDOCTOR_TEST_WHEELS")
        or Path.home() / ".cache" / "qnndoctor-tests" / "wheels"
    )
    parser.add_argument(
        "--wheels",
        type=Path,
        default=Path(default),
        help="folder with the real wheels the tests download (tests/real-wheels.txt)",
    )


def timed(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> float:
    """Wall time of one run, output discarded (``env``: variables to add;
    ``cwd``: where to run)."""
    started = time.perf_counter()
    subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env} if env else None,
        cwd=cwd,
    )
    return time.perf_counter() - started


def timed_with_cpu(
    argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> tuple[float, float]:
    """Wall time and CPU time (user + sys of the whole waited-for process
    tree) of one run, output discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(argv, env, cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def install_qnndoctor_wheel(folder: Path) -> str:
    """Build qnndoctor's wheel from this checkout and install it (with its
    dependencies, from pip's configured index) in a fresh venv: the console
    command a user gets, with compiled bytecode. Returns its path."""
    checkout = Path(__file__).resolve().parent.parent
    built = folder / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(built), str(checkout)],
        check=True,
    )
    subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True)
    subprocess.run(
        [
            str(folder / "venv" / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            *map(str, built.glob("qnndoctor-*.whl")),
        ],
        check=True,
    )
    return str(folder / "venv" / "bin" / "qnndoctor")


HEALTHY_PINS = ("onnxruntime_qnn-2.7.0-*.whl", "onnxruntime-1.31.1-*.whl", "numpy-2.4.6-*.whl")


def healthy_wheels(folder: Path) -> list[Path] | None:
    """The real wheels of the healthy reference setup, or None when one is missing."""
    found = [sorted(folder.glob(pattern)) for pattern in HEALTHY_PINS]
    return [matches[0] for matches in found] if all(found) else None


def make_venv(folder: Path, wheels: list[Path], with_pip: bool = False) -> str:
    """A fresh venv in ``folder`` with ``wheels`` installed offline (and pip
    itself when ``with_pip``); its python."""
    venv = folder / "venv"
    flags = [] if with_pip else ["--without-pip"]
    subprocess.run([sys.executable, "-m", "venv", *flags, str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            python,
            "install",
            "-q",
            "--no-index",
            "--no-deps",
            *map(str, wheels),
        ],
        check=True,
    )
    return python
