"""Rows of the elementwise functions: exp and log, roots, trigonometric and hyperbolic
functions, rounding, clamping, two-argument functions (atan2, hypot, fmod, xlogy ...),
special functions and the elementwise tests."""

from __future__ import annotations

import math

import numpy as np

from gradviz.ops import _formula as f
from gradviz.ops import _kernels as K
from gradviz.ops import bindings as B
from gradviz.ops.derivatives.arithmetic import _not_implemented
from gradviz.ops.opinfo import defop
from gradviz.ops.samples import A, P, R, Sample, W
from gradviz.tensor import Tensor


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
      signature="exp(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True,
      doc="Elementwise ``e ** input``.",
      example="gradviz.exp(gradviz.tensor([0.0]))\ntensor([1.])",
      samples=(Sample(R(2, 3)), Sample(R())),
      self=lambda grad, result: grad * result)
defop("log", "LogBackward0", np.log, ("self",),
      signature="log(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True, quiet=True,
      doc="Elementwise natural logarithm.",
      example="gradviz.log(gradviz.tensor([1.0]))\ntensor([0.])",
      samples=(Sample(P(2, 3)), Sample(P())),
      self=lambda grad, self: grad / self)
defop("tanh", "TanhBackward0", np.tanh, ("self",),
      signature="tanh(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True,
      doc="Elementwise hyperbolic tangent.",
      example="gradviz.tanh(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(R(2, 3)), Sample(R(4))),
      calls=("`F.tanh`", ""),
      self=lambda grad, result: grad * (1 - result * result))
defop("sigmoid", "SigmoidBackward0", K.sigmoid, ("self",),
      signature="sigmoid(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True,
      doc="Elementwise logistic function ``1 / (1 + exp(-input))``.",
      example="gradviz.sigmoid(gradviz.tensor([0.0]))\ntensor([0.5000])",
      samples=(Sample(R(2, 3)), Sample(R(4))),
      calls=("`F.sigmoid`", ""),
      self=lambda grad, result: grad * ((1 - result) * result))
defop("relu", "ReluBackward0", K.relu, ("self",),
      signature="relu(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
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
      signature="sign(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      doc="Elementwise sign: -1, 0 or 1 (the gradient is 0).",
      example="gradviz.sign(gradviz.tensor([-2.0, 0.0, 3.0]))\ntensor([-1.,  0.,  1.])",
      samples=(Sample(A(2, 3)),),
      self=lambda grad: f.zeros_like(grad))
defop("sqrt", "SqrtBackward0", K.sqrt, ("self",),
      signature="sqrt(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True, quiet=True,
      doc="Elementwise square root.",
      example="gradviz.sqrt(gradviz.tensor([4.0, 9.0]))\ntensor([2., 3.])",
      samples=(Sample(P(2, 3)), Sample(P())),
      self=lambda grad, result: grad / (2 * result))
defop("rsqrt", "RsqrtBackward0", K.rsqrt, ("self",),
      signature="rsqrt(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True, quiet=True,
      doc="Elementwise ``1 / sqrt(input)``.",
      example="gradviz.rsqrt(gradviz.tensor([4.0]))\ntensor([0.5000])",
      samples=(Sample(P(2, 3)),),
      self=lambda grad, result: -0.5 * grad * (result * result * result))
defop("sin", "SinBackward0", K.sin, ("self",),
      signature="sin(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True,
      doc="Elementwise sine.",
      example="gradviz.sin(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(R(2, 3)),),
      self=lambda grad, self: grad * f.cos(self))
defop("cos", "CosBackward0", K.cos, ("self",),
      signature="cos(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True,
      doc="Elementwise cosine.",
      example="gradviz.cos(gradviz.tensor([0.0]))\ntensor([1.])",
      samples=(Sample(R(2, 3)),),
      self=lambda grad, self: grad * -f.sin(self))
defop("log1p", "Log1PBackward0", K.log1p, ("self",),
      signature="log1p(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True, quiet=True,
      doc="Elementwise ``log(1 + input)``, exact for small inputs.",
      example="gradviz.log1p(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(P(2, 3)),),
      self=lambda grad, self: grad / (self + 1))
