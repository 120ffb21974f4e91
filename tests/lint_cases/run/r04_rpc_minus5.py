# case: run.md (qnn.rpc_control_latency -5)  expect: QND032
import onnxruntime as ort

run_options = ort.RunOptions()
run_options.add_run_config_entry("qnn.rpc_control_latency", "-5")
