"""Normalization functions: batch_norm, layer_norm, group_norm, instance_norm, rms_norm,
local_response_norm and normalize."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from gradviz.autograd.grad_mode import no_grad
from gradviz.nn.functional.common import _no_int
from gradviz.nn.functional.conv_pool import avg_pool2d, avg_pool3d
from gradviz.nn.functional.vision import pad
from gradviz.ops import functional as _F
from gradviz.ops.derivatives import OPS
from gradviz.ops.dispatch import dispatch
from gradviz.tensor import Tensor, _is_number

__all__ = [
    "layer_norm", "batch_norm", "normalize", "group_norm", "instance_norm", "rms_norm",
    "local_response_norm"
]


def layer_norm(input: Tensor, normalized_shape: int | Sequence[int],
               weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5
               ) -> Tensor:
    """Normalize over the last ``len(normalized_shape)`` dimensions, then scale by ``weight``
    and shift by ``bias`` (``NativeLayerNormBackward0``, which saves the mean and 1/std).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.layer_norm(gradviz.tensor([[1.0, 3.0]]), (2,))
        tensor([[-1.0000,  1.0000]])
    """
    if not isinstance(normalized_shape, (tuple, list)):  # F.layer_norm takes no bare int
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(normalized_shape).__name__}")
    ns = tuple(int(s) for s in normalized_shape)
    if not ns or input.shape[input.ndim - len(ns):] != ns or input.ndim < len(ns):
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size"
                           f"{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.shape != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(ns)}")
    out, _, _ = dispatch(OPS["layer_norm"], input, weight, bias, normalized_shape=ns,
                         eps=float(eps))
    return out


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each channel (dimension 1) by the batch's mean and biased variance in
    training, updating ``running_mean``/``running_var`` in place with ``momentum`` (the
    variance unbiased), or by the running statistics in evaluation; then scale by ``weight``
    and shift by ``bias`` (``NativeBatchNormBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> rm, rv = gradviz.zeros(1), gradviz.ones(1)
        >>> F.batch_norm(gradviz.tensor([[1.0], [3.0]]), rm, rv, training=True, eps=0.0)
        tensor([[-1.],
                [ 1.]])
        >>> rm, rv
        (tensor([0.2000]), tensor([1.1000]))
    """
    if training:
        # torch counts the batch times the spatial sizes: channels of size 0 are no error
        per_channel = input.shape[0] * math.prod(input.shape[2:]) if input.ndim else 1
        if per_channel == 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size torch.Size({list(input.shape)})")
    return _F.batch_norm(input, weight, bias, running_mean, running_var, training,
                         0.0 if momentum is None else momentum, eps)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """``input`` divided by its ``p``-norm along ``dim`` (at least ``eps``), recorded as
    PyTorch's Python writes it: ``input.norm(p, dim, keepdim=True).clamp_min(eps)
    .expand_as(input)`` then ``input / denom``.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.normalize(gradviz.tensor([[3.0, 4.0]]))
        tensor([[0.6000, 0.8000]])
    """
    if out is not None:
        raise RuntimeError("normalize(out=...): gradviz returns a new tensor; assign the result "
                           "instead of passing out=")
    denom = _F.expand(_F.clamp_min(_F.norm(input, p, dim, keepdim=True), eps), input.shape)
    return _F.div(input, denom)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalize each sample's channels in ``num_groups`` groups (mean and biased variance
    over a group's channels and positions), then scale by ``weight`` and shift by ``bias`` per
    channel (``NativeGroupNormBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.group_norm(gradviz.tensor([[1.0, 3.0, 5.0, 7.0]]), 2, eps=0.0)
        tensor([[-1.,  1., -1.,  1.]])
    """
    if input.ndim < 2:
        raise RuntimeError("Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    _no_int("group_norm", input, "GroupNormKernelImpl")
    n, c = input.shape[0], input.shape[1]
    per_group = [n * c // num_groups, num_groups] + list(input.shape[2:])
    if per_group[0] * math.prod(per_group[2:]) == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input "
                         f"size {per_group}")
    if c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {list(input.shape)} and num_groups="
                           f"{num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != c):
            # PyTorch's text for the bias shows the weight's shape ([0] when there is none).
            shown = list(weight.shape) if weight is not None else [0]
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape "
                               f"{list(t.shape) if name == 'weight' else shown} and input of "
                               f"shape {list(input.shape)}")
    hxw = math.prod(input.shape[2:])
    out, _, _ = dispatch(OPS["native_group_norm"], input, weight, bias, N=int(n), C=int(c),
                         HxW=int(hxw), group=int(num_groups), eps=float(eps))
    return out


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each (sample, channel) plane by its own statistics, recorded as PyTorch
    computes it: the input viewed as one sample of N * C channels (``ViewBackward0``),
    ``batch_norm`` in training mode (``NativeBatchNormBackward0``, with ``weight``/``bias``
    repeated N times: ``RepeatBackward0``), viewed back. Running statistics, if given, get the
    mean over the batch of the updated per-sample ones.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.instance_norm(gradviz.tensor([[[1.0, 3.0], [2.0, 6.0]]]), eps=0.0)
        tensor([[[-1.,  1.],
                 [-1.,  1.]]])
    """
    if use_input_stats:
        if math.prod(input.shape[2:]) == 1:  # (the empty product of a 2-D input too)
            raise ValueError("Expected more than 1 spatial element when training, got input "
                             f"size torch.Size({list(input.shape)})")
    _no_int("instance_norm", input, "batch_norm")
    b, c = input.shape[0], input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t._data.size != c:
            raise RuntimeError(f"{name} should contain {b * c} elements not {t._data.size * b}")
    weight_, bias_ = (None if t is None else t.repeat(b) for t in (weight, bias))
    rm_, rv_ = (None if t is None else t.repeat(b) for t in (running_mean, running_var))
    reshaped = input.contiguous().view((1, b * c) + tuple(input.shape[2:]))
    out = _F.batch_norm(reshaped, weight_, bias_, rm_, rv_, use_input_stats, momentum, eps)
    with no_grad():  # PyTorch copies the batch's mean of the updated statistics back
        for t, t_ in ((running_mean, rm_), (running_var, rv_)):
            if t is not None:
                t.copy_(t_.view(b, c).mean(0))
    return out.view(input.shape)


def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """Divide by the root mean square over the last ``len(normalized_shape)`` dimensions
    (plus ``eps``, by default the dtype's machine epsilon), then scale by ``weight``. Recorded
    as PyTorch's composite: ``pow``, ``mean``, ``+ eps`` (``AddBackward1``), ``rsqrt``, two
    ``mul``.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.rms_norm(gradviz.tensor([[3.0, 4.0]]), (2,), eps=0.0)
        tensor([[0.8485, 1.1314]])
    """
    ns = (int(normalized_shape),) if _is_number(normalized_shape) else tuple(
        int(s) for s in normalized_shape)
    if input.ndim < len(ns) or tuple(input.shape[input.ndim - len(ns):]) != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*{', '.join(map(str, ns))}], but got input of size"
                           f"{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != ns:
        raise RuntimeError("Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(ns)}")
    _no_int("rms_norm", input, "rms_norm")
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    dims = tuple(range(input.ndim - 1, input.ndim - len(ns) - 1, -1))  # last first, as torch
    ms = _F.mean(_F.pow(input, 2), dims, keepdim=True)
    out = _F.mul(input, _F.rsqrt(dispatch(OPS["add_scalar"], ms, other=eps)))
    return out if weight is None else _F.mul(out, weight)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Divide each element by ``(k + alpha * mean of the squares of the ``size`` neighbouring
    channels) ** beta``, recorded as PyTorch's Python computes it: the squares padded along
    the channels (``ConstantPadNdBackward0``) and averaged by ``avg_pool2d`` (3-D input) or
    ``avg_pool3d`` over a view with one channel (4-D and up).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.local_response_norm(gradviz.ones(1, 2, 1), 2, alpha=1.0, beta=1.0, k=0.0)
        tensor([[[2.],
                 [1.]]])
    """
    dim = input.ndim
    if dim < 3:
        raise ValueError("Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input._data.size == 0:
        return input
    div = _F.mul(input, input)
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = tuple(input.shape)
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return _F.div(input, div)
