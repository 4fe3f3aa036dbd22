"""The MLP step's floor: what it would cost with a perfect op layer on gradviz's engine.

Issue #19 asks for the MLP training step at <= 1.10x hand-written NumPy. This module answers
"can any op-layer work get there?" by building the same step with the least bookkeeping an
autograd op layer must do, and running its backward through gradviz's unchanged engine
(``Tensor.backward`` -> ``run_backward`` -> ``execute`` -> ``evaluate_function`` ->
``call_function`` -> ``Node.run``):

- node classes whose ``apply`` is exactly the hand-written NumPy backward (no saved-value
  checks, versions, hooks or formula table);
- a forward that makes one tensor and one node per op with its edges, and nothing else (no
  modules, dtype or shape checks, view metadata or events);
- an ``AccumulateGrad`` that always takes the gradient as it is, and a bare SGD update.

``step_without_engine`` calls the very same ``apply`` methods in the order the engine runs them,
by hand: the difference between the two is the engine's own cost. After a few steps their
parameters equal gradviz's bit for bit (tests/test_benchmarks.py checks it), so the
comparison is of the same arithmetic. ``benchmarks/breakdown.py --mlp --floor`` times both
against NumPy and gradviz, interleaved in one process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import workloads

import gradviz as gv
from gradviz.autograd.graph import Node
from gradviz.tensor import Tensor

_LAST = 2**64 - 1  # an AccumulateGrad's sequence number: run after every other node


class _Accumulate(Node):
    __slots__ = ("variable",)

    def apply(self, grads: list, create_graph: bool) -> tuple:
        self.variable._grad = Tensor._make(grads[0])
        return ()


class _Addmm(Node):
    """bias + mat1 @ weight.t(): (bias, mat1, weight.t()) as AddmmBackward0 orders them."""

    __slots__ = ("mat1", "weight")

    def apply(self, grads: list, create_graph: bool) -> tuple:
        g = grads[0]
        mat1_grad = None if self.next_functions[1][0] is None else g @ self.weight
        return np.add.reduce(g, axis=0), mat1_grad, (g.T @ self.mat1).T


class _T(Node):
    __slots__ = ()

    def apply(self, grads: list, create_graph: bool) -> tuple:
        return (grads[0].T,)


class _Relu(Node):
    __slots__ = ("result",)

    def apply(self, grads: list, create_graph: bool) -> tuple:
        return (grads[0] * (self.result > 0),)


class _LogSoftmax(Node):
    __slots__ = ("result",)

    def apply(self, grads: list, create_graph: bool) -> tuple:
        g = grads[0]
        return (g - np.exp(self.result) * g.sum(1, keepdims=True),)


class _NllLoss(Node):
    __slots__ = ("target", "shape")

    def apply(self, grads: list, create_graph: bool) -> tuple:
        out = np.zeros(self.shape, np.float32)
        out[np.arange(self.shape[0]), self.target] = grads[0] * np.float32(-1 / self.shape[0])
        return (out,)


def _meta(a: np.ndarray) -> tuple:
    return ((a.shape, a.dtype),)


def _accumulator(p: Tensor) -> _Accumulate:
    node = _Accumulate((), _meta(p._data))
    node._seq = _LAST
    node.variable = p
    return node


def _result(out: np.ndarray, node: Node) -> Tensor:
    t = Tensor._make(out, requires_grad=True)
    t._grad_fn = node
    return t


def _backward_by_hand(loss_node: _NllLoss) -> None:
    """The applies of the graph below ``loss_node`` in the engine's order, without the engine:
    the chain of layers, each Addmm's bias and weight branches to their AccumulateGrad."""
    g = loss_node.apply([np.ones((), np.float32)], False)[0]
    node = loss_node.next_functions[0][0]
    g = node.apply([g], False)[0]  # LogSoftmax
    node = node.next_functions[0][0]
    while node is not None:
        if isinstance(node, _Relu):
            g = node.apply([g], False)[0]
            node = node.next_functions[0][0]
            continue
        bias_grad, mat1_grad, weight_t_grad = node.apply([g], False)
        node.next_functions[0][0].apply([bias_grad], False)
        t_node = node.next_functions[2][0]
        t_node.next_functions[0][0].apply([t_node.apply([weight_t_grad], False)[0]], False)
        g, node = mat1_grad, node.next_functions[1][0]


def floor_step(engine: bool = True) -> Callable[[], None]:
    """The MLP step of ``workloads._mlp_step`` (same data, same initial parameters) on the
    perfect op layer; with ``engine=False`` its backward calls the applies by hand."""
    return floor_params_and_step(engine)[1]


def floor_params_and_step(engine: bool = True) -> tuple[list[Any], Callable[[], None]]:
    """The floor's parameters (to compare them with gradviz's) and its step."""
    gv.manual_seed(0)
    x, y = workloads._mlp_data()
    sizes = workloads.MLP
    nn = gv.nn
    model = nn.Sequential(nn.Linear(sizes[0], sizes[1]), nn.ReLU(),
                          nn.Linear(sizes[1], sizes[2]), nn.ReLU(),
                          nn.Linear(sizes[2], sizes[3]))
    params = list(model.parameters())
    x_t = Tensor._make(x)

    def step() -> None:
        for p in params:  # zero_grad(set_to_none=True)
            p._grad = None
        h = x_t
        for k in range(3):
            weight, bias = params[2 * k], params[2 * k + 1]
            weight_t = weight._data.T
            t_node = _T(((_accumulator(weight), 0),), _meta(weight_t))
            out = h._data @ weight_t + bias._data
            node = _Addmm(((_accumulator(bias), 0), (h._grad_fn, 0), (t_node, 0)), _meta(out))
            node.mat1, node.weight = h._data, weight._data
            h = _result(out, node)
            if k < 2:
                r = np.maximum(h._data, 0)
                relu = _Relu(((h._grad_fn, 0),), _meta(r))
                relu.result = r
                h = _result(r, relu)
        z = h._data - h._data.max(axis=1, keepdims=True)
        log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        lsm = _LogSoftmax(((h._grad_fn, 0),), _meta(log_p))
        lsm.result = log_p
        loss = np.asarray(-log_p[np.arange(len(y)), y].mean(), np.float32)
        nll = _NllLoss(((lsm, 0),), _meta(loss))
        nll.target, nll.shape = y, log_p.shape
        if engine:
            _result(loss, nll).backward()
        else:
            _backward_by_hand(nll)
        for p in params:
            p._data -= 0.01 * p._grad._data

    return params, step
