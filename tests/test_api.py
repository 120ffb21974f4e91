"""The Python API (qnndoctor.check / ensure_ready / recommend / explain)
against real venvs, side by side with the CLI on the same environments."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult, runtime_venv, validate_report

import qnndoctor

Cli = Callable[..., CliResult]
EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"


@pytest.fixture(scope="module")
def floated_venv(tmp_path_factory: pytest.TempPathFactory, real_wheels: dict[str, Path]) -> Path:
    """onnxruntime-qnn 2.3.0 floated onto onnxruntime 1.31.1, newer than the
    plugin was built for (it requires onnxruntime <1.28)."""
    return runtime_venv(tmp_path_factory.mktemp("floated") / "venv", real_wheels, "1.31.1", "2.3.0")


def _ids(document: dict[str, Any]) -> list[str]:
    return [f["id"] for f in document["findings"]]


def _agree(cli: Cli, python: Path | str, *flags: str, smoke: bool) -> qnndoctor.Report:
    report = qnndoctor.check(python, smoke=smoke)
    shown = cli("check", "--python", str(python), "--json", *flags)
    document = report.to_dict()
    validate_report(document)
    assert report.exit_code == shown.code
    assert _ids(document) == _ids(shown.json())
    assert [f.id for f in report.findings] == _ids(document)
    assert document["smoke"]["status"] == shown.json()["smoke"]["status"]
    assert document["recommendation"] == shown.json()["recommendation"]
    assert document["redacted"] is True
    return report


def test_api_and_cli_agree_on_the_healthy_venv(cli: Cli, healthy_venv: Path) -> None:
    report = _agree(cli, healthy_venv, smoke=True)
    assert report.ok and report.exit_code == 0 and report.error is None
    assert report.smoke is not None and report.smoke.status == "passed"
    assert report.recommendation is not None and report.recommendation.version == "2.7.0"
    assert qnndoctor.ensure_ready(healthy_venv).ok


HEAD_START_PROBE = """
import ctypes, json, sys
from qnndoctor import headstart
import qnndoctor
claimed = []
claim = headstart.claim
def spy(kind, argv, env):
    early = claim(kind, argv, env)
    if early is not None:
        claimed.append(kind)
    return early
