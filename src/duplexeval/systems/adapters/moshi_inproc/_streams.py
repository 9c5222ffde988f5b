"""Streaming states of moshi modules as values: own, bind, capture, restore, copy into rows.

moshi keeps a module's streaming state *inside* the module (``module._streaming_state``, one
``State`` object per streaming submodule, reached with ``get_streaming_state`` /
``set_streaming_state``).  Here each session owns its own set of ``State`` objects
(:class:`StreamSet`) and binds them to the shared modules before it steps, so several sessions
(a pass, its samples' replays, a batch of forks) live side by side on one loaded model.

A state's contents, as captured (:func:`capture`) and restored (:func:`restore`):

* tensors (KV caches, their end offsets, RoPE offsets, conv ``previous``/``first``, transposed
  conv ``partial``, ``exec_mask``) are cloned, and restored with in-place ``copy_`` so live
  tensor addresses stay valid; of a ring KV cache ``[2, B, H, capacity, D]`` only the entries
  written so far (``min(end_offset, capacity)``) are kept: the others are masked out of
  attention until a step writes them, so what they hold never counts (a fork at 20 s of
  Moshi's 240 s context keeps a twelfth of the cache);
* Python numbers (``offset_cpu`` counters) are copied;
* nested plain objects (``RingKVCache``) are walked the same way;
* CUDA graphs, exit stacks, callbacks and devices are skipped: they are not state.

Batch rows (:func:`copy_into_row`): every state tensor of a batch of ``B`` rows has the shape of
the single-row tensor with ``1`` replaced by ``B`` in exactly one dimension (dimension 0 for most,
1 for ``RingKVCache.cache [2, B, H, T, D]``); row ``i`` is that dimension's slice ``i``.  A
tensor with no batch dimension must be equal in every row.  Python counters are taken from the
first row: in Moshi they only select per-step weights, which only the depformer uses, and the
depformer's state lives within one step (it is not part of a stream).
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["StreamSet", "capture", "copy_into_row", "restore"]

_PLAIN = (int, float, bool, str, type(None))
_LEAVES = (torch.Tensor, *_PLAIN)


def _fields(obj: Any) -> dict[str, Any]:
    """The attributes of a state object that hold state (tensors, numbers, nested objects)."""
    found = {}
    for name, value in vars(obj).items():
        if isinstance(value, _LEAVES) or _is_nested(value):
            found[name] = value
    return found


def _is_nested(value: Any) -> bool:
    """Plain moshi objects inside a state (``RingKVCache``); not graphs, stacks or callables."""
    module = type(value).__module__
    return (module.startswith("moshi.") and hasattr(value, "__dict__") and not callable(value)
            and type(value).__name__ != "CUDAGraphed")


def _is_ring(obj: Any) -> bool:
    return type(obj).__name__ == "RingKVCache"


def _ring_length(obj: Any) -> int:
    """Entries of a ``RingKVCache`` that hold keys and values: ``min(end_offset, capacity)``
    (the rest were never written and are masked until written)."""
    return min(int(obj.end_offset.max()), int(obj.capacity))


def _capture_obj(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in _fields(obj).items():
        if _is_ring(obj) and name == "cache":
            out[name] = value[:, :, :, :_ring_length(obj)].detach().clone()
        elif isinstance(value, torch.Tensor):
            out[name] = value.detach().clone()
        elif isinstance(value, _PLAIN):
            out[name] = value
        else:
            out[name] = _capture_obj(value)
    return out


def capture(states: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a module's streaming states (``get_streaming_state`` form)."""
    return {name: _capture_obj(state) for name, state in states.items()}


def _restore_obj(obj: Any, saved: dict[str, Any], path: str) -> None:
    live = _fields(obj)
    if set(live) != set(saved):
        raise ValueError(f"streaming state {path}: fields {sorted(live)} != {sorted(saved)}")
    for name, value in saved.items():
        target = live[name]
        if _is_ring(obj) and name == "cache":
            target[:, :, :, :value.shape[3]].copy_(value)
        elif isinstance(target, torch.Tensor):
            target.copy_(value)
        elif isinstance(target, _PLAIN):
            setattr(obj, name, value)
        else:
            _restore_obj(target, value, f"{path}.{name}")


