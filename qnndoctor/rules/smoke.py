"""Rules about the smoke session's outcome."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping
from typing import Any

from .. import shell
from ..facts.probed import Facts
from ..matrixdata import Matrix
from ..smoke.outcome import STAGES
from ._common import target_is_windows
from .declare import rule
from .findings import Evidence, Finding, FindingKind, Fix, Severity, make

PASSED = FindingKind("smoke-passed", Severity.INFO, "The QNN smoke session ran on the backend")
FAILED = FindingKind("smoke-failed", Severity.ERROR, "The QNN smoke session failed with an error")
CRASHED = FindingKind("smoke-crashed", Severity.ERROR, "The QNN smoke session crashed the process")
TIMED_OUT = FindingKind("smoke-timed-out", Severity.ERROR, "The QNN smoke session hung")
CUT_SHORT = FindingKind(
    "smoke-cut-short",
    Severity.WARNING,
    "The smoke session was killed by --smoke-timeout before it could prove anything",
)
# Starting Python, importing onnxruntime and creating a first QNN session take
# seconds on a cold machine (a first HTP session prepares its graph): a time
# limit below this says nothing about a hang.
PLAUSIBLE_SESSION_S = 10.0
# Stages before the QNN backend is touched (smoke/outcome.py STAGES): a child
# killed there never reached the driver.
_BEFORE_QNN = ("start", "import", "register")
_HANGS = {
    "htp": "the NPU driver or its DSP transport is not answering",
    "gpu": "the GPU driver is not answering",
    "cpu": "QNN's CPU backend is stuck",
}
WRONG = FindingKind(
    "smoke-wrong-output", Severity.ERROR, "The QNN smoke session computed wrong values"
)
FELL_BACK = FindingKind(
    "smoke-fell-back-to-cpu", Severity.ERROR, "The smoke model did not run on QNN"
)


def _fix(facts: Facts, text: str) -> Fix:
    """A catalogue fix as the finding's fix: its `python -m pip ...` lines become
    pip runs of the target's own interpreter (the command stage types them)."""
    prose: list[str] = []
    runs: list[tuple[str, ...]] = []

    def command(words: str) -> tuple[str, ...] | None:
        try:
            return tuple(shlex.split(words)[3:])
        except ValueError:  # unbalanced quotes: keep the catalogue's words
            return None

    def inline(match: re.Match[str]) -> str:
        found = command(match[1])
        if found is None:
            return match[0]
        runs.append(found)
        return "(the command below)"

    for line in text.splitlines():
        if line.startswith("python -m pip "):
            found = command(line)
            if found is not None:
                runs.append(found)
                continue
        prose.append(line)
    joined = " ".join(prose)
    inline_commands = _INLINE_PIP.findall(joined)
    if not runs and len(inline_commands) == 1 and " install " in inline_commands[0]:
        # A fix whose one install command stands inside a sentence: a command
        # of the fix too, typed for the target's interpreter and pinned like
        # the others. (Several are steps and alternatives in prose: kept as
        # words, never run in sequence.)
        prose = [_INLINE_PIP.sub(inline, joined, count=1)]
    return Fix(" ".join(prose).strip() or "Run the commands below.", pip_runs=tuple(runs))


_INLINE_PIP = re.compile(r"`(python -m pip [^`]+)`")


def _sentence(text: object) -> str:
    """``text`` as the end of a sentence: no trailing blank line, one full stop."""
    cleaned = str(text).strip()
    return cleaned if cleaned.endswith((".", "!", "?")) else cleaned + "."


def _explained(facts: Facts, base: str, candidates: list[Mapping[str, Any]]) -> tuple[str, Fix]:
    """The finding's text and fix from the smoke session's stored diagnosis
    (made by report.build with the catalogue in use)."""
    if not candidates:
        exe = str(facts.value("interpreter", "executable") or "python")
        ticket = " ".join(
            shell.quote(part, target_is_windows(facts))
            for part in ("qnndoctor", "report", "-o", "qnndoctor-ticket.json", "--python", exe)
        )
        return base + " No known failure signature matches; the log lines are in the report.", Fix(
            "Attach a redacted ticket (the report with the session's log lines) to a bug report:",
            (ticket,),
        )
    best = candidates[0]
    text = f"{base} Most likely ({best.get('confidence')} confidence): {best.get('title')}. {best.get('cause')}"
    if len(candidates) > 1:
        text += (
            " Other candidates: " + "; ".join(str(c.get("title")) for c in candidates[1:3]) + "."
        )
    return text, _fix(facts, str(best.get("fix") or ""))


def _codes_named(codes: object) -> str:
    """The QNN error codes the session's output gave, in QNN's own words."""
    if not isinstance(codes, list):
        return ""
    named = [
        f"{c.get('code')} = {c.get('name')} ({c.get('meaning')})"
        for c in codes
        if isinstance(c, Mapping)
    ]
    return f" QNN error codes in its output: {'; '.join(named)}." if named else ""


