"""The lint rules: code, title, what to do, and the evidence each stands on
(the source line that reads the option, the run that showed the silence).
docs/lint.md is generated from this table (docs/regenerate_lint.py)."""

from __future__ import annotations

from dataclasses import dataclass

SM = "docs/silent-mistakes/"
EP_CC = "onnxruntime/onnxruntime-qnn onnxruntime/core/providers/qnn/qnn_execution_provider.cc"


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    title: str
    fix: str
    evidence: tuple[str, ...]
    scope: str = "code"  # code | machine (check_options only)


# The rules, one a line: code | name | what goes wrong silently | fix | evidence ("; " between
# items; {SM} and {EP_CC} stand for the prefixes above) | "machine" for the rules check_options
# alone can judge (they need the chip).
_TABLE = """
QND001 | provider-by-name-plugin | 'QNNExecutionProvider' selected by name with the 2.x plugin: the session runs on the CPU | select the plugin's devices: so.add_provider_for_devices([d for d in ort.get_ep_devices() if d.ep_name == 'QNNExecutionProvider'], options) | {SM}options.md #24; {SM}api.md api-019; {SM}api.md (providers= after registering, fallback allowed)
QND002 | ep-name-filter-mismatch | the ep_name filter names a different EP than the plugin was registered as | filter on the registration name (the plugin names its EP after it), or register as 'QNNExecutionProvider' | {SM}api.md api-005 and the 'QNN' note (api-001 is the failing case)
QND003 | plugin-registered-twice | the QNN plugin is registered under two names: a second EP factory stays loaded | register the library once | {SM}api.md api-005
QND010 | unknown-provider-option | provider option the QNN EP of this release does not read: ignored with no message | remove it or use the option this release reads | {SM}options.md #7; matrix/options.json (keys read per release)
QND011 | session-key-as-provider-option | session-config key given as a provider option: ignored | set it with so.add_session_config_entry(key, value) | {SM}options.md #8; {SM}api.md api-063
QND012 | run-key-as-provider-option | run option given as a provider option: ignored | use the provider option htp_performance_mode, or RunOptions.add_run_config_entry for qnn.* keys | {SM}run.md (qnn.htp_perf_mode as a provider option key)
QND013 | provider-option-bad-value | provider option value the QNN EP does not accept: the default is used | use one of the values the EP compares with (listed in the message) | {SM}genai.md gq-020; {EP_CC} (the values it compares with, matrix/options.json)
QND014 | provider-option-not-a-number | numeric provider option given text: read up to the first non-digit or not at all | give the number alone (soc_model: the QNN SoC id, e.g. '57' for SM8650; htp_arch: '73', not 'v73') | {SM}options.md #1 #2 #6; {SM}genai.md gq-044 gq-045; {EP_CC} (std::stoi parse)
QND015 | provider-flag-not-0-1 | on/off provider option given something other than '0'/'1': read as off | give '1' (on) or '0' (off) | {EP_CC} (== "1" tests)
QND016 | vtcm-out-of-range | vtcm_mb larger than any HTP's VTCM: accepted with no message | leave vtcm_mb unset (the EP picks the chip's size) or give the chip's VTCM in MB (at most 8) | {SM}options.md #3; matrix/socs.json (VTCM sizes)
QND020 | session-flag-not-0-1 | session-config flag given something other than '0'/'1': read as off (or as 1 for embed mode) | give '1' or '0' as a string | {SM}options.md #9 #10 #13 #16; {SM}ctx.md (embed_mode '2', context_enable 'true')
QND021 | context-file-path-bin | ep.context_file_path ends in .bin: an ONNX model is written under a context-binary name | name it *_ctx.onnx (the QNN context binary is written beside it as *_qnn.bin when embed mode is 0) | {SM}options.md #11 #12
QND022 | run-key-in-session-config | run option put in the session config: ignored | ro = ort.RunOptions(); ro.add_run_config_entry(key, value); sess.run(..., run_options=ro) | {SM}run.md (qnn.htp_perf_mode in the session config)
QND023 | provider-option-in-session-config | QNN provider option put in the session config: ignored | pass it in the QNN provider options | matrix/options.json (provider options are read from the provider-options map)
QND024 | unknown-config-key | config key onnxruntime does not define (a typo?): ignored with no message | use the key named in the message | {SM}options.md #23
QND030 | unknown-run-option | run option the QNN EP does not read: ignored (qnn.perf_mode is in the docs, the code reads qnn.htp_perf_mode) | use qnn.htp_perf_mode / qnn.htp_perf_mode_post_run / qnn.rpc_control_latency / qnn.lora_config | {SM}options.md #23; {EP_CC} (GetRunConfigEntry kOrtRunOptionsConfigQnn*)
QND031 | run-option-not-for-qnn | run option only other EPs read (gpu_graph_id): ignored by the QNN EP | remove it | {SM}run.md (gpu_graph_id on a QNN session)
QND032 | run-option-bad-value | run option value the QNN EP does not accept | perf modes are lower case: burst, balanced, default, high_performance, ...; rpc_control_latency is microseconds as digits, at most 4294967295 | {SM}options.md #20 #21 #22; {SM}run.md (rpc -5, 'Burst'); {EP_CC} (std::stoul)
QND040 | negative-thread-count | negative thread or verbosity count: accepted with no message | 0 lets onnxruntime choose; give a positive count otherwise | {SM}options.md #14; {SM}run.md (log_verbosity_level = -1)
QND041 | no-effect-with-qnn | SessionOptions setting that has no effect on the QNN EP | remove it (the QNN EP runs its partitions itself) | {SM}options.md #15 #17
QND042 | profile-folder-missing | profile_file_prefix in a folder that does not exist: no profile is written, nothing said | create the folder first (os.makedirs(folder, exist_ok=True)) | {SM}options.md #19; {SM}run.md (logs/prof)
QND043 | policy-and-devices | a provider-selection policy and explicit devices on one SessionOptions: the policy is ignored | use one of them | {SM}api.md api-026
QND044 | profiling-not-enabled | profiling call on a session without profiling: returns 0 or '' silently | set so.enable_profiling = True before creating the session; call end_profiling() once | {SM}run.md (get_profiling_start_time_ns, end_profiling twice)
QND045 | duplicate-output-names | the same output name asked twice in run(): two copies, no warning | ask each output once | {SM}run.md (sess.run(['y', 'y'], feed))
QND046 | future-from-callback-thread | run_async callback resolves an asyncio Future from onnxruntime's thread | loop.call_soon_threadsafe(future.set_result, outputs) | {SM}run.md (asyncio Future from run_async)
QND047 | pointer-not-c-order | a raw pointer to an array that is not in C order bound to IOBinding: read in C order, wrong results | bind np.ascontiguousarray(x).ctypes.data, or bind_cpu_input(name, x) | {SM}run.md (Fortran-order array bound by pointer)
QND048 | iobinding-shared-across-threads | one IOBinding bound from several threads: a run may read another thread's input, no error | give each thread its own binding (sess.io_binding() inside the function) | {SM}run.md (4 threads sharing one IOBinding)
QND054 | shared-context-same-prefix | two models given the same ep.context_node_name_prefix and shared EP contexts: the second reuses the first's graph | give each model its own ep.context_node_name_prefix | {SM}ctx.md ctx-054
QND055 | stop-share-on-first-session | ep.stop_share_ep_contexts set on a session created before others that share | set ep.stop_share_ep_contexts=1 on the LAST session that shares | {SM}ctx.md ctx-019
QND050 | compile-without-ep | ModelCompiler given SessionOptions with no EP: the 'compiled' model is the input graph | add the QNN devices to the SessionOptions first, and pass flags=ort.CompileApiFlags.ERROR_IF_NO_NODES_COMPILED | {SM}api.md api-027; {SM}ctx.md ctx-003
QND051 | compile-to-bytes-not-embedded | compile_to_bytes() without embed_compiled_data_into_model=True: the bytes need a .bin written beside the input model | ModelCompiler(..., embed_compiled_data_into_model=True) | {SM}api.md api-030; {SM}ctx.md ctx-007
QND052 | compile-overwrites-input | compile_to_file() writes over the input model | write to another path (e.g. model_ctx.onnx) | {SM}ctx.md ctx-013
QND053 | context-keys-with-compiler | ep.context_* session entries given to ModelCompiler: ignored (the compile call's path wins) | drop ep.context_enable/ep.context_file_path; the output path is compile_to_file's argument | {SM}ctx.md ctx-012
QND060 | calibration-provider-by-name | calibration_providers=['QNNExecutionProvider'] with the 2.x plugin: calibration runs on the CPU | leave calibration_providers at its default (CPU calibration is what runs anyway) | {SM}quant.md q-035
QND061 | signed-activations-for-htp | int8 activations for the HTP: accepted on the simulator, not the HTP's preferred types | activation_type=QuantType.QUInt8 or QUInt16 with weight_type=QuantType.QUInt8 (get_qnn_qdq_config's defaults) | {SM}quant.md q-017 q-018
QND062 | partial-quantization | only part of the model quantized: the rest stays float and runs silently (float on the HTP, or CPU) | quantize every op the HTP should run; check placement with `qnndoctor model` | {SM}quant.md q-020 q-021
QND063 | dynamic-quantization-for-qnn | quantize_dynamic output for the QNN EP: its dynamic ops are not compiled for the NPU | use static QDQ quantization (get_qnn_qdq_config + quantize) | {SM}quant.md q-034
QND070 | htp-arch-not-this-chip | htp_arch differs from this machine's HTP | give this chip's arch (or leave it unset) | {SM}ctx.md ctx-027 | machine
QND071 | soc-model-not-this-chip | soc_model differs from this machine's SoC | give this chip's QNN soc id (or leave it unset) | {SM}ctx.md ctx-018 ctx-028 | machine
QND072 | fp16-on-old-htp | enable_htp_fp16_precision on an HTP older than v73 | quantize the model (QDQ) for this HTP | {SM}ops.md (fixes checked: FP16 precision) | machine
"""


def _rule(line: str) -> Rule:
    code, name, title, fix, evidence, *scope = line.split(" | ")
    cited = tuple(e.replace("{SM}", SM).replace("{EP_CC}", EP_CC) for e in evidence.split("; "))
    return Rule(code, name, title, fix, cited, *scope)


RULES: tuple[Rule, ...] = tuple(_rule(line) for line in _TABLE.strip().splitlines())

BY_CODE = {rule.code: rule for rule in RULES}
