"""Other CLI behaviour: finding list, re-diagnosis of saved reports,
renderers, redaction."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CliResult, validate_report

from qnndoctor.report.redact import Redactor
from qnndoctor.rules.registry import all_finding_kinds

Cli = Callable[..., CliResult]


def test_list_findings_names_every_kind(cli: Cli) -> None:
    result = cli("check", "--list-findings")
    assert result.code == 0
    listed = {line.split()[0] for line in result.out.splitlines()}
    assert listed == {kind.id for kind in all_finding_kinds()}
    for required in (
        "emulated-interpreter",
        "wrong-arch-interpreter",
        "onnxruntime-multiple-owners",
        "plugin-companion-mismatch",
        "files-overwritten",
        "uninstall-leftover",
        "non-ascii-path",
        "no-onnxruntime-qnn",
        "qnn-libs-wrong-arch",
        "qnn-stub-missing-for-htp-arch",
        "adsp-library-path-colon",
    ):
        assert required in listed


def test_saved_report_is_rediagnosed_from_its_facts(
    cli: Cli, healthy_venv: Path, tmp_path: Path
) -> None:
    saved = cli("check", "--python", str(healthy_venv), "--json")
    path = tmp_path / "ticket.json"
    path.write_text(saved.out)
    again = cli("check", "--from-report", str(path), "--json")
    assert again.code == saved.code
    assert again.finding_ids() == saved.finding_ids()
    # Rules are pure functions of the facts: change a fact, get its finding.
    data = json.loads(saved.out)
    data["facts"]["emulation"]["values"].update(
        emulated=True, native_arch="arm64", emulator="qemu-user"
    )
    path.write_text(json.dumps(data))
    changed = cli("check", "--from-report", str(path), "--json")
    assert changed.code == 1
    assert "emulated-interpreter" in changed.finding_ids()
    validate_report(changed.json())


def test_text_and_markdown_reports(cli: Cli, healthy_venv: Path) -> None:
    text = cli("check", "--python", str(healthy_venv))
    assert text.code == 0
    for title in (
        "Interpreter",
        "onnxruntime installs",
        "Bundled QNN libraries",
        "System QNN SDK",
        "Non-ASCII paths",
        "HTP smoke session",
        "htp-simulator-host",
    ):
        assert title in text.out
    markdown = cli("check", "--python", str(healthy_venv), "--format", "markdown")
    assert markdown.out.startswith("### qnndoctor")
    assert "| info | `htp-simulator-host` |" in markdown.out
    assert "<details>" in markdown.out


def test_json_is_alone_on_stdout_and_logs_go_to_stderr(healthy_venv: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "qnndoctor", "check", "--python", str(healthy_venv), "--json", "-v"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    json.loads(done.stdout)
    assert "qnndoctor: target:" in done.stderr


def test_redactor_hides_user_host_home_and_secrets() -> None:
    redactor = Redactor(homes=["/home/alice"], users=["alice"], hosts=["alice-laptop"])
    assert redactor.text("/home/alice/venv/bin/python") == "~/venv/bin/python"
    assert redactor.text(r"C:\Users\alice\AppData") == r"C:\Users\<user>\AppData"
    assert redactor.text("built on alice-laptop today") == "built on <host> today"
    assert (
        redactor.text("https://bob:s3cret@index.example/simple")
        == "https://<redacted>@index.example/simple"
    )
    assert redactor.text("HF_TOKEN=abc123 other") == "HF_TOKEN=<redacted> other"
    # A 3+ character name goes wherever it stands between non-letters (issue 11),
    # not inside a longer word.
    assert redactor.text("malice and alice in words") == "malice and <user> in words"


def test_json_is_redacted_by_default(
    cli: Cli, healthy_venv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = str(healthy_venv.parent.parent.parent)
    monkeypatch.setenv("HOME", home)
    redacted = cli("check", "--python", str(healthy_venv), "--json")
    assert home not in redacted.out
    assert redacted.json()["redacted"] is True
    assert redacted.json()["target"]["python"].startswith("~/")
    kept = cli("check", "--python", str(healthy_venv), "--json", "--no-redact")
    assert home in kept.out


def test_docs_list_every_finding() -> None:
    docs = Path(__file__).resolve().parents[2] / "docs"
    text = (docs / "findings.md").read_text("utf-8")
    for kind in all_finding_kinds():
        assert f"`{kind.id}`" in text, f"docs/findings.md lacks {kind.id}"
    sys.path.insert(0, str(docs))
    try:
        import regenerate_findings

        assert regenerate_findings.render() == text, "run python docs/regenerate_findings.py"
    finally:
        sys.path.remove(str(docs))


def test_broken_matrix_data_is_a_clear_error(tmp_path: Path) -> None:
    from qnndoctor.matrixdata import MatrixError, load

    (tmp_path / "socs.json").write_text('{"socs": [{"no_part": 1}]}')
    with pytest.raises(MatrixError, match="KeyError"):
        load(tmp_path)
    (tmp_path / "socs.json").write_bytes(b"\xff not json")
    with pytest.raises(MatrixError, match=r"socs\.json"):
        load(tmp_path)


def test_runs_from_a_source_checkout(healthy_venv: Path) -> None:
    """`python -m qnndoctor` in the repository root imports the source tree,
    where probes/ and matrix/ sit beside qnndoctor/."""
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "qnndoctor", "check", "--python", str(healthy_venv), "--json"],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["matrix"]["source"] == "bundled qnndoctor.matrix"


def test_recommend_and_explain_json_are_redacted(
    cli: Cli, healthy_venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = str(healthy_venv.parent.parent.parent)
    monkeypatch.setenv("HOME", home)
    rec = cli("recommend", "--python", str(healthy_venv), "--json")
    assert home not in rec.out and rec.json()["redacted"] is True
    assert rec.json()["target"]["python"].startswith("~/")
    assert home in cli("recommend", "--python", str(healthy_venv), "--json", "--no-redact").out
    log = tmp_path / "log.txt"
    log.write_text("error code 1002")
    explained = cli("explain", "--log", str(log), "--python", str(healthy_venv), "--json")
    assert home not in explained.out and explained.json()["redacted"] is True


def test_rediagnosis_rematches_smoke_signatures(
    cli: Cli, healthy_venv: Path, tmp_path: Path
) -> None:
    """Signature ids in a saved ticket are re-derived with the catalogue in use."""
    data = cli("check", "--python", str(healthy_venv), "--json", "--no-smoke").json()
    data["smoke"] = {
        **data["smoke"],
        "status": "crashed",
        "exit_code": -7,
        "signal": "SIGBUS",
        "reason": "the process ended without a result (SIGBUS)",
        "signatures": ["an-id-from-an-older-catalogue"],
    }
    data["facts"]["qnn_bundled"]["values"]["any_library_damaged"] = True
    ticket = tmp_path / "ticket.json"
    ticket.write_text(json.dumps(data))
    again = cli("check", "--from-report", str(ticket), "--json").json()
    assert again["smoke"]["signatures"][0] == "truncated-qnn-library-sigbus"
    crashed = next(f for f in again["findings"] if f["id"] == "smoke-crashed")
    assert "truncated QNN library" in crashed["explanation"]


def test_a_relative_interpreter_path_reaches_the_smoke_child(
    cli: Cli, healthy_venv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--python venv/bin/python` from the venv's parent folder: the smoke child
    runs in a temporary folder, so the path must not stay relative."""
    monkeypatch.chdir(healthy_venv.parent.parent.parent)
    relative = healthy_venv.relative_to(healthy_venv.parent.parent.parent)
    report = cli("check", "--python", str(relative), "--json").json()
    assert Path(report["target"]["python"]).is_absolute()
    assert report["smoke"]["status"] == "passed"


