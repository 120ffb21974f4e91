"""Every answer, and "no known cause", says where it failed (stage,
component, the line, the experiment that settles it); the error's own
wording caps the confidence of a cause it contradicts (issue 29)."""

from __future__ import annotations

import io
import shlex

import pytest

from qnndoctor.diagnosis import diagnose, stage
from qnndoctor.diagnosis.document import explain
from qnndoctor.render.explain import render_text

NOT_FOUND = (
    "onnxruntime.capi.onnxruntime_pybind11_state.NoSuchFile: [ONNXRuntimeError] : 3 : "
    "NO_SUCHFILE : Load model from C:\\m\\model.onnx failed:Load model C:\\m\\model.onnx "
    "failed. File doesn't exist"
)


def test_a_permission_error_caps_a_missing_file_answer_at_low() -> None:
    plain = diagnose(NOT_FOUND)
    assert plain.ids()[:1] == ["model-path-not-found"]
    assert plain.confidence(0) in ("medium", "high") and plain.doubt(0) is None
    for words in ("PermissionError: [Errno 13] Permission denied", "Access is denied."):
        denied = diagnose(NOT_FOUND + "\n" + words)
        assert denied.ids()[:1] == ["model-path-not-found"]  # the order stands
        assert denied.confidence(0) == "low"
        assert "permission error" in str(denied.doubt(0)) and "(line 2)" in str(denied.doubt(0))


def test_a_cause_that_is_itself_about_permissions_is_not_contradicted() -> None:
    text = "OSError: libQnnHtp.so: cannot open shared object file: Permission denied"
    result = diagnose(text)
    for rank, candidate in enumerate(result.candidates):
        if "permission" in (candidate.signature.title + candidate.signature.cause).lower():
            assert "own words" not in str(result.doubt(rank))


def test_an_unknown_failure_still_says_where_it_failed() -> None:
    text = (
        "2024-05-02 10:11:12.345 [E:onnxruntime:, qnn_execution_provider.cc:812 Compile] "
        "zorblax graph finalize step rejected node quux_17 with internal code 77777\n"
    )
    result = diagnose(text, resemblance=False)
    assert result.candidates == ()  # no catalogued cause
    where = result.where()
    assert (where.stage, where.component) == ("graph compose / finalize", "model / op support")
    assert where.line == 1 and "zorblax" in str(where.text)
    assert "--find-culprit" in where.experiment
    document = explain(text, None, None)
    assert document["where"]["stage"] in stage.STAGES
    out = io.StringIO()
    render_text(document, out)
    assert "Where it failed: graph compose / finalize (model / op support), line 1:" in (
        out.getvalue()
    )
    # the text names no model: the experiment says so in words, with no placeholder path
    assert (
        "to settle it: `qnndoctor model` with `--find-culprit` on the model that failed"
        in out.getvalue()
    )
    assert "YOUR_MODEL" not in out.getvalue() and document["where"]["model"] is None


@pytest.mark.parametrize(
    ("line", "model", "command"),
    [
        (
            "[E:onnxruntime:, inference_session.cc:2103 Initialize] Load model from "
            "/data/models/yolo_ctx.onnx failed: zorblax",
            "/data/models/yolo_ctx.onnx",
            "`qnndoctor model /data/models/yolo_ctx.onnx`",
        ),
        (
            'sess = ort.InferenceSession("/home/ann/my models/det.onnx", sess_options=so)\n'
            "onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : "
            "zorblax graph finalize step rejected node quux_17",
            "/home/ann/my models/det.onnx",
            "`qnndoctor model '/home/ann/my models/det.onnx' --find-culprit`",
        ),
        (
            "Load model from C:\\Users\\ann\\m\\det.onnx failed: zorblax graph finalize step "
            "rejected node quux_17",
            "C:\\Users\\ann\\m\\det.onnx",
            "`qnndoctor model C:\\Users\\ann\\m\\det.onnx --find-culprit`",
        ),
        # a traceback's code line: the literal's doubled backslashes are one in the name
        (
            '    sess = ort.InferenceSession("C:\\\\Users\\\\ann\\\\yolo_ctx.onnx", sess_options=so)\n'
            "onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : "
            "QNN EP: Failed to create context from binary. Error code: 5000",
            "C:\\Users\\ann\\yolo_ctx.onnx",
            "`qnndoctor model C:\\Users\\ann\\yolo_ctx.onnx`",
        ),
        # an unquoted path with a space: only its end would match, so none is taken
        (
            "Load model from C:\\Users\\ann\\my m\\det.onnx failed: zorblax graph finalize",
            None,
            "`qnndoctor model` with `--find-culprit` on the model that failed",
        ),
    ],
)
def test_the_experiment_names_the_model_the_text_names(
    line: str, model: str | None, command: str
) -> None:
    where = diagnose(line, resemblance=False).where()
    assert where.model == model
    assert command in where.experiment, where
    if model is not None and "'" in command:  # a POSIX path with a space: one argument
        argv = shlex.split(command.strip("`"))
        assert argv[2] == model


def test_every_answer_names_its_stage_and_nothing_shown_means_unknown() -> None:
    answered = diagnose("ModuleNotFoundError: No module named 'onnxruntime'")
    assert answered.candidates
    where = answered.where()
    assert (where.stage, where.component, where.line) == ("import", "Python environment", 1)
    assert "qnndoctor check" in where.experiment
    nothing = diagnose("hello world\n")
    assert nothing.where().stage == "unknown" and nothing.where().line is None
    assert "qnndoctor check" in nothing.where().experiment


def test_a_log_pasted_with_its_line_numbers_reads_as_the_log() -> None:
    """An editor's gutter on every line broke messages that span lines (a
    traceback, "Exception ignored in ..." then its TypeError); the numbers
    are taken off when every line begins with its own, counting up."""
    from helpers.corpus import corpus_case

    case = corpus_case("runtime/dev-enum-run.json", "run-010")
    plain = diagnose(case["text"]).ids()[:1]
    assert plain == [case["expected"]]
    lines = case["text"].splitlines()
    numbered = "\n".join(f"{i + 1:>4}  {line}" for i, line in enumerate(lines))
    assert diagnose(numbered).ids()[:1] == plain
    # numbers that do not count up are the text's own: left alone
    from qnndoctor.diagnosis.cleaning import clean_lines

    assert clean_lines("1 nodes on the NPU\n3 nodes on the CPU") == [
        "1 nodes on the NPU",
        "3 nodes on the CPU",
    ]
    assert clean_lines("  9: a\n 10:   b") == ["a", "  b"]  # indentation after the gutter kept
