"""Minimal ONNX graph surgery on the protobuf wire format (no ``onnx`` package needed).

Used by the piper engine to make a VITS voice deterministic and to expose its phoneme
durations:

* every ``RandomNormalLike(x) -> y`` node is replaced by ``Slice(noise_k, 0, Shape(x)) -> y``,
  where ``noise_k`` is a new graph input that the caller fills from a seeded generator (so the
  same text gives the same audio, and the noise keeps the model's standard normal distribution);
* the output of the graph's single ``Ceil`` node (the per-phoneme-id frame counts ``w_ceil``)
  is added as a graph output, as ``piper.patch_voice_with_alignment`` does.

Only the handful of protobuf fields needed here are decoded; everything else is copied byte for
byte.  Field numbers are those of ``onnx.proto`` (ModelProto.graph = 7, GraphProto.node = 1,
.initializer = 5, .input = 11, .output = 12; NodeProto.input = 1, .output = 2, .name = 3,
.op_type = 4).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["PatchedModel", "patch_vits_model"]

_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5
_FLOAT, _INT64 = 1, 7  # TensorProto.DataType
_NOISE_RANK = 3  # every RandomNormalLike in a piper VITS graph makes a (1, C, T) tensor
_ZEROS = "duplexeval/zeros_i64"


@dataclass(frozen=True)
class PatchedModel:
    """A patched model: ``model`` (serialized ModelProto bytes) and the names it exposes.

    ``noise_inputs``: the new float32 inputs, one per replaced ``RandomNormalLike`` node, in
    graph order; each must be at least as large as the tensor it stands for, in every axis (it is
    cropped to that shape).  ``durations_output``: the added ``w_ceil`` output, or ``None`` when
    the graph has no single ``Ceil`` node.
    """

    model: bytes
    noise_inputs: tuple[str, ...]
    durations_output: str | None


def patch_vits_model(model: bytes) -> PatchedModel:
    """Patch a serialized VITS ModelProto (see the module docstring); the input is unchanged.

    Raises ``ValueError`` when the bytes are not a model with a graph.
    """
    out = bytearray()
    graph: memoryview | None = None
    for number, wire, value, raw in _fields(memoryview(model)):
        if number == 7 and wire == _LEN:
            if graph is not None:
                raise ValueError("ONNX model with more than one graph")
            graph = value
        else:
            out += raw
    if graph is None:
        raise ValueError("not an ONNX model: no graph")
    new_graph, noise_inputs, durations = _patch_graph(graph)
    out += _len_field(7, new_graph)
    return PatchedModel(bytes(out), noise_inputs, durations)


def _patch_graph(graph: memoryview) -> tuple[bytes, tuple[str, ...], str | None]:
    out = bytearray()
    noise_inputs: list[str] = []
    ceil_outputs: list[str] = []
    outputs: set[str] = set()
    for number, wire, value, raw in _fields(graph):
        if number == 1 and wire == _LEN:
            op_type, inputs, node_outputs = _node_summary(value)
            if op_type == "RandomNormalLike" and len(inputs) == 1 and len(node_outputs) == 1:
                noise = f"duplexeval/noise_{len(noise_inputs)}"
                noise_inputs.append(noise)
                shape = f"{node_outputs[0]}/duplexeval_shape"
                out += _len_field(1, _node("Shape", [inputs[0]], [shape], f"{noise}/shape"))
                out += _len_field(1, _node("Slice", [noise, _ZEROS, shape], node_outputs,
                                           f"{noise}/slice"))
                continue
            if op_type == "Ceil":
                ceil_outputs.extend(node_outputs)
        elif number == 12 and wire == _LEN:
            outputs.update(_strings(value, 1))
        out += raw
    if noise_inputs:
        zeros = (_varint_field(1, _NOISE_RANK) + _varint_field(2, _INT64)
                 + _len_field(8, _ZEROS.encode()) + _len_field(9, bytes(8 * _NOISE_RANK)))
        out += _len_field(5, zeros)
        float_type = _len_field(1, _varint_field(1, _FLOAT))  # TypeProto.tensor_type.elem_type
        for name in noise_inputs:
            out += _len_field(11, _len_field(1, name.encode()) + _len_field(2, float_type))
    durations = ceil_outputs[0] if len(ceil_outputs) == 1 else None
    if durations is not None and durations not in outputs:
        out += _len_field(12, _len_field(1, durations.encode()))
    return bytes(out), tuple(noise_inputs), durations


def _node_summary(node: memoryview) -> tuple[str, list[str], list[str]]:
    """(op_type, inputs, outputs) of a serialized NodeProto."""
    op_type = ""
    inputs: list[str] = []
    outputs: list[str] = []
    for number, wire, value, _ in _fields(node):
        if wire != _LEN:
            continue
        if number == 4:
            op_type = bytes(value).decode()
        elif number == 1:
            inputs.append(bytes(value).decode())
        elif number == 2:
            outputs.append(bytes(value).decode())
    return op_type, inputs, outputs


def _node(op_type: str, inputs: list[str], outputs: list[str], name: str) -> bytes:
    data = b"".join(_len_field(1, s.encode()) for s in inputs)
    data += b"".join(_len_field(2, s.encode()) for s in outputs)
    return data + _len_field(3, name.encode()) + _len_field(4, op_type.encode())


def _strings(message: memoryview, field: int) -> list[str]:
    return [bytes(v).decode() for n, w, v, _ in _fields(message) if n == field and w == _LEN]


def _fields(data: memoryview) -> Iterator[tuple[int, int, memoryview, memoryview]]:
    """(field number, wire type, payload, raw bytes of the whole field) of each field (views)."""
    i = 0
    while i < len(data):
        start = i
        key, i = _read_varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            _, i = _read_varint(data, i)
            value = data[i:i]
        elif wire == _LEN:
            size, i = _read_varint(data, i)
            value = data[i:i + size]
            i += size
        elif wire == _FIXED64:
            value, i = data[i:i + 8], i + 8
        elif wire == _FIXED32:
            value, i = data[i:i + 4], i + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        if i > len(data):
            raise ValueError("truncated protobuf message")
        yield number, wire, value, data[start:i]


def _read_varint(data: memoryview, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if i >= len(data):
            raise ValueError("truncated protobuf varint")
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result, i


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _varint_field(number: int, value: int) -> bytes:
    return _varint(number << 3 | _VARINT) + _varint(value)


def _len_field(number: int, payload: bytes | memoryview) -> bytes:
    return _varint(number << 3 | _LEN) + _varint(len(payload)) + bytes(payload)
