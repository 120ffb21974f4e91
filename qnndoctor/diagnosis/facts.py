"""Normalized facts for diagnosis, each with where it came from.

A pasted log comes from another machine: the facts that rank its candidates
must come from the log itself, a saved ticket of that machine, or (only when
asked) a probe of this one. All three are reduced to one small vocabulary
(``KEYS``) so that catalogue conditions read the same whatever the source.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..facts.probed import Facts
from ..facts.socs import identify as identify_soc
from ..matrixdata import Matrix, Soc

KEYS: Mapping[str, str] = MappingProxyType(
    {
        "os": "windows | linux | android | macos",
        "wsl": "running under WSL",
        "python.version": "interpreter version, e.g. 3.12.4",
        "python.arch": "interpreter build: arm64 | x86_64 | x86",
        "machine.arch": "native CPU: arm64 | x86_64",
        "emulated": "an x86_64 Python on an arm64 machine",
        "onnxruntime_qnn.version": "the onnxruntime-qnn distribution (< 2: 1.x monolithic, >= 2: plugin)",
        "onnxruntime.version": "the plain onnxruntime distribution / loaded module",
        "flavours": "installed distributions that provide the onnxruntime module",
        "numpy.version": "NumPy",
        "qnn.version": "QNN / QAIRT version in use (bundled or named in the log)",
        "qnn_sdk.version": "a system QNN SDK / QAIRT installation",
        "soc": "SoC name",
        "htp_arch": "Hexagon HTP architecture, e.g. v73",
        "non_ascii_path": "a relevant path has non-ASCII characters",
        "leftover_dirs": "~nnxruntime-style folders of a half-finished uninstall",
        "adsp_library_path": "ADSP_LIBRARY_PATH value",
        "qnn_on_loader_path": "QNN libraries from outside onnxruntime-qnn on PATH / LD_LIBRARY_PATH",
        "qnn_library_damaged": "a bundled QNN library is truncated or unreadable",
        "qnn_ep_logged": "the QNN EP logged its own lines: it was loaded (registered, for 2.x)",
        "backend": "QNN backend: htp | gpu | cpu",
        "epcontext": "the model is a pre-compiled EPContext model",
        "model.precision": "qdq | float32 | float16",
    }
)


@dataclass(frozen=True)
class Fact:
    key: str
    value: Any
    source: str  # "log line 12: 'onnxruntime-qnn 1.19.0'", "saved report", "probe of ..."

    def to_json(self) -> dict[str, Any]:
        value = sorted(self.value) if isinstance(self.value, frozenset) else self.value
        return {"key": self.key, "value": value, "source": self.source}


@dataclass(frozen=True)
class DiagnosisFacts:
    """An immutable set of facts, at most one per key."""

    facts: Mapping[str, Fact] = field(default_factory=dict)
    conflicts: tuple[str, ...] = ()

    def value(self, key: str) -> Any:
        fact = self.facts.get(key)
        return None if fact is None else fact.value

    def __iter__(self) -> Iterator[Fact]:
        return iter(self.facts.values())

    def __len__(self) -> int:
        return len(self.facts)

    def to_json(self) -> dict[str, Any]:
        return {
            "used": [f.to_json() for f in self.facts.values()],
            "conflicts": list(self.conflicts),
        }


def from_items(items: Iterable[Fact]) -> DiagnosisFacts:
    """First fact per key wins; the emulation fact is derived when both arches are known."""
    facts: dict[str, Fact] = {}
    for item in items:
        if item.key not in KEYS:
            raise KeyError(f"unknown diagnosis fact {item.key!r}")
        if item.value is not None and item.key not in facts:
            facts[item.key] = item
    return DiagnosisFacts(MappingProxyType(_derive(facts)))


def _derive(facts: dict[str, Fact]) -> dict[str, Fact]:
    python_arch, machine_arch = facts.get("python.arch"), facts.get("machine.arch")
    if "emulated" not in facts and python_arch and machine_arch:
        facts["emulated"] = Fact(
            "emulated",
            python_arch.value in ("x86_64", "x86") and machine_arch.value == "arm64",
            f"derived from python.arch ({python_arch.source}) and machine.arch ({machine_arch.source})",
        )
    return facts


def merge(primary: DiagnosisFacts, secondary: DiagnosisFacts) -> DiagnosisFacts:
    """Primary facts win; a secondary value that disagrees is kept as a conflict note."""
    merged = dict(primary.facts)
    conflicts = list(primary.conflicts) + list(secondary.conflicts)
    for key, fact in secondary.facts.items():
        mine = merged.get(key)
        if mine is None:
            merged[key] = fact
        elif mine.value != fact.value and key != "emulated":
            conflicts.append(
                f"{key}: {mine.value!r} ({mine.source}) used; {fact.value!r} ({fact.source}) ignored"
            )
    return DiagnosisFacts(MappingProxyType(_derive(merged)), tuple(conflicts))


_OS = {
    "win32": "windows",
    "cygwin": "windows",
    "linux": "linux",
    "android": "android",
    "darwin": "macos",
}


def _dist_version(facts: Facts, name: str) -> str | None:
    for dist in facts.value("installs", "distributions") or ():
        if isinstance(dist, Mapping) and dist.get("canonical_name") == name and dist.get("version"):
            return str(dist["version"])
    return None


def _bundled_qnn(facts: Facts) -> str | None:
    for bundle in facts.value("qnn_bundled", "bundles") or ():
        if isinstance(bundle, Mapping) and bundle.get("qnn_version"):
            return str(bundle["qnn_version"])
    return None


def _sdk_version(facts: Facts) -> str | None:
    for root in facts.value("qnn_sdk", "roots") or ():
        if isinstance(root, Mapping) and root.get("version"):
            return str(root["version"])
    return None


def _qnn_on_loader_path(facts: Facts) -> bool | None:
    """Whether a folder on the loader's search path holds QNN libraries (the
    probe lists only folders outside onnxruntime-qnn's own)."""
    if not facts.ok("qnn_sdk"):
        return None
    return any(
        isinstance(entry, Mapping) and entry.get("qnn_libraries")
        for variable in ("path", "ld_library_path")
        for entry in facts.value("qnn_sdk", f"qnn_on_{variable}") or ()
    )


