"""The proof: a fresh check with the smoke session in the changed target,
and what changed between the report before and the report after."""

from __future__ import annotations

from typing import Any

from .plan import report_is_healthy


def _versions(report: dict[str, Any]) -> dict[str, str]:
    installs = (report.get("facts", {}).get("installs") or {}).get("values") or {}
    return {
        str(d.get("name")): str(d.get("version"))
        for d in installs.get("distributions", [])
        if d.get("provides_modules")
    }


def _smoke(report: dict[str, Any]) -> dict[str, Any]:
    smoke = report.get("smoke") or {}
    child = smoke.get("child") or {}
    return {
        "status": smoke.get("status"),
        "reason": smoke.get("reason"),
        "duration_s": smoke.get("duration_s"),
        "timings_s": child.get("timings_s"),
        "signatures": list(smoke.get("signatures") or [])[:3],
    }


def _findings(report: dict[str, Any]) -> set[str]:
    return {
        f"{f.get('id')} ({f.get('severity')})"
        for f in report.get("findings", [])
        if f.get("severity") in ("error", "warning")
    }


def compare_reports(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Before -> after: versions, findings gone and new, smoke sessions."""
    old, new = _findings(before), _findings(after)
    return {
        "proven": report_is_healthy(after),
        "versions_before": _versions(before),
        "versions_after": _versions(after),
        "findings_gone": sorted(old - new),
        "findings_new": sorted(new - old),
        "findings_remaining": sorted(old & new),
        "smoke_before": _smoke(before),
        "smoke_after": _smoke(after),
    }


def failure_text(after: dict[str, Any]) -> str:
    """Why the proof failed, in one line."""
    smoke = after.get("smoke") or {}
    errors = [f["id"] for f in after.get("findings", []) if f.get("severity") == "error"]
    parts = [f"smoke session {smoke.get('status')}"]
    if smoke.get("reason"):
        parts.append(str(smoke["reason"]).splitlines()[0][:300])
    if errors:
        parts.append("error findings: " + ", ".join(errors))
    return "; ".join(parts)
