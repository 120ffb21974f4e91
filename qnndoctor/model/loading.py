"""Reading an ONNX file statically, with the ``onnx`` package (no onnxruntime).

Everything ``qnndoctor model`` knows before running anything comes from here:
IR version, opsets, inputs and outputs with their dimensions, the operators,
the precision (QDQ, float32, float16), EPContext nodes and external-data
files. Bad input is a ``ModelError`` with a sentence a user can act on.
"""

from __future__ import annotations

import math
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# onnx.TensorProto.DataType numbers (stable across onnx releases).
ELEM_TYPES = {
    1: "float32",
    2: "uint8",
    3: "int8",
    4: "uint16",
    5: "int16",
    6: "int32",
    7: "int64",
    8: "string",
    9: "bool",
    10: "float16",
    11: "float64",
    12: "uint32",
    13: "uint64",
    16: "bfloat16",
    21: "uint4",
    22: "int4",
}
QDQ_OPS = frozenset({"QuantizeLinear", "DequantizeLinear"})
EP_CONTEXT = ("com.microsoft", "EPContext")


def onnx_missing() -> str:
    """What to do without onnx: qnndoctor is not on the package index, so the
    extra is added to the installation that runs (qnndoctor.selfinstall)."""
    from ..selfinstall import extra_advice

    return (
        "qnndoctor model reads models with the onnx package, which is not installed "
        f"in qnndoctor's environment; {extra_advice('model').sentence()}"
    )


# protobuf cannot parse a message of 2 GiB or more: an ONNX file beyond that
# is not a model (weights that large live in external-data files).
MAX_MODEL_BYTES = 2**31 - 1
# A declared tensor beyond this is not something an NPU session can hold
# (an HTP has a few GiB at most): measured, such a model (Relu on
# [100000, 100000, 100] float32) ran past 100 s on the simulator before QNN
# gave up with 1002, so it is refused before anything runs.
MAX_TENSOR_BYTES = 2**32
_ELEM_BYTES = {
    "float32": 4, "uint8": 1, "int8": 1, "uint16": 2, "int16": 2, "int32": 4, "int64": 8,
    "bool": 1, "float16": 2, "float64": 8, "uint32": 4, "uint64": 8, "bfloat16": 2,
    "uint4": 1, "int4": 1,
}  # fmt: skip


class ModelError(Exception):
    """The file is not a readable ONNX model (missing, empty, corrupt, truncated)."""


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: str
    dims: tuple[int | str | None, ...] | None  # None: no shape at all

    @property
    def free_dims(self) -> tuple[int, ...]:
        """Indexes of dimensions that are symbolic or unknown."""
        if self.dims is None:
            return ()
        return tuple(i for i, d in enumerate(self.dims) if not isinstance(d, int) or d <= 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "dtype": self.dtype,
            "dims": None if self.dims is None else list(self.dims),
        }


@dataclass(frozen=True)
class EpContextNode:
    name: str
    source: str | None
    embed_mode: int | None
    cache_path: str | None  # embed_mode 0: file name relative to the model
    embedded: bytes | None  # embed_mode 1: the context binary itself
    ep_sdk_version: str | None
    main_context: int | None


@dataclass(frozen=True)
class ExternalData:
    location: str
    exists: bool


@dataclass(frozen=True)
class ModelInfo:
    path: Path
    size: int
    ir_version: int
    opsets: dict[str, int]  # domain ("" = ai.onnx) -> version
    producer: str
    inputs: tuple[TensorInfo, ...]
    outputs: tuple[TensorInfo, ...]
    nodes: tuple[tuple[str, str, str], ...]  # (domain, op_type, name)
    initializer_types: dict[str, int]  # dtype -> count
    ep_contexts: tuple[EpContextNode, ...]
    external_data: tuple[ExternalData, ...]
    # ``Op:name`` of the QuantizeLinear nodes fed by a graph input and the
    # DequantizeLinear nodes that make a graph output: a compiled model keeps
    # them outside its EPContext node when compiled with
    # offload_graph_io_quantization on (the default).
    io_quantization: tuple[str, ...] = ()

    @property
    def op_counts(self) -> dict[str, int]:
        return dict(Counter(_op_key(domain, op) for domain, op, _ in self.nodes))

    @property
    def precision(self) -> str:
        """ep-context, qdq, float16, float32, mixed-float or other: what HTP will be asked to do."""
        if self.ep_contexts:
            return "ep-context"
        ops = {op for _, op, _ in self.nodes}
        if ops & QDQ_OPS:
            return "qdq"
        floats = {
            t.dtype for t in (*self.inputs, *self.outputs) if t.dtype in ("float16", "float32")
        }
        floats |= {t for t in self.initializer_types if t in ("float16", "float32")}
        if floats == {"float16"}:
            return "float16"
        if floats == {"float32"}:
            return "float32"
        if floats:
            return "mixed-float"
        return "other"

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "size": self.size,
            "ir_version": self.ir_version,
            "opsets": {domain or "ai.onnx": version for domain, version in self.opsets.items()},
            "producer": self.producer,
            "inputs": [t.to_json() for t in self.inputs],
            "outputs": [t.to_json() for t in self.outputs],
            "nodes_total": len(self.nodes),
            "op_counts": self.op_counts,
            "precision": self.precision,
            "ep_context_nodes": len(self.ep_contexts),
            "external_data": [
                {"location": e.location, "exists": e.exists} for e in self.external_data
            ],
        }


