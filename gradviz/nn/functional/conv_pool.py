"""Convolution and pooling functions: conv1d/2d/3d and the transposed ones, max, average,
adaptive and power-average pooling."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradviz.nn.functional.activations import relu
from gradviz.nn.functional.common import _no_bool, _no_int
from gradviz.ops import functional as _F
from gradviz.ops.derivatives import OPS
from gradviz.ops.dispatch import dispatch
from gradviz.tensor import Tensor, _is_number

__all__ = [
    "conv1d", "conv2d", "conv_transpose2d", "max_pool1d", "max_pool2d", "avg_pool2d",
    "adaptive_avg_pool2d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "lp_pool1d", "lp_pool2d", "conv_transpose1d", "conv3d", "avg_pool3d",
    "max_pool3d"
]


conv1d = _F.conv1d
conv2d = _F.conv2d
conv_transpose2d = _F.conv_transpose2d
max_pool1d = _F.max_pool1d
max_pool2d = _F.max_pool2d


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window of the last two dimensions (``AvgPool2DBackward0``). Zero
    padding counts in the mean unless ``count_include_pad=False``; ``divisor_override``
    replaces the window size as the divisor.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.avg_pool2d(gradviz.arange(16.0).view(1, 1, 4, 4), 2)
        tensor([[[[ 2.5000,  4.5000],
                  [10.5000, 12.5000]]]])
    """
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    k, s, p, _ = _F._pool_args("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode)
    return dispatch(OPS["avg_pool2d"], input, kernel_size=k, stride=s, padding=p,
                    ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
                    divisor_override=divisor_override)


def adaptive_avg_pool2d(input: Tensor, output_size: int | Sequence[int | None]) -> Tensor:
    """Average pooling to a fixed ``output_size`` (``None`` keeps that side): window ``i`` of
    a side ``n`` covers ``[floor(i * n / o), ceil((i + 1) * n / o))``. Recorded as
    ``AdaptiveAvgPool2DBackward0``, or, for output size 1, as PyTorch's
    ``mean((-1, -2), keepdim=True)`` (``MeanBackward1``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.adaptive_avg_pool2d(gradviz.arange(6.0).view(1, 2, 3), (1, 2))
        tensor([[[2., 3.]]])
    """
    if input.ndim not in (3, 4) or any(n == 0 for n in input.shape[-2:]):
        raise RuntimeError("adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(input.shape)}")
    sizes = (output_size, output_size) if isinstance(output_size, (int, np.integer)) else tuple(
        output_size)
    if len(sizes) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    out = tuple(int(n if o is None else o) for o, n in zip(sizes, input.shape[-2:]))
    if out == (1, 1):
        return input.mean((-1, -2), keepdim=True)
    return dispatch(OPS["_adaptive_avg_pool2d"], input, output_size=out)


conv_transpose1d = _F.conv_transpose1d
conv3d = _F.conv3d


def _check_1d(name: str, input: Tensor) -> None:
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           f"for argument #1 'self' (while checking arguments for {name})")


