"""Running a snippet of Python in a real target venv, as the tests that make
failures happen for real do (argv list, no stdin, a time limit, text output)."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path


def run_code(
    python: Path, code: str, *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -c code args...`` in ``cwd``, by default a fresh empty folder (a
    runtime writes files beside itself: QNN's IR backend its .dlc graphs, which
    landed in the checkout once); output decoded with replacement."""
    with tempfile.TemporaryDirectory(prefix="qnndoctor-run-") as scratch:
        return subprocess.run(
            [str(python), "-c", code, *args],
            capture_output=True,
            text=True,
            errors="replace",
            stdin=subprocess.DEVNULL,
            timeout=300,
            cwd=cwd or scratch,
        )


def stderr_of_failing(python: Path, code: str, *args: str, cwd: Path | None = None) -> str:
    """What a real run of ``code`` printed on stderr; the run must fail."""
    run = run_code(python, code, *args, cwd=cwd)
    assert run.returncode != 0, "the run was expected to fail"
    return run.stderr
