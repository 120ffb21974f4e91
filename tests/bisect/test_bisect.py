"""``qnndoctor bisect`` for real: throwaway venvs made by the base
interpreter, real pip from a local wheelhouse of real wheels, the real smoke
session on the HTP simulator; the target stays byte-identical; Ctrl-C
(a real SIGINT) and a timeout leave nothing behind."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import psutil
import pytest
from conftest import CliResult, runtime_venv

pytestmark = pytest.mark.real_ort

# What a pair needs besides the two runtimes: their dependencies, offline.
_DEPENDENCIES = (
    "numpy==2.4.6",
    "coloredlogs==15.0.1",
    "humanfriendly==10.0",
    "flatbuffers==25.12.19",
    "packaging==26.4",
    "protobuf==7.36.2",
    "sympy==1.14.0",
    "mpmath==1.3.0",
)


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory, real_wheels: dict[str, Path]) -> Path:
    """onnxruntime-qnn 2.3.0 / 2.7.0, onnxruntime 1.27.0 / 1.32.0 and their
    dependencies (links to the real wheels): no 2.5.0 in it."""
    folder = tmp_path_factory.mktemp("wheelhouse")
    pins = (
        "onnxruntime-qnn==2.3.0",
        "onnxruntime-qnn==2.7.0",
        "onnxruntime==1.27.0",
        "onnxruntime==1.32.0",
        *_DEPENDENCIES,
    )
    for pin in pins:
        wheel = real_wheels[pin]
        (folder / wheel.name).symlink_to(wheel)
    return folder


@pytest.fixture(scope="session")
def broken_target(tmp_path_factory: pytest.TempPathFactory, real_wheels: dict[str, Path]) -> Path:
    """The field report's setup: onnxruntime-qnn 2.3.0 with pip's newest
    onnxruntime, 1.32.0 (the plugin handshake fails)."""
    return runtime_venv(tmp_path_factory.mktemp("broken") / "venv", real_wheels, "1.32.0", "2.3.0")


def _tree_hash(root: Path) -> str:
    """Every file's path, mode and bytes under ``root`` (links as their target text)."""
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files + [d for d in dirs if Path(folder, d).is_symlink()]):
            path = Path(folder, name)
            digest.update(str(path.relative_to(root)).encode())
            if path.is_symlink():
                digest.update(str(path.readlink()).encode())
                continue
            digest.update(oct(path.stat().st_mode).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _validate(document: dict[str, Any]) -> None:
    import jsonschema

    schema = json.loads(
        resources.files("qnndoctor").joinpath("schema/bisect.schema.json").read_text("utf-8")
    )
    jsonschema.validate(document, schema)


@pytest.fixture
def evidence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "evidence"
    monkeypatch.delenv("QNNDOCTOR_NO_EVIDENCE", raising=False)
    monkeypatch.setenv("QNNDOCTOR_EVIDENCE_DIR", str(folder))
    return folder


def _bisect_json(
    cli: Callable[..., CliResult], python: Path, wheelhouse: Path, *options: str, work: Path | None = None
) -> CliResult:
    """``qnndoctor bisect --json`` for ``python`` from the local wheelhouse."""
    where = ["--work-dir", str(work)] if work is not None else []
    return cli(
        "bisect", "--python", str(python), "--find-links", str(wheelhouse), *options, *where, "--json"
    )


def test_broken_target_finds_a_passing_pair_stays_identical_and_informs_recommend(
    cli: Callable[..., CliResult],
    broken_target: Path,
    wheelhouse: Path,
    tmp_path: Path,
    evidence: Path,
) -> None:
    before = _tree_hash(broken_target.parent.parent)
    work = tmp_path / "work"
    work.mkdir()
    result = _bisect_json(cli, broken_target, wheelhouse, "--releases", "2.7.0,2.3.0", work=work)
    assert result.code == 0, result.err
    document = result.json()
    _validate(document)
    assert document["best"] == {"onnxruntime_qnn": "2.7.0", "onnxruntime": "1.32.0"}
    assert [r["outcome"] for r in document["results"]] == ["passed"]  # stopped at the first
    # from the wheelhouse the pair was tried from, so the command works as printed offline too
    assert document["commands"][-1].endswith(
        f"-m pip install --find-links {shlex.quote(str(wheelhouse.resolve()))}"
        " onnxruntime-qnn==2.7.0 onnxruntime==1.32.0"
    )
    assert str(broken_target) in document["commands"][-1]
    assert _tree_hash(broken_target.parent.parent) == before
    assert list(work.iterdir()) == []  # every throwaway venv removed
    # The evidence lasts: recommend pins the companion that passed here, with its date.
    lines = (evidence / "pairs.jsonl").read_text("utf-8").splitlines()
    assert json.loads(lines[0])["outcome"] == "passed"
    recommend = cli("recommend", "--python", str(broken_target), "--json")
    answer = recommend.json()["recommendation"]
    assert answer["version"] == "2.7.0"
    assert any(c.endswith("onnxruntime-qnn==2.7.0 onnxruntime==1.32.0") for c in answer["commands"])
    [entry] = answer["local_evidence"]
    assert entry["text"].startswith("onnxruntime-qnn 2.7.0 with onnxruntime 1.32.0 passed here on ")
    assert any("passed here on" in note for note in answer["notes"])
    # fix takes bisect's winner: its plan, built from this target's real report and
    # environment, installs the pair. (This target was made without pip, which fix
    # refuses before planning; the plan is a pure function of the two, so it is
    # asked as if pip were there.)
    from qnndoctor.fix.environment import inspect
    from qnndoctor.fix.plan import build_plan

    report = cli("check", "--python", str(broken_target), "--json").json()
    environment = dataclasses.replace(inspect(str(broken_target)).environment, has_pip=True)
    plan = build_plan(report, environment)
    assert plan.refusals == ()
    [step] = plan.steps
    assert "onnxruntime-qnn==2.7.0" in step.pip_args, plan
    # the winner's companion is the one this target already has: kept, not reinstalled
    assert "onnxruntime==1.32.0" in step.pip_args or "already installed: onnxruntime==1.32.0" in plan.notes
    assert _tree_hash(broken_target.parent.parent) == before


def test_releases_230_with_two_companions_all_gives_passed_and_failed(
    cli: Callable[..., CliResult], healthy_venv: Path, wheelhouse: Path, evidence: Path
) -> None:
    result = _bisect_json(
        cli, healthy_venv, wheelhouse, "--releases", "2.3.0", "--companions", "1.27.0,1.32.0", "--all"
    )
    assert result.code == 0, result.err
    document = result.json()
    _validate(document)
    outcomes = {r["onnxruntime"]: (r["outcome"], r["cause"]) for r in document["results"]}
    assert outcomes["1.27.0"] == ("passed", None)
    assert outcomes["1.32.0"][0] == "failed"
    # The diagnosis engine names the cause: the plugin handshake of 2.0-2.3.
    assert "ort_version_supported" in outcomes["1.32.0"][1] or "handshake" in outcomes["1.32.0"][1]
    assert document["best"] == {"onnxruntime_qnn": "2.3.0", "onnxruntime": "1.27.0"}
    # Both kept as evidence: the pair that failed here is listed with its cause.
    recommend = cli("recommend", "--python", str(healthy_venv), "--json")
    texts = [e["text"] for e in recommend.json()["recommendation"]["local_evidence"]]
    assert any(
        t.startswith("onnxruntime-qnn 2.3.0 with onnxruntime 1.32.0 failed here") for t in texts
    )
    assert any(
        t.startswith("onnxruntime-qnn 2.3.0 with onnxruntime 1.27.0 passed here") for t in texts
    )
    # check uses it too (in its report's recommendation and its text).
    report = cli("check", "--python", str(healthy_venv), "--no-smoke", "--format", "json").json()
    assert len(report["recommendation"]["local_evidence"]) == 2
    text = cli("check", "--python", str(healthy_venv), "--no-smoke").out
    assert "measured: onnxruntime-qnn 2.3.0 with onnxruntime 1.32.0 failed here on" in text


def test_a_missing_wheel_is_not_installable_with_pips_reason(
    cli: Callable[..., CliResult], healthy_venv: Path, wheelhouse: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    result = _bisect_json(
        cli, healthy_venv, wheelhouse, "--releases", "2.5.0", "--no-record", work=work
    )
    assert result.code == 1
    document = result.json()
    _validate(document)
    [row] = document["results"]
    assert row["outcome"] == "not-installable"
    assert "onnxruntime-qnn==2.5.0" in row["cause"] and "ERROR" in row["cause"]
    assert document["best"] is None and document["commands"] == []
    assert list(work.iterdir()) == []


def test_an_install_timeout_is_a_timeout_and_cleans_up(
    cli: Callable[..., CliResult], healthy_venv: Path, wheelhouse: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    result = _bisect_json(
        cli, healthy_venv, wheelhouse, "--releases", "2.7.0", "--companions", "1.32.0", "--install-timeout", "1", "--no-record", work=work
    )
    document = result.json()
    [row] = document["results"]
    assert row["outcome"] == "timeout", row
    assert "did not finish within 1 s" in row["cause"]
    assert list(work.iterdir()) == []
    assert not [
        p
        for p in psutil.process_iter(["cmdline"])
        if str(work) in " ".join(p.info["cmdline"] or [])
    ]


def test_ctrl_c_leaves_nothing_behind(healthy_venv: Path, wheelhouse: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "QNNDOCTOR_NO_EVIDENCE": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "qnndoctor",
            "bisect",
            "--python",
            str(healthy_venv),
            "--find-links",
            str(wheelhouse),
            "--releases",
            "2.7.0",
            "--work-dir",
            str(work),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        # As from a terminal: a pytest-xdist worker ignores SIGINT, and an ignored
        # SIGINT is inherited through exec (Python then installs no handler), so
        # under `pytest -n 4` the child never saw the Ctrl-C and ran to the end.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    # Interrupt once pip is writing into the throwaway venv.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if list(work.glob("qnndoctor-bisect-*/venv*/lib/python*/site-packages/*")):
            break
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    children = psutil.Process(proc.pid).children(recursive=True)
    assert children  # pip is running
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert b"interrupted" in err
    assert list(work.iterdir()) == []
    time.sleep(0.2)
    alive = [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    assert alive == []


def test_the_disk_budget_stops_before_a_venv_is_made(
    cli: Callable[..., CliResult], healthy_venv: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    result = cli(
        "bisect", "--python", str(healthy_venv), "--releases", "2.7.0",
        "--disk-budget", str(10**9), "--work-dir", str(work), "--json", "--no-record",
    )  # fmt: skip
    assert result.code == 1
    document = result.json()
    assert document["results"] == [] and "--disk-budget" in document["stopped"]
    assert list(work.iterdir()) == []
    bad = cli("bisect", "--python", str(healthy_venv), "--releases", "2.x")
    assert bad.code == 2 and "--releases '2.x'" in bad.err
    assert cli("bisect", "--find-links", str(tmp_path / "none")).code == 2
