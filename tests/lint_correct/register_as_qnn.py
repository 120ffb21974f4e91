"""Registered as 'QNN' and filtered on 'QNN' (docs/silent-mistakes/api.md: this works)."""

import onnxruntime as ort
import onnxruntime_qnn

REGISTRATION = "QNN"
ort.register_execution_provider_library(REGISTRATION, onnxruntime_qnn.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == REGISTRATION]
so = ort.SessionOptions()
so.add_provider_for_devices(devices, {"backend_type": "htp"})
