"""A traceback's lines of source code say what was called, not what failed;
and a log the QNN EP wrote its own lines into came from a session that had
the EP. Both kept `explain` from blaming an unregistered 2.x plugin for a
device the EP itself failed to create (issue 25)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers.target_runs import stderr_of_failing

from qnndoctor.diagnosis import diagnose
from qnndoctor.diagnosis.codelines import code_spans
from qnndoctor.diagnosis.document import explain
from qnndoctor.diagnosis.textfacts import from_text
from qnndoctor.matrixdata import load_socs
from qnndoctor.smoke import MODEL

PLUGIN = "provider-not-listed-plugin-not-registered"

# The QNN EP's own lines, as onnxruntime-qnn 2.7.0 printed them on the HTP
# simulator for a device it could not create (soc_model 999; made for real in
# the last test below).
EP_LINES = (
    "2026-11-28 04:02:04.181230500 [E:onnxruntime:, qnn_execution_provider.cc:2290 "
    "GetCapabilityImpl] QNN SetupBackend failed Failed to create device. Error: "
    "QNN_DEVICE_ERROR_INVALID_CONFIG: Invalid config values\n"
    "2026-11-28 04:02:04.199621389 [E:onnxruntime:, ep_plugin_provider_interfaces.cc:279 "
    "GetCapability] OrtEp::GetCapability() for QNNExecutionProvider failed with error: "
    "[ONNXRuntimeError] : 11 : EP_FAIL : QNN SetupBackend failed Failed to create device. "
    "Error: QNN_DEVICE_ERROR_INVALID_CONFIG: Invalid config values\n"
)
FALLBACK_REFUSED = (
    "[ONNXRuntimeError] : 1 : FAIL : This session contains graph nodes that are assigned to "
    "the default CPU EP, but fallback to CPU EP has been explicitly disabled by the user."
)
CALL = 'sess = ort.InferenceSession("model.onnx", providers=["QNNExecutionProvider"])'


def _traceback(tmp_path: Path, message: str, call: str = CALL) -> str:
    """The traceback Python itself prints when ``call`` (a line of the user's
    script) raises onnxruntime's ``Fail`` with ``message``."""
    script = tmp_path / "app.py"
    script.write_text(
        "class Fail(Exception):\n"
        "    pass\n"
        "Fail.__module__ = 'onnxruntime.capi.onnxruntime_pybind11_state'\n"
        "class ort:\n"
        "    @staticmethod\n"
        "    def InferenceSession(path, providers):\n"
        f"        raise Fail({message!r})\n"
        f"{call}\n",
        encoding="utf-8",
    )
    run = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert run.returncode == 1 and run.stderr.startswith("Traceback"), run.stderr
    return run.stderr


def test_code_spans_are_the_source_lines_under_each_frame(tmp_path: Path) -> None:
    text = _traceback(tmp_path, FALLBACK_REFUSED)
    quoted = [text[start:end] for start, end in code_spans(text)]
    assert len(quoted) == 2  # the user's call, and the raise inside the callee
    assert CALL in quoted[0]
    assert "raise Fail(" in quoted[1]
    assert not any("File " in q or "Fail:" in q or "Traceback" in q for q in quoted)
    assert code_spans(EP_LINES) == ()
    # a frame line without its source (a paste that lost the indentation) quotes nothing
    assert code_spans('File "app.py", line 8, in <module>\nRuntimeError: boom\n') == ()


def test_the_setup_failure_with_a_providers_call_is_not_an_unregistered_plugin(
    tmp_path: Path,
) -> None:
    """Issue 25's text: the user's code passes providers=[...], the EP logs that
    it could not create the device. The plugin was registered (the EP wrote the
    log), and the call in the traceback is no evidence of anything."""
    text = EP_LINES + _traceback(tmp_path, FALLBACK_REFUSED)
    document = explain(text, None, None, socs=load_socs())
    ids = [c["id"] for c in document["candidates"]]
    assert PLUGIN not in ids, ids
    assert ids[0] != PLUGIN and not document["tie"]
    # the fallback refusal beside the call would raise it: the EP's own lines exclude it
    excluded = {e["id"]: e["because"] for e in document["excluded"]}
    assert "qnn_ep_logged" in excluded[PLUGIN]
    used = {f["key"]: f for f in document["facts"]["used"]}
    assert used["qnn_ep_logged"]["value"] is True
    assert "qnn_execution_provider.cc" in used["qnn_ep_logged"]["source"]


