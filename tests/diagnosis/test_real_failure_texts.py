"""Failures produced for real by onnxruntime-qnn 2.7.0 on the HTP simulator,
explained from their text alone: the catalogue must know today's wording,
and name the root cause before the error it leads to (an earlier failure's
consequence, such as the CPU-fallback refusal, ranks after it)."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult
from helpers import onnx_models
from helpers.target_runs import run_code, stderr_of_failing

from qnndoctor.diagnosis.document import explain
from qnndoctor.matrixdata import load_socs
from qnndoctor.smoke import MODEL

# One session of the shipped QDQ model with the given provider options, CPU
# fallback disabled (as the smoke session runs it).
SESSION = (
    "import json, sys, onnxruntime as ort, onnxruntime_qnn as qnn\n"
    "ort.register_execution_provider_library('QNNExecutionProvider', qnn.get_library_path())\n"
    "devices = [d for d in ort.get_ep_devices() if d.ep_name == 'QNNExecutionProvider']\n"
    "options = ort.SessionOptions()\n"
    "options.log_severity_level = 3\n"
    "options.add_session_config_entry('session.disable_cpu_ep_fallback', '1')\n"
    "options.add_provider_for_devices(devices, json.loads(sys.argv[2]))\n"
    "ort.InferenceSession(sys.argv[1], sess_options=options)\n"
)


def _failure(python: Path, provider_options: dict[str, str]) -> str:
    return stderr_of_failing(python, SESSION, str(MODEL), json.dumps(provider_options))


@pytest.mark.parametrize(
    ("provider_options", "root", "consequence"),
    [
        (
            {"backend_path": "/nonexistent/libQnnHtp.so"},
            "backend-path-load-library-failed",
            "cpu-fallback-disabled-qnn-setup-failed",
        ),
        (
            {"backend_type": "htp", "backend_path": "libQnnHtp.so"},
            "qnn-backend-type-and-backend-path-both-set",
            "cpu-fallback-disabled-conflicting-cpu-ep",
        ),
    ],
    ids=["backend-path-missing", "backend-type-and-path"],
)
def test_the_root_cause_comes_before_its_consequence(
    healthy_venv: Path, provider_options: dict[str, str], root: str, consequence: str
) -> None:
    text = _failure(healthy_venv, provider_options)
    document = explain(text, None, None, socs=load_socs())
    ids = [c["id"] for c in document["candidates"]]
    assert ids[0] == root, (ids, text[-800:])
    assert consequence in ids[1:]
    assert document["candidates"][0]["confidence"] in ("medium", "high")
    assert not document["tie"]
    first, behind = document["candidates"][0], document["candidates"][ids.index(consequence)]
    if behind["score"] > first["score"]:  # it outscored the root cause: moved by the rule
        assert "only follows from an earlier failure" in document["why_first"][0]


REGISTER = (
    "import onnxruntime as ort, onnxruntime_qnn as qnn\n"
    "ort.register_execution_provider_library('QNNExecutionProvider', qnn.get_library_path())\n"
)
DISABLE_FALLBACK = "options.add_session_config_entry('session.disable_cpu_ep_fallback', '1')\n"
NO_FALLBACK = "options = ort.SessionOptions()\n" + DISABLE_FALLBACK


def _explained(
    python: Path, script: str, cwd: Path | None = None
) -> tuple[list[str], dict[str, Any], str]:
    """A real failing run of ``script`` (``MODEL`` defined), explained from its
    stderr alone: the candidates' ids, the explain document, the stderr."""
    stderr = stderr_of_failing(python, f"MODEL = {str(MODEL)!r}\n" + script, cwd=cwd)
    document = explain(stderr, None, None, socs=load_socs())
    return [c["id"] for c in document["candidates"]], document, stderr


