# case: run.md (qnn.htp_perf_mode_post_run Burst)  expect: QND032
import onnxruntime as ort

run_options = ort.RunOptions()
run_options.add_run_config_entry("qnn.htp_perf_mode", "burst")
run_options.add_run_config_entry("qnn.htp_perf_mode_post_run", "Burst")
