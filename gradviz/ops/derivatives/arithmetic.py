"""Rows of the arithmetic operators: ``+ - * / ** // %`` and their named forms."""

from __future__ import annotations

import numpy as np

from gradviz.ops import _formula as f
from gradviz.ops import _kernels as K
from gradviz.ops import bindings as B
from gradviz.ops.opinfo import defop
from gradviz.ops.samples import P, R, Sample, W


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
      internal="overload of rsub (a tensor other): reached through gradviz.rsub, which picks "
               "torch's overload",
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
      internal="overload of div (rounding_mode=): reached through gradviz.div, which picks "
               "torch's overload",
      broadcasts=True, promotes=True, quiet=True,
      doc="``input / other`` rounded as ``rounding_mode`` says (None, 'trunc' or 'floor').",
      calls=("`gradviz.div(x, y, rounding_mode=...)`", "`.div(y, rounding_mode=...)`, `.div_()`"),
      self=lambda grad, self, other, rounding_mode:
          grad / other if rounding_mode is None else f.zeros_like(grad),
      other=lambda grad, self, other, rounding_mode:
          -grad * ((self / other) / other) if rounding_mode is None else f.zeros_like(grad))
defop("neg", "NegBackward0", K.neg, ("self",),
      # (no with_out= yet: gradviz/ops/dispatch.py's out_variant example wraps gradviz.neg)
      signature="neg(Tensor self) -> Tensor", method=True, inplace=True,
      doc="``-input``.",
      example="gradviz.neg(gradviz.tensor([1.0, -2.0]))\ntensor([-1.,  2.])",
      samples=(Sample(R(2, 3)), Sample(R())),
      calls=("`gradviz.negative`, `-x`", ""),
      self=lambda grad: -grad)
defop("reciprocal", "ReciprocalBackward0", K.reciprocal, ("self",),
      signature="reciprocal(Tensor self) -> Tensor", with_out=True, method=True, inplace=True,
      promotes=True, quiet=True,
      doc="``1 / input``.",
      example="gradviz.reciprocal(gradviz.tensor([2.0, 4.0]))\ntensor([0.5000, 0.2500])",
      samples=(Sample(P(2, 3)), Sample(P())),
      calls=("`2 / x`", ""),
      self=lambda grad, result: -grad * (result * result))
# torch's overloads of pow, in the order its parser tries them (NOTE [overloaded rows] in
# gradviz/ops/api.py).
defop("pow_tensor", "PowBackward1", K.power, ("self", "exponent"),
      signature="pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
      normalize=B.pow_tensor, method=True, inplace=True, with_out=True,
      broadcasts=True, promotes=True, quiet=True,
      doc="tensor ** tensor",
      example="gradviz.pow(gradviz.tensor([2.0, 3.0]), gradviz.tensor([3.0, 2.0]))\n"
              "tensor([8., 9.])",
      calls=("`gradviz.pow`, `x ** y`", "`.pow()`"),
      self=lambda grad, self, exponent: f.where(
          exponent == 0, 0.0, grad * (exponent * self ** (exponent - 1))),
      exponent=lambda grad, self, exponent, result: grad * f.where(
          (self == 0) & (exponent >= 0), 0.0, result * f.log(self)))
defop("pow_scalar_base", "PowBackward2", K.pow_scalar_base, ("exponent",),
      signature="pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
      normalize=B.pow_scalar_base, with_out=True,
      promotes=True, quiet=True,
      doc="number ** tensor",
      example="gradviz.pow(2, gradviz.tensor([1.0, 3.0]))\ntensor([2., 8.])",
      calls=("`gradviz.pow(2, x)`, `2 ** x`", ""),
      exponent=_pow_scalar_base_backward)
defop("pow", "PowBackward0", K.pow_scalar, ("self",),
      signature="pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
      normalize=B.pow_scalar, method=True, inplace=True, with_out=True,
      promotes=True, quiet=True,
      doc="tensor ** number",
      example="gradviz.pow(gradviz.tensor([1.0, 2.0]), 2)\ntensor([1., 4.])",
      calls=("`gradviz.pow`, `x ** 2`, `gradviz.square`", "`.pow()`, `.square()`"),
      self=_pow_backward)
defop("mul_scalar", "MulBackward1", K.mul_scalar, ("self",),
      internal="aten::mul.Scalar: recorded only inside composites torch decomposes in C++ "
               "(gradviz.mul(x, 2) records mul, as torch's does)",
      promotes=True,
      doc="tensor * Scalar inside PyTorch's C++ decompositions (cross_entropy's smoothing)",
      calls=("inside `F.cross_entropy(label_smoothing=...)`", ""),
      self=lambda grad, other: grad * other)
defop("add_scalar", "AddBackward1", K.add_scalar, ("self",),
      internal="aten::add.Scalar: recorded only inside composites torch decomposes in C++ "
               "(gradviz.add(x, 2) records add, as torch's does)",
      promotes=True,
      doc="tensor + Scalar inside PyTorch's C++ decompositions (smoothed probability targets)",
      calls=("inside `F.cross_entropy` (probabilities, smoothing)", ""),
      self=lambda grad: grad)
defop("div_scalar", "DivBackward1", K.div_scalar, ("self",),
      internal="aten::div.Scalar: recorded only inside composites torch decomposes in C++ "
               "(gradviz.div(x, 2) records div, as torch's does)",
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
      internal="overload of floor_divide (a number other): reached through gradviz.floor_divide, "
               "which picks torch's overload",
      promotes=True, quiet=True,
      doc="``input // number`` (floor division; no derivative).",
      calls=("`gradviz.floor_divide(x, 2)`, `x // 2`", ""),
      self=_not_implemented("floor_divide"))
defop("rfloor_divide", "NotImplemented", K.rfloor_divide, ("self",),
      internal="overload of floor_divide (a number input, `2 // x`): reached through "
               "gradviz.floor_divide, which picks torch's overload",
      promotes=True, quiet=True,
      doc="``number // input`` (floor division; no derivative).",
      calls=("`2 // x`", ""),
      self=_not_implemented("floor_divide"))
defop("remainder_scalar", "RemainderBackward0", K.remainder_scalar, ("self",),
      internal="overload of remainder (a number other): reached through gradviz.remainder, which "
               "picks torch's overload",
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
      internal="overload of remainder (a number input, `2 % x`): reached through "
               "gradviz.remainder, which picks torch's overload",
      promotes=True, quiet=True,
      doc="``number % input`` (no derivative).",
      calls=("`2 % x`, `gradviz.remainder(2, x)`", ""),
      self=_not_implemented("remainder"))
