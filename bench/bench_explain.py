"""Benchmark `qnndoctor explain --log` on big verbose logs against a baseline
measured in the same run (run by hand; numbers go in docs/speed.md).

Logs (built here, from a real session):
  2.6k  a real verbose ORT + QNN session that passes on the HTP simulator
        (onnxruntime 1.31.1 + onnxruntime-qnn 2.7.0, every log at its most
        verbose: tests/data/verbose_session.py), as `explain` reads it
  20k   that session repeated to 20,000 lines, every copy's timestamps moved
  100k  the same to 100,000 lines
  1m    the same to 1,000,000 lines (~80 MB; --no-million leaves it out)
The 20k, 100k and 1m logs carry two real failure messages from the development
corpus (tests/diagnosis_corpus/dev.json), one in the middle and one at the end:
the answer must be the one those messages get on their own.

Timed, alternating, each a fresh process (what a user runs):
  E  qnndoctor explain --json --log LOG        (this checkout)
  R  python reading LOG and running one regex over it (the baseline: the
     least any tool that looks at the whole text costs)
  E0 the same explain of another checkout (--compare DIR): before / after
and reported as medians of wall and CPU time (user + sys), with E/R, and the
best (least) CPU time of the runs beside them: on a machine shared with other
jobs a run only ever gets slower, so the best of N of each, E's and R's
alike, is the steadiest figure; E/R is printed for both. E should
grow linearly with the log: the cost per extra line is printed for 20k, 100k
and 1m (2.6k subtracted); "linear" when the biggest log's figure is at most
1.5 x the 20k one. Also printed: E's peak memory (max RSS) against the file's
size (target <= 3x), and S, a short explain (the two failure messages alone,
30 lines), in seconds (target <= 0.3 s), and S', the same through the
console script a user types (``qnndoctor explain --log``, end to end), when
the interpreter's folder has one installed from this checkout.
Targets (issue 29): E/R <= 10 at 100k lines, linear to 1m.

As a user's install would be: each timed checkout's bytecode is compiled
first (pip compiles it at install; with PYTHONDONTWRITEBYTECODE set, a
checkout's modules would otherwise be compiled from source on every run, about
0.1 s), and explain's catalogue plan cache (diagnosis/plancache.py) lives in a
folder of this run, filled by the first, untimed runs: other qnndoctor
checkouts on the machine share the user's cache folder and can evict its entry.

Usage: python bench/bench_explain.py [--runs 5] [--compare DIR] [--wheels DIR] [--no-million]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

from _common import add_wheels_argument, healthy_wheels, make_venv, timed_with_cpu

ROOT = Path(__file__).resolve().parent.parent
CONSOLE = "S' console"
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


# Peak memory is read in a small fresh process: a child forked from this one
# (which holds the million-line log it wrote) would count its parent's pages.
_PEAK = (
    "import resource, subprocess, sys\n"
    "subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,"
    " stderr=subprocess.DEVNULL)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def peak_rss(argv: list[str], cwd: Path) -> int:
    """The peak resident memory (bytes) of one run of ``argv`` (Linux: ru_maxrss in KiB)."""
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=True,
    )
    return int(done.stdout.split()[-1]) * 1024


def _top(argv: list[str], cwd: Path) -> list[str]:
    done = subprocess.run(
        argv, capture_output=True, text=True, cwd=cwd, stdin=subprocess.DEVNULL, timeout=900
    )
    return [c["id"] for c in json.loads(done.stdout)["candidates"]][:3]


def _console_script(checkout: Path) -> str | None:
    """The ``qnndoctor`` console script beside this interpreter, when it runs
    ``checkout``'s sources (an editable install of it); None otherwise."""
    script = Path(sys.executable).parent / ("qnndoctor.exe" if os.name == "nt" else "qnndoctor")
    if not script.is_file():
        return None
    done = subprocess.run(
        [sys.executable, "-c", "import qnndoctor; print(qnndoctor.__file__)"],
        capture_output=True,
        text=True,
        cwd=Path.home(),
        stdin=subprocess.DEVNULL,
    )
    found = Path(done.stdout.strip()) if done.returncode == 0 else None
    return str(script) if found is not None and checkout in found.parents else None


