"""The fault battery: every way the smoke child can misbehave, every bad input
file, and planted secrets; prints how many were contained (run by hand; the
numbers go in docs/robustness.md).

Smoke-child faults run real fake target interpreters (a /bin/sh wrapper
around a Python body, as the tests do). A fault is *contained* when
``run_smoke`` returns (no exception) within the smoke timeout + 2 s, with the
expected status, and no process it started is alive afterwards: checked by
scanning for the fault's folder on every command line, independently of the
marker sweep that does the killing.

Bad inputs go through ``qnndoctor.cli.main.main`` in-process; a *traceback* is an
exception out of ``main`` or "Traceback" on stderr; an *unclear* answer is an
exit code other than 2/3 or an empty stderr. Leaks: planted credentials and a
planted user name searched in every redacted output.

Usage: python bench/fault_battery.py
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from helpers.fake_python import write_fake_python
from helpers.wheels import make_venv

from qnndoctor.children.containment import become_subreaper
from qnndoctor.cli.main import main as cli_main
from qnndoctor.facts.probed import Facts
from qnndoctor.smoke import run_smoke
from qnndoctor.target.interpreter import Target

QNN_FACTS = Facts.from_json(
    {
        "installs": {
            "status": "ok",
            "values": {"distributions": [{"canonical_name": "onnxruntime-qnn"}]},
            "sources": {},
        }
    }
)
GOOD = "@@qnndoctor-smoke@@" + json.dumps({"status": "passed", "path": "plugin-2.x"})
SLEEPER = "[sys.executable, '-c', 'import time; time.sleep(600)', TAG]"
DAEMON = """
def daemon(keep_pipes=False, scrub_env=False):
    if os.fork():
        os.wait()
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    if not keep_pipes:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
    if scrub_env:
        os.execve(sys.executable, [sys.executable, '-c', 'import time; time.sleep(600)', TAG], {})
    time.sleep(600)
    os._exit(0)
"""
PRELUDE = "import os, signal, subprocess, sys, time\nTAG = os.path.dirname(sys.argv[0])\n" + DAEMON

# name -> (body, smoke timeout, expected status)
FAULTS: dict[str, tuple[str, float, str]] = {
    "segfault": ("os.kill(os.getpid(), signal.SIGSEGV)", 30, "crashed"),
    "abort": ("os.abort()", 30, "crashed"),
    "exit 127": ("sys.exit(127)", 30, "crashed"),
    "garbage on stdout": ("print('garbage')", 30, "crashed"),
    "broken result JSON": ("print('@@qnndoctor-smoke@@{broken')", 30, "crashed"),
    "non-UTF-8 output": ("sys.stdout.buffer.write(b'\\xff\\xfe\\n'); sys.exit(3)", 30, "crashed"),
    "result: exception not an object": (
        'print(\'@@qnndoctor-smoke@@\' + \'{"status": "failed", "exception": "notadict"}\')',
        30,
        "failed",
    ),
    "result: status a list": (
        "print('@@qnndoctor-smoke@@' + '{\"status\": [\"passed\"]}')",
        30,
        "failed",
    ),
    "result: deeply nested": ("print('@@qnndoctor-smoke@@' + '[' * 100000)", 30, "crashed"),
    "hang": ("time.sleep(600)", 2, "timed_out"),
    "hang with a grandchild": (f"subprocess.Popen({SLEEPER}); time.sleep(600)", 2, "timed_out"),
    "hang ignoring SIGTERM": (
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)",
        2,
        "timed_out",
    ),
    "hang with stdout/stderr closed": ("os.close(1); os.close(2); time.sleep(600)", 2, "timed_out"),
    "daemon, then a result": (f"daemon(); print({GOOD!r}, flush=True)", 30, "passed"),
    "daemon holding the pipes, then a result": (
        f"daemon(keep_pipes=True); print({GOOD!r}, flush=True)",
        30,
        "passed",
    ),
    "daemon, then hang": ("daemon(keep_pipes=True); time.sleep(600)", 2, "timed_out"),
    "two daemons": (f"daemon(); daemon(True); print({GOOD!r}, flush=True)", 30, "passed"),
    "grandchild in its own session": (
        f"subprocess.Popen({SLEEPER}, start_new_session=True); print({GOOD!r}, flush=True)",
        30,
        "passed",
    ),
    "20 children in new sessions, no result": (
        f"[subprocess.Popen({SLEEPER}, start_new_session=True) for _ in range(20)]",
        30,
        "crashed",
    ),
    "200 MB of output, then a result": (
        "b = b'x' * (1 << 20)\n"
        "for _ in range(200): sys.stdout.buffer.write(b)\n"
        f"print({chr(10) + GOOD!r})",
        60,
        "passed",
    ),
    "daemon with a scrubbed environment (found as an adopted orphan)": (
        f"daemon(scrub_env=True); print({GOOD!r}, flush=True)",
        30,
        "passed",
    ),
}


def _alive_from(folder: str) -> list[int]:
    """Live (non-zombie) processes whose command line names ``folder``."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = proc.info.get("cmdline") or []
        if proc.info.get("status") != psutil.STATUS_ZOMBIE and any(folder in a for a in cmdline):
            found.append(proc.pid)
    return found


