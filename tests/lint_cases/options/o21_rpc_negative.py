# case: options.md #21  expect: QND032
import onnxruntime as ort

ro = ort.RunOptions()
ro.add_run_config_entry("qnn.rpc_control_latency", str(-1))
