"""Every differentiable op of the derivative table, checked against finite differences.

Two sources of cases, both keyed by the op names of ``gradviz.ops.OPS``:

* a row's own ``samples`` (``gradviz/ops/derivatives/``): each is run through every API the row
  generates: the function, the ``Tensor`` method, the in-place method on a clone;
* :data:`CASES` below: programs written out by hand, for the ops whose public forms take more
  than a row can say (operators, argument parsing, decompositions).

Every case is ``gradcheck``-ed in float64, and ``gradgradcheck``-ed unless it says why not.
:func:`test_every_differentiable_op_has_a_case` walks ``OPS``, so a new op cannot be added to the
table without a sample or a case; :func:`test_case_records_its_op` makes sure each case really
records the node of the op it is filed under. The input specs (``R``, ``P``, ``A``, ``C``, ``W``,
``B``) are :mod:`gradviz.ops.samples`'s.
"""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from _graphs import graph_nodes

import gradviz
from gradviz.autograd import gradcheck, gradgradcheck
from gradviz.ops import OPS
from gradviz.ops.dispatch import dispatch
from gradviz.ops.samples import A, B, C, P, R, W  # noqa: F401 - the specs CASES use

F64 = gradviz.float64


@dataclass
class Case:
    """One program: ``fn(*inputs)``; ``gg`` is None when gradgradcheck applies, else why not."""

    id: str
    fn: Callable[..., Any]
    specs: tuple
    gg: str | None = None
    kw: dict = field(default_factory=dict)  # extra gradcheck arguments (eps, atol ...)
    fd: str | None = None  # None when finite differences apply, else why not (Sample.fd)

    def inputs(self) -> tuple:
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        return tuple(s.make(rng) if hasattr(s, "make") else s for s in self.specs)


def c(id: str, fn: Callable[..., Any], *specs: Any, gg: str | None = None, **kw: Any) -> Case:
    return Case(id, fn, specs, gg, kw)


def _inplace(method: str, *args: Any, **kwargs: Any) -> Callable[..., Any]:
    """``x.clone().<method>_(other)``: in-place ops run on a non-leaf clone, as they must."""

    def fn(x: gradviz.Tensor, *others: Any) -> gradviz.Tensor:
        y = x.clone()
        return getattr(y, method)(*others, *args, **kwargs)

    fn.__name__ = method
    return fn


