"""Speed of ``qnndoctor lint`` in files per second, with a baseline measured
in the same run: reading every file and ``ast.parse``-ing it (the floor of
any AST linter).

    python bench/bench_lint.py                 # the stdlib + Olive, olive-recipes (mirrors)
    python bench/bench_lint.py FOLDER...       # your own code

Corpora: a folder walked as ``qnndoctor lint FOLDER`` walks it (files that
name nothing onnxruntime-related are read but not parsed), and the same
files each named explicitly (every one parsed). Best of --repeat runs.
"""

from __future__ import annotations

import argparse
import ast
import io
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from qnndoctor.lint import _files, lint_paths, read_file  # noqa: E402
from qnndoctor.lint.checks import Target  # noqa: E402
from qnndoctor.lint.knowledge import load  # noqa: E402

MIRRORS = (Path("/work/.mirror/microsoft+Olive/repo"), Path("/work/.mirror/microsoft+olive-recipes/repo"))


def _checkout(mirror: Path, into: Path) -> Path | None:
    """The mirror's HEAD as files in a scratch folder (git archive)."""
    if not mirror.exists():
        return None
    data = subprocess.run(
        ["git", "--git-dir", str(mirror), "archive", "--format=tar", "HEAD"],
        capture_output=True,
        check=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        archive.extractall(into, filter="data")
    return into


def _best(repeat: int, work: Callable[[], None]) -> tuple[float, float]:
    """(wall, CPU) seconds, each the best of ``repeat`` runs. On a shared
    machine the CPU time of this process is the steadier number."""
    wall = cpu = float("inf")
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        work()
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    return wall, cpu


def measure(folder: Path, repeat: int) -> None:
    files = [p for p in _files(folder) if p.suffix == ".py"]
    knowledge = load()
    target = Target.of(knowledge, None)

    def baseline() -> None:
        for path in files:
            try:
                ast.parse(path.read_bytes())
            except (SyntaxError, ValueError):
                pass

    def walked() -> None:
        lint_paths([str(folder)])

    def named() -> None:
        for path in files:
            read_file(path, target, knowledge, prefilter=False)

    lines = sum(p.read_bytes().count(b"\n") for p in files)
    print(f"{folder}: {len(files)} .py files, {lines} lines ({lines // max(len(files), 1)} per file)")
    base_wall, base_cpu = _best(repeat, baseline)
    print(f"  read + ast.parse (baseline): wall {base_wall:.3f} s, CPU {base_cpu:.3f} s = {len(files) / base_cpu:,.0f} files/s of CPU")
    for label, work in (("lint FOLDER (walked)", walked), ("lint each file named", named)):
        wall, cpu = _best(repeat, work)
        print(
            f"  {label}: wall {wall:.3f} s = {len(files) / wall:,.0f} files/s; CPU {cpu:.3f} s = "
            f"{len(files) / cpu:,.0f} files/s of CPU ({cpu / base_cpu:.2f}x the baseline's CPU)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folders: list[Path] = list(args.folders)
    with tempfile.TemporaryDirectory(prefix="bench-lint-") as scratch:
        if not folders:
            folders.append(Path(sysconfig.get_paths()["stdlib"]))
            for mirror in MIRRORS:
                checkout = _checkout(mirror, Path(scratch) / mirror.parent.name)
                if checkout is not None:
                    folders.append(checkout)
        for folder in folders:
            measure(folder, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