headstart.claim = spy
report = qnndoctor.check(sys.argv[1])
flag = ctypes.c_int(-1)
if sys.platform.startswith("linux"):
    ctypes.CDLL(None).prctl(37, ctypes.byref(flag), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER
print(json.dumps({
    "claimed": claimed, "smoke": report.smoke.status, "waiting": list(headstart.waiting()),
    "subreaper": flag.value,
}))
"""


def test_the_api_gives_its_children_a_head_start_and_adopts_no_orphans(
    healthy_venv: Path,
) -> None:
    """``qnndoctor.check`` starts the smoke session and the probe program
    before it imports the pipeline, which claims both (a fresh interpreter:
    the caller's process as an application has it). The process is the
    caller's, so it never becomes the subreaper of the session's orphans."""
    done = subprocess.run(
        [sys.executable, "-c", HEAD_START_PROBE, str(healthy_venv)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "QNNDOCTOR_NO_MEMO": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout)
    assert seen["smoke"] == "passed"
    assert sorted(seen["claimed"]) == ["probe", "smoke"]
    assert seen["waiting"] == []
    assert seen["subreaper"] in (0, -1)  # -1: not Linux, not asked


def test_api_and_cli_agree_on_another_interpreter(cli: Cli) -> None:
    report = _agree(cli, sys.executable, "--no-smoke", smoke=False)
    assert report.smoke is not None and report.smoke.status == "not_run"
    assert "no-onnxruntime-qnn" in [f.id for f in report.findings]
    assert not report.ok and report.exit_code == 1


def test_ensure_ready_raises_on_a_floated_plugin(cli: Cli, floated_venv: Path) -> None:
    report = _agree(cli, floated_venv, smoke=True)
    assert not report.ok and report.exit_code == 1
    with pytest.raises(qnndoctor.NotReady) as raised:
        qnndoctor.ensure_ready(floated_venv)
    top = raised.value.findings[0]
    assert top.severity == "error"
    assert [f.id for f in raised.value.findings] == [f.id for f in report.findings]
    message = str(raised.value)
    assert top.title in message and top.fix in message
    # Every command of the fix, in order: this venv has no pip, so its
    # `-m ensurepip` comes first and the install follows.
    assert len(top.commands) >= 2 and "; then ".join(top.commands) in message
    assert top.commands[0].endswith("-m ensurepip")
    assert raised.value.report.document["redacted"] is False  # stays in the process


def test_ensure_ready_without_smoke_knows_the_floated_pair_fails(
    cli: Cli, floated_venv: Path
) -> None:
    """The installer's pre-flight (no session) already knows: pip accepts
    onnxruntime-qnn 2.3.0 beside onnxruntime 1.31.1, the known issue says it fails."""
    report = _agree(cli, floated_venv, "--no-smoke", smoke=False)
    assert "plugin-companion-known-broken" in [f.id for f in report.findings]
    assert "plugin-companion-mismatch" not in [f.id for f in report.findings]  # pip is satisfied
    finding = next(f for f in report.findings if f.id == "plugin-companion-known-broken")
    assert "onnxruntime-qnn/issues/492" in finding.cause
    with pytest.raises(qnndoctor.NotReady):
        qnndoctor.ensure_ready(floated_venv, smoke=False)


def test_could_not_check_is_a_report_and_bad_arguments_raise(tmp_path: Path) -> None:
    report = qnndoctor.check(tmp_path / "no-python-here", smoke=False)
    assert report.exit_code == 3 and not report.ok and report.error
    validate_report(report.to_dict())
    with pytest.raises(qnndoctor.NotReady, match="could not check"):
        qnndoctor.ensure_ready(tmp_path / "no-python-here", smoke=False)
    with pytest.raises(ValueError, match="backend"):
        qnndoctor.check(smoke=False, backend="npu")
    with pytest.raises(ValueError, match="positive"):
        qnndoctor.check(timeout=0)


def test_recommend_what_if_and_here() -> None:
    answer = qnndoctor.recommend(
        platform="win_arm64", python_version="3.12", soc="Snapdragon X Elite"
    )
    assert answer.status == "ok" and answer.version and answer.commands
    here = qnndoctor.recommend()
    assert here.status in ("ok", "nothing-fits")
    with pytest.raises(ValueError):
        qnndoctor.recommend(platform="win_arm64")


def test_explain_uses_the_reports_facts(healthy_venv: Path) -> None:
    text = "onnxruntime.capi.onnxruntime_pybind11_state.Fail: QNN SetupBackend failed"
    alone = qnndoctor.explain(text)
    assert alone.top is not None and alone.top.id and alone.top.fix
    report = qnndoctor.check(healthy_venv, smoke=False)
    with_facts = qnndoctor.explain(text, facts=report)
    used = {f["key"] for f in with_facts.to_dict()["facts"]["used"]}
    assert "onnxruntime_qnn.version" in used or len(used) > len(
        {f["key"] for f in alone.to_dict()["facts"]["used"]}
    )
    with pytest.raises(ValueError, match="facts"):
        qnndoctor.explain(text, facts={"schema_version": 1, "facts": []})


def test_import_is_cheap() -> None:
    """`import qnndoctor` loads no part of the API, rendering or network stack."""
    code = (
        "import sys, qnndoctor; heavy = [m for m in ('qnndoctor.api', 'qnndoctor.pipeline', "
        "'rich', 'httpx', 'packaging') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


def _mypy(tmp_path: Path, *files: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    root = Path(qnndoctor.__file__).resolve().parent.parent
    if (root / "pyproject.toml").is_file():  # an editable install: mypy needs the source tree
        env["MYPYPATH"] = str(root)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--cache-dir",
            str(tmp_path / ".mypy"),
            *files,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=env,
    )


def test_example_consumers_pass_mypy_strict(tmp_path: Path) -> None:
    files = [str(p) for p in sorted(EXAMPLES.glob("*.py"))]
    assert len(files) >= 2
    result = _mypy(tmp_path, *files)
    assert result.returncode == 0, result.stdout + result.stderr
    # And mypy does catch a consumer's type error through the API's types.
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "import qnndoctor\nversion: int = qnndoctor.check().exit_code\n"
        "name: int = qnndoctor.check().findings[0].title\n"
    )
    result = _mypy(tmp_path, str(wrong))
    assert result.returncode == 1 and "wrong.py:3" in result.stdout, result.stdout


def test_api_names_survive_the_cli_running_in_process(cli: Cli, tmp_path: Path) -> None:
    """No sub-module shadows an API name once the CLI has imported it."""
    log = tmp_path / "log.txt"
    log.write_text("QNN SetupBackend failed\n", encoding="utf-8")
    cli("explain", "--log", str(log), "--no-facts")
    assert callable(qnndoctor.explain) and callable(qnndoctor.check)
    assert callable(qnndoctor.recommend) and callable(qnndoctor.ensure_ready)
