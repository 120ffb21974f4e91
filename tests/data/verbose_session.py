"""Run a model on the QNN HTP backend (2.x plugin) with every log at its most
verbose, CPU fallback off: a healthy session's full chatter goes to stderr.
A second argument ``cpu-fallback`` leaves the fallback on, so nodes the QNN EP
rejects run on the CPU EP (and the log narrates why, at verbose level)."""

import sys

import numpy as np
import onnxruntime as ort
import onnxruntime_qnn

ort.set_default_logger_severity(0)
ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]
options = ort.SessionOptions()
options.log_severity_level = 0
options.log_verbosity_level = 1
fallback = sys.argv[2:3] == ["cpu-fallback"]
options.add_session_config_entry("session.disable_cpu_ep_fallback", "0" if fallback else "1")
options.add_provider_for_devices(devices, {"backend_type": "htp", "log_level": "verbose"})
session = ort.InferenceSession(sys.argv[1], sess_options=options)
feeds = {
    i.name: np.random.rand(*[d if isinstance(d, int) else 1 for d in i.shape]).astype(np.float32)
    for i in session.get_inputs()
}
session.run(None, feeds)
print("session ran", file=sys.stderr)
