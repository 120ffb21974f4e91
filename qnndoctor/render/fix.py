"""The fix result for a terminal, or as one JSON document (redacted like
every document people attach to tickets)."""

from __future__ import annotations

from typing import Any, TextIO

from .. import FIX_SCHEMA_VERSION, __version__
from .json_out import for_stream


def json_document(result: dict[str, Any], out: TextIO) -> None:
    from ..report.redact import redact_document

    document = redact_document(
        {
            "schema_version": FIX_SCHEMA_VERSION,
            "tool": {"name": "qnndoctor", "version": __version__},
            **result,
        }
    )
    out.write(for_stream(document, out) + "\n")


def text(result: dict[str, Any], out: TextIO) -> None:
    write = out.write
    write(f"qnndoctor fix: {result.get('python')}\n")
    before = result.get("before")
    if before:
        write(f"  before: smoke session {before['smoke']}")
        write(f"; findings: {', '.join(before['findings']) or 'none'}\n")
    _plan(result.get("plan") or {}, out)
    snapshot = result.get("snapshot")
    if snapshot:
        write(
            f"\nRecorded before changing anything: {len(snapshot['freeze'])} distributions, "
            f"{snapshot['files']} files of {', '.join(snapshot['touched'])}\n"
        )
    for entry in result.get("applied", []):
        write(f"  step {entry['step']}: {'ok' if entry['ok'] else 'FAILED'}\n")
    proof = result.get("proof")
    if proof:
        _proof(proof, out)
    rollback = result.get("rollback")
    if rollback:
        write(
            f"\nRollback: {'verified' if rollback['verified'] else 'NOT verified'} "
            f"(pip freeze and {rollback['files_checked']} file hashes compared)\n"
        )
        for line in rollback["freeze_differences"] + rollback["file_differences"]:
            write(f"  {line}\n")
    if result.get("outcome") == "refused":
        # The reasons stand above as REFUSED lines; the JSON message keeps them too.
        write("\nrefused: nothing was changed\n")
    else:
        write(f"\n{result.get('message')}\n")
    following = result.get("next")
    if following:
        write(f"\nnext: {following['text']}\n")
        for command in following["commands"]:
            write(f"  {command}\n")


def _plan(plan: dict[str, Any], out: TextIO) -> None:
    """The refusals, the numbered steps with their reasons, and the notes."""
    write = out.write
    for reason in plan.get("refusals", []):
        write(f"\nREFUSED: {reason}\n")
    steps = plan.get("steps", [])
    if steps:
        write(f"\nPlan ({len(steps)} step{'s' if len(steps) != 1 else ''}):\n")
        for number, (step, command) in enumerate(
            zip(steps, plan.get("commands", []), strict=False), 1
        ):
            write(f"  {number}. {command}\n     why: {step['why']}\n")
    for note in plan.get("notes", []):
        write(f"  note: {note}\n")


def _proof(proof: dict[str, Any], out: TextIO) -> None:
    """Versions, smoke session, findings and pip check before -> after."""
    write = out.write
    write("\nProof (fresh check with the smoke session):\n")
    for name in sorted(set(proof["versions_before"]) | set(proof["versions_after"])):
        old = proof["versions_before"].get(name, "-")
        new = proof["versions_after"].get(name, "-")
        write(f"  {name}: {old} -> {new}\n")
    sb, sa = proof["smoke_before"], proof["smoke_after"]
    write(f"  smoke: {_smoke(sb)} -> {_smoke(sa)}\n")
    if proof["findings_gone"]:
        write(f"  findings gone: {', '.join(proof['findings_gone'])}\n")
    if proof["findings_new"]:
        write(f"  findings new: {', '.join(proof['findings_new'])}\n")
    pip = proof.get("pip_check")
    if pip:
        verdict = "clean" if pip["clean"] else "FAILED" if pip["failing"] else "unchanged"
        write(f"  pip check: {verdict}\n")
        for line in pip["failing"] or ([] if pip["clean"] else pip["after"]):
            write(f"    {line}\n")


def _smoke(smoke: dict[str, Any]) -> str:
    stages = smoke.get("timings_s") or {}
    detail = ", ".join(f"{k} {v} s" for k, v in stages.items())
    return f"{smoke['status']} ({smoke['duration_s']} s" + (f"; {detail})" if detail else ")")
