"""``qnndoctor model`` on hostile input: devices, streams, external data that
points out of the model's folder, absurd declared shapes. Each ends within
seconds with a clear error and exit 3, before anything runs (no onnxruntime)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CliResult
from helpers import onnx_models

from qnndoctor.model.loading import ModelError, read_model

Cli = Callable[..., CliResult]


def refused(cli: Cli, path: str, message: str) -> None:
    started = time.monotonic()
    result = cli("model", path, "--no-run")
    assert result.code == 3 and message in result.err, result.err
    assert "Traceback" not in result.err
    as_json = cli("model", path, "--json")
    assert as_json.code == 3 and message in as_json.json()["error"]["message"]
    assert time.monotonic() - started < 30  # a clear end, not a read without limit


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_a_device_is_refused_before_it_is_read(cli: Cli) -> None:
    refused(cli, "/dev/zero", "is a device, not a model file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_refused_without_opening_it(cli: Cli, tmp_path: Path) -> None:
    fifo = tmp_path / "model.onnx"
    os.mkfifo(fifo)  # opening it would block until a writer came
    refused(cli, str(fifo), "is a pipe or stream, not a model file")


@pytest.mark.skipif(not Path("/dev/stdin").exists(), reason="no /dev/stdin here")
def test_an_endless_stream_on_stdin_is_refused() -> None:
    writer = subprocess.Popen(
        [sys.executable, "-c", "import sys\nwhile True: sys.stdout.buffer.write(bytes(65536))"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
    )
    try:
        done = subprocess.run(
            [sys.executable, "-m", "qnndoctor", "model", "/dev/stdin", "--no-run"],
            stdin=writer.stdout,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        writer.kill()
        writer.wait()
        assert writer.stdout is not None
        writer.stdout.close()
    assert done.returncode == 3, done.stderr
    assert "is a pipe or stream" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("location", ["../../etc/passwd", "/etc/passwd", "sub/../../x.bin"])
def test_external_data_outside_the_folder_is_refused_before_reading(
    cli: Cli, tmp_path: Path, location: str
) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    path = onnx_models.external_outside(folder / "ext.onnx", location)
    with pytest.raises(ModelError, match="outside the model's folder"):
        read_model(path)
    refused(cli, str(path), "outside the model's folder")


def test_external_data_inside_the_folder_still_reads(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    path = onnx_models.external_outside(tmp_path / "ext.onnx", "data/../ext.weights")
    assert read_model(path).external_data[0].exists


def test_absurd_declared_shapes_are_refused_before_any_session(cli: Cli, tmp_path: Path) -> None:
    path = onnx_models.huge_shapes(tmp_path / "huge.onnx")
    with pytest.raises(ModelError, match=r"tensor 'x' is declared float32 \[100000, 100000, 100\]"):
        read_model(path)
    refused(cli, str(path), "beyond the 4 GiB")