def run_faults(root: Path) -> tuple[int, list[str]]:
    problems = []
    for index, (name, (body, timeout, expected)) in enumerate(FAULTS.items()):
        folder = root / f"fault{index}"
        folder.mkdir()
        target = Target(str(write_fake_python(folder, PRELUDE + body)), "fault battery")
        started = time.monotonic()
        try:
            result = run_smoke(target, QNN_FACTS, timeout=timeout)
        except Exception as exc:  # that is what the battery looks for
            problems.append(f"{name}: raised {type(exc).__name__}: {exc}")
            continue
        took = time.monotonic() - started
        time.sleep(0.3)  # anything that escaped has had time to show up
        left = _alive_from(str(folder))
        why = []
        if took > timeout + 2:
            why.append(f"took {took:.1f} s (limit {timeout:g} + 2)")
        if result.status != expected:
            why.append(f"status {result.status} (expected {expected})")
        if left:
            why.append(f"left running: {left}")
            for pid in left:  # clean up after the battery itself
                with contextlib.suppress(psutil.Error):
                    psutil.Process(pid).kill()
        if why:
            problems.append(f"{name}: " + "; ".join(why))
    return len(FAULTS) - len(problems), problems


def _cli(*argv: str) -> tuple[int | None, str, str, str | None]:
    out, err = io.StringIO(), io.StringIO()
    raised = None
    code: int | None = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli_main(list(argv))
        except BaseException as exc:
            raised = f"{type(exc).__name__}: {exc}"
    return code, out.getvalue(), err.getvalue(), raised


