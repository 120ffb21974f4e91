"""The refresh tool's index: the JSON simple page, usage errors, and which index
it reads (pip's own configuration, in pip's order).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.index_server import serve
from helpers.refresh_tool import refresh
from helpers.refresh_wheels import (
    PROJECT,
    Run,
    lib,
    run_tool,
    served,
    wheel_2x_linux,
)

__all__ = ["run_tool"]  # the fixture, shared from helpers.refresh_wheels


# ---------------------------------------------------------------- the index itself


@pytest.mark.parametrize(
    ("page", "message"),
    [
        ("html", "did not answer with the JSON simple API"),
        ("garbage", "malformed JSON"),
    ],
)
def test_unreadable_index_exits_1(run_tool: Callable[..., Run], page: str, message: str) -> None:
    with serve(PROJECT, page=page) as server:
        result = run_tool(server)
    assert result.code == 1
    assert message in result.err
    assert "Traceback" not in result.err


def test_unknown_project_and_unreachable_index_exit_1(run_tool: Callable[..., Run]) -> None:
    with serve(PROJECT) as server:
        missing = run_tool(server, "--project", "no-such-project")
        root = server.url
    assert missing.code == 1 and "'no-such-project' not found" in missing.err
    gone = run_tool(None, "--index-url", root, "--timeout", "5")  # the server has stopped
    assert gone.code == 1
    assert "could not read the index" in gone.err and "Traceback" not in gone.err


@pytest.mark.parametrize(
    "argv",
    [
        ["--limit", "0"],
        ["--limit", "many"],
        ["--timeout", "-1"],
        ["--index-url", "ftp://127.0.0.1/simple/"],
        ["--index-url", "not a url"],
        ["--index-url", "http://[bad/simple/"],
        ["--index-url", "http://127.0.0.1:port/simple/"],
        ["--index-url", "http://127.0.0.1:1/simple/", "--project", ""],
        ["--index-url", "http://127.0.0.1:1/simple/", "--project", "../etc"],
        ["--bogus"],
    ],
)
def test_usage_errors_exit_2(
    argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = refresh.main([*argv, "--output", str(tmp_path / "out.json")])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err and err.strip()
    assert not (tmp_path / "out.json").exists()


def test_output_that_cannot_be_written_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = refresh.main(["--index-url", "http://127.0.0.1:1/simple/", "--output", str(tmp_path)])
    assert code == 2
    assert "it is a folder" in capsys.readouterr().err


def test_damaged_previous_matrix_and_cache_are_ignored(
    run_tool: Callable[..., Run], tmp_path: Path
) -> None:
    wheel = wheel_2x_linux(big=10_000)
    sha = hashlib.sha256(wheel[1]).hexdigest()
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / f"{sha}-{wheel[0]}.json").write_text("[1, 2", "utf-8")
    damaged = [
        "{not json",
        "[]",
        json.dumps({"provenance": {"cache_version": refresh.CACHE_VERSION}, "releases": 7}),
        json.dumps(
            {
                "provenance": {"cache_version": refresh.CACHE_VERSION},
                "releases": [{"files": [{"error": None, "sha256": sha, "filename": wheel[0]}]}, 3],
            }
        ),
    ]
    with serve(PROJECT, [served(wheel)]) as server:
        for text in damaged:
            previous = tmp_path / "previous.json"
            previous.write_text(text, "utf-8")
            (cache / f"{sha}-{wheel[0]}.json").write_text('{"cache_version": 1}', "utf-8")
            result = run_tool(server, "--previous", str(previous))
            assert result.code == 0, (text, result.err)
            record = result.files()[wheel[0]]
            assert record["error"] is None
            assert lib(record, "onnxruntime_qnn/libQnnHtp.so")["machine"] == "aarch64"


# ---------------------------------------------------------------- pip configuration


def test_index_url_precedence(tmp_path: Path) -> None:
    low = tmp_path / "global.conf"
    low.write_text("[global]\nindex-url = http://127.0.0.1:1/low/\n", "utf-8")
    high = tmp_path / "env.conf"
    high.write_text(
        "[global]\nindex_url = http://127.0.0.1:1/global/\n"
        "[install]\nindex-url = http://127.0.0.1:1/install/\n",
        "utf-8",
    )
    files = [low, tmp_path / "missing.conf", high]
    resolve = refresh.resolve_index_url
    assert resolve("http://127.0.0.1:1/cli/", {"PIP_INDEX_URL": "http://x/"}, files).value == (
        "http://127.0.0.1:1/cli/"
    )
    from_env = resolve(None, {"PIP_INDEX_URL": "http://127.0.0.1:1/env/"}, files)
    assert (from_env.value, from_env.source) == ("http://127.0.0.1:1/env/", "PIP_INDEX_URL")
    from_file = resolve(None, {}, files)
    assert from_file.value == "http://127.0.0.1:1/install/"
    assert from_file.source == f"{high} [install] index-url"
    assert resolve(None, {}, [low]).value == "http://127.0.0.1:1/low/"
    default = resolve(None, {}, [])
    assert default.source == "pip's built-in default"
    from pip._internal.models.index import PyPI

    assert default.value == PyPI.simple_url


def test_config_files_are_the_ones_pip_reads(tmp_path: Path) -> None:
    from pip._internal import configuration

    # pip 26 renamed the `kinds` namespace to the `Kind` enum.
    kinds: Any = getattr(configuration, "kinds", None) or getattr(configuration, "Kind")  # noqa: B009
    pip_files = configuration.get_configuration_files()
    expected = [
        *pip_files[kinds.GLOBAL],
        *pip_files[kinds.USER],
        *pip_files[kinds.SITE],
    ]
    environ = {k: v for k, v in os.environ.items() if k != "PIP_CONFIG_FILE"}
    assert [str(p) for p in refresh.pip_config_files(environ)] == expected
    custom = tmp_path / "custom.conf"
    custom.write_text("[global]\n", "utf-8")
    with_env = refresh.pip_config_files({**environ, "PIP_CONFIG_FILE": str(custom)})
    assert with_env[-1] == custom
    assert [str(p) for p in with_env[:-1]] == [*pip_files[kinds.GLOBAL], *pip_files[kinds.SITE]]
    assert refresh.pip_config_files({"PIP_CONFIG_FILE": os.devnull}) == []


def test_environment_index_url_is_used_by_the_cli(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve(PROJECT, [served(wheel_2x_linux())]) as server:
        monkeypatch.setenv("PIP_INDEX_URL", server.url)
        code = refresh.main(
            ["--output", str(tmp_path / "r.json"), "--cache-dir", str(tmp_path / "c")]
        )
        assert len(server.file_requests()) > 0
    err = capsys.readouterr().err
    assert code == 0, err
    assert "(from PIP_INDEX_URL)" in err


def test_passwords_stay_out_of_the_matrix() -> None:
    assert refresh.public_url("https://me:secret@127.0.0.1:8080/simple/") == (
        "https://me:<redacted>@127.0.0.1:8080/simple/"
    )
    assert refresh.public_url("http://127.0.0.1/simple/") == "http://127.0.0.1/simple/"