# -- the cases, keyed by OPS name ------------------------------------------------------------------
CASES: dict[str, list[Case]] = {
    "add": [
        c("add", lambda x, y: x + y, R(2, 3), R(2, 3)),
        c("add bcast (2,3)+(3,)", lambda x, y: x + y, R(2, 3), R(3)),
        c("add bcast (3,1)+(1,4)", lambda x, y: x + y, R(3, 1), R(1, 4)),
        c("add 0-d + (2,3)", lambda x, y: x + y, R(), R(2, 3)),
        c("add 0-d + 0-d", lambda x, y: x + y, R(), R()),
        c("add x + 2", lambda x: x + 2, R(2, 3)),
        c("add 2 + x", lambda x: 2 + x, R(2, 3)),
        c("add 2.5 + 0-d", lambda x: 2.5 + x, R()),
        c("add alpha", lambda x, y: gradviz.add(x, y, alpha=2.5), R(2, 3), R(3)),
        c("add alpha scalar", lambda x: gradviz.add(x, 3, alpha=2), R(4)),
        c("add const", lambda x, y: x + y, R(2, 3), C([1.0, 2.0, 3.0])),
        c("add_ on clone", _inplace("add_"), R(2, 3), R(3)),
        c("add_ alpha on clone", _inplace("add_", alpha=-2), R(2, 3), R(2, 3)),
        c("add_ scalar on clone", _inplace("add_"), R(2, 3), 1.5),
        c("iadd on clone", lambda x, y: _iadd(x.clone(), y), R(3), R(3)),
    ],
    "sub": [
        c("sub", lambda x, y: x - y, R(2, 3), R(2, 3)),
        c("sub bcast (3,1)-(1,4)", lambda x, y: x - y, R(3, 1), R(1, 4)),
        c("sub bcast (2,3)-(3,)", lambda x, y: x - y, R(2, 3), R(3)),
        c("sub 0-d", lambda x, y: x - y, R(3), R()),
        c("sub x - 2", lambda x: x - 2, R(2, 3)),
        c("sub alpha", lambda x, y: gradviz.sub(x, y, alpha=2.5), R(2, 3), R(2, 3)),
        c("sub_ on clone", _inplace("sub_"), R(2, 3), R(3)),
        c("sub_ alpha on clone", _inplace("sub_", alpha=0.5), R(2, 3), R(2, 1)),
    ],
    "rsub": [
        c("rsub 2 - x", lambda x: 2 - x, R(2, 3)),
        c("rsub 2.5 - 0-d", lambda x: 2.5 - x, R()),
        c("rsub fn", lambda x: gradviz.rsub(x, 3, alpha=2), R(3)),
    ],
    "rsub_tensor": [
        c("rsub tensor", lambda x, y: gradviz.rsub(x, y), R(2, 3), R(3)),
        c("rsub tensor alpha", lambda x, y: gradviz.rsub(x, y, alpha=-1.5), R(3, 1), R(1, 4)),
    ],
    "mul": [
        c("mul", lambda x, y: x * y, R(2, 3), R(2, 3)),
        c("mul bcast (3,1)*(1,4)", lambda x, y: x * y, R(3, 1), R(1, 4)),
        c("mul bcast (2,3)*(3,)", lambda x, y: x * y, R(2, 3), R(3)),
        c("mul 0-d * (2,3)", lambda x, y: x * y, R(), R(2, 3)),
        c("mul x * x", lambda x: x * x, R(3)),
        c("mul x * 2", lambda x: x * 2, R(2, 3)),
        c("mul 2 * x", lambda x: 2 * x, R(2, 3)),
        c("mul const", lambda x, y: x * y, R(2, 3), C([[1.0], [-2.0]])),
        c("mul_ on clone", _inplace("mul_"), R(2, 3), R(3)),
        c("mul_ scalar on clone", _inplace("mul_"), R(2, 3), -3.0),
        c("imul on clone", lambda x, y: _imul(x.clone(), y), R(2, 2), R(2, 1)),
    ],
    "div": [
        c("div", lambda x, y: x / y, R(2, 3), P(2, 3)),
        c("div bcast (3,1)/(1,4)", lambda x, y: x / y, R(3, 1), P(1, 4)),
        c("div bcast (2,3)/(3,)", lambda x, y: x / y, R(2, 3), P(3)),
        c("div 0-d", lambda x, y: x / y, R(2, 3), P()),
        c("div x / 2", lambda x: x / 2, R(2, 3)),
        c("div_ on clone", _inplace("div_"), R(2, 3), P(3)),
        c("div_ scalar on clone", _inplace("div_"), R(2, 3), 4.0),
    ],
    "div_mode": [
        c("div rounding_mode=None", lambda x, y: gradviz.div(x, y, rounding_mode=None),
          R(2, 3), P(2, 3)),
        c("div trunc bcast", lambda x, y: x.div(y, rounding_mode="trunc"), R(2, 3), P(3)),
        c("div floor by a number", lambda x: gradviz.div(x * 3, 2, rounding_mode="floor"),
          R(2, 3)),
        c("div_ floor on clone", _inplace("div_", rounding_mode="floor"), R(2, 3), P(3)),
    ],
    "neg": [
        c("neg", lambda x: -x, R(2, 3)),
        c("neg fn 0-d", gradviz.neg, R()),
    ],
    "reciprocal": [
        c("reciprocal", lambda x: x.reciprocal(), P(2, 3)),
        c("reciprocal 2 / x", lambda x: 2 / x, P(2, 3)),  # MulBackward0 over ReciprocalBackward0
        c("reciprocal 2 / 0-d", lambda x: 2 / x, P()),
    ],
    "pow": [
        c("pow x ** 2", lambda x: x ** 2, R(2, 3)),
        c("pow x ** 0", lambda x: x ** 0, P(2, 3)),
        c("pow x ** 1", lambda x: x ** 1, P(2, 3)),
        c("pow x ** 0.5", lambda x: x ** 0.5, P(2, 3)),
        c("pow x ** -1.5", lambda x: x ** -1.5, P(2, 3)),
        c("pow x ** 3 on 0-d", lambda x: x ** 3, R()),
        c("pow fn", lambda x: gradviz.pow(x, 2.5), P(4)),
    ],
    "pow_tensor": [
        c("pow_tensor", lambda x, y: x ** y, P(2, 3), R(2, 3)),
        c("pow_tensor bcast (3,1)**(1,4)", lambda x, y: x ** y, P(3, 1), R(1, 4)),
        c("pow_tensor bcast (2,3)**(3,)", lambda x, y: x ** y, P(2, 3), R(3)),
        c("pow_tensor 0-d exponent", lambda x, y: x ** y, P(3), R()),
        c("pow_tensor const exponent", lambda x, y: x ** y, P(3), C([0.0, 1.0, 2.5])),
        c("pow_tensor const base", lambda x, y: x ** y, C([0.5, 1.0, 2.0]), R(3)),
    ],
    "pow_scalar_base": [
        c("pow_scalar_base 2 ** x", lambda x: 2 ** x, R(2, 3)),
        c("pow_scalar_base 0.5 ** x", lambda x: 0.5 ** x, R(3)),
        c("pow_scalar_base 2.5 ** 0-d", lambda x: 2.5 ** x, R()),
        c("pow_scalar_base fn", lambda x: gradviz.pow(3, x), R(3)),
    ],
    "sum": [
        c("sum all", lambda x: x.sum(), R(2, 3)),
        c("sum 0-d", lambda x: x.sum(), R()),
        c("sum 3-d", lambda x: gradviz.sum(x), R(2, 1, 3)),
    ],
    "sum_dim": [
        c("sum dim 0", lambda x: x.sum(0), R(2, 3)),
        c("sum dim -1", lambda x: x.sum(-1), R(2, 3)),
        c("sum dims (0, 2)", lambda x: x.sum((0, 2)), R(2, 3, 2)),
        c("sum dims (-1, 0)", lambda x: x.sum((-1, 0)), R(2, 3, 2)),
        c("sum dim keepdim", lambda x: x.sum(1, keepdim=True), R(2, 3)),
        c("sum dims keepdim", lambda x: x.sum((0, -1), keepdim=True), R(2, 3, 2)),
        c("sum dims all", lambda x: x.sum((0, 1)), R(2, 3)),
    ],
    "mean": [
        c("mean all", lambda x: x.mean(), R(2, 3)),
        c("mean 0-d", lambda x: x.mean(), R()),
    ],
    "mean_dim": [
        c("mean dim 0", lambda x: x.mean(0), R(2, 3)),
        c("mean dim -1", lambda x: x.mean(-1), R(2, 3)),
        c("mean dims (0, 2)", lambda x: x.mean((0, 2)), R(2, 3, 2)),
        c("mean dims (-1, -3)", lambda x: x.mean((-1, -3)), R(2, 3, 2)),
        c("mean dim keepdim", lambda x: x.mean(1, keepdim=True), R(2, 3)),
        c("mean dims keepdim", lambda x: x.mean((0, -1), keepdim=True), R(2, 3, 2)),
    ],
    "view": [
        c("view", lambda x: x.view(3, 2), R(2, 3)),
        c("view -1", lambda x: x.view(-1), R(2, 3)),
        c("view_as", lambda x, y: x.view_as(y), R(6), C(np.zeros((3, 2)))),
        c("reshape contiguous", lambda x: x.reshape(3, 2), R(2, 3)),
        c("reshape to 0-d", lambda x: x.reshape(()), R(1)),
        c("reshape then use", lambda x: x.reshape(1, 3) * 2, R(3)),
    ],
    "_unsafe_view": [
        c("reshape non-contiguous", lambda x: x.t().reshape(6), R(2, 3)),
        c("reshape permuted", lambda x: x.permute(2, 0, 1).reshape(-1), R(2, 2, 3)),
    ],
    "clone": [c("clone", lambda x: x.clone(), R(2, 3)), c("clone fn", gradviz.clone, R())],
    "transpose": [
        c("transpose", lambda x: x.transpose(0, 1), R(2, 3)),
        c("transpose negative", lambda x: x.transpose(-1, -3), R(2, 3, 2)),
        c("swapaxes", lambda x: gradviz.swapaxes(x, 0, 2), R(2, 1, 3)),
    ],
    "t": [c("t 2-d", lambda x: x.t(), R(2, 3)), c("t 1-d", lambda x: x.t(), R(3))],
    "permute": [
        c("permute", lambda x: x.permute(2, 0, 1), R(2, 3, 2)),
        c("permute negative", lambda x: x.permute((-1, 0, 1)), R(2, 3, 2)),
        c(".T 2-d", lambda x: x.T, R(2, 3)),
        c(".T after reshape", lambda x: x.reshape(1, 3).T, R(3)),
    ],
    "expand": [
        c("expand", lambda x: x.expand(3, 4), R(3, 1)),
        c("expand new dims", lambda x: x.expand(2, 3, 4), R(4)),
        c("expand -1", lambda x: x.expand(-1, 4), R(3, 1)),
        c("expand 0-d", lambda x: x.expand(2, 2), R()),
        c("expand_as", lambda x, y: x.expand_as(y), R(1, 3), C(np.zeros((2, 3)))),
    ],
    "unsqueeze": [
        c("unsqueeze 0", lambda x: x.unsqueeze(0), R(2, 3)),
        c("unsqueeze -1", lambda x: x.unsqueeze(-1), R(2, 3)),
        c("unsqueeze 0-d", lambda x: x.unsqueeze(0), R()),
    ],
    "squeeze": [
        c("squeeze all", lambda x: x.squeeze(), R(1, 3, 1)),
        c("squeeze to 0-d", lambda x: x.squeeze(), R(1, 1)),
    ],
    "squeeze_dim": [
        c("squeeze dim", lambda x: x.squeeze(0), R(1, 3, 1)),
        c("squeeze dim -1", lambda x: x.squeeze(-1), R(1, 3, 1)),
        c("squeeze dim no-op", lambda x: x.squeeze(1), R(1, 3, 1)),
    ],
    "squeeze_dims": [
        c("squeeze dims", lambda x: x.squeeze((0, -2)), R(1, 3, 1, 2)),
        c("squeeze dims with no size-1 dim", lambda x: gradviz.squeeze(x, (1,)), R(1, 3, 1)),
        c("squeeze dims of a 0-d tensor", lambda x: x.squeeze((0,)), R()),
    ],
    "squeeze_dim_": [
        c("matmul 1-D @ 2-D", lambda x, y: x @ y, R(3), R(3, 4)),
        c("quantile of a 0-d tensor, dim=0", lambda x: gradviz.quantile(x, 0.5, dim=0), R()),
        c("nanquantile of a 0-d tensor, q a tensor, dim=-1",
          lambda x, q: gradviz.nanquantile(x, q, dim=-1, keepdim=True), R(), C([0.25, 0.5])),
    ],
    "to_copy": [
        # Through float32 and back: exact up to float32 rounding, so a coarser step is needed.
        c("to float32 and back", lambda x: x.to(gradviz.float32).double(), R(2, 3),
          eps=1e-3, atol=1e-4),
        c("float() * 2 then double()", lambda x: (x.float() * 2).to(dtype=gradviz.float64),
          R(3), eps=1e-3, atol=1e-4),
    ],
    "mm": [
        c("mm", lambda x, y: x.mm(y), R(2, 3), R(3, 4)),
        c("matmul 2-D @ 2-D", lambda x, y: x @ y, R(2, 3), R(3, 2)),
        c("mm const rhs", lambda x, y: gradviz.mm(x, y), R(2, 3), C(np.ones((3, 2)))),
        c("mm const lhs", lambda x, y: gradviz.mm(x, y), C(np.ones((2, 3))), R(3, 2)),
        c("matmul of t()", lambda x, y: x.t() @ y, R(3, 2), R(3, 2)),
        c("tensordot contracting size-1 dims",
          lambda x, y: gradviz.tensordot(x, y, dims=([1, 2], [0, 1])), R(2, 1, 3), R(4, 3, 5)),
    ],
    "dot": [
        c("dot", lambda x, y: x.dot(y), R(3), R(3)),
        c("matmul 1-D @ 1-D", lambda x, y: x @ y, R(4), R(4)),
        c("dot self", lambda x: gradviz.dot(x, x), R(3)),
        c("tensordot to one number", lambda x, y: gradviz.tensordot(x, y, dims=([0, 1], [0, 1])),
          R(2, 3), R(2, 3)),
    ],
    "mv": [
        c("mv", lambda x, y: x.mv(y), R(2, 3), R(3)),
        c("matmul 2-D @ 1-D", lambda x, y: x @ y, R(2, 3), R(3)),
    ],
    "where": [
        c("where", lambda m, x, y: gradviz.where(m, x, y), B(2, 3), R(2, 3), R(2, 3)),
        c("where bcast", lambda m, x, y: gradviz.where(m, x, y), B(3, 4), R(3, 1), R(4)),
        c("where scalar other", lambda m, x: gradviz.where(m, x, 0.0), B(2, 3), R(2, 3)),
        c("where scalar self", lambda m, x: gradviz.where(m, 1.5, x), B(2, 3), R(3)),
        c("where from comparison", lambda x: gradviz.where(x > 0, x, x * x), A(2, 3)),
    ],
    "zero_": [c("zero_ on clone", _inplace("zero_"), R(2, 3)),
              c("zero_ then add", lambda x: x.clone().zero_() + x, R(3))],
    "fill_": [c("fill_ on clone", _inplace("fill_", 2.5), R(2, 3)),
              c("fill_ then mul", lambda x: x.clone().fill_(2.0) * x, R(3))],
    "copy_": [
        c("copy_ on clone", lambda x, y: x.clone().copy_(y), R(2, 3), R(2, 3)),
        c("copy_ bcast src", lambda x, y: x.clone().copy_(y), R(2, 3), R(3)),
        c("copy_ then mul", lambda x, y: x.clone().copy_(y) * x, R(3), R(3)),
    ],
}

