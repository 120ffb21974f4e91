"""Events -> findings, for one onnxruntime-qnn release."""

from __future__ import annotations

import ast
import difflib
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from .events import (
    AttrSet,
    CallSeen,
    Compile,
    ConfigEntry,
    EpNameFilter,
    Event,
    FileFacts,
    Loc,
    ProviderOptions,
    ProvidersByName,
    Registration,
)
from .knowledge import Knowledge, is_digits
from .rules import BY_CODE
from .values import UNKNOWN, Dotted, as_option_text, known_str

UINT32_MAX = 4294967295
TYPO_CUTOFF = 0.88  # difflib ratio: one or two characters off in a key of 15+
MAX_VTCM_MB = 8


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    fix: str
    loc: Loc
    # The source line that reads the key judged (matrix/options.json), when one does.
    source: str | None = None

    @property
    def rule(self) -> Any:
        return BY_CODE[self.code]


@dataclass(frozen=True)
class Target:
    version: str  # the onnxruntime-qnn version judged
    data_release: str  # the release whose data stands for it
    plugin: bool  # 2.x
    explicit: bool = True  # the version was given (--python / --onnxruntime-qnn), not assumed

    @classmethod
    def of(cls, knowledge: Knowledge, version: str | None) -> Target:
        chosen = version or knowledge.newest()
        return cls(chosen, knowledge.data_release(chosen), not chosen.startswith("1."), version is not None)


def _near(key: str, keys: frozenset[str], cutoff: float = 0.8) -> str | None:
    close = difflib.get_close_matches(key, sorted(keys), n=1, cutoff=cutoff)
    return close[0] if close else None


