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
inputs, or the named ones).

This file holds the rows and the formulas they share, and nothing else: the rows are grouped by
category (arithmetic, elementwise functions, activations, reductions, shapes and views, linear
algebra, indexing, in-place-only nodes, losses, convolution and pooling, never differentiable),
each group's helper formulas just above its rows. What a row is: :mod:`gradviz.ops.opinfo`. The
forwards the rows name: :mod:`gradviz.ops._kernels` (``K``). Node names and saved names are
PyTorch 2.13's; docs/ops.md lists every row, generated from this file.
"""

from __future__ import annotations

import math

import numpy as np

from gradviz.ops import _formula as f
from gradviz.ops import _kernels as K
from gradviz.ops.opinfo import OPS, defop
from gradviz.ops.samples import A, C, P, R, Sample, W
from gradviz.tensor import Tensor

__all__ = ["OPS"]


# ===============================================================================================
# Arithmetic
# ===============================================================================================


def _pow_backward(grad, self, exponent):
    if exponent == 0:
        return f.zeros_like(grad)
    return grad * (exponent * self ** (exponent - 1))


def _pow_scalar_base_backward(grad, self, exponent, result):
    # d(b**e)/de = b**e * log(b); PyTorch defines it as 0 where b == 0 and e >= 0.
    if self == 0:
        return grad * f.where(exponent >= 0, 0.0, result * f.log(self))
    return grad * (result * f.log(self))


defop("add", "AddBackward0", K.add, ("self", "other"),
      broadcasts=True, promotes=True,
      calls=("`gradviz.add`, `x + y`", "`.add()`, `.add_()`, `+=`"),
      self=lambda grad: grad,
      other=lambda grad, alpha: grad if alpha == 1 else grad * alpha)
defop("sub", "SubBackward0", K.sub, ("self", "other"),
      broadcasts=True, promotes=True,
      calls=("`gradviz.sub`, `gradviz.subtract`, `x - y`", "`.sub()`, `.sub_()`, `-=`"),
      self=lambda grad: grad,
      other=lambda grad, alpha: -grad if alpha == 1 else grad * -alpha)
defop("rsub", "RsubBackward1", K.rsub, ("self",),
      promotes=True,
      doc="``other - alpha * self`` with a number ``other``: what ``2 - x`` records.",
      calls=("`2 - x`, `gradviz.rsub(x, 2)`", ""),
      self=lambda grad, alpha: -grad if alpha == 1 else grad * -alpha)
defop("rsub_tensor", "RsubBackward0", K.rsub_tensor, ("self", "other"),
      broadcasts=True, promotes=True,
      doc="``other - alpha * self`` with a tensor ``other``: ``gradviz.rsub(x, y)``.",
      calls=("`gradviz.rsub(x, y)`", ""),
      self=lambda grad, alpha: -grad if alpha == 1 else grad * -alpha,
      other=lambda grad: grad)
defop("mul", "MulBackward0", np.multiply, ("self", "other"),
      broadcasts=True, promotes=True,
      calls=("`gradviz.mul`, `gradviz.multiply`, `x * y`, `gradviz.outer`, `F.dropout`",
             "`.mul()`, `.mul_()`, `*=`, `.outer()`"),
      self=lambda grad, other: grad * other,
      other=lambda grad, self: grad * self)
defop("div", "DivBackward0", K.div, ("self", "other"),
      broadcasts=True, promotes=True, quiet=True,
      calls=("`gradviz.div`, `gradviz.divide`, `x / y`", "`.div()`, `.div_()`, `/=`"),
      self=lambda grad, other: grad / other,
      other=lambda grad, self, other: -grad * ((self / other) / other))
# div(..., rounding_mode=...): PyTorch's Tensor_mode overload, even with rounding_mode=None. A
# rounded quotient is piecewise constant: its gradient is zero wherever it is defined.
defop("div_mode", "DivBackward2", K.div_mode, ("self", "other"),
      broadcasts=True, promotes=True, quiet=True,
      doc="``input / other`` rounded as ``rounding_mode`` says (None, 'trunc' or 'floor').",
      calls=("`gradviz.div(x, y, rounding_mode=...)`", "`.div(y, rounding_mode=...)`, `.div_()`"),
      self=lambda grad, self, other, rounding_mode:
          grad / other if rounding_mode is None else f.zeros_like(grad),
      other=lambda grad, self, other, rounding_mode:
          -grad * ((self / other) / other) if rounding_mode is None else f.zeros_like(grad))
defop("neg", "NegBackward0", K.neg, ("self",),
      function="neg", method=True, inplace=True,
      doc="``-input``.",
      example="gradviz.neg(gradviz.tensor([1.0, -2.0]))\ntensor([-1.,  2.])",
      samples=(Sample(R(2, 3)), Sample(R())),
      calls=("`gradviz.negative`, `-x`", ""),
      self=lambda grad: -grad)
defop("reciprocal", "ReciprocalBackward0", K.reciprocal, ("self",),
      promotes=True, quiet=True, function="reciprocal", method=True, inplace=True,
      doc="``1 / input``.",
      example="gradviz.reciprocal(gradviz.tensor([2.0, 4.0]))\ntensor([0.5000, 0.2500])",
      samples=(Sample(P(2, 3)), Sample(P())),
      calls=("`2 / x`", ""),
      self=lambda grad, result: -grad * (result * result))
defop("pow", "PowBackward0", K.pow_scalar, ("self",),
      promotes=True, quiet=True,
      doc="tensor ** number",
      calls=("`gradviz.pow`, `x ** 2`, `gradviz.square`", "`.pow()`, `.square()`"),
      self=_pow_backward)
defop("pow_tensor", "PowBackward1", K.power, ("self", "exponent"),
      broadcasts=True, promotes=True, quiet=True,
      doc="tensor ** tensor",
      calls=("`gradviz.pow`, `x ** y`", "`.pow()`"),
      self=lambda grad, self, exponent: f.where(
          exponent == 0, 0.0, grad * (exponent * self ** (exponent - 1))),
      exponent=lambda grad, self, exponent, result: grad * f.where(
          (self == 0) & (exponent >= 0), 0.0, result * f.log(self)))
defop("pow_scalar_base", "PowBackward2", K.pow_scalar_base, ("exponent",),
      promotes=True, quiet=True,
      doc="number ** tensor",
      calls=("`gradviz.pow(2, x)`, `2 ** x`", ""),
      exponent=_pow_scalar_base_backward)
defop("mul_scalar", "MulBackward1", K.mul_scalar, ("self",),
      promotes=True,
      doc="tensor * Scalar inside PyTorch's C++ decompositions (cross_entropy's smoothing)",
      calls=("inside `F.cross_entropy(label_smoothing=...)`", ""),
      self=lambda grad, other: grad * other)
defop("add_scalar", "AddBackward1", K.add_scalar, ("self",),
      promotes=True,
      doc="tensor + Scalar inside PyTorch's C++ decompositions (smoothed probability targets)",
      calls=("inside `F.cross_entropy` (probabilities, smoothing)", ""),
      self=lambda grad: grad)
defop("div_scalar", "DivBackward1", K.div_scalar, ("self",),
      promotes=True, quiet=True,
      doc="tensor / Scalar inside PyTorch's C++ decompositions (cross_entropy's mean)",
      calls=("inside `F.cross_entropy` (probabilities, mean)", ""),
      self=lambda grad, other: grad / other)


def _not_implemented(aten: str):
    """The formula of PyTorch's ``torch::autograd::NotImplemented`` node: it is recorded (the
    graph shows it) but has no derivative, so a backward through it fails."""
    def formula(grad):
        raise RuntimeError(f"derivative for aten::{aten} is not implemented")
    return formula


# `//` and `number % x` record PyTorch's NotImplemented node: only edges to tensor operands.
defop("floor_divide", "NotImplemented", K.floor_divide, ("self", "other"),
      broadcasts=True, promotes=True, quiet=True,
      doc="``input // other`` with a tensor ``other`` (floor division; no derivative).",
      calls=("`gradviz.floor_divide(x, y)`, `x // y`", "`.floor_divide()`"),
      self=_not_implemented("floor_divide"), other=_not_implemented("floor_divide"))
defop("floor_divide_scalar", "NotImplemented", K.floor_divide_scalar, ("self",),
      promotes=True, quiet=True,
      doc="``input // number`` (floor division; no derivative).",
      calls=("`gradviz.floor_divide(x, 2)`, `x // 2`", ""),
      self=_not_implemented("floor_divide"))
defop("rfloor_divide", "NotImplemented", K.rfloor_divide, ("self",),
      promotes=True, quiet=True,
      doc="``number // input`` (floor division; no derivative).",
      calls=("`2 // x`", ""),
      self=_not_implemented("floor_divide"))
defop("remainder_scalar", "RemainderBackward0", K.remainder_scalar, ("self",),
      promotes=True, quiet=True,
      doc="``input % number``, with the sign of the divisor (Python's ``%``).",
      calls=("`gradviz.remainder(x, 2)`, `x % 2`", "`.remainder()`"),
      samples=(Sample(P(2, 3), other=3.0), Sample(R(4), other=-0.75)),
      self=lambda grad: grad)
defop("remainder", "RemainderBackward1", K.remainder, ("self", "other"),
      broadcasts=True, promotes=True, quiet=True,
      doc="``input % other`` with a tensor ``other``.",
      calls=("`gradviz.remainder(x, y)`, `x % y`", "`.remainder()`"),
      samples=(Sample(W([[5.3, -1.2], [7.9, 2.2]]), W([2.0, -3.0])),
               Sample(P(2, 3), P(3))),
      self=lambda grad: grad,
      other=lambda grad, self, other: -grad * f.floor_divide_constant(self, other))
defop("rremainder", "NotImplemented", K.rremainder, ("self",),
      promotes=True, quiet=True,
      doc="``number % input`` (no derivative).",
      calls=("`2 % x`, `gradviz.remainder(2, x)`", ""),
      self=_not_implemented("remainder"))


# ===============================================================================================
# Elementwise functions
# ===============================================================================================


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


defop("exp", "ExpBackward0", np.exp, ("self",),
      promotes=True, function="exp", method=True, inplace=True,
      doc="Elementwise ``e ** input``.",
      example="gradviz.exp(gradviz.tensor([0.0]))\ntensor([1.])",
      samples=(Sample(R(2, 3)), Sample(R())),
      self=lambda grad, result: grad * result)
defop("log", "LogBackward0", np.log, ("self",),
      promotes=True, quiet=True, function="log", method=True, inplace=True,
      doc="Elementwise natural logarithm.",
      example="gradviz.log(gradviz.tensor([1.0]))\ntensor([0.])",
      samples=(Sample(P(2, 3)), Sample(P())),
      self=lambda grad, self: grad / self)
defop("tanh", "TanhBackward0", np.tanh, ("self",),
      promotes=True, function="tanh", method=True, inplace=True,
      doc="Elementwise hyperbolic tangent.",
      example="gradviz.tanh(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(R(2, 3)), Sample(R(4))),
      calls=("`F.tanh`", ""),
      self=lambda grad, result: grad * (1 - result * result))
defop("sigmoid", "SigmoidBackward0", K.sigmoid, ("self",),
      promotes=True, function="sigmoid", method=True, inplace=True,
      doc="Elementwise logistic function ``1 / (1 + exp(-input))``.",
      example="gradviz.sigmoid(gradviz.tensor([0.0]))\ntensor([0.5000])",
      samples=(Sample(R(2, 3)), Sample(R(4))),
      calls=("`F.sigmoid`", ""),
      self=lambda grad, result: grad * ((1 - result) * result))
defop("relu", "ReluBackward0", K.relu, ("self",),
      function="relu", method=True, inplace=True,
      doc="Elementwise ``max(input, 0)``.",
      example="gradviz.relu(gradviz.tensor([-1.0, 2.0]))\ntensor([0., 2.])",
      samples=(Sample(A(2, 3)), Sample(A(5))),
      calls=("`F.relu`", ""),
      # PyTorch's formula: zeros where the result is not positive (also for a nan or inf
      # gradient), recorded under create_graph as ThresholdBackwardBackward0.
      self=lambda grad, result: f.op("threshold_backward", grad, result, threshold=0))
defop("abs", "AbsBackward0", np.abs, ("self",),
      calls=("`gradviz.abs`, `gradviz.absolute`", "`.abs()`, `.absolute()`"),
      self=lambda grad, self: grad * f.sign(self))
defop("sign", "SignBackward0", K.sign, ("self",),
      function="sign", method=True, inplace=True,
      doc="Elementwise sign: -1, 0 or 1 (the gradient is 0).",
      example="gradviz.sign(gradviz.tensor([-2.0, 0.0, 3.0]))\ntensor([-1.,  0.,  1.])",
      samples=(Sample(A(2, 3)),),
      self=lambda grad: f.zeros_like(grad))
defop("sqrt", "SqrtBackward0", K.sqrt, ("self",),
      promotes=True, quiet=True, function="sqrt", method=True, inplace=True,
      doc="Elementwise square root.",
      example="gradviz.sqrt(gradviz.tensor([4.0, 9.0]))\ntensor([2., 3.])",
      samples=(Sample(P(2, 3)), Sample(P())),
      self=lambda grad, result: grad / (2 * result))
defop("rsqrt", "RsqrtBackward0", K.rsqrt, ("self",),
      promotes=True, quiet=True, function="rsqrt", method=True, inplace=True,
      doc="Elementwise ``1 / sqrt(input)``.",
      example="gradviz.rsqrt(gradviz.tensor([4.0]))\ntensor([0.5000])",
      samples=(Sample(P(2, 3)),),
      self=lambda grad, result: -0.5 * grad * (result * result * result))
defop("sin", "SinBackward0", K.sin, ("self",),
      promotes=True, function="sin", method=True, inplace=True,
      doc="Elementwise sine.",
      example="gradviz.sin(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(R(2, 3)),),
      self=lambda grad, self: grad * f.cos(self))
defop("cos", "CosBackward0", K.cos, ("self",),
      promotes=True, function="cos", method=True, inplace=True,
      doc="Elementwise cosine.",
      example="gradviz.cos(gradviz.tensor([0.0]))\ntensor([1.])",
      samples=(Sample(R(2, 3)),),
      self=lambda grad, self: grad * -f.sin(self))
defop("log1p", "Log1PBackward0", K.log1p, ("self",),
      promotes=True, quiet=True, function="log1p", method=True, inplace=True,
      doc="Elementwise ``log(1 + input)``, exact for small inputs.",
      example="gradviz.log1p(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(P(2, 3)),),
      self=lambda grad, self: grad / (self + 1))
defop("expm1", "Expm1Backward0", K.expm1, ("self",),
      promotes=True, quiet=True, function="expm1", method=True, inplace=True,
      doc="Elementwise ``exp(input) - 1``, exact for small inputs.",
      example="gradviz.expm1(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(R(2, 3)),),
      self=lambda grad, result: grad * (result + 1))
defop("erf", "ErfBackward0", K.erf, ("self",),
      promotes=True, function="erf", method=True, inplace=True,
      doc="The error function, elementwise.",
      example="gradviz.erf(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(R(2, 3)),),
      self=lambda grad, self: grad * (2 / math.sqrt(math.pi)) * f.exp(-(self * self)))
defop("clamp", "ClampBackward1", K.clamp, ("self",),
      promotes=True,
      doc="clamp/clip with number bounds (either may be None)",
      calls=("`gradviz.clamp`, `gradviz.clip`", "`.clamp()`, `.clip()`, `.clamp_()`"),
      self=_clamp_backward)
defop("clamp_tensor", "ClampBackward0", K.clamp, ("self", "min", "max"),
      broadcasts=True, promotes=True,
      doc="clamp with tensor bounds (either may be None)",
      calls=("`gradviz.clamp(x, min_tensor, max_tensor)`", "`.clamp()`, `.clamp_()`"),
      self=_clamp_backward,
      min=_clamp_min_grad,
      max=_clamp_max_grad)
defop("clamp_min", "ClampMinBackward0", K.clamp_min, ("self",),
      promotes=True,
      calls=("`gradviz.clamp_min`", "`.clamp_min()`"),
      self=lambda grad, self, min: f.where(self >= min, grad, 0.0))
defop("clamp_min_tensor", "ClampMinBackward1", np.maximum, ("self", "min"),
      broadcasts=True,
      calls=("`gradviz.clamp_min(x, tensor)`", "`.clamp_min()`"),
      self=lambda grad, self, min: f.where(self >= min, grad, 0.0),
      min=lambda grad, self, min: f.where(self < min, grad, 0.0))
defop("clamp_max", "ClampMaxBackward0", K.clamp_max, ("self",),
      promotes=True,
      calls=("`gradviz.clamp_max`", "`.clamp_max()`"),
      self=lambda grad, self, max: f.where(self <= max, grad, 0.0))
defop("clamp_max_tensor", "ClampMaxBackward1", np.minimum, ("self", "max"),
      broadcasts=True,
      calls=("`gradviz.clamp_max(x, tensor)`", "`.clamp_max()`"),
      self=lambda grad, self, max: f.where(self <= max, grad, 0.0),
      max=lambda grad, self, max: f.where(self > max, grad, 0.0))
defop("maximum", "MaximumBackward0", np.maximum, ("self", "other"),
      broadcasts=True, promotes=True,
      doc="ties share the gradient equally, as in PyTorch",
      calls=("`gradviz.maximum`, `gradviz.max(x, y)`", "`.maximum()`, `.max(y)`"),
      self=lambda grad, self, other: f.where(self < other, 0.0,
                                             f.where(self == other, grad / 2, grad)),
      other=lambda grad, self, other: f.where(self > other, 0.0,
                                              f.where(self == other, grad / 2, grad)))
defop("minimum", "MinimumBackward0", np.minimum, ("self", "other"),
      broadcasts=True, promotes=True,
      doc="ties share the gradient equally, as in PyTorch",
      calls=("`gradviz.minimum`, `gradviz.min(x, y)`", "`.minimum()`, `.min(y)`"),
      self=lambda grad, self, other: f.where(self > other, 0.0,
                                             f.where(self == other, grad / 2, grad)),
      other=lambda grad, self, other: f.where(self < other, 0.0,
                                              f.where(self == other, grad / 2, grad)))

# -- more elementwise functions (opsmath) --------------------------------------------------------
_LN2, _LN10 = math.log(2.0), math.log(10.0)


def _zero_grad(grad):
    """floor, ceil, round, trunc: piecewise constant, so PyTorch's gradient is zeros."""
    return f.zeros_like(grad)


def _rsqrt(x):
    return f.op("rsqrt", x)


def _logit_backward(grad, self, eps):
    g = grad / (self * (1 - self))
    if eps is None or eps < 0:  # no clamping: outside [0, 1] the logit (and its slope) is NaN
        return f.where((self < 0) | (self > 1), math.nan, g)
    return f.where((self < eps) | (self > 1 - eps), 0.0, g)  # clamped: constant there


def _trunc_quotient(self, other):
    """``trunc(self / other)`` as a constant: fmod's ``self - trunc(self / other) * other``
    differentiates to it (PyTorch's ``self.div(other, rounding_mode="trunc")``)."""
    q = np.trunc(np.divide(f.data(self), f.data(other)))
    return Tensor._make(np.asarray(q)) if f.is_tensor(self) or f.is_tensor(other) else q


def _xlogy_self_grad(grad, self, other):
    # d(x log y)/dx = log y; PyTorch's xlogy(self != 0, other) is 0 where self == 0 (but NaN
    # where other is NaN).
    keep = (self != 0) | (other != other)
    return f.where(keep, grad * f.log(other), 0.0)


def _fmax_self_wins(self, other):
    # fmax takes self where self >= other or other is NaN (ties: all of it to self).
    return (self >= other) | (other != other)


def _fmin_self_wins(self, other):
    return (self <= other) | (other != other)


def _inplace_not_implemented(op: str):
    """The formula of a node PyTorch records for an in-place op it has no derivative for
    (``asinh_`` records ``AsinhBackward1``, whose backward fails)."""
    def formula(grad):
        raise NotImplementedError(f"the derivative for 'inplace version of {op}' is not "
                                  "implemented.")
    formula.not_implemented = True  # (the generic gradcheck suite has nothing to check)
    return formula


for _name, _node, _kernel, _doc, _example in (
        ("floor", "FloorBackward0", K.floor, "Elementwise floor (integers stay as they are; "
         "the gradient is 0).", "gradviz.floor(gradviz.tensor([-1.5, 1.5]))\ntensor([-2.,  1.])"),
        ("ceil", "CeilBackward0", K.ceil, "Elementwise ceiling (integers stay as they are; the "
         "gradient is 0).", "gradviz.ceil(gradviz.tensor([-1.5, 1.5]))\ntensor([-1.,  2.])"),
        ("trunc", "TruncBackward0", K.trunc, "Elementwise rounding toward 0 (the gradient is 0).",
         "gradviz.trunc(gradviz.tensor([-1.5, 1.5]))\ntensor([-1.,  1.])")):
    defop(_name, _node, _kernel, ("self",),
          function=_name, method=True, inplace=True, doc=_doc, example=_example,
          samples=(Sample(R(2, 3)), Sample(R())),
          calls=("`gradviz.fix`", "`.fix()`, `.fix_()`") if _name == "trunc" else ("", ""),
          self=_zero_grad)
defop("round", "RoundBackward0", K.round_, ("self",),
      doc="Round half to even (the gradient is 0).",
      calls=("`gradviz.round`", "`.round()`, `.round_()`"),
      samples=(Sample(R(2, 3)), Sample(R())),
      self=_zero_grad)
defop("round_decimals", "RoundBackward1", K.round_decimals, ("self",),
      doc="``round(decimals=d)``: to ``d`` decimal places, half to even (the gradient is 0).",
      calls=("`gradviz.round(x, decimals=2)`", "`.round(decimals=2)`, `.round_(decimals=2)`"),
      samples=(Sample(R(2, 3), decimals=1), Sample(P(3), decimals=-1)),
      self=_zero_grad)
defop("frac", "FracBackward0", K.frac, ("self",),
      function="frac", method=True, inplace=True,
      doc="``input - trunc(input)``: the fractional part, with the sign of ``input``.",
      example="gradviz.frac(gradviz.tensor([-1.25, 2.5]))\ntensor([-0.2500,  0.5000])",
      samples=(Sample(R(2, 3)),),
      self=lambda grad: grad)
defop("log2", "Log2Backward0", K.log2, ("self",),
      promotes=True, quiet=True, function="log2", method=True, inplace=True,
      doc="Elementwise base-2 logarithm.",
      example="gradviz.log2(gradviz.tensor([8.0]))\ntensor([3.])",
      samples=(Sample(P(2, 3)), Sample(P())),
      self=lambda grad, self: grad / (self * _LN2))
defop("log10", "Log10Backward0", K.log10, ("self",),
      promotes=True, quiet=True, function="log10", method=True, inplace=True,
      doc="Elementwise base-10 logarithm.",
      example="gradviz.log10(gradviz.tensor([100.0]))\ntensor([2.])",
      samples=(Sample(P(2, 3)),),
      self=lambda grad, self: grad / (self * _LN10))
defop("exp2", "Exp2Backward0", K.exp2, ("self",),
      promotes=True, quiet=True, function="exp2", method=True, inplace=True,
      doc="Elementwise ``2 ** input``.",
      example="gradviz.exp2(gradviz.tensor([3.0]))\ntensor([8.])",
      samples=(Sample(R(2, 3)), Sample(R())),
      self=lambda grad, result: grad * result * _LN2)
defop("sinh", "SinhBackward0", K.sinh, ("self",),
      promotes=True, quiet=True, function="sinh", method=True, inplace=True,
      doc="Elementwise hyperbolic sine.",
      example="gradviz.sinh(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(R(2, 3)),),
      self=lambda grad, self: grad * f.op("cosh", self))
defop("cosh", "CoshBackward0", K.cosh, ("self",),
      promotes=True, quiet=True, function="cosh", method=True, inplace=True,
      doc="Elementwise hyperbolic cosine.",
      example="gradviz.cosh(gradviz.tensor([0.0]))\ntensor([1.])",
      samples=(Sample(R(2, 3)),),
      self=lambda grad, self: grad * f.op("sinh", self))
defop("tan", "TanBackward0", K.tan, ("self",),
      promotes=True, quiet=True, function="tan", method=True, inplace=True,
      doc="Elementwise tangent.",
      example="gradviz.tan(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(R(2, 3)), Sample(R())),
      self=lambda grad, result: grad * (1 + result * result))
