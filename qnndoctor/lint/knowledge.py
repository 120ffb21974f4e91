"""What the QNN EP and onnxruntime read, per release: ``matrix/options.json``
(generated from the EP's source and the release's library by
``matrix/refresh/options_source.py``) as values, plus the few value types the
runs in ``docs/silent-mistakes/`` showed where the source is not at hand."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from packaging.version import InvalidVersion, Version

# Value types the extracted data cannot tell (the source reading is a parse
# in another function, or the release's source is not public); each is what
# a run showed (docs/silent-mistakes/options.md) or what the 2.0.0 source reads.
NUMERIC_PROVIDER_OPTIONS = frozenset(
    {"vtcm_mb", "soc_model", "htp_arch", "device_id", "rpc_control_latency", "num_graph_prepare_threads"}
)
FLAG_PROVIDER_OPTIONS = frozenset(
    {
        "enable_htp_fp16_precision",
        "enable_htp_spill_fill_buffer",
        "enable_vtcm_backup_buffer_sharing",
        "enable_htp_shared_memory_allocator",
        "disable_file_mapped_weights",
        "dump_json_qnn_graph",
        "dump_qnn_ir_dlc",
        "offload_graph_io_quantization",
        "skip_qnn_version_check",
        "htp_bf16_enable",
        "enable_htp_weight_sharing",
    }
)
ENUM_EXTRA = {
    # ParseBackendTypeName's kCpu/Gpu/Htp/Saver/IrBackendTypeName (2.0.0 source, line 54-58)
    "backend_type": ("cpu", "gpu", "htp", "saver", "ir"),
    "qnn_context_priority": ("low", "normal", "normal_high", "high"),
}
# onnxruntime core session-config keys whose only meanings are "0"/"1" (the
# header's comments: onnxruntime_session_options_config_keys.h).
FLAG_SESSION_KEYS = frozenset(
    {
        "session.intra_op.allow_spinning",
        "session.inter_op.allow_spinning",
        "session.disable_prepacking",
        "session.use_env_allocators",
        "session.set_denormal_as_zero",
        "session.disable_quant_qdq",
        "session.disable_cpu_ep_fallback",
        "ep.context_enable",
        "ep.share_ep_contexts",
        "ep.stop_share_ep_contexts",
        "ep.context_embed_mode",
    }
)


@dataclass(frozen=True)
class Option:
    kind: str  # provider_option | session_config | run_config
    key: str
    releases: tuple[str, ...]
    values: tuple[str, ...]
    default: str | None
    wrong_value: str | None
    read_at: str | None  # repo/path:line@commit of the first reading line, None if no source
    read_by_qnn: bool  # the QNN EP's own code (or its library) reads it
    reads: tuple[tuple[str, str], ...] = ()  # (release or revision label, cite) of every source read

    def cite_for(self, version: str) -> str | None:
        """The reading line in the source nearest to ``version``: the newest
        read release of the same major at or below it, else the newest read."""
        wanted = _release_version(version)
        best = None
        for label, cite in self.reads:
            found = _release_version(label)
            if wanted is not None and found is not None and found.major == wanted.major and found <= wanted:
                best = cite
        if best is None and self.reads:
            best = self.reads[-1][1]
        return best

    @property
    def numeric(self) -> bool:
        return self.kind == "provider_option" and self.key in NUMERIC_PROVIDER_OPTIONS

    @property
    def flag(self) -> bool:
        if self.kind == "provider_option":
            return self.key in FLAG_PROVIDER_OPTIONS
        return self.key in FLAG_SESSION_KEYS

    @property
    def enum(self) -> tuple[str, ...]:
        if self.numeric or self.flag:
            return ()
        if self.key in ENUM_EXTRA:
            return ENUM_EXTRA[self.key]
        return self.values if len(self.values) >= 3 else ()


def _text(cite: dict[str, Any]) -> str:
    return f"{cite['repo']}/{cite['path']}:{cite['line']}@{cite['commit'][:10]} ({cite['release']})"


def _cite(row: dict[str, Any]) -> str | None:
    for group in ("read_by_qnn_ep", "defined"):
        for cite in row.get(group) or []:
            return _text(cite)
    return None


def _release_version(label: str) -> Version | None:
    try:
        return Version(label)
    except InvalidVersion:
        return None


@dataclass(frozen=True)
class Knowledge:
    options: dict[tuple[str, str], Option]
    releases: tuple[str, ...]  # labels with data, oldest first (release labels only)
    # the key sets asked for so far (every linted file asks for the same few)
    _sets: dict[tuple[str, str | None, bool], frozenset[str]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def get(self, kind: str, key: str) -> Option | None:
        return self.options.get((kind, key))

    def newest(self) -> str:
        return self.releases[-1]

    def data_release(self, version: str | None) -> str:
        """The release whose data stands for ``version``: itself, else the
        newest one of the same major at or below it, else the nearest."""
        if not version:
            return self.newest()
        wanted = _release_version(version)
        if wanted is None:
            return self.newest()
        same = [r for r in self.releases if (v := _release_version(r)) and v.major == wanted.major]
        below = [r for r in same if (v := _release_version(r)) and v <= wanted]
        if below:
            return below[-1]
        if same:
            return same[0]
        return self.newest()

    def keys(self, kind: str, release: str | None = None) -> frozenset[str]:
        found = self._sets.get((kind, release, False))
        if found is None:
            found = self._sets[(kind, release, False)] = frozenset(
                key
                for (k, key), option in self.options.items()
                if k == kind and (release is None or release in option.releases)
            )
        return found

    def qnn_read(self, kind: str) -> frozenset[str]:
        found = self._sets.get((kind, None, True))
        if found is None:
            found = self._sets[(kind, None, True)] = frozenset(
                key for (k, key), o in self.options.items() if k == kind and o.read_by_qnn
            )
        return found


@functools.lru_cache(maxsize=1)
def load() -> Knowledge:
    text = resources.files("qnndoctor.matrix").joinpath("options.json").read_text("utf-8")
    data = json.loads(text)
    options: dict[tuple[str, str], Option] = {}
    labels: set[str] = set()
    for row in data["options"]:
        releases = tuple(r for r in row["releases"] if _release_version(r) is not None)
        labels.update(releases)
        options[(row["kind"], row["key"])] = Option(
            kind=row["kind"],
            key=row["key"],
            releases=releases,
            values=tuple(row["values"]),
            default=row["default"],
            wrong_value=row["wrong_value"],
            read_at=_cite(row),
            read_by_qnn=bool(row["read_by_qnn_ep"] or row["in_library_strings"]),
            reads=tuple((c["release"], _text(c)) for c in row["read_by_qnn_ep"]),
        )
    ordered = tuple(sorted(labels, key=lambda r: Version(r)))
    return Knowledge(options=options, releases=ordered)


_DIGITS = re.compile(r"[0-9]+")


def is_digits(value: str) -> bool:
    return bool(_DIGITS.fullmatch(value))