class Checker:
    def __init__(self, knowledge: Knowledge, target: Target, facts: FileFacts) -> None:
        self.k = knowledge
        self.t = target
        self.facts = facts
        self.found: list[Finding] = []
        self.provider_keys = knowledge.keys("provider_option", target.data_release)
        self.all_provider_keys = knowledge.keys("provider_option")
        self.session_keys = knowledge.keys("session_config")
        self.run_keys = knowledge.keys("run_config")
        self.qnn_run_keys = knowledge.qnn_read("run_config")
        self.current: tuple[str, str] | None = None  # the key being judged (for its source line)
        # findings that hold only if their SessionOptions get the QNN EP (known at the end)
        self.pending_qnn: list[tuple[int, str, str, Loc]] = []
        self.qnn_owners: set[int] = set()
        self.dynamic_outputs: list[tuple[str, Loc]] = []
        self.model_inputs: set[str] = set()
        self.policy_owners: set[int] = set()  # SessionOptions given a selection policy
        self.device_owners: set[int] = set()  # SessionOptions given explicit devices
        self.ends: Counter[int] = Counter()  # end_profiling() calls per session

    def add(self, code: str, message: str, loc: Loc, fix: str | None = None) -> None:
        option = self.k.get(*self.current) if self.current else None
        source = option.cite_for(self.t.version) if option is not None else None
        self.found.append(Finding(code, message, fix or BY_CODE[code].fix, loc, source))

    # -- provider options -------------------------------------------------------
    def provider_options(self, event: ProviderOptions) -> None:
        for key, value in event.options.items():
            loc = event.key_locs.get(key, event.loc)
            self.current = ("provider_option", key)
            if key in self.session_keys or key.startswith(("session.", "ep.")):
                self.add("QND011", f"'{key}' is a session-config key, not a QNN provider option: ignored", loc,
                         f"so.add_session_config_entry('{key}', {as_option_text(value)!r})")
                continue
            if key in self.run_keys:
                self.add("QND012", f"'{key}' is a run option, not a provider option: ignored", loc)
                continue
            if key not in self.provider_keys:
                if key in self.all_provider_keys or key.startswith("qnn_context_"):
                    releases = self.k.get("provider_option", key)
                    where = (
                        ", ".join(releases.releases)
                        if releases and releases.releases
                        else f"no release from {self.k.releases[0]} on"
                    )
                    self.add("QND010", f"'{key}' is not read by onnxruntime-qnn {self.t.version} (read in: {where}): ignored", loc,
                             "use session config ep.context_enable/ep.context_file_path" if key.startswith("qnn_context_") else None)
                else:
                    near = _near(key, self.provider_keys)
                    hint = f"; did you mean '{near}'?" if near else ""
                    self.add("QND010", f"'{key}' is not a provider option onnxruntime-qnn {self.t.version} reads{hint}", loc,
                             f"use '{near}'" if near else None)
                continue
            self.provider_value(key, value, loc)

    def provider_value(self, key: str, value: Any, loc: Loc) -> None:
        option = self.k.get("provider_option", key)
        text = as_option_text(value)
        if option is None or text is None:
            return
        if option.numeric:
            if not is_digits(text):
                if option.values:  # compared as text with the arch numbers
                    how = "the EP compares it with arch numbers such as '73': no match, the default is used, no message"
                else:
                    how = "the EP parses its leading digits ('8MB' reads as 8, 'SM8650' as nothing), no message"
                self.add("QND014", f"{key}={text!r} is not a number: {how}", loc, self._numeric_fix(key, text))
            elif key == "vtcm_mb" and int(text) > MAX_VTCM_MB:
                self.add("QND016", f"vtcm_mb={text!r}: no HTP has more than {MAX_VTCM_MB} MB of VTCM", loc)
            return
        if option.flag:
            if text not in ("0", "1"):
                self.add("QND015", f"{key}={text!r}: only '1' turns it on; this value is read as off", loc,
                         f"{key}='1'")
            return
        if option.enum and text not in option.enum:
            self.add("QND013", f"{key}={text!r} is not one of {', '.join(option.enum)}: the default is used", loc)

    def _numeric_fix(self, key: str, text: str) -> str | None:
        if key == "soc_model":
            from ..matrixdata import load_or_empty

            wanted = "".join(text.split()).upper()
            for soc in load_or_empty().socs:
                names = {soc.part.upper(), *(a.upper() for a in soc.aliases)}
                if wanted in names and soc.qnn_soc_model is not None:
                    return f"soc_model='{soc.qnn_soc_model}' ({soc.part}'s QNN soc id)"
        digits = "".join(c for c in text if c.isdigit())
        if key == "htp_arch" and digits:
            return f"htp_arch='{digits}'"
        if key == "vtcm_mb" and digits:
            return f"vtcm_mb='{digits}'"
        return None

    # -- session / run config -------------------------------------------------------
    def config(self, event: ConfigEntry) -> None:
        text = as_option_text(event.value)
        key = event.key
        self.current = ("session_config" if event.kind == "session" else "run_config", key)
        if event.kind == "session":
            if key in self.run_keys:
                self.add("QND022", f"'{key}' is a run option; in the session config it is ignored", event.loc)
                return
            if key in self.all_provider_keys:
                self.add("QND023", f"'{key}' is a QNN provider option; in the session config it is ignored", event.loc)
                return
            if key not in self.session_keys:
                # close to a known key only: onnxruntime releases newer than the data add keys
                near = _near(key, self.session_keys, TYPO_CUTOFF)
                if near:
                    self.add("QND024", f"session-config key '{key}' is not defined; did you mean '{near}'?", event.loc, f"use '{near}'")
                return
            option = self.k.get("session_config", key)
            if option is not None and option.flag and text is not None and text not in ("0", "1"):
                effect = "read as embed mode 1" if key == "ep.context_embed_mode" else "read as off"
                self.add("QND020", f"{key}={text!r}: only '0'/'1' mean something; {effect}", event.loc, f"so.add_session_config_entry('{key}', '1')")
            if key == "ep.context_file_path" and text and text.lower().endswith(".bin"):
                self.add("QND021", f"ep.context_file_path={text!r}: the file written is an ONNX model", event.loc)
            return
        # run config
        if key in self.run_keys:
            if key not in self.qnn_run_keys and key == "gpu_graph_id" and self.facts.mentions_qnn:
                self.add("QND031", "run option 'gpu_graph_id' is read by CUDA graphs only; the QNN EP ignores it", event.loc)
            self.run_value(key, text, event.loc)
            return
        if key.startswith("qnn.") or (self.facts.mentions_qnn and _near(key, self.qnn_run_keys)):
            near = _near(key, self.qnn_run_keys) or ("qnn.htp_perf_mode" if "perf" in key else None)
            hint = f"; the code reads '{near}'" if near else ""
            self.add("QND030", f"run option '{key}' is never read{hint}", event.loc, f"use '{near}'" if near else None)
            return
        near = _near(key, self.run_keys, TYPO_CUTOFF)
        if near:
            self.add("QND024", f"run option '{key}' is not defined; did you mean '{near}'?", event.loc, f"use '{near}'")

    def run_value(self, key: str, text: str | None, loc: Loc) -> None:
        if text is None:
            return
        if key in ("qnn.htp_perf_mode", "qnn.htp_perf_mode_post_run"):
            modes = self.k.get("provider_option", "htp_performance_mode")
            if modes is not None and modes.values and text not in modes.values:
                fix = f"'{text.lower()}' (lower case)" if text.lower() in modes.values else "one of " + ", ".join(modes.values)
                self.add("QND032", f"{key}={text!r} is not a performance mode the EP compares with", loc, fix)
        elif key == "qnn.rpc_control_latency":
            if not is_digits(text):
                self.add("QND032", f"qnn.rpc_control_latency={text!r}: std::stoul reads the leading digits and wraps negatives", loc,
                         "microseconds as digits only, e.g. '100'")
            elif int(text) > UINT32_MAX:
                self.add("QND032", f"qnn.rpc_control_latency={text!r} is truncated to 32 bits", loc, f"at most '{UINT32_MAX}'")

    # -- attributes ---------------------------------------------------------------------
    def attr(self, event: AttrSet) -> None:
        name, value = event.name, event.value
        if name in ("intra_op_num_threads", "inter_op_num_threads", "log_verbosity_level") and isinstance(value, int) \
                and not isinstance(value, bool) and value < 0:
            self.add("QND040", f"{name} = {value}: a negative count is accepted and means nothing", event.loc)
        elif name == "execution_mode" and isinstance(value, Dotted) and value.endswith("ORT_PARALLEL"):
            self.pending_qnn.append((event.owner, "QND041", "execution_mode = ORT_PARALLEL has no effect on the QNN EP", event.loc))
        elif name == "use_deterministic_compute" and value is True:
            self.pending_qnn.append(
                (event.owner, "QND041", "use_deterministic_compute = True has no effect on the QNN EP", event.loc)
            )
        elif name == "profile_file_prefix" and known_str(value) and self.facts.base_dir is not None:
            folder = PurePath(str(value)).parent
            if str(folder) != "." and not folder.is_absolute() and not (Path(self.facts.base_dir) / folder).is_dir():
                self.add("QND042", f"profile_file_prefix={value!r}: the folder '{folder}' does not exist here", event.loc,
                         f"os.makedirs({str(folder)!r}, exist_ok=True) before the session")

    # -- calls ----------------------------------------------------------------------------
    def call(self, event: CallSeen) -> None:
        judge_call = _CALL_CHECKS.get(event.name)
        if judge_call is not None:
            judge_call(self, event)

    def _qdq_config(self, event: CallSeen) -> None:
        providers = event.kwargs.get("calibration_providers")
        if isinstance(providers, (list, tuple)) and "QNNExecutionProvider" in providers and self.t.plugin:
            self.add("QND060", "calibration_providers=['QNNExecutionProvider'] is not a registered provider with the 2.x plugin", event.loc)
        activation = event.kwargs.get("activation_type")
        if isinstance(activation, Dotted) and activation.endswith(".QInt8"):
            self.add("QND061", "activation_type=QInt8: signed 8-bit activations for the HTP", event.loc)
        if event.kwargs.get("op_types_to_quantize") not in (None, UNKNOWN) or event.kwargs.get("nodes_to_exclude"):
            self.add("QND062", "op_types_to_quantize/nodes_to_exclude leave part of the model in float", event.loc)

    def _quantize_static(self, event: CallSeen) -> None:
        if not self.facts.mentions_qnn or self.facts.uses_qnn_config:
            return
        activation = event.kwargs.get("activation_type")
        if activation is None or (isinstance(activation, Dotted) and activation.endswith(".QInt8")):
            self.add("QND061", "quantize_static with its defaults (QInt8 activations) for the QNN EP", event.loc,
                     "build the config with get_qnn_qdq_config(model, reader) and quantize(model, out, config)")

    def _quantize_dynamic(self, event: CallSeen) -> None:
        output = event.args[1] if len(event.args) > 1 else event.kwargs.get("model_output")
        if known_str(output):
            self.dynamic_outputs.append((str(output), event.loc))

    def _session(self, event: CallSeen) -> None:
        if event.extra.get("qnn") and event.owner:
            self.qnn_owners.add(event.owner)
        if (event.extra.get("qnn") or self.facts.uses_plugin) and event.args and known_str(event.args[0]):
            self.model_inputs.add(os.path.normpath(str(event.args[0])))

    def _profiling_start(self, event: CallSeen) -> None:
        if not self.facts.enables_profiling:
            self.add("QND044", "get_profiling_start_time_ns() without enable_profiling returns 0", event.loc)

    def _end_profiling(self, event: CallSeen) -> None:
        if not self.facts.enables_profiling:
            self.add("QND044", "end_profiling() without enable_profiling returns ''", event.loc)
        elif event.owner:
            self.ends[event.owner] += 1
            if self.ends[event.owner] == 2:
                self.add("QND044", "end_profiling() called again: the second call returns ''", event.loc)

    def _run(self, event: CallSeen) -> None:
        names = event.args[0] if event.args else None
        if isinstance(names, list) and all(known_str(n) for n in names):
            dup = [n for n, c in Counter(names).items() if c > 1]
            if dup:
                self.add("QND045", f"output {dup[0]!r} asked more than once", event.loc)

    def _run_async(self, event: CallSeen) -> None:
        callback = event.extra.get("callback")
        if callback is not None and _resolves_future(callback):
            self.add("QND046", f"callback {callback.name}() calls set_result/set_exception from onnxruntime's thread", event.loc)

    def _shared_binding(self, event: CallSeen) -> None:
        self.add("QND048", f"{event.args[0]}() binds a module-level IOBinding and runs in several threads", event.loc)

    def _bind(self, event: CallSeen) -> None:
        if event.extra.get("pointer"):
            self.add("QND047", f"{event.extra['pointer']} points at an array that is not C-contiguous", event.loc)

    def _selection_policy(self, event: CallSeen) -> None:
        if event.owner:
            self.policy_owners.add(event.owner)
            if event.owner in self.device_owners:
                self.add("QND043", "set_provider_selection_policy on SessionOptions that also has explicit devices", event.loc)

    def _devices(self, event: CallSeen) -> None:
        if event.owner:
            self.device_owners.add(event.owner)
            self.qnn_owners.add(event.owner)
            if event.owner in self.policy_owners:
                self.add("QND043", "add_provider_for_devices on SessionOptions that also has a selection policy", event.loc)

    def compile(self, event: Compile) -> None:
        if event.method == "ModelCompiler":
            if known_str(event.input_model):
                self.model_inputs.add(os.path.normpath(str(event.input_model)))
            if event.has_ep is False and "ERROR_IF_NO_NODES_COMPILED" not in str(event.flags):
                self.add("QND050", "ModelCompiler's SessionOptions have no EP added: nothing is compiled", event.loc)
            context = [k for k in event.session_entries if k in ("ep.context_enable", "ep.context_file_path", "ep.context_embed_mode")]
            if context:
                self.add("QND053", f"{', '.join(context)} on the compiler's SessionOptions are ignored", event.loc)
        elif event.method == "compile_to_bytes" and event.embed is not True:
            self.add("QND051", "compile_to_bytes() without embed_compiled_data_into_model=True", event.loc)
        elif (
            event.method == "compile_to_file"
            and known_str(event.output)
            and known_str(event.input_model)
            and os.path.normpath(str(event.output)) == os.path.normpath(str(event.input_model))
        ):
                self.add("QND052", f"compile_to_file({event.output!r}) is the input model's own path", event.loc)

    def finish(self) -> None:
        for owner, code, message, loc in self.pending_qnn:
            if owner and owner in self.qnn_owners:
                self.add(code, message, loc)
        for output, loc in self.dynamic_outputs:
            if os.path.normpath(output) in self.model_inputs:
                self.add("QND063", f"quantize_dynamic writes {output!r}, which is then given to the QNN EP", loc)

    def plugin(self, events: list[Event]) -> None:
        registrations = [e for e in events if isinstance(e, Registration)]
        names = {str(r.name) for r in registrations if known_str(r.name)}
        by_library: dict[str, set[str]] = {}
        for registration in registrations:
            if known_str(registration.name) and isinstance(registration.library, str):
                by_library.setdefault(registration.library, set()).add(str(registration.name))
        for library, registered in by_library.items():
            if len(registered) > 1:
                self.add("QND003", f"{library} registered as {', '.join(sorted(map(repr, registered)))}", registrations[-1].loc)
        plugin = (self.t.plugin and self.t.explicit) or self.facts.uses_plugin or bool(registrations)
        registered_here = self.facts.uses_plugin or bool(registrations)
        for event in events:
            if isinstance(event, ProvidersByName) and plugin:
                if registered_here:
                    message = f"{event.via}['QNNExecutionProvider'] after registering the 2.x plugin: the session runs on the CPU, nothing printed"
                else:
                    message = (
                        f"with onnxruntime-qnn {self.t.version} (a 2.x plugin) {event.via}['QNNExecutionProvider'] does not "
                        "select the plugin EP: the session runs on the CPU (silently once the plugin is registered)"
                    )
                self.add("QND001", message, event.loc)
            elif isinstance(event, EpNameFilter) and names and event.name not in names and event.name in (
                "QNNExecutionProvider", "QNN", "qnn"
            ):
                self.add("QND002", f"ep_name == {event.name!r}, but the plugin is registered as {', '.join(sorted(map(repr, names)))}",
                         event.loc)