defop("asin", "AsinBackward0", K.asin, ("self",),
      promotes=True, quiet=True, function="asin", method=True, inplace=True,
      doc="Elementwise arcsine (NaN outside [-1, 1]).",
      example="gradviz.asin(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(W([[0.3, -0.6, 0.1], [0.8, -0.2, 0.5]])),),
      calls=("`gradviz.arcsin`", "`.arcsin()`, `.arcsin_()`"),
      self=lambda grad, self: grad * _rsqrt(1 - self * self))
defop("acos", "AcosBackward0", K.acos, ("self",),
      promotes=True, quiet=True, function="acos", method=True, inplace=True,
      doc="Elementwise arccosine (NaN outside [-1, 1]).",
      example="gradviz.acos(gradviz.tensor([1.0]))\ntensor([0.])",
      samples=(Sample(W([[0.3, -0.6, 0.1], [0.8, -0.2, 0.5]])),),
      calls=("`gradviz.arccos`", "`.arccos()`, `.arccos_()`"),
      self=lambda grad, self: grad * -_rsqrt(1 - self * self))
defop("atan", "AtanBackward0", K.atan, ("self",),
      promotes=True, function="atan", method=True, inplace=True,
      doc="Elementwise arctangent.",
      example="gradviz.atan(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(R(2, 3)), Sample(R())),
      calls=("`gradviz.arctan`", "`.arctan()`, `.arctan_()`"),
      self=lambda grad, self: grad / (self * self + 1))
defop("asinh", "AsinhBackward0", K.asinh, ("self",),
      promotes=True, function="asinh", method=True,
      doc="Elementwise inverse hyperbolic sine.",
      example="gradviz.asinh(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(R(2, 3)),),
      calls=("`gradviz.arcsinh`", "`.arcsinh()`"),
      self=lambda grad, self: grad * _rsqrt(self * self + 1))
defop("acosh", "AcoshBackward0", K.acosh, ("self",),
      promotes=True, quiet=True, function="acosh", method=True,
      doc="Elementwise inverse hyperbolic cosine (NaN below 1).",
      example="gradviz.acosh(gradviz.tensor([1.0]))\ntensor([0.])",
      samples=(Sample(W([[1.5, 2.0, 1.2], [3.0, 1.1, 2.5]])),),
      calls=("`gradviz.arccosh`", "`.arccosh()`"),
      self=lambda grad, self: grad * _rsqrt(self * self - 1))
defop("atanh", "AtanhBackward0", K.atanh, ("self",),
      promotes=True, quiet=True, function="atanh", method=True,
      doc="Elementwise inverse hyperbolic tangent (NaN outside [-1, 1]).",
      example="gradviz.atanh(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(W([[0.3, -0.6, 0.1], [0.8, -0.2, 0.5]])),),
      calls=("`gradviz.arctanh`", "`.arctanh()`"),
      self=lambda grad, self: grad / (1 - self * self))
for _name in ("asinh", "acosh", "atanh"):
    # PyTorch records the in-place forms, but has no derivative for them.
    defop(f"{_name}_", f"{_name.capitalize()}Backward1", getattr(K, _name), ("self",),
          promotes=True, quiet=True,
          doc=f"in-place ``{_name}_``: recorded, but its backward fails, as in PyTorch",
          calls=("", f"`.{_name}_()`, `.arc{_name[1:]}_()`"),
          self=_inplace_not_implemented(_name))
defop("logit", "LogitBackward0", K.logit, ("self",),
      promotes=True, quiet=True,
      doc="``log(p / (1 - p))``; ``eps`` clamps ``p`` to ``[eps, 1 - eps]`` first (the "
          "gradient is then 0 where it clamped)",
      calls=("`gradviz.logit`", "`.logit()`, `.logit_()`"),
      samples=(Sample(W([[0.2, 0.7, 0.4], [0.9, 0.35, 0.6]])),
               Sample(W([0.1, 0.5, 0.9, 0.3]), eps=0.25)),
      self=_logit_backward)
defop("nan_to_num", "NanToNumBackward0", K.nan_to_num, ("self",),
      doc="NaN, +inf and -inf replaced by numbers (the dtype's extremes by default); the "
          "gradient is 0 where the input was not finite",
      calls=("`gradviz.nan_to_num`", "`.nan_to_num()`, `.nan_to_num_()`"),
      samples=(Sample(R(2, 3)), Sample(R(4), nan=1.0, posinf=2.0, neginf=-2.0)),
      self=lambda grad, self: f.where(f.op("isfinite", self), grad, 0.0))
defop("atan2", "Atan2Backward0", K.atan2, ("self", "other"),
      broadcasts=True, promotes=True, quiet=True,
      doc="The angle of the point ``(other, input)``: ``atan(input / other)`` in the right "
          "quadrant.",
      calls=("`gradviz.atan2`, `gradviz.arctan2`", "`.atan2()`, `.atan2_()`, `.arctan2()`, "
             "`.arctan2_()`"),
      samples=(Sample(A(2, 3), A(2, 3)), Sample(A(2, 3), A(3))),
      self=lambda grad, self, other: grad * other / (self * self + other * other),
      other=lambda grad, self, other: grad * -self / (self * self + other * other))
defop("hypot", "HypotBackward0", K.hypot, ("self", "other"),
      broadcasts=True, promotes=True, quiet=True,
      doc="``sqrt(input ** 2 + other ** 2)``, floating point only.",
      calls=("`gradviz.hypot`", "`.hypot()`, `.hypot_()`"),
      samples=(Sample(A(2, 3), A(2, 3)), Sample(A(3, 1), A(4))),
      self=lambda grad, self, result: grad * self / result,
      other=lambda grad, other, result: grad * other / result)
defop("fmod_scalar", "FmodBackward0", K.fmod_scalar, ("self",),
      promotes=True, quiet=True,
      doc="``input - trunc(input / other) * other`` with a number ``other`` (C's fmod: the "
          "sign of ``input``).",
      calls=("`gradviz.fmod(x, 2)`", "`.fmod()`, `.fmod_()`"),
      samples=(Sample(R(2, 3), other=0.75), Sample(R(4), other=-0.6)),
      self=lambda grad: grad)
defop("fmod", "FmodBackward1", K.fmod, ("self", "other"),
      broadcasts=True, promotes=True, quiet=True,
      doc="``input - trunc(input / other) * other`` with a tensor ``other``.",
      calls=("`gradviz.fmod(x, y)`", "`.fmod()`, `.fmod_()`"),
      samples=(Sample(W([[5.3, -1.2], [7.9, -2.2]]), W([2.0, -3.0])),
               Sample(R(2, 3), P(3))),
      self=lambda grad: grad,
      other=lambda grad, self, other: -grad * _trunc_quotient(self, other))
defop("fmax", "FmaxBackward0", np.fmax, ("self", "other"),
      broadcasts=True, promotes=True,
      doc="maximum that ignores NaN (NaN only where both are); a tie gives ``input`` the "
          "gradient",
      calls=("`gradviz.fmax`", "`.fmax()`"),
      samples=(Sample(R(2, 3), R(2, 3)), Sample(R(2, 3), R(3))),
      self=lambda grad, self, other: f.where(_fmax_self_wins(self, other), grad, 0.0),
      other=lambda grad, self, other: f.where(_fmax_self_wins(self, other), 0.0, grad))
defop("fmin", "FminBackward0", np.fmin, ("self", "other"),
      broadcasts=True, promotes=True,
      doc="minimum that ignores NaN (NaN only where both are); a tie gives ``input`` the "
          "gradient",
      calls=("`gradviz.fmin`", "`.fmin()`"),
      samples=(Sample(R(2, 3), R(2, 3)), Sample(R(2, 3), R(3))),
      self=lambda grad, self, other: f.where(_fmin_self_wins(self, other), grad, 0.0),
      other=lambda grad, self, other: f.where(_fmin_self_wins(self, other), 0.0, grad))
defop("xlogy", "XlogyBackward0", K.xlogy, ("self", "other"),
      broadcasts=True, promotes=True, quiet=True,
      doc="``input * log(other)``, and 0 where ``input == 0`` (unless ``other`` is NaN).",
      calls=("`gradviz.xlogy`", "`.xlogy()`, `.xlogy_()`"),
      samples=(Sample(R(2, 3), P(2, 3)), Sample(R(2, 3), P(3))),
      self=_xlogy_self_grad,
      other=lambda grad, self, other: grad * self / other)
defop("xlogy_scalar_self", "XlogyBackward1", K.xlogy_scalar_self, ("other",),
      promotes=True, quiet=True,
      doc="``xlogy`` with a number ``input``.",
      calls=("`gradviz.xlogy(2.0, y)`", ""),
      samples=(Sample(P(2, 3), self=2.0),),
      other=lambda grad, self, other: grad * self / other)
defop("xlogy_scalar_other", "XlogyBackward2", K.xlogy_scalar_other, ("self",),
      promotes=True, quiet=True,
      doc="``xlogy`` with a number ``other``.",
      calls=("`gradviz.xlogy(x, 2.0)`", "`.xlogy()`, `.xlogy_()`"),
      samples=(Sample(R(2, 3), other=2.5),),
      self=lambda grad, self, other: f.where((self != 0) | (other != other),
                                             grad * f.log(other), 0.0))
defop("heaviside", "NotImplemented", K.heaviside, ("self", "values"),
      broadcasts=True,
      doc="step function: 0 below 0, ``values`` at 0, 1 above (no derivative).",
      calls=("`gradviz.heaviside`", "`.heaviside()`"),
      self=_not_implemented("heaviside"), values=_not_implemented("heaviside"))
defop("heaviside_", "NotImplemented", K.heaviside, ("self", "values"),
      broadcasts=True,
      doc="in-place ``heaviside_`` (its failing backward names ``aten::heaviside_``).",
      calls=("", "`.heaviside_()`"),
      self=_not_implemented("heaviside_"), values=_not_implemented("heaviside_"))
defop("lerp", "LerpBackward0", K.lerp, ("self", "end"),
      broadcasts=True,
      doc="``input + weight * (end - input)`` with a number ``weight``.",
      calls=("`gradviz.lerp(x, y, 0.5)`", "`.lerp()`, `.lerp_()`"),
      samples=(Sample(R(2, 3), R(2, 3), weight=0.3), Sample(R(2, 3), R(3), weight=0.8)),
      self=lambda grad, weight: grad * (1 - weight),
      end=lambda grad, weight: grad * weight)
defop("lerp_tensor", "LerpBackward1", K.lerp_tensor, ("self", "end", "weight"),
      broadcasts=True,
      doc="``input + weight * (end - input)`` with a tensor ``weight``.",
      calls=("`gradviz.lerp(x, y, w)`", "`.lerp()`, `.lerp_()`"),
      samples=(Sample(R(2, 3), R(2, 3), R(2, 3)), Sample(R(2, 3), R(3), R(2, 1))),
      self=lambda grad, weight: grad * (1 - weight),
      end=lambda grad, weight: grad * weight,
      weight=lambda grad, self, end: grad * (end - self))
defop("addcmul", "AddcmulBackward0", K.addcmul, ("self", "tensor1", "tensor2"),
      broadcasts=True,
      doc="``input + value * tensor1 * tensor2``.",
      calls=("`gradviz.addcmul`", "`.addcmul()`, `.addcmul_()`"),
      samples=(Sample(R(2, 3), R(2, 3), R(2, 3), value=0.5), Sample(R(3), R(2, 1), R(2, 3))),
      self=lambda grad: grad,
      tensor1=lambda grad, tensor2, value: grad * (tensor2 * value),
      tensor2=lambda grad, tensor1, value: grad * (tensor1 * value))
defop("addcdiv", "AddcdivBackward0", K.addcdiv, ("self", "tensor1", "tensor2"),
      broadcasts=True, quiet=True,
      doc="``input + value * tensor1 / tensor2`` (integer ``tensor1`` and ``tensor2`` are "
          "refused, as PyTorch refuses them).",
      calls=("`gradviz.addcdiv`", "`.addcdiv()`, `.addcdiv_()`"),
      samples=(Sample(R(2, 3), R(2, 3), P(2, 3), value=2.0), Sample(R(3), R(2, 1), P(2, 3))),
      self=lambda grad: grad,
      tensor1=lambda grad, tensor2, value: grad * (value / tensor2),
      tensor2=lambda grad, tensor1, tensor2, value: -grad * (value * tensor1
                                                             / (tensor2 * tensor2)))



# -- more (opsmore)
_SQRT_PI = math.sqrt(math.pi)


def _sinc_backward(grad, self):
    # d sinc(x)/dx = (pi x cos(pi x) - sin(pi x)) / (pi x^2), and 0 at x = 0 (PyTorch's).
    zero = self == 0
    px = f.where(zero, 1.0, self * math.pi)
    slope = (px * f.cos(px) - f.sin(px)) / (px * f.where(zero, 1.0, self))
    return grad * f.where(zero, 0.0, slope)


def _sgn_backward(grad, self, result):
    # PyTorch's sgn_backward for real tensors: (grad - grad * result * result) / |self|, 0 at 0,
    # which is 0 everywhere (sgn is piecewise constant), written as PyTorch writes it.
    zero = self == 0
    return f.where(zero, 0.0, (grad - grad * result * result) / f.where(zero, 1.0, f.abs(self)))


def _copysign_backward(grad, self, result):
    # result / self is +-1: where copysign flipped the sign, the gradient flips; 0 at self == 0.
    zero = self == 0
    return grad * f.where(zero, 0.0, result / f.where(zero, 1.0, self))


for _name, _node, _kernel, _doc, _example, _formula in (
        ("erfc", "ErfcBackward0", K.erfc, "The complementary error function ``1 - erf(input)``.",
         "gradviz.erfc(gradviz.tensor([0.0]))\ntensor([1.])",
         lambda grad, self: grad * (-2 / _SQRT_PI) * f.exp(-(self * self))),
        ("erfinv", "ErfinvBackward0", K.erfinv, "The inverse error function (NaN outside [-1, 1], "
         "+-inf at +-1).", "gradviz.erfinv(gradviz.tensor([0.0, 0.5]))\ntensor([0.0000, 0.4769])",
         lambda grad, self: grad * (0.5 * _SQRT_PI) * f.exp(f.op("erfinv", self) ** 2)),
        ("lgamma", "LgammaBackward0", K.lgamma,
         "``log|Gamma(input)|`` (+inf at the poles 0, -1 ...).",
         "gradviz.lgamma(gradviz.tensor([1.0, 3.0]))\ntensor([0.0000, 0.6931])",
         lambda grad, self: grad * f.op("digamma", self)),
        ("digamma", "DigammaBackward0", K.digamma, "``d/dx log Gamma(x)`` (-inf at 0, NaN at the "
         "negative integers).", "gradviz.digamma(gradviz.tensor([1.0]))\ntensor([-0.5772])",
         lambda grad, self: grad * f.op("polygamma", self, n=1)),
        ("sinc", "SincBackward0", K.sinc, "The normalized sinc ``sin(pi x) / (pi x)``, 1 at 0.",
         "gradviz.sinc(gradviz.tensor([0.0, 0.5]))\ntensor([1.0000, 0.6366])", _sinc_backward)):
    defop(_name, _node, _kernel, ("self",),
          promotes=True, quiet=True, function=_name, method=True, inplace=True, doc=_doc,
          example=_example,
          samples=((Sample(W([[0.3, -0.6, 0.1], [0.8, -0.2, 0.5]])),) if _name == "erfinv"
                   else (Sample(P(2, 3)), Sample(P())) if _name in ("lgamma", "digamma")
                   else (Sample(R(2, 3)), Sample(R()))),
          self=_formula)
defop("polygamma", "PolygammaBackward0", K.polygamma, ("self",),
      promotes=True, quiet=True,
      doc="the ``n``-th derivative of digamma",
      calls=("`gradviz.polygamma(n, x)`", "`.polygamma(n)`, `.polygamma_(n)`"),
      samples=(Sample(P(2, 3), n=1), Sample(P(3), n=2)),
      self=lambda grad, n, self: grad * f.op("polygamma", self, n=n + 1))
defop("polygamma_", "PolygammaBackward1", K.polygamma, ("self",),
      promotes=True, quiet=True,
      doc="in-place ``polygamma_(n)`` (its own node in PyTorch)",
      calls=("", "`.polygamma_(n)`"),
      samples=(Sample(P(2, 3), n=1),),
      self=lambda grad, n, self: grad * f.op("polygamma", self, n=n + 1))
defop("sgn", "SgnBackward0", K.sgn, ("self",),
      doc="the sign of each element (-1, 0 or 1): ``sign`` extended to complex numbers, which "
          "gradviz does not have",
      calls=("`gradviz.sgn`", "`.sgn()`, `.sgn_()`"),
      samples=(Sample(A(2, 3)),),
      self=_sgn_backward)
defop("copysign", "CopysignBackward0", K.copysign, ("self", "other"),
      broadcasts=True, promotes=True,
      doc="``|input|`` with the sign of ``other`` (a tensor), the sign bit of -0.0 included.",
      calls=("`gradviz.copysign(x, y)`", "`.copysign()`, `.copysign_()`"),
      samples=(Sample(A(2, 3), R(2, 3)), Sample(A(2, 3), R(3))),
      self=_copysign_backward,
      other=lambda grad: f.zeros_like(grad))
defop("copysign_scalar", "CopysignBackward1", K.copysign_scalar, ("self",),
      promotes=True,
      doc="``|input|`` with the sign of a number ``other``.",
      calls=("`gradviz.copysign(x, -1.0)`", "`.copysign()`, `.copysign_()`"),
      samples=(Sample(A(2, 3), other=-1.0), Sample(A(3), other=2.0)),
      self=_copysign_backward)
defop("logaddexp", "LogaddexpBackward0", K.logaddexp, ("self", "other"),
      broadcasts=True,
      doc="``log(exp(input) + exp(other))`` without overflow.",
      calls=("`gradviz.logaddexp`", "`.logaddexp()`"),
      samples=(Sample(R(2, 3), R(2, 3)), Sample(R(2, 3), R(3))),
      self=lambda grad, self, other: grad / (1 + f.exp(other - self)),
      other=lambda grad, self, other: grad / (1 + f.exp(self - other)))
defop("logaddexp2", "Logaddexp2Backward0", K.logaddexp2, ("self", "other"),
      broadcasts=True,
      doc="``log2(2 ** input + 2 ** other)`` without overflow.",
      calls=("`gradviz.logaddexp2`", "`.logaddexp2()`"),
      samples=(Sample(R(2, 3), R(2, 3)), Sample(R(2, 3), R(3))),
      self=lambda grad, self, other: grad / (1 + 2 ** (other - self)),
      other=lambda grad, self, other: grad / (1 + 2 ** (self - other)))
defop("signbit", None, np.signbit, ("self",),
      doc="whether the sign bit is set (True for -0.0)",
      calls=("`gradviz.signbit`", "`.signbit()`"))
defop("isclose", None, K.isclose, ("self", "other"),
      doc="``|input - other| <= atol + rtol * |other|``, elementwise",
      calls=("`gradviz.isclose`", "`.isclose()`"))
defop("isin", None, K.isin, ("elements", "test_elements"),
      doc="whether each of ``elements`` is one of ``test_elements`` (with ``invert``, is not)",
      calls=("`gradviz.isin`", ""))


# -- more (opsrand): random sampling (NOTE [random rows] in gradviz/ops/opinfo.py). PyTorch
# records a node for them but defines the gradient as zero: the sample is not differentiated.
def _zeros_sized(grad, sizes):
    return f.new_zeros(tuple(sizes), f.dtype_of(grad), f.is_tensor(grad))


# Probabilities in (0, 1), away from both ends: finite differences never flip a seeded draw.
_PROBS = [[0.15, 0.5, 0.85], [0.3, 0.7, 0.45]]
_NORMAL_FD = ("the seeded sample moves with mean and std; PyTorch defines both gradients as "
              "zero (tests/test_ops_random.py checks them)")

defop("bernoulli", "BernoulliBackward0", K.bernoulli, ("self",),
      random=True,
      doc="1 with probability ``input`` (each element), else 0; gradient zero.",
      calls=("`gradviz.bernoulli(p)`", "`.bernoulli()`"),
      samples=(Sample(W(_PROBS)), Sample(W(0.4))),
      self=lambda grad: f.zeros_like(grad))
defop("bernoulli_p", "NotImplemented", K.bernoulli_p, ("self",),
      random=True,
      doc="1 with probability ``p`` (a number), in input's shape and dtype (no derivative).",
      calls=("`gradviz.bernoulli(x, 0.3)`", "`.bernoulli(0.3)`"),
      self=_not_implemented("bernoulli"))
defop("normal_tensor_float", "NormalBackward1", K.normal_tensor_float, ("mean",),
      random=True,
      doc="samples of mean ``mean`` (a tensor) and std ``std`` (a number); gradient zero.",
      calls=("`gradviz.normal(mean, 2.0)`, `gradviz.normal(mean)`", ""),
      samples=(Sample(R(2, 3), std=0.5, fd=_NORMAL_FD),),
      mean=lambda grad, mean_sym_sizes: _zeros_sized(grad, mean_sym_sizes))
defop("normal_float_tensor", "NormalBackward2", K.normal_float_tensor, ("std",),
      random=True,
      doc="samples of mean ``mean`` (a number) and std ``std`` (a tensor); gradient zero.",
      calls=("`gradviz.normal(1.0, std)`", ""),
      samples=(Sample(P(2, 3), mean=1.5, fd=_NORMAL_FD),),
      std=lambda grad, std_sym_sizes: _zeros_sized(grad, std_sym_sizes))
defop("normal_tensor_tensor", "NormalBackward3", K.normal_tensor_tensor, ("mean", "std"),
      random=True,
      doc="samples of mean ``mean`` and std ``std`` (tensors, broadcast); gradients zero.",
      calls=("`gradviz.normal(mean, std)`", ""),
      samples=(Sample(R(2, 3), P(2, 3), fd=_NORMAL_FD), Sample(R(2, 1), P(3), fd=_NORMAL_FD)),
      mean=lambda grad, mean_sym_sizes: _zeros_sized(grad, mean_sym_sizes),
      std=lambda grad, std_sym_sizes: _zeros_sized(grad, std_sym_sizes))
defop("poisson", "PoissonBackward0", K.poisson, ("self",),
      random=True,
      doc="a Poisson count of rate ``input`` (each element); gradient zero.",
      calls=("`gradviz.poisson`", ""),
      samples=(Sample(P(2, 3)),),
      self=lambda grad: f.zeros_like(grad))


# ===============================================================================================
# Activations (torch.nn.functional)
# ===============================================================================================


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


defop("leaky_relu", "LeakyReluBackward0", K.leaky_relu, ("self",),
      calls=("`F.leaky_relu`", ""),
      self=lambda grad, self, negative_slope: f.where(self > 0, grad, grad * negative_slope))
defop("leaky_relu_", "LeakyReluBackward1", K.leaky_relu, ("self",),
      doc="in-place leaky_relu_ (saves the result instead of the input)",
      calls=("`F.leaky_relu(x, inplace=True)`", ""),
      self=lambda grad, result, negative_slope: f.where(result > 0, grad,
                                                        grad * negative_slope))
defop("elu", "EluBackward0", K.elu, ("self",),
      calls=("`F.elu`", ""),
      self=lambda grad, self, alpha, scale, input_scale: f.where(
          self > 0, grad * scale, grad * (alpha * scale * input_scale)
          * f.exp(self * input_scale)))
defop("elu_", "EluBackward1", K.elu, ("self",),
      doc="in-place elu_ (saves the result instead of the input)",
      calls=("`F.elu(x, inplace=True)`", ""),
      self=lambda grad, result, alpha, scale, input_scale: f.where(
          result > 0, grad * scale, grad * input_scale * (result + alpha * scale)))
defop("gelu", "GeluBackward0", K.gelu, ("self",),
      calls=("`F.gelu`", ""),
      self=_gelu_backward)
defop("silu", "SiluBackward0", K.silu, ("self",),
      calls=("`F.silu`", ""),
      self=_silu_backward)
defop("softplus", "SoftplusBackward0", K.softplus, ("self",),
      calls=("`F.softplus`", ""),
      self=lambda grad, self, beta, threshold: f.where(self * beta > threshold, grad,
                                                       grad * f.sigmoid(self * beta)))
defop("softmax", "SoftmaxBackward0", K.softmax, ("self",),
      quiet=True,
      calls=("`gradviz.softmax`, `F.softmax`", "`.softmax()`"),
      self=lambda grad, result, dim: (grad - f.sum(grad * result, (dim,), True)) * result)
