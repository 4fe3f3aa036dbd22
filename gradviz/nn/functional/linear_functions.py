"""Linear functions: linear (``addmm`` over ``t()`` for a 2-D input with a bias) and bilinear."""

from __future__ import annotations

import numpy as np

from gradviz.ops import functional as _F
from gradviz.ops.derivatives import OPS
from gradviz.ops.dispatch import dispatch
from gradviz.tensor import Tensor

__all__ = [
    "linear", "bilinear"
]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``, decomposed as PyTorch decomposes it:

    * 2-D input with a bias: ``addmm(bias, input, weight.t())`` (``AddmmBackward0``, with
      ``TBackward0`` on the weight);
    * a contiguous N-D input with a bias that is one row (1-D, or 1-D once squeezed): the same
      on ``input`` flattened to 2-D (its ``reshape`` made before ``weight.t()``), viewed back;
    * otherwise ``matmul(input, weight.t())``, plus ``bias`` added in place.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> w = gradviz.ones(3, 2, requires_grad=True)
        >>> F.linear(gradviz.ones(4, 2), w, gradviz.zeros(3)).grad_fn.name()
        'AddmmBackward0'
    """
    # NOTE [linear's node order] The nodes are made in ATen's order (torch 2.13, checked with a
    # TorchDispatchMode log), which fixes their sequence numbers and so the order the engine
    # runs them in: on the flattened path the input's reshape comes before ``weight.t()`` (the
    # input's ``ViewBackward0`` numbered below ``TBackward0``, so ``TBackward0`` runs first);
    # on the matmul path ``weight.t()`` comes first.
    if bias is not None and input.ndim == 2:
        return _F.addmm(bias, input, _F.t(weight))
    if bias is not None:
        # ATen asks "is the bias one row?" as ``bias.dim() == 1 || bias.squeeze().dim() == 1``,
        # before looking at the input's layout. The squeeze is a real op: its node is in no
        # graph, but it takes a sequence number when the bias requires grad, as in PyTorch.
        one_row = bias.ndim == 1 or _F.squeeze(bias).ndim == 1
        if one_row and input._data.flags.c_contiguous:
            shape = input.shape
            flat = _F.reshape(input, (int(np.prod(shape[:-1])), shape[-1]))
            out = _F.addmm(bias, flat, _F.t(weight))
            return _F.view(out, shape[:-1] + (out.shape[1],))
    out = _F.matmul(input, _F.t(weight))
    if bias is not None:
        out = _F.add_(out, bias)
    return out


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] (+ bias[o])``,
    recorded as PyTorch's C++ computes it: both inputs flattened to 2-D (``ViewBackward0``),
    ``_trilinear`` (``TrilinearBackward0``), the result viewed back, then ``+ bias``.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.bilinear(gradviz.ones(1, 2), gradviz.ones(1, 3), gradviz.ones(4, 2, 3))
        tensor([[6., 6., 6., 6.]])
    """
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: "
                               f"got {input1.shape[i]} and {input2.shape[i]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0]} but expected {weight.shape[0]}")
    out_shape = tuple(input1.shape[:-1]) + (weight.shape[0],)
    a = input1.reshape(-1, input1.shape[-1])
    b = input2.reshape(-1, input2.shape[-1])
    out = dispatch(OPS["_trilinear"], a, weight, b, expand1=(1, 3), expand2=(0,),
                   expand3=(1, 2), sumdim=(2, 3), unroll_dim=1).reshape(out_shape)
    return out if bias is None else _F.add(out, bias)
