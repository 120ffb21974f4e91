# case: api.md (providers= after registering, CPU fallback allowed)  expect: QND001
import onnxruntime as ort
import onnxruntime_qnn


def make_session(path):
    ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
    providers = [("QNNExecutionProvider", {"backend_type": "htp"}), "CPUExecutionProvider"]
    return ort.InferenceSession(path, providers=providers)