defop("log_softmax", "LogSoftmaxBackward0", K.log_softmax, ("self",),
      quiet=True,
      calls=("`gradviz.log_softmax`, `F.log_softmax`", "`.log_softmax()`"),
      self=lambda grad, result, dim: grad - f.exp(result) * f.sum(grad, (dim,), True))


# Attention (F.scaled_dot_product_attention, gradviz/nn/_attention.py). Its math path records
# _safe_softmax among matmuls; 4-d inputs that the CPU flash kernel takes record one node, whose
# backward PyTorch cannot differentiate again (a NotImplemented node under create_graph).
defop("_safe_softmax", "SafeSoftmaxBackward0", K.safe_softmax, ("self",),
      quiet=True,
      doc="softmax that gives 0 for a slice of only -inf (a query masked from every key)",
      calls=("inside `F.scaled_dot_product_attention` (math path)", ""),
      samples=(Sample(R(2, 3, 4), dim=2), Sample(R(3, 4), dim=0)),
      self=lambda grad, result, dim: (grad - f.sum(grad * result, (dim,), True)) * result)


_NO_FLASH_GG = "PyTorch's CPU flash attention kernel has no double backward (NotImplemented)"


def _flash_backward(which: int):
    def formula(grads, query, key, value, output, logsumexp, dropout_p, is_causal, attn_mask,
                scale):
        return f.op("_scaled_dot_product_flash_attention_for_cpu_backward", grads[0], query,
                    key, value, output, logsumexp, dropout_p=dropout_p, is_causal=is_causal,
                    attn_mask=attn_mask, scale=scale)[which]
    return formula


defop("_scaled_dot_product_flash_attention_for_cpu",
      "ScaledDotProductFlashAttentionForCpuBackward0", K.sdpa_flash_cpu,
      ("query", "key", "value"),
      outputs=("output", "logsumexp"), nondiff_outputs=(1,),
      doc="outputs (output, logsumexp); 4-d inputs of equal batch, heads and features, "
          "no dropout, a mask that needs no gradient",
      calls=("`F.scaled_dot_product_attention` (4-d)", ""),
      samples=(Sample(R(1, 2, 3, 4), R(1, 2, 5, 4), R(1, 2, 5, 4), gg=_NO_FLASH_GG),
               Sample(R(2, 1, 4, 3), R(2, 1, 4, 3), R(2, 1, 4, 3), is_causal=True, scale=0.7,
                      gg=_NO_FLASH_GG),
               Sample(R(1, 1, 2, 3), R(1, 1, 4, 3), R(1, 1, 4, 3), gg=_NO_FLASH_GG,
                      attn_mask=Tensor._make(np.array([[0.0, -1.0, 0.5, -np.inf],
                                                       [0.3, 0.0, -np.inf, -0.2]]))),
               Sample(R(1, 4, 2, 3), R(1, 2, 3, 3), R(1, 2, 3, 3), gg=_NO_FLASH_GG)),
      query=_flash_backward(0), key=_flash_backward(1), value=_flash_backward(2))


def _flash_backward_not_implemented(grads):
    raise RuntimeError("derivative for aten::_scaled_dot_product_flash_attention_for_cpu_"
                       "backward is not implemented")


defop("_scaled_dot_product_flash_attention_for_cpu_backward", "NotImplemented",
      K.sdpa_flash_cpu_backward, ("grad_out", "query", "key", "value", "out", "logsumexp"),
      outputs=("grad_query", "grad_key", "grad_value"),
      doc="the flash kernel's backward, recorded under create_graph (no derivative)",
      calls=("the flash kernel's backward under `create_graph=True`", ""),
      grad_out=_flash_backward_not_implemented, query=_flash_backward_not_implemented,
      key=_flash_backward_not_implemented, value=_flash_backward_not_implemented,
      out=_flash_backward_not_implemented, logsumexp=_flash_backward_not_implemented)

# -- more (nnact)
# hardtanh (relu6 is hardtanh(0, 6)), celu, mish, prelu, glu, hardswish, hardsigmoid, logsigmoid,
# softshrink, hardshrink, threshold: each its own PyTorch node. selu is EluBackward0/1 (elu's
# rows with SELU's constants); softsign, tanhshrink and softmin are composites of existing rows
# (gradviz/nn/functional.py). An in-place call of a row whose formula reads ``self`` records the
# same row: the dispatch point keeps the input as it was before the write, as PyTorch saves it.
def _mish_backward(grad, self):
    t = f.tanh(f.softplus(self))
    return grad * (t + self * f.sigmoid(self) * (1 - t * t))


def _glu_backward(grad, self, dim):
    d = K._glu_dim(dim) % len(self.shape)
    n = self.shape[d] // 2
    first, second = f.slice_dim(self, d, 0, n), f.slice_dim(self, d, n, 2 * n)
    s = f.sigmoid(second)
    return f.cat([grad * s, grad * first * s * (1 - s)], d)


def _log_sigmoid_backward(grads, self, buffer):
    g = grads[0]
    if f.is_tensor(g) or f.is_tensor(self):
        # create_graph: the derivative sigmoid(-x) written from self, so that it can be
        # differentiated again (buffer is a constant, not an input)
        return g * f.sigmoid(-self)
    # PyTorch's CPU kernel, from buffer = exp(-|x|): 1 / (1 + z) below 0, z / (1 + z) above
    return g * np.where(self < 0, 1 / (1 + buffer), buffer / (1 + buffer))


_ONE_SIXTH_F32 = float(np.float32(1 / 6))
# Points on every piece of the piecewise activations (hardswish's kinks are at -3 and 3).
_PIECES = W([[-4.0, -2.5, -0.7, -0.2], [0.3, 0.8, 2.9, 5.0]])

defop("hardtanh", "HardtanhBackward0", K.hardtanh, ("self",),
      doc="``clamp(input, min_val, max_val)`` with hardtanh's node; ``F.relu6`` is (0, 6)",
      calls=("`F.hardtanh`, `F.hardtanh_`, `F.relu6`, `nn.Hardtanh`, `nn.ReLU6`", ""),
      samples=(Sample(_PIECES), Sample(_PIECES, min_val=0, max_val=6),
               Sample(R(3, 4), min_val=-0.5, max_val=0.25)),
      self=lambda grad, self, min_val, max_val: f.where((self > min_val) & (self < max_val),
                                                        grad, 0.0))
defop("celu", "CeluBackward0", K.celu, ("self",),
      calls=("`F.celu`, `nn.CELU`", ""),
      samples=(Sample(A(3, 4)), Sample(A(3, 4), alpha=0.5)),
      self=lambda grad, self, alpha: f.where(self > 0, grad, grad * f.exp(self * (1 / alpha))))
defop("celu_", "CeluBackward1", K.celu, ("self",),
      doc="in-place celu_ (saves the result instead of the input)",
      calls=("`F.celu(x, inplace=True)`", ""),
      samples=(Sample(A(3, 4), alpha=0.5),),
      self=lambda grad, result, alpha: f.where(result > 0, grad,
                                               grad * (result * (1 / alpha) + 1)))
defop("mish", "MishBackward0", K.mish, ("self",),
      calls=("`F.mish`, `nn.Mish`", ""),
      samples=(Sample(R(3, 4)), Sample(_PIECES)),
      self=_mish_backward)
# torch.nn.functional.prelu views a 1-D weight to broadcast over dimension 1, then runs this
# kernel. One formula serves both inputs in PyTorch, so both are saved whichever needs a grad.
defop("_prelu_kernel", "PreluKernelBackward0", K.prelu, ("self", "weight"),
      broadcasts=("weight",),
      calls=("`F.prelu`, `nn.PReLU`", ""),
      samples=(Sample(A(3, 4), R(1, 4)), Sample(A(2, 3, 2), R(1, 1, 1))),
      self=lambda grad, self, weight: f.where(self > 0, grad, grad * weight),
      weight=lambda grad, self, weight: f.where(self > 0, 0.0, grad * self))
defop("glu", "GluBackward0", K.glu, ("self",),
      doc="``a * sigmoid(b)`` of the two halves along ``dim`` (shown unsigned, as PyTorch)",
      calls=("`F.glu`, `nn.GLU`", ""),
      samples=(Sample(R(3, 4), dim=2**64 - 1), Sample(R(4, 3), dim=0)),
      self=_glu_backward)
defop("hardswish", "HardswishBackward0", K.hardswish, ("self",),
      calls=("`F.hardswish`, `nn.Hardswish`", ""),
      samples=(Sample(_PIECES),),
      self=lambda grad, self: f.where(self < -3, 0.0,
                                      f.where(self <= 3, grad * (self * (1 / 3) + 0.5), grad)))
defop("hardsigmoid", "HardsigmoidBackward0", K.hardsigmoid, ("self",),
      calls=("`F.hardsigmoid`, `nn.Hardsigmoid`", ""),
      samples=(Sample(_PIECES),),
      # PyTorch's CPU kernel multiplies by 1/6 rounded to float32, in every dtype: so do we
      self=lambda grad, self: f.where((self > -3) & (self < 3), grad * _ONE_SIXTH_F32, 0.0))
defop("log_sigmoid_forward", "LogSigmoidBackward0", K.log_sigmoid, ("self",),
      outputs=("output", "buffer"), nondiff_outputs=(1,),
      doc="outputs (log(sigmoid(x)), buffer = exp(-|x|)), the CPU kernel's pair",
      calls=("`F.logsigmoid`, `nn.LogSigmoid`", ""),
      self=_log_sigmoid_backward)
defop("softshrink", "SoftshrinkBackward0", K.softshrink, ("self",),
      calls=("`F.softshrink`, `nn.Softshrink`", ""),
      samples=(Sample(_PIECES), Sample(A(3, 4), lambd=0.1)),
      self=lambda grad, self, lambd: f.where((self >= -lambd) & (self <= lambd), 0.0, grad))
defop("hardshrink", "HardshrinkBackward0", K.hardshrink, ("self",),
      calls=("`F.hardshrink`, `nn.Hardshrink`", ""),
      samples=(Sample(_PIECES), Sample(A(3, 4), lambd=0.1)),
      self=lambda grad, self, lambd: f.where((self >= -lambd) & (self <= lambd), 0.0, grad))
defop("threshold", "ThresholdBackward0", K.threshold, ("self",),
      calls=("`F.threshold`, `nn.Threshold`", ""),
      samples=(Sample(_PIECES, threshold=0.5, value=20.0),),
      self=lambda grad, self, threshold: f.op("threshold_backward", grad, self,
                                              threshold=threshold))
defop("threshold_", "ThresholdBackward1", K.threshold, ("self",),
      doc="in-place threshold_ (saves the input as it was, as ThresholdBackward0)",
      calls=("`F.threshold(x, t, v, inplace=True)`, `F.threshold_`", ""),
      samples=(Sample(_PIECES, threshold=0.5, value=20.0),),
      self=lambda grad, self, threshold: f.op("threshold_backward", grad, self,
                                              threshold=threshold))
