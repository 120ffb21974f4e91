"""``qnndoctor fix`` on real venvs with real pip and real onnxruntime-qnn on
the HTP simulator, offline: the target's pip takes the cached real wheels
through its own environment configuration (PIP_NO_INDEX, PIP_FIND_LINKS)."""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult
from helpers.wheels import (
    add_second_flavour,
    add_uninstall_leftover,
    copy_venv,
    pip_check,
    pip_install,
    site_packages,
    system_like_python,
)
from packaging.version import Version

Cli = Callable[..., CliResult]


@pytest.fixture
def venv_copy(tmp_path: Path, pip_venv: Path) -> Callable[[], Path]:
    return lambda: copy_venv(pip_venv, tmp_path / "venv")


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` with its SHA-256 (symlinks by target)."""
    state: dict[str, str] = {}
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            if path.is_symlink():
                state[str(path)] = "-> " + str(path.readlink())
            else:
                state[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


def _freeze(python: Path) -> list[str]:
    done = subprocess.run(
        [str(python), "-m", "pip", "freeze", "--all"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return sorted(done.stdout.splitlines())


def _with_qnn_230(python: Path, real_wheels: dict[str, Path]) -> Path:
    """onnxruntime-qnn 2.3.0 beside onnxruntime 1.31.1: fails the plugin
    version handshake (2.3.0 runs with 1.27.0, not newer)."""
    pip_install(python, str(real_wheels["onnxruntime-qnn==2.3.0"]))
    return python


def test_handshake_failure_dry_run_changes_nothing_then_fixed_and_proven(
    cli: Cli, venv_copy: Callable[[], Path], real_wheels: dict[str, Path], offline_pip: None
) -> None:
    python = _with_qnn_230(venv_copy(), real_wheels)
    root = python.parent.parent
    freeze, files = _freeze(python), _tree(root)
    dry = cli("fix", "--python", str(python))  # no --yes, stdin not a terminal
    assert dry.code == 1
    assert "dry run: nothing was changed" in dry.out
    assert "-m pip install onnxruntime-qnn==2.7.0\n" in dry.out  # dependencies resolved by pip
    assert "why: recommendation: onnxruntime-qnn 2.7.0" in dry.out
    assert "smoke session failed now" in dry.out
    assert _freeze(python) == freeze
    assert _tree(root) == files

    result = cli("fix", "--python", str(python), "--yes", "--json")
    assert result.code == 0, result.out + result.err
    document = result.json()
    assert document["outcome"] == "fixed" and document["state"] == "new"
    (step,) = document["plan"]["steps"]
    assert step["pip_args"] == ["install", "onnxruntime-qnn==2.7.0"]
    assert "recommendation: onnxruntime-qnn 2.7.0" in step["why"]
    proof = document["proof"]
    assert proof["proven"] is True
    assert proof["versions_before"]["onnxruntime-qnn"] == "2.3.0"
    assert proof["versions_after"]["onnxruntime-qnn"] == "2.7.0"
    assert proof["smoke_before"]["status"] == "failed"
    assert proof["smoke_after"]["status"] == "passed"
    assert proof["smoke_after"]["timings_s"]  # the proving session's own stage timings
    assert "smoke-failed (error)" in proof["findings_gone"]
    assert proof["pip_check"]["clean"] is True  # part of the proof
    assert "Successfully installed onnxruntime-qnn-2.7.0" in result.err  # streamed pip output
    assert not (root / ".qnndoctor-fix").exists()  # backup discarded
    # An independent check agrees.
    check = cli("check", "--python", str(python), "--json")
    assert check.code == 0 and check.json()["smoke"]["status"] == "passed"


def test_truncated_htp_library_is_reinstalled_and_proven(
    cli: Cli, venv_copy: Callable[[], Path], offline_pip: None
) -> None:
    python = venv_copy()
    library = site_packages(python) / "onnxruntime_qnn" / "libQnnHtp.so"
    whole = library.read_bytes()
    library.write_bytes(whole[:100_000])
    result = cli("fix", "--python", str(python), "--yes", "--json")
    assert result.code == 0, result.out + result.err
    document = result.json()
    (step,) = document["plan"]["steps"]
    assert step["kind"] == "reinstall"
    assert step["pip_args"] == [
        "install",
        "--force-reinstall",
        "--no-deps",
        "onnxruntime-qnn==2.7.0",
    ]
    assert document["proof"]["smoke_before"]["status"] == "crashed"
    assert document["proof"]["smoke_after"]["status"] == "passed"
    assert library.read_bytes() == whole


def test_conflicting_flavour_is_removed(
    cli: Cli, venv_copy: Callable[[], Path], tmp_path: Path, offline_pip: None
) -> None:
    """A second flavour that also owns `onnxruntime` (its install overwrote
    onnxruntime/__init__.py) is uninstalled and onnxruntime made whole."""
    python = venv_copy()
    add_second_flavour(python, tmp_path)
    result = cli("fix", "--python", str(python), "--yes", "--json")
    assert result.code == 0, result.out + result.err
    document = result.json()
    kinds = [(s["kind"], s["pip_args"]) for s in document["plan"]["steps"]]
    assert ("uninstall", ["uninstall", "-y", "onnxruntime-directml"]) in kinds
    assert (
        "reinstall",
        ["install", "--force-reinstall", "--no-deps", "onnxruntime==1.31.1"],
    ) in kinds
    assert "onnxruntime-multiple-owners (error)" in document["proof"]["findings_gone"]
    assert "onnxruntime-directml" not in document["proof"]["versions_after"]
    assert not any(line.startswith("onnxruntime-directml") for line in _freeze(python))


def test_failed_proof_rolls_back_to_the_exact_previous_state(
    cli: Cli, venv_copy: Callable[[], Path], real_wheels: dict[str, Path], offline_pip: None
) -> None:
    """A plan forced onto onnxruntime 1.22.1 (too old for the 2.7.0 plugin):
    pip succeeds, the proof fails, everything is put back byte for byte."""
    python = _with_qnn_230(venv_copy(), real_wheels)
    root = python.parent.parent
    freeze, files = _freeze(python), _tree(root)
    result = cli(
        "fix",
        "--python",
        str(python),
        "--yes",
        "--json",
        "--x-force-install",
        "onnxruntime-qnn==2.7.0",
        "--x-force-install",
        "onnxruntime==1.22.1",
    )
    assert result.code == 1, result.out + result.err
    document = result.json()
    assert document["outcome"] == "rolled-back" and document["state"] == "old"
    assert document["applied"][0]["ok"] is True
    assert document["proof"]["proven"] is False
    assert document["proof"]["versions_after"]["onnxruntime"] == "1.22.1"
    assert "register_execution_provider_library" in document["message"]
    rollback = document["rollback"]
    assert rollback["verified"] is True and rollback["files_checked"] > 600
    assert _freeze(python) == freeze
    assert _tree(root) == files
    # The result ends with the next thing to do, and it works as printed: the
    # plan by hand plus what the proof's check asked for, then a check.
    following = document["next"]
    assert following["commands"][-1] == (
        f"{sys.executable} -m qnndoctor check --python {python}"
    )
    for command in following["commands"]:
        done = subprocess.run(
            ["sh", "-c", command],
            capture_output=True,
            text=True,
            timeout=600,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
    assert pip_check(python) == ""


def _report_of(cli: Cli, python: Path) -> dict[str, Any]:
    report = cli("check", "--python", str(python), "--json", "--no-redact").json()
    assert isinstance(report, dict)
    return report


def test_emulated_x64_python_is_refused_with_the_native_route(
    cli: Cli, venv_copy: Callable[[], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The machine's facts through the seam: a report whose recommendation is
    the resolver's answer for x64 Python 3.12 on an ARM64 Windows machine."""
    from qnndoctor.fix import checking
    from qnndoctor.resolver.whatif import what_if

    python = venv_copy()
    report = _report_of(cli, python)
    emulated = what_if("win_amd64", "3.12", native_arch="arm64", soc="Snapdragon X Elite")
    report["recommendation"] = emulated
    monkeypatch.setattr(checking, "run_check", lambda *_a, **_k: report)
    files = _tree(python.parent.parent)
    result = cli("fix", "--python", str(python), "--yes", "--json")
    assert result.code == 1
    document = result.json()
    assert document["outcome"] == "refused"
    (reason,) = document["plan"]["refusals"]
    assert "emulat" in reason
    assert "winget install --exact --id Python.Python.3.12 --architecture arm64" in reason
    assert "py -V:3.12-arm64" in reason
    assert document["plan"]["steps"] == []
    assert _tree(python.parent.parent) == files


def test_pep668_interpreter_is_refused_without_consent(cli: Cli, tmp_path: Path) -> None:
    python = system_like_python(tmp_path / "system")
    result = cli("fix", "--python", str(python), "--yes", "--json")
    assert result.code == 1
    document = result.json()
    assert document["outcome"] == "refused"
    (reason,) = document["plan"]["refusals"]
    assert "PEP 668" in reason and "EXTERNALLY-MANAGED" in reason
    assert "-m venv" in reason and "--break-system-packages" in reason
    # The text says the reason once, then that nothing changed.
    shown = cli("fix", "--python", str(python), "--yes")
    assert shown.code == 1 and shown.out.count("PEP 668") == 1
    assert shown.out.rstrip().endswith("refused: nothing was changed")
    # With consent (dry run): a plan, every pip call carrying the flag.
    consent = cli("fix", "--python", str(python), "--break-system-packages", "--json").json()
    assert consent["outcome"] == "dry-run"
    assert consent["plan"]["steps"]
    assert all("--break-system-packages" in s["pip_args"] for s in consent["plan"]["steps"])
    # A venv made from that interpreter is not system-managed (PEP 668 says so, pip agrees).
    venv = tmp_path / "venv"
    subprocess.run([str(python), "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    refusals = cli("fix", "--python", str(venv / "bin" / "python"), "--json").json()["plan"][
        "refusals"
    ]
    assert not any("PEP 668" in r for r in refusals)
    assert any("pip is not available" in r and "ensurepip" in r for r in refusals)


def test_healthy_setup_needs_nothing(cli: Cli, pip_venv: Path) -> None:
    result = cli("fix", "--python", str(pip_venv), "--yes", "--json")
    assert result.code == 0
    assert result.json()["outcome"] == "nothing-to-do"


def test_usage_errors_exit_2(cli: Cli) -> None:
    assert cli("fix", "--backend", "npu").code == 2
    assert cli("fix", "--step-timeout", "0").code == 2


def test_ctrl_c_during_a_step_restores_the_old_state_and_says_so(
    venv_copy: Callable[[], Path], real_wheels: dict[str, Path], offline_pip: None
) -> None:
    """SIGINT to the whole process group (what a terminal's Ctrl-C does) while
    pip installs: pip and qnndoctor both get it; the old state comes back."""
    import json
    import signal

    python = _with_qnn_230(venv_copy(), real_wheels)
    root = python.parent.parent
    freeze, files = _freeze(python), _tree(root)
    process = subprocess.Popen(
        [sys.executable, "-m", "qnndoctor", "fix", "--python", str(python), "--yes", "--json"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # A CI shell may start us with SIGINT ignored (background jobs); a
        # terminal's qnndoctor has the default handler.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stderr is not None
    seen: list[str] = []
    for line in process.stderr:
        seen.append(line)
        if line.startswith("  pip | "):  # pip is running step 1
            os.killpg(process.pid, signal.SIGINT)
            break
    out, rest = process.communicate(timeout=600)
    assert process.returncode == 1, "".join(seen) + rest
    document = json.loads(out)
    assert document["outcome"] == "interrupted" and document["state"] == "old"
    assert document["rollback"]["verified"] is True
    assert "interrupted; rolled back: the previous state is restored" in document["message"]
    assert _freeze(python) == freeze
    assert _tree(root) == files


def test_failing_pip_step_rolls_back(
    cli: Cli, venv_copy: Callable[[], Path], offline_pip: None
) -> None:
    """A version pip cannot find (not among the cached wheels): the step fails,
    nothing is left half-done."""
    python = venv_copy()
    root = python.parent.parent
    files = _tree(root)
    result = cli(
        "fix",
        "--python",
        str(python),
        "--yes",
        "--json",
        "--x-force-install",
        "onnxruntime==1.23.0",
    )
    assert result.code == 1
    document = result.json()
    assert document["outcome"] == "rolled-back"
    assert document["applied"][0]["ok"] is False
    assert "step 1 failed: pip exited 1" in document["message"]
    assert (
        "No matching distribution found for onnxruntime==1.23.0"
        in (document["applied"][0]["pip"]["output_tail"])
    )
    assert document["rollback"]["verified"] is True
    assert _tree(root) == files


def test_no_wheel_for_this_python_is_refused(
    cli: Cli, pip_venv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The resolver's answer for CPython 3.8 on Linux x86-64 (no onnxruntime-qnn
    wheel), fed through the seam."""
    from qnndoctor.fix import checking
    from qnndoctor.resolver.whatif import what_if

    report = _report_of(cli, pip_venv)
    report["recommendation"] = what_if("linux_x86_64", "3.8")
    monkeypatch.setattr(checking, "run_check", lambda *_a, **_k: report)
    document = cli("fix", "--python", str(pip_venv), "--yes", "--json").json()
    assert document["outcome"] == "refused"
    (reason,) = document["plan"]["refusals"]
    assert reason.startswith("no onnxruntime-qnn wheel fits this Python (3.8")
    assert "install CPython 3.12: `python3.12 -m pip install onnxruntime-qnn==2.7.0`" in reason


def test_uninstall_leftover_is_moved_out_and_proven(
    cli: Cli, venv_copy: Callable[[], Path], offline_pip: None
) -> None:
    """A `~nnxruntime` folder (pip's rename during a half-finished uninstall)
    in a working setup: only that warning's fix is applied, nothing upgraded."""
    python = venv_copy()
    leftover = add_uninstall_leftover(python)
    freeze = _freeze(python)
    result = cli("fix", "--python", str(python), "--yes", "--json")
    assert result.code == 0, result.out + result.err
    document = result.json()
    (step,) = document["plan"]["steps"]
    assert step["kind"] == "remove-leftover" and step["path"].endswith("/~nnxruntime")
    # what the user could run by hand, as printed (the fix itself moves it into its backup)
    assert document["plan"]["commands"] == [f"rm -rf {shlex.quote(step['path'])}"]
    assert "uninstall-leftover (warning)" in document["proof"]["findings_gone"]
    assert not leftover.exists()
    assert _freeze(python) == freeze


def test_two_flavours_leftover_and_missing_dependencies_end_pip_check_clean(
    cli: Cli, venv_copy: Callable[[], Path], tmp_path: Path, offline_pip: None
) -> None:
    """The issue's case: a second flavour, a `~nnxruntime` leftover, and
    onnxruntime-qnn's coloredlogs and sympy missing. "fixed and proven" now
    includes `pip check`, so the plan closes with the dependencies step."""
    python = venv_copy()
    from helpers.wheels import pip_uninstall

    pip_uninstall(python, "coloredlogs", "sympy")
    add_second_flavour(python, tmp_path)
    add_uninstall_leftover(python)
    assert "onnxruntime-qnn 2.7.0 requires coloredlogs" in pip_check(python)
    result = cli("fix", "--python", str(python), "--yes", "--json")
    assert result.code == 0, result.out + result.err
    document = result.json()
    assert any("requires coloredlogs" in p for p in document["pip_check_before"]["problems"])
    steps = document["plan"]["steps"]
    assert [s["kind"] for s in steps] == ["remove-leftover", "uninstall", "reinstall", "dependencies"]
    assert steps[-1]["pip_args"] == ["install", "onnxruntime-qnn==2.7.0"]
    assert document["proof"]["pip_check"]["clean"] is True
    assert pip_check(python) == ""
    assert "Successfully installed" in result.err and "sympy" in result.err
    check = cli("check", "--python", str(python), "--json")
    assert check.code == 0, check.out[-2000:]


def test_too_old_onnxruntime_for_the_plugin_is_upgraded_and_proven(
    cli: Cli, venv_copy: Callable[[], Path], real_wheels: dict[str, Path], offline_pip: None
) -> None:
    """onnxruntime 1.22.1 under onnxruntime-qnn 2.7.0 (no plugin API): the
    plugin-companion-mismatch finding's requirement is installed; the smoke
    diagnosis's broader fix (reinstall both) is not needed and not used."""
    python = venv_copy()
    pip_install(python, str(real_wheels["onnxruntime==1.22.1"]))
    result = cli("fix", "--python", str(python), "--yes", "--json")
    assert result.code == 0, result.out + result.err
    document = result.json()
    (step,) = document["plan"]["steps"]
    assert step["pip_args"] == ["install", "onnxruntime>=1.24.2"]
    assert step["why"].startswith("finding plugin-companion-mismatch")
    # The newest onnxruntime among the wheels pip is given (1.31.1 in CI).
    after = document["proof"]["versions_after"]["onnxruntime"]
    assert Version(after) >= Version("1.24.2")
    assert document["proof"]["smoke_after"]["status"] == "passed"
    assert document["proof"]["pip_check"]["clean"] is True


def test_pip_step_past_its_time_limit_is_killed_and_rolled_back(
    cli: Cli, venv_copy: Callable[[], Path], offline_pip: None
) -> None:
    python = venv_copy()
    freeze = _freeze(python)
    # No interpreter starts pip and installs a 200 MB wheel in 10 ms.
    result = cli(
        "fix",
        "--python",
        str(python),
        "--yes",
        "--json",
        "--step-timeout",
        "0.01",
        "--x-force-install",
        "onnxruntime-qnn==2.3.0",
    )
    assert result.code == 1
    document = result.json()
    assert document["applied"][0]["pip"]["timed_out"] is True
    assert "step 1 failed: timed out" in document["message"]
    assert document["rollback"]["verified"] is True
    assert _freeze(python) == freeze


def test_missing_interpreter_is_a_clear_error(cli: Cli, tmp_path: Path) -> None:
    result = cli("fix", "--python", str(tmp_path / "nowhere" / "python"), "--json")
    assert result.code == 1
    document = result.json()
    assert document["outcome"] == "could-not-check"
    assert document["message"].startswith("could not check:")
    assert "Traceback" not in result.err