def _named_first_and_sure(python: Path, script: str, expected: str, cwd: Path) -> None:
    """A real failing run of ``script`` is explained as ``expected``, first and
    at medium or high confidence."""
    ids, document, stderr = _explained(python, script, cwd)
    assert ids[:1] == [expected], (ids, stderr[-800:])
    assert document["candidates"][0]["confidence"] in ("medium", "high")


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (  # the EP refuses its options; Python retries on the CPU EP alone, which the
            # disabled fallback refuses: that log line comes first, the cause's
            # chained traceback last
            REGISTER + NO_FALLBACK + "devices = [d for d in ort.get_ep_devices() "
            "if d.ep_name == 'QNNExecutionProvider']\n"
            "options.add_provider_for_devices(devices, {'backend_type': 'htp', "
            "'enable_htp_prepare_only': '1'})\n"
            "ort.InferenceSession(MODEL, sess_options=options)\n",
            "qnn-ep-creation-failed-option-rejected",
        ),
        (  # 1.x code on 2.x: the plugin is never registered
            "import onnxruntime as ort\n" + NO_FALLBACK + "ort.InferenceSession(MODEL, "
            "sess_options=options, providers=['QNNExecutionProvider'])\n",
            "provider-not-listed-plugin-not-registered",
        ),
        (
            "import onnxruntime as ort\nort.register_execution_provider_library("
            "'QNNExecutionProvider', '/nonexistent/lib/libonnxruntime_providers_qnn.so')\n",
            "plugin-library-load-failed",
        ),
        (
            REGISTER + "ort.register_execution_provider_library('QNNExecutionProvider', "
            "qnn.get_library_path())\n",
            "plugin-library-already-registered",
        ),
        (
            REGISTER + "options = ort.SessionOptions()\n"
            "options.add_session_config_entry('ep.context_enable', '1')\n"
            "options.add_session_config_entry('ep.context_file_path', '/tmp')\n"
            "devices = [d for d in ort.get_ep_devices() if d.ep_name == 'QNNExecutionProvider']\n"
            "options.add_provider_for_devices(devices, {'backend_type': 'htp'})\n"
            "ort.InferenceSession(MODEL, sess_options=options)\n",
            "epcontext-file-path-is-a-folder",
        ),
        (  # the device's ep_name is the registration name: this filter keeps nothing
            "import onnxruntime as ort, onnxruntime_qnn as qnn\n"
            "ort.register_execution_provider_library('QNN', qnn.get_library_path())\n"
            "devices = [d for d in ort.get_ep_devices() if d.ep_name == 'QNNExecutionProvider']\n"
            "options = ort.SessionOptions()\n"
            "options.add_provider_for_devices(devices, {'backend_type': 'htp'})\n",
            "ep-device-filter-selects-nothing",
        ),
    ],
    ids=[
        "prepare-only-without-context-enable",
        "providers-list-on-2x",
        "plugin-path-wrong",
        "registered-twice",
        "context-path-folder",
        "registered-as-another-name",
    ],
)
def test_todays_wording_is_recognised(healthy_venv: Path, script: str, expected: str) -> None:
    ids, _, stderr = _explained(healthy_venv, script)
    assert ids[:1] == [expected], (ids, stderr[-800:])
    if expected == "provider-not-listed-plugin-not-registered":
        # its look-alike (1.x shadowed) next; the CPU-fallback refusal it led to after both
        consequence = ids.index("cpu-fallback-disabled-unsupported-nodes")
        assert ids.index("provider-not-listed-shadowed-by-other-onnxruntime") < consequence


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory, healthy_venv: Path) -> Path:
    """The shipped model compiled by the real 2.7.0, its context in a .bin beside it."""
    folder = tmp_path_factory.mktemp("compiled")
    return onnx_models.compile_ep_context(healthy_venv, MODEL, folder / "m_ctx.onnx")