def bad_inputs(root: Path) -> list[tuple[str, list[str]]]:
    """(name, argv) for every bad input."""
    _code, text, _err, _raised = _cli("check", "--python", sys.executable, "--json", "--no-smoke")
    ticket = json.loads(text)
    full = json.dumps(ticket, indent=2)
    deep = "[" * 200_000
    nested = '{"a":' * 500 + "1" + "}" * 500
    files = {
        "deep.json": deep,
        "nested.json": nested,
        "truncated.json": full[: len(full) // 2],
        "facts-list.json": json.dumps({**ticket, "facts": [1]}),
        "facts-string.json": json.dumps({**ticket, "facts": "x"}),
        "facts-empty.json": json.dumps({**ticket, "facts": {}}),
        "smoke-child-string.json": json.dumps(
            {**ticket, "smoke": {"status": "failed", "child": "x"}}
        ),
        "smoke-list.json": json.dumps({**ticket, "smoke": []}),
        "list.json": "[]",
        "empty.json": "",
        "binary.json": "\x00\x01\x02",
        "schema-2.json": json.dumps({**ticket, "schema_version": 2}),
        "matrix-empty-releases.json": '{"releases": []}',
        "matrix-bad-version.json": '{"releases": [{"version": "x"}]}',
    }
    for name, content in files.items():
        (root / name).write_text(content, encoding="utf-8", errors="surrogateescape")
    log = root / "log.txt"
    log.write_text("QnnDsp <E> failed\n")
    cases: list[tuple[str, list[str]]] = []
    for name in files:
        path = str(root / name)
        for fmt in (["--json"], []):
            cases.append(
                (f"check --from-report {name} {fmt}", ["check", "--from-report", path, *fmt])
            )
            cases.append(
                (
                    f"explain --from-report {name} {fmt}",
                    ["explain", "--log", str(log), "--from-report", path, *fmt],
                )
            )
        cases.append(
            (
                f"check --matrix {name}",
                ["check", "--python", sys.executable, "--no-smoke", "--matrix", path],
            )
        )
        cases.append(
            (
                f"recommend --matrix {name}",
                ["recommend", "--python", sys.executable, "--matrix", path],
            )
        )
        cases.append((f"matrix --matrix {name}", ["matrix", "--matrix", path]))
    missing = str(root / "missing")
    cases += [
        ("check --python missing", ["check", "--python", missing, "--json"]),
        ("check --python a folder without python", ["check", "--python", str(root), "--json"]),
        ("check --python a text file", ["check", "--python", str(log), "--json"]),
        ("check --python /dev/null", ["check", "--python", os.devnull]),
        ("check --timeout -1", ["check", "--timeout", "-1"]),
        ("explain --log missing", ["explain", "--log", missing, "--no-facts"]),
        ("explain --from-report missing", ["explain", "--log", str(log), "--from-report", missing]),
        ("check --from-report missing", ["check", "--from-report", missing, "--json"]),
        ("matrix update without --from", ["matrix", "update"]),
        ("matrix update over http", ["matrix", "update", "--from", "http://127.0.0.1:9/x.json"]),
        (
            "matrix update, nothing listening",
            ["matrix", "update", "--from", "https://127.0.0.1:9/x.json"],
        ),
    ]
    return cases


def run_bad_inputs(root: Path) -> tuple[int, list[str], list[str]]:
    tracebacks, unclear = [], []
    cases = bad_inputs(root)
    for name, argv in cases:
        code, _out, err, raised = _cli(*argv)
        if raised is not None or "Traceback" in err:
            tracebacks.append(f"{name}: {raised or err.strip().splitlines()[-1]}")
        elif code not in (2, 3) or not err.strip():
            unclear.append(f"{name}: exit {code}, stderr {err.strip()[:100]!r}")
    return len(cases), tracebacks, unclear


def run_leaks(root: Path) -> tuple[int, list[str]]:
    secret, user = "S3cretPw7", "ZedKowalski"
    python = make_venv(root / "zedkowalski-9_models" / "venv")
    os.environ["ADSP_LIBRARY_PATH"] = (
        f"https://zed:{secret}@dsp.example.com/skel:/data/zedkowalski_x/dsp:/mnt/ZEDKOW~1/dsp"
    )
    os.environ["USER"] = user
    _code, raw, _err, _raised = _cli(
        "check", "--python", str(python), "--json", "--no-smoke", "--no-redact"
    )
    ticket = root / "planted.json"
    ticket.write_text(raw)
    log = root / "planted.log"
    log.write_text("error in /data/zedkowalski_x/dsp\n")
    outputs: dict[str, list[str]] = {
        "check --json": ["check", "--python", str(python), "--json", "--no-smoke"],
        "check markdown": ["check", "--python", str(python), "--format", "markdown", "--no-smoke"],
        "re-diagnosed --json": ["check", "--from-report", str(ticket), "--json"],
        "re-diagnosed markdown": ["check", "--from-report", str(ticket), "--format", "markdown"],
        "recommend --json": ["recommend", "--python", str(python), "--json"],
        "explain --json": ["explain", "--log", str(log), "--from-report", str(ticket), "--json"],
        "could-not-check --json": [
            "check",
            "--python",
            str(root / "zedkowalski-9_models" / "none"),
            "--json",
        ],
    }
    leaks = []
    for name, argv in outputs.items():
        _code, out, _err, _raised = _cli(*argv)
        lower = out.lower()
        found = [w for w in (secret.lower(), user.lower(), "zedkow~1") if w in lower]
        if found or not out:
            leaks.append(f"{name}: {found or 'no output'}")
    return len(outputs), leaks


def main() -> int:
    # As the console entry does: qnndoctor owns this process (Linux subreaper).
    print(f"subreaper: {become_subreaper()}")
    with tempfile.TemporaryDirectory(prefix="qnndoctor-battery-") as temp:
        root = Path(temp)
        (root / "faults").mkdir()
        (root / "inputs").mkdir()
        (root / "leaks").mkdir()
        contained, fault_problems = run_faults(root / "faults")
        tried, tracebacks, unclear = run_bad_inputs(root / "inputs")
        outputs, leaks = run_leaks(root / "leaks")
    print(f"smoke-child faults: {contained}/{len(FAULTS)} contained")
    for line in fault_problems:
        print(f"  not contained: {line}")
    print(f"bad inputs: {tried} tried, {len(tracebacks)} tracebacks, {len(unclear)} unclear")
    for line in tracebacks:
        print(f"  traceback: {line}")
    for line in unclear:
        print(f"  unclear: {line}")
    print(f"privacy: {outputs} redacted outputs with planted secrets, {len(leaks)} leaks")
    for line in leaks:
        print(f"  leak: {line}")
    return 0 if not (fault_problems or tracebacks or leaks) else 1


if __name__ == "__main__":
    sys.exit(main())