def restore(states: dict[str, Any], saved: dict[str, Any]) -> None:
    """Write a capture back into live states (tensors in place)."""
    if set(states) != set(saved):
        raise ValueError("streaming state: the snapshot is of another model")
    for name, state in states.items():
        _restore_obj(state, saved[name], name)


def _batch_dim(single: torch.Tensor, batched: torch.Tensor, rows: int, path: str) -> int | None:
    """The dimension holding the rows, or ``None`` for a tensor without one (equal shapes:
    shared by the rows, or a batch of one row, where the whole tensor is the row)."""
    if single.shape == batched.shape:
        return None
    dims = [d for d, (a, b) in enumerate(zip(single.shape, batched.shape, strict=True))
            if a != b]
    if len(dims) == 1 and single.shape[dims[0]] == 1 and batched.shape[dims[0]] == rows:
        return dims[0]
    raise ValueError(f"streaming state {path}: cannot find the batch dimension of "
                     f"{tuple(single.shape)} in {tuple(batched.shape)}")


def _copy_row_obj(obj: Any, saved: dict[str, Any], row: int, rows: int, path: str) -> None:
    live = _fields(obj)
    for name, value in saved.items():
        target = live[name]
        where = f"{path}.{name}"
        if _is_ring(obj) and name == "cache":
            target[:, row:row + 1, :, :value.shape[3]].copy_(value)
        elif isinstance(target, torch.Tensor):
            dim = _batch_dim(value, target, rows, where)
            if dim is None:
                if not torch.equal(target, value) and row > 0:
                    raise ValueError(f"streaming state {where}: shared by all rows, "
                                     "but the forks differ")
                target.copy_(value)
            else:
                target.narrow(dim, row, 1).copy_(value)
        elif isinstance(target, _PLAIN):
            if row == 0:
                setattr(obj, name, value)
        else:
            _copy_row_obj(target, value, row, rows, where)


def copy_into_row(states: dict[str, Any], saved: dict[str, Any], row: int, rows: int) -> None:
    """Write a single-row capture into row ``row`` of live states of ``rows`` rows."""
    if set(states) != set(saved):
        raise ValueError("streaming state: the snapshot is of another model")
    for name, state in states.items():
        _copy_row_obj(state, saved[name], row, rows, name)


class StreamSet:
    """A set of streaming states for one module, owned by a session and bound on demand.

    ``StreamSet(module, batch)`` starts fresh states of ``batch`` rows without disturbing the
    states bound to the module at the time (they are bound again afterwards)."""

    def __init__(self, module: torch.nn.Module, batch: int) -> None:
        self.module = module
        self.batch = batch
        previous = module.get_streaming_state() if module.is_streaming else None
        if previous is not None:
            module.set_streaming_state(dict.fromkeys(previous))
        module.streaming(batch)  # the returned exit stack only unbinds: not needed
        self.states: dict[str, Any] = module.get_streaming_state()
        if previous is not None:
            module.set_streaming_state(previous)

    def bind(self) -> None:
        """Make these the module's live states (cheap when they already are)."""
        if self.module._streaming_state is not self.states[""]:
            self.module.set_streaming_state(self.states)

    def unbind(self) -> None:
        """Leave the module without streaming states if these are bound (so moshi's own
        ``streaming()`` can start on it)."""
        if self.module._streaming_state is self.states[""]:
            self.module.set_streaming_state(dict.fromkeys(self.states))

    def capture(self) -> dict[str, Any]:
        return capture(self.states)

    def restore(self, saved: dict[str, Any]) -> None:
        restore(self.states, saved)

    def copy_into_row(self, saved: dict[str, Any], row: int) -> None:
        copy_into_row(self.states, saved, row, self.batch)