defop("expm1", "Expm1Backward0", K.expm1, ("self",),
      signature="expm1(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True, quiet=True,
      doc="Elementwise ``exp(input) - 1``, exact for small inputs.",
      example="gradviz.expm1(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(R(2, 3)),),
      self=lambda grad, result: grad * (result + 1))
defop("erf", "ErfBackward0", K.erf, ("self",),
      signature="erf(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True,
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
      internal="overload of clamp (tensor bounds): reached through gradviz.clamp, which picks "
               "torch's overload",
      broadcasts=True, promotes=True,
      doc="clamp with tensor bounds (either may be None)",
      calls=("`gradviz.clamp(x, min_tensor, max_tensor)`", "`.clamp()`, `.clamp_()`"),
      self=_clamp_backward,
      min=_clamp_min_grad,
      max=_clamp_max_grad)
# torch's overloads of clamp_min, in its parser's order (NOTE [overloaded rows])
defop("clamp_min_tensor", "ClampMinBackward1", np.maximum, ("self", "min"),
      signature="clamp_min.Tensor(Tensor self, Tensor min) -> Tensor", method=True,
      inplace=True, with_out=True,
      broadcasts=True,
      calls=("`gradviz.clamp_min(x, tensor)`", "`.clamp_min()`"),
      self=lambda grad, self, min: f.where(self >= min, grad, 0.0),
      min=lambda grad, self, min: f.where(self < min, grad, 0.0))
defop("clamp_min", "ClampMinBackward0", K.clamp_min, ("self",),
      signature="clamp_min(Tensor self, Scalar min) -> Tensor", method=True, inplace=True,
      with_out=True,
      promotes=True,
      example="gradviz.clamp_min(gradviz.tensor([-2.0, 3.0]), 0)\ntensor([0., 3.])",
      calls=("`gradviz.clamp_min`", "`.clamp_min()`"),
      self=lambda grad, self, min: f.where(self >= min, grad, 0.0))
# torch's overloads of clamp_max, in its parser's order (NOTE [overloaded rows])
defop("clamp_max_tensor", "ClampMaxBackward1", np.minimum, ("self", "max"),
      signature="clamp_max.Tensor(Tensor self, Tensor max) -> Tensor", method=True,
      inplace=True, with_out=True,
      broadcasts=True,
      calls=("`gradviz.clamp_max(x, tensor)`", "`.clamp_max()`"),
      self=lambda grad, self, max: f.where(self <= max, grad, 0.0),
      max=lambda grad, self, max: f.where(self > max, grad, 0.0))
defop("clamp_max", "ClampMaxBackward0", K.clamp_max, ("self",),
      signature="clamp_max(Tensor self, Scalar max) -> Tensor", method=True, inplace=True,
      with_out=True,
      promotes=True,
      example="gradviz.clamp_max(gradviz.tensor([-2.0, 3.0]), 0)\ntensor([-2.,  0.])",
      calls=("`gradviz.clamp_max`", "`.clamp_max()`"),
      self=lambda grad, self, max: f.where(self <= max, grad, 0.0))
defop("maximum", "MaximumBackward0", np.maximum, ("self", "other"),
      signature="maximum(Tensor self, Tensor other) -> Tensor", method=True, with_out=True,
      normalize=B.tensor_other("maximum"),
      broadcasts=True, promotes=True,
      doc="Elementwise maximum with broadcasting; ties share the gradient equally, as in PyTorch.",
      example="gradviz.maximum(gradviz.tensor([1.0, 5.0]), gradviz.tensor([3.0, 2.0]))\n"
              "tensor([3., 5.])",
      calls=("`gradviz.max(x, y)`", "`.max(y)`"),
      self=lambda grad, self, other: f.where(self < other, 0.0,
                                             f.where(self == other, grad / 2, grad)),
      other=lambda grad, self, other: f.where(self > other, 0.0,
                                              f.where(self == other, grad / 2, grad)))
