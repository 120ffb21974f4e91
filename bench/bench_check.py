"""Benchmark `qnndoctor check --no-smoke` (run by hand; numbers go in the README).

1. Side by side with `python -m pip list` on the same venv (onnxruntime +
   onnxruntime-qnn installed): median wall time of each, alternating runs.
2. Scaling: the same venv with 200 and with 2,000 extra synthetic
   distributions; the cost per extra distribution should stay flat (linear).

Usage: python bench/bench_check.py [--runs 9] [--wheels DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _timed(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return time.perf_counter() - started


def _median(argv: list[str], runs: int) -> float:
    _timed(argv)  # warm the page cache
    return statistics.median(_timed(argv) for _ in range(runs))


def _venv(root: Path, wheels: list[Path]) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
    python = root / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", *map(str, wheels)],
        check=True,
    )
    return python


def _add_synthetic(site: Path, start: int, count: int) -> None:
    """Dist-info folders as pip writes them, each owning one module file."""
    for index in range(start, start + count):
        name = f"synthetic_pkg_{index:05d}"
        info = site / f"{name}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n\n")
        (info / "top_level.txt").write_text(f"{name}\n")
        (info / "INSTALLER").write_text("pip\n")
        (site / f"{name}.py").write_text("")
        (info / "RECORD").write_text(
            f"{name}.py,,0\n{info.name}/METADATA,,\n{info.name}/top_level.txt,,\n{info.name}/RECORD,,\n"
        )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument(
        "--wheels",
        type=Path,
        default=Path(
            os.environ.get(
                "QNNDOCTOR_TEST_WHEELS", Path.home() / ".cache" / "qnndoctor-tests" / "wheels"
            )
        ),
    )
    args = parser.parse_args()
    wheels = sorted(args.wheels.glob("onnxruntime_qnn-2.*.whl")) + sorted(
        args.wheels.glob("onnxruntime-1.31*.whl")
    )
    if len(wheels) < 2:
        print(f"need onnxruntime and onnxruntime-qnn wheels in {args.wheels} (run the tests once)")
        return 2
    qnndoctor = shutil.which("qnndoctor") or str(Path(sys.executable).parent / "qnndoctor")
    with tempfile.TemporaryDirectory() as tmp:
        python = _venv(Path(tmp) / "venv", wheels)
        site = Path(
            subprocess.run(
                [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.strip()
        )
        check = [qnndoctor, "check", "--python", str(python), "--no-smoke", "--json"]
        pip_list = [str(python), "-m", "pip", "list"]
        pip_times, check_times = [], []
        _timed(check)
        _timed(pip_list)
        for _ in range(args.runs):
            pip_times.append(_timed(pip_list))
            check_times.append(_timed(check))
        pip_median, check_median = statistics.median(pip_times), statistics.median(check_times)
        print(f"pip list                     median {pip_median:.3f} s ({args.runs} runs)")
        print(f"qnndoctor check --no-smoke   median {check_median:.3f} s")
        print(f"ratio check / pip list       {check_median / pip_median:.2f} (target <= 0.40)")
        base = _median(check, args.runs)
        _add_synthetic(site, 0, 200)
        t200 = _median(check, args.runs)
        _add_synthetic(site, 200, 1800)
        t2000 = _median(check, args.runs)
        per_200 = (t200 - base) / 200 * 1000
        per_2000 = (t2000 - base) / 2000 * 1000
        print(f"check with +0 / +200 / +2000 dists: {base:.3f} / {t200:.3f} / {t2000:.3f} s")
        print(
            f"cost per extra dist: {per_200:.3f} ms (200) vs {per_2000:.3f} ms (2000): "
            f"{'linear or better' if per_2000 <= per_200 * 1.5 + 0.01 else 'SUPERLINEAR'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