def from_report_facts(facts: Facts, source: str, socs: tuple[Soc, ...] = ()) -> DiagnosisFacts:
    """The vocabulary from probe facts (live, or a saved ticket's); ``socs`` is
    the SoC table that names the chip and its HTP arch."""
    marker = facts.value("interpreter", "marker_environment") or {}
    sys_platform = marker.get("sys_platform") if isinstance(marker, Mapping) else None
    flavours = frozenset(
        str(d.get("canonical_name"))
        for d in facts.value("installs", "distributions") or ()
        if isinstance(d, Mapping)
        and "onnxruntime" in (d.get("provides_modules") or ())
        and d.get("canonical_name")
    )
    adsp = facts.value("qnn_sdk", "adsp_library_path") or {}
    soc = _soc_from_facts(facts, socs)
    items = [
        Fact("os", _OS.get(str(sys_platform)), source),
        Fact(
            "python.version",
            marker.get("python_full_version") if isinstance(marker, Mapping) else None,
            source,
        ),
        Fact("python.arch", facts.value("interpreter", "build_arch"), source),
        Fact("machine.arch", facts.value("emulation", "native_arch"), source),
        Fact("emulated", facts.value("emulation", "emulated"), source),
        Fact("onnxruntime_qnn.version", _dist_version(facts, "onnxruntime-qnn"), source),
        Fact("onnxruntime.version", _dist_version(facts, "onnxruntime"), source),
        Fact("flavours", flavours if facts.ok("installs") else None, source),
        Fact("numpy.version", _dist_version(facts, "numpy"), source),
        Fact("qnn.version", _bundled_qnn(facts), source),
        Fact("qnn_sdk.version", _sdk_version(facts), source),
        Fact("soc", soc[0], source),
        Fact("htp_arch", soc[1], source),
        Fact(
            "non_ascii_path",
            bool(facts.value("paths", "non_ascii")) if facts.ok("paths") else None,
            source,
        ),
        Fact(
            "leftover_dirs",
            bool(facts.value("installs", "leftovers")) if facts.ok("installs") else None,
            source,
        ),
        Fact(
            "adsp_library_path",
            adsp.get("value") if isinstance(adsp, Mapping) and adsp.get("set") else None,
            source,
        ),
        Fact("qnn_library_damaged", facts.value("qnn_bundled", "any_library_damaged"), source),
        Fact("qnn_on_loader_path", _qnn_on_loader_path(facts), source),
    ]
    smoke = facts.probe("smoke")
    if smoke is not None and smoke.get("backend"):
        items.append(Fact("backend", smoke.get("backend"), source))
    return from_items(items)


def _soc_from_facts(facts: Facts, socs: tuple[Soc, ...]) -> tuple[str | None, str | None]:
    """SoC name and HTP arch through the SoC table, when the probe identified one."""
    match = identify_soc(facts, Matrix(socs=socs, source="SoC table")) if socs else None
    if match is None:
        return None, None
    return soc_name(match.soc), (f"v{match.soc.htp_arch}" if match.soc.htp_arch else None)


def soc_name(soc: Soc) -> str:
    return soc.marketing_names[0] if soc.marketing_names else soc.part
