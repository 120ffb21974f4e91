"""The smoke session: a real HTP-simulator run, real broken environments, and
fault injection through fake target interpreters (real executable scripts)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import psutil
import pytest
from conftest import CliResult, validate_report
from helpers.fake_python import BODY, write_fake_python
from helpers.smoke_values import GOOD_RESULT, QNN_FACTS
from helpers.wheels import copy_venv, make_venv, pip_install, site_packages

from qnndoctor.children.runner import Completed
from qnndoctor.smoke import EXPECTED, run_smoke
from qnndoctor.smoke.outcome import classify, exit_code_name
from qnndoctor.target.interpreter import Target

Cli = Callable[..., CliResult]
EXPECTED_VALUES = json.loads(EXPECTED.read_text())

# Facts that say onnxruntime-qnn is installed, so the smoke session runs.
@pytest.fixture(scope="module")
def broken_copy(
    tmp_path_factory: pytest.TempPathFactory, healthy_venv: Path
) -> Callable[[str], Path]:
    """A fresh copy of the healthy venv to break in one way."""

    def copy(name: str) -> Path:
        return copy_venv(healthy_venv, tmp_path_factory.mktemp(name) / "venv")

    return copy


def test_real_smoke_session_passes_on_the_htp_simulator(cli: Cli, healthy_venv: Path) -> None:
    result = cli("check", "--python", str(healthy_venv), "--json", "--no-redact")
    assert result.code == 0, result.err
    report = result.json()
    validate_report(report)
    smoke = report["smoke"]
    assert smoke["status"] == "passed", smoke
    child = smoke["child"]
    assert child["path"] == "plugin-2.x"
    assert child["onnxruntime_version"] == "1.31.1"
    assert child["onnxruntime_qnn_version"] == "2.7.0" and child["qnn_version"] == "2.51.0"
    assert child["output"] == pytest.approx(
        EXPECTED_VALUES["expected"], abs=EXPECTED_VALUES["tolerance"]
    )
    assert child["max_abs_error"] <= EXPECTED_VALUES["tolerance"]
    (subgraph,) = child["assignment"]
    assert (
        subgraph["ep"] == "QNNExecutionProvider"
        and len(subgraph["nodes"]) == EXPECTED_VALUES["nodes"]
    )
    venv_root = str(healthy_venv.parent.parent)
    htp = [p for p in child["loaded_libraries"] if p.endswith("libQnnHtp.so")]
    assert htp and htp[0].startswith(venv_root)
    assert child["ep_devices"][0]["ep_vendor"] == "Qualcomm"
    assert set(child["timings_s"]) == {"import", "register", "session", "first_run"}
    passed = next(f for f in report["findings"] if f["id"] == "smoke-passed")
    assert passed["severity"] == "info"


def test_no_smoke_says_why(cli: Cli, healthy_venv: Path) -> None:
    smoke = cli("check", "--python", str(healthy_venv), "--json", "--no-smoke").json()["smoke"]
    assert smoke["status"] == "not_run" and smoke["reason"] == "skipped with --no-smoke"


def test_truncated_htp_library_crashes_the_child(
    cli: Cli, broken_copy: Callable[[str], Path]
) -> None:
    python = broken_copy("truncated")
    library = site_packages(python) / "onnxruntime_qnn" / "libQnnHtp.so"
    library.write_bytes(library.read_bytes()[:100_000])
    report = cli("check", "--python", str(python), "--json").json()
    smoke = report["smoke"]
    assert smoke["status"] == "crashed"
    assert smoke["signal"] in ("SIGBUS", "SIGSEGV")
    assert smoke["signatures"][0] == "truncated-qnn-library-sigbus"
    ids = {f["id"] for f in report["findings"]}
    assert {"smoke-crashed", "qnn-library-corrupt"} <= ids


def test_missing_htp_library_fails_with_the_loader_error(
    cli: Cli, broken_copy: Callable[[str], Path]
) -> None:
    python = broken_copy("missing")
    (site_packages(python) / "onnxruntime_qnn" / "libQnnHtp.so").unlink()
    report = cli("check", "--python", str(python), "--json").json()
    smoke = report["smoke"]
    assert smoke["status"] == "failed"
    assert "fallback to CPU EP has been explicitly disabled" in smoke["reason"]
    assert "libQnnHtp.so: cannot open shared object file" in smoke["reason"]
    # The cause the log names first, then the CPU-fallback refusal it led to.
    assert smoke["signatures"][:2] == [
        "bundled-qnn-backend-library-missing",
        "cpu-fallback-disabled-qnn-setup-failed",
    ]
    assert {"smoke-failed", "qnn-htp-backend-missing"} <= {f["id"] for f in report["findings"]}


def test_plugin_with_too_old_onnxruntime_fails_at_registration(
    cli: Cli, tmp_path: Path, real_wheels: dict[str, Path]
) -> None:
    python = make_venv(tmp_path / "venv")
    pip_install(
        python,
        str(real_wheels["onnxruntime==1.22.1"]),
        str(real_wheels["onnxruntime-qnn==2.7.0"]),
        str(real_wheels["numpy==2.4.6"]),
    )
    report = cli("check", "--python", str(python), "--json").json()
    smoke = report["smoke"]
    assert smoke["status"] == "failed"
    assert smoke["child"]["stage"] == "register"
    assert "register_execution_provider_library" in smoke["reason"]
    assert smoke["signatures"][0] == "plugin-api-on-old-onnxruntime-attributeerror"
    assert {"smoke-failed", "plugin-companion-mismatch"} <= {f["id"] for f in report["findings"]}


def test_no_onnxruntime_qnn_means_not_run(cli: Cli, tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv")
    smoke = cli("check", "--python", str(python), "--json").json()["smoke"]
    assert smoke == {**smoke, "status": "not_run", "reason": "onnxruntime-qnn is not installed"}


def _fake_target(tmp_path: Path, body: str) -> Target:
    return Target(str(write_fake_python(tmp_path, body)), "test double")




@pytest.mark.parametrize(
    ("body", "status", "signal"),
    [
        ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "crashed", "SIGSEGV"),
        ("import os; os.abort()", "crashed", "SIGABRT"),
        ("import sys; sys.exit(127)", "crashed", "exit 127"),
        ("print('garbage instead of JSON')", "crashed", None),
        ("print('@@qnndoctor-smoke@@{broken json')", "crashed", None),
        (
            "import sys; sys.stdout.buffer.write(b'\\xff\\xfe\\x00 not utf-8\\n'); sys.exit(3)",
            "crashed",
            None,
        ),
        (f"print({GOOD_RESULT!r})", "passed", None),
        (f"print({GOOD_RESULT!r}, flush=True); import os; os.abort()", "passed", "SIGABRT"),
    ],
)
def test_fault_injection(tmp_path: Path, body: str, status: str, signal: str | None) -> None:
    result = run_smoke(_fake_target(tmp_path, body), QNN_FACTS, timeout=30)
    assert result.status == status, result
    if signal:
        assert result.exit_name is not None and result.exit_name.startswith(signal)
    json.dumps(result.to_json())  # always serialisable, whatever the child printed


def test_gigabytes_of_output(tmp_path: Path) -> None:
    body = (
        "import sys\nblock = b'x' * (1 << 20)\n"
        "for _ in range(1536): sys.stdout.buffer.write(block); sys.stderr.buffer.write(block[:4096])\n"
        f"print({chr(10) + GOOD_RESULT!r})"  # the real child starts its line with a newline too
    )
    process = psutil.Process()
    before = process.memory_info().rss
    result = run_smoke(_fake_target(tmp_path, body), QNN_FACTS, timeout=60)
    assert result.status == "passed"  # the result line is in the kept tail
    assert result.stderr_tail is not None and len(result.stderr_tail) <= 6000
    assert process.memory_info().rss - before < 200 * 1024 * 1024


@pytest.mark.parametrize("grandchild", [False, True])
def test_hang_is_killed_with_its_whole_tree(tmp_path: Path, grandchild: bool) -> None:
    body = "import time\n"
    if grandchild:
        body += (
            "import subprocess, sys\n"
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
            "open(sys.argv[0] + '.pid', 'w').write(str(p.pid))\n"
        )
    body += "time.sleep(120)"
    target = _fake_target(tmp_path, body)
    started = time.monotonic()
    result = run_smoke(target, QNN_FACTS, timeout=2)
    assert time.monotonic() - started < 2 + 2
    assert result.status == "timed_out"
    if grandchild:
        pid = int(Path(target.python).with_name(BODY + ".pid").read_text())
        assert pid in result.killed_pids
        time.sleep(0.2)
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


class ScriptedRunner:
    """A test double of the Runner interface (like httpx's MockTransport):
    replays one recorded outcome without starting anything."""

    def __init__(self, completed: Completed) -> None:
        self.completed = completed
        self.calls: list[Sequence[str]] = []

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        on_start: Callable[[], object] | None = None,
    ) -> Completed:
        self.calls.append(argv)
        return self.completed


@pytest.mark.parametrize(
    ("code", "name"),
    [
        (0xC0000005, "STATUS_ACCESS_VIOLATION"),
        (0xC000001D, "STATUS_ILLEGAL_INSTRUCTION"),
        (0xC000026F, "STATUS_DLL_INIT_FAILED_LOGOFF"),
        (-1073741819, "STATUS_ACCESS_VIOLATION"),  # the same code, as a signed int
    ],
)
def test_windows_crash_codes_by_name(code: int, name: str) -> None:
    """Exit codes a crashing Windows process reports, replayed by the runner double."""
    runner = ScriptedRunner(Completed(("python",), code, b"", b"", 0.8))
    result = run_smoke(Target("python.exe", "test"), QNN_FACTS, runner=runner)
    assert result.status == "crashed" and result.exit_name == name
    assert runner.calls and runner.calls[0][-1] == "htp"
    assert exit_code_name(code) == name


def test_classify_keeps_partial_progress_of_a_failed_child() -> None:
    child: dict[str, Any] = {
        "status": "failed",
        "stage": "session",
        "exception": {"type": "Fail", "message": "boom"},
    }
    stderr = b"\x1b[1;31m2026 [E:onnxruntime:, x.cc:1 F] QNN SetupBackend failed\x1b[m\n"
    completed = Completed(
        ("p",), 0, ("@@qnndoctor-smoke@@" + json.dumps(child)).encode(), stderr, 1.0
    )
    result = classify(completed, "htp")
    assert result.status == "failed"
    assert result.reason is not None and "first error logged" in result.reason
    assert result.log_lines == ("2026 [E:onnxruntime:, x.cc:1 F] QNN SetupBackend failed",)


@pytest.mark.parametrize(
    ("child", "exit_code", "reason"),
    [
        (
            {"status": "wrong_output", "max_abs_error": 0.5, "tolerance": 0.01},
            0,
            "max abs error 0.5 > tolerance 0.01",
        ),
        (
            {"status": "fell_back_to_cpu", "nodes_not_on_qnn": ["Conv_0"]},
            3,
            "nodes not on QNN: ['Conv_0']; then the process exited abnormally (3)",
        ),
        ({"status": "passed"}, 3, "then the process exited abnormally (3)"),
        ({"status": "passed"}, 0, None),
    ],
)
def test_classify_says_why_a_reported_session_did_not_pass(
    child: dict[str, Any], exit_code: int, reason: str | None
) -> None:
    """The last result line counts; an abnormal exit after a result is said."""
    stdout = "@@qnndoctor-smoke@@{not json\n@@qnndoctor-smoke@@" + json.dumps(child)
    result = classify(Completed(("p",), exit_code, stdout.encode(), b"", 1.0), "htp")
    assert (result.status, result.reason) == (child["status"], reason)


def test_monolithic_path_with_plain_onnxruntime_over_it(
    cli: Cli, tmp_path: Path, real_wheels: dict[str, Path]
) -> None:
    """The seed's first failure: onnxruntime-qnn 1.x installed, then plain
    onnxruntime over it; the real onnxruntime that now loads has no QNN EP."""
    from helpers.monolithic import monolithic_qnn_wheel

    python = make_venv(tmp_path / "venv")
    pip_install(python, str(monolithic_qnn_wheel(tmp_path / "w")))
    pip_install(python, str(real_wheels["onnxruntime==1.31.1"]), str(real_wheels["numpy==2.4.6"]))
    report = cli("check", "--python", str(python), "--json").json()
    smoke = report["smoke"]
    assert smoke["status"] == "failed"
    assert smoke["child"]["path"] == "monolithic-1.x"
    assert smoke["child"]["stage"] == "register"
    assert "QNNExecutionProvider is not in get_available_providers()" in smoke["reason"]
    assert "CPUExecutionProvider" in smoke["child"]["available_providers"]
    assert {"smoke-failed", "onnxruntime-multiple-owners"} <= {f["id"] for f in report["findings"]}


def test_the_shipped_model_is_what_the_generator_makes() -> None:
    """qnndoctor/smoke/build_model.py is re-runnable and byte-for-byte stable."""
    from qnndoctor.smoke import MODEL, build_model

    assert build_model.build() == MODEL.read_bytes()
    assert build_model.expected_document() == EXPECTED_VALUES
    assert len(MODEL.read_bytes()) < 1024
