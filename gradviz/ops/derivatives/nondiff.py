"""Rows of the ops that are never differentiable: recorded (the tracer shows them), but no node."""

from __future__ import annotations

import numpy as np

from gradviz.ops import _kernels as K
from gradviz.ops.opinfo import defop

for _name, _fn in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                   ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)):
    defop(_name, None, _fn, ("self", "other"))
defop("logical_not", None, np.logical_not, ("self",),
      signature="logical_not(Tensor self) -> Tensor", method=True, inplace=True, with_out=True,
      doc="Elementwise logical negation, as a bool tensor (in place: the truth values written "
          "in ``input``'s own dtype).",
      example="gradviz.logical_not(gradviz.tensor([True, False]))\ntensor([False,  True])")
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
      signature="bitwise_not(Tensor self) -> Tensor", method=True, inplace=True, with_out=True,
      doc="Elementwise ``~input`` of an integer or bool tensor (logical not for bool).",
      example="gradviz.bitwise_not(gradviz.tensor([1, -1]))\ntensor([-2,  0])",
      calls=("`~x`", ""))
defop("all", None, K.all_, ("self",),
      calls=("`gradviz.all`", "`.all()`"))
defop("any", None, K.any_, ("self",),
      calls=("`gradviz.any`", "`.any()`"))
defop("isnan", None, np.isnan, ("self",),
      signature="isnan(Tensor self) -> Tensor", method=True, with_out=True,
      doc="Elementwise: is the value NaN?",
      example='gradviz.isnan(gradviz.tensor([1.0, float("nan")]))\ntensor([False,  True])')
defop("isinf", None, np.isinf, ("self",),
      signature="isinf(Tensor self) -> Tensor", method=True, with_out=True,
      doc="Elementwise: is the value +inf or -inf?",
      example='gradviz.isinf(gradviz.tensor([1.0, float("-inf")]))\ntensor([False,  True])')
defop("isfinite", None, np.isfinite, ("self",),
      signature="isfinite(Tensor self) -> Tensor", method=True,
      doc="Elementwise: is the value neither infinite nor NaN?",
      example='gradviz.isfinite(gradviz.tensor([1.0, float("nan")]))\ntensor([ True, False])')
defop("argmax", None, K.argmax, ("self",),
      calls=("`gradviz.argmax`", "`.argmax()`"))
defop("argmin", None, K.argmin, ("self",),
      calls=("`gradviz.argmin`", "`.argmin()`"))
