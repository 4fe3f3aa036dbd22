"""The one dispatch point: every op in the derivative table runs through :func:`dispatch`.

It runs the op's NumPy forward, and when recording is on and some input requires grad it builds
the backward node: ``next_functions`` from each input's gradient edge, the saved values the
formulas ask for, and the shapes needed to undo broadcasting. Then it tells the listeners.
Custom :class:`gradviz.autograd.Function` nodes are wired with the same helpers
(``collect_next_edges``, ``set_history``) and reported with the same ``op`` event.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz import _dtype
from gradviz.autograd.events import _listeners, emit
from gradviz.autograd.grad_mode import _state
from gradviz.autograd.graph import (
    FREED_MESSAGE,
    Node,
    SavedVariable,
    collect_next_edges,
    set_history,
)
from gradviz.ops import _formula
from gradviz.ops.derivatives import OpInfo
from gradviz.tensor import Tensor, _is_number, _type_name

__all__ = ["dispatch", "dispatch_inplace", "OpNode"]

_FLOAT64 = np.dtype(np.float64)
# Nodes written by hand in PyTorch's C++ (not generated from derivatives.yaml): their name()
# is qualified, e.g. "torch::autograd::CopyBackwards", while the class is "CopyBackwards".
_CPP_NODES = frozenset({"CopyBackwards"})


class _Freed:
    """Marks a saved tensor released after backward."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<freed>"


FREED = _Freed()


class OpNode(Node):
    """Base of every table op's node class (``MulBackward0`` ...). The formulas are the op's."""

    __slots__ = ("_store", "_in_meta")
    _op: OpInfo  # set on each generated subclass

    def apply(self, grad_outputs: list, create_graph: bool) -> tuple:
        grad = grad_outputs[0]
        edges = self.next_functions
        if grad is None:
            return (None,) * len(edges)
        op = self._op
        saved = self._store
        in_meta = self._in_meta
        out = []
        for i, names in enumerate(op.needs):
            if names is None or edges[i][0] is None:
                out.append(None)
                continue
            args = [_value(self, saved, n, create_graph) for n in names]
            g = op.grads[op.inputs[i]](grad, *args)
            if in_meta is not None and in_meta[i] is not None:
                shape, dt = in_meta[i]
                g = _formula.to_dtype(_formula.sum_to(g, shape), dt)
            out.append(g)
        return tuple(out)

    def release_variables(self) -> None:
        saved = self._store
        # A number operand of a tensor-tensor op (x * 3) is a wrapped-number tensor in PyTorch,
        # saved and freed like any tensor; Scalar arguments (x ** 3's exponent, alpha) are kept.
        tensor_args = self._op.inputs if self._op.broadcasts else ()
        for name, value in saved.items():
            if type(value) is SavedVariable or (name in tensor_args and _is_number(value)):
                saved[name] = FREED

    def _inspect_saved(self) -> list[tuple[str, Any]]:
        return [(n, self._store[n]) for n in self._op.saved_names if n in self._store]


def _value(node: Node, saved: dict, name: str, create_graph: bool) -> Any:
    """A saved value for a formula: an array in a plain backward, a tensor under create_graph."""
    v = saved[name]
    if type(v) is SavedVariable:
        if create_graph:
            return v.unpack(node)
        v.check_version(node)
        return v.data
    if v is FREED:
        raise RuntimeError(FREED_MESSAGE)
    return v


def _saved_property(name: str) -> property:
    def get(self: OpNode) -> Any:
        if name not in self._store:
            return None  # not needed by this graph's gradients, as PyTorch reports it
        v = self._store[name]
        if v is FREED:
            raise RuntimeError(FREED_MESSAGE)
        if type(v) is SavedVariable:
            return v.unpack(self)
        if _is_number(v) and name in self._op.inputs:
            return Tensor._make(np.asarray(v))  # PyTorch wraps a scalar operand in a tensor
        return v

    get.__name__ = f"_saved_{name}"
    return property(get, doc=f"The value saved for backward as ``{name}``.")


def _node_class(op: OpInfo) -> type:
    cls = op.node_cls
    if cls is None:
        ns: dict[str, Any] = {"__slots__": (), "_op": op, "__module__": "gradviz.autograd.nodes",
                              "__doc__": f"Backward of ``{op.name}`` (PyTorch's {op.node})."}
        if op.node in _CPP_NODES:
            ns["name"] = lambda self, _n=f"torch::autograd::{op.node}": _n
        for name in op.saved_names:
            ns[f"_saved_{name}"] = _saved_property(name)
        cls = op.node_cls = type(op.node, (OpNode,), ns)
    return cls


def _save(op: OpInfo, name: str, args: tuple, arrays: list, kwargs: dict, result: Tensor) -> Any:
    if name == "result":
        return SavedVariable(result, is_output=True)
    inputs = op.inputs
    if name in inputs:
        a = args[inputs.index(name)]
        return SavedVariable(a) if isinstance(a, Tensor) else a
    if name.endswith("_sym_sizes"):
        return tuple(np.shape(arrays[inputs.index(name[:-10])]))
    if name.endswith("_sym_numel"):
        return int(np.size(arrays[inputs.index(name[:-10])]))
    if name.endswith("_dtype"):
        return arrays[inputs.index(name[:-6])].dtype
    return kwargs[name] if name in kwargs else op.defaults[name]


