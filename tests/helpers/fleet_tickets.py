"""A fleet of tickets generated from real ones (``report -o`` of real venvs):
the facts a fleet varies are edited the way tests/diagnosis/test_rediagnosis_grid.py
edits them (platform, SoC, Python, emulation, NPU driver, OS build), and the
per-run parts (created, smoke time) vary per ticket. Used by
tests/fleet/test_fleet.py and bench/bench_fleet.py."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

# name: (sys_platform, process arch, native arch, emulated, SoC facts)
PLATFORMS: dict[str, tuple[str, str, str, bool, dict[str, Any]]] = {
    "linux-x86_64": ("linux", "x86_64", "x86_64", False, {}),
    "win-arm64-x-elite": (
        "win32",
        "arm64",
        "arm64",
        False,
        {"processor_name": "Snapdragon(R) X Elite - X1E78100 - Qualcomm(R) Oryon(TM) CPU"},
    ),
    "win-arm64-x-plus": (
        "win32",
        "arm64",
        "arm64",
        False,
        {"processor_name": "Snapdragon(R) X 10-core X1P64100 @ 3.40 GHz"},
    ),
    "win-x64-emulated-x-elite": (
        "win32",
        "x86_64",
        "arm64",
        True,
        {"processor_name": "Snapdragon(R) X Elite - X1E78100 - Qualcomm(R) Oryon(TM) CPU"},
    ),
    "linux-aarch64-8gen3": ("linux", "arm64", "arm64", False, {"socinfo": {"soc_id": "557"}}),
}
# A failed session's re-diagnosis reads its whole log (the expensive kind):
# the broken ticket is varied onto fewer platforms.
BROKEN_ON = ("linux-x86_64", "win-arm64-x-elite", "win-x64-emulated-x-elite")
DRIVERS = ("30.0.140.1000", "30.0.143.1000", "30.0.145.0")
WINDOWS_BUILDS = ("10.0.26100", "10.0.22631")


def edited(
    saved: dict[str, Any],
    platform: str,
    python: str,
    driver: str | None,
    build: str | None,
) -> dict[str, Any]:
    """``saved`` as if made on another machine (its smoke result unchanged)."""
    sys_platform, arch, native, emulated, soc = PLATFORMS[platform]
    doc = copy.deepcopy(saved)
    facts = doc["facts"]
    interp = facts["interpreter"]["values"]
    major, minor = (int(p) for p in python.split("."))
    interp["version_info"] = [major, minor, 0, "final", 0]
    interp["sys_platform"] = sys_platform
    interp["build_arch"] = arch
    markers = interp.setdefault("marker_environment", {})
    markers["python_version"] = python
    if sys_platform == "win32":
        interp["libc"] = None
        markers.update(platform_system="Windows", platform_version=build, platform_release="11")
    facts["emulation"]["values"].update(process_arch=arch, native_arch=native, emulated=emulated)
    values: dict[str, Any] = dict(soc)
    if driver is not None:
        values["npu_drivers"] = [
            {
                "DriverDesc": "Qualcomm(R) Hexagon(TM) NPU",
                "DriverVersion": driver,
                "class_guid": "{f01a9d53-3ff6-48d2-9f97-c8a7004be10c}",
                "instance": "0000",
            }
        ]
    for bundle in facts["qnn_bundled"]["values"].get("bundles") or []:
        for folder in bundle.get("folders") or []:
            for lib in folder.get("libraries") or []:  # the wheel pip takes there
                if sys_platform == "win32":
                    lib.update(format="PE", machine="ARM64" if arch == "arm64" else "AMD64")
                elif arch == "arm64":
                    lib.update(format="ELF", machine="aarch64", arch="arm64")
    if platform != "linux-x86_64":
        facts["soc"] = {"status": "ok", "values": values, "sources": {}}
    return doc


def setups(real: dict[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Distinct machines' setups: every platform x Python x NPU driver x OS
    build for the healthy ticket, fewer for the others (a failed session's
    re-diagnosis reads its whole log: the expensive kind)."""
    out = []
    for name, saved in sorted(real.items()):
        broad = name == "healthy"
        for platform in PLATFORMS if broad else BROKEN_ON:
            windows = platform.startswith("win")
            for python in ("3.11", "3.12", "3.13") if broad else ("3.12",):
                for driver in (DRIVERS if broad else DRIVERS[:1]) if windows else (None,):
                    for build in (
                        (WINDOWS_BUILDS if broad else WINDOWS_BUILDS[:1]) if windows else (None,)
                    ):
                        label = f"{name}-{platform}-py{python}-{driver}-{build}"
                        out.append((label, edited(saved, platform, python, driver, build)))
    return out


def tickets(
    real: dict[str, dict[str, Any]], count: int, seed: int = 31, indent: int | None = None
) -> Iterator[tuple[str, bytes]]:
    """``count`` tickets (file name, JSON bytes): each a setup with its own
    creation date and smoke time. Setups are serialised once; only the
    per-ticket fields are replaced in the text. One line each (JSON-lines
    ready) unless ``indent`` (2: as ``report -o`` writes them)."""
    rng = random.Random(seed)
    made = []
    for label, doc in setups(real):
        doc["created"] = _CREATED
        if isinstance(doc.get("smoke"), dict):
            doc["smoke"]["duration_s"] = _SECONDS
        made.append((label, json.dumps(doc, indent=indent)))
    weights = [20 if label.startswith("healthy") else 3 for label, _ in made]
    for number in range(count):
        label, text = rng.choices(made, weights)[0]
        created = f"2026-{rng.randint(9, 11):02d}-{rng.randint(1, 28):02d}T10:00:00+00:00"
        seconds = f"{rng.uniform(0.8, 4.0):.3f}"
        text = text.replace(_CREATED, created, 1).replace(str(_SECONDS), seconds, 1)
        yield f"{label}-{number:06d}.json", text.encode()


_CREATED = "@@created@@"
_SECONDS = -12345.678
