"""Sub-models of a model, cut with ``onnx`` in qnndoctor's own environment.

A sub-model keeps a set of the model's nodes (in the file's topological
order) with the initializers they read; the tensors they read from outside
the set become graph inputs, and the tensors they make that the rest of the
model (or the model's output) reads become graph outputs. Types and shapes
of inner tensors come from ONNX shape inference on the whole model once; a
cut through a tensor whose type stays unknown is refused (``CutError``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..loading import ELEM_TYPES


class CutError(Exception):
    """The sub-model cannot be made (a tensor of unknown type on the cut)."""


@dataclass(frozen=True)
class NodeInfo:
    """One node as a report names it: op, name, inputs with type and shape, attributes."""

    index: int
    name: str
    op_type: str
    domain: str
    inputs: tuple[dict[str, Any], ...]
    attributes: dict[str, Any]

    @property
    def key(self) -> str:
        """``Op:name``, as the placement names nodes."""
        return f"{self.op_type}:{self.name}"

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "name": self.name,
            "op_type": self.op_type,
            "domain": self.domain or "ai.onnx",
            "inputs": list(self.inputs),
            "attributes": dict(self.attributes),
        }


def _plain(value: Any) -> Any:
    """An attribute value as JSON (tensors and graphs as a short description)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value][:64]
    return type(value).__name__


class Graph:
    """The model, shape-inferred once, ready to be cut."""

    def __init__(self, path: Path) -> None:
        import onnx

        self.path = path
        model = onnx.load(str(path), load_external_data=False)
        try:
            model = onnx.shape_inference.infer_shapes(model)
        except (onnx.shape_inference.InferenceError, ValueError):
            pass  # types stay as declared; a cut through an unknown one is refused
        self.model = model
        graph = model.graph
        self.nodes = list(graph.node)
        self.initializers = {t.name: t for t in graph.initializer}
        self.types: dict[str, Any] = {}
        for value in (*graph.value_info, *graph.input, *graph.output):
            self.types[value.name] = value
        self.graph_inputs = [v.name for v in graph.input if v.name not in self.initializers]
        self.graph_outputs = [v.name for v in graph.output]
        self.consumers: dict[str, list[int]] = {}
        for index, node in enumerate(self.nodes):
            for name in node.input:
                self.consumers.setdefault(name, []).append(index)

    def __len__(self) -> int:
        return len(self.nodes)

    def info(self, index: int) -> NodeInfo:
        from onnx import helper

        node = self.nodes[index]
        inputs = []
        for name in node.input:
            if not name:
                continue
            entry: dict[str, Any] = {"name": name, "initializer": name in self.initializers}
            if name in self.initializers:
                tensor = self.initializers[name]
                entry["dtype"] = ELEM_TYPES.get(tensor.data_type, f"type{tensor.data_type}")
                entry["shape"] = [int(d) for d in tensor.dims]
            elif name in self.types:
                tensor_type = self.types[name].type.tensor_type
                entry["dtype"] = ELEM_TYPES.get(tensor_type.elem_type, "unknown")
                entry["shape"] = [
                    int(d.dim_value) if d.HasField("dim_value") else (d.dim_param or None)
                    for d in tensor_type.shape.dim
                ]
            inputs.append(entry)
        attributes = {a.name: _plain(helper.get_attribute_value(a)) for a in node.attribute}
        return NodeInfo(index, node.name, node.op_type, node.domain, tuple(inputs), attributes)

    def _value(self, name: str) -> Any:
        value = self.types.get(name)
        if value is None or not value.type.HasField("tensor_type"):
            raise CutError(f"tensor {name!r} has no known type: the model cannot be cut there")
        return value

    def outputs_of(self, indexes: Sequence[int]) -> list[str]:
        """The tensors the nodes at ``indexes`` make that leave the set."""
        inside = set(indexes)
        return [
            name
            for index in sorted(inside)
            for name in self.nodes[index].output
            if name
            and (
                name in self.graph_outputs
                or any(c not in inside for c in self.consumers.get(name, []))
            )
        ]

    def _constants_for(self, indexes: Sequence[int]) -> set[int]:
        """The Constant nodes (no inputs) outside ``indexes`` whose outputs the
        set reads: kept with it, so that a shape or an axis stays a constant
        instead of becoming a graph input fed with random data."""
        makers = {
            out: i
            for i, node in enumerate(self.nodes)
            if node.op_type == "Constant" and not node.input
            for out in node.output
        }
        return {
            makers[name] for index in indexes for name in self.nodes[index].input if name in makers
        }

    def is_float(self, name: str) -> bool:
        value = self.types.get(name)
        return bool(
            value is not None
            and value.type.HasField("tensor_type")
            and value.type.tensor_type.elem_type in (1, 10, 11, 16)
        )

    def cut(self, indexes: Sequence[int], extra_outputs: Sequence[str] = ()) -> Any:
        """The sub-model of the nodes at ``indexes`` (a ModelProto);
        ``extra_outputs``: tensors made inside it to expose as outputs too."""
        import onnx
        from onnx import helper

        chosen = sorted(set(indexes) | self._constants_for(indexes))
        made: set[str] = set()
        inputs: list[str] = []
        initializers: list[str] = []
        for index in chosen:
            for name in self.nodes[index].input:
                if not name or name in made or name in inputs or name in initializers:
                    continue
                (initializers if name in self.initializers else inputs).append(name)
            made.update(n for n in self.nodes[index].output if n)
        outputs = self.outputs_of(sorted(set(indexes)))  # not the constants kept with it
        outputs += [n for n in extra_outputs if n in made and n not in outputs]
        if not outputs:  # nothing leaves the set: its last node's outputs do
            outputs = [n for n in self.nodes[chosen[-1]].output if n]
        graph = helper.make_graph(
            [self.nodes[i] for i in chosen],
            f"{self.model.graph.name or 'model'}_cut",
            [self._value(n) for n in inputs],
            [self._value(n) for n in outputs],
            initializer=[self.initializers[n] for n in initializers],
        )
        model = helper.make_model(
            graph, opset_imports=list(self.model.opset_import), ir_version=self.model.ir_version
        )
        for entry in self.model.metadata_props:
            model.metadata_props.append(entry)
        model.functions.extend(self.model.functions)  # model-local functions the nodes call
        return onnx.ModelProto.FromString(model.SerializeToString())

    def save_cut(
        self, indexes: Sequence[int], path: Path, extra_outputs: Sequence[str] = ()
    ) -> Path:
        import onnx

        onnx.save(self.cut(indexes, extra_outputs), str(path))
        return path
