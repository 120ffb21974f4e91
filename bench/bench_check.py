"""Benchmark `qnndoctor check` against its two baselines, side by side in one
run (run by hand; numbers go in docs/speed.md).

On one venv (onnxruntime 1.31.1 + onnxruntime-qnn 2.7.0 + numpy + pip, HTP
simulator), alternating (each repetition starts one command later than the
last, so none always runs first), every repetition runs each of:
  A  qnndoctor check --json            (probes + smoke session)
  B  qnndoctor check --json --no-smoke (probes only)
  C  a bare script: import onnxruntime, register the QNN plugin, create the
     session on the same model with CPU fallback disabled, run it once.
  P  python -m pip list                (in the same venv)
  Bc B with the decisions memo off (QNNDOCTOR_NO_MEMO=1): what a check
     costs the first time it sees these facts (B reuses the decisions of
     the warm-up run, as a repeated pre-flight check does)
and reports medians of wall time and of CPU time (user + sys of the whole
process tree, from ``RUSAGE_CHILDREN``; steadier than wall time on a shared
machine). Targets (issue 10): A <= 1.15 x C; B <= 0.25 x P.

``--scaling`` then adds 200 and 2,000 synthetic distributions and reports the
installs probe's own cost per extra distribution (it should stay flat).

``--wheel`` builds qnndoctor's wheel from this checkout and installs it in a
fresh venv (compiled bytecode, no editable-install finder): what a user runs.
Without it, the ``qnndoctor`` beside this interpreter is timed.

``--floor`` also times F: a process of qnndoctor's interpreter that only
gives the two children of ``check`` their head start and waits for them
(no CLI, no imports of the pipeline, no decisions): what ``check`` would
cost if all of qnndoctor's own work were free.

``--floor`` also times K: a process of qnndoctor's interpreter that imports,
in the same order, every module from outside qnndoctor (standard library,
packaging, platformdirs, ...) that one memo-off ``check --no-smoke`` imports,
and does nothing else: what Bc would cost if qnndoctor's own code, the
matrix and every decision were free (the first check's floor, set by the
libraries the design asks for).

``--compare QNNDOCTOR`` also times another qnndoctor console command (say,
a wheel of the previous commit) as A0 / B0 in the same alternation: a
before/after measured side by side.

Usage: python bench/bench_check.py [--runs 15] [--wheel] [--scaling] [--floor] [--compare EXE] [--wheels DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import (
    BARE_SCRIPT,
    add_wheels_argument,
    healthy_wheels,
    install_qnndoctor_wheel,
    make_venv,
    timed,
    timed_with_cpu,
)

TARGETS = {"A/C": 1.15, "B/P": 0.25}
# F: the head start of `check`'s two children, then only waiting for them.
FLOOR = (
    "import os, sys\n"
    "from qnndoctor import headstart\n"
    "headstart.begin(sys.argv[1:])\n"
    "import threading\n"
    "children = [e.proc for e in headstart.waiting().values()]\n"
    "readers = [threading.Thread(target=s.read) for c in children for s in (c.stdout, c.stderr)]\n"
    "for r in readers: r.start()\n"
    "for r in readers: r.join()\n"
    "for c in children: c.wait()\n"
    "headstart.discard()  # removes the smoke child's working folder\n"
    "os._exit(0)\n"
)

# Run once by the host interpreter: the modules from outside qnndoctor that a
# memo-off `check --no-smoke` imports, in the order they were first imported.
LIBRARIES_OF_BC = (
    "import contextlib, io, os, sys\n"
    "os.environ['QNNDOCTOR_NO_MEMO'] = '1'\n"
    "before = set(sys.modules)\n"
    "from qnndoctor.cli import main as cli\n"
    "sys.argv = ['qnndoctor', 'check', '--json', '--no-smoke', '--python', sys.argv[1]]\n"
    "try:\n"
    "    with contextlib.redirect_stdout(io.StringIO()):\n"
    "        cli.main()\n"
    "except SystemExit:\n"
    "    pass\n"
    "names = [n for n in sys.modules if n not in before and n.split('.')[0] != 'qnndoctor']\n"
    "print('\\n'.join(names))\n"
)


def _libraries_only(host_python: str, target_python: str) -> list[str]:
    """K's command: import exactly the outside modules a memo-off check imports."""
    names = subprocess.run(
        [host_python, "-c", LIBRARIES_OF_BC, target_python],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    code = f"import importlib\nfor name in {names!r}:\n    importlib.import_module(name)\n"
    subprocess.run([host_python, "-c", code], check=True)  # every one imports on its own
    print(f"K imports {len(names)} modules from outside qnndoctor")
    return [host_python, "-c", code]


def _probe_ms(argv: list[str], runs: int) -> float:
    """Median of the installs probe's own duration, from the JSON report."""
    values = []
    for _ in range(runs):
        out = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True).stdout
        values.append(float(json.loads(out)["facts"]["installs"]["duration_ms"]))
    return statistics.median(values)


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


