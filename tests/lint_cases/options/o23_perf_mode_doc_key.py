# case: options.md #23  expect: QND030
import onnxruntime as ort

ro = ort.RunOptions()
ro.add_run_config_entry("qnn.perf_mode", "burst")
