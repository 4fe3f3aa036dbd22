"""Fast paths: what :func:`~gradviz.ops.dispatch.dispatch` does for one row, specialised once.

NOTE [fast paths]
``dispatch`` is general: any number of inputs, any mix of tensors and numbers, broadcasting,
type promotion, views. Most calls of most programs are a one- or two-input elementwise op on
float tensors of one shape (``y * 1.01``, ``h + b``, ``x.tanh()``). For each row that can take
such calls, :func:`make` builds a function with the row's constants bound in (its node class,
its forward, its save plans), that handles exactly those calls in a few lines and hands every
other call to ``dispatch`` unchanged. The result, the node, its ``next_functions``, its saved
values and the ``op`` event are the ones ``dispatch`` makes (tests/test_fastpath.py compares the
two on every eligible row). This is where speed lives (docs/performance.md): the engine and the
derivative table stay plain.

A call takes the fast path when every positional argument is a ``Tensor`` (exactly, not a
subclass) of a floating dtype or a Python ``float``/``int``, and, for a broadcasting row, all
its tensors and its result have one shape and one dtype (so nothing needs un-broadcasting or
promoting; a result that came out broadcast is computed again by the general path).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gradviz.autograd.events import _listeners, emit
from gradviz.autograd.grad_mode import _state
from gradviz.autograd.graph import SavedVariable, edge_pair, next_sequence_nr, save_value
from gradviz.ops.opinfo import OpInfo, saved_for
from gradviz.tensor import Tensor

__all__ = ["make", "eligible"]


def eligible(op: OpInfo) -> bool:
    """Rows with one output, not a view, one or two inputs, and saved values that are inputs,
    their shapes, the result or forward keyword arguments (what the fast path can save)."""
    if op.general or op.view or op.node is None or len(op.inputs) not in (1, 2):
        return False
    return all(n in op.inputs or n == "result" or n in op.attr_names
               or (n.endswith(("_sym_sizes", "_sym_numel")) and n[:-10] in op.inputs)
               or (n.endswith("_sym_strides") and n[:-12] in op.inputs)
               for n in op.saved_names)


# Where a saved value comes from (the fast path's save plans).
_INPUT, _SIZES, _NUMEL, _RESULT, _KWARG, _STRIDES = range(6)


def _edge(t: Any) -> tuple:
    """Where a gradient for argument ``t`` goes (``collect_next_edges`` for one argument)."""
    if type(t) is not Tensor or not t._requires_grad:
        return _NO_EDGE
    fn = t._grad_fn
    return (fn, t._output_nr) if fn is not None and t._view_meta is None else edge_pair(t)


_NO_EDGE = (None, 0)


def make(op: OpInfo, dispatch: Callable[..., Tensor], node_class: type,
         out_metas: dict, make_out_meta: Callable[[tuple], tuple]) -> Callable[..., Tensor] | None:
    """The fast path of ``op`` (None if the row is not :func:`eligible`)."""
    if not eligible(op):
        return None
    forward, quiet, broadcasts, name = op.forward, op.quiet, op.broadcasts, op.name
    inputs, defaults, plans = op.inputs, op.defaults, {}
    new = object.__new__

    def save_plan(bits: int) -> tuple:
        # What to save when the inputs flagged in `bits` need gradients (as dispatch's plan).
        names = saved_for(op, bits)
        plan = tuple((n, _INPUT, inputs.index(n)) if n in inputs
                     else (n, _SIZES, inputs.index(n[:-10])) if n.endswith("_sym_sizes")
                     else (n, _STRIDES, inputs.index(n[:-12])) if n.endswith("_sym_strides")
                     else (n, _NUMEL, inputs.index(n[:-10])) if n.endswith("_sym_numel")
                     else (n, _RESULT, 0) if n == "result" else (n, _KWARG, 0) for n in names)
        plans[bits] = plan
        return plan

    def record(result: Tensor, out: np.ndarray, args: tuple, edges: tuple, kwargs: dict) -> Any:
        # _record's work for this row: the node (its output's grad_fn before anything saves
        # that output), then the saved values its plan names.
        node = new(node_class)
        node.next_functions = edges
        node._seq = next_sequence_nr()
        key = (out.shape, out.dtype)
        node._out_meta = out_metas.get(key) or make_out_meta(key)
        node._extra = None
        node._in_meta = None
        result._grad_fn = node
        result._output_nr = 0
        result._requires_grad = True
        bits = (edges[0][0] is not None) | ((len(edges) > 1 and edges[1][0] is not None) << 1)
        store = {}
        for saved, kind, where in plans.get(bits) or save_plan(bits):
            if kind == _INPUT:
                v = args[where]
                store[saved] = SavedVariable(v) if type(v) is Tensor else v
            elif kind == _SIZES:
                store[saved] = args[where]._data.shape
            elif kind == _NUMEL:
                store[saved] = int(args[where]._data.size)
            elif kind == _RESULT:
                store[saved] = SavedVariable(result, True)
            elif kind == _STRIDES:
                arr = args[where]._data
                store[saved] = tuple(st // arr.itemsize for st in arr.strides)
            else:  # a forward keyword argument; a tensor one (where's condition) as a tensor
                v = kwargs[saved] if saved in kwargs else defaults[saved]
                store[saved] = SavedVariable(v) if isinstance(v, Tensor) else (
                    save_value(v) if type(v) is tuple else v)
        node._store = store
        return node

    if len(inputs) == 1:
        def fast1(a: Any, **kwargs: Any) -> Tensor:
            if type(a) is not Tensor or a._data.dtype.kind != "f":
                return dispatch(op, a, **kwargs)
            try:
                if quiet:
                    with np.errstate(all="ignore"):
                        out = forward(a._data, **kwargs)
                else:
                    out = forward(a._data, **kwargs)
            except ValueError:
                return dispatch(op, a, **kwargs)  # the general path words the error
            if type(out) is not np.ndarray:
                out = np.asarray(out)
            if broadcasts and (out.shape != a._data.shape or out.dtype != a._data.dtype):
                return dispatch(op, a, **kwargs)
            result = Tensor._make(out)
            node = None
            if a._requires_grad and _state.enabled and out.dtype.kind == "f":
                node = record(result, out, (a,), (_edge(a),), kwargs)
            if _listeners:
                emit("op", {"name": name, "node": node, "inputs": (a,), "outputs": (result,),
                            "kwargs": kwargs, "inplace": False})
            return result

        return fast1

    def fast2(a: Any, b: Any, **kwargs: Any) -> Tensor:
        if type(a) is not Tensor:
            return dispatch(op, a, b, **kwargs)
        x = a._data
        kind = type(b)
        if kind is Tensor:
            y = b._data
            if (x.dtype.kind != "f" or y.dtype.kind != "f"
                    or (broadcasts and (y.shape != x.shape or y.dtype != x.dtype))):
                return dispatch(op, a, b, **kwargs)
            requires = a._requires_grad or b._requires_grad
        elif (kind is float or kind is int) and x.dtype.kind == "f":
            y, requires = b, a._requires_grad
        else:
            return dispatch(op, a, b, **kwargs)
        try:
            if quiet:
                with np.errstate(all="ignore"):
                    out = forward(x, y, **kwargs)
            else:
                out = forward(x, y, **kwargs)
        except ValueError:
            return dispatch(op, a, b, **kwargs)  # the general path words the error
        if type(out) is not np.ndarray:
            out = np.asarray(out)
        if broadcasts and (out.shape != x.shape or out.dtype != x.dtype):
            return dispatch(op, a, b, **kwargs)  # a keyword (where's condition) broadcast it
        result = Tensor._make(out)
        node = None
        if requires and _state.enabled and out.dtype.kind == "f":
            node = record(result, out, (a, b), (_edge(a), _edge(b)), kwargs)
        if _listeners:
            emit("op", {"name": name, "node": node, "inputs": (a, b), "outputs": (result,),
                        "kwargs": kwargs, "inplace": False})
        return result

    return fast2
