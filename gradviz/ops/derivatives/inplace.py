"""Rows of the nodes only an in-place call records: zero_, fill_, copy_."""

from __future__ import annotations

from gradviz.ops import _formula as f
from gradviz.ops import _kernels as K
from gradviz.ops.opinfo import defop

defop("zero_", "ZeroBackward0", K.zero, ("self",),
      calls=("", "`.zero_()`"),
      self=lambda grad: f.zeros_like(grad))
defop("fill_", "FillBackward2", K.fill, ("self",),
      calls=("", "`.fill_()`"),
      self=lambda grad: f.zeros_like(grad))
defop("fill_tensor_", "FillBackward3", K.fill_tensor, ("self", "value"),
      internal="overload of fill_ (a tensor value): reached through gradviz.fill_, which picks "
               "torch's overload",
      doc="fill_ with a 0-d tensor (what x[i] = number records inside CopySlices)",
      calls=("`x[i] = 2.0`, `x[...] = tensor(2.0)`", ""),
      self=lambda grad: f.zeros_like(grad),
      value=lambda grad: f.sum(grad, tuple(range(len(grad.shape)))))
defop("copy_", "CopyBackwards", K.copy, ("self", "src"),
      calls=("`x[...] = y`", "`.copy_()`"),
      self=lambda grad: f.zeros_like(grad),
      src=lambda grad, src_sym_sizes: f.sum_to(grad, src_sym_sizes))
