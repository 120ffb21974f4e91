# case: options.md #16  expect: QND020
import onnxruntime as ort

so = ort.SessionOptions()
so.add_session_config_entry("session.intra_op.allow_spinning", "no")
