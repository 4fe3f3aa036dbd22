"""The tiny-op chain's floor on gradviz's engine: a perfect op layer, the engine unchanged.

``minimal_engine.py`` is the least a whole pure-Python engine can do. This module asks the
narrower question behind issue #19's chain targets: with gradviz's engine as it is (the
readable ``engine.py``: ready queue, ``evaluate_function``, ``call_function`` and its hook
stages, ``Node.run``, typed input buffers, observer calls), what would the chain cost if the op
layer did nothing but the arithmetic and one tensor and one node per op?

:class:`FloorTensor` is a gradviz ``Tensor`` whose ``*`` (by a number), ``+`` (a number),
``tanh`` and ``sum`` make their result and a node whose ``apply`` is the NumPy backward, and
nothing else (no dtype promotion, broadcasting, saved-value versions, view metadata, events);
its ``backward()`` is gradviz's ``Tensor.backward``, so the engine runs as for any gradviz graph.
``benchmarks/breakdown.py`` times it beside gradviz, NumPy and PyTorch ("floor" rows);
tests/test_benchmarks.py checks it computes gradviz's gradient.

Example:
    >>> import numpy as np
    >>> x = leaf(np.array([0.5]))
    >>> (x * 2.0 + 1.0).tanh().sum().backward()
    >>> round(float(x.grad[0]), 6)
    0.141302
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz.autograd.graph import Node, next_sequence_nr
from gradviz.tensor import Tensor

_LAST = 2**64 - 1  # an AccumulateGrad's sequence number: run after every other node


class _Accumulate(Node):
    __slots__ = ("variable",)

    def apply(self, grads: list, create_graph: bool) -> tuple:
        var = self.variable
        var._grad = Tensor._make(grads[0] if var._grad is None else var._grad._data + grads[0])
        return ()


class _MulConst(Node):
    __slots__ = ("c",)

    def apply(self, grads: list, create_graph: bool) -> tuple:
        return (grads[0] * self.c,)


class _AddConst(Node):
    __slots__ = ()

    def apply(self, grads: list, create_graph: bool) -> tuple:
        return (grads[0],)


class _Tanh(Node):
    __slots__ = ("result",)

    def apply(self, grads: list, create_graph: bool) -> tuple:
        r = self.result
        return (grads[0] * (1 - r * r),)


class _Sum(Node):
    __slots__ = ("shape",)

    def apply(self, grads: list, create_graph: bool) -> tuple:
        return (np.broadcast_to(grads[0], self.shape),)


class FloorTensor(Tensor):
    """A gradviz tensor with the chain's four ops done with no bookkeeping beyond the node."""

    __slots__ = ("_floor_acc",)  # a leaf's accumulator (made by leaf())

    def _node(self, cls: type, out: np.ndarray) -> Any:
        """A ``cls`` node over this tensor's one edge, its slots set directly as the generated
        fast paths set them (NOTE [flat edges] in autograd/node.py)."""
        node = object.__new__(cls)
        prev = self._grad_fn
        node._n0 = prev if prev is not None else self._floor_acc  # a leaf: its accumulator
        node._i0 = 0
        node._nedges = 1
        node._rest = None
        node._seq = next_sequence_nr()
        node._out_meta = ((out.shape, out.dtype),)
        node._extra = None
        return node

    def _result(self, out: np.ndarray, node: Node) -> FloorTensor:
        t = FloorTensor._make(out, True)
        t._grad_fn = node
        return t

    def __mul__(self, c: float) -> FloorTensor:  # type: ignore[override]
        out = self._data * c
        node = self._node(_MulConst, out)
        node.c = c
        return self._result(out, node)

    def __add__(self, c: float) -> FloorTensor:  # type: ignore[override]
        out = self._data + c
        return self._result(out, self._node(_AddConst, out))

    def tanh(self) -> FloorTensor:  # type: ignore[override]
        out = np.tanh(self._data)
        node = self._node(_Tanh, out)
        node.result = out
        return self._result(out, node)

    def sum(self) -> FloorTensor:  # type: ignore[override]
        out = np.asarray(np.add.reduce(self._data, axis=None))
        node = self._node(_Sum, out)
        node.shape = self._data.shape
        return self._result(out, node)


def leaf(data: np.ndarray) -> FloorTensor:
    """A leaf requiring grad, with its accumulator node."""
    t = FloorTensor._make(np.asarray(data, dtype=np.float64), True)
    acc = _Accumulate((), ((t._data.shape, t._data.dtype),))
    acc._seq = _LAST
    acc.variable = t
    t._floor_acc = acc
    return t