# -- the op library (gradviz/ops/derivatives/, "The op library"; tests/test_ops_library.py
# checks their graphs, saved names, values and errors) -------------------------------------------
from gradviz.nn import functional as NF  # noqa: E402


def _I(*v: Any) -> gradviz.Tensor:  # noqa: N802 - an int64 index tensor
    return gradviz.tensor(np.asarray(v, dtype=np.int64))


def _grad_of(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``(x, g) -> d<fn(x), g>/dx`` with create_graph: records fn's backward ops as nodes."""
    def run(x: gradviz.Tensor, g: gradviz.Tensor) -> gradviz.Tensor:
        return gradviz.autograd.grad(fn(x), x, g, create_graph=True)[0]

    return run


def _setitem(index: Any, value_fn: Callable[..., Any] | None = None, const: Any = 0.0
             ) -> Callable[..., Any]:
    """``h = x * 1; h[index] = value``: in-place writes into a non-leaf."""
    def run(x: gradviz.Tensor, *vs: gradviz.Tensor) -> gradviz.Tensor:
        h = x * 1
        h[index] = value_fn(*vs) if value_fn is not None else const
        return h

    return run


def _view_inplace(x: gradviz.Tensor, y: gradviz.Tensor) -> gradviz.Tensor:
    h = x * 1
    v = h[1:, ::2]
    v.mul_(y)  # CopySlices on h; v regenerated from it
    return h * 2 + v.sum()


_W5 = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
_T4 = (0, 2, 1, 4)

CASES.update({
    "abs": [c("abs", lambda x: x.abs(), A(2, 3)), c("abs fn 0-d", gradviz.abs, A())],
    "sign": [c("sign times x", lambda x: x.sign() * x, A(2, 3))],
    "clamp": [
        c("clamp both", lambda x: x.clamp(-0.5, 0.5), A(3, 4)),
        c("clamp min only", lambda x: gradviz.clamp(x, min=0.1), A(3, 4)),
        c("clip max only", lambda x: x.clip(max=0.1), A(3, 4)),
        c("clamp_ on clone", lambda x: x.clone().clamp_(-0.5, 0.5), A(3, 4)),
    ],
    "clamp_tensor": [
        c("clamp tensor bounds bcast", lambda x, lo, hi: x.clamp(lo - 0.5, hi + 0.5), R(3, 4),
          R(4), R(3, 1)),
        c("clamp tensor min only", lambda x, lo: gradviz.clamp(x, min=lo), R(3, 4), R(4)),
    ],
    "clamp_min": [c("clamp_min", lambda x: x.clamp_min(0.2), A(3, 4))],
    "clamp_min_tensor": [c("clamp_min tensor", lambda x, m: x.clamp_min(m), R(3, 4), R(4))],
    "clamp_max": [c("clamp_max", lambda x: x.clamp_max(0.2), A(3, 4))],
    "clamp_max_tensor": [c("clamp_max tensor", lambda x, m: x.clamp_max(m), R(3, 4), R(3, 1))],
    "maximum": [
        c("maximum", lambda x, y: gradviz.maximum(x, y), R(2, 3), R(2, 3)),
        c("maximum bcast", lambda x, y: x.maximum(y), R(2, 3), R(3)),
        c("max(x, y)", lambda x, y: gradviz.max(x, y), R(3, 1), R(1, 4)),
    ],
    "minimum": [
        c("minimum", lambda x, y: gradviz.minimum(x, y), R(2, 3), R(2, 3)),
        c("min(x, y) bcast", lambda x, y: x.min(y), R(2, 3), R(2, 1)),
    ],
    "mul_scalar": [c("cross_entropy smoothing (MulBackward1)",
                     lambda x: NF.cross_entropy(x, _I(*_T4), label_smoothing=0.1), R(4, 5))],
    "add_scalar": [c("cross_entropy smoothed probabilities (AddBackward1)",
                     lambda x, p: NF.cross_entropy(x, p, label_smoothing=0.2), R(4, 5),
                     P(4, 5))],
    "div_scalar": [c("cross_entropy probabilities (DivBackward1)",
                     lambda x, p: NF.cross_entropy(x, p), R(4, 5), P(4, 5))],
    "leaky_relu": [c("leaky_relu", lambda x: NF.leaky_relu(x, 0.2), A(3, 4))],
    "leaky_relu_": [c("leaky_relu inplace", lambda x: NF.leaky_relu(x * 1, 0.2, inplace=True),
                      A(3, 4))],
    "elu": [c("elu", lambda x: NF.elu(x, 0.7), A(3, 4))],
    "elu_": [c("elu inplace", lambda x: NF.elu(x * 1, inplace=True), A(3, 4))],
    "gelu": [c("gelu", lambda x: NF.gelu(x), R(3, 4)),
             c("gelu tanh", lambda x: NF.gelu(x, approximate="tanh"), R(3, 4))],
    "silu": [c("silu", lambda x: NF.silu(x), R(3, 4))],
    "softplus": [c("softplus", lambda x: NF.softplus(x), R(3, 4)),
                 c("softplus beta threshold", lambda x: NF.softplus(x * 3, beta=2, threshold=1),
                   A(3, 4))],
    "softmax": [c("softmax dim 1", lambda x: NF.softmax(x, dim=1), R(3, 4)),
                c("softmax dim 0 method", lambda x: x.softmax(0), R(3, 4))],
    "log_softmax": [c("log_softmax", lambda x: NF.log_softmax(x, dim=-1), R(3, 4)),
                    c("log_softmax fn", lambda x: gradviz.log_softmax(x, 0), R(3, 4))],
    "amax": [c("amax all", lambda x: x.amax(), R(3, 4)),
             c("amax dim", lambda x: x.amax(1), R(3, 4)),
             c("amax dims keepdim", lambda x: gradviz.amax(x, (0, 2), keepdim=True), R(2, 3, 2))],
    "amin": [c("amin dim", lambda x: x.amin(0), R(3, 4))],
    "max": [c("max all", lambda x: x.max(), R(3, 4))],
    "min": [c("min all", lambda x: gradviz.min(x), R(3, 4))],
    "max_dim": [c("max dim values", lambda x: x.max(1).values, R(3, 4)),
                c("max dim keepdim", lambda x: x.max(-1, keepdim=True)[0], R(3, 4))],
    "min_dim": [c("min dim values", lambda x: gradviz.min(x, 0)[0], R(3, 4))],
    "prod": [c("prod all", lambda x: x.prod(), P(2, 3))],
    "prod_dim": [c("prod dim", lambda x: x.prod(1), R(3, 4)),
                 c("prod dim keepdim", lambda x: x.prod(0, keepdim=True), R(3, 4))],
    "var": [c("var all", lambda x: x.var(), R(3, 4)),
            c("var dim correction 0 keepdim", lambda x: x.var(1, correction=0, keepdim=True),
              R(3, 4)),
            c("var unbiased False", lambda x: gradviz.var(x, (0, 1), unbiased=False), R(3, 4))],
    "std": [c("std all", lambda x: x.std(), R(3, 4)),
            c("std dim keepdim", lambda x: x.std(0, keepdim=True), R(3, 4))],
    "logsumexp": [c("logsumexp", lambda x: x.logsumexp(1), R(3, 4)),
                  c("logsumexp dims keepdim", lambda x: gradviz.logsumexp(x, (0, 1), True),
                    R(3, 4))],
    "norm": [c("norm", lambda x: x.norm(), R(3, 4)),
             c("norm fro dim", lambda x: x.norm("fro", dim=1), R(3, 4)),
             c("norm 1", lambda x: x.norm(1), A(3, 4)),
             c("norm inf", lambda x: x.norm(float("inf")), R(3, 4)),
             c("norm 3 dim keepdim", lambda x: gradviz.norm(x, 3, 0, True), A(3, 4))],
    "_reshape_alias": [
        c("reshape of a slice", lambda x: x[:, ::2].reshape(6), R(3, 4)),
        c("reshape of an expand", lambda x: x.expand(2, 3, 4).reshape(2, 12), R(3, 4)),
    ],
    "alias": [c("x[...]", lambda x: x[...], R(3, 4)), c("x[:, :]", lambda x: x[:, :], R(3, 4))],
    "select": [c("x[1]", lambda x: x[1], R(3, 4)), c("x[:, -1]", lambda x: x[:, -1], R(3, 4)),
               c("select method", lambda x: x.select(1, 2), R(3, 4)),
               c("x[0, 0] to 0-d", lambda x: x[0, 0], R(3, 4))],
    "slice": [c("x[1:, ::2]", lambda x: x[1:, ::2], R(3, 4)),
              c("x[-2:]", lambda x: x[-2:], R(3, 4)),
              c("narrow", lambda x: x.narrow(1, 1, 2), R(3, 4)),
              c("x[:] alone", lambda x: x[:], R(3))],
    "select_backward": [c("grad of x[1] with create_graph", _grad_of(lambda x: x[1]),
                          R(3, 4), R(4))],
    "slice_backward": [c("grad of x[1:] with create_graph", _grad_of(lambda x: x[1:]),
                         R(3, 4), R(2, 4))],
    "repeat": [c("repeat", lambda x: x.repeat(2, 3), R(2, 3)),
               c("repeat new dims", lambda x: x.repeat(2, 1, 2), R(2, 3))],
    "split": [c("split piece", lambda x: x.split(2, 1)[1] * 3, R(3, 5)),
              c("split all pieces", lambda x: sum(p.sum() * (i + 1)
                                                  for i, p in enumerate(x.split(2))), R(5, 2)),
              c("chunk", lambda x: x.chunk(2, -1)[0], R(3, 5))],
    "split_with_sizes": [c("split sizes", lambda x: x.split([1, 3], 1)[1], R(3, 4))],
    "unsafe_split": [c("unsafe_split pieces", lambda x: sum(p.sum() * (i + 1) for i, p in
                                                         enumerate(x.unsafe_split(2, 1))),
                       R(3, 5)),
                     c("unsafe_chunk, one piece used", lambda x: x.unsafe_chunk(4, -1)[2] * 2,
                       R(2, 8))],
    "unsafe_split_with_sizes": [c("unsafe_split_with_sizes",
                                  lambda x: gradviz.unsafe_split_with_sizes(x, [1, 3], 1)[1],
                                  R(3, 4))],
    "unbind": [c("unbind", lambda x: x.unbind(1)[2], R(3, 4)),
               c("iterate", lambda x: [row for row in x][1] * 2, R(3, 4))],
    "cat": [c("cat", lambda x, y: gradviz.cat([x, y, x], 1), R(2, 3), R(2, 2)),
            c("cat const", lambda x, y: gradviz.cat([x, y]), R(2, 3), C(np.ones((1, 3)))),
            c("cat with legacy empty tensors", lambda x, e: gradviz.cat([e, x, e], 1),
              R(2, 3), R(0))],
    "stack": [c("stack", lambda x, y: gradviz.stack([x, y], -1), R(2, 3), R(2, 3))],
    "bmm": [c("bmm", lambda x, y: gradviz.bmm(x, y), R(2, 3, 4), R(2, 4, 2)),
            c("matmul 3-D @ 3-D", lambda x, y: x @ y, R(2, 3, 4), R(2, 4, 2)),
            c("matmul 4-D @ 3-D bcast", lambda x, y: x @ y, R(2, 2, 3, 4), R(2, 4, 2)),
            c("matmul 3-D @ 1-D const", lambda x, y: x.transpose(0, 1) @ y, R(3, 2, 4),
              C(np.ones(4)))],
    "addmm": [c("linear with bias", lambda x, w, b: NF.linear(x, w, b), R(4, 5), R(3, 5), R(3)),
              c("linear 3-D with bias", lambda x, w, b: NF.linear(x, w, b), R(2, 4, 5),
                R(3, 5), R(3)),
              c("addmm beta alpha", lambda b, x, w: gradviz.addmm(b, x, w, beta=0.5, alpha=2),
                R(3), R(4, 5), R(5, 3))],
    "linalg_pinv": [c("pinv with tensor tolerances, one per matrix",
                      lambda x: gradviz.linalg.pinv(x, atol=gradviz.tensor(1e-4, dtype=F64),
                                                    rtol=gradviz.tensor([1e-3, 1e-2], dtype=F64)),
                      R(2, 3, 3))],
    "linalg_qr": [c("Tensor.qr (torch.qr), reduced", lambda x: x.qr().Q,
                    R(4, 3)),
                  c("torch.qr some=False of a wide matrix", lambda x: gradviz.qr(x, False)[1],
                    R(2, 3))],
    "index": [c("x[[0, 2]]", lambda x: x[[0, 2]], R(3, 4)),
              c("x[mask]", lambda x: x[x > 0], R(3, 4)),
              c("x[:, [1, 1]] repeated", lambda x: x[:, [1, 1]], R(3, 4)),
              c("x[[0, 1], [1, 2]]", lambda x: x[[0, 1], [1, 2]], R(3, 4))],
    "index_put": [c("h[[0, 2]] = v", _setitem([0, 2], lambda v: v), R(3, 4), R(4)),
                  c("h[mask] = 0", lambda x: _setitem(x.detach() > 0)(x), R(3, 4)),
                  c("index_put out of place", lambda x, v: x.index_put((_I(0, 2),), v),
                    R(3, 4), R(2, 4))],
    "_index_put_impl": [c("grad of x[[0, 2]] with create_graph", _grad_of(lambda x: x[[0, 2]]),
                          R(3, 4), R(2, 4))],
    "index_select": [c("index_select", lambda x: x.index_select(1, _I(0, 2, 2)), R(3, 4))],
    "gather": [c("gather", lambda x: x.gather(1, _I([0, 1], [2, 2], [1, 0])), R(3, 4)),
               c("gather 0-d input, 1-d index", lambda x: x.gather(0, _I(0, 0)), R()),
               c("gather 1-d input, 0-d index", lambda x: gradviz.gather(x, 0, _I(2)), R(4)),
               c("gather an empty index", lambda x: x.gather(0, _I()), R(5))],
    "scatter": [c("scatter src", lambda x, s: x.scatter(1, _I([0, 1], [2, 3], [1, 0]), s),
                  R(3, 4), R(3, 2)),
                c("scatter 0-d", lambda x, s: gradviz.scatter(x, 0, gradviz.tensor(0), s),
                  R(), R()),
                c("scatter 0-d input, 1-d src", lambda x, s: x.scatter(-1, _I(0), s), R(), R(1))],
    "scatter_value": [c("scatter value", lambda x: x.scatter(1, _I([0, 1], [2, 3]), 2.0),
                        R(2, 4))],
    "scatter_add": [c("scatter_add", lambda x, s: x.scatter_add(1, _I([0, 0], [2, 3]), s),
                      R(2, 4), R(2, 2)),
                    c("scatter_add 0-d input, 1-d index",
                      lambda x, s: x.scatter_add(0, _I(0, 0), s), R(), R(2))],
    "masked_select": [c("masked_select 0-d", lambda x: x.masked_select(gradviz.tensor(True)), R()),
                      c("masked_select 0-d, nothing selected",
                        lambda x: gradviz.masked_select(x, gradviz.tensor(False)), R())],
    "masked_fill": [c("masked_fill", lambda x: x.masked_fill(x.detach() > 0, 0.5), R(3, 4)),
                    c("masked_fill bcast mask",
                      lambda x: x.masked_fill(gradviz.tensor([True, False, True, False]), 0.5),
                      R(3, 4))],
    "masked_fill_tensor": [c("masked_fill tensor value",
                             lambda x, v: x.masked_fill(x.detach() > 0, v), R(3, 4), R())],
    "fill_tensor_": [c("h[...] = 0-d tensor", _setitem(Ellipsis, lambda v: v), R(3, 4), R())],
    "embedding": [c("embedding", lambda w: NF.embedding(_I([0, 2], [2, 4]), w), R(5, 3)),
                  # A used padding row gets no gradient on purpose: not gradcheck-able
                  # (tests/test_ops_library.py checks it against PyTorch's values).
                  c("embedding unused padding_idx",
                    lambda w: NF.embedding(_I([0, 2], [2, 4]), w, padding_idx=1), R(5, 3))],
    "nll_loss": [c("nll_loss", lambda x: NF.nll_loss(x, _I(*_T4)), R(4, 5)),
                 c("nll_loss weight ignore sum",
                   lambda x: NF.nll_loss(x, _I(*_T4), weight=gradviz.tensor(_W5),
                                         ignore_index=2, reduction="sum"), R(4, 5)),
                 c("nll_loss none", lambda x: NF.nll_loss(x, _I(*_T4), reduction="none"),
                   R(4, 5)),
                 c("cross_entropy", lambda x: NF.cross_entropy(x, _I(*_T4)), R(4, 5)),
                 c("cross_entropy weight mean", lambda x: NF.cross_entropy(
                     x, _I(*_T4), weight=gradviz.tensor(_W5)), R(4, 5))],
    "mse_loss": [c("mse_loss", lambda x, y: NF.mse_loss(x, y), R(4, 5), R(4, 5)),
                 c("mse_loss sum bcast", lambda x, y: NF.mse_loss(x, y, reduction="sum"),
                   R(4, 5), R(5))],
    "binary_cross_entropy": [
        c("binary_cross_entropy", lambda x, y: NF.binary_cross_entropy(x.sigmoid(), y / 2),
          R(4, 5), P(4, 5)),
        c("binary_cross_entropy weight none",
          lambda x: NF.binary_cross_entropy(x.sigmoid(), gradviz.tensor(_W5 * 2).expand(4, 5),
                                            weight=gradviz.tensor(_W5), reduction="none"),
          R(4, 5))],
    "binary_cross_entropy_with_logits": [
        c("bce with logits", lambda x, y: NF.binary_cross_entropy_with_logits(x, y / 2),
          R(4, 5), P(4, 5)),
        c("bce with logits weight pos_weight", lambda x, y: NF.binary_cross_entropy_with_logits(
            x, y / 2, weight=gradviz.tensor(_W5), pos_weight=gradviz.tensor(_W5 * 10),
            reduction="sum"), R(4, 5), P(4, 5))],
    "layer_norm": [c("layer_norm", lambda x: NF.layer_norm(x, (5,)), R(3, 5)),
                   c("layer_norm weight bias", lambda x, w, b: NF.layer_norm(x, (5,), w, b),
                     R(3, 5), R(5), R(5)),
                   c("layer_norm 2 dims", lambda x, w: NF.layer_norm(x, (2, 3), w), R(2, 2, 3),
                     R(2, 3))],
})
CASES.update({
    "convolution": [
        c("conv2d stride padding bias", lambda x, w, b: NF.conv2d(x, w, b, stride=2, padding=1),
          R(2, 2, 5, 5), R(3, 2, 3, 3), R(3)),
        c("conv2d 'same' odd kernel, batch 1", lambda x, w: NF.conv2d(x, w, padding="same"),
          R(1, 2, 4, 4), R(2, 2, 3, 3)),
        c("conv2d 'same' even kernel (ConstantPadNd first)",
          lambda x, w: NF.conv2d(x, w, padding="same"), R(1, 1, 4, 3), R(2, 1, 2, 3)),
        c("conv2d 'valid' dilation groups", lambda x, w: NF.conv2d(
            x, w, padding="valid", dilation=(2, 1), groups=2), R(2, 4, 5, 4), R(2, 2, 2, 2)),
        c("conv2d unbatched", lambda x, w: NF.conv2d(x, w, padding=(1, 0)), R(2, 4, 3),
          R(3, 2, 2, 2)),
        c("conv1d stride dilation", lambda x, w, b: NF.conv1d(x, w, b, stride=2, dilation=2),
          R(2, 2, 9), R(3, 2, 3), R(3)),
        c("conv1d 'same' groups", lambda x, w: NF.conv1d(x, w, padding="same", groups=2),
          R(1, 2, 5), R(4, 1, 3)),
        c("conv_transpose2d stride output_padding bias", lambda x, w, b: NF.conv_transpose2d(
            x, w, b, stride=2, padding=1, output_padding=1), R(2, 2, 3, 3), R(2, 3, 3, 3),
          R(3)),
        c("conv_transpose2d groups dilation", lambda x, w: NF.conv_transpose2d(
            x, w, groups=2, dilation=2), R(1, 4, 3, 2), R(4, 1, 2, 2)),
        c("conv2d weight only (constant input)", lambda w: NF.conv2d(
            gradviz.ones(1, 2, 4, 4, dtype=F64), w, stride=(1, 2)), R(3, 2, 2, 2)),
    ],
    "max_pool2d_with_indices": [
        c("max_pool2d", lambda x: NF.max_pool2d(x, 2), R(2, 2, 4, 4)),
        c("max_pool2d stride padding ceil_mode, batch 1",
          lambda x: NF.max_pool2d(x, 3, 2, 1, ceil_mode=True), R(1, 2, 5, 5)),
        c("max_pool2d dilation, unbatched", lambda x: NF.max_pool2d(x, (2, 2), 1, dilation=2),
          R(2, 5, 4)),
        c("max_pool2d return_indices", lambda x: NF.max_pool2d(x, 2, return_indices=True)[0],
          R(1, 1, 4, 4)),
        c("max_pool1d", lambda x: NF.max_pool1d(x, 3, 2, 1), R(2, 2, 7)),
    ],
    "max_pool3d_with_indices": [
        c("F.max_pool3d", lambda x: NF.max_pool3d(x, 2), R(2, 1, 4, 3, 4)),
        c("F.max_pool3d stride padding dilation ceil_mode, unbatched",
          lambda x: NF.max_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0), (2, 1, 1), True),
          R(2, 4, 5, 3))],
    "upsample_bicubic2d": [
        c("F.interpolate bicubic, scale_factor", lambda x: NF.interpolate(
            x, scale_factor=1.7, mode="bicubic"), R(1, 2, 3, 4)),
        c("F.interpolate bicubic, size, align_corners", lambda x: NF.interpolate(
            x, size=(5, 2), mode="bicubic", align_corners=True), R(2, 1, 3, 4))],
    "upsample_trilinear3d": [
        c("F.interpolate trilinear, scale_factor", lambda x: NF.interpolate(
            x, scale_factor=(1.5, 2, 0.8), mode="trilinear"), R(1, 2, 2, 3, 5)),
        c("F.interpolate trilinear, size, align_corners", lambda x: NF.interpolate(
            x, size=(3, 2, 4), mode="trilinear", align_corners=True), R(1, 1, 2, 3, 3))],
    "upsample_nearest_exact1d": [c("F.interpolate nearest-exact 1-D", lambda x: NF.interpolate(
        x, scale_factor=1.6, mode="nearest-exact"), R(2, 2, 5))],
    "upsample_nearest_exact2d": [c("F.interpolate nearest-exact 2-D", lambda x: NF.interpolate(
        x, size=(5, 2), mode="nearest-exact"), R(1, 2, 3, 4))],
    "upsample_nearest_exact3d": [c("F.interpolate nearest-exact 3-D", lambda x: NF.interpolate(
        x, scale_factor=(2, 0.7, 1.5), mode="nearest-exact"), R(1, 1, 2, 3, 2))],
    "native_batch_norm": [
        c("batch_norm training (N, C, H, W)", lambda x, w, b: NF.batch_norm(
            x, None, None, w, b, training=True), R(2, 3, 2, 2), R(3), R(3)),
        c("batch_norm training (N, C), running stats", lambda x: NF.batch_norm(
            x, gradviz.zeros(3, dtype=F64), gradviz.ones(3, dtype=F64), training=True),
          R(4, 3)),
        c("batch_norm eval", lambda x, w, b: NF.batch_norm(
            x, gradviz.tensor([0.1, -0.2], dtype=F64), gradviz.tensor([0.5, 2.0], dtype=F64),
            w, b, training=False), R(3, 2, 3), R(2), R(2)),
    ],
})
CASES["mul"].append(c("outer (MulBackward0 over ViewBackward0)",
                      lambda x, y: gradviz.outer(x, y), R(3), R(2)))
