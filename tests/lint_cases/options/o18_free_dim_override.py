# case: options.md #18  expect: MISS (needs the model: lint does not open models)
import onnxruntime as ort

so = ort.SessionOptions()
so.add_free_dimension_override_by_name("batch", 4)
sess = ort.InferenceSession("model.onnx", so)