# As in PyTorch, threshold's gradient is an op of its own: under create_graph it records
# ThresholdBackwardBackward0. `self` only says where the gradient passes: its gradient is zeros.
defop("threshold_backward", "ThresholdBackwardBackward0", K.threshold_backward,
      ("grad_output", "self"),
      doc="threshold's backward, recorded under create_graph",
      calls=("threshold's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 4), _PIECES, threshold=0.5),),
      grad_output=lambda grad, self, threshold: f.op("threshold_backward", grad, self,
                                                     threshold=threshold),
      self=lambda grad: f.zeros_like(grad))


# ===============================================================================================
# Reductions
# ===============================================================================================


def _restore(g, dims, keepdim):
    """Re-insert reduced dimensions into a gradient (``restore_reduced_dims``)."""
    return g if keepdim else f.unsqueeze_dims(g, dims)


def _all_dims(x, dim):
    """The dims a reduction of ``x`` over ``dim`` reduces: all for None or (); none for a 0-d
    ``x``, whose dim 0 (or -1) PyTorch accepts and reduces over nothing."""
    if not len(x.shape):
        return ()
    return tuple(range(len(x.shape))) if dim is None or dim == () else dim


def _reduced_count(self_sym_sizes, dim):
    n = 1
    for d in dim:
        n *= self_sym_sizes[d] if self_sym_sizes else 1  # a 0-d input: one element
    return n


def _sum_backward(grad, self_sym_sizes, dim, keepdim):
    if not keepdim and len(self_sym_sizes):
        grad = f.unsqueeze_dims(grad, dim)
    return f.expand(grad, self_sym_sizes)


def _even_share(grad, self, result, dims, keepdim):
    """Share ``grad`` evenly among the elements equal to the extremum (amax, max(), ...).
    The weights are constants: they depend on ties, not smoothly on ``self``."""
    x, r = f.data(self), np.asarray(f.data(result))
    dims = dims if x.ndim else ()
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
    # No more elements than the correction: inf (times 0), NaN as in PyTorch, not an exception.
    scale = 2.0 / (n - c) if n != c else math.inf
    return scale * grad * (self - f.mean(self, dims))


def _std_backward(grad, self, result, dim, correction, keepdim):
    zero = result == 0
    g = f.where(zero, 0.0, grad / f.where(zero, 1.0, result * 2))
    return _var_backward(g, self, dim, correction, keepdim)


def _norm_backward(grad, self, result, ord, dim, keepdim):  # noqa: A002 - PyTorch's name
    dims = _all_dims(self, dim)
    if dim is not None:
        grad, result = _restore(grad, dims, keepdim), _restore(result, dims, keepdim)
    if ord == 0:
        return None  # a count has no gradient: PyTorch's is undefined, so .grad stays None
    if ord == 1:
        return grad * f.sign(self)
    if ord in (math.inf, -math.inf):
        x, r = np.abs(f.data(self)), np.asarray(f.data(result))
        mask = x == r
        w = (np.sign(f.data(self)) * mask / mask.sum(axis=dims, keepdims=True))
        return grad * w.astype(f.dtype_of(grad))
    if ord < 1:
        # |x| ** (ord - 1) is infinite at x == 0, where PyTorch's gradient is 0 (sign(0) = 0
        # against a finite stand-in); norm ** (1 - ord) is then finite, 0 for a zero norm.
        scaled = f.sign(self) * f.where(self == 0, 1.0, f.abs(self)) ** (ord - 1)
        return grad * scaled * result ** (1 - ord)
    safe = f.where(result == 0, 1.0, result)
    if ord == 2:
        return grad * self / safe
    return grad * f.sign(self) * f.abs(self) ** (ord - 1) / safe ** (ord - 1)


defop("sum", "SumBackward0", K.sum_all, ("self",),
      calls=("`gradviz.sum`", "`.sum()`"),
      self=lambda grad, self_sym_sizes: f.expand(grad, self_sym_sizes))
defop("sum_dim", "SumBackward1", K.sum_dim, ("self",),
      calls=("`gradviz.sum(x, dim)`", "`.sum()`"),
      self=_sum_backward)
defop("mean", "MeanBackward0", K.mean_all, ("self",),
      calls=("`gradviz.mean`", "`.mean()`"),
      self=lambda grad, self_sym_sizes, self_sym_numel: f.expand(grad, self_sym_sizes)
      / self_sym_numel)
defop("mean_dim", "MeanBackward1", K.mean_dim, ("self",),
      calls=("`gradviz.mean(x, dim)`", "`.mean()`"),
      self=lambda grad, self_sym_sizes, dim, self_sym_numel, keepdim: _sum_backward(
          grad, self_sym_sizes, dim, keepdim) / _reduced_count(self_sym_sizes, dim))
defop("amax", "AmaxBackward0", K.amax, ("self",),
      doc="ties share the gradient evenly; dim=() reduces every dimension",
      calls=("`gradviz.amax`", "`.amax()`"),
      self=_amax_backward)
defop("amin", "AminBackward0", K.amin, ("self",),
      doc="ties share the gradient evenly; dim=() reduces every dimension",
      calls=("`gradviz.amin`", "`.amin()`"),
      self=_amax_backward)
defop("max", "MaxBackward1", K.max_all, ("self",),
      doc="max of all elements; ties share the gradient evenly",
      calls=("`gradviz.max`", "`.max()`"),
      self=lambda grad, self, result: _even_share(grad, self, result, _all_dims(self, None),
                                                  False))
defop("min", "MinBackward1", K.min_all, ("self",),
      doc="min of all elements; ties share the gradient evenly",
      calls=("`gradviz.min`", "`.min()`"),
      self=lambda grad, self, result: _even_share(grad, self, result, _all_dims(self, None),
                                                  False))
defop("max_dim", "MaxBackward0", K.max_dim, ("self",),
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="(values, indices); the gradient goes to the returned index",
      calls=("`gradviz.max(x, dim)`", "`.max()`"),
      self=_value_selecting_backward)
defop("min_dim", "MinBackward0", K.min_dim, ("self",),
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="(values, indices); the gradient goes to the returned index",
      calls=("`gradviz.min(x, dim)`", "`.min()`"),
      self=_value_selecting_backward)
defop("prod", "ProdBackward0", K.prod_all, ("self",),
      quiet=True,
      doc="exact with zeros among the factors",
      calls=("`gradviz.prod`", "`.prod()`"),
      self=lambda grad, self, result: _prod_backward(grad, self, result, None, False))
defop("prod_dim", "ProdBackward1", K.prod, ("self",),
      quiet=True,
      calls=("`gradviz.prod(x, dim)`", "`.prod()`"),
      self=lambda grad, self, result, dim, keepdim: _prod_backward(
          grad, self, result, _all_dims(self, (dim,)), keepdim))
defop("var", "VarBackward0", K.var, ("self",),
      quiet=True,
      calls=("`gradviz.var`", "`.var()`"),
      self=_var_backward)
defop("std", "StdBackward0", K.std, ("self",),
      quiet=True,
      calls=("`gradviz.std`", "`.std()`"),
      self=_std_backward)
defop("logsumexp", "LogsumexpBackward0", K.logsumexp, ("self",),
      promotes=True, quiet=True,
      calls=("`gradviz.logsumexp`", "`.logsumexp()`"),
      self=lambda grad, self, result, dim, keepdim: _restore(
          grad, _all_dims(self, dim), keepdim) * f.exp(
          self - _restore(result, _all_dims(self, dim), keepdim)))
defop("norm", "LinalgVectorNormBackward0", K.vector_norm, ("self",),
      quiet=True,
      doc="torch.norm / linalg.vector_norm: ord 2 ('fro'), 1, inf, -inf, 0 or any p",
      calls=("`gradviz.norm`", "`.norm()`"),
      self=_norm_backward)


defop("cumsum", "CumsumBackward0", K.cumsum, ("self",),
      doc="Cumulative sum along ``dim``.",
      calls=("`gradviz.cumsum`", "`.cumsum()`"),
      samples=(Sample(R(2, 3), dim=1), Sample(R(3, 2), dim=0), Sample(R(), dim=0)),
      self=lambda grad, dim: f.flip(f.cumsum(f.flip(grad, (dim,)), dim), (dim,)))


# -- more ops (opsselect)
def _selected_backward(grads, self_sym_sizes, dim, indices):
    """topk/sort: each returned value's gradient goes to its index (the dim is kept)."""
    return _value_selecting_backward(grads, self_sym_sizes, dim, indices, True)


def _reverse_cumsum(v, dim):
    return f.flip(f.cumsum(f.flip(v, (dim,)), dim), (dim,))


def _cumprod_backward(grad, self, dim, result):
    """d out_j / d x_k = prod_{i <= j, i != k} x_i for j >= k (PyTorch's ``cumprod_backward``).
    Without zeros that is ``out_j / x_k``: a reverse cumulative sum of ``grad * result``,
    divided by ``self``. With a zero, dividing is wrong, so :func:`_cumprod_backward_zeros`
    multiplies instead."""
    if not len(self.shape):
        return grad
    if not (f.data(self) == 0).any():
        return _reverse_cumsum(grad * result, dim) / self
    return _cumprod_backward_zeros(grad, self, dim)


def _cumprod_backward_zeros(grad, self, dim):
    """``grad_k = prod_{i < k} x_i * sum_{j >= k} grad_j * prod_{k < i <= j} x_i``, with ``dim``
    moved last: products only, so exact at zeros and differentiable again (as PyTorch's is).
    The inner products form an (n, n) matrix per slice (row k, column j), so this costs
    O(n^2); it runs only when a factor is exactly 0."""
    nd, n = len(self.shape), self.shape[dim]
    order = tuple(i for i in range(nd) if i != dim) + (dim,)
    x, g = f.permute(self, order), f.permute(grad, order)
    k = np.arange(n)
    later, upper = k[None, :] > k[:, None], k[None, :] >= k[:, None]  # [k, j]: j > k, j >= k
    # Row k: 1 up to column k, then x_{k+1} .. x_j multiplied up (0 left of the diagonal).
    inner = f.where(upper, f.cumprod(f.where(later, f.unsqueeze_dims(x, (nd - 1,)), 1.0),
                                     nd), 0.0)
    tail = f.sum(inner * f.unsqueeze_dims(g, (nd - 1,)), (nd,))
    ones = np.ones(tuple(x.shape[:-1]) + (1,), f.dtype_of(grad))
    lead = f.cumprod(f.cat([ones, f.slice_dim(x, nd - 1, 0, n - 1)], nd - 1), nd - 1)
    return f.permute(lead * tail, tuple(np.argsort(order)))


defop("topk", "TopkBackward0", K.topk, ("self",),
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="the k largest (or smallest) values along ``dim`` and their indices",
      calls=("`gradviz.topk`", "`.topk()`"),
      samples=(Sample(R(3, 5), k=2, dim=1), Sample(R(6), k=3, dim=0, largest=False),
               Sample(R(4, 3), k=4, dim=0), Sample(R(), k=1, dim=0)),
      self=_selected_backward)
defop("sort", "SortBackward0", K.sort, ("self",),
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="``(values, indices)`` sorted along ``dim``; NaN sorts as the largest value",
      calls=("`gradviz.sort`, `gradviz.argsort`", "`.sort()`, `.argsort()`"),
      samples=(Sample(R(3, 4), dim=1), Sample(R(4, 3), dim=0, descending=True),
               Sample(R(), dim=0)),
      self=_selected_backward)
defop("sort_stable", "SortBackward1", K.sort_stable, ("self",),
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="sort called with ``stable=``: equal values keep their order",
      calls=("`gradviz.sort(x, stable=True)`", "`.sort(stable=True)`"),
      samples=(Sample(R(3, 4), stable=True, dim=1, descending=True),),
      self=_selected_backward)
defop("kthvalue", "KthvalueBackward0", K.kthvalue, ("self",),
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="the k-th smallest value along ``dim`` and its index",
      calls=("`gradviz.kthvalue`", "`.kthvalue()`"),
      samples=(Sample(R(3, 5), k=2, dim=1), Sample(R(4, 3), k=4, dim=0, keepdim=True)),
      self=_value_selecting_backward)
defop("median", "MedianBackward0", K.median, ("self",),
      doc="the lower of the two middle values of all elements; ties share the gradient evenly",
      calls=("`gradviz.median`", "`.median()`"),
      samples=(Sample(R(3, 5)), Sample(R(4)),
               Sample(W([1.0, 2.0, 2.0, 3.0, 0.5]),
                      gg="tied medians: the even share is a kink, with no second derivative")),
      self=lambda grad, self, result: _even_share(grad, self, result, _all_dims(self, None),
                                                  False))
defop("median_dim", "MedianBackward1", K.median_dim, ("self",),
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="(values, indices) along ``dim``; the gradient goes to the returned index",
      calls=("`gradviz.median(x, dim)`", "`.median()`"),
      samples=(Sample(R(3, 5), dim=1), Sample(R(4, 3), dim=0, keepdim=True)),
      self=_value_selecting_backward)
defop("nanmedian", "NanmedianBackward0", K.nanmedian, ("self",),
      doc="``median`` of the elements that are not NaN; ties share the gradient evenly",
      calls=("`gradviz.nanmedian`", "`.nanmedian()`"),
      samples=(Sample(R(3, 5)), Sample(W([1.0, float("nan"), 3.0, 2.0, float("nan")])),
               Sample(W([1.0, 2.0, 2.0, float("nan"), 0.5]),
                      gg="tied medians: the even share is a kink, with no second derivative")),
      self=lambda grad, self, result: _even_share(grad, self, result, _all_dims(self, None),
                                                  False))
defop("nanmedian_dim", "NanmedianBackward1", K.nanmedian_dim, ("self",),
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="(values, indices) along ``dim``, NaN skipped; the gradient goes to the returned index",
      calls=("`gradviz.nanmedian(x, dim)`", "`.nanmedian()`"),
      samples=(Sample(R(3, 5), dim=1), Sample(R(4, 3), dim=0, keepdim=True),
               Sample(W([[1.0, float("nan"), 3.0, 2.0], [0.5, 4.0, float("nan"), -1.0]]),
                      dim=1)),
      self=_value_selecting_backward)
defop("cumprod", "CumprodBackward0", K.cumprod, ("self",),
      doc="Cumulative product along ``dim``; exact with zeros among the factors.",
      calls=("`gradviz.cumprod`", "`.cumprod()`"),
      samples=(Sample(R(2, 4), dim=1), Sample(P(3, 2), dim=0), Sample(R(), dim=0),
               Sample(W([[0.5, 0.0, 1.5, -2.0], [1.2, 0.7, 0.0, 0.0]]), dim=1),
               Sample(W([[0.0, 0.3], [0.0, 0.0], [1.1, -0.4]]), dim=0)),
      self=_cumprod_backward)
defop("cummax", "CummaxBackward0", K.cummax, ("self",),
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="running maximum along ``dim`` and where it came from",
      calls=("`gradviz.cummax`", "`.cummax()`"),
      samples=(Sample(R(3, 5), dim=1), Sample(R(6), dim=0)),
      self=lambda grads, self, dim, indices: f.scatter_add(f.zeros_like(self), dim, indices,
                                                           grads[0]))
defop("cummin", "CumminBackward0", K.cummin, ("self",),
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="running minimum along ``dim`` and where it came from",
      calls=("`gradviz.cummin`", "`.cummin()`"),
      samples=(Sample(R(3, 5), dim=1), Sample(R(6), dim=0)),
      self=lambda grads, self, dim, indices: f.scatter_add(f.zeros_like(self), dim, indices,
                                                           grads[0]))



# -- more (opsmore)
def _mean_part(grad, self, dim, keepdim):
    """The mean's share of var_mean/std_mean's gradient: ``grad`` spread evenly."""
    dims = _all_dims(self, dim)
    if dim is not None:
        grad = _restore(grad, dims, keepdim)
    return f.expand(grad, tuple(self.shape)) / _reduced_count(tuple(self.shape), dims)


def _var_mean_backward(grads, self, dim, correction, keepdim):
    return (_var_backward(grads[0], self, dim, correction, keepdim)
            + _mean_part(grads[1], self, dim, keepdim))


def _std_mean_backward(grads, self, dim, correction, keepdim, result0):
    return (_std_backward(grads[0], self, result0, dim, correction, keepdim)
            + _mean_part(grads[1], self, dim, keepdim))


def _logcumsumexp_backward(grad, self, dim, result):
    """``grad_i = sum_{j >= i} grad_j exp(x_i - r_j)``. Every exponent is <= 0 (``r_j`` sums
    ``x_i`` among others), so with ``dim`` moved last the (n, n) matrix of them is computed
    directly: nothing overflows, however far apart the values (PyTorch gets the same in log
    space), and it is smooth, so differentiable again. O(n^2) per slice."""
    if not len(self.shape):
        return grad
    nd, n = len(self.shape), self.shape[dim]
    order = tuple(i for i in range(nd) if i != dim) + (dim,)
    x, r, g = f.permute(self, order), f.permute(result, order), f.permute(grad, order)
    k = np.arange(n)
    # [i, j]: j >= i, and x_i not -inf (then r_j is not either: no -inf - -inf)
    valid = (k[None, :] >= k[:, None]) & (np.asarray(f.data(x))[..., :, None] > -math.inf)
    expo = f.where(valid, f.unsqueeze_dims(x, (nd,)) - f.unsqueeze_dims(r, (nd - 1,)),
                   -math.inf)
    out = f.sum(f.exp(expo) * f.unsqueeze_dims(g, (nd - 1,)), (nd,))
    return f.permute(out, tuple(np.argsort(order)))


def _nansum_backward(grad, self, dim, keepdim):
    dims = _all_dims(self, dim)
    if dim is not None:
        grad = _restore(grad, dims, keepdim)
    return f.where(self != self, 0.0, f.expand(grad, tuple(self.shape)))


def _aminmax_backward(grads, self, dim, keepdim, min, max):  # noqa: A002 - PyTorch's names
    dims = _all_dims(self, None if dim is None else (dim,))
    return (_even_share(grads[0], self, min, dims, keepdim)
            + _even_share(grads[1], self, max, dims, keepdim))


defop("var_mean", "VarMeanBackward0", K.var_mean, ("self",),
      outputs=("result0", "result1"), quiet=True,
      doc="``(var, mean)`` over ``dim`` in one node",
      calls=("`gradviz.var_mean`", ""),
      samples=(Sample(R(3, 4)), Sample(R(3, 4), dim=(1,), correction=1),
               Sample(R(2, 3, 4), dim=(0, 2), correction=0, keepdim=True)),
      self=_var_mean_backward)
defop("std_mean", "StdMeanBackward0", K.std_mean, ("self",),
      outputs=("result0", "result1"), quiet=True,
      doc="``(std, mean)`` over ``dim`` in one node",
      calls=("`gradviz.std_mean`", ""),
      samples=(Sample(R(3, 4)), Sample(R(3, 4), dim=(1,), correction=1),
               Sample(R(2, 3, 4), dim=(0, 2), correction=0, keepdim=True)),
      self=_std_mean_backward)
defop("logcumsumexp", "LogcumsumexpBackward0", K.logcumsumexp, ("self",),
      quiet=True,
      doc="``log(cumsum(exp(input)))`` along ``dim``, without overflow",
      calls=("`gradviz.logcumsumexp`", "`.logcumsumexp()`"),
      samples=(Sample(R(3, 4), dim=1), Sample(R(4, 2), dim=0), Sample(R(), dim=0)),
      self=_logcumsumexp_backward)
defop("nansum", "NansumBackward0", K.nansum, ("self",),
      doc="the sum with NaN counted as 0 (and given no gradient)",
      calls=("`gradviz.nansum`, `gradviz.nanmean`", "`.nansum()`, `.nanmean()`"),
      samples=(Sample(R(3, 4)), Sample(R(3, 4), dim=(1,)),
               Sample(W([[1.0, math.nan, 0.5], [0.2, -0.3, math.nan]]), dim=(0,),
                      keepdim=True)),
      self=_nansum_backward)
defop("aminmax", "AminmaxBackward0", K.aminmax, ("self",),
      outputs=("min", "max"),
      doc="``(min, max)`` in one node; ties share the gradient evenly",
      calls=("`gradviz.aminmax`", "`.aminmax()`"),
      samples=(Sample(R(3, 4)), Sample(R(3, 4), dim=1), Sample(R(3, 4), dim=0, keepdim=True)),
      self=_aminmax_backward)
defop("mode", "ModeBackward0", K.mode, ("self",),
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="the most frequent value along ``dim`` and its last index",
      calls=("`gradviz.mode`", "`.mode()`"),
      # (distinct values: a tie would move under gradcheck's nudges)
      samples=(Sample(R(2, 3), dim=1), Sample(R(3, 4), dim=0, keepdim=True)),
      self=_value_selecting_backward)
defop("count_nonzero", None, K.count_nonzero, ("self",),
      doc="how many elements are not zero (int64)",
      calls=("`gradviz.count_nonzero`", "`.count_nonzero()`"))
defop("bincount", None, K.bincount, ("self",),
      doc="how often each non-negative integer occurs (or the sum of its weights)",
      calls=("`gradviz.bincount`", "`.bincount()`"))
defop("histc", None, K.histc, ("self",),
      doc="a histogram of ``bins`` equal bins between ``min`` and ``max``",
      calls=("`gradviz.histc`", "`.histc()`"))

# ===============================================================================================
# Shapes and views
# ===============================================================================================


def _repeat_backward(grad, repeats, self_sym_sizes):
    lead = len(repeats) - len(self_sym_sizes)
    sizes = (1,) * lead + tuple(self_sym_sizes)
    g = grad.reshape(tuple(x for r, s in zip(repeats, sizes, strict=True) for x in (r, s)))
    return f.sum(g, tuple(range(0, 2 * len(repeats), 2))).reshape(self_sym_sizes)


def _cat_backward(grad, dim, tensors_args_sizes):
    out, start = [], 0
    for sizes in tensors_args_sizes:
        if tuple(sizes) == (0,):  # a legacy empty tensor, skipped by the forward
            out.append(f.new_zeros((0,), f.dtype_of(grad), f.is_tensor(grad)))
            continue
        n = sizes[dim]
        out.append(f.slice_dim(grad, dim, start, start + n))
        start += n
    return out


defop("view", "ViewBackward0", K.view, ("self",),
      view=True,
      doc="view/reshape that can share storage",
      calls=("`gradviz.reshape`, `gradviz.flatten`",
             "`.view()`, `.reshape()`, `.flatten()`, `.view_as()`"),
      self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
defop("_unsafe_view", "UnsafeViewBackward0", K.unsafe_view, ("self",),
      doc="the reshape of a copy (reshape of a non-contiguous tensor: clone, then this)",
      calls=("`gradviz.reshape` (copying), `x @ y` (N-D)", "`.reshape()`"),
      self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
defop("_reshape_alias", "ReshapeAliasBackward0", K.reshape_alias, ("self",),
      view=True,
      doc="reshape of a non-contiguous tensor that can still be a view",
      calls=("`gradviz.reshape` (non-contiguous view)", "`.reshape()`, `.flatten()`"),
      self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
defop("alias", "AliasBackward0", K.alias, ("self",),
      view=True,
      doc="x[...] and x[:, :]: the same tensor as a new view",
      calls=("`x[...]`, `x[:, :]`", ""),
      self=lambda grad: grad)
defop("clone", "CloneBackward0", K.clone, ("self",),
      calls=("`gradviz.clone`", "`.clone()`, `.contiguous()`"),
      self=lambda grad: grad)
defop("transpose", "TransposeBackward0", K.transpose, ("self",),
      view=True,
      calls=("`gradviz.transpose`, `gradviz.swapaxes`", "`.transpose()`, `.swapaxes()`"),
      self=lambda grad, dim0, dim1: f.transpose(grad, dim0, dim1))
defop("t", "TBackward0", K.t, ("self",),
      view=True,
      calls=("`gradviz.t`", "`.t()`"),
      self=lambda grad: f.t(grad))
defop("permute", "PermuteBackward0", K.permute, ("self",),
      view=True,
      calls=("`gradviz.permute`", "`.permute()`, `x.T`"),
      self=lambda grad, dims: f.permute(grad, tuple(np.argsort(dims))))
defop("expand", "ExpandBackward0", K.expand, ("self",),
      view=True,
      calls=("`gradviz.expand`", "`.expand()`, `.expand_as()`"),
      self=lambda grad, self_sym_sizes: f.sum_to(grad, self_sym_sizes))
# ndarray.squeeze(axis) and Tensor.squeeze(dim) both serve unsqueeze's formula.
defop("unsqueeze", "UnsqueezeBackward0", K.unsqueeze, ("self",),
      view=True,
      calls=("`gradviz.unsqueeze`, `x[None]`", "`.unsqueeze()`"),
      self=lambda grad, dim: grad.squeeze(dim))
defop("squeeze", "SqueezeBackward0", K.squeeze, ("self",),
      view=True,
      calls=("`gradviz.squeeze`", "`.squeeze()`"),
      self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
# squeeze_dim saves dim although its formula reshapes: PyTorch shows _saved_dim.
defop("squeeze_dim", "SqueezeBackward1", K.squeeze_dim, ("self",),
      view=True,
      calls=("`gradviz.squeeze(x, dim)`", "`.squeeze()`"),
      self=lambda grad, self_sym_sizes, dim: grad.reshape(self_sym_sizes))
defop("squeeze_dims", "SqueezeBackward2", K.squeeze_dims, ("self",),
      view=True,
      doc="``squeeze`` with a tuple of dims: those of size 1 are removed.",
      calls=("`gradviz.squeeze(x, (0, 2))`", "`.squeeze((0, 2))`"),
      self=lambda grad, self_sym_sizes, dim: grad.reshape(self_sym_sizes))
defop("squeeze_dim_", "SqueezeBackward4", K.squeeze_dim, ("self",),
      doc="in-place ``squeeze_(dim)`` (also inside matmul, 1-D @ 2-D, as in PyTorch)",
      calls=("`x @ y` (1-D @ 2-D)", "`.squeeze_(dim)`"),
      self=lambda grad, self_sym_sizes, dim: grad.reshape(self_sym_sizes))
defop("to_copy", "ToCopyBackward0", K.to_copy, ("self",),
      doc="a dtype cast (``x.double()``, ``x.to(dtype)``)",
      calls=("", "`.to()`, `.double()`, `.float()`, `.type_as()`"),
      self=lambda grad, self_dtype: f.to_dtype(grad, self_dtype))
defop("select", "SelectBackward0", K.select, ("self",),
      view=True,
      doc="x[i] and x.select(dim, i)",
      calls=("`gradviz.select`, `x[i]`", "`.select()`"),
      self=lambda grad, self_sym_sizes, dim, index: f.select_backward(grad, self_sym_sizes, dim,
                                                                      index))
defop("slice", "SliceBackward0", K.slice_dim, ("self",),
      view=True,
      doc="x[a:b:c] and narrow; one node per sliced dimension",
      calls=("`gradviz.narrow`, `x[a:b:c]`", "`.narrow()`"),
      self=lambda grad, self_sym_sizes, dim, start, end, step: f.slice_backward(
          grad, self_sym_sizes, dim, start, end, step))
defop("select_backward", "SelectBackwardBackward0", K.select_backward, ("grad_output",),
      doc="select's backward, recorded under create_graph",
      calls=("select's backward under `create_graph=True`", ""),
      grad_output=lambda grad, dim, index: f.select(grad, dim, index))
defop("slice_backward", "SliceBackwardBackward0", K.slice_backward, ("grad_output",),
      doc="slice's backward, recorded under create_graph",
      calls=("slice's backward under `create_graph=True`", ""),
      grad_output=lambda grad, dim, start, end, step: f.slice_dim(grad, dim, start, end, step))
defop("repeat", "RepeatBackward0", K.repeat, ("self",),
      calls=("", "`.repeat()`"),
      self=_repeat_backward)
defop("split", "SplitBackward0", K.split, ("self",),
      view=True, multi=True,
      doc="split(int) and chunk: several views; their gradients are concatenated",
      calls=("`gradviz.split`, `gradviz.chunk`", "`.split()`, `.chunk()`"),
      self=lambda grads, dim, self_sym_sizes, split_size: f.cat(grads, dim))
defop("split_with_sizes", "SplitWithSizesBackward0", K.split_with_sizes, ("self",),
      view=True, multi=True,
      doc="split(list of sizes)",
      calls=("`gradviz.split(x, [sizes])`", "`.split()`"),
      self=lambda grads, dim, self_sym_sizes, split_sizes: f.cat(grads, dim))
# unsafe_split: split whose pieces autograd does not track as views of the input (each piece
# has its own version counter; writing into one is not checked against the others). PyTorch's
# CPU RNN cells cut their gates with it (`unsafe_chunk` in ATen's RNN.cpp).
defop("unsafe_split", "UnsafeSplitBackward0", K.split, ("self",),
      multi=True,
      doc="split(int) and unsafe_chunk, the pieces not tracked as views (the CPU RNN cells' gates)",
      calls=("`gradviz.unsafe_split`, `gradviz.unsafe_chunk`, `nn.LSTMCell`, `nn.GRUCell`",
             "`.unsafe_split()`, `.unsafe_chunk()`"),
      self=lambda grads, dim, self_sym_sizes, split_size: f.cat(grads, dim))
defop("unsafe_split_with_sizes", "UnsafeSplitWithSizesBackward0", K.split_with_sizes, ("self",),
      multi=True,
      doc="unsafe_split(list of sizes)",
      calls=("`gradviz.unsafe_split_with_sizes`", "`.unsafe_split_with_sizes()`"),
      self=lambda grads, dim, self_sym_sizes, split_sizes: f.cat(grads, dim))
defop("unbind", "UnbindBackward0", K.unbind, ("self",),
      view=True, multi=True,
      doc="the slices along dim (iterating over a tensor)",
      calls=("`gradviz.unbind`, `iter(x)`", "`.unbind()`"),
      self=lambda grads, dim: f.stack(grads, dim))
defop("cat", "CatBackward0", K.cat, ("tensors",),
      variadic=True, hidden=("tensors_args_sizes",),
      doc="one edge per tensor of the list",
      calls=("`gradviz.cat`, `gradviz.concat`, `gradviz.concatenate`", ""),
      tensors=_cat_backward)
defop("stack", "StackBackward0", K.stack, ("tensors",),
      variadic=True,
      doc="one edge per tensor of the list",
      calls=("`gradviz.stack`", ""),
      tensors=lambda grad, dim: [f.select(grad, dim, i) for i in range(grad.shape[dim])])


defop("flip", "FlipBackward0", K.flip, ("self",),
      doc="Reverse the order of elements along ``dims``.",
      calls=("`gradviz.flip`", "`.flip()`"),
      samples=(Sample(R(2, 3), dims=(1,)), Sample(R(2, 3, 2), dims=(0, 2)), Sample(R(), dims=())),
      self=lambda grad, dims: f.flip(grad, dims))


# -- more ops (opsselect)
def _diagonal_backward(grad, self_sym_sizes, offset, dim1, dim2):
    return f.diagonal_backward(grad, self_sym_sizes, offset, dim1, dim2)


defop("tril", "TrilBackward0", K.tril, ("self",),
      doc="the lower triangle of the last two dims (on and below ``diagonal``), zeros above",
      calls=("`gradviz.tril`", "`.tril()`, `.tril_()`"),
      samples=(Sample(R(3, 4), diagonal=0), Sample(R(2, 3, 3), diagonal=-1),
               Sample(R(4, 3), diagonal=1)),
      self=lambda grad, diagonal: f.tril(grad, diagonal))
defop("triu", "TriuBackward0", K.triu, ("self",),
      doc="the upper triangle of the last two dims (on and above ``diagonal``), zeros below",
      calls=("`gradviz.triu`", "`.triu()`, `.triu_()`"),
      samples=(Sample(R(3, 4), diagonal=0), Sample(R(2, 3, 3), diagonal=1),
               Sample(R(4, 3), diagonal=-2)),
      self=lambda grad, diagonal: f.triu(grad, diagonal))
defop("diagonal", "DiagonalBackward0", K.diagonal, ("self",),
      view=True,
      doc="the diagonal of dims ``dim1, dim2`` as a view, on the last dimension",
      calls=("`gradviz.diagonal`", "`.diagonal()`"),
      samples=(Sample(R(3, 4), offset=1, dim1=0, dim2=1), Sample(R(3, 3), offset=0, dim1=0,
                                                                   dim2=1),
               Sample(R(2, 3, 4), offset=-1, dim1=2, dim2=0)),
      self=_diagonal_backward)
defop("diagonal_copy", "DiagonalBackward0_copy", K.diagonal_copy, ("self",),
      doc="the diagonal of a matrix as a copy: what ``diag`` of a 2-D tensor records",
      calls=("`gradviz.diag(matrix)`", "`.diag()`"),
      samples=(Sample(R(3, 4), offset=0, dim1=0, dim2=1), Sample(R(4, 3), offset=-1, dim1=0,
                                                                   dim2=1)),
      self=_diagonal_backward)
defop("diagonal_backward", "DiagonalBackwardBackward0", K.diagonal_backward, ("grad_output",),
      doc="diagonal's backward, recorded under create_graph",
      calls=("diagonal's backward under `create_graph=True`", ""),
      samples=(Sample(R(3), input_sizes=(3, 4), offset=1, dim1=0, dim2=1),),
      grad_output=lambda grad, offset, dim1, dim2: f.diagonal(grad, offset, dim1, dim2))
defop("diag_embed", "DiagEmbedBackward0", K.diag_embed, ("self",),
      doc="the last dimension written on a diagonal of two new dims (``diag`` of a vector)",
      calls=("`gradviz.diag_embed`, `gradviz.diag(vector)`", "`.diag_embed()`, `.diag()`"),
      samples=(Sample(R(3), offset=0, dim1=0, dim2=1), Sample(R(2, 3), offset=1, dim1=1, dim2=2),
               Sample(R(2, 3), offset=-1, dim1=2, dim2=0)),
      self=lambda grad, offset, dim1, dim2: f.diagonal(grad, offset, dim1, dim2))
defop("roll", "RollBackward0", K.roll, ("self",),
      doc="shift elements along ``dims`` (of the flattened tensor when ``dims`` is empty), "
          "wrapping around",
      calls=("`gradviz.roll`", "`.roll()`"),
      samples=(Sample(R(3, 4), shifts=(1,), dims=(1,)), Sample(R(3, 4), shifts=(5,), dims=()),
               Sample(R(2, 3, 4), shifts=(1, -2), dims=(0, 2))),
      self=lambda grad, shifts, dims: f.roll(grad, tuple(-s for s in shifts), dims))



# -- more (opsmore)
def _block_diag_backward(grad, tensors_args_sizes):
    """Each tensor's block cut out of the gradient, in the tensor's own shape (0-d, 1-D)."""
    out, r, c = [], 0, 0
    for sizes in tensors_args_sizes:
        rows, cols = (1, 1) if len(sizes) == 0 else (1, sizes[0]) if len(sizes) == 1 else sizes
        block = f.slice_dim(f.slice_dim(grad, 0, r, r + rows), 1, c, c + cols)
        out.append(block.reshape(tuple(sizes)))
        r, c = r + rows, c + cols
    return out


def _unfold_backward(grad, self_sym_sizes, dimension, size, step):
    """Each window's gradient added back where the window came from (PyTorch's
    ``unfold_backward``): one slice_backward per window, so it is differentiable again."""
    if not len(self_sym_sizes):
        return grad.reshape(())
    nd = len(self_sym_sizes)
    order = tuple(range(dimension)) + (nd,) + tuple(range(dimension, nd))
    total = None
    for i in range(grad.shape[dimension]):
        # window i: (..., size) with the window last; its dimension back in place
        w = f.permute(f.select(grad, dimension, i), order[:dimension] + (nd - 1,) + tuple(
            range(dimension, nd - 1)))
        part = f.slice_backward(w, tuple(self_sym_sizes), dimension, i * step,
                                i * step + size, 1)
        total = part if total is None else total + part
    if total is None:  # no window fits: nothing flows back
        return f.new_zeros(tuple(self_sym_sizes), f.dtype_of(grad), f.is_tensor(grad))
    return total


# In-place unsqueeze_/transpose_ (PyTorch's own calls inside quantile record them too).
defop("unsqueeze_", "UnsqueezeBackward1", K.unsqueeze, ("self",),
      doc="in-place ``unsqueeze_(dim)`` (also inside ``quantile`` with a tensor ``q``)",
      calls=("inside `gradviz.quantile(x, q_tensor)`", "`.unsqueeze_()`"),
      samples=(Sample(R(2, 3), dim=0), Sample(R(3), dim=1)),
      self=lambda grad, dim: grad.squeeze(dim))
defop("transpose_", "TransposeBackward1", K.transpose, ("self",),
      doc="in-place ``transpose_(dim0, dim1)`` (also inside ``quantile`` with a tensor ``q``)",
      calls=("inside `gradviz.quantile(x, q_tensor)`", "`.transpose_()`, `.swapaxes_()`"),
      samples=(Sample(R(2, 3, 1), dim0=0, dim1=2),),
      self=lambda grad, dim0, dim1: f.transpose(grad, dim0, dim1))
defop("t_", "TBackward1", K.t, ("self",),
      doc="in-place ``t_()``",
      calls=("", "`.t_()`"),
      samples=(Sample(R(2, 3)), Sample(R(3))),
      self=lambda grad: f.t(grad))
defop("squeeze_", "SqueezeBackward3", K.squeeze, ("self",),
      doc="in-place ``squeeze_()``: every dimension of size 1",
      calls=("", "`.squeeze_()`"),
      samples=(Sample(R(2, 1, 3, 1)), Sample(R(1))),
      self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
defop("rot90", "Rot90Backward0", K.rot90, ("self",),
      doc="rotate by 90 degrees ``k`` times, from the first of ``dims`` toward the second",
      calls=("`gradviz.rot90`", "`.rot90()`"),
      samples=(Sample(R(3, 4), k=1, dims=(0, 1)), Sample(R(2, 3, 4), k=2, dims=(2, 0)),
               Sample(R(3, 4), k=-1, dims=(0, 1)), Sample(R(3, 2), k=4, dims=(1, 0))),
      self=lambda grad, dims, k: f.op("rot90", grad, k=-k, dims=dims))
defop("block_diag", "BlockDiagBackward0", K.block_diag, ("tensors",),
      variadic=True, hidden=("tensors_args_sizes",),
      doc="the tensors on the diagonal of a zero matrix (one edge per tensor)",
      calls=("`gradviz.block_diag`", ""),
      samples=(Sample(R(2, 3), R(3), R()), Sample(R(1, 2), R(2, 2))),
      tensors=_block_diag_backward)
defop("unfold", "UnfoldBackward0", K.unfold, ("self",),
      doc="every window of ``size`` along ``dimension``, ``step`` apart, as a new last "
          "dimension (gradviz copies; PyTorch's result is a view)",
      calls=("", "`.unfold()`"),
      samples=(Sample(R(3, 5), dimension=1, size=2, step=1),
               Sample(R(7), dimension=0, size=3, step=2),
               Sample(R(4, 2, 3), dimension=0, size=2, step=3)),
      self=_unfold_backward)

# ===============================================================================================
# Linear algebra
# ===============================================================================================


def _mat2_grad(grad, mat1):
    """``mat1.T @ grad``, computed as ``(grad.T @ mat1).T``: the same numbers, laid out so that
    for ``F.linear``'s ``weight.t()`` the weight's gradient comes out contiguous.

    NOTE [perf]: the gradient of ``weight.t()`` reaches ``weight`` through ``TBackward0``; in
    this layout that transpose is C-contiguous and ``AccumulateGrad`` copies it in one memcpy
    instead of a strided transpose.
    """
    return f.t(f.t(grad) @ mat1)


# PyTorch's mm formulas also take the sizes (and strides, which gradviz does not model).
defop("mm", "MmBackward0", np.matmul, ("self", "mat2"),
      calls=("`gradviz.mm`, `gradviz.matmul`, `x @ y`", "`.mm()`, `.matmul()`"),
      self=lambda grad, mat2, self_sym_sizes, self_sym_strides: grad @ f.t(mat2),
      mat2=lambda grad, self, mat2_sym_sizes, mat2_sym_strides: _mat2_grad(grad, self))
defop("dot", "DotBackward0", np.dot, ("self", "tensor"),
      calls=("`gradviz.dot`, `x @ y` (1-D)", "`.dot()`"),
      self=lambda grad, tensor: grad * tensor,
      tensor=lambda grad, self: grad * self)
defop("mv", "MvBackward0", np.matmul, ("self", "vec"),
      calls=("`gradviz.mv`, `x @ y` (2-D @ 1-D)", "`.mv()`"),
      self=lambda grad, vec: grad.reshape((-1, 1)) * vec.reshape((1, -1)),
      vec=lambda grad, self: f.t(self) @ grad)
defop("bmm", "BmmBackward0", np.matmul, ("self", "mat2"),
      calls=("`gradviz.bmm`, `x @ y` (N-D)", "`.bmm()`"),
      self=lambda grad, mat2: f.bmm(grad, f.transpose(mat2, 1, 2)),
      mat2=lambda grad, self: f.bmm(f.transpose(self, 1, 2), grad))
defop("addmm", "AddmmBackward0", K.addmm, ("self", "mat1", "mat2"),
      broadcasts=("self",),
      doc="beta * self + alpha * mat1 @ mat2: what F.linear records with a bias",
      calls=("`gradviz.addmm`, `F.linear`", ""),
      self=lambda grad, beta: grad if beta == 1 else grad * beta,
      mat1=lambda grad, mat2, mat1_sym_sizes, mat1_sym_strides, alpha: (
          grad @ f.t(mat2)) * alpha if alpha != 1 else grad @ f.t(mat2),
      mat2=lambda grad, mat1, mat2_sym_sizes, mat2_sym_strides, alpha: (
          _mat2_grad(grad, mat1) * alpha if alpha != 1 else _mat2_grad(grad, mat1)))


# -- more ops (opsselect)
# <g, a × b> = <a, b × g> = <b, g × a>: each input's gradient is a cross product too.
defop("linalg_cross", "LinalgCrossBackward0", K.linalg_cross, ("self", "other"),
      broadcasts=True,
      doc="the cross product of 3-vectors along ``dim``",
      calls=("`gradviz.cross`", "`.cross()`"),
      samples=(Sample(R(4, 3), R(4, 3), dim=1), Sample(R(3, 2), R(3, 2), dim=0),
               Sample(R(2, 3), R(1, 3), dim=1)),
      self=lambda grad, other, dim: f.cross(other, grad, dim),
      other=lambda grad, self, dim: f.cross(grad, self, dim))


# -- more (einlin)
# torch.linalg's decompositions and solvers. Their formulas use only `@`, the transposes and the
# inverse of gradviz/ops/_formula.py, so that under create_graph they are recorded again. Where
# PyTorch's gradient is undefined (a singular matrix for inv/det/solve, repeated eigenvalues or
# singular values for eigh/svd) gradviz's formulas give infinities, as the maths does, except
# det's, which handles singular matrices as PyTorch's does (NOTE [det of a singular matrix]).
# LU and pivots are outputs of det/slogdet/solve that no gradient flows into: PyTorch keeps them
# for its backward and shows them as `_saved_LU` and `_saved_pivots`.
def _batch_unsqueeze(x, n):
    """``x[..., None, None]`` for a per-matrix scalar ``x`` (``n`` batch dimensions)."""
    return f.unsqueeze_dims(x, (n, n + 1))


def _det_backward(grads, A, LU, pivots, result):
    """d det(A) = det(A) tr(A^{-1} dA): the gradient is grad det(A) A^{-T}, the cofactor matrix,
    defined for every A. NOTE [det of a singular matrix]: PyTorch's two ways, kept as they are.
    A plain backward solves Aᵀ X = grad det(A) I with the forward's LU, a zero pivot nudged to
    epsilon: a singular A (det exactly 0) gets zeros. Under create_graph (formulas get tensors,
    PyTorch's GradMode) a matrix with |det| < 100 eps gets the cofactors from the SVD,
    A = U S Vh: U diag(prod of the other singular values) Vh det(U) det(Vh), recorded and
    differentiable; the others a solve with Aᵀ."""
    g = grads[0]
    if math.prod(A.shape) == 0:  # no gradient to give (PyTorch's is undefined, i.e. zeros)
        return f.new_zeros(tuple(A.shape), f.dtype_of(A), f.is_tensor(g))
    if A.shape[-1] == 1:  # det([[a]]) = a: the gradient is grad itself, at a = 0 too (PyTorch)
        return f.expand(_batch_unsqueeze(g, len(A.shape) - 2), tuple(A.shape))
    if not f.is_tensor(g):
        return K.det_grad_lu(g * result, LU, pivots)
    singular = np.abs(f.data(result)) < 100 * np.finfo(f.dtype_of(A)).eps
    if singular.all():
        return _det_grad_singular(A, g)
    if not singular.any():
        return _det_grad_invertible(A, g * result)
    # A batch of both: each part by its formula, put back in the batch's order.
    n, shape = A.shape[-1], tuple(A.shape)
    flat_A, flat_g, flat_d = A.reshape(-1, n, n), g.reshape(-1), (g * result).reshape(-1)
    rows_s, rows_i = np.flatnonzero(singular), np.flatnonzero(~singular)
    part_s, part_i = (Tensor._make(rows_s), Tensor._make(rows_i))
    both = f.cat([_det_grad_singular(flat_A.index_select(0, part_s),
                                     flat_g.index_select(0, part_s)),
                  _det_grad_invertible(flat_A.index_select(0, part_i),
                                       flat_d.index_select(0, part_i))], 0)
    order = Tensor._make(np.argsort(np.concatenate([rows_s, rows_i]), kind="stable"))
    return both.index_select(0, order).reshape(shape)


def _det_grad_invertible(A, d):
    """``d A^{-T}`` (``d`` per matrix) as a solve with Aᵀ, so that it is differentiated again."""
    nb = len(A.shape) - 2
    return f.op("linalg_solve_ex", f.mT(A), _batch_unsqueeze(d, nb) * f.eye_like(A, A.shape[-1]))[0]


def _det_grad_singular(A, g):
    """``g`` times A's cofactor matrix from its SVD: det(A) = det(U) det(Vh) prod(S), so
    d det / dA = det(U) det(Vh) U diag(prod_{j != i} S_j) Vh, which needs no division."""
    U, S, Vh = f.op("linalg_svd", A, full_matrices=True)
    alpha = f.op("linalg_det", U)[0] * f.op("linalg_det", Vh)[0] * g
    return (U * f.as_rows(_prod_of_others(S) * f.as_cols(alpha))) @ Vh


def _prod_of_others(S):
    """Along the last dimension, each entry's product of all the others: the products before
    it times those after it (exclusive cumulative products), so a zero divides nothing."""
    n = S.shape[-1]
    if n == 1:
        return f.new_zeros(tuple(S.shape), f.dtype_of(S), f.is_tensor(S)) + 1
    ones = np.ones(tuple(S.shape[:-1]) + (1,), f.dtype_of(S))
    d = len(S.shape) - 1
    before = f.cumprod(f.cat([ones, f.slice_dim(S, d, 0, n - 1)], d), d)
    after = f.flip(f.cumprod(f.cat([ones, f.flip(f.slice_dim(S, d, 1, n), (d,))], d), d), (d,))
    return before * after


def _slogdet_backward(grads, A, LU, pivots, sign):
    # d log|det A| = tr(A^{-1} dA); the sign is locally constant (no gradient for real A)
    return _batch_unsqueeze(grads[1], len(A.shape) - 2) * f.mT(f.inv(A))


def _solve_vector(A, result):
    return len(result.shape) == len(A.shape) - 1


def _solve_B_backward(grads, A, LU, pivots, left):  # noqa: N802 - PyTorch's names
    # X = A^{-1} B: gB = A^{-T} gX (X = B A^{-1}: gB = gX A^{-T}), a solve with A^T
    return f.op("linalg_solve_ex", f.mT(A), grads[0], left=left)[0]


def _solve_A_backward(grads, A, LU, pivots, left, result):
    gB = _solve_B_backward(grads, A, LU, pivots, left)
    if _solve_vector(A, result):
        return -(f.as_cols(gB) * f.as_rows(result))
    return -(gB @ f.mT(result)) if left else -(f.mT(result) @ gB)


def _cholesky_backward(gL, L, upper):
    # Murray (2016), as PyTorch writes it: gA = L^{-T} Φ(L^T gL) L^{-1}, Φ taking the lower
    # triangle with its diagonal halved and mirroring the strict part (PyTorch's 0.5 (X + ..)).
    if upper:
        L, gL = f.mT(L), f.mT(gL)
    P = f.tril(f.mT(L) @ gL, 0)
    P = (P + f.mT(f.tril(P, -1))) * 0.5
    Linv = f.inv(L)
    return f.mT(Linv) @ P @ Linv


def _qr_backward(grads, Q, R, mode):
    """The gradient of A = QR (Q with orthonormal columns, R upper triangular), after Liao et
    al. (2019): for m >= n, gA = (gQ + Q copyltu(M)) R^{-T}, M = R gR^T - gQ^T Q, where
    copyltu(M) is the symmetric matrix with M's lower triangle. A wide A = [X | Y] (m < n) is
    X = Q R1, Y = Q R2: Y's gradient flows back through Q as gQ += Y gR2^T."""
    gQ, gR = grads
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going "
                           "to differentiate through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    nd = len(R.shape)
    gY = None
    if m < n:
        R2, gR2 = f.slice_dim(R, nd - 1, m, n), f.slice_dim(gR, nd - 1, m, n)
        R, gR = f.slice_dim(R, nd - 1, 0, m), f.slice_dim(gR, nd - 1, 0, m)
        gQ = gQ + (Q @ R2) @ f.mT(gR2)
        gY = Q @ gR2
    M = R @ f.mT(gR) - f.mT(gQ) @ Q
    low = f.tril(M, -1)
    sym = low + f.mT(low) + f.diag_embed(f.diagonal(M, 0, -2, -1))
    gX = (gQ + Q @ sym) @ f.mT(f.inv(R))
    return gX if gY is None else f.cat([gX, gY], nd - 1)


def _eigh_backward(grads, eigenvalues, eigenvectors):
    # gA = V (diag(gL) + skew(V^T gV) / E) V^T, E_ij = L_j - L_i (1 on the diagonal, where the
    # skew part is 0): PyTorch's linalg_eig_backward for Hermitian input.
    gL, gV = grads
    V, L = eigenvectors, eigenvalues
    VtgV = f.mT(V) @ gV
    skew = (VtgV - f.mT(VtgV)) * 0.5
    E = f.as_rows(L) - f.as_cols(L) + f.eye_like(L, L.shape[-1])
    return V @ (skew / E + f.diag_embed(gL)) @ f.mT(V)


def _svd_backward(grads, U, S, Vh, full_matrices, S_sym_argsize_minus_1):  # noqa: N803
    """The gradient of A = U diag(S) Vh (Townsend, 2016, real case):
    gA = U [(F∘(J - Jᵀ)) S + S (F∘(K - Kᵀ)) + diag(gS)] Vh
         + (I - U Uᵀ) gU S⁻¹ Vh + U S⁻¹ gVh (I - Vhᵀ Vh),
    J = Uᵀ gU, K = Vh gVhᵀ, F_ij = 1 / (S_j² - S_i²) off the diagonal, 0 on it. With
    ``full_matrices`` only the first k = min(m, n) singular vectors count, as in PyTorch."""
    gU, gS, gVh = grads
    k = S_sym_argsize_minus_1
    nd = len(U.shape)
    # Only the singular values got a gradient (svdvals, a matrix norm): U diag(gS) Vh, as
    # PyTorch does when gU and gVh are undefined, without the F terms that are 0 * inf = NaN
    # at repeated singular values. Computed zeros (a double backward) take the full formula.
    values_only = f.is_missing(gU) and f.is_missing(gVh)
    if full_matrices:
        U, gU = f.slice_dim(U, nd - 1, 0, k), f.slice_dim(gU, nd - 1, 0, k)
        Vh, gVh = f.slice_dim(Vh, nd - 2, 0, k), f.slice_dim(gVh, nd - 2, 0, k)
    if values_only:
        return U @ (f.as_cols(gS) * Vh)
    eye = f.eye_like(S, k)
    S2 = S * S
    F = (1 / (f.as_rows(S2) - f.as_cols(S2) + eye)) * (1 - eye)  # (a tensor first: create_graph)
    J = f.mT(U) @ gU
    K = Vh @ f.mT(gVh)
    inner = ((J - f.mT(J)) * F) * f.as_rows(S) + f.as_cols(S) * ((K - f.mT(K)) * F) \
        + f.diag_embed(gS)
    gA = U @ inner @ Vh
    # The projections onto what U's (Vh's) k columns (rows) leave out are 0 when they span the
    # whole space (m == k, n == k): skipped there, as PyTorch does, so that a zero singular
    # value (a singular square matrix, e.g. det's cofactors) divides nothing.
    if U.shape[-2] > k:
        gU_s = gU / f.as_rows(S)
        gA = gA + (gU_s - U @ (f.mT(U) @ gU_s)) @ Vh
    if Vh.shape[-1] > k:
        gVh_s = gVh / f.as_cols(S)
        gA = gA + U @ (gVh_s - (gVh_s @ f.mT(Vh)) @ Vh)
    return gA


def _pinv_backward(grad, self, result):
    # dP = -P dA P + P Pᵀ dAᵀ (I - A P) + (I - P A) dAᵀ Pᵀ P (Golub & Pereyra), so
    # gA = -Pᵀ G Pᵀ + (I - A P) Gᵀ P Pᵀ + Pᵀ P Gᵀ (I - P A)
    A, P, G = self, result, grad
    Pt, Gt = f.mT(P), f.mT(G)
    AP, PA = A @ P, P @ A
    return -(Pt @ G @ Pt) + (Gt - AP @ Gt) @ (P @ Pt) + (Pt @ P) @ (Gt - Gt @ PA)


def _trace_backward(grad, self_sym_sizes):
    """The gradient on the main diagonal (a rectangular matrix's too), zeros elsewhere."""
    n, m = self_sym_sizes
    return f.expand(grad, (n, m)) * np.eye(n, m, dtype=f.dtype_of(grad))


def _dist_backward(grad, self, other, p, result, shape, sign=1.0):
    """``dist``'s gradient for one input: the norm's of ``self - other``, summed back to that
    input's ``shape`` here, since the 0-d output cannot tell the dispatch point the shape both
    were broadcast to (a 0-d input against a (2, 3) one)."""
    g = _norm_backward(grad, self - other, result, p, None, False)
    if g is None:
        return None
    return f.sum_to(g if sign == 1.0 else -g, tuple(shape))


def _cdist_weights(x1, x2, p, result):
    """d result_ij / d x1_i: the per-pair vector the gradient scales."""
    diff = f.unsqueeze_dims(x1, (len(x1.shape) - 1,)) - f.unsqueeze_dims(x2, (len(x2.shape) - 2,))
    d = f.unsqueeze_dims(result, (len(result.shape),))
    if p == 0:
        return f.zeros_like(diff)
    if p == 1:
        return f.sign(diff)
    if p == math.inf:
        return f.sign(diff) * (f.abs(diff) == d)
    safe = f.where(d == 0, 1.0, d)
    if p == 2:
        return diff / safe
    return f.sign(diff) * f.abs(diff) ** (p - 1) / safe ** (p - 1)


def _cdist_x1(grad, x1, x2, p, result):
    # the batch dimensions broadcast against x2's are summed back to x1's shape
    w = _cdist_weights(x1, x2, p, result)
    g = f.sum(f.unsqueeze_dims(grad, (len(grad.shape),)) * w, (len(w.shape) - 2,))
    return f.sum_to(g, tuple(x1.shape))


def _cdist_x2(grad, x1, x2, p, result):
    w = _cdist_weights(x1, x2, p, result)
    g = -f.sum(f.unsqueeze_dims(grad, (len(grad.shape),)) * w, (len(w.shape) - 3,))
    return f.sum_to(g, tuple(x2.shape))


def _addbmm_grad(grad, batch1_sym_argsize_0, batch1_sym_argsize_1, batch2_sym_argsize_2):
    """``grad`` repeated for every batch: addbmm sums the batch's products."""
    g = f.unsqueeze_dims(grad, (0,))
    return f.expand(g, (batch1_sym_argsize_0, batch1_sym_argsize_1, batch2_sym_argsize_2))


def _times(g, alpha):
    return g if alpha == 1 else g * alpha


_SQUARE = (Sample(R(3, 3)), Sample(R(2, 4, 4)))
defop("linalg_inv_ex", "LinalgInvExBackward0", K.linalg_inv_ex, ("A",),
      outputs=("inverse", "info"), nondiff_outputs=(1,),
      doc="``(inverse, info)`` of a (batch of) square matrices",
      calls=("`gradviz.linalg.inv`, `gradviz.linalg.inv_ex`, `gradviz.inverse`",
             "`.inverse()`"),
      samples=_SQUARE,
      A=lambda grads, inverse: -(f.mT(inverse) @ grads[0] @ f.mT(inverse)))
defop("linalg_det", "LinalgDetBackward0", K.linalg_det, ("A",),
      outputs=("result", "LU", "pivots"), nondiff_outputs=(1, 2),
      doc="the determinant (LU and pivots kept for backward)",
      calls=("`gradviz.linalg.det`, `gradviz.det`", "`.det()`"),
      samples=_SQUARE,
      A=_det_backward)
defop("linalg_slogdet", "LinalgSlogdetBackward0", K.linalg_slogdet, ("A",),
      outputs=("sign", "logabsdet", "LU", "pivots"), nondiff_outputs=(2, 3),
      doc="``(sign, logabsdet)`` of the determinant",
      calls=("`gradviz.linalg.slogdet`, `gradviz.slogdet`, `gradviz.logdet`",
             "`.slogdet()`, `.logdet()`"),
      samples=_SQUARE,
      A=_slogdet_backward)
defop("linalg_solve_ex", "LinalgSolveExBackward0", K.linalg_solve_ex, ("A", "B"),
      outputs=("result", "LU", "pivots", "info"), nondiff_outputs=(1, 2, 3),
      doc="X with A X = B (X A = B when ``left=False``); B may be a (batch of) vectors",
      calls=("`gradviz.linalg.solve`, `gradviz.linalg.solve_ex`", ""),
      samples=(Sample(R(3, 3), R(3, 2)), Sample(R(3, 3), R(3)), Sample(R(2, 3, 3), R(2, 3, 4)),
               Sample(R(3, 3), R(2, 3), left=False)),
      A=_solve_A_backward, B=_solve_B_backward)
defop("linalg_cholesky_ex", "LinalgCholeskyExBackward0", K.linalg_cholesky_ex, ("self",),
      outputs=("L", "info"), nondiff_outputs=(1,),
      doc="``(L, info)``: L Lᵀ = A for a symmetric positive definite A (its lower triangle read)",
      calls=("`gradviz.linalg.cholesky`, `gradviz.linalg.cholesky_ex`", ""),
      self=lambda grads, L, upper: _cholesky_backward(grads[0], L, upper))
defop("cholesky", "CholeskyBackward0", lambda a, upper=False: K.linalg_cholesky_ex(a, upper)[0],
      ("self",),
      doc="the deprecated torch.cholesky: L (or U with ``upper``)",
      calls=("`gradviz.cholesky`", "`.cholesky()`"),
      self=lambda grad, result, upper: _cholesky_backward(grad, result, upper))
defop("linalg_qr", "LinalgQrBackward0", K.linalg_qr, ("A",),
      outputs=("Q", "R"),
      doc="``(Q, R)``: Q with orthonormal columns, R upper triangular",
      calls=("`gradviz.linalg.qr`", ""),
      samples=(Sample(R(4, 3)), Sample(R(3, 3)), Sample(R(2, 5, 3)), Sample(R(3, 5))),
      A=_qr_backward)
defop("linalg_eigh", "LinalgEighBackward0", K.linalg_eigh, ("A",),
      outputs=("eigenvalues", "eigenvectors"),
      doc="eigenvalues (ascending) and eigenvectors of a symmetric matrix (one triangle read)",
      calls=("`gradviz.linalg.eigh`, `gradviz.linalg.eigvalsh`", ""),
      A=_eigh_backward)
defop("linalg_svd", "LinalgSvdBackward0", K.linalg_svd, ("A",),
      outputs=("U", "S", "Vh"),
      doc="``(U, S, Vh)``, singular values descending",
      calls=("`gradviz.linalg.svd`, `gradviz.linalg.svdvals`, `gradviz.svd`", "`.svd()`"),
      samples=(Sample(R(4, 3), full_matrices=False), Sample(R(3, 4), full_matrices=False),
               Sample(R(3, 3), full_matrices=True), Sample(R(2, 4, 3), full_matrices=False)),
      A=_svd_backward)
defop("linalg_pinv", "LinalgPinvBackward0", K.linalg_pinv, ("self",),
      doc="the Moore-Penrose pseudo-inverse",
      calls=("`gradviz.linalg.pinv`, `gradviz.pinverse`", "`.pinverse()`"),
      samples=(Sample(R(4, 3)), Sample(R(3, 4)), Sample(R(2, 3, 3))),
      self=_pinv_backward)
defop("dist", "DistBackward0", K.dist, ("self", "other"),
      broadcasts=True,
      doc="the p-norm of ``self - other``",
      calls=("`gradviz.dist`", "`.dist()`"),
      samples=(Sample(R(2, 3), R(2, 3)), Sample(R(2, 3), R(3), p=1),
               Sample(R(4), R(4), p=3), Sample(A(3), C([0.1, 0.2, 0.3]), p=math.inf)),
      self=lambda grad, self, other, p, result: _dist_backward(grad, self, other, p, result,
                                                               self.shape),
      other=lambda grad, self, other, p, result: _dist_backward(grad, self, other, p, result,
                                                                other.shape, -1.0))
defop("vdot", "VdotBackward0", K.vdot, ("self", "other"),
      doc="the dot product of two 1-D tensors (conjugating the first: the same for real ones)",
      calls=("`gradviz.vdot`", "`.vdot()`"),
      samples=(Sample(R(4), R(4)),),
      self=lambda grad, other: grad * other,
      other=lambda grad, self: grad * self)
defop("trace", "TraceBackward0", K.trace, ("self",),
      doc="the sum of a matrix's main diagonal",
      calls=("`gradviz.trace(x)`", "`.trace()`"),
      samples=(Sample(R(3, 3)), Sample(R(2, 4)), Sample(R(4, 2))),
      self=_trace_backward)
defop("baddbmm", "BaddbmmBackward0", K.baddbmm, ("self", "batch1", "batch2"),
      broadcasts=("self",),
      doc="beta * self + alpha * batch1 @ batch2, batch by batch",
      calls=("`gradviz.baddbmm`", "`.baddbmm()`, `.baddbmm_()`"),
      samples=(Sample(R(2, 3, 4), R(2, 3, 5), R(2, 5, 4)),
               Sample(R(3, 4), R(2, 3, 5), R(2, 5, 4), beta=0.5, alpha=2.0)),
      self=lambda grad, beta: _times(grad, beta),
      batch1=lambda grad, batch2, alpha: _times(f.bmm(grad, f.mT(batch2)), alpha),
      batch2=lambda grad, batch1, alpha: _times(f.bmm(f.mT(batch1), grad), alpha))
defop("addbmm", "AddbmmBackward0", K.addbmm, ("self", "batch1", "batch2"),
      broadcasts=("self",),
      doc="beta * self + alpha * the sum over the batch of batch1 @ batch2",
      calls=("`gradviz.addbmm`", "`.addbmm()`, `.addbmm_()`"),
      samples=(Sample(R(3, 4), R(2, 3, 5), R(2, 5, 4)),
               Sample(R(4), R(2, 3, 5), R(2, 5, 4), beta=0.5, alpha=2.0)),
      self=lambda grad, beta: _times(grad, beta),
      batch1=lambda grad, batch2, batch1_sym_argsize_0, batch1_sym_argsize_1,
      batch2_sym_argsize_2, alpha: _times(f.bmm(_addbmm_grad(
          grad, batch1_sym_argsize_0, batch1_sym_argsize_1, batch2_sym_argsize_2),
          f.mT(batch2)), alpha),
      batch2=lambda grad, batch1, batch1_sym_argsize_0, batch1_sym_argsize_1,
      batch2_sym_argsize_2, alpha: _times(f.bmm(f.mT(batch1), _addbmm_grad(
          grad, batch1_sym_argsize_0, batch1_sym_argsize_1, batch2_sym_argsize_2)), alpha))
defop("cdist", "CdistBackward0", K.cdist, ("x1", "x2"),
      doc="the p-norm distance between each row of x1 and each row of x2",
      calls=("`gradviz.cdist`", ""),
      samples=(Sample(R(3, 4), R(2, 4)), Sample(R(2, 3, 4), R(2, 5, 4), p=1.0),
               Sample(R(3, 2), R(4, 2), p=3.0)),
      x1=_cdist_x1, x2=_cdist_x2)
defop("_euclidean_dist", "EuclideanDistBackward0", K.euclidean_dist, ("x1", "x2"),
      doc="cdist with p=2 when either input has more than 25 rows (PyTorch's mm path)",
      calls=("`gradviz.cdist`", ""),
      samples=(Sample(R(30, 2), R(3, 2)),),
      x1=lambda grad, x1, x2, result: _cdist_x1(grad, x1, x2, 2.0, result),
      x2=lambda grad, x1, x2, result: _cdist_x2(grad, x1, x2, 2.0, result))


# ===============================================================================================
# Indexing and selection
# ===============================================================================================


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


def _masked_fill_self(grad, mask, self_sym_sizes):
    """The gradient past the filled positions, summed back to ``self``'s shape: a larger mask
    broadcasts ``self``, and the mask is an argument, so the dispatch point never undoes it
    (PyTorch's engine does, in ``validate_outputs``; gradviz's leaves it to the rows)."""
    return f.sum_to(f.masked_fill(grad, mask, 0.0), tuple(self_sym_sizes))


# The condition is an argument, not an input: it has no derivative, so no edge (as PyTorch).
defop("where", "WhereBackward0", K.where, ("self", "other"),
      broadcasts=True,
      calls=("`gradviz.where`", ""),
      self=lambda grad, condition: f.where(condition, grad, 0.0),
      other=lambda grad, condition: f.where(condition, 0.0, grad))
defop("index", "IndexBackward0", K.index, ("self",),
      doc="x[tensor], x[list], x[mask]: advanced indexing (indices: one per leading dim)",
      calls=("`x[tensor]`, `x[list]`, `x[mask]`", ""),
      self=lambda grad, indices, self_sym_sizes: f.index_zeros(grad, self_sym_sizes, indices))
defop("index_put", "IndexPutBackward0", K.index_put, ("self", "values"),
      broadcasts=("values",),
      doc="x[tensor] = v (in place for __setitem__)",
      calls=("`gradviz.index_put`, `x[tensor] = v`", "`.index_put()`, `.index_put_()`"),
      self=lambda grad, indices, accumulate: grad if accumulate else f.index_put(
          grad, indices, np.zeros((), f.dtype_of(grad)), False),
      values=lambda grad, indices: f.index(grad, indices))
defop("_index_put_impl", "IndexPutImplBackward0", K.index_put, ("self", "values"),
      broadcasts=("values",),
      doc="index's backward, recorded under create_graph",
      calls=("index's backward under `create_graph=True`", ""),
      self=lambda grad, indices, accumulate: grad if accumulate else f.index_put(
          grad, indices, np.zeros((), f.dtype_of(grad)), False),
      values=lambda grad, indices: f.index(grad, indices))
defop("index_select", "IndexSelectBackward0", K.index_select, ("self",),
      calls=("`gradviz.index_select`", "`.index_select()`"),
      self=lambda grad, self_sym_sizes, dim, index: f.index_zeros(
          grad, self_sym_sizes, (None,) * dim + (index,)) if len(self_sym_sizes) else grad)
defop("gather", "GatherBackward0", K.gather, ("self",),
      calls=("`gradviz.gather`", "`.gather()`"),
      self=lambda grad, self, dim, index, sparse_grad: f.scatter_add(
          f.zeros_like(self), dim, index, grad))
defop("scatter", "ScatterBackward0", K.scatter, ("self", "src"),
      calls=("`gradviz.scatter`", "`.scatter()`, `.scatter_()`"),
      self=lambda grad, dim, index: f.scatter_zeros(grad, dim, index),
      src=lambda grad, dim, index: f.gather(grad, dim, index))
defop("scatter_value", "ScatterBackward1", K.scatter_value, ("self",),
      calls=("`gradviz.scatter(x, dim, index, 2.0)`", "`.scatter()`, `.scatter_()`"),
      self=lambda grad, dim, index: f.scatter_zeros(grad, dim, index))
defop("scatter_add", "ScatterAddBackward0", K.scatter_add, ("self", "src"),
      calls=("`gradviz.scatter_add`", "`.scatter_add()`, `.scatter_add_()`"),
      self=lambda grad, dim, index: grad,
      src=lambda grad, dim, index: f.gather(grad, dim, index))
defop("masked_fill", "MaskedFillBackward0", K.masked_fill, ("self",),
      hidden=("self_sym_sizes",),  # torch's engine sums back to it (validate_outputs)
      calls=("`gradviz.masked_fill`", "`.masked_fill()`, `.masked_fill_()`"),
      self=lambda grad, mask, self_sym_sizes: _masked_fill_self(grad, mask, self_sym_sizes))
defop("masked_fill_tensor", "MaskedFillBackward1", K.masked_fill_tensor, ("self", "value"),
      hidden=("self_sym_sizes",),  # torch's engine sums back to it (validate_outputs)
      doc="masked_fill with a 0-d tensor value",
      calls=("`gradviz.masked_fill(x, mask, tensor)`", "`.masked_fill()`, `.masked_fill_()`"),
      self=lambda grad, mask, self_sym_sizes: _masked_fill_self(grad, mask, self_sym_sizes),
      value=lambda grad, mask: f.sum(f.where(mask, grad, 0.0), tuple(range(len(grad.shape)))))
defop("embedding", "EmbeddingBackward0", K.embedding, ("weight",),
      doc="rows of weight; padding_idx rows get no gradient",
      calls=("`F.embedding`", ""),
      weight=_embedding_backward)


# -- more ops (opsselect)
def _masked_select_backward(grad, self, mask):
    """Zeros of the broadcast shape with ``grad`` put where the mask holds, summed back to
    ``self``'s shape (PyTorch writes it with masked_scatter)."""
    m = np.asarray(f.data(mask))
    shape = tuple(np.broadcast_shapes(tuple(self.shape), m.shape))
    if not shape:  # 0-d self and mask: their one element, selected or not
        return f.index_zeros(grad, (1,), (m.reshape(1),)).reshape(())
    full = f.index_zeros(grad, shape, (np.broadcast_to(m, shape),))
    return f.sum_to(full, tuple(self.shape))


def _take_backward(grad, self, index):
    """Zeros of the flattened ``self`` with ``grad`` added at ``index`` (repeats add up)."""
    n = int(np.prod(self.shape, dtype=np.int64))
    idx = np.asarray(f.data(index)).reshape(-1)
    return f.index_zeros(grad.reshape((-1,)), (n,), (idx,)).reshape(tuple(self.shape))


# A fixed mask for the samples: a random one may select nothing.
_MASK = Tensor._make(np.array([[True, False, True, True], [False, False, True, False],
                               [True, True, False, True]]))
defop("masked_select", "MaskedSelectBackward0", K.masked_select, ("self",),
      doc="the elements where the (broadcast) bool mask holds, as a 1-D tensor",
      calls=("`gradviz.masked_select`", "`.masked_select()`"),
      samples=(Sample(R(3, 4), mask=_MASK), Sample(R(4), mask=_MASK),
               Sample(R(3, 1), mask=_MASK)),
      self=_masked_select_backward)
defop("take", "TakeBackward0", K.take, ("self",),
      doc="elements of the flattened tensor at ``index``, in ``index``'s shape",
      calls=("`gradviz.take`", "`.take()`"),
      samples=(Sample(R(3, 4), index=Tensor._make(np.array([[0, 5], [11, -1]]))),
               Sample(R(5), index=Tensor._make(np.array([1, 1, 3])))),
      self=_take_backward)
defop("nonzero", None, K.nonzero, ("self",),
      doc="the indices of the non-zero elements, one row each (not differentiable)",
      calls=("`gradviz.nonzero`, `gradviz.argwhere`", "`.nonzero()`, `.argwhere()`"))



# -- more (opsmore)
def _index_select(grad, dim, index):
    """``grad.index_select(dim, index)`` (differentiable under create_graph)."""
    if not len(grad.shape):
        return grad
    idx = np.asarray(f.data(index)).reshape(-1)
    return f.index(grad, (None,) * dim + (idx,))


def _unique_index(grad, dim, index):
    """``index`` without repeats (negative entries counted from the end): ``index_fill``
    writes its value once per position, however often the index names it."""
    n = grad.shape[dim] if len(grad.shape) else 1
    return np.unique(np.asarray(f.data(index)).reshape(-1) % n)


def _index_fill_zeros(grad, dim, index):
    """``grad.index_fill(dim, index, 0)``: what the overwritten positions give back."""
    return f.op("index_fill", grad, dim=dim, index=index, value=0.0)


def _as_source(g, source, source_dim):
    """The selected slices in ``source``'s shape (PyTorch's ``expand_as(source)``; a 0-d
    source was one slice, and gets it back 0-d)."""
    return g.reshape(()) if source_dim == 0 else f.expand(g, tuple(source.shape))


def _scatter_mask(shape, dim, index):
    """Where scatter_reduce sends something (a constant bool array)."""
    return K._scatter_count(tuple(shape), dim, np.asarray(f.data(index))) > 0


def _scatter_reduce_grads(grad, self, src, dim, index, reduce, include_self, result):
    """PyTorch's ``scatter_reduce_backward``: both inputs' gradients at once."""
    idx = np.asarray(f.data(index))
    shape = tuple(self.shape)
    hit = _scatter_mask(shape, dim, idx)
    dt = f.dtype_of(grad)
    gi = Tensor._make(idx) if f.is_tensor(grad) else idx  # (gather takes a tensor index)
    if reduce == "sum":
        g_self, g_src = grad, f.gather(grad, dim, gi)
    elif reduce == "mean":
        n = K._scatter_count(shape, dim, idx) + (1 if include_self else 0)
        g_self = grad / np.maximum(n, 1).astype(dt)
        g_src = f.gather(g_self, dim, gi)
    elif reduce == "prod":
        g_self, g_src = _scatter_prod_grads(grad, self, src, dim, idx, gi, include_self, result)
    else:  # amax, amin: the gradient is shared evenly among the elements equal to the result
        value = np.asarray(f.data(K.gather(np.asarray(f.data(result)), dim, idx)))
        self_wins = (np.asarray(f.data(self)) == np.asarray(f.data(result)))
        src_part = np.asarray(f.data(src))[tuple(slice(0, k) for k in idx.shape)]
        src_wins = src_part == value
        # PyTorch counts self's ties also with include_self=False (its formula does)
        n = K.scatter_add(self_wins.astype(np.int64), src_wins.astype(np.int64), dim, idx)
        shared = grad / np.maximum(n, 1).astype(dt)
        g_self = shared * self_wins.astype(dt)
        g_src = f.gather(shared, dim, gi) * src_wins.astype(dt)
    if not include_self:  # what arrives replaces self's own value there
        g_self = f.where(hit, 0.0, g_self)
    g_src = _pad_to(g_src, tuple(src.shape))
    return g_self, g_src


def _scatter_prod_grads(grad, self, src, dim, idx, gi, include_self, result):
    """Each factor's gradient is the product of the others, also where some are 0 (PyTorch's
    rule): ``self``'s is the product reduced into its place with ``self`` taken as 1; a
    ``src`` element that is the only zero sent to its place gets the product of the others
    (``src`` there taken as 1); any other element ``result / x``, with zeros taken as 1."""
    def reduced(into, values):
        return f.op("scatter_reduce", into, values, dim=dim, index=gi, reduce="prod",
                    include_self=include_self)

    masked_self = f.where(self == 0, 1.0, self)
    g_self = grad * reduced(masked_self, src) / masked_self
    part = _src_part(src, idx.shape)
    zero = np.asarray(f.data(part)) == 0
    zeros_there = K.gather(K.scatter_add(np.zeros(tuple(self.shape)), zero.astype(np.float64),
                                         dim, idx), dim, idx)
    single = zero & (zeros_there == 1)
    if not single.any():
        return g_self, f.gather(grad * result, dim, gi) / f.where(zero, 1.0, part)
    single_full = np.zeros(tuple(src.shape), bool)
    single_full[tuple(slice(0, k) for k in idx.shape)] = single
    with_one = reduced(self, f.where(single_full, 1.0, src))
    g_src = f.where(single, f.gather(grad * with_one, dim, gi),
                    f.gather(grad * result, dim, gi) / f.where(zero, 1.0, part))
    return g_self, g_src


def _src_part(src, shape):
    """``src[:shape[0], :shape[1], ...]``: the part of ``src`` that ``index`` reaches."""
    for d, k in enumerate(shape):
        if src.shape[d] != k:
            src = f.slice_dim(src, d, 0, k)
    return src


def _pad_to(g, shape):
    """A gradient of ``src[:index.shape]`` put back in ``src``'s shape (zeros elsewhere)."""
    if tuple(g.shape) == shape:
        return g
    z = f.new_zeros(shape, f.dtype_of(g), f.is_tensor(g))
    idx = tuple(np.arange(k).reshape((-1,) + (1,) * (len(g.shape) - d - 1))
                for d, k in enumerate(g.shape))
    return f.index_put(z, idx, g, True)


def _put_self_backward(grad, index, source, accumulate):
    if accumulate:
        return grad
    return f.op("put", grad, np.zeros(tuple(source.shape), f.dtype_of(grad)), index=index,
                accumulate=False)


defop("index_add", "IndexAddBackward0", K.index_add, ("self", "source"),
      doc="``input`` with ``alpha * source`` added at ``index`` along ``dim`` (repeats add up)",
      calls=("`gradviz.index_add`", "`.index_add()`, `.index_add_()`"),
      samples=(Sample(R(3, 4), R(2, 4), dim=0, index=Tensor._make(np.array([0, 2])),
                      source_dim=2),
               Sample(R(3, 4), R(3, 3), dim=1, index=Tensor._make(np.array([1, 1, 3])),
                      alpha=2.0, source_dim=2)),
      self=lambda grad: grad,
      source=lambda grad, dim, index, source, source_dim, alpha: _as_source(
          _index_select(grad, dim, index) * alpha if alpha != 1
          else _index_select(grad, dim, index), source, source_dim))
defop("index_copy", "IndexCopyBackward0", K.index_copy, ("self", "source"),
      doc="``input`` with the slices of ``source`` copied to ``index`` along ``dim``",
      calls=("`gradviz.index_copy`", "`.index_copy()`, `.index_copy_()`"),
      samples=(Sample(R(3, 4), R(2, 4), dim=0, index=Tensor._make(np.array([2, 0])),
                      source_dim=2),
               Sample(R(2, 5), R(2, 2), dim=1, index=Tensor._make(np.array([4, 1])),
                      source_dim=2)),
      self=lambda grad, dim, index: _index_fill_zeros(grad, dim, index),
      source=lambda grad, dim, index, source, source_dim: _as_source(
          _index_select(grad, dim, index), source, source_dim))
defop("index_fill", "IndexFillBackward0", K.index_fill, ("self",),
      doc="``input`` with ``value`` (a number) written at ``index`` along ``dim``",
      calls=("`gradviz.index_fill`", "`.index_fill()`, `.index_fill_()`"),
      samples=(Sample(R(3, 4), dim=1, index=Tensor._make(np.array([0, 2])), value=-1.0),),
      self=lambda grad, dim, index: _index_fill_zeros(grad, dim, index))
defop("index_fill_tensor", "IndexFillBackward1", K.index_fill_tensor, ("self", "value"),
      doc="``index_fill`` with a 0-d tensor ``value``",
      calls=("`gradviz.index_fill(x, dim, index, tensor)`", "`.index_fill()`, `.index_fill_()`"),
      samples=(Sample(R(3, 4), W(0.5), dim=0, index=Tensor._make(np.array([1]))),),
      self=lambda grad, dim, index: _index_fill_zeros(grad, dim, index),
      value=lambda grad, dim, index: f.sum(_index_select(grad, dim, _unique_index(grad, dim,
                                                                                   index)),
                                           tuple(range(len(grad.shape)))))
defop("scatter_reduce", "ScatterReduceBackward0", K.scatter_reduce, ("self", "src"),
      doc="``src`` reduced into ``input`` at ``index`` along ``dim``: sum, prod, mean, amax or "
          "amin, with or without ``input``'s own values (``include_self``)",
      calls=("`gradviz.scatter_reduce`", "`.scatter_reduce()`, `.scatter_reduce_()`"),
      samples=tuple(Sample(R(3, 4), P(3, 2) if r == "prod" else R(3, 2), dim=1,
                           index=Tensor._make(np.array([[0, 0], [1, 3], [3, 3]])), reduce=r,
                           include_self=inc)
                    for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False))
      # prod with zero factors, one per place (PyTorch has no second derivative for more)
      + (Sample(W([[1.0, 0.0, 3.0, 2.0]]), W([[5.0, 0.5, 0.0, 4.0]]), dim=1,
                index=Tensor._make(np.array([[0, 0, 1, 3]])), reduce="prod", include_self=True),),
      self=lambda grad, self, src, dim, index, reduce, include_self, result:
          _scatter_reduce_grads(grad, self, src, dim, index, reduce, include_self, result)[0],
      src=lambda grad, self, src, dim, index, reduce, include_self, result:
          _scatter_reduce_grads(grad, self, src, dim, index, reduce, include_self, result)[1])
defop("put", "PutBackward0", K.put, ("self", "source"),
      doc="``source`` written (or with ``accumulate``, added) at ``index`` of the flattened "
          "``input``",
      calls=("`gradviz.put`", "`.put()`, `.put_()`"),
      samples=(Sample(R(3, 4), R(2), index=Tensor._make(np.array([1, -1])), accumulate=False),
               Sample(R(3, 4), R(2, 2), index=Tensor._make(np.array([[0, 5], [5, 7]])),
                      accumulate=True)),
      self=_put_self_backward,
      source=lambda grad, index, source: f.op("take", grad, index=index).reshape(
          tuple(source.shape)))


def _no_derivative(aten: str):
    """The formula of a node PyTorch records but has no derivative for (``Unique2Backward0``):
    its backward fails with PyTorch's text."""
    def formula(grads):
        raise NotImplementedError(f"the derivative for '{aten}' is not implemented.")
    formula.not_implemented = True  # (the generic gradcheck suite has nothing to check)
    return formula


defop("unique", "Unique2Backward0", K.unique, ("self",),
      outputs=("output", "inverse", "counts"), nondiff_outputs=(1, 2),
      doc="the sorted distinct values (with ``return_inverse``/``return_counts``); recorded "
          "but not differentiable, as in PyTorch",
      calls=("`gradviz.unique`", "`.unique()`"),
      self=_no_derivative("_unique2"))
defop("unique_dim", "UniqueDimBackward0", K.unique, ("self",),
      outputs=("output", "inverse", "counts"), nondiff_outputs=(1, 2),
      doc="``unique(dim=d)``: the distinct slices along ``d`` (not differentiable)",
      calls=("`gradviz.unique(x, dim=0)`", "`.unique(dim=0)`"),
      self=_no_derivative("unique_dim"))
defop("unique_consecutive", "UniqueConsecutiveBackward0", K.unique_consecutive, ("self",),
      outputs=("output", "inverse", "counts"), nondiff_outputs=(1, 2),
      doc="each run of equal elements (or slices along ``dim``) once; recorded but not "
          "differentiable, as in PyTorch",
      calls=("`gradviz.unique_consecutive`", "`.unique_consecutive()`"),
      self=_no_derivative("unique_consecutive"))
defop("searchsorted", None, K.searchsorted, ("sorted_sequence",),
      doc="where each value would go in the sorted last dimension (int64 indices)",
      calls=("`gradviz.searchsorted`", ""))
defop("bucketize", None, K.bucketize, ("self",),
      doc="the bucket of each element among sorted 1-D ``boundaries``",
      calls=("`gradviz.bucketize`", ""))

# ===============================================================================================
# In-place-only nodes
# ===============================================================================================


defop("zero_", "ZeroBackward0", K.zero, ("self",),
      calls=("", "`.zero_()`"),
      self=lambda grad: f.zeros_like(grad))
defop("fill_", "FillBackward2", K.fill, ("self",),
      calls=("", "`.fill_()`"),
      self=lambda grad: f.zeros_like(grad))
defop("fill_tensor_", "FillBackward3", K.fill_tensor, ("self", "value"),
      doc="fill_ with a 0-d tensor (what x[i] = number records inside CopySlices)",
      calls=("`x[i] = 2.0`, `x[...] = tensor(2.0)`", ""),
      self=lambda grad: f.zeros_like(grad),
      value=lambda grad: f.sum(grad, tuple(range(len(grad.shape)))))
defop("copy_", "CopyBackwards", K.copy, ("self", "src"),
      calls=("`x[...] = y`", "`.copy_()`"),
      self=lambda grad: f.zeros_like(grad),
      src=lambda grad, src_sym_sizes: f.sum_to(grad, src_sym_sizes))
# -- more (opsrand): the random in-place fills (NOTE [random rows] in gradviz/ops/opinfo.py);
# their gradient is zero, as fill_'s. (Their cases: tests/test_ops_gradcheck.py.)
defop("bernoulli_", "BernoulliBackward2", K.bernoulli_p, ("self",),
      random=True, calls=("", "`.bernoulli_(0.3)`"),
      self=lambda grad: f.zeros_like(grad))
defop("bernoulli_tensor_", "BernoulliBackward1", K.bernoulli_tensor_, ("self", "p"),
      random=True, calls=("", "`.bernoulli_(p)` with a tensor `p`"),
      hidden=("p_sym_sizes",),  # torch keeps p's type and size (`p_info`), not as `_saved_`
      self=lambda grad: f.zeros_like(grad),
      p=lambda grad, p_sym_sizes: _zeros_sized(grad, p_sym_sizes))
# The in-place random fills: the result does not depend on the input, so no gradient flows.
# random_'s three overloads are three nodes: (from, to), (to), ().
for _name, _node, _fill, _call in (
        ("exponential_", "ExponentialBackward0", K.exponential, "`.exponential_()`"),
        ("geometric_", "GeometricBackward0", K.geometric, "`.geometric_(p)`"),
        ("cauchy_", "CauchyBackward0", K.cauchy, "`.cauchy_()`"),
        ("log_normal_", "LogNormalBackward0", K.log_normal, "`.log_normal_()`"),
        ("uniform_", "UniformBackward0", K.uniform, "`.uniform_()`"),
        ("normal_", "NormalBackward0", K.normal_fill, "`.normal_()`"),
        ("random_from_", "RandomBackward0", K.random_fill, "`.random_(2, 5)`"),
        ("random_to_", "RandomBackward1", K.random_fill, "`.random_(5)`"),
        ("random_", "RandomBackward2", K.random_fill, "`.random_()`")):
    defop(_name, _node, _fill, ("self",),
          random=True, calls=("", _call),
          self=lambda grad: f.zeros_like(grad))


# ===============================================================================================
# Losses and normalization
# ===============================================================================================


_ANY = np.logical_or.reduce  # ndarray.any without its Python wrapper (~1 us a training step)


def _nll_backward(grads, self, target, weight, reduction, ignore_index, total_weight):
    g = grads[0]
    shape = self.shape
    t = np.asarray(f.data(target))
    if weight is None and reduction and type(g) is np.ndarray and not _ANY(t == ignore_index,
                                                                             None):
        # NOTE [perf]: the usual call (unit weights, a reduction, nothing ignored): every
        # picked entry gets one value, -g (divided by the count for the mean); the numbers are
        # those of the weighted formula below (1 / total_weight in the gradient's dtype)
        one = g.dtype.type(1)
        w = one / np.asarray(f.data(total_weight), g.dtype) if reduction == 1 else one
        out = np.zeros(shape, g.dtype)  # f.at_targets for arrays, in line
        if len(shape) == 1:
            out[t] = g * (-w)
        else:
            out[np.arange(shape[0]), t] = g * (-w)
        return out
    safe, w = K.nll_weights(t, weight, shape[-1], ignore_index, f.dtype_of(g))
    if reduction == 1:
        w = w / np.asarray(f.data(total_weight), w.dtype)
    per_row = g * (-w)  # 0-d gradient for mean/sum, one per row for reduction='none'
    return f.at_targets(shape, safe, per_row)


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


defop("nll_loss", "NllLossBackward0", K.nll_loss, ("self",),
      outputs=("output", "total_weight"), nondiff_outputs=(1,),
      doc="reduction is 0 (none), 1 (mean) or 2 (sum), as PyTorch saves it",
      calls=("`F.nll_loss`, `F.cross_entropy`", ""),
      self=_nll_backward)
defop("mse_loss", "MseLossBackward0", K.mse_loss, ("self", "target"),
      quiet=True,
      calls=("`F.mse_loss`", ""),
      self=lambda grad, self, target, reduction: _loss_scale(grad, self, reduction) * 2
      * (self - target),
      target=lambda grad, self, target, reduction: _loss_scale(grad, self, reduction) * -2
      * (self - target))
defop("binary_cross_entropy", "BinaryCrossEntropyBackward0", K.binary_cross_entropy,
      ("self", "target"),
      calls=("`F.binary_cross_entropy`", ""),
      self=_bce_self,
      target=_bce_target)
defop("binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0",
      K.binary_cross_entropy_with_logits, ("self", "target"),
      calls=("`F.binary_cross_entropy_with_logits`", ""),
      self=_bce_logits_self,
      target=_bce_logits_target)
defop("layer_norm", "NativeLayerNormBackward0", K.layer_norm, ("input", "weight", "bias"),
      outputs=("result0", "result1", "result2"), nondiff_outputs=(1, 2), hidden=("eps",),
      doc="outputs (y, mean, rstd); eps is kept for create_graph but not shown, as in PyTorch",
      calls=("`F.layer_norm`", ""),
      input=lambda grads, input, normalized_shape, result1, result2, weight, bias, eps:
      _layer_norm_backward("input", grads, input, normalized_shape, result1, result2, weight,
                           bias, eps),
      weight=lambda grads, input, normalized_shape, result1, result2, weight, bias, eps:
      _layer_norm_backward("weight", grads, input, normalized_shape, result1, result2, weight,
                           bias, eps),
      bias=lambda grads, input, normalized_shape, result1, result2, weight, bias, eps:
      _layer_norm_backward("bias", grads, input, normalized_shape, result1, result2, weight,
                           bias, eps))


# -- more (nnact)
# smooth_l1_loss, huber_loss, soft_margin_loss: their own nodes. kl_div, cosine_similarity,
# normalize, margin_ranking_loss are composites of existing rows (gradviz/nn/functional.py).
def _smooth_l1_grad(grad, self, target, reduction, beta):
    d = self - target
    return _loss_scale(grad, self, reduction) * f.where(f.abs(d) < beta, d * (1 / beta),
                                                        f.sign(d))


def _huber_grad(grad, self, target, reduction, delta):
    d = self - target
    return _loss_scale(grad, self, reduction) * f.where(f.abs(d) < delta, d,
                                                        f.sign(d) * delta)


def _soft_margin_grad(grad, self, target, reduction):
    # d/dx log(1 + exp(-y x)) = -y * sigmoid(-y x); PyTorch has no formula for the target
    return _loss_scale(grad, self, reduction) * -target * f.sigmoid(-(target * self))



_SIGNS = Tensor._make(np.array([[1.0, -1.0, -1.0, 1.0], [-1.0, 1.0, 1.0, 1.0],
                                 [1.0, -1.0, 1.0, -1.0]]))

defop("smooth_l1_loss", "SmoothL1LossBackward0", K.smooth_l1_loss, ("self", "target"),
      calls=("`F.smooth_l1_loss` (beta > 0), `nn.SmoothL1Loss`", ""),
      samples=(Sample(R(3, 4), R(3, 4)), Sample(R(3, 4), R(3, 4), reduction=2, beta=0.3),
               Sample(R(2, 3), R(2, 3), reduction=0, beta=2.0)),
      self=lambda grad, self, target, reduction, beta: _smooth_l1_grad(grad, self, target,
                                                                        reduction, beta),
      target=lambda grad, self, target, reduction, beta: -_smooth_l1_grad(grad, self, target,
                                                                         reduction, beta))
defop("huber_loss", "HuberLossBackward0", K.huber_loss, ("self", "target"),
      calls=("`F.huber_loss`, `nn.HuberLoss`", ""),
      samples=(Sample(R(3, 4), R(3, 4)), Sample(R(3, 4), R(3, 4), reduction=2, delta=0.3),
               Sample(R(2, 3), R(2, 3), reduction=0, delta=2.0)),
      self=lambda grad, self, target, reduction, delta: _huber_grad(grad, self, target,
                                                                     reduction, delta),
      target=lambda grad, self, target, reduction, delta: -_huber_grad(grad, self, target,
                                                                      reduction, delta))
# The target is an argument, not an input: PyTorch has no formula for it, so no edge.
defop("soft_margin_loss", "SoftMarginLossBackward0", K.soft_margin_loss, ("self",),
      calls=("`F.soft_margin_loss`, `nn.SoftMarginLoss`", ""),
      samples=(Sample(R(3, 4), target=_SIGNS), Sample(R(3, 4), target=_SIGNS, reduction=0)),
      self=_soft_margin_grad)
# The two C++ calls of the composite losses that no other row records: at::norm(x, p, dim)
# (pairwise_distance) and tensor - Scalar (cosine_embedding_loss).
defop("norm_dim", "NormBackward1", K.norm_dim, ("self",),
      quiet=True,
      doc="at::norm(self, p, dim, keepdim), as F.pairwise_distance calls it",
      calls=("`F.pairwise_distance`, `nn.PairwiseDistance`", ""),
      samples=(Sample(A(3, 4), p=2.0, dim=(1,), keepdim=False),
               Sample(A(3, 4), p=1.0, dim=(0,), keepdim=True),
               Sample(A(2, 3), p=3.0, dim=(1,), keepdim=False)),
      self=lambda grad, self, result, p, dim, keepdim: _norm_backward(grad, self, result, p,
                                                                      dim, keepdim))
defop("sub_scalar", "SubBackward1", K.sub_scalar, ("self",),
      promotes=True,
      doc="tensor - Scalar inside PyTorch's C++ decompositions (cosine_embedding_loss)",
      calls=("inside `F.cosine_embedding_loss`", ""),
      samples=(Sample(R(2, 3), other=0.5),),
      self=lambda grad: grad)


# -- more (nnmore)
# native_group_norm: its own node (NativeGroupNormBackward0, which shows eps). instance_norm is
# batch_norm over a (1, N * C, ...) view and rms_norm a composite of existing rows
# (gradviz/nn/functional.py).
def _group_norm_backward(which, grads, input, weight, result1, result2, N, C, HxW, group, eps):
    g = grads[0]
    nd = len(input.shape)
    reduce_dims = (0,) + tuple(range(2, nd))
    per_group = C // group * HxW  # spelled out, not -1: an empty batch has N = 0
    xg = input.reshape((N, group, per_group))
    mean, rstd = f.layer_norm_stats(xg, (2,), eps, result1.reshape((N, group, 1)),
                                    result2.reshape((N, group, 1)))
    xhat = (xg - mean) * rstd
    if which == "bias":
        return f.sum(g, reduce_dims)
    if which == "weight":
        return f.sum(g * xhat.reshape(tuple(input.shape)), reduce_dims)
    gw = g if weight is None else g * weight.reshape((1, C) + (1,) * (nd - 2))
    gw = gw.reshape((N, group, per_group))
    gx = rstd * (gw - f.mean(gw, (2,)) - xhat * f.mean(gw * xhat, (2,)))
    return gx.reshape(tuple(input.shape))


defop("native_group_norm", "NativeGroupNormBackward0", K.native_group_norm,
      ("input", "weight", "bias"),
      outputs=("result0", "result1", "result2"), nondiff_outputs=(1, 2),
      doc="outputs (y, mean, rstd), the statistics of shape (N, group)",
      calls=("`F.group_norm`, `nn.GroupNorm`", ""),
      samples=(Sample(R(2, 4, 3), R(4), R(4), N=2, C=4, HxW=3, group=2, eps=1e-5),
               Sample(R(3, 6, 2, 2), None, None, N=3, C=6, HxW=4, group=3, eps=1e-3),
               Sample(R(2, 3, 4), R(3), None, N=2, C=3, HxW=4, group=1, eps=1e-5)),
      input=lambda grads, input, weight, result1, result2, N, C, HxW, group, eps:
      _group_norm_backward("input", grads, input, weight, result1, result2, N, C, HxW, group,
                           eps),
      weight=lambda grads, input, weight, result1, result2, N, C, HxW, group, eps:
      _group_norm_backward("weight", grads, input, weight, result1, result2, N, C, HxW, group,
                           eps),
      bias=lambda grads, input, weight, result1, result2, N, C, HxW, group, eps:
      _group_norm_backward("bias", grads, input, weight, result1, result2, N, C, HxW, group,
                           eps))


# ===============================================================================================
# Convolution, pooling and batch normalization
# ===============================================================================================


def _conv_input_grad(grad, input, weight, bias_sym_sizes_opt, stride, padding, dilation,
                     transposed, output_padding, groups):
    nd = len(input.shape) - 2
    if transposed:  # the adjoint of a transposed convolution is the plain one
        gx = f.op("convolution", grad, weight, None, stride=stride, padding=padding,
                  dilation=dilation, transposed=False, output_padding=(0,) * nd, groups=groups)
        # An output_padding >= stride (allowed when dilation > stride) adds output rows that no
        # input row reaches; read back, they are positions past the input's end: crop them.
        for i, n in enumerate(input.shape[2:]):
            if gx.shape[2 + i] != n:
                gx = f.slice_dim(gx, 2 + i, 0, n)
        return gx
    st, pad, dil = (K._per_dim(v, nd) for v in (stride, padding, dilation))
    # The stride may skip the input's last rows: output_padding gives them back (as zeros).
    extra = tuple(n + 2 * p - d * (k - 1) - 1 - (o - 1) * s for n, o, k, s, p, d in zip(
        input.shape[2:], grad.shape[2:], weight.shape[2:], st, pad, dil))
    return f.op("convolution", grad, weight, None, stride=st, padding=pad, dilation=dil,
                transposed=True, output_padding=extra, groups=groups)


def _correlate_for_weight(x, gy, kernel, stride, padding, dilation, groups):
    """The weight's gradient: sum over the batch and the output positions of ``x``'s windows
    times ``gy``. On arrays (a plain backward) one matmul with ``x``'s im2col matrix
    (:func:`K.convolution_weight`). On tensors (create_graph) it must be recorded, so it is
    written as a convolution: the batch becomes the channels (grouped as ``groups``), ``gy``
    the kernel, stride and dilation swap roles; the result is cropped to the kernel's size."""
    if not isinstance(x, Tensor) and not isinstance(gy, Tensor):
        return K.convolution_weight(x, gy, kernel, stride, padding, dilation, groups)
    nd = len(kernel)
    n, g = x.shape[0], groups
    cg, og = x.shape[1] // g, gy.shape[1] // g
    sp = tuple(range(3, 3 + nd))
    xr = f.permute(x.reshape((n, g, cg) + tuple(x.shape[2:])), (2, 1, 0) + sp).reshape(
        (cg, g * n) + tuple(x.shape[2:]))
    gr = f.permute(gy.reshape((n, g, og) + tuple(gy.shape[2:])), (1, 2, 0) + sp).reshape(
        (g * og, n) + tuple(gy.shape[2:]))
    r = f.op("convolution", xr, gr, None, stride=dilation, padding=padding, dilation=stride,
             transposed=False, output_padding=(0,) * nd, groups=g)
    for i, k in enumerate(kernel):
        if r.shape[2 + i] != k:
            r = f.slice_dim(r, 2 + i, 0, k)
    return f.transpose(r, 0, 1)


def _conv_weight_grad(grad, input, weight, bias_sym_sizes_opt, stride, padding, dilation,
                      transposed, output_padding, groups):
    nd = len(input.shape) - 2
    st, pad, dil = (K._per_dim(v, nd) for v in (stride, padding, dilation))
    kernel = tuple(weight.shape[2:])
    if transposed:  # input and gradient trade places (the weight is (in, out / groups, ...))
        return _correlate_for_weight(grad, input, kernel, st, pad, dil, groups)
    return _correlate_for_weight(input, grad, kernel, st, pad, dil, groups)


def _conv_bias_grad(grad, input, weight, bias_sym_sizes_opt, stride, padding, dilation,
                    transposed, output_padding, groups):
    return f.sum(grad, (0,) + tuple(range(2, len(grad.shape))))


def _batch_norm_backward(which, grads, input, weight, running_mean, running_var, result1,
                         result2, training, eps):
    g = grads[0]
    nd = len(input.shape)
    axes = (0,) + tuple(range(2, nd))
    shape = (1, -1) + (1,) * (nd - 2)
    if training:  # the batch's statistics (recomputed from input under create_graph)
        mean, rstd = f.layer_norm_stats(input, axes, eps, result1.reshape(shape),
                                        result2.reshape(shape))
    else:  # the running statistics: constants
        mean, rstd = running_mean.reshape(shape), (running_var.reshape(shape) + eps) ** -0.5
    if which == "bias":
        return f.sum(g, axes)
    xhat = (input - mean) * rstd
    if which == "weight":
        return f.sum(g * xhat, axes)
    gw = g if weight is None else g * weight.reshape(shape)
    if not training:
        return gw * rstd
    return rstd * (gw - f.mean(gw, axes) - xhat * f.mean(gw * xhat, axes))


def _shape_only_input(grad):
    """A pooling backward row's ``self``: only its shape matters to the backward, so its
    gradient is zeros (PyTorch's ``self: zeros_like(self)``)."""
    return f.zeros_like(grad)


def _max_pool_gather(grad, indices, nd=2):
    """The gradient flowing back through max_pool's backward: ``grad`` read at the indices
    (flat positions in each plane of the last ``nd`` dimensions)."""
    lead = tuple(indices.shape[:-nd])
    flat = f.gather(grad.reshape(lead + (-1,)), len(lead), indices.reshape(lead + (-1,)))
    return flat.reshape(tuple(indices.shape))


defop("convolution", "ConvolutionBackward0", K.convolution, ("input", "weight", "bias"),
      doc="conv1d, conv2d and conv_transpose2d (``transposed``); the input's and the weight's "
          "gradients are convolutions themselves, so create_graph records convolutions",
      calls=("`gradviz.conv1d`, `gradviz.conv2d`, `gradviz.conv_transpose2d`, "
             "`gradviz.convolution`, `F.conv1d`, `F.conv2d`, `F.conv_transpose2d`", ""),
      samples=(
          Sample(R(2, 2, 5, 4), R(3, 2, 3, 2), R(3), stride=(2, 1), padding=(1, 0)),
          Sample(R(1, 4, 5, 5), R(4, 2, 2, 2), None, padding=(1, 1), dilation=(2, 1),
                 groups=2),
          Sample(R(2, 2, 6), R(3, 2, 3), R(3), stride=(2,), padding=(1,)),
          Sample(R(2, 2, 3, 3), R(2, 3, 3, 2), R(3), stride=(2, 2), padding=(1, 0),
                 transposed=True, output_padding=(1, 0)),
          Sample(R(1, 4, 3, 2), R(4, 1, 2, 2), None, stride=(1, 2), dilation=(2, 1),
                 transposed=True, groups=2),
      ),
      input=_conv_input_grad, weight=_conv_weight_grad, bias=_conv_bias_grad)
defop("max_pool2d_with_indices", "MaxPool2DWithIndicesBackward0", K.max_pool2d_with_indices,
      ("self",),
      outputs=("result0", "result1"), nondiff_outputs=(1,),
      doc="outputs (values, indices); indices are flat positions in each H*W plane",
      calls=("`gradviz.max_pool2d`, `gradviz.max_pool1d`, `F.max_pool2d`, `F.max_pool1d`", ""),
      self=lambda grads, self, kernel_size, stride, padding, dilation, ceil_mode, result1:
      f.op("max_pool2d_with_indices_backward", grads[0], self, indices=result1))
defop("max_pool2d_with_indices_backward", "MaxPool2DWithIndicesBackwardBackward0",
      K.max_pool2d_with_indices_backward, ("grad_output", "self"),
      doc="max_pool2d's backward, recorded under create_graph",
      calls=("max_pool2d's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 1, 2, 2), R(2, 1, 4, 3),
                      indices=Tensor._make(np.array([[[[0, 5], [7, 11]]], [[[1, 4], [6, 9]]]]))),),
      grad_output=lambda grad, indices: _max_pool_gather(grad, indices),
      self=_shape_only_input)
defop("max_pool3d_with_indices", "MaxPool3DWithIndicesBackward0", K.max_pool3d_with_indices,
      ("self",),
      outputs=("result0", "result1"), nondiff_outputs=(1,),
      doc="outputs (values, indices); indices are flat positions in each D*H*W volume",
      calls=("`F.max_pool3d`", ""),
      samples=(Sample(R(2, 1, 4, 3, 4), kernel_size=(2, 2, 2), stride=(), padding=(0, 0, 0),
                      dilation=(1, 1, 1), ceil_mode=False),
               Sample(R(1, 2, 3, 5, 4), kernel_size=(3, 2, 2), stride=(2, 1, 2),
                      padding=(1, 1, 0), dilation=(1, 2, 1), ceil_mode=True)),
      self=lambda grads, self, kernel_size, stride, padding, dilation, ceil_mode, result1:
      f.op("max_pool3d_with_indices_backward", grads[0], self, indices=result1))
defop("max_pool3d_with_indices_backward", "MaxPool3DWithIndicesBackwardBackward0",
      K.max_pool3d_with_indices_backward, ("grad_output", "self"),
      doc="max_pool3d's backward, recorded under create_graph",
      calls=("max_pool3d's backward under `create_graph=True`", ""),
      samples=(Sample(R(1, 2, 1, 1, 2), R(1, 2, 2, 2, 2),
                      indices=Tensor._make(np.array([[[[[0, 7]]], [[[3, 5]]]]]))),),
      grad_output=lambda grad, indices: _max_pool_gather(grad, indices, 3),
      self=_shape_only_input)
defop("avg_pool2d", "AvgPool2DBackward0", K.avg_pool2d, ("self",),
      doc="``stride`` is saved as () when it was not given (it defaults to the kernel size)",
      calls=("`F.avg_pool2d`", ""),
      samples=(Sample(R(2, 2, 5, 5), kernel_size=(2, 2)),
               Sample(R(1, 1, 5, 4), kernel_size=(3, 2), stride=(2, 1), padding=(1, 1),
                      ceil_mode=True, count_include_pad=False),
               Sample(R(2, 5, 5), kernel_size=(3, 3), stride=(2, 2), padding=(1, 0),
                      divisor_override=2)),
      self=lambda grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
      divisor_override: f.op("avg_pool2d_backward", grad, self, kernel_size=kernel_size,
                             stride=stride, padding=padding, ceil_mode=ceil_mode,
                             count_include_pad=count_include_pad,
                             divisor_override=divisor_override))
defop("avg_pool2d_backward", "AvgPool2DBackwardBackward0", K.avg_pool2d_backward,
      ("grad_output", "self"),
      doc="avg_pool2d's backward, recorded under create_graph",
      calls=("avg_pool2d's backward under `create_graph=True`", ""),
      samples=(Sample(R(1, 2, 3, 2), R(1, 2, 5, 4), kernel_size=(2, 2), stride=(2, 2),
                      padding=(1, 0)),),
      grad_output=lambda grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
      divisor_override: f.op("avg_pool2d", grad, kernel_size=kernel_size, stride=stride,
                             padding=padding, ceil_mode=ceil_mode,
                             count_include_pad=count_include_pad,
                             divisor_override=divisor_override),
      self=_shape_only_input)
defop("_adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0", K.adaptive_avg_pool2d, ("self",),
      doc="windows [floor(i*n/o), ceil((i+1)*n/o)); output size 1 records a mean instead",
      calls=("`F.adaptive_avg_pool2d`", ""),
      samples=(Sample(R(2, 2, 5, 4), output_size=(3, 2)), Sample(R(3, 4, 4), output_size=(3, 4))),
      self=lambda grad, self: f.op("_adaptive_avg_pool2d_backward", grad, self))
defop("_adaptive_avg_pool2d_backward", "AdaptiveAvgPool2DBackwardBackward0",
      K.adaptive_avg_pool2d_backward, ("grad_output", "self"),
      doc="adaptive_avg_pool2d's backward, recorded under create_graph",
      calls=("adaptive_avg_pool2d's backward under `create_graph=True`", ""),
      samples=(Sample(R(1, 2, 2, 3), R(1, 2, 5, 4)),),
      grad_output=lambda grad, grad_output_sym_argsize_minus_2, grad_output_sym_argsize_minus_1:
      f.op("_adaptive_avg_pool2d", grad,
           output_size=(grad_output_sym_argsize_minus_2, grad_output_sym_argsize_minus_1)),
      self=_shape_only_input)
defop("native_batch_norm", "NativeBatchNormBackward0", K.native_batch_norm,
      ("input", "weight", "bias"),
      outputs=("result0", "result1", "result2"), nondiff_outputs=(1, 2),
      doc="outputs (y, save_mean, save_invstd), empty in evaluation; the running statistics "
          "are updated in place in training",
      calls=("`gradviz.batch_norm`, `F.batch_norm`", ""),
      input=lambda grads, input, weight, running_mean, running_var, result1, result2, training,
      eps: _batch_norm_backward("input", grads, input, weight, running_mean, running_var,
                                result1, result2, training, eps),
      weight=lambda grads, input, weight, running_mean, running_var, result1, result2, training,
      eps: _batch_norm_backward("weight", grads, input, weight, running_mean, running_var,
                                result1, result2, training, eps),
      bias=lambda grads, input, weight, running_mean, running_var, result1, result2, training,
      eps: _batch_norm_backward("bias", grads, input, weight, running_mean, running_var,
                                result1, result2, training, eps))
defop("constant_pad_nd", "ConstantPadNdBackward0", K.constant_pad_nd, ("self",),
      doc="``pad`` from the last dimension backwards; negative amounts crop",
      calls=("`gradviz.constant_pad_nd`, `F.pad`", ""),
      samples=(Sample(R(2, 3, 4), pad=(1, 2, 0, 1)), Sample(R(2, 4), pad=(-1, 2), value=1.5)),
      self=lambda grad, pad: f.op("constant_pad_nd", grad, pad=tuple(-p for p in pad)))


# -- more (nnmore)
# The reflection and replication pads, upsampling (nearest, linear), pixel (un)shuffle,
# im2col / col2im (F.unfold / F.fold), adaptive max pooling and _trilinear (F.bilinear): each
# its own PyTorch node. A backward that create_graph records is a row too, whose own gradient
# is the forward again (a pad's backward folds the border back, its gradient pads again).
def _pad_rows(kind: str, nd: int, samples: tuple, back_sample: Sample) -> None:
    title, mode = ("Reflection", "reflect") if kind == "reflection" else ("Replication",
                                                                          "replicate")
    name = f"{kind}_pad{nd}d"
    forward, backward = ((K.reflection_pad, K.reflection_pad_backward) if kind == "reflection"
                         else (K.replication_pad, K.replication_pad_backward))
    defop(name, f"{title}Pad{nd}DBackward0", forward, ("self",),
          doc=f"``padding`` as F.pad takes it, the last dimension's (left, right) first; {nd}-D",
          calls=(f"`F.pad(mode='{mode}')`, `nn.{title}Pad{nd}d`", ""),
          samples=samples,
          self=lambda grad, self, padding: f.op(f"{name}_backward", grad, self,
                                                  padding=padding))
    defop(f"{name}_backward", f"{title}Pad{nd}DBackwardBackward0", backward,
          ("grad_output", "self"),
          doc=f"{name}'s backward, recorded under create_graph",
          calls=(f"{name}'s backward under `create_graph=True`", ""),
          samples=(back_sample,),
          grad_output=lambda grad, padding: f.op(name, grad, padding=padding),
          self=_shape_only_input)


_pad_rows("reflection", 1, (Sample(R(2, 3, 5), padding=(2, 3)), Sample(R(3, 4), padding=(1, 0))),
          Sample(R(2, 3, 10), R(2, 3, 5), padding=(2, 3)))
_pad_rows("reflection", 2, (Sample(R(2, 2, 4, 5), padding=(1, 2, 3, 0)),
                            Sample(R(2, 3, 3), padding=(2, 2, 1, 1))),
          Sample(R(2, 2, 7, 8), R(2, 2, 4, 5), padding=(1, 2, 3, 0)))
_pad_rows("replication", 1, (Sample(R(2, 3, 4), padding=(3, 1)), Sample(R(3, 2), padding=(0, 2))),
          Sample(R(2, 3, 8), R(2, 3, 4), padding=(3, 1)))
_pad_rows("replication", 2, (Sample(R(2, 2, 3, 4), padding=(2, 1, 0, 3)),
                             Sample(R(1, 2, 2), padding=(1, 1, 2, 2))),
          Sample(R(2, 2, 6, 7), R(2, 2, 3, 4), padding=(2, 1, 0, 3)))

defop("upsample_nearest1d", "UpsampleNearest1DBackward0", K.upsample_nearest1d, ("self",),
      doc="``scales`` as F.interpolate passes it (None: from the sizes)",
      calls=("`F.interpolate(mode='nearest')` on 3-D input, `nn.Upsample`", ""),
      samples=(Sample(R(2, 3, 4), output_size=(9,)), Sample(R(1, 2, 3), output_size=(6,),
                                                            scales=2.0)),
      self=lambda grad, self_sym_sizes, output_size, scales: f.op(
          "upsample_nearest1d_backward", grad, output_size=output_size,
          input_size=self_sym_sizes, scales=scales))
defop("upsample_nearest1d_backward", "UpsampleNearest1DBackwardBackward0",
      K.upsample_nearest1d_backward, ("grad_output",),
      doc="upsample_nearest1d's backward, recorded under create_graph",
      calls=("upsample_nearest1d's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 3, 9), output_size=(9,), input_size=(2, 3, 4)),),
      grad_output=lambda grad, output_size, scales: f.op(
          "upsample_nearest1d", grad, output_size=output_size, scales=scales))
defop("upsample_nearest2d", "UpsampleNearest2DBackward0", K.upsample_nearest2d, ("self",),
      doc="``scales_h``/``scales_w`` as F.interpolate passes them (None: from the sizes)",
      calls=("`F.interpolate(mode='nearest')` on 4-D input, `nn.Upsample`, "
             "`nn.UpsamplingNearest2d`", ""),
      samples=(Sample(R(2, 2, 3, 4), output_size=(5, 8)),
               Sample(R(1, 2, 2, 3), output_size=(4, 6), scales_h=2.0, scales_w=2.0)),
      self=lambda grad, self_sym_sizes, output_size, scales_h, scales_w: f.op(
          "upsample_nearest2d_backward", grad, output_size=output_size,
          input_size=self_sym_sizes, scales_h=scales_h, scales_w=scales_w))
defop("upsample_nearest2d_backward", "UpsampleNearest2DBackwardBackward0",
      K.upsample_nearest2d_backward, ("grad_output",),
      doc="upsample_nearest2d's backward, recorded under create_graph",
      calls=("upsample_nearest2d's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 2, 5, 8), output_size=(5, 8), input_size=(2, 2, 3, 4)),),
      grad_output=lambda grad, output_size, scales_h, scales_w: f.op(
          "upsample_nearest2d", grad, output_size=output_size, scales_h=scales_h,
          scales_w=scales_w))
defop("upsample_linear1d", "UpsampleLinear1DBackward0", K.upsample_linear1d, ("self",),
      doc="``align_corners`` and ``scales`` as F.interpolate passes them",
      calls=("`F.interpolate(mode='linear')`, `nn.Upsample(mode='linear')`", ""),
      samples=(Sample(R(2, 3, 4), output_size=(7,), align_corners=False),
               Sample(R(1, 2, 5), output_size=(3,), align_corners=True),
               Sample(R(1, 2, 3), output_size=(6,), align_corners=False, scales=2.0)),
      self=lambda grad, self_sym_sizes, output_size, align_corners, scales: f.op(
          "upsample_linear1d_backward", grad, output_size=output_size,
          input_size=self_sym_sizes, align_corners=align_corners, scales=scales))
defop("upsample_linear1d_backward", "UpsampleLinear1DBackwardBackward0",
      K.upsample_linear1d_backward, ("grad_output",),
      doc="upsample_linear1d's backward, recorded under create_graph",
      calls=("upsample_linear1d's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 3, 7), output_size=(7,), input_size=(2, 3, 4), align_corners=False),),
      grad_output=lambda grad, output_size, align_corners, scales: f.op(
          "upsample_linear1d", grad, output_size=output_size, align_corners=align_corners,
          scales=scales))
defop("upsample_bilinear2d", "UpsampleBilinear2DBackward0", K.upsample_bilinear2d, ("self",),
      doc="``align_corners`` and ``scales_h``/``scales_w`` as F.interpolate passes them",
      calls=("`F.interpolate(mode='bilinear')`, `nn.Upsample(mode='bilinear')`, "
             "`nn.UpsamplingBilinear2d`", ""),
      samples=(Sample(R(2, 2, 3, 4), output_size=(5, 7), align_corners=False),
               Sample(R(1, 2, 4, 3), output_size=(2, 6), align_corners=True),
               Sample(R(1, 1, 2, 3), output_size=(4, 6), align_corners=False, scales_h=2.0,
                      scales_w=2.0)),
      self=lambda grad, self_sym_sizes, output_size, align_corners, scales_h, scales_w: f.op(
          "upsample_bilinear2d_backward", grad, output_size=output_size,
          input_size=self_sym_sizes, align_corners=align_corners, scales_h=scales_h,
          scales_w=scales_w))
defop("upsample_bilinear2d_backward", "UpsampleBilinear2DBackwardBackward0",
      K.upsample_bilinear2d_backward, ("grad_output",),
      doc="upsample_bilinear2d's backward, recorded under create_graph",
      calls=("upsample_bilinear2d's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 2, 5, 7), output_size=(5, 7), input_size=(2, 2, 3, 4),
                      align_corners=False),),
      grad_output=lambda grad, output_size, align_corners, scales_h, scales_w: f.op(
          "upsample_bilinear2d", grad, output_size=output_size, align_corners=align_corners,
          scales_h=scales_h, scales_w=scales_w))
defop("upsample_bicubic2d", "UpsampleBicubic2DBackward0", K.upsample_bicubic2d, ("self",),
      doc="cubic convolution (A = -0.75, borders clamped); ``align_corners`` and "
          "``scales_h``/``scales_w`` as F.interpolate passes them",
      calls=("`F.interpolate(mode='bicubic')`, `nn.Upsample(mode='bicubic')`", ""),
      samples=(Sample(R(2, 2, 3, 4), output_size=(5, 7), align_corners=False),
               Sample(R(1, 2, 4, 3), output_size=(2, 6), align_corners=True),
               Sample(R(1, 1, 2, 3), output_size=(5, 7), align_corners=False, scales_h=2.5,
                      scales_w=2.5)),
      self=lambda grad, self_sym_sizes, output_size, align_corners, scales_h, scales_w: f.op(
          "upsample_bicubic2d_backward", grad, output_size=output_size,
          input_size=self_sym_sizes, align_corners=align_corners, scales_h=scales_h,
          scales_w=scales_w))
defop("upsample_bicubic2d_backward", "UpsampleBicubic2DBackwardBackward0",
      K.upsample_bicubic2d_backward, ("grad_output",),
      doc="upsample_bicubic2d's backward, recorded under create_graph",
      calls=("upsample_bicubic2d's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 2, 5, 7), output_size=(5, 7), input_size=(2, 2, 3, 4),
                      align_corners=False),),
      grad_output=lambda grad, output_size, align_corners, scales_h, scales_w: f.op(
          "upsample_bicubic2d", grad, output_size=output_size, align_corners=align_corners,
          scales_h=scales_h, scales_w=scales_w))
defop("upsample_trilinear3d", "UpsampleTrilinear3DBackward0", K.upsample_trilinear3d, ("self",),
      doc="``align_corners`` and ``scales_d``/``scales_h``/``scales_w`` as F.interpolate passes "
          "them",
      calls=("`F.interpolate(mode='trilinear')`, `nn.Upsample(mode='trilinear')`", ""),
      samples=(Sample(R(1, 2, 2, 3, 2), output_size=(3, 5, 4), align_corners=False),
               Sample(R(1, 1, 3, 2, 2), output_size=(2, 3, 4), align_corners=True),
               Sample(R(1, 1, 2, 2, 3), output_size=(3, 4, 4), align_corners=False,
                      scales_d=1.5, scales_h=2.0, scales_w=1.5)),
      self=lambda grad, self_sym_sizes, output_size, align_corners, scales_d, scales_h,
      scales_w: f.op("upsample_trilinear3d_backward", grad, output_size=output_size,
                     input_size=self_sym_sizes, align_corners=align_corners,
                     scales_d=scales_d, scales_h=scales_h, scales_w=scales_w))
defop("upsample_trilinear3d_backward", "UpsampleTrilinear3DBackwardBackward0",
      K.upsample_trilinear3d_backward, ("grad_output",),
      doc="upsample_trilinear3d's backward, recorded under create_graph",
      calls=("upsample_trilinear3d's backward under `create_graph=True`", ""),
      samples=(Sample(R(1, 2, 3, 5, 4), output_size=(3, 5, 4), input_size=(1, 2, 2, 3, 2),
                      align_corners=False),),
      grad_output=lambda grad, output_size, align_corners, scales_d, scales_h, scales_w: f.op(
          "upsample_trilinear3d", grad, output_size=output_size, align_corners=align_corners,
          scales_d=scales_d, scales_h=scales_h, scales_w=scales_w))
defop("upsample_nearest_exact1d", "UpsampleNearestExact1DBackward0",
      K.upsample_nearest_exact1d, ("self",),
      doc="each output reads the input whose cell holds its centre; ``scales`` as "
          "F.interpolate passes it",
      calls=("`F.interpolate(mode='nearest-exact')` on 3-D input", ""),
      samples=(Sample(R(2, 3, 4), output_size=(7,)), Sample(R(1, 2, 5), output_size=(3,),
                                                            scales=0.7)),
      self=lambda grad, self_sym_sizes, output_size, scales: f.op(
          "upsample_nearest_exact1d_backward", grad, output_size=output_size,
          input_size=self_sym_sizes, scales=scales))
defop("upsample_nearest_exact1d_backward", "UpsampleNearestExact1DBackwardBackward0",
      K.upsample_nearest_exact1d_backward, ("grad_output",),
      doc="upsample_nearest_exact1d's backward, recorded under create_graph",
      calls=("upsample_nearest_exact1d's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 3, 7), output_size=(7,), input_size=(2, 3, 4)),),
      grad_output=lambda grad, output_size, scales: f.op(
          "upsample_nearest_exact1d", grad, output_size=output_size, scales=scales))
defop("upsample_nearest_exact2d", "UpsampleNearestExact2DBackward0",
      K.upsample_nearest_exact2d, ("self",),
      doc="``scales_h``/``scales_w`` as F.interpolate passes them",
      calls=("`F.interpolate(mode='nearest-exact')` on 4-D input", ""),
      samples=(Sample(R(2, 2, 3, 4), output_size=(5, 7)),
               Sample(R(1, 2, 4, 3), output_size=(6, 4), scales_h=1.5, scales_w=1.5)),
      self=lambda grad, self_sym_sizes, output_size, scales_h, scales_w: f.op(
          "upsample_nearest_exact2d_backward", grad, output_size=output_size,
          input_size=self_sym_sizes, scales_h=scales_h, scales_w=scales_w))
defop("upsample_nearest_exact2d_backward", "UpsampleNearestExact2DBackwardBackward0",
      K.upsample_nearest_exact2d_backward, ("grad_output",),
      doc="upsample_nearest_exact2d's backward, recorded under create_graph",
      calls=("upsample_nearest_exact2d's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 2, 5, 7), output_size=(5, 7), input_size=(2, 2, 3, 4)),),
      grad_output=lambda grad, output_size, scales_h, scales_w: f.op(
          "upsample_nearest_exact2d", grad, output_size=output_size, scales_h=scales_h,
          scales_w=scales_w))
defop("upsample_nearest_exact3d", "UpsampleNearestExact3DBackward0",
      K.upsample_nearest_exact3d, ("self",),
      doc="``scales_d``/``scales_h``/``scales_w`` as F.interpolate passes them",
      calls=("`F.interpolate(mode='nearest-exact')` on 5-D input", ""),
      samples=(Sample(R(1, 2, 2, 3, 2), output_size=(3, 5, 4)),
               Sample(R(1, 1, 2, 2, 3), output_size=(3, 4, 4), scales_d=1.5, scales_h=2.0,
                      scales_w=1.5)),
      self=lambda grad, self_sym_sizes, output_size, scales_d, scales_h, scales_w: f.op(
          "upsample_nearest_exact3d_backward", grad, output_size=output_size,
          input_size=self_sym_sizes, scales_d=scales_d, scales_h=scales_h, scales_w=scales_w))
defop("upsample_nearest_exact3d_backward", "UpsampleNearestExact3DBackwardBackward0",
      K.upsample_nearest_exact3d_backward, ("grad_output",),
      doc="upsample_nearest_exact3d's backward, recorded under create_graph",
      calls=("upsample_nearest_exact3d's backward under `create_graph=True`", ""),
      samples=(Sample(R(1, 2, 3, 5, 4), output_size=(3, 5, 4), input_size=(1, 2, 2, 3, 2)),),
      grad_output=lambda grad, output_size, scales_d, scales_h, scales_w: f.op(
          "upsample_nearest_exact3d", grad, output_size=output_size, scales_d=scales_d,
          scales_h=scales_h, scales_w=scales_w))
defop("pixel_shuffle", "PixelShuffleBackward0", K.pixel_shuffle, ("self",),
      doc="(*, C r², H, W) -> (*, C, H r, W r)",
      calls=("`F.pixel_shuffle`, `nn.PixelShuffle`", ""),
      samples=(Sample(R(2, 8, 2, 3), upscale_factor=2), Sample(R(9, 1, 2), upscale_factor=3)),
      self=lambda grad, upscale_factor: f.op("pixel_unshuffle", grad,
                                             downscale_factor=upscale_factor))
defop("pixel_unshuffle", "PixelUnshuffleBackward0", K.pixel_unshuffle, ("self",),
      doc="(*, C, H r, W r) -> (*, C r², H, W)",
      calls=("`F.pixel_unshuffle`, `nn.PixelUnshuffle`", ""),
      samples=(Sample(R(2, 2, 4, 6), downscale_factor=2), Sample(R(1, 3, 3), downscale_factor=3)),
      self=lambda grad, downscale_factor: f.op("pixel_shuffle", grad,
                                               upscale_factor=downscale_factor))
defop("im2col", "Im2ColBackward0", K.im2col, ("self",),
      doc="(N, C, H, W) -> (N, C kh kw, L): every window as a column (F.unfold)",
      calls=("`F.unfold`, `nn.Unfold`", ""),
      samples=(Sample(R(2, 2, 4, 5), kernel_size=(2, 3), dilation=(1, 1), padding=(1, 0),
                      stride=(1, 2)),
               Sample(R(1, 5, 5), kernel_size=(2, 2), dilation=(2, 1), padding=(0, 1),
                      stride=(2, 2))),
      self=lambda grad, self_sym_argsize_minus_2, self_sym_argsize_minus_1, kernel_size,
      dilation, padding, stride: f.op(
          "col2im", grad, output_size=(self_sym_argsize_minus_2, self_sym_argsize_minus_1),
          kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride))
defop("col2im", "Col2ImBackward0", K.col2im, ("self",),
      doc="(N, C kh kw, L) -> (N, C, H, W): the columns added back at their windows (F.fold)",
      calls=("`F.fold`, `nn.Fold`", ""),
      samples=(Sample(R(2, 12, 6), output_size=(3, 4), kernel_size=(2, 2), dilation=(1, 1),
                      padding=(0, 0), stride=(1, 1)),
               Sample(R(6, 6), output_size=(4, 5), kernel_size=(2, 3), dilation=(1, 1),
                      padding=(1, 0), stride=(2, 2))),
      self=lambda grad, kernel_size, dilation, padding, stride: f.op(
          "im2col", grad, kernel_size=kernel_size, dilation=dilation, padding=padding,
          stride=stride))
defop("adaptive_max_pool2d", "AdaptiveMaxPool2DBackward0", K.adaptive_max_pool2d, ("self",),
      outputs=("result0", "result1"), nondiff_outputs=(1,),
      doc="outputs (values, indices); indices are flat positions in each H*W plane",
      calls=("`F.adaptive_max_pool2d`, `F.adaptive_max_pool1d`, `nn.AdaptiveMaxPool2d`", ""),
      samples=(Sample(R(2, 2, 5, 4), output_size=(3, 2)), Sample(R(3, 4, 4), output_size=(4, 3))),
      self=lambda grads, self, result1: f.op("adaptive_max_pool2d_backward", grads[0], self,
                                             indices=result1))
defop("adaptive_max_pool2d_backward", "AdaptiveMaxPool2DBackwardBackward0",
      K.max_pool2d_with_indices_backward, ("grad_output", "self"),
      doc="adaptive_max_pool2d's backward, recorded under create_graph",
      calls=("adaptive_max_pool2d's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 1, 2, 2), R(2, 1, 4, 3),
                      indices=Tensor._make(np.array([[[[0, 5], [7, 11]]], [[[1, 4], [6, 9]]]]))),),
      grad_output=lambda grad, indices: _max_pool_gather(grad, indices),
      self=_shape_only_input)


def _trilinear_grad(grad, mine, expand, others, sumdim):
    """One input's gradient: the output gradient unsqueezed at ``sumdim`` times the other two
    inputs (unsqueezed at theirs), summed back to this input's unsqueezed shape."""
    full = f.unsqueeze_dims(grad, tuple(sumdim))
    for x, ex in others:
        full = full * f.unsqueeze_dims(x, tuple(ex))
    shape = tuple(np.expand_dims(np.empty(tuple(mine.shape), np.bool_), tuple(expand)).shape)
    full = f.expand(full, tuple(np.broadcast_shapes(tuple(full.shape), shape)))
    return f.sum_to(full, shape).reshape(tuple(mine.shape))


defop("_trilinear", "TrilinearBackward0", K.trilinear, ("i1", "i2", "i3"),
      doc="each input unsqueezed at its ``expand`` dims, multiplied, summed over ``sumdim`` "
          "(what F.bilinear runs)",
      calls=("`F.bilinear`, `nn.Bilinear`", ""),
      samples=(Sample(R(3, 4), R(2, 4, 5), R(3, 5), expand1=(1, 3), expand2=(0,),
                      expand3=(1, 2), sumdim=(2, 3)),
               Sample(R(1, 2), R(3, 2, 2), R(1, 2), expand1=(1, 3), expand2=(0,),
                      expand3=(1, 2), sumdim=(2, 3))),
      i1=lambda grad, i1, i2, i3, expand1, expand2, expand3, sumdim: _trilinear_grad(
          grad, i1, expand1, ((i2, expand2), (i3, expand3)), sumdim),
      i2=lambda grad, i1, i2, i3, expand1, expand2, expand3, sumdim: _trilinear_grad(
          grad, i2, expand2, ((i1, expand1), (i3, expand3)), sumdim),
      i3=lambda grad, i1, i2, i3, expand1, expand2, expand3, sumdim: _trilinear_grad(
          grad, i3, expand3, ((i1, expand1), (i2, expand2)), sumdim))
defop("avg_pool3d", "AvgPool3DBackward0", K.avg_pool3d, ("self",),
      doc="``stride`` is saved as () when it was not given (it defaults to the kernel size)",
      calls=("`F.avg_pool3d`, `nn.AvgPool3d`, `F.local_response_norm` (4-D and up)", ""),
      samples=(Sample(R(1, 2, 4, 4, 5), kernel_size=(2, 2, 2)),
               Sample(R(2, 3, 4, 5), kernel_size=(3, 2, 2), stride=(2, 1, 2),
                      padding=(1, 0, 1), ceil_mode=True, count_include_pad=False),
               Sample(R(1, 1, 3, 3, 3), kernel_size=(2, 2, 2), stride=(1, 1, 1),
                      divisor_override=3)),
      self=lambda grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
      divisor_override: f.op("avg_pool3d_backward", grad, self, kernel_size=kernel_size,
                             stride=stride, padding=padding, ceil_mode=ceil_mode,
                             count_include_pad=count_include_pad,
                             divisor_override=divisor_override))
defop("avg_pool3d_backward", "AvgPool3DBackwardBackward0", K.avg_pool3d_backward,
      ("grad_output", "self"),
      doc="avg_pool3d's backward, recorded under create_graph",
      calls=("avg_pool3d's backward under `create_graph=True`", ""),
      samples=(Sample(R(1, 2, 2, 3, 3), R(1, 2, 4, 4, 5), kernel_size=(2, 2, 2),
                      stride=(2, 2, 2), padding=(0, 1, 1)),),
      grad_output=lambda grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
      divisor_override: f.op("avg_pool3d", grad, kernel_size=kernel_size, stride=stride,
                             padding=padding, ceil_mode=ceil_mode,
                             count_include_pad=count_include_pad,
                             divisor_override=divisor_override),
      self=_shape_only_input)


# ===============================================================================================
# Never differentiable: recorded (the tracer shows them), but no node
# ===============================================================================================


for _name, _fn in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                   ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)):
    defop(_name, None, _fn, ("self", "other"))
defop("logical_not", None, np.logical_not, ("self",),
      calls=("`gradviz.logical_not`", ""))
defop("logical_and", None, np.logical_and, ("self", "other"),
      calls=("`gradviz.logical_and`", ""))
defop("logical_or", None, np.logical_or, ("self", "other"),
      calls=("`gradviz.logical_or`", ""))
defop("logical_xor", None, np.logical_xor, ("self", "other"),
      calls=("`gradviz.logical_xor`", ""))
for _name, _sym in (("bitwise_and", "&"), ("bitwise_or", "|"), ("bitwise_xor", "^")):
    defop(_name, None, getattr(K, _name), ("self", "other"),
          calls=(f"`gradviz.{_name}`, `x {_sym} y`", f"`.{_name}()`, `.{_name}_()`"))
defop("bitwise_not", None, K.bitwise_not, ("self",),
      calls=("`gradviz.bitwise_not`, `~x`", "`.bitwise_not()`, `.bitwise_not_()`"))
defop("all", None, K.all_, ("self",),
      calls=("`gradviz.all`", "`.all()`"))
defop("any", None, K.any_, ("self",),
      calls=("`gradviz.any`", "`.any()`"))
defop("isnan", None, np.isnan, ("self",),
      calls=("`gradviz.isnan`", "`.isnan()`"))
defop("isinf", None, np.isinf, ("self",),
      calls=("`gradviz.isinf`", "`.isinf()`"))
defop("isfinite", None, np.isfinite, ("self",),
      calls=("`gradviz.isfinite`", "`.isfinite()`"))
defop("argmax", None, K.argmax, ("self",),
      calls=("`gradviz.argmax`", "`.argmax()`"))
defop("argmin", None, K.argmin, ("self",),
      calls=("`gradviz.argmin`", "`.argmin()`"))
