"""Rows of the ops that are never differentiable: recorded (the tracer shows them), but no node."""

from __future__ import annotations

import numpy as np

from gradviz.ops import _kernels as K
from gradviz.ops.opinfo import defop

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
