"""Distance functions: pairwise_distance and cosine_similarity."""

from __future__ import annotations

import numpy as np

from gradviz.autograd.grad_mode import no_grad
from gradviz.ops import functional as _F
from gradviz.ops.derivatives import OPS
from gradviz.ops.dispatch import broadcast_message, dispatch, dispatch_inplace
from gradviz.tensor import Tensor

__all__ = [
    "cosine_similarity", "pairwise_distance"
]


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``sum(x1 * x2) / (|x1| |x2|)`` along ``dim``, recorded as PyTorch computes it: each
    input divided by its norm (``LinalgVectorNormBackward0``, cloned then clamped to ``eps``
    without recording), the product summed over ``dim`` (``SumBackward1``). Inputs of
    different shapes are both expanded first (``ExpandBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.cosine_similarity(gradviz.tensor([[1.0, 0.0]]), gradviz.tensor([[1.0, 1.0]]))
        tensor([0.7071])
    """
    if x1.shape != x2.shape:
        try:
            shape = tuple(np.broadcast_shapes(x1.shape, x2.shape))
        except ValueError:
            raise RuntimeError(broadcast_message("cosine_similarity",
                                                 [x1.shape, x2.shape])) from None
        x1, x2 = _F.expand(x1, shape), _F.expand(x2, shape)
    d = dim  # as given: PyTorch's nodes save the dim unwrapped
    n1 = _F.clone(_F.norm(x1, 2, d, keepdim=True))
    n2 = _F.clone(_F.norm(x2, 2, d, keepdim=True))
    with no_grad():
        # the clamp only guards the division: PyTorch does it in place, unrecorded
        dispatch_inplace(OPS["clamp_min"], n1, min=eps)
        dispatch_inplace(OPS["clamp_min"], n2, min=eps)
    return _F.sum(_F.mul(_F.div(x1, n1), _F.div(x2, n2)), d)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` over the last dimension, recorded as PyTorch's C++
    computes it (``SubBackward0``, ``AddBackward1``, ``NormBackward1``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.pairwise_distance(gradviz.tensor([[3.0, 4.0]]), gradviz.zeros(1, 2), eps=0.0)
        tensor([5.])
    """
    nd = max(x1.ndim, x2.ndim)
    diff = dispatch(OPS["add_scalar"], _F.sub(x1, x2), other=eps)
    return dispatch(OPS["norm_dim"], diff, p=p, dim=(max(nd - 1, 0),), keepdim=bool(keepdim))