def _compile_bytecode(checkout: Path) -> None:
    """What pip does at install: every module of ``checkout``'s package compiled."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(checkout / "qnndoctor")],
        check=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )


def _line_count(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--compare", type=Path, metavar="DIR", help="another checkout to time beside"
    )
    parser.add_argument("--no-million", action="store_true", help="leave out the 1m log")
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
        if not args.no_million:
            logs["1m"] = root / "1m.txt"
            logs["1m"].write_text(scaled_log(session, 1_000_000, failures), "utf-8")
        sizes = {name: _line_count(path) for name, path in logs.items()}
        alone = root / "failures.txt"
        alone.write_text("\n".join(failures) + "\n", "utf-8")
        # `python -m qnndoctor` run in a checkout imports that checkout's sources.
        here = [sys.executable, "-m", "qnndoctor", "explain", "--json", "--log"]
        for checkout in (ROOT, *([args.compare.resolve()] if args.compare else [])):
            _compile_bytecode(checkout)
        # The plan cache of this run only (Linux / BSD: platformdirs reads XDG_CACHE_HOME).
        os.environ["XDG_CACHE_HOME"] = str(root / "cache")
        commands: dict[str, tuple[list[str], Path]] = {}
        for name, path in logs.items():
            commands[f"E  {name}"] = ([*here, str(path)], ROOT)
            commands[f"R  {name}"] = ([sys.executable, "-c", BASELINE, str(path)], root)
            if args.compare:
                commands[f"E0 {name}"] = ([*here, str(path)], args.compare.resolve())
        commands["S  short"] = ([*here, str(alone)], ROOT)
        if args.compare:
            commands["S0 short"] = ([*here, str(alone)], args.compare.resolve())
        console = _console_script(ROOT)
        if console is not None:
            commands[CONSOLE] = ([console, "explain", "--log", str(alone)], root)
        # A timing means nothing unless the answer is right: the failures' own.
        expected = _top([*here, str(alone)], ROOT)
        for name in [n for n in logs if n != "2.6k"]:
            for label in ("E ", "E0"):
                key = f"{label} {name}"
                if key in commands:
                    got = _top(*commands[key])
                    print(f"{key:8} top candidates {got} (the failures alone: {expected})")
                    if got[:1] != expected[:1]:
                        print("  a different answer: no timing")
                        return 1
        memory = {
            key: peak_rss(*commands[key])
            for name in logs
            for label in ("E ", "E0")
            if (key := f"{label} {name}") in commands
        }
        file_sizes = {name: path.stat().st_size for name, path in logs.items()}
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, (argv, cwd) in commands.items():
                wall, cpu = timed_with_cpu(argv, cwd=cwd)
                walls[name].append(wall)
                cpus[name].append(cpu)
    wall_m = {name: statistics.median(v) for name, v in walls.items()}
    cpu_m = {name: statistics.median(v) for name, v in cpus.items()}
    cpu_b = {name: min(v) for name, v in cpus.items()}
    print(
        f"{args.runs} alternating runs each; medians; lines: "
        + ", ".join(f"{k} = {v}" for k, v in sizes.items())
    )
    print(f"{'':10} {'wall s':>8} {'cpu s':>8} {'best cpu':>9}")
    for name in commands:
        print(f"{name:10} {wall_m[name]:8.3f} {cpu_m[name]:8.3f} {cpu_b[name]:9.3f}")
    for label in ("E ", "E0") if args.compare else ("E ",):
        for name in logs:
            top, bottom = f"{label} {name}", f"R  {name}"
            print(
                f"ratio {label.strip()}/R {name:5}: wall {wall_m[top] / wall_m[bottom]:6.2f}, cpu {cpu_m[top] / cpu_m[bottom]:6.2f},"
                f" best cpu {cpu_b[top] / cpu_b[bottom]:6.2f}"
            )
        bigger = [n for n in logs if n != "2.6k"]
        per = {
            name: (cpu_m[f"{label} {name}"] - cpu_m[f"{label} 2.6k"])
            / (sizes[name] - sizes["2.6k"])
            * 1e6
            for name in bigger
        }
        verdict = "linear" if per[bigger[-1]] <= per["20k"] * 1.5 else "SUPERLINEAR"
        shown = ", ".join(f"{per[n]:.1f} us ({n})" for n in bigger)
        print(f"{label.strip()} cpu per extra line: {shown}: {verdict}")
        for name in logs:
            key = f"{label} {name}"
            print(
                f"{key} peak memory {memory[key] / 2**20:7.1f} MiB, file {file_sizes[name] / 2**20:6.1f} MiB:"
                f" {memory[key] / file_sizes[name]:6.2f}x the file"
            )
        short = "S  short" if label == "E " else "S0 short"
        print(
            f"{short}: wall {wall_m[short]:.3f} s, cpu {cpu_m[short]:.3f} s, best cpu"
            f" {cpu_b[short]:.3f} s (target <= 0.3 s)"
        )
    if CONSOLE in cpu_m:
        print(
            f"{CONSOLE} (end to end): wall {wall_m[CONSOLE]:.3f} s, cpu {cpu_m[CONSOLE]:.3f} s,"
            f" best cpu {cpu_b[CONSOLE]:.3f} s (target <= 0.3 s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