def _cut_short(smoke: Mapping[str, Any]) -> str | None:
    """Why a timed-out session says nothing about a hang, if it does not: its
    time limit is below what a session needs, or it was killed before it
    reached QNN (``stage``; unknown in tickets of older versions)."""
    limit, stage = smoke.get("timeout_s"), smoke.get("stage")
    where = STAGES.get(str(stage)) if stage in _BEFORE_QNN else None
    if isinstance(limit, (int, float)) and limit < PLAUSIBLE_SESSION_S:
        return (
            f"a --smoke-timeout of {limit:g} s is below what a session plausibly needs "
            f"(starting Python, importing onnxruntime and creating a QNN session take seconds; "
            f"give it {PLAUSIBLE_SESSION_S:g} s or more)"
            + (f"; it was killed {where}, before it reached QNN" if where else "")
        )
    if stage in _BEFORE_QNN:
        return (
            f"it was killed {where}, before it reached QNN, so the driver was never asked: "
            "the start of the interpreter or the import of onnxruntime was slow (a cold "
            "disk, an antivirus scan of the libraries)"
        )
    return None


@rule(needs=("smoke",), emits=(PASSED, FAILED, CRASHED, TIMED_OUT, CUT_SHORT, WRONG, FELL_BACK))
def smoke_outcome(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    smoke = dict(facts.probe("smoke").values) if facts.probe("smoke") else {}  # type: ignore[union-attr]
    status = smoke.get("status")
    child = smoke.get("child") or {}
    backend = smoke.get("backend")
    evidence = [
        Evidence("smoke.status", status),
        Evidence("smoke.reason", smoke.get("reason")),
        Evidence("smoke.exit_code", smoke.get("exit_code")),
        Evidence("smoke.signal", smoke.get("signal")),
        Evidence("smoke.child.path", child.get("path")),
    ]
    if status == "passed":
        timings = child.get("timings_s") or {}
        yield make(
            PASSED,
            f"onnxruntime {child.get('onnxruntime_version')} ran the quantized test model on the "
            f"QNN {backend} backend ({child.get('path')}, QNN {child.get('qnn_version') or 'version n/a'}) "
            "with CPU fallback disabled; every node ran on QNN and the output matched "
            f"(max error {child.get('max_abs_error')}). Session creation took "
            f"{timings.get('session')} s, the first run {timings.get('first_run')} s.",
            (*evidence, Evidence("smoke.child.loaded_libraries", child.get("loaded_libraries"))),
        )
        return
    if status in (None, "not_run"):
        return
    candidates = [c for c in smoke.get("diagnosis") or [] if isinstance(c, Mapping)]
    match_evidence = Evidence("smoke.signatures", list(smoke.get("signatures") or [])[:5])
    named = _codes_named(smoke.get("qnn_error_codes"))
    if status == "failed":
        text, fix = _explained(facts, f"The session failed: {_sentence(smoke.get('reason'))}", candidates)
        yield make(FAILED, text + named, (*evidence, match_evidence), fix)
    elif status == "crashed":
        text, fix = _explained(
            facts,
            f"The Python process running the session died ({smoke.get('signal') or smoke.get('exit_code')}) "
            "without a Python exception: a crash in native code (QNN, the NPU driver, onnxruntime). "
            "Your application would die the same way.",
            candidates,
        )
        yield make(CRASHED, text + named, (*evidence, match_evidence), fix)
    elif status == "timed_out" and (why := _cut_short(smoke)) is not None:
        yield make(
            CUT_SHORT,
            f"The session was killed after {smoke.get('duration_s')} s: {why}. This is no sign "
            "of a hang, and the session proved nothing about QNN on this machine.",
            (
                *evidence,
                Evidence("smoke.timeout_s", smoke.get("timeout_s")),
                Evidence("smoke.stage", smoke.get("stage")),
            ),
            Fix(
                "Run the same check again with a larger --smoke-timeout, or without it (the "
                "default is 60 s)."
            ),
        )
    elif status == "timed_out":
        hang = _HANGS.get(str(backend), _HANGS["htp"])
        text, fix = _explained(
            facts,
            f"The session produced no result within {smoke.get('duration_s')} s and its process tree "
            f"was killed. A hang in device or context creation usually means {hang}.",
            candidates,
        )
        yield make(TIMED_OUT, text + named, (*evidence, match_evidence), fix)
    elif status == "wrong_output":
        yield make(
            WRONG,
            f"The model ran but its output {child.get('output')} differs from the expected "
            f"values by up to {child.get('max_abs_error')} (tolerance {child.get('tolerance')}). "
            "The QNN backend computes wrong results on this machine: a driver / QNN version mismatch "
            "is the usual cause.",
            tuple(evidence),
            Fix("Install the onnxruntime-qnn release whose bundled QNN matches your NPU driver."),
        )
    elif status == "fell_back_to_cpu":
        yield make(
            FELL_BACK,
            f"Nodes ran outside QNN ({child.get('nodes_not_on_qnn')}) although CPU fallback was "
            "disabled: the NPU did not do the work.",
            tuple(evidence),
            Fix("Report this with the JSON output: it should not be possible."),
        )
