"""Benchmark `qnndoctor check --no-smoke` (run by hand; numbers go in the README).

1. Side by side with `python -m pip list` on the same venv (onnxruntime +
   onnxruntime-qnn installed): median wall time of each, alternating runs.
2. Scaling: the same venv with 200 and with 2,000 extra synthetic
   distributions; the cost per extra distribution should stay flat (linear).

Usage: python bench/bench_check.py [--runs 9] [--wheels DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import add_wheels_argument, timed


def _median(argv: list[str], runs: int) -> float:
    timed(argv)  # warm the page cache
    return statistics.median(timed(argv) for _ in range(runs))


def _probe_ms(argv: list[str], runs: int) -> float:
    """Median of the installs probe's own duration, from the JSON report."""
    values = []
    for _ in range(runs):
        out = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True).stdout
        values.append(float(json.loads(out)["facts"]["installs"]["duration_ms"]))
    return statistics.median(values)


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
    add_wheels_argument(parser)
    args = parser.parse_args()
    wheels = sorted(args.wheels.glob("onnxruntime_qnn-2.7.0-*.whl")) + sorted(
        args.wheels.glob("onnxruntime-1.31*.whl")
    )
    if len(wheels) < 2:
        print(f"need onnxruntime and onnxruntime-qnn wheels in {args.wheels} (run the tests once)")
        return 2
    beside = Path(sys.executable).parent / "qnndoctor"
    qnndoctor = str(beside) if beside.exists() else shutil.which("qnndoctor") or "qnndoctor"
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
        timed(check)
        timed(pip_list)
        for _ in range(args.runs):
            pip_times.append(timed(pip_list))
            check_times.append(timed(check))
        pip_median, check_median = statistics.median(pip_times), statistics.median(check_times)
        print(f"pip list                     median {pip_median:.3f} s ({args.runs} runs)")
        print(f"qnndoctor check --no-smoke   median {check_median:.3f} s")
        print(f"ratio check / pip list       {check_median / pip_median:.2f} (target <= 0.25)")
        # Wall time is noisy at this scale; the installs probe times itself
        # in the target, which isolates the part that grows with the dists.
        rows = []
        added = 0
        for total in (0, 200, 2000):
            _add_synthetic(site, added, total - added)
            added = total
            rows.append((total, _median(check, args.runs), _probe_ms(check, args.runs)))
        for total, wall, probe in rows:
            print(f"+{total:5d} dists: check {wall:.3f} s, installs probe {probe:.1f} ms")
        per_200 = (rows[1][2] - rows[0][2]) / 200
        per_2000 = (rows[2][2] - rows[0][2]) / 2000
        verdict = "linear or better" if per_2000 <= per_200 * 1.5 + 0.005 else "SUPERLINEAR"
        print(
            f"installs probe cost per extra dist: {per_200:.4f} ms (200) vs "
            f"{per_2000:.4f} ms (2000): {verdict}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
