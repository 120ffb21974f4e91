"""Redaction with planted secrets: a password in a URL inside ADSP_LIBRARY_PATH
(which a fix command rewrites from ':' to ';'), and a user name inside folder
names and in its Windows 8.3 short form, through every redacted output."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CliResult
from helpers.wheels import make_venv

from qnndoctor.report.redact import Redactor

Cli = Callable[..., CliResult]
SECRET = "S3cretPw7"
USER = "ZedKowalski"
# A URL with credentials among ':'-separated folders (the Unix habit the
# adsp-library-path-colon rule fixes by rewriting ':' to ';').
ADSP = f"https://zed:{SECRET}@dsp.example.com/skel:/data/zedkowalski-9_models/dsp:/mnt/ZEDKOW~1/dsp"


def _leaks(text: str) -> list[str]:
    lower = text.lower()
    return [
        word for word in (SECRET.lower(), USER.lower(), "zedkow~1", "zed:", "zed;") if word in lower
    ]


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real venv under a folder named after the user, and the variables set."""
    python = make_venv(tmp_path / "zedkowalski-9_models" / "venv")
    monkeypatch.setenv("ADSP_LIBRARY_PATH", ADSP)
    monkeypatch.setenv("USER", USER)
    return python


def test_every_redacted_output_is_clean(cli: Cli, planted: Path, tmp_path: Path) -> None:
    raw = cli("check", "--python", str(planted), "--json", "--no-smoke", "--no-redact")
    # The control: the planted values really reach the report, and the fix
    # command really carries the rewritten URL.
    assert SECRET in raw.out and "zedkowalski-9_models" in raw.out
    colon = next(f for f in raw.json()["findings"] if f["id"] == "adsp-library-path-colon")
    assert f"https;//zed;{SECRET}@" in json.dumps(colon)
    ticket = tmp_path / "ticket.json"
    ticket.write_text(raw.out)
    log = tmp_path / "log.txt"
    log.write_text(f"error: cannot load {ADSP.split(':/')[1]}/libQnnHtpV73Skel.so\n")
    outputs = {
        "check --json": cli("check", "--python", str(planted), "--json", "--no-smoke"),
        "check --format markdown": cli(
            "check", "--python", str(planted), "--format", "markdown", "--no-smoke"
        ),
        "check --from-report --json": cli("check", "--from-report", str(ticket), "--json"),
        "check --from-report markdown": cli(
            "check", "--from-report", str(ticket), "--format", "markdown"
        ),
        "recommend --json": cli("recommend", "--python", str(planted), "--json"),
        "explain --json": cli("explain", "--log", str(log), "--from-report", str(ticket), "--json"),
    }
    for name, result in outputs.items():
        assert "Traceback" not in result.err, name
        assert result.out, name
        assert _leaks(result.out) == [], (name, _leaks(result.out))
    document = outputs["check --json"].json()
    assert document["redacted"] is True
    fixed = next(f for f in document["findings"] if f["id"] == "adsp-library-path-colon")
    assert "https;//<redacted>@dsp.example.com" in json.dumps(fixed)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"C:\work\zedkowalski_projects\m.onnx", r"C:\work\<user>_projects\m.onnx"),
        ("/data/ZEDKOWALSKI-9_models", "/data/<user>-9_models"),
        (r"C:\Users\ZEDKOW~1\AppData\Local\Temp", r"C:\Users\<user>\AppData\Local\Temp"),
        (r"C:\Users\zedkow~12\x", r"C:\Users\<user>\x"),
        (r"C:\Users\ZE1A2B~1\x", r"C:\Users\<user>\x"),  # the hashed short form
        ("https://zed:pw@host.example/x", "https://<redacted>@host.example/x"),
        ("https;//zed;pw@host.example/x", "https;//<redacted>@host.example/x"),
        ("git+https://token@host.example/r.git", "git+https://<redacted>@host.example/r.git"),
        ("cannot load //zed:pw@dsp.example/skel", "cannot load //<redacted>@dsp.example/skel"),
        ("cannot load /zed:pw@dsp.example/skel", "cannot load /<redacted>@dsp.example/skel"),
        ("/data///models@v2/x", "/data///models@v2/x"),  # a path, not a URL
        ("index zed:pw@host.example/simple", "index <redacted>@host.example/simple"),
        ("mail zed@host.example", "mail zed@host.example"),  # no password: an address
        ("/opt/ai/models and the ai word", "/opt/<user>/models and the ai word"),
        ("/home/zedkowalski/x", "~/x"),
        # another machine's user, in a log pasted here
        (r"PS C:\Users\someone\proj> pip list", r"PS C:\Users\<user>\proj> pip list"),
        (r"'C:\\Users\\someone\\x.onnx'", r"'C:\\Users\\<user>\\x.onnx'"),
        ("File /home/other/venv/x.py, line 3", "File /home/<user>/venv/x.py, line 3"),
        ("/Users/other/Library", "/Users/<user>/Library"),
        (r"C:\Users\Public\Documents", r"C:\Users\Public\Documents"),  # nobody's
        ("/Users/Shared/models", "/Users/Shared/models"),
        ("the users/home folders", "the users/home folders"),  # prose, no path
    ],
)
def test_redactor_on_planted_values(text: str, expected: str) -> None:
    redactor = Redactor(["/home/zedkowalski"], ["zedkowalski", "ai"], [])
    assert redactor.text(text) == expected


def test_the_real_environment_of_this_machine_is_redacted_too(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No planted user: the home folder of whoever runs the tests is redacted."""
    home = str(Path.home())
    monkeypatch.setenv("ADSP_LIBRARY_PATH", f"{home}/dsp:/opt/dsp")
    out = cli("check", "--python", sys.executable, "--json", "--no-smoke").out
    if len(home) > 1:
        assert home not in out


def test_a_short_user_name_inside_a_word_is_kept() -> None:
    """Letters on both sides of a 3-5 letter name: an ordinary word (or a key)
    that happens to contain it, not the name. From 6 letters on, the name is
    replaced inside words too."""
    redactor = Redactor([], ["tim", "ron"], [])
    assert redactor.text("onnxruntime environment") == "onnxruntime environment"
    assert redactor.text("/work/tim_models/TIM-2") == "/work/<user>_models/<user>-2"
    long_name = Redactor([], ["zedkowalski"], [])
    assert long_name.text("/data/ZedKowalskiModels/x") == "/data/<user>Models/x"
