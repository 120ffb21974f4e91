"""The order things happened, not the order of the lines: a consequence ranks
after the cause that happened before it, and a chained exception's cause,
printed last, still happened first (diagnosis/causal.py and the engine's
root-cause ordering)."""

from __future__ import annotations

from qnndoctor.diagnosis import diagnose


def test_a_consequence_alone_stays_first_and_order_in_the_log_decides() -> None:
    """Without an earlier cause, the consequence is the answer; a cause named
    only after the consequence's message does not move before it."""
    fallback = (
        "[E:onnxruntime:, inference_session.cc:3181 operator()] This session contains graph "
        "nodes that are assigned to the default CPU EP, but fallback to CPU EP has been "
        "explicitly disabled by the user.\n"
    )
    setup = (
        "[E:onnxruntime:, qnn_execution_provider.cc:2290 GetCapabilityImpl] QNN SetupBackend "
        "failed Unable to load backend, error:  /opt/x/libQnnHtp.so: cannot open shared object "
        "file: No such file or directory\n"
    )
    alone = diagnose(fallback)
    assert alone.ids()[:2] == [
        "cpu-fallback-disabled-unsupported-nodes",
        "cpu-fallback-disabled-qnn-setup-failed",
    ]
    before = diagnose(setup + fallback)
    assert before.ids()[:2] == [
        "backend-path-load-library-failed",
        "cpu-fallback-disabled-qnn-setup-failed",
    ]
    assert "only follows from an earlier failure" in before.verdict.why_first[0]
    after = diagnose(fallback + setup)  # the same lines, the cause named last: scores decide
    assert after.ids()[:2] == [
        "cpu-fallback-disabled-qnn-setup-failed",
        "backend-path-load-library-failed",
    ]
    assert not any("earlier failure" in reason for reason in after.verdict.why_first)


def test_a_chained_cause_printed_last_still_happened_first() -> None:
    """Python prints the cause of a chained exception at the end, after the log
    line of the failure it led to; the consequence ranks after that cause. The
    same lines without the chain marker keep the order of the text."""
    logged = (
        "[E:onnxruntime:, inference_session.cc:3175 operator()] Conflicting session "
        "configuration: explicitly added the CPU EP to the session, but also disabled "
        "fallback to the CPU EP via session configuration options.\n"
    )
    cause = (
        "Traceback (most recent call last):\n"
        '  File "app.py", line 9, in <module>\n'
        "RuntimeError: ep_plugin_provider_interfaces.cc:71 CreateProvider Error creating "
        "execution provider: [ONNXRuntimeError] : 1 : FAIL : enable_htp_prepare_only=1 "
        "requires ep.context_enable=1.\n\n"
    )
    final = (
        "Traceback (most recent call last):\n"
        '  File "app.py", line 9, in <module>\n'
        "onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument: [ONNXRuntimeError] : 2 : "
        "INVALID_ARGUMENT : Conflicting session configuration: explicitly added the CPU EP to "
        "the session, but also disabled fallback to the CPU EP via session configuration "
        "options.\n"
    )
    marker = "The above exception was the direct cause of the following exception:\n\n"
    chained = diagnose(logged + cause + marker + final)
    assert chained.ids()[:2] == [
        "qnn-ep-creation-failed-option-rejected",
        "cpu-fallback-disabled-conflicting-cpu-ep",
    ]
    assert "only follows from an earlier failure" in chained.verdict.why_first[0]
    unchained = diagnose(logged + cause + final)
    assert unchained.ids()[0] == "cpu-fallback-disabled-conflicting-cpu-ep"