def _op_key(domain: str, op_type: str) -> str:
    return f"{domain or 'ai.onnx'}:{op_type}"


def _dims(value_info: Any) -> tuple[str, tuple[int | str | None, ...] | None]:
    if not value_info.type.HasField("tensor_type"):
        return value_info.type.WhichOneof("value") or "unknown", None
    tensor = value_info.type.tensor_type
    dtype = ELEM_TYPES.get(tensor.elem_type, f"type{tensor.elem_type}")
    if not tensor.HasField("shape"):
        return dtype, None
    dims: list[int | str | None] = []
    for dim in tensor.shape.dim:
        if dim.HasField("dim_value"):
            dims.append(int(dim.dim_value))
        elif dim.HasField("dim_param"):
            dims.append(str(dim.dim_param))
        else:
            dims.append(None)
    return dtype, tuple(dims)


def _tensor(value_info: Any) -> TensorInfo:
    dtype, dims = _dims(value_info)
    return TensorInfo(value_info.name, dtype, dims)


def _attribute(node: Any, name: str) -> Any:
    from onnx import helper

    for attribute in node.attribute:
        if attribute.name == name:
            return helper.get_attribute_value(attribute)
    return None


def _ep_context(node: Any) -> EpContextNode:
    embed_mode = _attribute(node, "embed_mode")
    cache = _attribute(node, "ep_cache_context")
    sdk = _attribute(node, "ep_sdk_version")
    source = _attribute(node, "source")
    embed = int(embed_mode) if embed_mode is not None else None
    data = cache if isinstance(cache, bytes) else None
    return EpContextNode(
        name=node.name,
        source=source.decode("utf-8", "replace") if isinstance(source, bytes) else None,
        embed_mode=embed,
        cache_path=data.decode("utf-8", "replace") if data is not None and embed != 1 else None,
        embedded=data if embed == 1 else None,
        ep_sdk_version=sdk.decode("utf-8", "replace") if isinstance(sdk, bytes) else None,
        main_context=_attribute(node, "main_context"),
    )


def _external(model: Any, folder: Path) -> tuple[ExternalData, ...]:
    """The external-data files the initializers name; a location that is
    absolute or leads out of the model's folder (``../``, a symlink) is a
    ``ModelError`` before any file is opened."""
    from onnx import TensorProto

    found: dict[str, bool] = {}
    root = folder.resolve()
    for tensor in model.graph.initializer:
        if tensor.data_location != TensorProto.EXTERNAL:
            continue
        for entry in tensor.external_data:
            if entry.key != "location" or entry.value in found:
                continue
            location = entry.value
            where = (root / location).resolve()
            if Path(location).is_absolute() or not where.is_relative_to(root):
                raise ModelError(
                    f"initializer {tensor.name!r} keeps its data in {location!r}, outside the "
                    f"model's folder ({folder}): onnxruntime refuses such a model, and qnndoctor "
                    "reads nothing from there. Move the data file beside the model and save the "
                    "model again with a relative location."
                )
            found[location] = where.is_file()
    return tuple(ExternalData(location, exists) for location, exists in found.items())


def _declared_bytes(dtype: str, dims: tuple[int | str | None, ...] | None) -> int:
    if dims is None or any(not isinstance(d, int) or d <= 0 for d in dims):
        return 0
    return math.prod(d for d in dims if isinstance(d, int)) * _ELEM_BYTES.get(dtype, 1)


