# case: options.md #22  expect: QND032
import onnxruntime as ort

LATENCY_US = 99999999999
ro = ort.RunOptions()
ro.add_run_config_entry("qnn.rpc_control_latency", str(LATENCY_US))
