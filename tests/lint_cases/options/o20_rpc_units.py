# case: options.md #20  expect: QND032
import onnxruntime as ort

ro = ort.RunOptions()
ro.add_run_config_entry("qnn.rpc_control_latency", "100us")
