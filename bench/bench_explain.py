"""Benchmark `qnndoctor explain --log` on big verbose logs against a baseline
measured in the same run (run by hand; numbers go in docs/speed.md).

Logs (built here, from a real session):
  2.6k  a real verbose ORT + QNN session that passes on the HTP simulator
        (onnxruntime 1.31.1 + onnxruntime-qnn 2.7.0, every log at its most
        verbose: tests/data/verbose_session.py), as `explain` reads it
  20k   that session repeated to 20,000 lines, every copy's timestamps moved
  100k  the same to 100,000 lines
The 20k and 100k logs carry two real failure messages from the development
corpus (tests/diagnosis_corpus/dev.json), one in the middle and one at the end:
the answer must be the one those messages get on their own.

Timed, alternating, each a fresh process (what a user runs):
  E  qnndoctor explain --json --log LOG        (this checkout)
  R  python reading LOG and running one regex over it (the baseline: the
     least any tool that looks at the whole text costs)
  E0 the same explain of another checkout (--compare DIR): before / after
and reported as medians of wall and CPU time (user + sys), with E/R. E should
grow linearly with the log: the cost per extra line is printed for 20k and
100k (2.6k subtracted); "linear" when the 100k figure is at most 1.5 x the 20k one.

Usage: python bench/bench_explain.py [--runs 5] [--compare DIR] [--wheels DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

from _common import add_wheels_argument, healthy_wheels, make_venv, timed_with_cpu

ROOT = Path(__file__).resolve().parent.parent
FAILURES = ("dev-018", "dev-004")  # "Failed to finalize QNN graph", op validation error 3110
_STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6,9}")
BASELINE = (
    "import re, sys\n"
    "text = open(sys.argv[1], 'rb').read().decode('utf-8', errors='replace')\n"
    "re.search(r'failed to finalize qnn graph', text, re.IGNORECASE)\n"
)


def _session_log(wheels: Path, folder: Path) -> str:
    needed = healthy_wheels(wheels)
    if needed is None:
        raise SystemExit(f"need the healthy reference wheels in {wheels} (run the tests once)")
    python = make_venv(folder, needed)
    from qnndoctor.smoke import MODEL

    done = subprocess.run(
        [python, str(ROOT / "tests" / "data" / "verbose_session.py"), str(MODEL)],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    if "session ran" not in done.stderr:
        raise SystemExit(f"the verbose session did not run:\n{done.stderr[-2000:]}")
    return done.stdout + done.stderr


def _moved(line: str, copy: int) -> str:
    """``line`` with its timestamp moved by ``copy`` seconds (a later run's line)."""

    def later(match: re.Match[str]) -> str:
        stamp = match.group(0)
        head, fraction = stamp.split(".")
        moved = datetime.strptime(head, "%Y-%m-%d %H:%M:%S") + timedelta(seconds=copy)
        return f"{moved:%Y-%m-%d %H:%M:%S}.{(int(fraction) + copy * 7919) % 10 ** len(fraction):0{len(fraction)}d}"

    return _STAMP.sub(later, line) if copy else line


def scaled_log(session: str, lines: int, failures: tuple[str, str]) -> str:
    """``session`` repeated to ``lines`` lines (timestamps moved per copy), the
    first failure text in the middle and the second at the end."""
    base = session.splitlines()
    out: list[str] = []
    copy = 0
    while len(out) < lines:
        out += [_moved(line, copy) for line in base[: lines - len(out)]]
        copy += 1
    middle = len(out) // 2
    return (
        "\n".join(
            [*out[:middle], *failures[0].splitlines(), *out[middle:], *failures[1].splitlines()]
        )
        + "\n"
    )


def _top(argv: list[str], cwd: Path) -> list[str]:
    done = subprocess.run(
        argv, capture_output=True, text=True, cwd=cwd, stdin=subprocess.DEVNULL, timeout=900
    )
    return [c["id"] for c in json.loads(done.stdout)["candidates"]][:3]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--compare", type=Path, metavar="DIR", help="another checkout to time beside"
    )
    add_wheels_argument(parser)
    args = parser.parse_args()
    cases = {
        c["id"]: c["text"]
        for c in json.loads((ROOT / "tests" / "diagnosis_corpus" / "dev.json").read_text("utf-8"))[
            "cases"
        ]
    }
    failures = (cases[FAILURES[0]], cases[FAILURES[1]])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        session = _session_log(args.wheels, root / "session")
        logs = {"2.6k": root / "2.6k.txt", "20k": root / "20k.txt", "100k": root / "100k.txt"}
        logs["2.6k"].write_text(session, "utf-8")
        logs["20k"].write_text(scaled_log(session, 20_000, failures), "utf-8")
        logs["100k"].write_text(scaled_log(session, 100_000, failures), "utf-8")
        sizes = {name: len(path.read_text("utf-8").splitlines()) for name, path in logs.items()}
        # `python -m qnndoctor` run in a checkout imports that checkout's sources.
        here = [sys.executable, "-m", "qnndoctor", "explain", "--json", "--log"]
        commands: dict[str, tuple[list[str], Path]] = {}
        for name, path in logs.items():
            commands[f"E  {name}"] = ([*here, str(path)], ROOT)
            commands[f"R  {name}"] = ([sys.executable, "-c", BASELINE, str(path)], root)
            if args.compare:
                commands[f"E0 {name}"] = ([*here, str(path)], args.compare.resolve())
        # A timing means nothing unless the answer is right: the failures' own.
        alone = root / "failures.txt"
        alone.write_text("\n".join(failures) + "\n", "utf-8")
        expected = _top([*here, str(alone)], ROOT)
        for name in ("20k", "100k"):
            for label in ("E ", "E0"):
                key = f"{label} {name}"
                if key in commands:
                    got = _top(*commands[key])
                    print(f"{key:8} top candidates {got} (the failures alone: {expected})")
                    if got[:1] != expected[:1]:
                        print("  a different answer: no timing")
                        return 1
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, (argv, cwd) in commands.items():
                wall, cpu = timed_with_cpu(argv, cwd=cwd)
                walls[name].append(wall)
                cpus[name].append(cpu)
    wall_m = {name: statistics.median(v) for name, v in walls.items()}
    cpu_m = {name: statistics.median(v) for name, v in cpus.items()}
    print(
        f"{args.runs} alternating runs each; medians; lines: "
        + ", ".join(f"{k} = {v}" for k, v in sizes.items())
    )
    print(f"{'':10} {'wall s':>8} {'cpu s':>8}")
    for name in commands:
        print(f"{name:10} {wall_m[name]:8.3f} {cpu_m[name]:8.3f}")
    for label in ("E ", "E0") if args.compare else ("E ",):
        for name in logs:
            top, bottom = f"{label} {name}", f"R  {name}"
            print(
                f"ratio {label.strip()}/R {name:5}: wall {wall_m[top] / wall_m[bottom]:6.2f}, cpu {cpu_m[top] / cpu_m[bottom]:6.2f}"
            )
        per = {
            name: (cpu_m[f"{label} {name}"] - cpu_m[f"{label} 2.6k"])
            / (sizes[name] - sizes["2.6k"])
            * 1e6
            for name in ("20k", "100k")
        }
        verdict = "linear" if per["100k"] <= per["20k"] * 1.5 else "SUPERLINEAR"
        print(
            f"{label.strip()} cpu per extra line: {per['20k']:.1f} us (20k), {per['100k']:.1f} us (100k): {verdict}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
