"""How a smoke session ended, as a value: ``SmokeResult``, the classification
of the child's end (``classify``) and the diagnosis of a failed one.

Apart from the launch (``qnndoctor.smoke``), so that starting the child --
the longest part of ``check`` -- does not wait for these imports.
"""

from __future__ import annotations

import json
import re
import signal as _signal
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import result_shape

if TYPE_CHECKING:
    from ..children.runner import Completed
    from ..diagnosis import Diagnosis  # the diagnosis engine loads only for a failed session
    from ..facts.probed import Facts
    from ..matrixdata import Soc

MARKER = "@@qnndoctor-smoke@@"
STAGE_MARKER = "@@qnndoctor-stage@@"  # child.py: one line as each stage begins
# How far a child without a result got, in words ("start": no stage line yet).
STAGES = {
    "start": "before the session script started",
    "import": "while importing onnxruntime",
    "register": "while adding the QNN execution provider",
    "session": "while creating the session (QNN device and context)",
    "run": "while running the model",
}

STATUSES = (
    "passed",
    "wrong_output",
    "fell_back_to_cpu",
    "failed",
    "crashed",
    "timed_out",
    "not_run",
)

# Windows NTSTATUS codes a crashing process exits with (as unsigned 32-bit).
NTSTATUS = {
    0xC0000005: "STATUS_ACCESS_VIOLATION",
    0xC000001D: "STATUS_ILLEGAL_INSTRUCTION",
    0xC0000096: "STATUS_PRIVILEGED_INSTRUCTION",
    0xC00000FD: "STATUS_STACK_OVERFLOW",
    0xC0000135: "STATUS_DLL_NOT_FOUND",
    0xC0000139: "STATUS_ENTRYPOINT_NOT_FOUND",
    0xC0000142: "STATUS_DLL_INIT_FAILED",
    0xC000026F: "STATUS_DLL_INIT_FAILED_LOGOFF",
    0xC0000374: "STATUS_HEAP_CORRUPTION",
    0xC0000409: "STATUS_STACK_BUFFER_OVERRUN",
    0xC0000417: "STATUS_INVALID_CRUNTIME_PARAMETER",
    0xC000041D: "STATUS_FATAL_USER_CALLBACK_EXCEPTION",
    0x80000003: "STATUS_BREAKPOINT",
}

_STDERR_TAIL = 6000
_LOG_KEYWORDS = ("qnn", "htp", "onnxruntime", "error", "fail", "skel", "stub", "fastrpc")


def exit_code_name(code: int | None) -> str | None:
    """A crash's exit code by name: POSIX signal, NTSTATUS or well-known code."""
    if code is None:
        return None
    if code & 0xFFFFFFFF in NTSTATUS:  # Windows reports these unsigned, some tools signed
        return NTSTATUS[code & 0xFFFFFFFF]
    if code < 0:
        try:
            return _signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    if code == 127:
        return "exit 127 (loader could not run the program; under emulation: native library crash)"
    if code >= 128 + 1 and code <= 128 + 64:
        try:
            return f"{_signal.Signals(code - 128).name} (via shell)"
        except ValueError:
            return None
    return None


@dataclass(frozen=True)
class SmokeResult:
    """What the smoke session did; ``to_json`` is the report's ``smoke``."""

    status: str
    reason: str | None = None
    backend: str = "htp"
    exit_code: int | None = None
    exit_name: str | None = None
    duration_s: float | None = None
    stderr_tail: str | None = None
    log_lines: tuple[str, ...] = ()
    child: Mapping[str, Any] | None = None
    killed_pids: tuple[int, ...] = ()
    timeout_s: float | None = None  # the time limit the session really ran with
    escaped_pids: tuple[int, ...] = ()  # left the tree (daemons); swept after the end
    stage: str | None = None  # the child's last stage (STAGES); None when not known

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "reason": self.reason,
            "backend": self.backend,
            "exit_code": self.exit_code,
            "signal": self.exit_name,
            "duration_s": self.duration_s,
            "stderr_tail": self.stderr_tail,
            "log_lines": list(self.log_lines),
            "child": dict(self.child) if self.child is not None else None,
            "killed_pids": list(self.killed_pids),
            "timeout_s": self.timeout_s,
            "escaped_pids": list(self.escaped_pids),
            "stage": self.stage,
            # Catalogue ids, best first: derived by the report builder with the
            # catalogue in use, so a re-diagnosed ticket gets current ones.
            "signatures": [],
        }


