"""Shared fixtures: real wheels from the index, real venvs, the CLI in-process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from helpers.wheels import make_venv, pip_install

HERE = Path(__file__).resolve().parent
# The decisions memo (qnndoctor/report/memo.py) would let one test's check answer
# another's with the same facts, and writes to the user's cache: off for the
# suite (inherited by every subprocess); tests/report/test_memo.py turns it on.
os.environ["QNNDOCTOR_NO_MEMO"] = "1"
os.environ["QNNDOCTOR_NO_EVIDENCE"] = "1"  # bisect's local evidence: tests/bisect/test_bisect.py
# The local evidence store (qnndoctor/evidence) would show a user's own fleet
# data in `recommend`: an empty folder for the suite (test_fleet.py sets its own).
os.environ.setdefault(
    "QNNDOCTOR_EVIDENCE_DIR", str(Path(tempfile.gettempdir()) / f"qnndoctor-tests-{os.getpid()}")
)
# Loaded from the installed package: proves the schema ships in the wheel.
SCHEMA = json.loads(
    resources.files("qnndoctor").joinpath("schema/report.schema.json").read_text("utf-8")
)


# The modules whose tests take longest (real venvs, pip, sessions; `.ci/run`
# prints the slowest), started first: pytest-xdist hands tests out in this
# order, so the long ones no longer wait at the end of the run while the
# other workers are idle. Within a module the order is kept (and with it
# its module-scoped fixtures).
SLOW_MODULES_FIRST = (
    "tests/test_prescriptions.py",
    "tests/fix/test_fix.py",
    "tests/diagnosis/test_prefilter.py",
    "tests/resolver/test_target_pip.py",
    "tests/smoke/test_smoke.py",
    "tests/bisect/test_bisect.py",
    "tests/test_api.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: index for index, name in enumerate(SLOW_MODULES_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def _pins() -> list[str]:
    lines = (HERE / "real-wheels.txt").read_text("utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _wheel_for(folder: Path, pin: str) -> Path | None:
    name, version = pin.split("==")
    found = sorted(folder.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
    return found[0] if found else None


@pytest.fixture(scope="session")
def real_wheels() -> dict[str, Path]:
    """The pinned real wheels: prepared by .ci/run (QNNDOCTOR_TEST_WHEELS), or
    downloaded here once into a cache folder with pip's own index settings."""
    folder = Path(
        os.environ.get("QNNDOCTOR_TEST_WHEELS")
        or Path.home() / ".cache" / "qnndoctor-tests" / "wheels"
    )
    folder.mkdir(parents=True, exist_ok=True)
    wheels: dict[str, Path] = {}
    for pin in _pins():
        wheel = _wheel_for(folder, pin)
        if wheel is None:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "--only-binary=:all:",
                    "-q",
                    "-d",
                    str(folder),
                    pin,
                ],
                check=True,
                stdin=subprocess.DEVNULL,
                timeout=900,
            )
            wheel = _wheel_for(folder, pin)
        assert wheel is not None, f"could not get a wheel for {pin}"
        wheels[pin] = wheel
    return wheels


def runtime_venv(
    root: Path,
    real_wheels: dict[str, Path],
    onnxruntime: str,
    onnxruntime_qnn: str,
    *,
    with_pip: bool = False,
) -> Path:
    """A real venv holding real onnxruntime + onnxruntime-qnn wheels (+ numpy,
    which importing onnxruntime needs); its python."""
    python = make_venv(root, with_pip=with_pip)
    pip_install(
        python,
        str(real_wheels[f"onnxruntime=={onnxruntime}"]),
        str(real_wheels[f"onnxruntime-qnn=={onnxruntime_qnn}"]),
        str(real_wheels["numpy==2.4.6"]),
    )
    return python


@pytest.fixture(scope="session")
def healthy_venv(tmp_path_factory: pytest.TempPathFactory, real_wheels: dict[str, Path]) -> Path:
    """onnxruntime-qnn 2.7.0 + its onnxruntime: the healthy reference setup."""
    return runtime_venv(tmp_path_factory.mktemp("healthy") / "venv", real_wheels, "1.31.1", "2.7.0")


@pytest.fixture
def offline_pip(monkeypatch: pytest.MonkeyPatch, real_wheels: dict[str, Path]) -> None:
    """pip's own configuration for the target's pip (fix, printed commands):
    no index, the cached real wheels as links."""
    folder = next(iter(real_wheels.values())).parent
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))


# What onnxruntime 1.31.1 and onnxruntime-qnn 2.7.0 require (tests/real-wheels.txt).
DEPENDENCIES = (
    "coloredlogs==15.0.1",
    "humanfriendly==10.0",
    "flatbuffers==25.12.19",
    "mpmath==1.3.0",
    "packaging==26.4",
    "protobuf==7.36.2",
    "sympy==1.14.0",
)


@pytest.fixture(scope="session")
def pip_venv(tmp_path_factory: pytest.TempPathFactory, real_wheels: dict[str, Path]) -> Path:
    """A venv WITH its own pip (fix runs the target's pip), holding the healthy
    reference setup: onnxruntime 1.31.1 + onnxruntime-qnn 2.7.0 and all they
    require (`pip check` clean, as after a plain pip install)."""
    root = tmp_path_factory.mktemp("fixbase") / "venv"
    python = runtime_venv(root, real_wheels, "1.31.1", "2.7.0", with_pip=True)
    pip_install(python, *(str(real_wheels[pin]) for pin in DEPENDENCIES))
    return python


@pytest.fixture(scope="session")
def verbose_session(healthy_venv: Path) -> subprocess.CompletedProcess[str]:
    """A real verbose ORT + QNN session that passed on the HTP simulator
    (tests/data/verbose_session.py), run once for every test that reads its log."""
    return _verbose_run(
        healthy_venv, str(resources.files("qnndoctor").joinpath("smoke/qdq_add.onnx"))
    )


@pytest.fixture(scope="session")
def verbose_session_with_cpu_nodes(
    healthy_venv: Path, tmp_path_factory: pytest.TempPathFactory
) -> subprocess.CompletedProcess[str]:
    """A real verbose session that passed with one node (Det) left to the CPU EP:
    the QNN EP narrates the rejection ("Validation FAILED for 1 nodes in
    OrtNodeUnit (Det)") at verbose level, and nothing failed."""
    from helpers import onnx_models

    model = onnx_models.with_det(tmp_path_factory.mktemp("det") / "with_det.onnx")
    return _verbose_run(healthy_venv, str(model), "cpu-fallback")


def _verbose_run(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """tests/data/verbose_session.py run by ``python``; it must pass."""
    done = subprocess.run(
        [str(python), str(HERE / "data" / "verbose_session.py"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        errors="replace",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


@dataclass(frozen=True)
class CliResult:
    code: int
    out: str
    err: str

    def json(self) -> dict[str, Any]:
        data = json.loads(self.out)
        assert isinstance(data, dict)
        if {
            "tool",
            "facts",
            "findings",
        } <= data.keys():  # a report: every one must match its schema
            validate_report(data)
        return data

    def finding_ids(self) -> set[str]:
        return {f["id"] for f in self.json()["findings"]}


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """Run ``qnndoctor`` in-process (the probes still run in a real subprocess)."""
    from qnndoctor.cli.main import main

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


def validate_report(document: dict[str, Any]) -> None:
    import jsonschema

    jsonschema.validate(document, SCHEMA)