defop("minimum", "MinimumBackward0", np.minimum, ("self", "other"),
      signature="minimum(Tensor self, Tensor other) -> Tensor", method=True, with_out=True,
      normalize=B.tensor_other("minimum"),
      broadcasts=True, promotes=True,
      doc="Elementwise minimum with broadcasting; ties share the gradient equally, as in PyTorch.",
      example="gradviz.minimum(gradviz.tensor([1.0, 5.0]), gradviz.tensor([3.0, 2.0]))\n"
              "tensor([1., 2.])",
      calls=("`gradviz.min(x, y)`", "`.min(y)`"),
      self=lambda grad, self, other: f.where(self > other, 0.0,
                                             f.where(self == other, grad / 2, grad)),
      other=lambda grad, self, other: f.where(self < other, 0.0,
                                              f.where(self == other, grad / 2, grad)))

# -- rounding, logarithms and exponentials, trigonometric and hyperbolic functions,
# two-argument functions
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
          signature=f"{_name}(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
          doc=_doc, example=_example,
          samples=(Sample(R(2, 3)), Sample(R())),
          calls=("`gradviz.fix`", "`.fix()`, `.fix_()`") if _name == "trunc" else ("", ""),
          self=_zero_grad)
# torch's overloads of round, in its parser's order (NOTE [overloaded rows])
defop("round", "RoundBackward0", K.round_, ("self",),
      signature="round(Tensor self) -> Tensor", method=True, inplace=True, with_out=True,
      example="gradviz.round(gradviz.tensor([0.5, 1.5, 2.567]))\ntensor([0., 2., 3.])",
      doc="Round half to even (the gradient is 0).",
      calls=("`gradviz.round`", "`.round()`, `.round_()`"),
      samples=(Sample(R(2, 3)), Sample(R())),
      self=_zero_grad)
defop("round_decimals", "RoundBackward1", K.round_decimals, ("self",),
      signature="round.decimals(Tensor self, *, int decimals) -> Tensor", method=True,
      inplace=True, with_out=True,
      example="gradviz.round(gradviz.tensor([2.567]), decimals=2)\ntensor([2.5700])",
      doc="``round(decimals=d)``: to ``d`` decimal places, half to even (the gradient is 0).",
      calls=("`gradviz.round(x, decimals=2)`", "`.round(decimals=2)`, `.round_(decimals=2)`"),
      samples=(Sample(R(2, 3), decimals=1), Sample(P(3), decimals=-1)),
      self=_zero_grad)
defop("frac", "FracBackward0", K.frac, ("self",),
      signature="frac(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      doc="``input - trunc(input)``: the fractional part, with the sign of ``input``.",
      example="gradviz.frac(gradviz.tensor([-1.25, 2.5]))\ntensor([-0.2500,  0.5000])",
      samples=(Sample(R(2, 3)),),
      self=lambda grad: grad)
defop("log2", "Log2Backward0", K.log2, ("self",),
      signature="log2(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True, quiet=True,
      doc="Elementwise base-2 logarithm.",
      example="gradviz.log2(gradviz.tensor([8.0]))\ntensor([3.])",
      samples=(Sample(P(2, 3)), Sample(P())),
      self=lambda grad, self: grad / (self * _LN2))
defop("log10", "Log10Backward0", K.log10, ("self",),
      signature="log10(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True, quiet=True,
      doc="Elementwise base-10 logarithm.",
      example="gradviz.log10(gradviz.tensor([100.0]))\ntensor([2.])",
      samples=(Sample(P(2, 3)),),
      self=lambda grad, self: grad / (self * _LN10))
defop("exp2", "Exp2Backward0", K.exp2, ("self",),
      signature="exp2(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True, quiet=True,
      doc="Elementwise ``2 ** input``.",
      example="gradviz.exp2(gradviz.tensor([3.0]))\ntensor([8.])",
      samples=(Sample(R(2, 3)), Sample(R())),
      self=lambda grad, result: grad * result * _LN2)
defop("sinh", "SinhBackward0", K.sinh, ("self",),
      signature="sinh(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True, quiet=True,
      doc="Elementwise hyperbolic sine.",
      example="gradviz.sinh(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(R(2, 3)),),
      self=lambda grad, self: grad * f.op("cosh", self))
