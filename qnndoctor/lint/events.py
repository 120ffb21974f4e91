"""What a source says about the QNN EP, as values the rules judge: the Python
reader, the genai_config.json reader and ``check_options`` all produce these."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Loc:
    line: int
    col: int  # 1-based, like ruff


NOWHERE = Loc(0, 0)


@dataclass(frozen=True)
class ProviderOptions:
    """A QNN provider-options dict (its known entries; ``partial`` when some
    keys could not be read)."""

    options: dict[str, Any]
    loc: Loc
    via: str  # providers= | add_provider_for_devices | set_providers | genai_config | ...
    key_locs: dict[str, Loc] = field(default_factory=dict)
    partial: bool = False


@dataclass(frozen=True)
class ConfigEntry:
    kind: str  # session | run
    key: str
    value: Any
    loc: Loc
    owner: int  # id of the SessionOptions/RunOptions it was set on (0: unknown)


@dataclass(frozen=True)
class AttrSet:
    kind: str  # session | run
    name: str
    value: Any
    loc: Loc
    owner: int


@dataclass(frozen=True)
class ProvidersByName:
    """``providers=['QNNExecutionProvider', ...]`` or ``set_providers([...])``."""

    loc: Loc
    via: str


@dataclass(frozen=True)
class Registration:
    name: Any  # the registration name (UNKNOWN if not literal)
    library: Any
    loc: Loc


@dataclass(frozen=True)
class EpNameFilter:
    name: str
    loc: Loc


@dataclass(frozen=True)
class Compile:
    loc: Loc
    method: str  # compile_to_file | compile_to_bytes | compile_to_stream | ModelCompiler
    has_ep: bool | None  # the SessionOptions given had an EP added (None: unknown)
    session_entries: tuple[str, ...]
    input_model: Any
    output: Any
    embed: Any
    flags: Any


@dataclass(frozen=True)
class CallSeen:
    """Any other call a rule looks at: its name, resolved keywords/args."""

    name: str
    loc: Loc
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    owner: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


Event = ProviderOptions | ConfigEntry | AttrSet | ProvidersByName | Registration | EpNameFilter | Compile | CallSeen


@dataclass(frozen=True)
class FileFacts:
    """What the whole file says (read once): does it use the QNN EP, the
    2.x plugin, profiling, the compile API."""

    mentions_qnn: bool
    uses_plugin: bool
    enables_profiling: bool
    uses_qnn_config: bool = False
    base_dir: str | None = None