def _check_sizes(graph: Any) -> None:
    """Refuses a model whose declared shapes no NPU session can hold."""
    declared = [_tensor(v) for v in (*graph.input, *graph.output, *graph.value_info)]
    declared += [
        TensorInfo(t.name, ELEM_TYPES.get(t.data_type, "?"), tuple(int(d) for d in t.dims))
        for t in graph.initializer
    ]
    for tensor in declared:
        size = _declared_bytes(tensor.dtype, tensor.dims)
        if size > MAX_TENSOR_BYTES:
            raise ModelError(
                f"tensor {tensor.name!r} is declared {tensor.dtype} "
                f"{list(tensor.dims or ())}: {size / 2**30:.3g} GiB, beyond the "
                f"{MAX_TENSOR_BYTES // 2**30} GiB any NPU session here can hold. Fix the "
                "model's shapes (qnndoctor runs nothing on such a model: QNN spends minutes "
                "before it fails with error 1002)."
            )


def _read_capped(path: Path) -> bytes:
    """The file's bytes: a regular file up to ``MAX_MODEL_BYTES``; anything
    else (a device, a pipe such as /dev/stdin, a socket) is refused before it
    is opened, so an endless stream is never read."""
    try:
        info = path.stat()
    except FileNotFoundError as exc:
        raise ModelError(f"{path}: no such file") from exc
    except OSError as exc:
        raise ModelError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if stat.S_ISDIR(info.st_mode):
        raise ModelError(f"{path}: is a folder, not an ONNX file")
    if not stat.S_ISREG(info.st_mode):
        kind = (
            "a pipe or stream"
            if stat.S_ISFIFO(info.st_mode) or stat.S_ISSOCK(info.st_mode)
            else "a device"
            if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)
            else "not a regular file"
        )
        raise ModelError(
            f"{path}: is {kind}, not a model file: qnndoctor reads ONNX models from regular "
            "files only (the session needs the file and its folder too); save the model to a "
            "file first"
        )
    if info.st_size > MAX_MODEL_BYTES:
        raise ModelError(
            f"{path}: {info.st_size} bytes, beyond the 2 GiB an ONNX file can hold (larger "
            "models keep their weights in external-data files): not an ONNX model"
        )
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_MODEL_BYTES + 1)
    except OSError as exc:
        raise ModelError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if len(data) > MAX_MODEL_BYTES:  # it grew while read
        raise ModelError(f"{path}: grew beyond 2 GiB while read: not an ONNX model")
    return data


def _parse(data: bytes, path: Path) -> Any:
    try:
        import onnx
        from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
    except ImportError as exc:
        raise ModelError(onnx_missing()) from exc
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeWarning, ValueError) as exc:
        raise ModelError(
            f"{path}: not an ONNX model, or a corrupt or truncated one ({type(exc).__name__}: {exc})"
        ) from exc
    if model.ir_version <= 0 or not model.HasField("graph"):
        raise ModelError(
            f"{path}: not an ONNX model (the file parses, but has no IR version or no graph)"
        )
    return model


def read_model(path: str | Path) -> ModelInfo:
    """The static facts of one ONNX file; ``ModelError`` when it cannot be read."""
    path = Path(path)
    data = _read_capped(path)
    if not data:
        raise ModelError(f"{path}: the file is empty")
    model = _parse(data, path)
    graph = model.graph
    external = _external(model, path.parent)
    _check_sizes(graph)
    types: Counter[str] = Counter(
        ELEM_TYPES.get(t.data_type, f"type{t.data_type}") for t in graph.initializer
    )
    nodes = tuple((n.domain, n.op_type, n.name) for n in graph.node)
    contexts = tuple(_ep_context(n) for n in graph.node if (n.domain, n.op_type) == EP_CONTEXT)
    inputs = {v.name for v in graph.input}
    outputs = {v.name for v in graph.output}
    io_quantization = tuple(
        f"{n.op_type}:{n.name}"
        for n in graph.node
        if n.domain in ("", "ai.onnx")
        and (
            (n.op_type == "QuantizeLinear" and n.input[:1] and n.input[0] in inputs)
            or (n.op_type == "DequantizeLinear" and n.output[:1] and n.output[0] in outputs)
        )
    )
    return ModelInfo(
        path=path,
        size=len(data),
        ir_version=int(model.ir_version),
        opsets={
            o.domain if o.domain != "ai.onnx" else "": int(o.version) for o in model.opset_import
        },
        producer=" ".join(p for p in (model.producer_name, model.producer_version) if p),
        inputs=tuple(_tensor(v) for v in graph.input),
        outputs=tuple(_tensor(v) for v in graph.output),
        nodes=nodes,
        initializer_types=dict(types),
        ep_contexts=contexts,
        external_data=external,
        io_quantization=io_quantization,
    )