defop("cosh", "CoshBackward0", K.cosh, ("self",),
      signature="cosh(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True, quiet=True,
      doc="Elementwise hyperbolic cosine.",
      example="gradviz.cosh(gradviz.tensor([0.0]))\ntensor([1.])",
      samples=(Sample(R(2, 3)),),
      self=lambda grad, self: grad * f.op("sinh", self))
defop("tan", "TanBackward0", K.tan, ("self",),
      signature="tan(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True, quiet=True,
      doc="Elementwise tangent.",
      example="gradviz.tan(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(R(2, 3)), Sample(R())),
      self=lambda grad, result: grad * (1 + result * result))
defop("asin", "AsinBackward0", K.asin, ("self",),
      signature="asin(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True, quiet=True,
      doc="Elementwise arcsine (NaN outside [-1, 1]).",
      example="gradviz.asin(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(W([[0.3, -0.6, 0.1], [0.8, -0.2, 0.5]])),),
      calls=("`gradviz.arcsin`", "`.arcsin()`, `.arcsin_()`"),
      self=lambda grad, self: grad * _rsqrt(1 - self * self))
defop("acos", "AcosBackward0", K.acos, ("self",),
      signature="acos(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True, quiet=True,
      doc="Elementwise arccosine (NaN outside [-1, 1]).",
      example="gradviz.acos(gradviz.tensor([1.0]))\ntensor([0.])",
      samples=(Sample(W([[0.3, -0.6, 0.1], [0.8, -0.2, 0.5]])),),
      calls=("`gradviz.arccos`", "`.arccos()`, `.arccos_()`"),
      self=lambda grad, self: grad * -_rsqrt(1 - self * self))
defop("atan", "AtanBackward0", K.atan, ("self",),
      signature="atan(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True,
      doc="Elementwise arctangent.",
      example="gradviz.atan(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(R(2, 3)), Sample(R())),
      calls=("`gradviz.arctan`", "`.arctan()`, `.arctan_()`"),
      self=lambda grad, self: grad / (self * self + 1))
defop("asinh", "AsinhBackward0", K.asinh, ("self",),
      promotes=True, signature="asinh(Tensor self) -> Tensor", with_out=True, method=True,
      doc="Elementwise inverse hyperbolic sine.",
      example="gradviz.asinh(gradviz.tensor([0.0]))\ntensor([0.])",
      samples=(Sample(R(2, 3)),),
      calls=("`gradviz.arcsinh`", "`.arcsinh()`"),
      self=lambda grad, self: grad * _rsqrt(self * self + 1))
defop("acosh", "AcoshBackward0", K.acosh, ("self",),
      signature="acosh(Tensor self) -> Tensor", with_out=True, method=True,
      promotes=True, quiet=True,
      doc="Elementwise inverse hyperbolic cosine (NaN below 1).",
      example="gradviz.acosh(gradviz.tensor([1.0]))\ntensor([0.])",
      samples=(Sample(W([[1.5, 2.0, 1.2], [3.0, 1.1, 2.5]])),),
      calls=("`gradviz.arccosh`", "`.arccosh()`"),
      self=lambda grad, self: grad * _rsqrt(self * self - 1))
