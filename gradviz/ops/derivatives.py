"""The derivative table: every differentiable op, declared once.

Each :class:`OpInfo` gives an op's NumPy forward, the PyTorch node its backward is recorded as, and
one formula per differentiable input (PyTorch's ``tools/autograd/derivatives.yaml`` in Python).

How a formula asks for what it needs — by its parameter names, as derivatives.yaml does:

* the first parameter is the incoming gradient (``grad``);
* an input's name (``self``, ``other``, ``mat2``, ``exponent``) is that input as saved in forward;
* ``result`` is the op's output;
* ``<input>_sym_sizes`` / ``<input>_sym_numel`` / ``<input>_dtype`` are that input's shape /
  element count / dtype;
* any other name is a forward keyword argument (``dim``, ``keepdim``, ``alpha`` ...).

The dispatch point saves exactly what the formulas of the inputs that need a gradient ask for, and
exposes it as PyTorch does (``grad_fn._saved_self``, ``grad_fn._saved_result`` ...). Formulas are
written with operators and :mod:`gradviz.ops._formula` helpers only, so the same formula runs on
NumPy arrays in a plain backward and on tensors under ``create_graph`` (see the NOTE there).
Broadcasting is undone once, by the dispatch point's node, for ops marked ``broadcasts``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradviz.ops import _formula as f

__all__ = ["OpInfo", "OPS", "defop"]


@dataclass(eq=False)
class OpInfo:
    """One row of the derivative table."""

    name: str
    node: str | None  # PyTorch's node class name; None for ops that are never differentiable
    forward: Callable[..., Any]
    inputs: tuple[str, ...]
    grads: dict[str, Callable[..., Any]] = field(default_factory=dict)
    broadcasts: bool = False  # elementwise over broadcast inputs: reduce grads to input shapes
    promotes: bool = False  # int inputs with float scalars give the default float, not float64
    view: bool = False  # the output shares the first input's storage and version counter
    doc: str = ""
    # Filled in by defop: per input, the formula's parameter names after the gradient.
    needs: tuple[tuple[str, ...] | None, ...] = ()
    saved_names: tuple[str, ...] = ()
    attr_names: tuple[str, ...] = ()  # saved names that are forward keyword arguments
    defaults: dict[str, Any] = field(default_factory=dict)  # the forward's keyword defaults
    node_cls: type | None = None


OPS: dict[str, OpInfo] = {}


def defop(name: str, node: str | None, forward: Callable[..., Any], inputs: tuple[str, ...],
          *, broadcasts: bool = False, promotes: bool = False, view: bool = False, doc: str = "",
          **grads: Callable[..., Any]) -> OpInfo:
    """Declare an op: its forward, its node name, and one backward formula per input name."""
    unknown = set(grads) - set(inputs)
    if unknown:
        raise ValueError(f"{name}: formulas for unknown inputs {sorted(unknown)}")
    needs = tuple(
        tuple(list(inspect.signature(grads[i]).parameters)[1:]) if i in grads else None
        for i in inputs)
    saved: list[str] = []
    for names in needs:
        for n in names or ():
            if n not in saved:
                saved.append(n)
    try:
        params = inspect.signature(forward).parameters.values()
        defaults = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
    except (TypeError, ValueError):  # NumPy ufuncs have no signature
        defaults = {}
    derived = ("_sym_sizes", "_sym_numel", "_dtype")
    attrs = tuple(n for n in sorted(saved) if n not in inputs and n != "result"
                  and not n.endswith(derived))
    op = OpInfo(name, node, forward, inputs, grads, broadcasts, promotes, view, doc, needs,
                tuple(sorted(saved)), attrs, defaults)
    if name in OPS:
        raise ValueError(f"op {name!r} declared twice")
    OPS[name] = op
    return op


# ---------------------------------------------------------------------------------------------
# Formulas shared by several entries
# ---------------------------------------------------------------------------------------------

def _pow_backward(grad, self, exponent):
    if exponent == 0:
        return f.zeros_like(grad)
    return grad * (exponent * self ** (exponent - 1))


def _pow_scalar_base_backward(grad, self, exponent, result):
    # d(b**e)/de = b**e * log(b); PyTorch defines it as 0 where b == 0 and e >= 0.
    if self == 0:
        return grad * f.where(exponent >= 0, 0.0, result * f.log(self))
    return grad * (result * f.log(self))


def _sum_backward(grad, self_sym_sizes, dim, keepdim):
    if not keepdim and len(self_sym_sizes):
        grad = f.unsqueeze_dims(grad, dim)
    return f.expand(grad, self_sym_sizes)


def _reduced_count(self_sym_sizes, dim):
    n = 1
    for d in dim:
        n *= self_sym_sizes[d]
    return n


def _np_sum(a, dim=None, keepdim=False):
    return np.asarray(np.sum(a, axis=dim, keepdims=keepdim))


def _np_mean(a, dim=None, keepdim=False):
    return np.asarray(np.mean(a, axis=dim, keepdims=keepdim))


def _np_div(a, b):
    # True division; PyTorch promotes integer operands to the default float type (see promotes).
    return np.true_divide(a, b)


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------

# Arithmetic
defop("add", "AddBackward0", lambda a, b, alpha=1: a + b if alpha == 1 else a + alpha * b,
      ("self", "other"), broadcasts=True, promotes=True,
      self=lambda grad: grad,
      other=lambda grad, alpha: grad if alpha == 1 else grad * alpha)
defop("sub", "SubBackward0", lambda a, b, alpha=1: a - b if alpha == 1 else a - alpha * b,
      ("self", "other"), broadcasts=True, promotes=True,
      self=lambda grad: grad,
      other=lambda grad, alpha: -grad if alpha == 1 else grad * -alpha)
defop("rsub", "RsubBackward1", lambda a, other, alpha=1: other - a if alpha == 1
      else other - alpha * a, ("self",), promotes=True,
      doc="``other - alpha * self`` with a number ``other``: what ``2 - x`` records.",
      self=lambda grad, alpha: -grad if alpha == 1 else grad * -alpha)
defop("mul", "MulBackward0", np.multiply, ("self", "other"), broadcasts=True, promotes=True,
      self=lambda grad, other: grad * other,
      other=lambda grad, self: grad * self)
defop("div", "DivBackward0", _np_div, ("self", "other"), broadcasts=True, promotes=True,
      self=lambda grad, other: grad / other,
      other=lambda grad, self, other: -grad * ((self / other) / other))
defop("neg", "NegBackward0", np.negative, ("self",),
      self=lambda grad: -grad)
defop("reciprocal", "ReciprocalBackward0", lambda a: np.reciprocal(a.astype(np.result_type(a, 1.0))
                                                                   if a.dtype.kind in "iub" else a),
      ("self",), promotes=True,
      self=lambda grad, result: -grad * (result * result))
defop("pow", "PowBackward0", lambda a, exponent: np.power(a, exponent), ("self",), promotes=True,
      doc="tensor ** number",
      self=_pow_backward)
defop("pow_tensor", "PowBackward1", np.power, ("self", "exponent"), broadcasts=True,
      promotes=True, doc="tensor ** tensor",
      self=lambda grad, self, exponent: f.where(
          exponent == 0, 0.0, grad * (exponent * self ** (exponent - 1))),
      exponent=lambda grad, self, exponent, result: grad * f.where(
          (self == 0) & (exponent >= 0), 0.0, result * f.log(self)))
defop("pow_scalar_base", "PowBackward2", lambda e, self: np.power(self, e), ("exponent",),
      promotes=True,
      doc="number ** tensor",
      exponent=_pow_scalar_base_backward)

# Elementwise functions
defop("exp", "ExpBackward0", np.exp, ("self",), promotes=True,
      self=lambda grad, result: grad * result)
defop("log", "LogBackward0", np.log, ("self",), promotes=True,
      self=lambda grad, self: grad / self)
defop("tanh", "TanhBackward0", np.tanh, ("self",), promotes=True,
      self=lambda grad, result: grad * (1 - result * result))
defop("sigmoid", "SigmoidBackward0",
      lambda a: np.asarray(0.5 * (np.tanh(0.5 * a) + 1)),  # overflow-free logistic
      ("self",), promotes=True,
      self=lambda grad, result: grad * ((1 - result) * result))
defop("relu", "ReluBackward0", lambda a: np.maximum(a, 0).astype(a.dtype, copy=False),
      ("self",),
      self=lambda grad, result: grad * (result > 0))

# Reductions
defop("sum", "SumBackward0", lambda a: _np_sum(a), ("self",),
      self=lambda grad, self_sym_sizes: f.expand(grad, self_sym_sizes))
defop("sum_dim", "SumBackward1", _np_sum, ("self",),
      self=_sum_backward)
defop("mean", "MeanBackward0", lambda a: _np_mean(a), ("self",),
      self=lambda grad, self_sym_sizes, self_sym_numel: f.expand(grad, self_sym_sizes)
      / self_sym_numel)
defop("mean_dim", "MeanBackward1", _np_mean, ("self",),
      self=lambda grad, self_sym_sizes, dim, keepdim: _sum_backward(
          grad, self_sym_sizes, dim, keepdim) / _reduced_count(self_sym_sizes, dim))

# Shape and views
defop("view", "ViewBackward0", lambda a, size: a.reshape(size), ("self",), view=True,
      doc="view/reshape that can share storage",
      self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
defop("_unsafe_view", "UnsafeViewBackward0", lambda a, size: a.reshape(size), ("self",),
      doc="the reshape of a copy (reshape of a non-contiguous tensor: clone, then this)",
      self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
defop("clone", "CloneBackward0", lambda a: a.copy(), ("self",),
      self=lambda grad: grad)
defop("transpose", "TransposeBackward0", lambda a, dim0, dim1: np.swapaxes(a, dim0, dim1),
      ("self",), view=True,
      self=lambda grad, dim0, dim1: f.transpose(grad, dim0, dim1))
defop("t", "TBackward0", lambda a: a.T, ("self",), view=True,
      self=lambda grad: f.t(grad))
defop("permute", "PermuteBackward0", lambda a, dims: np.transpose(a, dims), ("self",), view=True,
      self=lambda grad, dims: f.permute(grad, tuple(np.argsort(dims))))
defop("expand", "ExpandBackward0", lambda a, size: np.broadcast_to(a, size), ("self",), view=True,
      self=lambda grad, self_sym_sizes: f.sum_to(grad, self_sym_sizes))
defop("unsqueeze", "UnsqueezeBackward0", lambda a, dim: np.expand_dims(a, dim), ("self",), view=True,
      self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
defop("squeeze", "SqueezeBackward0", lambda a: np.squeeze(a), ("self",), view=True,
      self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
defop("squeeze_dim", "SqueezeBackward1", lambda a, dim: np.squeeze(a, dim) if a.shape[dim] == 1
      else a, ("self",), view=True,
      self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))

defop("to_copy", "ToCopyBackward0", lambda a, dtype: a.astype(dtype), ("self",),
      doc="a dtype cast (``x.double()``, ``x.to(dtype)``)",
      self=lambda grad, self_dtype: f.to_dtype(grad, self_dtype))

# Linear algebra
defop("mm", "MmBackward0", np.matmul, ("self", "mat2"),
      self=lambda grad, mat2: grad @ f.t(mat2),
      mat2=lambda grad, self: f.t(self) @ grad)
defop("dot", "DotBackward0", np.dot, ("self", "tensor"),
      self=lambda grad, tensor: grad * tensor,
      tensor=lambda grad, self: grad * self)
defop("mv", "MvBackward0", np.matmul, ("self", "vec"),
      self=lambda grad, vec: grad.reshape((-1, 1)) * vec.reshape((1, -1)),
      vec=lambda grad, self: f.t(self) @ grad)

# Selection
defop("where", "WhereBackward0", np.where, ("condition", "self", "other"), broadcasts=True,
      self=lambda grad, condition: f.where(condition, grad, 0.0),
      other=lambda grad, condition: f.where(condition, 0.0, grad))

# In-place-only nodes
defop("zero_", "ZeroBackward0", lambda a: np.zeros_like(a), ("self",),
      self=lambda grad: f.zeros_like(grad))
defop("fill_", "FillBackward2", lambda a, value: np.full_like(a, value), ("self",),
      self=lambda grad: f.zeros_like(grad))
defop("copy_", "CopyBackwards", lambda a, src: np.broadcast_to(src, a.shape), ("self", "src"),
      self=lambda grad: f.zeros_like(grad),
      src=lambda grad, src_sym_sizes: f.sum_to(grad, src_sym_sizes))

# Comparisons: recorded as ops (the tracer shows them) but never differentiable.
for _name, _fn in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                   ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)):
    defop(_name, None, _fn, ("self", "other"))
defop("logical_not", None, np.logical_not, ("self",))
defop("logical_and", None, np.logical_and, ("self", "other"))
defop("logical_or", None, np.logical_or, ("self", "other"))