def _one(name: str, v: Any) -> int:
    """An int or a 1-sequence, as 1-D pooling takes its sizes."""
    if _is_number(v):
        return int(v)
    v = tuple(v)
    if len(v) != 1:
        raise RuntimeError(f"{name} must be a single int, or a tuple of one int")
    return int(v[0])


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """The mean of each window of the last dimension, recorded as PyTorch records it:
    ``avg_pool2d`` over a height of 1 between ``unsqueeze(-2)`` and ``squeeze(-2)``.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.avg_pool1d(gradviz.tensor([[[1.0, 3.0, 2.0, 6.0]]]), 2)
        tensor([[[2., 4.]]])
    """
    _check_1d("avg_pool1d", input)
    _no_bool("avg_pool1d", input, "avg_pool2d")
    k = _one("kernel_size", kernel_size)
    s = k if stride is None or (not _is_number(stride) and len(stride) == 0) else _one(
        "stride", stride)
    out = avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, _one("padding", padding)),
                     ceil_mode, count_include_pad)
    return out.squeeze(-2)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling of the last dimension to ``output_size``: ``adaptive_avg_pool2d`` over
    a height of 1, between ``unsqueeze(-2)`` and ``squeeze(-2)`` (as PyTorch).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.adaptive_avg_pool1d(gradviz.tensor([[1.0, 3.0, 2.0, 6.0]]), 2)
        tensor([[2., 4.]])
    """
    _check_1d("adaptive_avg_pool1d", input)
    _no_int("adaptive_avg_pool1d", input, "adaptive_avg_pool2d")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, _one("output_size", output_size))
                               ).squeeze(-2)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """The maximum of each adaptive window (window ``i`` of a side ``n`` covers
    ``[floor(i * n / o), ceil((i + 1) * n / o))``; ``None`` keeps that side). Records
    ``AdaptiveMaxPool2DBackward0``, which saves the indices (flat positions in each H*W plane)
    as ``_saved_result1``.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.adaptive_max_pool2d(gradviz.arange(6.0).view(1, 2, 3), (1, 2))
        tensor([[[4., 5.]]])
    """
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: "
                           f"{list(input.shape)}")
    sizes = (output_size, output_size) if _is_number(output_size) else tuple(output_size)
    if len(sizes) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    _no_int("adaptive_max_pool2d", input, "adaptive_max_pool2d")
    out_size = tuple(int(n if o is None else o) for o, n in zip(sizes, input.shape[-2:]))
    for d in (-2, -1):
        if input.shape[d] == 0:
            raise RuntimeError("adaptive_max_pool2d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {list(input.shape)} "
                               f"with dimension {input.ndim + d} being empty")
    out, indices = dispatch(OPS["adaptive_max_pool2d"], input, output_size=out_size)
    return (out, indices) if return_indices else out


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """The maximum of each adaptive window of the last dimension: ``adaptive_max_pool2d`` over
    a height of 1, between ``unsqueeze(-2)`` and ``squeeze(-2)`` (as PyTorch).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.adaptive_max_pool1d(gradviz.tensor([[1.0, 3.0, 2.0, 6.0]]), 2)
        tensor([[3., 6.]])
    """
    _check_1d("adaptive_max_pool1d", input)
    out, indices = adaptive_max_pool2d(input.unsqueeze(-2),
                                       (1, _one("output_size", output_size)), True)
    out, indices = out.squeeze(-2), indices.squeeze(-2)
    return (out, indices) if return_indices else out


def _lp_tail(out: Tensor, norm_type: float, window: int) -> Tensor:
    # PyTorch's Python: (sign(out) * relu(abs(out))).mul(window).pow(1 / norm_type)
    return _F.pow(_F.mul(_F.mul(_F.sign(out), relu(_F.abs(out))), window), 1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """The ``norm_type``-norm of each window of the last dimension: ``avg_pool1d`` of
    ``input ** p``, times the window size, to the power ``1 / p`` (PyTorch's composite).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.lp_pool1d(gradviz.tensor([[[3.0, 4.0]]]), 2, 2)
        tensor([[[5.]]])
    """
    out = avg_pool1d(_F.pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_tail(out, norm_type, _one("kernel_size", kernel_size))


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """The ``norm_type``-norm of each window of the last two dimensions: ``avg_pool2d`` of
    ``input ** p``, times the window size, to the power ``1 / p`` (PyTorch's composite).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.lp_pool2d(gradviz.tensor([[[[1.0, 1.0], [1.0, 1.0]]]]), 1, 2)
        tensor([[[[4.]]]])
    """
    kh, kw = (kernel_size, kernel_size) if _is_number(kernel_size) else tuple(kernel_size)
    out = avg_pool2d(_F.pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_tail(out, norm_type, int(kh) * int(kw))


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window of the last three dimensions (``AvgPool3DBackward0``), with
    :func:`avg_pool2d`'s options.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.avg_pool3d(gradviz.arange(8.0).view(1, 1, 2, 2, 2), 2)
        tensor([[[[[3.5000]]]]])
    """
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    k = _F._ints("kernel_size", kernel_size, 3, "pooling")
    s = () if stride is None or (not _is_number(stride) and len(stride) == 0) else _F._ints(
        "stride", stride, 3, "pooling")
    p = _F._ints("padding", padding, 3, "pooling")
    if input.ndim not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if 0 in input.shape[-4:]:  # only a batch (of a 5-D input) may be empty; torch's text
        raise RuntimeError("avg_pool3d(): Expected input's non-batch dimensions to have "
                           f"positive length, but input has a shape of {list(input.shape)} "
                           "and non-batch dimension 0 has length zero!")
    _no_bool("avg_pool3d", input, "avg_pool3d_out_frame")
    if min(k + (s or k)) <= 0:
        raise RuntimeError(f"avg_pool3d: kernel_size and stride must be greater than zero, got "
                           f"kernel_size={list(k)}, stride={list(s or k)}")
    for pp, kk in zip(p, k):
        if pp > kk // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation=1")
    from gradviz.ops._kernels import pool_out_size

    sizes = tuple(input.shape[-3:])
    outs = tuple(pool_out_size(n, kk, ss, pp, 1, ceil_mode)
                 for n, kk, ss, pp in zip(sizes, k, s or k, p))
    if min(outs) < 1:
        c = input.shape[-4]
        raise RuntimeError(f"Given input size: ({c}x{'x'.join(map(str, sizes))}). Calculated "
                           f"output size: ({c}x{'x'.join(map(str, outs))}). Output size is too "
                           "small")
    return dispatch(OPS["avg_pool3d"], input, kernel_size=k, stride=s, padding=p,
                    ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
                    divisor_override=divisor_override)


def _three(what: str, v: Any, verb: str = "must either be") -> tuple[int, ...]:
    """``v`` (an int, or one or three ints) as three ints, with max_pool3d's text."""
    t = (int(v),) if _is_number(v) else tuple(int(x) for x in v)
    if len(t) not in (1, 3):
        raise RuntimeError(f"max_pool3d: {what} {verb} a single int, or a tuple of three ints")
    return t * 3 if len(t) == 1 else t


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """The maximum of each (dilated) window of the last three dimensions
    (``MaxPool3DWithIndicesBackward0``, saving the indices as ``_saved_result1``); with
    ``return_indices`` also the flat position of each maximum in its D*H*W volume.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.max_pool3d(gradviz.arange(8.0).view(1, 1, 2, 2, 2), 2, return_indices=True)
        (tensor([[[[[7.]]]]]), tensor([[[[[7]]]]]))
    """
    k = _three("kernel_size", kernel_size)
    no_stride = stride is None or (not _is_number(stride) and len(stride) == 0)
    s = () if no_stride else _three("stride", stride, "must either be omitted,")
    p, d = _three("padding", padding), _three("dilation", dilation, "must be either")
    if input.ndim not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    from gradviz.ops._kernels import pool_out_size

    sizes, outs = tuple(input.shape[-3:]), []
    for n, kk, ss, pp, dd in zip(sizes, k, s or k, p, d):  # PyTorch's pooling_output_shape
        if ss == 0:
            raise RuntimeError("stride should not be zero")
        if pp < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pp}")
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation={dd}")
        outs.append(pool_out_size(n, kk, ss, pp, dd, ceil_mode))
    for name, short, v in (("kernel size", "k", k), ("stride", "d", s or k),
                           ("dilation", "dilation", d)):
        if min(v) <= 0:
            raise RuntimeError(f"{name} should be greater than zero, but got {short}T: {v[0]} "
                               f"{short}H: {v[1]} {short}W: {v[2]}")
    if 0 in input.shape[-4:]:  # only a batch (of a 5-D input) may be empty; torch's text
        raise RuntimeError("max_pool3d_with_indices_out_cpu_template(): Expected input's "
                           "non-batch dimensions to have positive length, but input has a "
                           f"shape of {list(input.shape)} and non-batch dimension 0 has length "
                           "zero!")
    if min(outs) < 1:
        c = input.shape[-4]
        raise RuntimeError(f"Given input size: ({c}x{'x'.join(map(str, sizes))}). Calculated "
                           f"output size: ({c}x{'x'.join(map(str, outs))}). Output size is too "
                           "small")
    _no_bool("max_pool3d", input, "max_pool3d")
    out, indices = dispatch(OPS["max_pool3d_with_indices"], input, kernel_size=k, stride=s,
                            padding=p, dilation=d, ceil_mode=bool(ceil_mode))
    return (out, indices) if return_indices else out
