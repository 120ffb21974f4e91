"""QNN API error codes in failure texts: the table read from QNN's headers,
the codes found by number and by name (and what is never a code), and a
real damaged context binary on the HTP simulator whose error explain names."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import onnx_models
from helpers.target_runs import run_code

from qnndoctor import _layout
from qnndoctor.diagnosis import qnn_codes
from qnndoctor.diagnosis.document import explain
from qnndoctor.matrixdata import load_socs
from qnndoctor.smoke import MODEL as QDQ_MODEL

ROOT = Path(__file__).resolve().parents[2]


def _found(*lines: str) -> list[tuple[int, int, str]]:
    return [(m.line, m.code.code, m.written) for m in qnn_codes.find(list(lines))]


def test_the_table_has_each_code_once_under_every_name() -> None:
    codes = json.loads((ROOT / "matrix" / "qnn_errors.json").read_text("utf-8"))["codes"]
    numbers = [c["code"] for c in codes]
    names = [n for c in codes for n in (c["name"], *c["aliases"])]
    assert len(numbers) == len(set(numbers)) and len(names) == len(set(names))
    table = qnn_codes.table()
    assert table["1002"].name == "QNN_COMMON_ERROR_MEM_ALLOC"
    assert table["QNN_GRAPH_ERROR_MEM_ALLOC"] is table["1002"]  # an alias of the common code
    assert table["6022"].name == "QNN_GRAPH_ERROR_FINALIZE_FAILED"
    assert table["5005"].meaning == "Failure to create context from binary"


def test_codes_by_number_beside_an_error_word_on_a_qnn_line() -> None:
    assert _found(
        "Starting stage: Graph Preparation Initializing",
        "QnnDsp <E> Failed to finalize graph (id: 1) with err 1002",
        "[E:onnxruntime:, qnn_model.cc:188 FinalizeGraphs] Failed to finalize QNN graph. Error code: 1002",
        "Could not create context from binary for context index = 0 : err 5005",
    ) == [(2, 1002, "number"), (4, 5005, "number")]


def test_codes_by_name_whatever_the_line() -> None:
    text = "contextCreateFromBinary failed. Error: QNN_CONTEXT_ERROR_INVALID_ARGUMENT: An argument"
    assert _found(text) == [(1, 5000, "name")]
    assert _found("returned QNN_GRAPH_ERROR_MEM_ALLOC") == [(1, 1002, "name")]


@pytest.mark.parametrize(
    "line",
    [
        "[E:onnxruntime:, qnn_model.cc:1002 FinalizeGraphs] failed",  # a source line number
        "HTTP error 5000 from the download server",  # no QNN on the line
        "QNN graph error code: 1001",  # not a code QNN defines
        "2025-10-05 QNN session started, status 2025",  # a year
        "QnnHtp listening on port 6020",  # no error word before it
        "QNN_SOMETHING_ERROR_NOBODY_DEFINED",
    ],
)
def test_what_is_never_a_code(line: str) -> None:
    assert _found(line) == []


def test_explain_names_the_code_in_text_and_json() -> None:
    document = explain("ERROR: QnnGraph_execute failed with error 6020", None, None)
    assert document["qnn_error_codes"] == [
        {
            "line": 1,
            "code": 6020,
            "name": "QNN_GRAPH_ERROR_CREATE_FAILED",
            "meaning": "Failure in creating graph with specified configuration",
            "written": "number",
        }
    ]
    import io

    from qnndoctor.render.explain import render_text

    shown = io.StringIO()
    render_text(document, shown)
    assert (
        "  line 1: 6020 QNN_GRAPH_ERROR_CREATE_FAILED: Failure in creating graph with specified "
        "configuration\n" in shown.getvalue()
    )


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory, healthy_venv: Path) -> tuple[Path, bytes]:
    folder = tmp_path_factory.mktemp("ctxcodes")
    model = onnx_models.compile_ep_context(healthy_venv, QDQ_MODEL, folder / "m_ctx.onnx")
    return model, (folder / "m_ctx_qnn.bin").read_bytes()


LOAD = (
    "import sys, onnxruntime as ort, onnxruntime_qnn as qnn\n"
    "ort.register_execution_provider_library('QNNExecutionProvider', qnn.get_library_path())\n"
    "devices = [d for d in ort.get_ep_devices() if d.ep_name == 'QNNExecutionProvider']\n"
    "options = ort.SessionOptions()\n"
    "options.add_provider_for_devices(devices, dict(backend_type='htp'))\n"
    "ort.InferenceSession(sys.argv[1], sess_options=options)\n"
)


def _damaged(data: bytes) -> bytes:
    changed = bytearray(data)
    for index in range(2000, len(changed) - 2000, 7):
        changed[index] ^= 0x5A
    return bytes(changed)


LFS_POINTER = b"version https://git-lfs.github.com/spec/v1\noid sha256:4d7a21\nsize 49152\n"


@pytest.mark.parametrize(
    ("damage", "expected", "code"),
    [
        (_damaged, "context-binary-5000-version-or-target-mismatch", 5000),
        (lambda data: data[:10_000], "ep-context-binary-info-unreadable", None),
        (lambda _data: LFS_POINTER, "ep-context-binary-info-unreadable", None),
    ],
    ids=["bytes-changed", "truncated", "git-lfs-pointer"],
)
def test_a_real_damaged_context_binary_is_named(
    compiled: tuple[Path, bytes],
    healthy_venv: Path,
    damage: object,
    expected: str,
    code: int | None,
) -> None:
    model, original = compiled
    assert callable(damage)
    (model.parent / "m_ctx_qnn.bin").write_bytes(damage(original))
    try:
        run = run_code(healthy_venv, LOAD, str(model))
    finally:
        (model.parent / "m_ctx_qnn.bin").write_bytes(original)
    assert run.returncode != 0
    document = explain(run.stderr, None, None, socs=load_socs())
    assert document["candidates"][0]["id"] == expected, run.stderr[-600:]
    named = [c["code"] for c in document["qnn_error_codes"]]
    assert named == ([code] if code else [])


# Headers in the shape of a QNN SDK's include/QNN (written here, not copied):
# code spaces as #defines, enums whose members refer to them and to each other.
HEADERS = {
    "QnnCommon.h": (
        "#define QNN_SUCCESS 0\n"
        "#define QNN_MIN_ERROR_COMMON              1000\n"
        "#define QNN_MAX_ERROR_COMMON              1999\n"
        "#define QNN_MIN_ERROR_GRAPH               6000\n"
        "typedef enum {\n"
        "  QNN_COMMON_MIN_ERROR = QNN_MIN_ERROR_COMMON,\n"
        "  /// Memory allocation related error.\n"
        "  QNN_COMMON_ERROR_MEM_ALLOC = QNN_MIN_ERROR_COMMON + 2,\n"
        "  QNN_COMMON_ERROR_UNDEFINED = 0x7FFFFFFF\n"
        "} QnnCommon_Error_t;\n"
    ),
    "QnnGraph.h": (
        "typedef enum {\n"
        "  QNN_GRAPH_NO_ERROR = QNN_SUCCESS,\n"
        "  /// General error relating to memory allocation in processing graph API\n"
        "  QNN_GRAPH_ERROR_MEM_ALLOC = QNN_COMMON_ERROR_MEM_ALLOC,\n"
        "  /// Graph finalize failed\n"
        "  QNN_GRAPH_ERROR_FINALIZE_FAILED = QNN_MIN_ERROR_GRAPH + 22,\n"
        "  QNN_GRAPH_MAX_ERROR = QNN_MAX_ERROR_GRAPH,\n"
        "} QnnGraph_Error_t;\n"
        "typedef enum {\n"
        "  QNN_GRAPH_CONFIG_OPTION_ERROR_REPORTING = 1,\n"
        "} QnnGraph_ConfigOption_t;\n"
    ),
}


def test_the_table_is_regenerated_from_headers_as_documented(tmp_path: Path) -> None:
    import jsonschema

    headers = tmp_path / "QNN"
    headers.mkdir()
    for name, text in HEADERS.items():
        (headers / name).write_text(text, "utf-8")
    out = tmp_path / "qnn_errors.json"
    run = subprocess.run(
        [
            sys.executable, "-m", "matrix.refresh.qnn_errors", "--headers", str(headers),
            "--api-version", "2.32", "--source", "https://example.org/errors", "--out", str(out),
        ],
        cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    document = json.loads(out.read_text("utf-8"))
    schema = json.loads((ROOT / "matrix" / "qnn_errors.schema.json").read_text("utf-8"))
    jsonschema.validate(document, schema)
    assert document["codes"] == [
        {
            "code": 1002,
            "name": "QNN_COMMON_ERROR_MEM_ALLOC",
            "component": "common",
            "meaning": "Memory allocation related error.",
            "aliases": ["QNN_GRAPH_ERROR_MEM_ALLOC"],
        },
        {
            "code": 6022,
            "name": "QNN_GRAPH_ERROR_FINALIZE_FAILED",
            "component": "graph",
            "meaning": "Graph finalize failed",
            "aliases": [],
        },
    ]
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = subprocess.run(
        [sys.executable, "-m", "matrix.refresh.qnn_errors", "--headers", str(empty),
         "--api-version", "2.32", "--source", "https://example.org/errors"],
        cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
    )  # fmt: skip
    assert refused.returncode == 2 and "no QnnCommon.h" in refused.stderr


def test_a_failed_smoke_session_names_its_codes(tmp_path: Path) -> None:
    """The finding of a failed session quotes the codes its output gave, in
    QNN's words, and the report keeps them (schema-valid, see conftest)."""
    from conftest import validate_report
    from helpers.fake_python import write_fake_python
    from helpers.smoke_values import QNN_FACTS

    from qnndoctor import matrixdata
    from qnndoctor.facts.probed import ProbeFacts
    from qnndoctor.report.build import build
    from qnndoctor.smoke import run_smoke
    from qnndoctor.target.interpreter import Target

    line = "[E:onnxruntime:, qnn_model.cc:188 FinalizeGraphs] Failed to finalize QNN graph. Error code: 6022"
    result = {"status": "failed", "exception": {"type": "Fail", "message": line}}
    body = (
        f"import sys\nprint({line!r}, file=sys.stderr)\n"
        f"print('@@qnndoctor-smoke@@' + {json.dumps(result)!r})\n"
    )
    target = Target(str(write_fake_python(tmp_path, body)), "test double")
    smoke = run_smoke(target, QNN_FACTS, timeout=60)
    assert smoke.status == "failed"
    facts = QNN_FACTS.with_probe(ProbeFacts("smoke", "ok", values=smoke.to_json()))
    report = build(target, facts, matrixdata.load_or_empty())
    document = report.to_json()
    validate_report(document)
    assert [c["code"] for c in document["smoke"]["qnn_error_codes"]] == [6022]
    failed = next(f for f in report.findings if f.id == "smoke-failed")
    assert "6022 = QNN_GRAPH_ERROR_FINALIZE_FAILED (Graph finalize failed)" in failed.explanation


def test_a_damaged_code_table_is_said_not_hidden(
    cli: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A damaged install still explains, names no code, and says why on stderr."""
    (tmp_path / "qnn_errors.json").write_text('{"codes": [{"code": "x"', "utf-8")
    # only qnn_errors.json is damaged in this install: the other shipped table is intact
    real = _layout.package_dir("matrix")
    assert real is not None
    (tmp_path / "stages.json").write_bytes((real / "stages.json").read_bytes())
    monkeypatch.setattr(_layout, "package_dir", lambda _name: tmp_path)  # shipped_table's seam
    monkeypatch.setattr(qnn_codes, "problems", [])
    qnn_codes.table.cache_clear()
    try:
        log = tmp_path / "log.txt"
        log.write_text("ERROR: QnnGraph_execute failed with error 6020\n", "utf-8")
        assert callable(cli)
        result = cli("explain", "--log", str(log), "--json")
        assert json.loads(result.out)["qnn_error_codes"] == []
        assert "QNN error codes are not named" in result.err
        assert "qnn_errors.json: JSONDecodeError" in result.err
    finally:
        qnn_codes.table.cache_clear()