def _compiled_session(model: str, *config: tuple[str, str]) -> str:
    """A 2.x session of ``model`` (a Python expression) with session ``config``."""
    entries = "".join(f"options.add_session_config_entry({k!r}, {v!r})\n" for k, v in config)
    return (
        REGISTER + "devices = [d for d in ort.get_ep_devices() if d.ep_name == "
        "'QNNExecutionProvider']\noptions = ort.SessionOptions()\n"
        + entries
        + "options.add_provider_for_devices(devices, {'backend_type': 'htp'})\n"
        f"ort.InferenceSession({model}, sess_options=options)\n"
    )


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("compile-the-compiled", "epcontext-enable-on-compiled-model"),
        ("output-folder-missing", "epcontext-output-folder-missing"),
        ("loaded-from-bytes", "ep-context-bin-file-missing"),
        ("device-id", "device-id-not-found"),
        ("compiled-without-the-plugin", "ep-context-node-without-qnn-ep"),
    ],
)
def test_context_and_device_failures_of_today(
    healthy_venv: Path, compiled: Path, tmp_path: Path, case: str, expected: str
) -> None:
    scripts = {
        # ep.context_enable belongs to compiling; on a compiled model it fails
        "compile-the-compiled": _compiled_session(repr(str(compiled)), ("ep.context_enable", "1")),
        "output-folder-missing": _compiled_session(
            repr(str(MODEL)),
            ("ep.context_enable", "1"),
            ("ep.context_file_path", str(tmp_path / "no-such-folder" / "m_ctx.onnx")),
        ),
        # from bytes, the .bin is looked for relative to the working directory
        "loaded-from-bytes": _compiled_session(f"open({str(compiled)!r}, 'rb').read()"),
        # 2.x code that forgot the plugin: only the CPU EP is in the session
        "compiled-without-the-plugin": "import onnxruntime as ort\n"
        f"ort.InferenceSession({str(compiled)!r})\n",
    }
    if case == "device-id":
        stderr = _failure(healthy_venv, {"backend_type": "htp", "device_id": "7"})
    else:
        stderr = stderr_of_failing(healthy_venv, scripts[case])
    document = explain(stderr, None, None, socs=load_socs())
    ids = [c["id"] for c in document["candidates"]]
    assert ids[:1] == [expected], (ids, stderr[-800:])
    assert document["candidates"][0]["confidence"] in ("medium", "high")
    if case == "loaded-from-bytes":
        assert "ep.context_file_path" in document["candidates"][0]["fix"]
    if case == "output-folder-missing":
        assert not (tmp_path / "no-such-folder").exists()


def test_a_context_loaded_from_bytes_runs_once_its_path_is_given(
    healthy_venv: Path, compiled: Path
) -> None:
    """The fix the bytes case prints works: ep.context_file_path names the model."""
    script = _compiled_session(
        f"open({str(compiled)!r}, 'rb').read()", ("ep.context_file_path", str(compiled))
    )
    run = run_code(healthy_venv, script)
    assert run.returncode == 0, run.stderr[-800:]


def test_an_older_qnn_on_ld_library_path_is_named_with_the_probe_fact_that_confirms_it(
    cli: Callable[..., CliResult],
    healthy_venv: Path,
    real_wheels: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A QAIRT SDK's lib folder on LD_LIBRARY_PATH (here: the real QNN 2.47 libraries
    of the onnxruntime-qnn 2.3.0 wheel, with their own libc++) is searched before
    the package's own folder: the 2.7.0 EP loads the older libQnnHtp.so and refuses
    its interface. The smoke session's first answer names that, and the saved
    report's fact (QNN libraries on the loader path) supports it."""
    sdk = tmp_path / "qairt" / "lib" / "x86_64-linux-clang"
    sdk.mkdir(parents=True)
    with zipfile.ZipFile(real_wheels["onnxruntime-qnn==2.3.0"]) as wheel:
        for name in wheel.namelist():
            base = name.rsplit("/", 1)[-1]
            if base.startswith(("libQnnHtp.so", "libQnnSystem.so", "libc++", "libunwind")):
                (sdk / base).write_bytes(wheel.read(name))
    monkeypatch.setenv("LD_LIBRARY_PATH", str(sdk))
    result = cli("check", "--python", str(healthy_venv), "--json")
    report = result.json()
    assert report["smoke"]["status"] == "failed"
    first = report["smoke"]["diagnosis"][0]
    assert first["id"] == "qnn-interface-version-too-old", report["smoke"]["diagnosis"]
    assert any("qnn_on_loader_path is True" in line for line in first["evidence"])
    assert "system-qnn-on-loader-path" in [f["id"] for f in report["findings"]]
    # Re-diagnosed later from the saved ticket, on a machine without that path.
    monkeypatch.delenv("LD_LIBRARY_PATH")
    ticket = tmp_path / "ticket.json"
    ticket.write_text(result.out, encoding="utf-8")
    log = tmp_path / "log.txt"
    smoke = report["smoke"]
    log.write_text("\n".join([*smoke["log_lines"], smoke["stderr_tail"] or "", smoke["reason"]]))
    again = cli("explain", "--log", str(log), "--from-report", str(ticket), "--json").json()
    assert again["candidates"][0]["id"] == "qnn-interface-version-too-old"
    used = {f["key"]: f["value"] for f in again["facts"]["used"]}
    assert used["qnn_on_loader_path"] is True


