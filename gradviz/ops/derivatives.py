"""The derivative table: every differentiable op, declared once.

Each :class:`OpInfo` gives an op's NumPy forward, the PyTorch node its backward is recorded as, and
one formula per differentiable input (PyTorch's ``tools/autograd/derivatives.yaml`` in Python).

How a formula asks for what it needs — by its parameter names, as derivatives.yaml does:

* the first parameter is the incoming gradient (``grad``); for an op with several outputs
  (``multi``) it is ``grads``, one gradient per differentiable output, zeros where none arrived;
* an input's name (``self``, ``other``, ``mat2``, ``exponent``) is that input as saved in forward;
* ``result`` is the op's output; a multi-output op's outputs go by the names in ``outputs``
  (``indices``, ``result1`` ...);
* ``<input>_sym_sizes`` / ``<input>_sym_numel`` / ``<input>_dtype`` / ``<input>_sym_argsize_<k>``
  are that input's shape / element count / dtype / size of dimension k; ``<input>_args_sizes``
  the shapes of a list input (``cat``'s ``tensors``);
* any other name is a forward keyword argument (``dim``, ``keepdim``, ``alpha`` ...); a tensor
  passed that way (``nll_loss``'s ``target``, ``masked_fill``'s ``mask``) is saved like an input.

The dispatch point saves exactly what the formulas of the inputs that need a gradient ask for, and
exposes it as PyTorch does (``grad_fn._saved_self``, ``grad_fn._saved_result`` ...). Formulas are
written with operators and :mod:`gradviz.ops._formula` helpers only, so the same formula runs on
NumPy arrays in a plain backward and on tensors under ``create_graph`` (see the NOTE there).
Broadcasting is undone once, by the dispatch point's node, for ops marked ``broadcasts`` (all
inputs, or the named ones). docs/ops.md lists every entry with its PyTorch node and saved names.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradviz.ops import _formula as f
from gradviz.ops import _kernels

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
    quiet: bool = False  # may divide by zero etc.: run without NumPy's warnings, as PyTorch does
    doc: str = ""
    # Filled in by defop: per input, the formula's parameter names after the gradient.
    needs: tuple[tuple[str, ...] | None, ...] = ()
    saved_names: tuple[str, ...] = ()
    attr_names: tuple[str, ...] = ()  # saved names that are forward keyword arguments
    defaults: dict[str, Any] = field(default_factory=dict)  # the forward's keyword defaults
    node_cls: type | None = None
    # Filled in by the dispatch point: which names to save for each mask of inputs needing grad.
    save_plans: dict[int, tuple[tuple[str, int, Any], ...]] = field(
        default_factory=dict)
    # Ops whose forward returns several outputs, or takes a list of tensors, take the general
    # dispatch path (NOTE [multi-output and variadic ops] in gradviz/ops/dispatch.py).
    multi: bool = False  # the forward returns a tuple of outputs; formulas get `grads`, a list
    outputs: tuple[str, ...] = ()  # names of a multi-output op's outputs, for saving them
    nondiff_outputs: tuple[int, ...] = ()  # outputs that never carry a gradient (indices ...)
    variadic: bool = False  # the one input is a list of tensors (cat, stack)
    hidden: tuple[str, ...] = ()  # saved for the formulas but not shown as `_saved_*` (as torch)
    broadcast_idx: tuple[int, ...] = ()  # the inputs whose gradients are summed to their shape
    general: bool = False  # multi or variadic (a plain attribute: dispatch reads it every call)


OPS: dict[str, OpInfo] = {}


def defop(name: str, node: str | None, forward: Callable[..., Any], inputs: tuple[str, ...],
          *, broadcasts: bool | tuple[str, ...] = False, promotes: bool = False,
          view: bool = False, quiet: bool = False, doc: str = "", multi: bool = False,
          outputs: tuple[str, ...] = (), nondiff_outputs: tuple[int, ...] = (),
          variadic: bool = False, hidden: tuple[str, ...] = (),
          **grads: Callable[..., Any]) -> OpInfo:
    """Declare an op: its forward, its node name, and one backward formula per input name.

    ``broadcasts`` is True (every input broadcasts) or the names of the inputs that do (addmm's
    ``self``). ``multi``/``outputs``/``nondiff_outputs`` describe a forward returning a tuple;
    ``variadic`` a single input that is a list of tensors, whose formula returns a list.
    """
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
    derived = ("_sym_sizes", "_sym_numel", "_dtype", "_args_sizes")
    attrs = tuple(n for n in sorted(saved) if n not in inputs and n != "result"
                  and n not in outputs and not n.endswith(derived)
                  and "_sym_argsize_" not in n)
    op = OpInfo(name, node, forward, inputs, grads, bool(broadcasts), promotes, view, quiet, doc,
                needs, tuple(sorted(saved)), attrs, defaults)
    op.multi, op.outputs, op.nondiff_outputs = multi or bool(outputs), outputs, nondiff_outputs
    op.variadic, op.hidden = variadic, hidden
    op.general = op.multi or variadic
    op.broadcast_idx = tuple(i for i, n in enumerate(inputs)
                             if broadcasts is True or (broadcasts and n in broadcasts))
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


def _mat2_grad(grad, mat1):
    """``mat1.T @ grad``, computed as ``(grad.T @ mat1).T``: the same numbers, laid out so that
    for ``F.linear``'s ``weight.t()`` the weight's gradient comes out contiguous.

    NOTE [perf]: the gradient of ``weight.t()`` reaches ``weight`` through ``TBackward0``; in
    this layout that transpose is C-contiguous and ``AccumulateGrad`` copies it in one memcpy
    instead of a strided transpose.
    """
    return f.t(f.t(grad) @ mat1)


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


def _np_power(a, b):
    # PyTorch's integer pow takes negative exponents (0, or +-1 for a base of +-1) where NumPy
    # raises "Integers to negative integer powers are not allowed".
    dt = np.result_type(a, b)  # before wrapping: a Python int operand stays weakly typed
    if dt.kind in "iu" and np.any(np.asarray(b) < 0):
        a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        out = np.power(a, np.where(b < 0, 0, b))
        small = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
        return np.where(b < 0, small, out).astype(dt)
    return np.power(a, b)


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
defop("rsub_tensor", "RsubBackward0", lambda a, b, alpha=1: b - a if alpha == 1 else b - alpha * a,
      ("self", "other"), broadcasts=True, promotes=True,
      doc="``other - alpha * self`` with a tensor ``other``: ``gradviz.rsub(x, y)``.",
      self=lambda grad, alpha: -grad if alpha == 1 else grad * -alpha,
      other=lambda grad: grad)
defop("mul", "MulBackward0", np.multiply, ("self", "other"), broadcasts=True, promotes=True,
      self=lambda grad, other: grad * other,
      other=lambda grad, self: grad * self)
defop("div", "DivBackward0", _np_div, ("self", "other"), broadcasts=True, promotes=True, quiet=True,
      self=lambda grad, other: grad / other,
      other=lambda grad, self, other: -grad * ((self / other) / other))
defop("neg", "NegBackward0", np.negative, ("self",),
      self=lambda grad: -grad)
defop("reciprocal", "ReciprocalBackward0", lambda a: np.reciprocal(a.astype(np.result_type(a, 1.0))
                                                                   if a.dtype.kind in "iub" else a),
      ("self",), promotes=True, quiet=True,
      self=lambda grad, result: -grad * (result * result))
defop("pow", "PowBackward0", lambda a, exponent: np.power(a, exponent), ("self",),
      promotes=True, quiet=True,
      doc="tensor ** number",
      self=_pow_backward)
defop("pow_tensor", "PowBackward1", _np_power, ("self", "exponent"), broadcasts=True,
      promotes=True, quiet=True, doc="tensor ** tensor",
      self=lambda grad, self, exponent: f.where(
          exponent == 0, 0.0, grad * (exponent * self ** (exponent - 1))),
      exponent=lambda grad, self, exponent, result: grad * f.where(
          (self == 0) & (exponent >= 0), 0.0, result * f.log(self)))
defop("pow_scalar_base", "PowBackward2", lambda e, self: _np_power(self, e), ("exponent",),
      promotes=True, quiet=True,
      doc="number ** tensor",
      exponent=_pow_scalar_base_backward)

# Elementwise functions
defop("exp", "ExpBackward0", np.exp, ("self",), promotes=True,
      self=lambda grad, result: grad * result)
defop("log", "LogBackward0", np.log, ("self",), promotes=True, quiet=True,
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
      self=lambda grad, self_sym_sizes, dim, self_sym_numel, keepdim: _sum_backward(
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
defop("unsqueeze", "UnsqueezeBackward0", lambda a, dim: np.expand_dims(a, dim), ("self",),
      view=True,
      self=lambda grad, dim: grad.squeeze(dim))  # ndarray.squeeze(axis) and Tensor.squeeze(dim)
defop("squeeze", "SqueezeBackward0", lambda a: np.squeeze(a), ("self",), view=True,
      self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
defop("squeeze_dim", "SqueezeBackward1", lambda a, dim: np.squeeze(a, dim) if a.shape[dim] == 1
      else a, ("self",), view=True,
      self=lambda grad, self_sym_sizes, dim: grad.reshape(self_sym_sizes))  # saves dim, as torch
defop("squeeze_dim_", "SqueezeBackward4", lambda a, dim: np.squeeze(a, dim) if a.shape[dim] == 1
      else a, ("self",),
      doc="in-place ``squeeze_(dim)``: only inside matmul (1-D @ 2-D), as in PyTorch",
      self=lambda grad, self_sym_sizes, dim: grad.reshape(self_sym_sizes))

defop("to_copy", "ToCopyBackward0", lambda a, dtype: a.astype(dtype), ("self",),
      doc="a dtype cast (``x.double()``, ``x.to(dtype)``)",
      self=lambda grad, self_dtype: f.to_dtype(grad, self_dtype))

# Linear algebra
# PyTorch's mm formulas also take the sizes (and strides, which gradviz does not model).
defop("mm", "MmBackward0", np.matmul, ("self", "mat2"),
      self=lambda grad, mat2, self_sym_sizes: grad @ f.t(mat2),
      mat2=lambda grad, self, mat2_sym_sizes: _mat2_grad(grad, self))
defop("dot", "DotBackward0", np.dot, ("self", "tensor"),
      self=lambda grad, tensor: grad * tensor,
      tensor=lambda grad, self: grad * self)
defop("mv", "MvBackward0", np.matmul, ("self", "vec"),
      self=lambda grad, vec: grad.reshape((-1, 1)) * vec.reshape((1, -1)),
      vec=lambda grad, self: f.t(self) @ grad)

# Selection
# The condition is an argument, not an input: it has no derivative, so no edge (as PyTorch).
defop("where", "WhereBackward0", lambda a, b, condition: np.where(_kernels.arr(condition), a, b),
      ("self", "other"), broadcasts=True,
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
# Boolean tests and reductions: bool results, never differentiable.
defop("all", None, lambda a, dim=None, keepdim=False: np.asarray(
    np.all(a, axis=dim, keepdims=keepdim)), ("self",))
defop("any", None, lambda a, dim=None, keepdim=False: np.asarray(
    np.any(a, axis=dim, keepdims=keepdim)), ("self",))
defop("isnan", None, np.isnan, ("self",))
defop("isinf", None, np.isinf, ("self",))
defop("isfinite", None, np.isfinite, ("self",))
# Index-valued reductions: int64 results, never differentiable.
defop("argmax", None, lambda a, dim=None, keepdim=False: np.asarray(
    np.argmax(a, axis=dim, keepdims=keepdim)).astype(np.int64), ("self",))
defop("argmin", None, lambda a, dim=None, keepdim=False: np.asarray(
    np.argmin(a, axis=dim, keepdims=keepdim)).astype(np.int64), ("self",))


# =============================================================================================
# The op library: elementwise functions, reductions, shapes, indexing, nn.functional kernels.
# Node names and saved names are PyTorch 2.x's (checked against torch 2.13); docs/ops.md lists
# them all, with the places gradviz differs.
# =============================================================================================

def _restore(g, dims, keepdim):
    """Re-insert reduced dimensions into a gradient (``restore_reduced_dims``)."""
    return g if keepdim else f.unsqueeze_dims(g, dims)


def _all_dims(x, dim):
    return tuple(range(len(x.shape))) if dim is None or dim == () else dim


def _even_share(grad, self, result, dims, keepdim):
    """Share ``grad`` evenly among the elements equal to the extremum (amax, max(), ...).
    The weights are constants: they depend on ties, not smoothly on ``self``."""
    x, r = f.data(self), np.asarray(f.data(result))
    if not keepdim:
        r = np.expand_dims(r, dims)
    mask = (x == r) | (np.isnan(x) & np.isnan(r))
    w = (mask / mask.sum(axis=dims, keepdims=True)).astype(f.dtype_of(grad))
    return _restore(grad, dims, keepdim) * w


def _amax_backward(grad, self, result, dim, keepdim):
    return _even_share(grad, self, result, _all_dims(self, dim), keepdim)


def _value_selecting_backward(grads, self_sym_sizes, dim, indices, keepdim):
    """max(dim)/min(dim): the gradient goes to the returned index (``scatter`` into zeros)."""
    grad = grads[0]
    if not self_sym_sizes:
        return grad
    if not keepdim:
        grad = f.unsqueeze_dims(grad, (dim,))
        indices = f.unsqueeze_dims(indices, (dim,))
    z = f.new_zeros(self_sym_sizes, f.dtype_of(grad), f.is_tensor(grad))
    return f.scatter(z, dim, indices, grad)


def _prod_backward(grad, self, result, dims, keepdim):
    """d prod / d x_i = product of the others, also when some x are 0 (PyTorch's
    ``prod_backward``): with no zero it is ``result / x``; with exactly one zero only that
    element gets the product of the non-zero ones; with more, all get 0."""
    grad, result = _restore(grad, dims or (), keepdim), _restore(result, dims or (), keepdim)
    zero = f.data(self) == 0
    if not zero.any():
        return grad * (result / self)
    one_zero = zero & (zero.sum(axis=dims, keepdims=True) == 1)
    nonzero_prod = f.prod(f.where(zero, 1.0, self), dims, keepdim=True)
    others = f.where(one_zero, nonzero_prod, f.where(zero, 0.0, result / f.where(zero, 1.0, self)))
    return grad * others


def _var_backward(grad, self, dim, correction, keepdim):
    dims = _all_dims(self, dim)
    n = _reduced_count(self.shape, dims)
    c = 1 if correction is None else correction
    if dim is not None:
        grad = _restore(grad, dims, keepdim)
    return (2.0 / (n - c)) * grad * (self - f.mean(self, dims))


def _std_backward(grad, self, result, dim, correction, keepdim):
    zero = result == 0
    g = f.where(zero, 0.0, grad / f.where(zero, 1.0, result * 2))
    return _var_backward(g, self, dim, correction, keepdim)


def _norm_backward(grad, self, result, ord, dim, keepdim):  # noqa: A002 - PyTorch's name
    dims = _all_dims(self, dim)
    if dim is not None:
        grad, result = _restore(grad, dims, keepdim), _restore(result, dims, keepdim)
    if ord == 0:
        return f.zeros_like(self) * grad
    if ord == 1:
        return grad * f.sign(self)
    if ord in (math.inf, -math.inf):
        x, r = np.abs(f.data(self)), np.asarray(f.data(result))
        mask = x == r
        w = (np.sign(f.data(self)) * mask / mask.sum(axis=dims, keepdims=True))
        return grad * w.astype(f.dtype_of(grad))
    safe = f.where(result == 0, 1.0, result)
    if ord == 2:
        return grad * self / safe
    return grad * f.sign(self) * f.abs(self) ** (ord - 1) / safe ** (ord - 1)


def _gelu_backward(grad, self, approximate):
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        t = f.tanh(k * (self + 0.044715 * self * self * self))
        dt = (1 - t * t) * (k * (1 + 3 * 0.044715 * self * self))
        return grad * (0.5 * (1 + t) + 0.5 * self * dt)
    cdf = 0.5 * (1 + f.erf(self * (1 / math.sqrt(2))))
    pdf = f.exp(-0.5 * self * self) * (1 / math.sqrt(2 * math.pi))
    return grad * (cdf + self * pdf)


def _silu_backward(grad, self):
    s = f.sigmoid(self)
    return grad * (s * (1 + self * (1 - s)))


def _clamp_backward(grad, self, min, max):  # noqa: A002 - PyTorch's names
    if min is None:
        keep = self <= max
    elif max is None:
        keep = self >= min
    else:
        keep = (self >= min) & (self <= max)
    return f.where(keep, grad, 0.0)


def _clamp_min_grad(grad, self, min, max):  # noqa: A002
    keep = self < min
    if max is not None:
        keep = keep & (min <= max)
    return f.where(keep, grad, 0.0)


def _clamp_max_grad(grad, self, min, max):  # noqa: A002
    keep = self > max
    if min is not None:
        keep = keep | (min > max)
    return f.where(keep, grad, 0.0)


def _repeat_backward(grad, repeats, self_sym_sizes):
    lead = len(repeats) - len(self_sym_sizes)
    sizes = (1,) * lead + tuple(self_sym_sizes)
    g = grad.reshape(tuple(x for r, s in zip(repeats, sizes, strict=True) for x in (r, s)))
    return f.sum(g, tuple(range(0, 2 * len(repeats), 2))).reshape(self_sym_sizes)


def _cat_backward(grad, dim, tensors_args_sizes):
    out, start = [], 0
    for sizes in tensors_args_sizes:
        n = sizes[dim]
        out.append(f.slice_dim(grad, dim, start, start + n))
        start += n
    return out


def _nll_backward(grads, self, target, weight, reduction, ignore_index, total_weight):
    g = grads[0]
    shape = self.shape
    safe, w = _kernels.nll_weights(np.asarray(f.data(target)), weight, shape[-1], ignore_index,
                                   f.dtype_of(g))
    if reduction == 1:
        w = w / np.asarray(f.data(total_weight), w.dtype)
    per_row = g * (-w)  # 0-d gradient for mean/sum, one per row for reduction='none'
    if type(per_row) is np.ndarray:  # a plain backward: write each row's entry in place
        out = np.zeros(shape, per_row.dtype)
        if out.ndim == 1:
            out[safe] = per_row
        else:
            out[np.arange(shape[0]), safe] = per_row
        return out
    onehot = np.arange(shape[-1]) == safe[..., None]
    return f.where(onehot, per_row.reshape(tuple(safe.shape) + (1,)), 0.0)


def _numel(x):
    return int(np.prod(x.shape))


def _loss_scale(grad, self, reduction):
    return grad * (1.0 / _numel(self)) if reduction == 1 else grad


def _bce_self(grad, self, target, weight, reduction):
    g = _loss_scale(grad, self, reduction) * (self - target) / f.clamp_min((1 - self) * self,
                                                                         1e-12)
    return g if weight is None else g * weight


def _bce_target(grad, self, target, weight, reduction):
    g = _loss_scale(grad, self, reduction) * (f.clamp_min(f.log(1 - self), -100)
                                              - f.clamp_min(f.log(self), -100))
    return g if weight is None else g * weight


def _bce_logits_self(grad, self, target, weight, pos_weight, reduction):
    if pos_weight is None:
        g = f.sigmoid(self) - target
    else:
        t = pos_weight * target
        g = (t + 1 - target) * f.sigmoid(self) - t
    g = _loss_scale(grad, self, reduction) * g
    return g if weight is None else g * weight


def _bce_logits_target(grad, self, target, weight, pos_weight, reduction):
    if pos_weight is None:
        g = -self
    else:
        g = pos_weight * f.softplus(-self) - f.softplus(self)
    g = _loss_scale(grad, self, reduction) * g
    return g if weight is None else g * weight


def _layer_norm_backward(which, grads, input, normalized_shape, result1, result2, weight, bias,
                         eps):
    g = grads[0]
    nd = len(input.shape)
    axes = tuple(range(nd - len(normalized_shape), nd))
    mean, rstd = f.layer_norm_stats(input, axes, eps, result1, result2)
    xhat = (input - mean) * rstd
    if which == "weight":
        return f.sum(g * xhat, tuple(range(nd - len(normalized_shape))))
    if which == "bias":
        return f.sum(g, tuple(range(nd - len(normalized_shape))))
    gw = g if weight is None else g * weight
    return rstd * (gw - f.mean(gw, axes) - xhat * f.mean(gw * xhat, axes))


def _embedding_backward(grad, weight_sym_argsize_0, indices, padding_idx, scale_grad_by_freq,
                        sparse):
    idx = np.asarray(f.data(indices)).reshape(-1)
    n, d = weight_sym_argsize_0, grad.shape[-1]
    scale = (idx != padding_idx).astype(f.dtype_of(grad))
    if scale_grad_by_freq:
        scale = scale / np.bincount(idx, minlength=n)[idx]
    rows = grad.reshape((-1, d)) * scale.reshape(-1, 1).astype(f.dtype_of(grad))
    z = f.new_zeros((n, d), f.dtype_of(grad), f.is_tensor(grad))
    return f.index_put(z, (idx,), rows, True)


# -- elementwise -----------------------------------------------------------------------------------
defop("abs", "AbsBackward0", np.abs, ("self",),
      self=lambda grad, self: grad * f.sign(self))
defop("sign", "SignBackward0", _kernels.sign, ("self",),
      self=lambda grad: f.zeros_like(grad))
defop("sqrt", "SqrtBackward0", lambda a: np.sqrt(_kernels.as_float(a)), ("self",), promotes=True,
      quiet=True,
      self=lambda grad, result: grad / (2 * result))
defop("rsqrt", "RsqrtBackward0", lambda a: 1 / np.sqrt(_kernels.as_float(a)), ("self",),
      promotes=True, quiet=True,
      self=lambda grad, result: -0.5 * grad * (result * result * result))
defop("sin", "SinBackward0", lambda a: np.sin(_kernels.as_float(a)), ("self",), promotes=True,
      self=lambda grad, self: grad * f.cos(self))
defop("cos", "CosBackward0", lambda a: np.cos(_kernels.as_float(a)), ("self",), promotes=True,
      self=lambda grad, self: grad * -f.sin(self))
defop("log1p", "Log1PBackward0", lambda a: np.log1p(_kernels.as_float(a)), ("self",),
      promotes=True, quiet=True,
      self=lambda grad, self: grad / (self + 1))
defop("expm1", "Expm1Backward0", lambda a: np.expm1(_kernels.as_float(a)), ("self",), promotes=True,
      quiet=True,
      self=lambda grad, result: grad * (result + 1))
defop("erf", "ErfBackward0", lambda a: _kernels.erf(_kernels.as_float(a)), ("self",), promotes=True,
      self=lambda grad, self: grad * (2 / math.sqrt(math.pi)) * f.exp(-(self * self)))
defop("clamp", "ClampBackward1", _kernels.clamp, ("self",), promotes=True,
      doc="clamp/clip with number bounds (either may be None)",
      self=_clamp_backward)
defop("clamp_tensor", "ClampBackward0", _kernels.clamp, ("self", "min", "max"), broadcasts=True,
      promotes=True,
      doc="clamp with tensor bounds (either may be None)",
      self=_clamp_backward, min=_clamp_min_grad, max=_clamp_max_grad)
defop("clamp_min", "ClampMinBackward0", lambda a, min: np.maximum(a, min), ("self",),
      promotes=True,
      self=lambda grad, self, min: f.where(self >= min, grad, 0.0))
defop("clamp_min_tensor", "ClampMinBackward1", np.maximum, ("self", "min"), broadcasts=True,
      self=lambda grad, self, min: f.where(self >= min, grad, 0.0),
      min=lambda grad, self, min: f.where(self < min, grad, 0.0))
defop("clamp_max", "ClampMaxBackward0", lambda a, max: np.minimum(a, max), ("self",),
      promotes=True,
      self=lambda grad, self, max: f.where(self <= max, grad, 0.0))
defop("clamp_max_tensor", "ClampMaxBackward1", np.minimum, ("self", "max"), broadcasts=True,
      self=lambda grad, self, max: f.where(self <= max, grad, 0.0),
      max=lambda grad, self, max: f.where(self > max, grad, 0.0))
defop("maximum", "MaximumBackward0", np.maximum, ("self", "other"), broadcasts=True,
      promotes=True, doc="ties share the gradient equally, as in PyTorch",
      self=lambda grad, self, other: f.where(self < other, 0.0,
                                             f.where(self == other, grad / 2, grad)),
      other=lambda grad, self, other: f.where(self > other, 0.0,
                                              f.where(self == other, grad / 2, grad)))
defop("minimum", "MinimumBackward0", np.minimum, ("self", "other"), broadcasts=True,
      promotes=True, doc="ties share the gradient equally, as in PyTorch",
      self=lambda grad, self, other: f.where(self > other, 0.0,
                                             f.where(self == other, grad / 2, grad)),
      other=lambda grad, self, other: f.where(self < other, 0.0,
                                              f.where(self == other, grad / 2, grad)))
defop("mul_scalar", "MulBackward1", lambda a, other: a * other, ("self",), promotes=True,
      doc="tensor * Scalar inside PyTorch's C++ decompositions (cross_entropy's smoothing)",
      self=lambda grad, other: grad * other)
defop("add_scalar", "AddBackward1", lambda a, other, alpha=1: a + alpha * other, ("self",),
      promotes=True,
      doc="tensor + Scalar inside PyTorch's C++ decompositions (smoothed probability targets)",
      self=lambda grad: grad)
defop("div_scalar", "DivBackward1", lambda a, other: np.true_divide(a, other), ("self",),
      promotes=True, quiet=True,
      doc="tensor / Scalar inside PyTorch's C++ decompositions (cross_entropy's mean)",
      self=lambda grad, other: grad / other)

# -- activations (torch.nn.functional) ---------------------------------------------------------
defop("leaky_relu", "LeakyReluBackward0", _kernels.leaky_relu, ("self",),
      self=lambda grad, self, negative_slope: f.where(self > 0, grad, grad * negative_slope))
defop("leaky_relu_", "LeakyReluBackward1", _kernels.leaky_relu, ("self",),
      doc="in-place leaky_relu_ (saves the result instead of the input)",
      self=lambda grad, result, negative_slope: f.where(result > 0, grad,
                                                        grad * negative_slope))
defop("elu", "EluBackward0", _kernels.elu, ("self",),
      self=lambda grad, self, alpha, scale, input_scale: f.where(
          self > 0, grad * scale, grad * (alpha * scale * input_scale)
          * f.exp(self * input_scale)))
defop("elu_", "EluBackward1", _kernels.elu, ("self",),
      doc="in-place elu_ (saves the result instead of the input)",
      self=lambda grad, result, alpha, scale, input_scale: f.where(
          result > 0, grad * scale, grad * input_scale * (result + alpha * scale)))
defop("gelu", "GeluBackward0", _kernels.gelu, ("self",),
      self=_gelu_backward)
defop("silu", "SiluBackward0", lambda a: a * _kernels.sigmoid(a), ("self",),
      self=_silu_backward)
defop("softplus", "SoftplusBackward0", _kernels.softplus, ("self",),
      self=lambda grad, self, beta, threshold: f.where(self * beta > threshold, grad,
                                                       grad * f.sigmoid(self * beta)))
defop("softmax", "SoftmaxBackward0", _kernels.softmax, ("self",), quiet=True,
      self=lambda grad, result, dim: (grad - f.sum(grad * result, (dim,), True)) * result)
defop("log_softmax", "LogSoftmaxBackward0", _kernels.log_softmax, ("self",), quiet=True,
      self=lambda grad, result, dim: grad - f.exp(result) * f.sum(grad, (dim,), True))

# -- reductions ----------------------------------------------------------------------------------
defop("amax", "AmaxBackward0", _kernels.amax, ("self",),
      doc="ties share the gradient evenly; dim=() reduces every dimension",
      self=_amax_backward)
defop("amin", "AminBackward0", _kernels.amin, ("self",),
      doc="ties share the gradient evenly; dim=() reduces every dimension",
      self=_amax_backward)
defop("max", "MaxBackward1", lambda a: _kernels.amax(a), ("self",),
      doc="max of all elements; ties share the gradient evenly",
      self=lambda grad, self, result: _even_share(grad, self, result, _all_dims(self, None),
                                                  False))
defop("min", "MinBackward1", lambda a: _kernels.amin(a), ("self",),
      doc="min of all elements; ties share the gradient evenly",
      self=lambda grad, self, result: _even_share(grad, self, result, _all_dims(self, None),
                                                  False))
defop("max_dim", "MaxBackward0", _kernels.max_dim, ("self",), outputs=("values", "indices"),
      nondiff_outputs=(1,), doc="(values, indices); the gradient goes to the returned index",
      self=_value_selecting_backward)
defop("min_dim", "MinBackward0", _kernels.min_dim, ("self",), outputs=("values", "indices"),
      nondiff_outputs=(1,), doc="(values, indices); the gradient goes to the returned index",
      self=_value_selecting_backward)
defop("prod", "ProdBackward0", lambda a: _kernels.prod(a), ("self",), quiet=True,
      doc="exact with zeros among the factors",
      self=lambda grad, self, result: _prod_backward(grad, self, result, None, False))
defop("prod_dim", "ProdBackward1", _kernels.prod, ("self",), quiet=True,
      self=lambda grad, self, result, dim, keepdim: _prod_backward(grad, self, result, (dim,),
                                                                   keepdim))
defop("var", "VarBackward0", _kernels.var, ("self",), quiet=True,
      self=_var_backward)
defop("std", "StdBackward0", _kernels.std, ("self",), quiet=True,
      self=_std_backward)
defop("logsumexp", "LogsumexpBackward0", _kernels.logsumexp, ("self",), promotes=True,
      quiet=True,
      self=lambda grad, self, result, dim, keepdim: _restore(grad, dim, keepdim) * f.exp(
          self - _restore(result, dim, keepdim)))
defop("norm", "LinalgVectorNormBackward0", _kernels.vector_norm, ("self",), quiet=True,
      doc="torch.norm / linalg.vector_norm: ord 2 ('fro'), 1, inf, -inf, 0 or any p",
      self=_norm_backward)

# -- shapes and views ----------------------------------------------------------------------------
defop("_reshape_alias", "ReshapeAliasBackward0", lambda a, size: a.reshape(size), ("self",),
      view=True, doc="reshape of a non-contiguous tensor that can still be a view",
      self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
defop("alias", "AliasBackward0", lambda a: a[...], ("self",), view=True,
      doc="x[...] and x[:, :]: the same tensor as a new view",
      self=lambda grad: grad)
defop("select", "SelectBackward0", _kernels.select, ("self",), view=True,
      doc="x[i] and x.select(dim, i)",
      self=lambda grad, self_sym_sizes, dim, index: f.select_backward(grad, self_sym_sizes, dim,
                                                                      index))
defop("slice", "SliceBackward0", _kernels.slice_dim, ("self",), view=True,
      doc="x[a:b:c] and narrow; one node per sliced dimension",
      self=lambda grad, self_sym_sizes, dim, start, end, step: f.slice_backward(
          grad, self_sym_sizes, dim, start, end, step))
defop("select_backward", "SelectBackwardBackward0", _kernels.select_backward, ("grad_output",),
      doc="select's backward, recorded under create_graph",
      grad_output=lambda grad, dim, index: f.select(grad, dim, index))
defop("slice_backward", "SliceBackwardBackward0", _kernels.slice_backward, ("grad_output",),
      doc="slice's backward, recorded under create_graph",
      grad_output=lambda grad, dim, start, end, step: f.slice_dim(grad, dim, start, end, step))
defop("repeat", "RepeatBackward0", _kernels.repeat, ("self",),
      self=_repeat_backward)
defop("split", "SplitBackward0", _kernels.split, ("self",), multi=True, view=True,
      doc="split(int) and chunk: several views; their gradients are concatenated",
      self=lambda grads, dim, self_sym_sizes, split_size: f.cat(grads, dim))
defop("split_with_sizes", "SplitWithSizesBackward0", _kernels.split_with_sizes, ("self",),
      multi=True, view=True, doc="split(list of sizes)",
      self=lambda grads, dim, self_sym_sizes, split_sizes: f.cat(grads, dim))
defop("cat", "CatBackward0", _kernels.cat, ("tensors",), variadic=True,
      hidden=("tensors_args_sizes",), doc="one edge per tensor of the list",
      tensors=_cat_backward)
defop("stack", "StackBackward0", _kernels.stack, ("tensors",), variadic=True,
      doc="one edge per tensor of the list",
      tensors=lambda grad, dim: [f.select(grad, dim, i) for i in range(grad.shape[dim])])

# -- linear algebra --------------------------------------------------------------------------------
defop("bmm", "BmmBackward0", np.matmul, ("self", "mat2"),
      self=lambda grad, mat2: f.bmm(grad, f.transpose(mat2, 1, 2)),
      mat2=lambda grad, self: f.bmm(f.transpose(self, 1, 2), grad))
defop("addmm", "AddmmBackward0",
      lambda a, m1, m2, beta=1, alpha=1: (a if beta == 1 else beta * a)
      + (m1 @ m2 if alpha == 1 else alpha * (m1 @ m2)),
      ("self", "mat1", "mat2"), broadcasts=("self",),
      doc="beta * self + alpha * mat1 @ mat2: what F.linear records with a bias",
      self=lambda grad, beta: grad if beta == 1 else grad * beta,
      mat1=lambda grad, mat2, mat1_sym_sizes, alpha: (grad @ f.t(mat2)) * alpha
      if alpha != 1 else grad @ f.t(mat2),
      mat2=lambda grad, mat1, mat2_sym_sizes, alpha: _mat2_grad(grad, mat1) * alpha
      if alpha != 1 else _mat2_grad(grad, mat1))

# -- indexing --------------------------------------------------------------------------------------
defop("index", "IndexBackward0", _kernels.index, ("self",),
      doc="x[tensor], x[list], x[mask]: advanced indexing (indices: one per leading dim)",
      self=lambda grad, indices, self_sym_sizes: f.index_zeros(grad, self_sym_sizes, indices))
defop("index_put", "IndexPutBackward0", _kernels.index_put, ("self", "values"),
      broadcasts=("values",), doc="x[tensor] = v (in place for __setitem__)",
      self=lambda grad, indices, accumulate: grad if accumulate else f.index_put(
          grad, indices, np.zeros((), f.dtype_of(grad)), False),
      values=lambda grad, indices: f.index(grad, indices))
defop("_index_put_impl", "IndexPutImplBackward0", _kernels.index_put, ("self", "values"),
      broadcasts=("values",), doc="index's backward, recorded under create_graph",
      self=lambda grad, indices, accumulate: grad if accumulate else f.index_put(
          grad, indices, np.zeros((), f.dtype_of(grad)), False),
      values=lambda grad, indices: f.index(grad, indices))
defop("index_select", "IndexSelectBackward0", _kernels.index_select, ("self",),
      self=lambda grad, self_sym_sizes, dim, index: f.index_zeros(
          grad, self_sym_sizes, (None,) * dim + (index,)))
defop("gather", "GatherBackward0", _kernels.gather, ("self",),
      self=lambda grad, self, dim, index, sparse_grad: f.scatter_add(
          f.zeros_like(self), dim, index, grad))
defop("scatter", "ScatterBackward0", _kernels.scatter, ("self", "src"),
      self=lambda grad, dim, index: f.scatter_zeros(grad, dim, index),
      src=lambda grad, dim, index: f.gather(grad, dim, index))
defop("scatter_value", "ScatterBackward1", _kernels.scatter_value, ("self",),
      self=lambda grad, dim, index: f.scatter_zeros(grad, dim, index))
defop("scatter_add", "ScatterAddBackward0", _kernels.scatter_add, ("self", "src"),
      self=lambda grad, dim, index: grad,
      src=lambda grad, dim, index: f.gather(grad, dim, index))
defop("masked_fill", "MaskedFillBackward0", _kernels.masked_fill, ("self",),
      self=lambda grad, mask: f.masked_fill(grad, mask, 0.0))
defop("masked_fill_tensor", "MaskedFillBackward1", _kernels.masked_fill_tensor,
      ("self", "value"), doc="masked_fill with a 0-d tensor value",
      self=lambda grad, mask: f.masked_fill(grad, mask, 0.0),
      value=lambda grad, mask: f.sum(f.where(mask, grad, 0.0), tuple(range(len(grad.shape)))))
defop("fill_tensor_", "FillBackward3", lambda a, v: np.full_like(a, v), ("self", "value"),
      doc="fill_ with a 0-d tensor (what x[i] = number records inside CopySlices)",
      self=lambda grad: f.zeros_like(grad),
      value=lambda grad: f.sum(grad, tuple(range(len(grad.shape)))))
defop("embedding", "EmbeddingBackward0", _kernels.embedding, ("weight",),
      doc="rows of weight; padding_idx rows get no gradient",
      weight=_embedding_backward)

# -- losses and normalization ----------------------------------------------------------------------
defop("nll_loss", "NllLossBackward0", _kernels.nll_loss, ("self",),
      outputs=("output", "total_weight"), nondiff_outputs=(1,),
      doc="reduction is 0 (none), 1 (mean) or 2 (sum), as PyTorch saves it",
      self=_nll_backward)
defop("mse_loss", "MseLossBackward0", _kernels.mse_loss, ("self", "target"), quiet=True,
      self=lambda grad, self, target, reduction: _loss_scale(grad, self, reduction) * 2
      * (self - target),
      target=lambda grad, self, target, reduction: _loss_scale(grad, self, reduction) * -2
      * (self - target))
defop("binary_cross_entropy", "BinaryCrossEntropyBackward0", _kernels.binary_cross_entropy,
      ("self", "target"),
      self=_bce_self, target=_bce_target)
defop("binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0",
      _kernels.binary_cross_entropy_with_logits, ("self", "target"),
      self=_bce_logits_self, target=_bce_logits_target)
defop("layer_norm", "NativeLayerNormBackward0", _kernels.layer_norm, ("input", "weight", "bias"),
      outputs=("result0", "result1", "result2"), nondiff_outputs=(1, 2), hidden=("eps",),
      doc="outputs (y, mean, rstd); eps is kept for create_graph but not shown, as in PyTorch",
      input=lambda grads, input, normalized_shape, result1, result2, weight, bias, eps:
      _layer_norm_backward("input", grads, input, normalized_shape, result1, result2, weight,
                           bias, eps),
      weight=lambda grads, input, normalized_shape, result1, result2, weight, bias, eps:
      _layer_norm_backward("weight", grads, input, normalized_shape, result1, result2, weight,
                           bias, eps),
      bias=lambda grads, input, normalized_shape, result1, result2, weight, bias, eps:
      _layer_norm_backward("bias", grads, input, normalized_shape, result1, result2, weight,
                           bias, eps))
defop("unbind", "UnbindBackward0",
      lambda a, dim: tuple(_kernels.select(a, dim, i) for i in range(a.shape[dim])), ("self",),
      multi=True, view=True, doc="the slices along dim (iterating over a tensor)",
      self=lambda grads, dim: f.stack(grads, dim))