CASES["mul"].append(c("dropout mask (reseeded: the same mask each call)",
                      lambda x: NF.dropout(x, 0.5) if gradviz.manual_seed(0) else x, R(3, 4)))
CASES["view"].append(c("flatten", lambda x: x.flatten(1), R(2, 3, 4)))
CASES["clone"].append(c("contiguous of t()", lambda x: x.t().contiguous(), R(2, 3)))
CASES["_unsafe_view"].append(c("matmul 3-D @ 2-D (fold)", lambda x, y: x @ y, R(2, 3, 4),
                               R(4, 2)))
CASES["_unsafe_view"].append(c("matmul 2-D @ 3-D (fold, transposed)", lambda x, y: x @ y,
                               R(3, 4), R(2, 4, 2)))
CASES["copy_"].append(c("h[...] = v broadcast", _setitem(Ellipsis, lambda v: v), R(3, 4),
                        R(4)))
CASES["copy_"].append(c("h[:] = v", _setitem(slice(None), lambda v: v), R(3, 4), R(3, 4)))
CASES["mul"].append(c("view.mul_(y) through CopySlices", _view_inplace, R(3, 4), R(2, 2)))
# Exact zeros among the factors (gradviz's prod backward special-cases them).
CASES["prod"].append(c("prod with a zero", lambda x: x.prod(),
                       W([[0.0, 1.5, -2.0], [0.5, 1.2, 0.7]])))