@pytest.mark.parametrize(
    ("case", "expected"),
    [("ir-14", "model-ir-version-too-new"), ("weights-not-copied", "model-external-data-missing")],
)
def test_model_file_failures_of_today(
    healthy_venv: Path, tmp_path: Path, case: str, expected: str
) -> None:
    """The model file itself, before any EP sees it: an IR version newer than
    onnxruntime 1.31.1 reads, and external weights left behind."""
    if case == "ir-14":
        model = onnx_models.relu_ir(tmp_path / "ir14.onnx", 14)
    else:
        model = onnx_models.external_weights(tmp_path / "ext.onnx")
        (tmp_path / "ext.weights").unlink()
    stderr = stderr_of_failing(
        healthy_venv,
        "import sys, onnxruntime as ort\nort.InferenceSession(sys.argv[1])\n",
        str(model),
    )
    document = explain(stderr, None, None, socs=load_socs())
    ids = [c["id"] for c in document["candidates"]]
    assert ids[:1] == [expected], (ids, stderr[-800:])
    assert document["candidates"][0]["confidence"] in ("medium", "high")


def test_the_ir_backend_loads_but_does_not_run(healthy_venv: Path) -> None:
    """backend_path to the package's libQnnIr.so: the session is created, the
    run fails, and Python's CPU retry trips the disabled fallback. The backend
    that does not execute is named, before the retry's conflict."""
    script = (
        REGISTER + NO_FALLBACK + "import os, numpy as np\n"
        "devices = [d for d in ort.get_ep_devices() if d.ep_name == 'QNNExecutionProvider']\n"
        "ir = os.path.join(os.path.dirname(qnn.get_library_path()), 'libQnnIr.so')\n"
        "options.add_provider_for_devices(devices, {'backend_path': ir})\n"
        "session = ort.InferenceSession(MODEL, sess_options=options)\n"
        "session.run(None, {'x': np.ones((1, 8), dtype=np.float32)})\n"
    )
    ids, _, stderr = _explained(healthy_venv, script)
    assert ids[:1] == ["qnn-ir-or-saver-backend-does-not-execute"], (ids, stderr[-800:])
    assert "cpu-fallback-disabled-conflicting-cpu-ep" in ids[1:]


QNN_SESSION = (
    REGISTER
    + "devices = [d for d in ort.get_ep_devices() if d.ep_name == 'QNNExecutionProvider']\n"
    "options = ort.SessionOptions()\n"
)


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (  # the user's own script is named like the package it imports
            "import onnxruntime_qnn\n",
            "local-file-shadows-package",
        ),
        (
            "import onnxruntime as ort, numpy as np\n"
            "session = ort.InferenceSession(MODEL, providers=['CPUExecutionProvider'])\n"
            "cancel = ort.RunOptions()\ncancel.terminate = True\n"
            "session.run(None, {'x': np.ones((1, 8), dtype=np.float32)}, cancel)\n",
            "run-options-terminate-flag-set",
        ),
        (
            QNN_SESSION + "options.optimized_model_filepath = 'optimized.onnx'\n"
            "options.add_provider_for_devices(devices, {'backend_type': 'htp'})\n"
            "ort.InferenceSession(MODEL, sess_options=options)\n",
            "optimized-model-filepath-with-compiling-ep",
        ),
        (
            QNN_SESSION + "options.add_session_config_entry('session.disable_model_compile', '1')\n"
            "options.add_provider_for_devices(devices, {'backend_type': 'htp'})\n"
            "ort.InferenceSession(MODEL, sess_options=options)\n",
            "ep-compile-disabled-model-not-compiled",
        ),
        (
            QNN_SESSION + "options.add_provider_for_devices(devices, {'backend_type': 'htp', "
            "'profiling_level': 'basic', 'profiling_file_path': 'no-such-folder/profile.csv'})\n"
            "ort.InferenceSession(MODEL, sess_options=options)\n",
            "qnn-profiling-file-folder-missing",
        ),
        (
            QNN_SESSION
            + DISABLE_FALLBACK
            + "options.add_provider_for_devices(devices, {'backend_type': 'htp', "
            "'op_packages': 'Custom:libNoSuchOpPackage.so:NoSuchInterfaceProvider'})\n"
            "ort.InferenceSession(MODEL, sess_options=options)\n",
            "qnn-op-package-not-found",
        ),
        (  # one SessionOptions kept for several sessions, the provider added each time
            QNN_SESSION + "for _ in range(2):\n"
            "    options.add_provider_for_devices(devices, {'backend_type': 'htp'})\n"
            "    ort.InferenceSession(MODEL, sess_options=options)\n",
            "session-options-provider-added-twice",
        ),
        (
            "import pathlib, onnxruntime as ort, onnxruntime_qnn as qnn\n"
            "ort.register_execution_provider_library('QNNExecutionProvider', "
            "pathlib.Path(qnn.get_library_path()))\n",
            "plugin-register-path-not-str",
        ),
        (
            "import onnxruntime as ort, onnxruntime_qnn as qnn\n"
            "ort.SessionOptions().register_custom_ops_library(qnn.get_library_path())\n",
            "plugin-library-registered-as-custom-ops",
        ),
        (
            "import pickle, onnxruntime as ort\n"
            "pickle.dumps(ort.InferenceSession(MODEL, providers=['CPUExecutionProvider']))\n",
            "inference-session-not-picklable",
        ),
        (
            "import numpy as np, onnxruntime as ort\n"
            "session = ort.InferenceSession(MODEL, providers=['CPUExecutionProvider'])\n"
            "session.run(None, {'x': np.random.rand(1, 8)})\n",
            "input-dtype-mismatch",
        ),
    ],
    ids=[
        "script-named-like-the-package",
        "terminate-flag",
        "optimized-model-path",
        "compile-disabled",
        "profiling-folder",
        "op-package",
        "options-reused",
        "pathlib-path",
        "custom-ops-library",
        "pickled-session",
        "float64-input",
    ],
)
def test_options_and_program_mistakes_of_today(
    healthy_venv: Path, tmp_path: Path, script: str, expected: str
) -> None:
    if expected == "local-file-shadows-package":
        (tmp_path / "onnxruntime_qnn.py").write_text(
            "import onnxruntime_qnn\nonnxruntime_qnn.get_library_path()\n"
        )
    _named_first_and_sure(healthy_venv, script, expected, tmp_path)