def test_recommend_pre_reaches_the_resolver_when_probing(
    cli: Cli, healthy_venv: Path, tmp_path: Path
) -> None:
    """`recommend --pre` for a probed interpreter (not only in what-if mode):
    a matrix whose newest release is a pre-release offers it only with --pre."""
    from qnndoctor._layout import package_dir

    folder = package_dir("matrix")
    assert folder is not None
    data = json.loads((folder / "releases.json").read_text("utf-8"))
    newest = next(r for r in data["releases"] if r["version"] == "2.7.0")
    pre = json.loads(json.dumps(newest).replace("2.7.0", "2.8.0rc1"))
    data["releases"].append(pre)
    matrix = tmp_path / "releases.json"
    matrix.write_text(json.dumps(data), "utf-8")
    args = ("recommend", "--python", str(healthy_venv), "--matrix", str(matrix), "--json")
    plain = cli(*args).json()["recommendation"]
    with_pre = cli(*args, "--pre").json()["recommendation"]
    assert plain["version"] == "2.7.0", plain
    assert with_pre["version"] == "2.8.0rc1", with_pre


def test_every_json_document_names_its_schema_version_from_one_place(
    cli: Cli, healthy_venv: Path, tmp_path: Path
) -> None:
    """Each sub-command's JSON carries the schema_version declared in
    qnndoctor/__init__.py, the one place where every contract is named."""
    import qnndoctor

    model = next(Path(qnndoctor.__file__).parent.joinpath("smoke").glob("*.onnx"))
    log = tmp_path / "log.txt"
    log.write_text("QnnDsp <E> error code 1002")
    python = str(healthy_venv)
    documents = {
        "REPORT": cli("check", "--python", python, "--no-smoke", "--json"),
        "RECOMMEND": cli(
            "recommend", "--platform", "win_arm64", "--python-version", "3.12", "--json"
        ),
        "EXPLAIN": cli("explain", "--log", str(log), "--json"),
        "MATRIX": cli("matrix", "--json"),
        "FIX": cli("fix", "--python", python, "--json"),
        "MODEL": cli("model", str(model), "--python", python, "--no-run", "--json"),
    }
    for name, result in documents.items():
        expected = getattr(qnndoctor, f"{name}_SCHEMA_VERSION")
        assert result.json()["schema_version"] == expected, (name, result.out[:300])
