"""The floor: the least a pure-Python reverse-mode engine on NumPy can do for the tiny-op chain.

Only what the chain needs: ``x * c``, ``x + c``, ``tanh``, ``sum`` and a backward pass with
dependency counts and a ready queue ordered by sequence number. No broadcasting, dtypes, saved
value checks, hooks, retain/create graph, views, in-place ops, errors or listeners: everything
that makes gradviz PyTorch's engine. Timing it beside gradviz and NumPy shows how much of the
per-op cost any Python engine pays, and how much is gradviz's semantics (docs/performance.md).

Example:
    >>> import numpy as np
    >>> x = Var(np.array([0.5]), requires_grad=True)
    >>> backward((x * 2.0 + 1.0).tanh().sum())
    >>> round(float(x.grad[0]), 6)
    0.141302
"""

from __future__ import annotations

import heapq
import itertools

import numpy as np

_seq = itertools.count()


class Var:
    """An array with a ``grad_fn`` (``None`` for a leaf) and, for leaves, a ``grad``."""

    __slots__ = ("data", "grad_fn", "grad", "requires_grad")

    def __init__(self, data: np.ndarray, grad_fn: _Node | None = None,
                 requires_grad: bool = False) -> None:
        self.data = data
        self.grad_fn = grad_fn
        self.grad = None
        self.requires_grad = requires_grad or grad_fn is not None

    def _edge(self) -> _Node | None:
        if self.grad_fn is not None:
            return self.grad_fn
        return _Leaf(self) if self.requires_grad else None

    def __mul__(self, c: float) -> Var:
        return Var(self.data * c, _MulConst(self._edge(), c))

    def __add__(self, c: float) -> Var:
        return Var(self.data + c, _AddConst(self._edge()))

    def tanh(self) -> Var:
        out = np.tanh(self.data)
        return Var(out, _Tanh(self._edge(), out))

    def sum(self) -> Var:
        return Var(self.data.sum(), _Sum(self._edge(), self.data.shape))


class _Node:
    __slots__ = ("next", "seq")

    def __init__(self, nxt: _Node | None) -> None:
        self.next = nxt
        self.seq = next(_seq)


class _Leaf(_Node):
    __slots__ = ("var",)

    def __init__(self, var: Var) -> None:
        super().__init__(None)
        self.var = var

    def apply(self, g: np.ndarray) -> None:
        self.var.grad = g if self.var.grad is None else self.var.grad + g


class _MulConst(_Node):
    __slots__ = ("c",)

    def __init__(self, nxt: _Node | None, c: float) -> None:
        super().__init__(nxt)
        self.c = c

    def apply(self, g: np.ndarray) -> np.ndarray:
        return g * self.c


class _AddConst(_Node):
    __slots__ = ()

    def apply(self, g: np.ndarray) -> np.ndarray:
        return g


class _Tanh(_Node):
    __slots__ = ("out",)

    def __init__(self, nxt: _Node | None, out: np.ndarray) -> None:
        super().__init__(nxt)
        self.out = out

    def apply(self, g: np.ndarray) -> np.ndarray:
        return g * (1 - self.out * self.out)


class _Sum(_Node):
    __slots__ = ("shape",)

    def __init__(self, nxt: _Node | None, shape: tuple[int, ...]) -> None:
        super().__init__(nxt)
        self.shape = shape

    def apply(self, g: np.ndarray) -> np.ndarray:
        return np.broadcast_to(g, self.shape)


def backward(root: Var) -> None:
    """Count dependencies, then run nodes from a ready queue, latest-created first."""
    start = root.grad_fn
    deps: dict[_Node, int] = {}
    stack = [start]
    while stack:
        nxt = stack.pop().next
        if nxt is not None:
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                stack.append(nxt)
    ready = [(-start.seq, start, np.ones(()))]
    while ready:
        _, node, g = heapq.heappop(ready)
        out = node.apply(g)
        nxt = node.next
        if nxt is not None:
            deps[nxt] -= 1
            if deps[nxt] == 0:
                heapq.heappush(ready, (-nxt.seq, nxt, out))