def test_a_registered_plugin_is_listed_but_a_providers_list_still_does_not_create_it(
    healthy_venv: Path, tmp_path: Path
) -> None:
    """Measured: after registration get_available_providers() lists the plugin
    (so 'it is listed' proves nothing), yet providers=[...] creates no QNN EP;
    with CPU fallback disabled the only message is the fallback refusal, and
    the traceback's source line of the user's script names the 1.x habit."""
    (tmp_path / "app.py").write_text(
        f"MODEL = {str(MODEL)!r}\n"
        + REGISTER
        + "print(ort.get_available_providers())\n"
        + NO_FALLBACK
        + "ort.InferenceSession(MODEL, sess_options=options, providers=['QNNExecutionProvider'])\n"
    )
    run = run_code(
        healthy_venv, "import runpy; runpy.run_path('app.py', run_name='__main__')", cwd=tmp_path
    )
    assert run.returncode != 0
    assert "'QNNExecutionProvider'" in run.stdout
    document = explain(run.stderr, None, None, socs=load_socs())
    ids = [c["id"] for c in document["candidates"]]
    assert ids[:1] == ["provider-not-listed-plugin-not-registered"], (ids, run.stderr[-800:])


DELEGATE_RAISES = (  # the selection policy's delegate raises KeyError
    REGISTER + "def pick(devices, model_metadata, runtime_metadata, max_selections):\n"
    "    return [d for d in devices if d.ep_name == model_metadata['preferred']]\n"
    "options = ort.SessionOptions()\n"
    "options.set_provider_selection_policy_delegate(pick)\n"
    "ort.InferenceSession(MODEL, sess_options=options)\n"
)


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (
            QNN_SESSION + "options.add_session_config_entry('ep.context_enable', '1')\n"
            "options.add_session_config_entry('ep.context_file_path', 'model_ctx.onnx')\n"
            "options.add_provider_for_devices(devices, {'backend_type': 'htp', "
            "'enable_htp_prepare_only': '1'})\n"
            "import numpy as np\n"
            "ort.InferenceSession(MODEL, sess_options=options).run(None, "
            "{'x': np.ones((1, 8), np.float32)})\n",
            "qnn-prepare-only-session-run",
        ),
        (DELEGATE_RAISES, "ep-selection-delegate-failed"),
        (
            "import onnxruntime as ort, onnxruntime_qnn as qnn\n"
            "ort.register_execution_provider_library('qnn_plugin', qnn.get_library_path())\n"
            "ort.unregister_execution_provider_library('QNNExecutionProvider')\n",
            "unregister-ep-library-name-not-registered",
        ),
        (
            QNN_SESSION + "options.log_severity_level = 5\n"
            "options.add_provider_for_devices(devices, {'backend_type': 'htp'})\n"
            "ort.InferenceSession(MODEL, sess_options=options)\n",
            "session-log-severity-out-of-range",
        ),
        (
            QNN_SESSION + "options.add_session_config_entry('session.intra_op_thread_affinities', "
            "'0')\noptions.intra_op_num_threads = 2\n"
            "options.add_provider_for_devices(devices, {'backend_type': 'htp'})\n"
            "ort.InferenceSession(MODEL, sess_options=options)\n",
            "session-thread-affinity-config-invalid",
        ),
        (
            QNN_SESSION + DISABLE_FALLBACK + "options.add_provider_for_devices(devices, "
            "{'backend_type': 'htp', 'device_id': 'npu0'})\n"
            "ort.InferenceSession(MODEL, sess_options=options)\n",
            "qnn-ep-creation-unknown-exception",
        ),
        (
            "import onnxruntime as ort\nopen('empty.onnx', 'wb').close()\n"
            "ort.InferenceSession('empty.onnx', providers=['CPUExecutionProvider'])\n",
            "model-file-not-onnx-protobuf",
        ),
        (
            "import numpy as np, onnxruntime as ort\n"
            "session = ort.InferenceSession(MODEL, providers=['CPUExecutionProvider'])\n"
            "session.run(None, {'input': np.ones((1, 8), np.float32)})\n",
            "run-input-names-do-not-match-model",
        ),
    ],
    ids=[
        "prepare-only-then-run",
        "selection-delegate-raises",
        "unregister-by-ep-name",
        "log-severity-5",
        "affinity-from-0",
        "device-id-not-a-number",
        "empty-model-file",
        "wrong-input-name",
    ],
)
def test_enumerated_mistakes_of_today(
    healthy_venv: Path, tmp_path: Path, script: str, expected: str
) -> None:
    """A sample of the systematic enumeration (tests/diagnosis_corpus/runtime/
    dev-enum-*.json), re-made on every run so a new wording is caught."""
    _named_first_and_sure(healthy_venv, script, expected, tmp_path)