def test_a_code_line_never_raises_a_candidate_by_itself(tmp_path: Path) -> None:
    """Before: the providers call alone raised the plugin candidate (weight 7),
    whatever the error was. Written as a sentence it still does, and beside a
    message of the same cause (the CPU-fallback refusal, a context cue of the
    entry) the call counts as before: a 2.x script that never registered the
    plugin (tests/diagnosis_corpus/runtime api-014) is still named."""
    quoted = _traceback(tmp_path, "[ONNXRuntimeError] : 1 : FAIL : something uncatalogued")
    assert PLUGIN not in diagnose(quoted, resemblance=False).ids()
    said = f"I create the session with `{CALL}` and it runs on the CPU.\n"
    assert PLUGIN in diagnose(said, resemblance=False).ids()
    refused = _traceback(tmp_path, FALLBACK_REFUSED)
    assert diagnose(refused, resemblance=False).ids()[0] == PLUGIN


def test_a_code_line_still_corroborates_what_the_message_raised(tmp_path: Path) -> None:
    warning = (
        "/home/me/.venv/lib/python3.12/site-packages/onnxruntime/capi/"
        "onnxruntime_inference_collection.py:121: UserWarning: Specified provider "
        "'QNNExecutionProvider' is not in available provider names.Available providers: "
        "'AzureExecutionProvider, CPUExecutionProvider'\n  warnings.warn(\n"
    )
    text = warning + _traceback(tmp_path, FALLBACK_REFUSED)
    result = diagnose(text, resemblance=False)
    assert PLUGIN in result.ids()
    candidate = next(c for c in result.candidates if c.signature.id == PLUGIN)
    patterns = [e for e in candidate.evidence if e.kind == "pattern"]
    assert "Specified provider" in patterns[0].detail and patterns[0].weight == 8
    code = [e for e in patterns if "InferenceSession" in e.detail]
    assert code and code[0].weight == 1  # corroboration only


def test_the_ep_lines_of_a_real_session_exclude_the_unregistered_plugin(
    healthy_venv: Path,
) -> None:
    """onnxruntime-qnn 2.7.0 on the simulator, a device it cannot create: its
    lines are read as the fact, which excludes the unregistered-plugin cause a
    sentence of the report would otherwise raise."""
    session = (
        "import sys, onnxruntime as ort, onnxruntime_qnn as qnn\n"
        "ort.register_execution_provider_library('QNNExecutionProvider', qnn.get_library_path())\n"
        "devices = [d for d in ort.get_ep_devices() if d.ep_name == 'QNNExecutionProvider']\n"
        "options = ort.SessionOptions()\n"
        "options.add_session_config_entry('session.disable_cpu_ep_fallback', '1')\n"
        "options.add_provider_for_devices(devices, {'backend_type': 'htp', 'soc_model': '999'})\n"
        "ort.InferenceSession(sys.argv[1], sess_options=options)\n"
    )
    logged = stderr_of_failing(healthy_venv, session, str(MODEL))
    assert "Failed to create device" in logged, logged[-800:]
    fact = from_text(logged).facts["qnn_ep_logged"]
    assert fact.value is True and "qnn_" in fact.source
    said = f"onnxruntime-qnn 2.7.0. I create the session with `{CALL}` and get:\n"
    document = explain(said + logged, None, None, socs=load_socs())
    assert PLUGIN not in [c["id"] for c in document["candidates"]]
    excluded = {e["id"]: e["because"] for e in document["excluded"]}
    assert "qnn_ep_logged" in excluded[PLUGIN], json.dumps(document["excluded"])
    alone = explain(said, None, None, socs=load_socs())  # without the EP's lines: raised
    assert PLUGIN in [c["id"] for c in alone["candidates"]]


def test_no_internal_note_in_the_catalogues_user_facing_texts() -> None:
    """Titles, causes, fixes and tell-apart facts are shown to users: no note
    on what qnndoctor ought to do."""
    from qnndoctor.diagnosis.catalogue import load

    for signature in load().signatures:
        fixes = [signature.fix] if isinstance(signature.fix, str) else list(signature.fix.values())
        for text in (signature.title, signature.cause, *fixes, *signature.distinguishing):
            lowered = text.lower()
            for note in ("qnndoctor must", "qnndoctor should", "text is generic", "todo", "fixme"):
                assert note not in lowered, (signature.id, text)
