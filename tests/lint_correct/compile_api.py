"""The compile API with the QNN devices added, embedded output, errors when nothing compiles."""

import onnxruntime as ort
import onnxruntime_qnn

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())


def compile_model(model_path: str, output_path: str) -> bytes:
    so = ort.SessionOptions()
    devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]
    so.add_provider_for_devices(devices, {"backend_type": "htp"})
    compiler = ort.ModelCompiler(
        so,
        model_path,
        embed_compiled_data_into_model=True,
        flags=ort.OrtCompileApiFlags.ERROR_IF_NO_NODES_COMPILED,
    )
    compiler.compile_to_file(output_path)
    return compiler.compile_to_bytes()