def test_a_verbose_log_names_the_error_not_the_narration_around_it(
    healthy_venv: Path, tmp_path: Path
) -> None:
    """The same mistake (a profile saved although profiling was never on) pasted
    with every log at verbose: the QNN EP's narration of a node it left to the
    CPU EP ("Validation FAILED for 1 nodes ... REASON : ...", logged at [V]) is
    not an error; the traceback's FileNotFoundError is."""
    model = onnx_models.with_det(tmp_path / "with_det.onnx")
    script = (
        REGISTER + "import numpy as np\n"
        "ort.set_default_logger_severity(0)\n"
        "devices = [d for d in ort.get_ep_devices() if d.ep_name == 'QNNExecutionProvider']\n"
        "options = ort.SessionOptions()\n"
        "options.log_severity_level = 0\n"
        "options.add_provider_for_devices(devices, {'backend_type': 'htp'})\n"
        f"session = ort.InferenceSession({str(model)!r}, sess_options=options)\n"
        "session.run(None, {'x': np.ones((1, 4, 4), dtype=np.float32)})\n"
        "open(session.end_profiling()).read()\n"
    )
    ids, document, stderr = _explained(healthy_venv, script)
    assert "Validation FAILED for 1 nodes in OrtNodeUnit (Det)" in stderr
    assert "FileNotFoundError" in stderr
    assert ids[:1] == ["end-profiling-without-enable-profiling"], (ids, stderr[-800:])
    # the narration is listed after it, and casts no doubt on it
    assert "qnn-ep-op-builder-rejected-node" in ids[1:]
    assert document["candidates"][0]["doubt"] is None
    narrated = next(
        c for c in document["candidates"] if c["id"] == "qnn-ep-op-builder-rejected-node"
    )
    assert narrated["verbose_only"] and not document["candidates"][0]["verbose_only"]
