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

    def _edges(self) -> tuple:
        node = self._grad_fn
        if node is None:  # a leaf: its accumulator, made once
            node = self._floor_acc
        return ((node, 0),)

    def _result(self, out: np.ndarray, node: Node) -> FloorTensor:
        t = FloorTensor._make(out, True)
        t._grad_fn = node
        return t

    def __mul__(self, c: float) -> FloorTensor:  # type: ignore[override]
        out = self._data * c
        node = _MulConst(self._edges(), ((out.shape, out.dtype),))
        node.c = c
        return self._result(out, node)

    def __add__(self, c: float) -> FloorTensor:  # type: ignore[override]
        out = self._data + c
        return self._result(out, _AddConst(self._edges(), ((out.shape, out.dtype),)))

    def tanh(self) -> FloorTensor:  # type: ignore[override]
        out = np.tanh(self._data)
        node = _Tanh(self._edges(), ((out.shape, out.dtype),))
        node.result = out
        return self._result(out, node)

    def sum(self) -> FloorTensor:  # type: ignore[override]
        out = np.asarray(np.add.reduce(self._data, axis=None))
        node = _Sum(self._edges(), ((out.shape, out.dtype),))
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


# -- an experiment in how a node stores its edges ---------------------------------------------
# Every node of gradviz holds ``next_functions`` as a tuple of (node, input_nr) pairs: with the
# node itself, three objects per op that Python's cyclic collector tracks and walks at every
# full collection (PyTorch's nodes are C++, out of its sight). At a million ops that walk is
# about a quarter of the run (docs/performance.md). This variant of the floor's ``*`` keeps its
# one edge in two slots and builds ``next_functions`` when asked (as PyTorch builds it on each
# access), so an op leaves one tracked object: what the floor would cost if nodes stored their
# edges that way. ``workloads.million_floor_flat`` times it.


class _FlatMulConst(Node):
    __slots__ = ("c", "_next_node", "_next_nr")

    @property  # type: ignore[override]
    def next_functions(self) -> tuple:
        return ((self._next_node, self._next_nr),)

    def apply(self, grads: list, create_graph: bool) -> tuple:
        return (grads[0] * self.c,)


class FlatEdgeTensor(FloorTensor):
    """:class:`FloorTensor` whose ``*`` makes a node with its edge in slots (see above)."""

    __slots__ = ()

    def __mul__(self, c: float) -> FlatEdgeTensor:  # type: ignore[override]
        out = self._data * c
        node = object.__new__(_FlatMulConst)  # Node.__init__ would assign next_functions
        node._seq = next_sequence_nr()
        node._out_meta = ((out.shape, out.dtype),)
        node._extra = None
        prev = self._grad_fn
        node._next_node = prev if prev is not None else self._floor_acc
        node._next_nr = 0
        node.c = c
        t = FlatEdgeTensor._make(out, True)
        t._grad_fn = node
        return t


def flat_edge_leaf(data: np.ndarray) -> FlatEdgeTensor:
    """A leaf of :class:`FlatEdgeTensor` requiring grad, with its accumulator node."""
    base = leaf(data)
    t = FlatEdgeTensor._make(base._data, True)
    t._floor_acc = base._floor_acc
    t._floor_acc.variable = t
    return t