CASES["prod"].append(c(
    "prod with two zeros", lambda x: x.prod(), W([0.0, 1.5, 0.0]),
    gg="gradviz's prod backward returns constant zeros for 2+ zeros even under create_graph; "
       "torch switches to a differentiable formula there (its gradgradcheck passes)"))
CASES["prod_dim"].append(c("prod dim with zeros", lambda x: x.prod(0, keepdim=True),
                           W([[0.0, 1.5, 0.0], [0.5, 0.0, 0.7]])))
# x.fill_(0-d tensor) is fill_.Tensor: FillBackward3, with a gradient for the value.
CASES["fill_tensor_"].append(c("fill_ with a 0-d tensor", lambda x, v: x.clone().fill_(v),
                               R(3, 2), R()))


# -- more (nnact): logsigmoid's row has two outputs (the value, the kernel's buffer), so its
# case goes through F.logsigmoid; values spread to both sides of 0 and far below it.
CASES["log_sigmoid_forward"] = [
    c("logsigmoid", lambda x: NF.logsigmoid(x), R(3, 4)),
    c("logsigmoid wide", lambda x: NF.logsigmoid(x), W([-30.0, -2.0, 0.5, 3.0, 40.0]))]


# -- more (opsrand): the random in-place fills, on a non-leaf clone (their rows are random: the
# cases re-seed the generator before each forward, NOTE [random rows]). A fill's output does
# not move with its input, so finite differences see its zero gradient.
_PROBS = C([[0.15, 0.5, 0.85], [0.3, 0.7, 0.45]])
CASES.update({
    "bernoulli_": [c("bernoulli_(0.3) on clone", _inplace("bernoulli_", 0.3), R(2, 3)),
                   c("bernoulli_ then mul", lambda x: x.clone().bernoulli_(0.5) * x, R(3))],
    "bernoulli_tensor_": [
        c("bernoulli_(p) on clone", lambda x, p: x.clone().bernoulli_(p), R(2, 3), _PROBS),
        c("bernoulli_(p) p requires grad", lambda x, p: x.clone().bernoulli_(p), R(2, 3),
          W([0.2, 0.5, 0.8]))],
    "exponential_": [c("exponential_ on clone", _inplace("exponential_", 2.0), R(2, 3))],
    "geometric_": [c("geometric_ on clone", _inplace("geometric_", 0.3), R(2, 3))],
    "cauchy_": [c("cauchy_ on clone", _inplace("cauchy_"), R(2, 3))],
    "log_normal_": [c("log_normal_ on clone", _inplace("log_normal_", 0.0, 0.5), R(2, 3))],
    "uniform_": [c("uniform_ on clone", _inplace("uniform_", -1.0, 1.0), R(2, 3))],
    "normal_": [c("normal_ on clone", _inplace("normal_", 0.0, 2.0), R(2, 3))],
    "random_from_": [c("random_(2, 5) on clone", _inplace("random_", 2, 5), R(2, 3))],
    "random_to_": [c("random_(5) on clone", _inplace("random_", 5), R(2, 3))],
    "random_": [c("random_() on clone", _inplace("random_"), R(2, 3))],
})