_CALL_CHECKS = {
    "get_qnn_qdq_config": Checker._qdq_config,
    "quantize_static": Checker._quantize_static,
    "quantize_dynamic": Checker._quantize_dynamic,
    "InferenceSession": Checker._session,
    "get_profiling_start_time_ns": Checker._profiling_start,
    "end_profiling": Checker._end_profiling,
    "run": Checker._run,
    "run_async": Checker._run_async,
    "shared_iobinding": Checker._shared_binding,
    "bind_input": Checker._bind,
    "bind_output": Checker._bind,
    "set_provider_selection_policy": Checker._selection_policy,
    "add_provider_for_devices": Checker._devices,
}


def _sharing(self: Checker, events: list[Event]) -> None:
    """ctx-054 / ctx-019: the ep.* sharing keys across the file's SessionOptions."""
    entries: dict[int, dict[str, Any]] = {}
    for event in events:
        if isinstance(event, ConfigEntry) and event.kind == "session" and event.owner:
            entries.setdefault(event.owner, {})[event.key] = (as_option_text(event.value), event.loc)
    sharing = any(e.get("ep.share_ep_contexts", (None,))[0] == "1" for e in entries.values())
    if not sharing:
        return
    prefixes: dict[str, int] = {}
    for owner, table in entries.items():
        prefix = table.get("ep.context_node_name_prefix")
        if prefix and prefix[0]:
            if prefix[0] in prefixes and prefixes[prefix[0]] != owner:
                self.add("QND054", f"ep.context_node_name_prefix={prefix[0]!r} is given to two models", prefix[1])
            prefixes.setdefault(prefix[0], owner)
    created = [e for e in events if isinstance(e, CallSeen) and e.name == "InferenceSession" and e.owner in entries]
    for index, session in enumerate(created):
        stop = entries[session.owner].get("ep.stop_share_ep_contexts")
        later = [s for s in created[index + 1 :] if entries[s.owner].get("ep.share_ep_contexts", (None,))[0] == "1"]
        if stop and stop[0] == "1" and later:
            self.add("QND055", f"this session stops sharing but the session at line {later[0].loc.line} shares after it", stop[1])


def _resolves_future(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("set_result", "set_exception"):
            return True
    return False


def judge(events: list[Event], knowledge: Knowledge, target: Target, facts: FileFacts) -> list[Finding]:
    checker = Checker(knowledge, target, facts)
    for event in events:
        checker.current = None
        if isinstance(event, ProviderOptions):
            checker.provider_options(event)
        elif isinstance(event, ConfigEntry):
            checker.config(event)
        elif isinstance(event, AttrSet):
            checker.attr(event)
        elif isinstance(event, CallSeen):
            checker.call(event)
        elif isinstance(event, Compile):
            checker.compile(event)
    checker.current = None
    checker.finish()
    checker.plugin(events)
    _sharing(checker, events)
    return checker.found