def not_run(reason: str, backend: str = "htp") -> SmokeResult:
    return SmokeResult("not_run", reason=reason, backend=backend)


def reason_not_to_run(facts: Facts) -> str | None:
    """Why running the smoke session would prove nothing new, if so."""
    if not facts.ok("installs"):
        return None  # cannot tell: try it, the child will say
    dists = facts.value("installs", "distributions", []) or []
    has_qnn = any(
        d.get("canonical_name") in ("onnxruntime-qnn", "ort-nightly-qnn")
        or "onnxruntime_qnn" in d.get("provides_modules", [])
        for d in dists
    )
    if not has_qnn:
        return "onnxruntime-qnn is not installed"
    return None


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_ORT_SEVERITY = re.compile(r"\[([VIWEF]):onnxruntime")


def _log_lines(stderr: str) -> tuple[str, ...]:
    """The lines worth reading: onnxruntime warnings and errors, and QNN's
    own messages; not the verbose/info chatter of a successful session."""
    keep = []
    for raw in stderr.splitlines():
        line = _ANSI.sub("", raw).strip()
        tag = _ORT_SEVERITY.search(line)
        if tag:
            if tag.group(1) in "WEF":
                keep.append(line)
        elif any(k in line.lower() for k in _LOG_KEYWORDS):
            keep.append(line)
    return tuple(keep[-80:])


def first_error(lines: tuple[str, ...]) -> str | None:
    for line in lines:
        tag = _ORT_SEVERITY.search(line)
        if (tag and tag.group(1) in "EF") or (
            not tag and ("<E>" in line or "error" in line.lower())
        ):
            return line
    return None


def _last_stage(stdout: str) -> str:
    """The last stage the child began (its ``STAGE_MARKER`` lines), "start" if none."""
    stages = [
        line[len(STAGE_MARKER) :].strip()
        for line in stdout.splitlines()
        if line.startswith(STAGE_MARKER)
    ]
    return stages[-1] if stages and stages[-1] in STAGES else "start"


def classify(completed: Completed, backend: str, timeout: float | None = None) -> SmokeResult:
    """Every way the child can end, as one of ``STATUSES``."""
    stderr = completed.stderr_text()
    stdout = completed.stdout_text()
    common: dict[str, Any] = {
        "backend": backend,
        "exit_code": completed.exit_code,
        "exit_name": exit_code_name(completed.exit_code),
        "duration_s": round(completed.duration_s, 3),
        "stderr_tail": stderr[-_STDERR_TAIL:] or None,
        "log_lines": _log_lines(stderr),
        "killed_pids": completed.killed_pids,
        "timeout_s": timeout,
        "escaped_pids": completed.escaped_pids,
        # the kept tail of a flood of output may have lost the stage lines: unknown then
        "stage": None if completed.stdout_truncated else _last_stage(stdout),
    }
    if completed.start_error:
        return SmokeResult(
            "not_run", reason=f"cannot start the interpreter: {completed.start_error}", **common
        )
    if completed.timed_out:
        return SmokeResult(
            "timed_out",
            reason=f"no result within the {timeout or completed.duration_s:g} s smoke timeout; "
            "the process tree was killed"
            + (f" {STAGES[common['stage']]}" if common["stage"] in STAGES else ""),
            **common,
        )
    child, raw_line = _child_result(stdout)
    if child is None:
        how = common["exit_name"] or f"exit code {completed.exit_code}"
        logged = first_error(common["log_lines"])
        crash = f"the process ended without a result ({how})"
        if logged:
            crash += f"; first error logged: {logged}"
        return SmokeResult("crashed", reason=crash, **common)
    wrong = result_shape.problems(child)
    if not wrong and child["status"] not in STATUSES:
        wrong = [f"unknown status {child['status']!r}"]
    if wrong:
        return SmokeResult(
            "failed",
            reason="the smoke child's result has an unexpected shape ("
            + "; ".join(wrong[:5])
            + "); its raw text is kept",
            child={"unexpected_result": raw_line[: result_shape.RAW_KEPT]},
            **common,
        )
    status = str(child["status"])
    if isinstance(child.get("stage"), str):
        common["stage"] = child["stage"]  # its own word, "done" included
    reason = _child_reason(status, child, common["log_lines"])
    if completed.exit_code not in (0, None) and status != "failed":
        reason = (reason + "; " if reason else "") + (
            f"then the process exited abnormally ({common['exit_name'] or completed.exit_code})"
        )
    return SmokeResult(status, reason=reason, child=child, **common)