# -- more (einlin): eigh and cholesky read one triangle of a symmetric matrix, so a perturbation
# of the other one changes nothing: their cases build the symmetric (positive definite) matrix
# from a free one, as PyTorch's own tests do. Eigenvectors enter squared (V * V), which does not
# depend on each column's sign.
def _spd(x: gradviz.Tensor) -> gradviz.Tensor:
    return x @ x.transpose(-2, -1) + 3 * gradviz.eye(x.shape[-1], dtype=gradviz.float64)


def _eigh(x: gradviz.Tensor, uplo: str = "L") -> tuple:
    w, v = gradviz.linalg.eigh(x + x.transpose(-2, -1), UPLO=uplo)
    return w, v * v


def _torch_cholesky(x: gradviz.Tensor, upper: bool = False) -> gradviz.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gradviz.cholesky(_spd(x), upper)


CASES["linalg_eigh"] = [c("eigh of x + xT", _eigh, R(3, 3)),
                        c("eigh batched, upper", lambda x: _eigh(x, "U"), R(2, 4, 4)),
                        c("eigvalsh", lambda x: gradviz.linalg.eigvalsh(x + x.transpose(0, 1)),
                          R(3, 3))]
CASES["linalg_cholesky_ex"] = [
    c("cholesky of x xT + 3I", lambda x: gradviz.linalg.cholesky(_spd(x)), R(3, 3)),
    c("cholesky upper, batched", lambda x: gradviz.linalg.cholesky(_spd(x), upper=True),
      R(2, 3, 3))]