def _scaling(check: list[str], python: str, runs: int) -> None:
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    rows = []
    added = 0
    for total in (0, 200, 2000):
        _add_synthetic(site, added, total - added)
        added = total
        wall = statistics.median(timed(check) for _ in range(runs))
        rows.append((total, wall, _probe_ms(check, runs)))
    for total, wall, probe in rows:
        print(f"+{total:5d} dists: check {wall:.3f} s, installs probe {probe:.1f} ms")
    per_200 = (rows[1][2] - rows[0][2]) / 200
    per_2000 = (rows[2][2] - rows[0][2]) / 2000
    verdict = "linear or better" if per_2000 <= per_200 * 1.5 + 0.005 else "SUPERLINEAR"
    print(
        f"installs probe cost per extra dist: {per_200:.4f} ms (200) vs "
        f"{per_2000:.4f} ms (2000): {verdict}"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--wheel", action="store_true", help="time a wheel install of this checkout"
    )
    parser.add_argument("--scaling", action="store_true", help="also the 200/2,000-dist scaling")
    parser.add_argument("--compare", metavar="QNNDOCTOR", help="another qnndoctor to time beside")
    parser.add_argument(
        "--floor", action="store_true", help="also the children alone, with their head start"
    )
    add_wheels_argument(parser)
    args = parser.parse_args()
    wheels = healthy_wheels(args.wheels)
    if wheels is None:
        print(
            f"need onnxruntime, onnxruntime-qnn and numpy wheels in {args.wheels} (run the tests once)"
        )
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        # A neutral working directory: `python -c` puts it first on sys.path, and
        # in a checkout that would import qnndoctor's sources instead of the install.
        os.chdir(tmp)
        root = Path(tmp)
        if args.wheel:
            qnndoctor = install_qnndoctor_wheel(root / "host")
        else:
            qnndoctor = str(Path(sys.executable).parent / "qnndoctor")
        python = make_venv(root / "target", wheels, with_pip=True)
        from qnndoctor.smoke import MODEL

        bare = root / "bare.py"
        bare.write_text(f"MODEL = {str(MODEL)!r}\n" + BARE_SCRIPT)
        commands = {
            "A check": [qnndoctor, "check", "--python", python, "--json"],
            "B check --no-smoke": [qnndoctor, "check", "--python", python, "--json", "--no-smoke"],
            "Bc --no-smoke, memo off": [
                qnndoctor,
                "check",
                "--python",
                python,
                "--json",
                "--no-smoke",
            ],
            "C bare script": [python, str(bare)],
            "P pip list": [python, "-m", "pip", "list"],
        }
        if args.floor:
            host_python = str(Path(qnndoctor).with_name("python"))
            commands["F children alone"] = [host_python, "-c", FLOOR, "check", "--python", python]
            commands["K libraries alone"] = _libraries_only(host_python, python)
        if args.compare:
            commands["A0 check (compared)"] = [args.compare, "check", "--python", python, "--json"]
            commands["B0 --no-smoke (compared)"] = [*commands["A0 check (compared)"], "--no-smoke"]
        # A timing means nothing unless the session really ran and passed.
        shown = subprocess.run(commands["A check"], capture_output=True, text=True, check=False)
        status = json.loads(shown.stdout)["smoke"]["status"]
        if status != "passed":
            print(f"the smoke session did not pass under check ({status}): no timing")
            return 1
        envs = {"Bc --no-smoke, memo off": {"QNNDOCTOR_NO_MEMO": "1"}}
        for name, argv in commands.items():
            timed(argv, envs.get(name))  # warm the page cache (and B's decisions memo)
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        names = list(commands)
        for repetition in range(args.runs):
            # Each repetition starts one command later: no command always runs
            # first (measured: the first of the round ran ~5 % slower).
            shift = repetition % len(names)
            for name in names[shift:] + names[:shift]:
                argv = commands[name]
                wall, cpu = timed_with_cpu(argv, envs.get(name))
                walls[name].append(wall)
                cpus[name].append(cpu)
        wall_m = {name: statistics.median(values) for name, values in walls.items()}
        cpu_m = {name: statistics.median(values) for name, values in cpus.items()}
        how = "wheel install" if args.wheel else f"qnndoctor beside {sys.executable}"
        print(f"{args.runs} alternating runs each, {how}; medians")
        print(f"{'':22} {'wall s':>8} {'cpu s':>8}")
        for name in commands:
            print(f"{name:22} {wall_m[name]:8.3f} {cpu_m[name]:8.3f}")
        ratios = [
            ("A/C", "A check", "C bare script", f" (target <= {TARGETS['A/C']})"),
            ("B/P", "B check --no-smoke", "P pip list", f" (target <= {TARGETS['B/P']})"),
            ("Bc/P", "Bc --no-smoke, memo off", "P pip list", " (the first check of these facts)"),
        ]
        if args.floor:
            ratios.append(("F/C", "F children alone", "C bare script", " (check's floor)"))
            ratios.append(
                ("K/P", "K libraries alone", "P pip list", " (the first --no-smoke check's floor)")
            )
        if args.compare:
            ratios += [
                ("A0/C (compared)", "A0 check (compared)", "C bare script", ""),
                ("B0/P (compared)", "B0 --no-smoke (compared)", "P pip list", ""),
            ]
        for label, top, bottom, target in ratios:
            print(
                f"ratio {label}: wall {wall_m[top] / wall_m[bottom]:.2f}, "
                f"cpu {cpu_m[top] / cpu_m[bottom]:.2f}{target}"
            )
        if args.scaling:
            _scaling(commands["B check --no-smoke"], python, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
