"""`qnndoctor matrix update` without --from: the releases new on the index pip
is configured with (PIP_INDEX_URL pointing at a real local index serving the
real onnxruntime-qnn Linux wheels), read by HTTP range requests, added to the
current matrix, checked and installed; a broken index changes nothing."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult
from helpers.index_server import Served, serve

from qnndoctor import matrixdata
from qnndoctor._layout import package_dir
from qnndoctor.matrixdata.update import install

Cli = Callable[..., CliResult]
PROJECT = "onnxruntime-qnn"
BUNDLED = json.loads((package_dir("matrix") or Path()).joinpath("releases.json").read_text("utf-8"))
# What reading a wheel measures about the reading itself (not the wheel).
VOLATILE = {"bytes_read", "requests", "fetched_whole", "upload_time"}


@pytest.fixture(scope="module")
def wheels(real_wheels: dict[str, Path]) -> dict[str, tuple[str, bytes]]:
    return {
        version: (path.name, path.read_bytes())
        for version, path in (
            ("2.3.0", real_wheels["onnxruntime-qnn==2.3.0"]),
            ("2.7.0", real_wheels["onnxruntime-qnn==2.7.0"]),
        )
    }


@pytest.fixture(scope="module")
def older_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user cache holding the bundled matrix without release 2.7.0, installed
    (schema-checked and stamped) once for the module."""
    root = tmp_path_factory.mktemp("older-cache")
    older = json.loads(json.dumps(BUNDLED))
    older["releases"] = [r for r in older["releases"] if r["version"] != "2.7.0"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(root))
        install(older)
    return root


@pytest.fixture
def behind(older_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """This test's user cache: a copy of ``older_cache``; pip's settings only
    from the environment the test sets."""
    shutil.copytree(older_cache, tmp_path / "cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_CONFIG_FILE", str(tmp_path / "no-pip.conf"))
    monkeypatch.delenv("PIP_CERT", raising=False)
    matrixdata.load.cache_clear()
    yield matrixdata.user_matrix_dir() / "releases.json"
    matrixdata.load.cache_clear()


def _release(document: dict[str, Any], version: str) -> dict[str, Any]:
    found = [r for r in document["releases"] if r["version"] == version]
    assert len(found) == 1, version
    release: dict[str, Any] = found[0]
    return release


def test_update_adds_only_the_new_release_reading_only_its_bytes(
    cli: Cli,
    behind: Path,
    wheels: dict[str, tuple[str, bytes]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = json.loads(behind.read_text("utf-8"))
    new_name, new_data = wheels["2.7.0"]
    with serve(PROJECT, [Served(n, d) for n, d in wheels.values()]) as server:
        monkeypatch.setenv("PIP_INDEX_URL", server.url)
        result = cli("matrix", "update")
        files = server.file_requests()
        server.reset()
        again = cli("matrix", "update")
        second = server.seen()
    assert result.code == 0, result.err
    assert result.out.splitlines()[0] == "added 2.7.0: 1 wheel"
    assert f"installed {behind}" in result.out
    # Only the new release's wheel was read, by ranges, and only a little of it.
    assert files and {s.path.rsplit("/", 1)[-1] for s in files} == {new_name}
    assert all(s.range for s in files)
    after = json.loads(behind.read_text("utf-8"))
    read = _release(after, "2.7.0")["files"][0]
    assert 0 < read["bytes_read"] < len(new_data) // 100
    # What was read matches the maintainers' full refresh of the same wheel.
    bundled_file = next(f for f in _release(BUNDLED, "2.7.0")["files"] if f["filename"] == new_name)
    assert {k: v for k, v in read.items() if k not in VOLATILE} == {
        k: v for k, v in bundled_file.items() if k not in VOLATILE
    }
    added, bundled = _release(after, "2.7.0"), _release(BUNDLED, "2.7.0")
    assert (added["era"], added["prerelease"]) == (bundled["era"], bundled["prerelease"])
    assert "companions" not in added  # no experiment has measured it yet
    # Everything else (companion experiment rows included) is kept as it was.
    assert [r for r in after["releases"] if r["version"] != "2.7.0"] == before["releases"]
    assert [r["version"] for r in after["releases"]][-2:] == ["2.6.0", "2.7.0"]
    matrixdata.load.cache_clear()
    used = matrixdata.load()
    assert str(behind) in (used.releases_source or "")
    assert "2.7.0" in {str(r.version) for r in used.releases.releases}
    # Run again: nothing new, one request for the index page, nothing written.
    assert again.code == 0, again.err
    assert again.out.startswith("already current")
    assert [s.path for s in second] == [f"/simple/{PROJECT}/"]
    assert json.loads(behind.read_text("utf-8")) == after


@pytest.mark.parametrize(
    ("how", "argv", "message"),
    [
        ({"fail_first": 100}, [], "HTTP 503"),
        ({"mode": "refuse-416"}, ["--max-bytes", "2000000"], "2000000 byte limit"),
        ({"mode": "missing"}, [], "HTTP 404"),
        ({"mode": "hang"}, ["--deadline", "3"], "did not finish within 3 s"),
    ],
)
def test_a_broken_index_keeps_the_current_matrix(
    cli: Cli,
    behind: Path,
    wheels: dict[str, tuple[str, bytes]],
    monkeypatch: pytest.MonkeyPatch,
    how: dict[str, Any],
    argv: list[str],
    message: str,
) -> None:
    before = behind.read_bytes()
    name, data = wheels["2.7.0"]
    with serve(PROJECT, [Served(name, data, **how)]) as server:
        monkeypatch.setenv("PIP_INDEX_URL", server.url)
        result = cli("matrix", "update", *argv)
    assert result.code == 3, result.err
    assert "matrix update refused, keeping the current matrix" in result.err
    assert message in result.err
    assert "Traceback" not in result.err and not result.out
    assert behind.read_bytes() == before
    matrixdata.load.cache_clear()
    assert "2.7.0" not in {str(r.version) for r in matrixdata.load().releases.releases}


def test_a_plain_http_index_elsewhere_is_refused_before_any_request(
    cli: Cli, behind: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = behind.read_bytes()
    monkeypatch.setenv("PIP_INDEX_URL", "http://10.255.255.1/simple/")
    result = cli("matrix", "update", "--deadline", "5")
    assert result.code == 3
    assert "is not https://" in result.err
    assert behind.read_bytes() == before