CASES["cholesky"] = [c("torch.cholesky", _torch_cholesky, R(3, 3)),
                     c("torch.cholesky upper", lambda x: _torch_cholesky(x, True), R(3, 3))]


def _iadd(a: gradviz.Tensor, b: Any) -> gradviz.Tensor:
    a += b
    return a


def _imul(a: gradviz.Tensor, b: Any) -> gradviz.Tensor:
    a *= b
    return a


def _row_cases(op: Any) -> list[Case]:
    """A row's samples, through each API the row generates."""
    if not op.function:
        calls = {"dispatch": lambda *a, **k: dispatch(op, *a, **k)}
    else:
        calls = {"function": getattr(gradviz, op.function)}
        if op.method:
            calls["method"] = lambda x, *a, **k: getattr(x, op.function)(*a, **k)
        if op.inplace:
            calls["in place"] = lambda x, *a, **k: getattr(x.clone(), op.function + "_")(*a, **k)
    cases = []
    for i, sample in enumerate(op.samples):
        for how, call in calls.items():
            def fn(*xs: Any, _call: Any = call, _kw: dict = sample.kwargs) -> Any:
                return _call(*xs, **_kw)
            cases.append(Case(f"{op.name} sample {i} ({how})", fn, sample.specs, sample.gg,
                              fd=sample.fd))
    return cases