def _child_result(stdout: str) -> tuple[dict[str, Any] | None, str]:
    """The child's last result object (its ``MARKER`` lines) and its raw text."""
    child: dict[str, Any] | None = None
    raw_line = ""
    for line in stdout.splitlines():
        if line.startswith(MARKER):
            try:
                loaded = json.loads(line[len(MARKER) :])
            except (ValueError, RecursionError):
                continue
            if isinstance(loaded, dict):
                child, raw_line = loaded, line[len(MARKER) :]
    return child, raw_line


def _child_reason(status: str, child: dict[str, Any], log_lines: tuple[str, ...]) -> str | None:
    """Why a session the child reported on did not pass (None when it did)."""
    if status == "failed":
        exc = child.get("exception") or {}
        reason = f"{exc.get('type')} at stage {child.get('stage')}: {exc.get('message')}"
        logged = first_error(log_lines)
        if logged and str(exc.get("message")) not in logged:
            reason += f" (first error logged: {logged})"
        return reason
    if status == "wrong_output":
        return f"max abs error {child.get('max_abs_error')} > tolerance {child.get('tolerance')}"
    if status == "fell_back_to_cpu":
        return f"nodes not on QNN: {child.get('nodes_not_on_qnn')}"
    return None


def failure_text(smoke: Mapping[str, Any]) -> tuple[str, str | None]:
    """The text of a failed session and its exception type: what the diagnosis
    engine reads. In the order a console shows it (the logged errors, the
    stderr tail, then the traceback and the exception), so a cause logged
    before the error it leads to reads as the earlier one."""
    child = smoke.get("child") or {}
    exc = child.get("exception") or {}
    if not isinstance(exc, Mapping):
        exc = {"message": str(exc)}
    text = "\n".join(
        str(part)
        for part in (
            "\n".join(str(line) for line in smoke.get("log_lines") or []),
            smoke.get("stderr_tail"),
            exc.get("traceback"),
            exc.get("message"),
        )
        if part
    )
    kind = exc.get("type")
    return text, str(kind) if kind else None


def diagnose_failure(
    smoke: Mapping[str, Any], facts: Facts, socs: tuple[Soc, ...] = ()
) -> Diagnosis | None:
    """The diagnosis engine's answer for a failed session, ranked with the
    target's own facts (the session ran there); None when the catalogue is unusable."""
    from ..diagnosis import CatalogueError, diagnose, from_report_facts

    text, exception_type = failure_text(smoke)
    code = smoke.get("exit_code")
    try:
        return diagnose(
            text,
            exit_code=code if isinstance(code, int) else None,
            exception_type=exception_type,
            facts=from_report_facts(facts, "probes of the target", socs),
            socs=socs,
            # A finding states a cause only when a catalogued message matched:
            # no resemblance guesses about the session's own output.
            resemblance=False,
        )
    except CatalogueError:
        return None
