"""The lint rules at run time (``qnndoctor.check_options``): the options an
application is about to give, judged for the onnxruntime-qnn it has and for
the chip it runs on (htp_arch / soc_model against the SoC, FP16 precision on
an HTP older than v73)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .checks import Finding, Target, judge
from .events import NOWHERE, ConfigEntry, Event, FileFacts, ProviderOptions
from .knowledge import is_digits, load
from .values import as_option_text

FP16_MIN_ARCH = 73


@dataclass(frozen=True)
class Machine:
    """The chip the options will meet: SoC part, HTP arch, QNN soc id."""

    soc: str | None
    htp_arch: int | None
    soc_model: int | None
    source: str


def machine_of_soc(name: str) -> Machine | None:
    """A SoC named by part, alias or marketing name (``SM8650``, ``Snapdragon 8 Gen 3``)."""
    from ..matrixdata import load_or_empty

    wanted = "".join(name.split()).upper()
    for soc in load_or_empty().socs:
        names = {soc.part, *soc.aliases, *soc.marketing_names}
        if wanted in {"".join(n.split()).upper() for n in names}:
            return Machine(soc.part, soc.htp_arch, soc.qnn_soc_model, f"named: {name}")
    return None


def machine_from_facts(facts: Any) -> Machine | None:
    """The chip check's probes identified (None when none was)."""
    from ..facts.socs import identify
    from ..matrixdata import load_or_empty

    match = identify(facts, load_or_empty())  # the one identifier (Android, device tree too)
    if match is None:
        return None
    soc = match.soc
    return Machine(soc.part, soc.htp_arch, soc.qnn_soc_model, match.matched_by)


def _machine(options: Mapping[str, Any], machine: Machine) -> list[Finding]:
    found: list[Finding] = []
    arch = as_option_text(options.get("htp_arch"))
    if arch and is_digits(arch) and int(arch) != 0 and machine.htp_arch and int(arch) != machine.htp_arch:
        found.append(
            Finding("QND070", f"htp_arch={arch!r} but this machine's {machine.soc} has HTP v{machine.htp_arch}",
                    f"htp_arch='{machine.htp_arch}' (or leave it unset)", NOWHERE)
        )
    model = as_option_text(options.get("soc_model"))
    if model and is_digits(model) and int(model) != 0 and machine.soc_model and int(model) != machine.soc_model:
        found.append(
            Finding("QND071", f"soc_model={model!r} but this machine is {machine.soc} (QNN soc id {machine.soc_model})",
                    f"soc_model='{machine.soc_model}' (or leave it unset)", NOWHERE)
        )
    if as_option_text(options.get("enable_htp_fp16_precision")) == "1" and machine.htp_arch and machine.htp_arch < FP16_MIN_ARCH:
        found.append(
            Finding("QND072", f"enable_htp_fp16_precision=1 on {machine.soc}'s HTP v{machine.htp_arch} (FP16 needs v{FP16_MIN_ARCH} or newer)",
                    "quantize the model (QDQ) for this HTP", NOWHERE)
        )
    return found


def check_options(
    provider_options: Mapping[str, Any] | None = None,
    session_config: Mapping[str, Any] | None = None,
    run_config: Mapping[str, Any] | None = None,
    *,
    onnxruntime_qnn: str | None = None,
    machine: Machine | None = None,
) -> list[Finding]:
    """Findings for these options (the same rules as ``qnndoctor lint``)."""
    for name, given in (("provider_options", provider_options), ("session_config", session_config), ("run_config", run_config)):
        if given is not None and not isinstance(given, Mapping):
            raise TypeError(f"{name} must be a mapping of option names to values, not {type(given).__name__}")
    knowledge = load()
    target = Target.of(knowledge, onnxruntime_qnn)
    events: list[Event] = []
    if provider_options:
        clean = {str(k): v for k, v in provider_options.items()}
        events.append(ProviderOptions(clean, NOWHERE, "check_options"))
    for kind, table in (("session", session_config), ("run", run_config)):
        for key, value in (table or {}).items():
            events.append(ConfigEntry(kind, str(key), value, NOWHERE, 0))
    facts = FileFacts(
        mentions_qnn=True,
        uses_plugin=target.plugin,
        enables_profiling=True,
        uses_qnn_config=True,
        base_dir=str(Path.cwd()),
    )
    found = judge(events, knowledge, target, facts)
    if machine is not None and provider_options:
        found.extend(_machine(provider_options, machine))
    return found
