"""numpy as onnxruntime requires it, in real venvs: installed --no-deps
without numpy (the probe names it, the printed fix is the requirement, the
smoke session's failure is recognised), then with the real numpy wheel
(nothing to say), and with a numpy older than required."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult
from helpers.wheels import make_venv, pip_install

Cli = Callable[..., CliResult]


@pytest.fixture(scope="module")
def without_numpy(tmp_path_factory: pytest.TempPathFactory, real_wheels: dict[str, Path]) -> Path:
    python = make_venv(tmp_path_factory.mktemp("nonumpy") / "venv")
    pip_install(
        python, str(real_wheels["onnxruntime==1.31.1"]), str(real_wheels["onnxruntime-qnn==2.7.0"])
    )
    return python


def _report(cli: Cli, python: Path, *extra: str) -> dict[str, Any]:
    result = cli("check", "--python", str(python), "--json", "--no-redact", *extra)
    assert "Traceback" not in result.err, result.err
    document: dict[str, Any] = json.loads(result.out)
    return document


def _numpy_findings(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in document["findings"] if f["id"].startswith("numpy-")]


def test_no_numpy_is_named_with_the_required_version_and_the_session_agrees(
    cli: Cli, without_numpy: Path
) -> None:
    document = _report(cli, without_numpy)
    [finding] = _numpy_findings(document)
    assert finding["id"] == "numpy-missing" and finding["severity"] == "error"
    assert finding["fix"]["commands"] == [  # a venv without pip: ensurepip first
        f"{without_numpy} -m ensurepip",
        f"{without_numpy} -m pip install 'numpy>=1.21.6'",
    ]
    assert document["smoke"]["status"] == "failed"  # the real import fails as predicted
    smoke = next(f for f in document["findings"] if f["id"].startswith("smoke"))
    assert "onnxruntime-numpy-not-installed" in json.dumps(smoke)


def test_the_real_numpy_wheel_settles_it(cli: Cli, healthy_venv: Path) -> None:
    """The same two wheels with the real numpy 2.4.6 wheel beside them."""
    document = _report(cli, healthy_venv, "--no-smoke")
    assert document["facts"]["installs"]["values"]["requirements_present"]["numpy"] == ["2.4.6"]
    assert _numpy_findings(document) == []


def test_a_numpy_older_than_required_is_named(cli: Cli, without_numpy: Path) -> None:
    site = next(without_numpy.parent.parent.glob("lib/python*/site-packages"))
    old = site / "numpy-1.19.5.dist-info"  # as pip leaves it: the probe reads folder names
    old.mkdir()
    try:
        (old / "METADATA").write_text("Metadata-Version: 2.1\nName: numpy\nVersion: 1.19.5\n")
        document = _report(cli, without_numpy, "--no-smoke")
    finally:
        for child in old.iterdir():
            child.unlink()
        old.rmdir()
    [finding] = _numpy_findings(document)
    assert finding["id"] == "numpy-too-old"
    assert "numpy 1.19.5 is installed" in finding["explanation"]


def test_without_onnxruntime_the_companion_finding_speaks_alone(
    cli: Cli, tmp_path: Path, real_wheels: dict[str, Path]
) -> None:
    """Only onnxruntime-qnn 2.7.0: installing what plugin-companion-missing
    names brings numpy too, so numpy is not a second error."""
    python = make_venv(tmp_path / "venv")
    pip_install(python, str(real_wheels["onnxruntime-qnn==2.7.0"]))
    document = _report(cli, python, "--no-smoke")
    assert document["facts"]["installs"]["values"]["requirements_present"]["numpy"] == []
    assert _numpy_findings(document) == []
    assert "plugin-companion-missing" in {f["id"] for f in document["findings"]}