def _seeded(op_name: str, case: Case) -> Case:
    """A random row's case re-seeds the default generator before each forward, so that
    gradcheck's repeated calls see one function of the inputs (NOTE [random rows])."""
    if not OPS[op_name].random:
        return case
    fn = case.fn

    def run(*xs: Any) -> Any:
        gradviz.manual_seed(0)
        return fn(*xs)

    return Case(case.id, run, case.specs, case.gg, case.kw, case.fd)


ROW_CASES = {name: _row_cases(op) for name, op in OPS.items() if op.samples}
ALL = [pytest.param(op, _seeded(op, case), id=f"{op}: {case.id}")
       for table in (ROW_CASES, CASES) for op, cases in table.items() for case in cases]
FD = [p for p in ALL if p.values[1].fd is None]
GG = [p for p in ALL if p.values[1].gg is None]


# -- the tests -----------------------------------------------------------------------------------
def test_every_differentiable_op_has_a_case() -> None:
    """A new differentiable op in the table needs a gradcheck case here."""
    # NotImplemented nodes (`x // y`) are recorded but have no derivative to check.
    # So are the nodes of in-place ops PyTorch has no derivative for (`x.asinh_()`).
    differentiable = {name for name, op in OPS.items()
                      if op.node is not None and op.node != "NotImplemented"
                      and not all(getattr(g, "not_implemented", False)
                                  for g in op.grads.values())}
    covered = {k for k, v in CASES.items() if v} | set(ROW_CASES)
    missing = sorted(differentiable - covered)
    assert not missing, f"ops without samples in their row or a case in {__file__}: {missing}"
    stale = sorted(set(CASES) - set(OPS))
    assert not stale, f"cases filed under ops that are not in OPS: {stale}"
    not_diff = sorted(set(CASES) - differentiable)
    assert not not_diff, f"cases filed under non-differentiable ops: {not_diff}"


@pytest.mark.parametrize(("op_name", "case"), ALL)
def test_case_records_its_op(op_name: str, case: Case) -> None:
    """The case's graph contains the node class of the op it is filed under."""
    out = case.fn(*case.inputs())
    node_cls = OPS[op_name].node_cls
    names = sorted({n.name() for n in graph_nodes(out)})
    assert node_cls is not None and any(type(n) is node_cls for n in graph_nodes(out)), (
        f"{case.id!r} does not record {OPS[op_name].node}; its graph has {names}")


@pytest.mark.parametrize(("op_name", "case"), FD)
def test_gradcheck(op_name: str, case: Case) -> None:
    assert gradcheck(case.fn, case.inputs(), **case.kw)


@pytest.mark.parametrize(("op_name", "case"), GG)
def test_gradgradcheck(op_name: str, case: Case) -> None:
    assert gradgradcheck(case.fn, case.inputs(), **case.kw)


# -- the checker itself must be able to fail -------------------------------------------------------
class _WrongSecondOrder(gradviz.autograd.Function):
    """x**2 with a backward that is right once but detached: its second derivative is wrong."""

    @staticmethod
    def forward(ctx: Any, x: gradviz.Tensor) -> gradviz.Tensor:
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx: Any, grad: gradviz.Tensor) -> gradviz.Tensor:
        (x,) = ctx.saved_tensors
        return grad * 2 * x.detach()


class _WrongFirstOrder(gradviz.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: gradviz.Tensor) -> gradviz.Tensor:
        return x * 3

    @staticmethod
    def backward(ctx: Any, grad: gradviz.Tensor) -> gradviz.Tensor:
        return grad * 2


def test_gradcheck_detects_a_wrong_gradient() -> None:
    x = R(3).make(np.random.default_rng(0))
    assert not gradcheck(_WrongFirstOrder.apply, (x,), raise_exception=False)
    with pytest.raises(gradviz.autograd.GradcheckError, match="Jacobian mismatch"):
        gradcheck(_WrongFirstOrder.apply, (x,))


def test_gradgradcheck_detects_a_wrong_second_derivative() -> None:
    x = R(3).make(np.random.default_rng(0))
    assert gradcheck(_WrongSecondOrder.apply, (x,))
    assert not gradgradcheck(_WrongSecondOrder.apply, (x,), raise_exception=False)
