# case: options.md #19  expect: QND042
import onnxruntime as ort

so = ort.SessionOptions()
so.enable_profiling = True
so.profile_file_prefix = "logs/ort_profile"