defop("atanh", "AtanhBackward0", K.atanh, ("self",),
      signature="atanh(Tensor self) -> Tensor", with_out=True, method=True,
      promotes=True, quiet=True,
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
      signature="logit(Tensor self, float? eps=None) -> Tensor", method=True, inplace=True,
      with_out=True, normalize=B.logit,
      promotes=True, quiet=True,
      doc="``log(p / (1 - p))``; ``eps`` clamps ``p`` to ``[eps, 1 - eps]`` first (the "
          "gradient is then 0 where it clamped); without, values outside ``[0, 1]`` give NaN.",
      example="gradviz.logit(gradviz.tensor([0.5, 0.0]), eps=0.25)\n"
              "tensor([ 0.0000, -1.0986])",
      calls=("`gradviz.logit_`", ""),
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
# torch's overloads of fmod, in its parser's order (NOTE [overloaded rows], gradviz/ops/api.py)
defop("fmod", "FmodBackward1", K.fmod, ("self", "other"),
      signature="fmod.Tensor(Tensor self, Tensor other) -> Tensor", method=True, inplace=True,
      with_out=True,
      example="gradviz.fmod(gradviz.tensor([-3.0, 3.0]), gradviz.tensor([2.0, 2.0]))\n"
              "tensor([-1.,  1.])",
      broadcasts=True, promotes=True, quiet=True,
      doc="``input - trunc(input / other) * other`` with a tensor ``other``.",
      calls=("`gradviz.fmod(x, y)`", "`.fmod()`, `.fmod_()`"),
      samples=(Sample(W([[5.3, -1.2], [7.9, -2.2]]), W([2.0, -3.0])),
               Sample(R(2, 3), P(3))),
      self=lambda grad: grad,
      other=lambda grad, self, other: -grad * _trunc_quotient(self, other))
defop("fmod_scalar", "FmodBackward0", K.fmod_scalar, ("self",),
      signature="fmod.Scalar(Tensor self, Scalar other) -> Tensor", method=True, inplace=True,
      with_out=True,
      promotes=True, quiet=True,
      doc="``input - trunc(input / other) * other`` with a number ``other`` (C's fmod: the "
          "sign of ``input``).",
      example="gradviz.fmod(gradviz.tensor([-3.0, 3.0]), 2)\ntensor([-1.,  1.])",
      calls=("`gradviz.fmod(x, 2)`", "`.fmod()`, `.fmod_()`"),
      samples=(Sample(R(2, 3), other=0.75), Sample(R(4), other=-0.6)),
      self=lambda grad: grad)
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
# torch's overloads of xlogy, in its parser's order (NOTE [overloaded rows])
defop("xlogy", "XlogyBackward0", K.xlogy, ("self", "other"),
      signature="xlogy.Tensor(Tensor self, Tensor other) -> Tensor", method=True, inplace=True,
      with_out=True,
      example="gradviz.xlogy(gradviz.tensor([0.0, 2.0]), gradviz.tensor([0.0, 1.0]))\n"
              "tensor([0., 0.])",
      broadcasts=True, promotes=True, quiet=True,
      doc="``input * log(other)``, and 0 where ``input == 0`` (unless ``other`` is NaN).",
      calls=("`gradviz.xlogy`", "`.xlogy()`, `.xlogy_()`"),
      samples=(Sample(R(2, 3), P(2, 3)), Sample(R(2, 3), P(3))),
      self=_xlogy_self_grad,
      other=lambda grad, self, other: grad * self / other)
defop("xlogy_scalar_self", "XlogyBackward1", K.xlogy_scalar_self, ("other",),
      signature="xlogy.Scalar_Self(Scalar self, Tensor other) -> Tensor", with_out=True,
      promotes=True, quiet=True,
      doc="``xlogy`` with a number ``input``.",
      calls=("`gradviz.xlogy(2.0, y)`", ""),
      samples=(Sample(2.0, P(2, 3)),),
      other=lambda grad, self, other: grad * self / other)
defop("xlogy_scalar_other", "XlogyBackward2", K.xlogy_scalar_other, ("self",),
      signature="xlogy.Scalar_Other(Tensor self, Scalar other) -> Tensor", method=True,
      inplace=True, with_out=True,
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
      internal="overload of lerp (a tensor weight): reached through gradviz.lerp, which picks "
               "torch's overload",
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


# -- special functions, signs, log-add-exp, elementwise tests
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
          signature=f"{_name}(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
          promotes=True, quiet=True, doc=_doc, example=_example,
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
      signature="sgn(Tensor self) -> Tensor", method=True, inplace=True, with_out=True,
      doc="The sign of each element (-1, 0 or 1): ``sign`` extended to complex numbers, which "
          "gradviz does not have. Its gradient is zero, as torch's is (torch hands back a "
          "ZeroTensor, gradviz plain zeros).",
      example="gradviz.sgn(gradviz.tensor([-2.0, 0.0, 3.0]))\ntensor([-1.,  0.,  1.])",
      samples=(Sample(A(2, 3)),),
      self=_sgn_backward)
# torch's overloads of copysign, in its parser's order (NOTE [overloaded rows])
defop("copysign", "CopysignBackward0", K.copysign, ("self", "other"),
      signature="copysign.Tensor(Tensor self, Tensor other) -> Tensor", method=True,
      inplace=True, with_out=True,
      example="gradviz.copysign(gradviz.tensor([1.0, -2.0]), gradviz.tensor([-1.0, 1.0]))\n"
              "tensor([-1.,  2.])",
      broadcasts=True, promotes=True,
      doc="``|input|`` with the sign of ``other`` (a tensor), the sign bit of -0.0 included.",
      calls=("`gradviz.copysign(x, y)`", "`.copysign()`, `.copysign_()`"),
      samples=(Sample(A(2, 3), R(2, 3)), Sample(A(2, 3), R(3))),
      self=_copysign_backward,
      other=lambda grad: f.zeros_like(grad))
defop("copysign_scalar", "CopysignBackward1", K.copysign_scalar, ("self",),
      signature="copysign.Scalar(Tensor self, Scalar other) -> Tensor", method=True,
      inplace=True, with_out=True,
      example="gradviz.copysign(gradviz.tensor([1.0, -2.0]), -1)\ntensor([-1., -2.])",
      promotes=True,
      doc="``|input|`` with the sign of a number ``other``.",
      calls=("`gradviz.copysign(x, -1.0)`", "`.copysign()`, `.copysign_()`"),
      samples=(Sample(A(2, 3), other=-1.0), Sample(A(3), other=2.0)),
      self=_copysign_backward)
defop("logaddexp", "LogaddexpBackward0", K.logaddexp, ("self", "other"),
      signature="logaddexp(Tensor self, Tensor other) -> Tensor", method=True, with_out=True,
      normalize=B.float_tensors_of("logaddexp", "logaddexp_cpu", "input", "other"),
      broadcasts=True,
      doc="``log(exp(input) + exp(other))`` without overflow; floating point tensors only, as "
          "in PyTorch.",
      example="gradviz.logaddexp(gradviz.tensor([0.0]), gradviz.tensor([0.0]))\n"
              "tensor([0.6931])",
      samples=(Sample(R(2, 3), R(2, 3)), Sample(R(2, 3), R(3))),
      self=lambda grad, self, other: grad / (1 + f.exp(other - self)),
      other=lambda grad, self, other: grad / (1 + f.exp(self - other)))
defop("logaddexp2", "Logaddexp2Backward0", K.logaddexp2, ("self", "other"),
      signature="logaddexp2(Tensor self, Tensor other) -> Tensor", method=True, with_out=True,
      normalize=B.float_tensors_of("logaddexp2", "logaddexp2_cpu", "input", "other"),
      broadcasts=True,
      doc="``log2(2 ** input + 2 ** other)`` without overflow.",
      example="gradviz.logaddexp2(gradviz.tensor([1.0]), gradviz.tensor([1.0]))\ntensor([2.])",
      samples=(Sample(R(2, 3), R(2, 3)), Sample(R(2, 3), R(3))),
      self=lambda grad, self, other: grad / (1 + 2 ** (other - self)),
      other=lambda grad, self, other: grad / (1 + 2 ** (self - other)))
defop("signbit", None, np.signbit, ("self",),
      signature="signbit(Tensor self) -> Tensor", method=True, with_out=True,
      doc="Whether each element's sign bit is set: True for negatives and for -0.0 (bool, not "
          "differentiable).",
      example="gradviz.signbit(gradviz.tensor([-0.0, 0.0, -1.0]))\ntensor([ True, False,  True])")
defop("isclose", None, K.isclose, ("self", "other"),
      doc="``|input - other| <= atol + rtol * |other|``, elementwise",
      calls=("`gradviz.isclose`", "`.isclose()`"))
defop("isin", None, K.isin, ("elements", "test_elements"),
      doc="whether each of ``elements`` is one of ``test_elements`` (with ``invert``, is not)",
      calls=("`gradviz.isin`", ""))
