"""Helpers the rules share: reading facts and stating fixes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import shell
from ..facts.probed import Facts
from .findings import Fix

QNN_DIST_NAMES = ("onnxruntime-qnn", "ort-nightly-qnn")


def target_is_windows(facts: Facts) -> bool:
    return bool(facts.value("interpreter", "sys_platform") == "win32")


def quote(facts: Facts, text: str) -> str:
    """Quote an argument for the target's usual shell (cmd/PowerShell or sh)."""
    return shell.quote(text, target_is_windows(facts))


def distributions(facts: Facts) -> list[dict[str, Any]]:
    dists = facts.value("installs", "distributions", []) or []
    return [d for d in dists if isinstance(d, dict)]


def label(dist: Mapping[str, Any]) -> str:
    return f"{dist.get('name')} {dist.get('version')}"


def qnn_dists(facts: Facts) -> list[dict[str, Any]]:
    return [
        d
        for d in distributions(facts)
        if d.get("canonical_name") in QNN_DIST_NAMES
        or "onnxruntime_qnn" in d.get("provides_modules", [])
    ]


def owners_of(facts: Facts, module: str) -> list[dict[str, Any]]:
    return [d for d in distributions(facts) if module in d.get("provides_modules", [])]


def process_arch(facts: Facts) -> str | None:
    arch = facts.value("emulation", "process_arch") or facts.value("interpreter", "build_arch")
    return str(arch) if arch else None


def native_arch(facts: Facts) -> str | None:
    arch = facts.value("emulation", "native_arch")
    return str(arch) if arch else None


def reinstall_fix(facts: Facts, dist: Mapping[str, Any], text: str | None = None) -> Fix:
    """Force-reinstall exactly the installed version, with the target's pip."""
    pinned = f"{dist.get('name')}=={dist.get('version')}"
    return Fix(
        text or f"Reinstall {dist.get('name')}.",
        pip_runs=(("install", "--force-reinstall", "--no-deps", pinned),),
    )