def _record(op: OpInfo, result: Tensor, args: tuple, arrays: list, kwargs: dict,
            edges: tuple) -> Node:
    node = _node_class(op)()
    node.next_functions = edges
    out = result._data
    node._out_meta = ((out.shape, out.dtype),)
    set_history(node, (result,))
    saved: dict[str, Any] = {}
    for i, names in enumerate(op.needs):
        if names is None or edges[i][0] is None:
            continue
        for n in names:
            if n not in saved:
                saved[n] = _save(op, n, args, arrays, kwargs, result)
    for n in op.attr_names:  # non-tensor arguments are always kept, as PyTorch keeps them
        if n not in saved:
            saved[n] = _save(op, n, args, arrays, kwargs, result)
    node._store = saved
    in_meta = None
    if op.broadcasts:
        for i, a in enumerate(arrays):
            if edges[i][0] is not None and (a.shape != out.shape or a.dtype != out.dtype):
                if in_meta is None:
                    in_meta = [None] * len(arrays)
                in_meta[i] = (a.shape, a.dtype)
    node._in_meta = in_meta
    return node


def _arrays(op: OpInfo, args: tuple) -> tuple[list, bool]:
    arrays = []
    requires = False
    for a in args:
        if isinstance(a, Tensor):
            arrays.append(a._data)
            requires = requires or a._requires_grad
        elif _is_number(a):
            arrays.append(a)
        else:
            raise TypeError(f"{op.name}(): expected a Tensor or a number, got "
                            f"{type(a).__name__}")
    return arrays, requires


def _forward(op: OpInfo, arrays: list, kwargs: dict) -> np.ndarray:
    try:
        out = op.forward(*arrays, **kwargs)
    except ValueError as e:
        if op.broadcasts:
            raise RuntimeError(_broadcast_message(op, arrays)) from None
        raise RuntimeError(f"{op.name}(): {e}") from None
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    # NOTE: test ndarray-ness, not getattr(a, "dtype", None): np.dtype(None) is float64, so a
    # Python scalar operand would compare equal to float64 and `int_tensor * 2.5` stay float64.
    if op.promotes and out.dtype == _FLOAT64 and not any(
            isinstance(a, np.ndarray) and a.dtype == _FLOAT64 for a in arrays):
        # PyTorch: integer tensors combined with Python floats (or divided) give the default
        # float type; NumPy would give float64.
        out = out.astype(_dtype.get_default_dtype().np)
    return out


def dispatch(op: OpInfo, *args: Any, **kwargs: Any) -> Tensor:
    """Run ``op`` on ``args`` (tensors or numbers) and record its node when needed.

    Example:
        >>> import gradviz
        >>> from gradviz.ops.derivatives import OPS
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> dispatch(OPS["mul"], x, 3).grad_fn
        <MulBackward0 object at ...>
    """
    arrays, requires = _arrays(op, args)
    result = Tensor._make(_forward(op, arrays, kwargs))
    if op.view:
        base = args[0]
        result._base = base._base if base._base is not None else base
        result._version_counter = base._version_counter
    node = None
    # Only floating point results can carry gradients (a cast to int ends the graph).
    if requires and _state.enabled and op.node is not None and result._data.dtype.kind == "f":
        node = _record(op, result, args, arrays, kwargs, collect_next_edges(args))
    if _listeners:
        emit("op", {"name": op.name, "node": node, "inputs": args, "outputs": (result,),
                    "kwargs": kwargs, "inplace": False})
    return result


def dispatch_inplace(op: OpInfo, self: Tensor, *others: Any, **kwargs: Any) -> Tensor:
    """Run ``op`` writing into ``self``: bump its version, and make the op's node its
    ``grad_fn`` when recording (its old ``grad_fn`` becomes the node's first edge)."""
    recording = _state.enabled
    if recording and self._requires_grad and self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    args = (self, *others)
    arrays, requires = _arrays(op, args)
    record = recording and requires and op.node is not None
    if record and self._base is not None and (self._base._requires_grad or requires):
        raise RuntimeError(
            f"{op.name}: in-place operation on a view of a tensor that takes part in autograd "
            "is not supported by gradviz; write it out of place (for example `y = y * 2`) or "
            "clone the view first.")
    out = _forward(op, arrays, kwargs)
    if out.shape != self._data.shape:
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the "
                           f"broadcast shape {list(out.shape)}")
    original = self
    if record and "self" in op.saved_names:
        # Formulas see `self` as it was before the write: keep a snapshot of it.
        original = Tensor._make(self._data.copy(), self._requires_grad)
        original.grad_fn, original._output_nr = self.grad_fn, self._output_nr
    edges = collect_next_edges(args) if record else ()
    try:
        np.copyto(self._data, out, casting="same_kind")
    except TypeError:
        raise RuntimeError(
            f"result type {_type_name(out.dtype)[8:-6]} can't be cast to the desired output "
            f"type {_type_name(self._data.dtype)[8:-6]}") from None
    counter = self._version_counter
    counter.version += 1
    counter.last_op = op.node if record else None
    node = None
    if record:
        node = _record(op, self, (original, *others), arrays, kwargs, edges)
    if _listeners:
        emit("op", {"name": op.name + "_" if not op.name.endswith("_") else op.name,
                    "node": node, "inputs": args, "outputs": (self,), "kwargs": kwargs,
                    "inplace": True})
    return self


def _broadcast_message(op: OpInfo, arrays: list) -> str:
    """PyTorch's text for shapes that do not broadcast, plus the op and both shapes."""
    shapes = [np.shape(a) for a in arrays]
    a, b = shapes[0], shapes[1] if len(shapes) > 1 else ()
    nd = max(len(a), len(b))
    for k in range(1, nd + 1):
        sa = a[-k] if k <= len(a) else 1
        sb = b[-k] if k <= len(b) else 1
        if sa != sb and sa != 1 and sb != 1:
            return (f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                    f"non-singleton dimension {nd - k} ({op.name}: input shapes "
                    f"{[list(s) for s in shapes]} do not broadcast; reshape or unsqueeze one "
                    "operand so that each dimension matches or is 1)")
    return f"{op.name}: input shapes {[list(s) for s in shapes]} do not broadcast"
