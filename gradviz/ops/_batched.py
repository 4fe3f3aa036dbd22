"""``matmul`` when an operand has more than two dimensions, decomposed as PyTorch decomposes it.

PyTorch never records a "MatmulBackward": ``at::matmul`` (``_matmul_impl`` in
``aten/src/ATen/native/LinearAlgebra.cpp``) rewrites the product into 2-D ``mm``/``mv`` or 3-D
``bmm`` calls surrounded by views, and autograd records those. gradviz follows the same steps,
so a learner sees the same graph:

* **fold** (``should_fold``): when one side has at least 3 dimensions and the other at most 2,
  the big side is reshaped to a matrix and multiplied with ``mm``/``mv``:
  ``(b, n, m) @ (m, p)`` is ``UnsafeViewBackward0 <- MmBackward0 <- ViewBackward0``. With the
  small operand on the left the product is transposed first (``x @ B`` is ``(Bᵀ @ xᵀ)ᵀ``) and
  made contiguous at the end (``CloneBackward0 <- TransposeBackward0``).
* a 3-D operand whose single batch is 1, facing a 3-D operand with a real batch, is squeezed
  first when it requires grad (``SqueezeBackward1``), so that it can be folded;
* otherwise **bmm**: both sides are expanded to the broadcast batch shape (``ExpandBackward0``),
  reshaped to ``(batch, n, m)`` and ``(batch, m, p)``, multiplied with ``bmm`` and reshaped back
  (``UnsafeViewBackward0 <- BmmBackward0``).

Every reshape is PyTorch's: a view for contiguous data, ``_reshape_alias`` for other viewable
data, ``clone`` + ``_unsafe_view`` otherwise.
"""

from __future__ import annotations

import numpy as np

from gradviz.ops import functional as F
from gradviz.ops.derivatives import OPS
from gradviz.ops.dispatch import dispatch
from gradviz.tensor import Tensor

__all__ = ["matmul"]


def _mT(t: Tensor) -> Tensor:  # noqa: N802 - PyTorch's name
    return F.transpose(t, -2, -1)


def _should_fold(t1: Tensor, t2: Tensor) -> bool:
    """Whether the larger operand can be folded into a matrix (PyTorch's ``should_fold``)."""
    larger = t1.ndim >= t2.ndim
    big = t1._data if larger else np.swapaxes(t2._data, -1, -2)
    small_dim = t2.ndim if larger else t1.ndim
    if not (big.ndim >= 3 and small_dim <= 2):
        return False
    # Folding costs a copy of the big side but saves a (b, ...)-sized gradient for the small one.
    if (t2 if larger else t1).requires_grad:
        return True
    if t1.ndim == 2:
        return False
    if big.size == 0:
        return True
    strides = [s // big.itemsize for s in big.strides]
    return all(strides[i] == strides[i + 1] * big.shape[i + 1] for i in range(big.ndim - 2))


def _fold(t1: Tensor, t2: Tensor) -> Tensor:
    transpose = t2.ndim > t1.ndim
    big = _mT(t2) if transpose else t1
    small = (F.t(t1) if t1.ndim == 2 else t1) if transpose else t2
    out_shape = big.shape[:-1]
    folded = int(np.prod(out_shape))
    big2 = F.reshape(big, (folded, big.shape[-1]))
    if small.ndim == 2:
        out = dispatch(OPS["_unsafe_view"], F.mm(big2, small),
                       size=tuple(out_shape) + (small.shape[1],))
        return F.contiguous(_mT(out)) if transpose else out
    return dispatch(OPS["_unsafe_view"], F.mv(big2, small), size=tuple(out_shape))


def _broadcast_batch(a: tuple, b: tuple) -> tuple:
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        nd = max(len(a), len(b))
        for k in range(1, nd + 1):
            x, y = (a[-k] if k <= len(a) else 1), (b[-k] if k <= len(b) else 1)
            if x != y and x != 1 and y != 1:
                raise RuntimeError(
                    f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                    f"non-singleton dimension {nd - k} (matmul: batch shapes {list(a)} and "
                    f"{list(b)} do not broadcast)") from None
        raise


def _bmm_path(t1: Tensor, t2: Tensor) -> Tensor:
    d1, d2 = t1.ndim, t2.ndim
    n = t1.shape[-2] if d1 > 1 else 1
    m1 = t1.shape[-1]
    m2 = t2.shape[-2] if d2 > 1 else t2.shape[0]
    p = t2.shape[-1] if d2 > 1 else 1
    batch = _broadcast_batch(t1.shape[:max(d1 - 2, 0)], t2.shape[:max(d2 - 2, 0)])
    nb = int(np.prod(batch))
    a = F.reshape(F.expand(t1, batch + (n, m1)), (nb, n, m1))
    if d2 == 1:
        b = F.unsqueeze(F.reshape(F.expand(t2, batch + (m2,)), (nb, m2)), 2)
    else:
        b = F.reshape(F.expand(t2, batch + (m2, p)), (nb, m2, p))
    out_shape = batch + ((n,) if d1 > 1 else ()) + ((p,) if d2 > 1 else ())
    out = F.bmm(a, b)
    if d2 == 1:
        out = F.squeeze(out, -1)
    return dispatch(OPS["_unsafe_view"], out, size=out_shape)


def matmul(t1: Tensor, t2: Tensor) -> Tensor:
    """``t1 @ t2`` when either has more than two dimensions (see the module docstring).

    Example:
        >>> import gradviz
        >>> a = gradviz.ones(2, 3, 4, requires_grad=True)
        >>> (a @ gradviz.ones(4, 5)).grad_fn.name()
        'UnsafeViewBackward0'
    """
    if t1.ndim == 3 and t2.ndim == 3:
        # A batch of one facing a real batch is squeezed so that it folds (and its gradient is
        # computed by one mm instead of a reduction over an expanded batch).
        if t1.shape[0] == 1 and t2.shape[0] != 1 and t1.requires_grad:
            t1 = F.squeeze(t1, 0)
        elif t2.shape[0] == 1 and t1.shape[0] != 1 and t2.requires_grad:
            t2 = F.squeeze(t2, 0)
    if t1.ndim <= 2 and t2.ndim <= 2:
        return F.matmul(t1, t2)
    if _should_fold(t1, t2):
        return _fold(t1, t2)
    return _bmm_path(t1, t2)
