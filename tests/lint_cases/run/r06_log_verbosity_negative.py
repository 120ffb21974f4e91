# case: run.md (RunOptions.log_verbosity_level = -1)  expect: QND040
import onnxruntime as ort

ro = ort.RunOptions()
ro.log_severity_level = 0
ro.log_verbosity_level = -1
