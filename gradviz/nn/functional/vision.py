"""Vision functions: pad, interpolate and upsample, pixel (un)shuffle, unfold and fold."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradviz.nn.functional.common import _no_bool, _no_int
from gradviz.nn.functional.conv_pool import adaptive_avg_pool1d, adaptive_avg_pool2d
from gradviz.ops import functional as _F
from gradviz.ops.derivatives import OPS
from gradviz.ops.dispatch import dispatch
from gradviz.tensor import Tensor, _is_number

__all__ = [
    "pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
    "pixel_unshuffle", "unfold", "fold"
]


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None
        ) -> Tensor:
    """Pad the last ``len(pad) // 2`` dimensions; ``pad`` is ``(left, right, top, bottom,
    ...)`` from the last dimension backwards. ``mode='constant'`` fills with ``value``
    (negative amounts crop; ``ConstantPadNdBackward0``); ``'reflect'`` mirrors without the
    edge (``ReflectionPad1DBackward0``/``2D``), ``'replicate'`` repeats the edge
    (``ReplicationPad1DBackward0``/``2D``), ``'circular'`` wraps around (PyTorch's copies
    into slices of a new tensor: ``CopySlices``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.pad(gradviz.ones(1, 2), (1, 1), value=0.5)
        tensor([[0.5000, 1.0000, 1.0000, 0.5000]])
    """
    if mode != "constant":
        return _pad_nonconstant(input, pad, mode, value)
    return _F.constant_pad_nd(input, pad, 0 if value is None else value)


pixel_shuffle = _F.pixel_shuffle
pixel_unshuffle = _F.pixel_unshuffle

_PAD_ROWS = {"reflect": "reflection_pad", "replicate": "replication_pad"}


def _pad_nonconstant(input: Tensor, pad: Sequence[int], mode: str, value: float | None
                     ) -> Tensor:
    """F.pad's 'reflect', 'replicate' and 'circular' modes, with PyTorch's checks and texts."""
    pad = tuple(int(p) for p in pad)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{input.ndim}")
    k = len(pad) // 2
    if mode == "circular" and k == 3 and input.ndim in (4, 5):
        return _pad_circular(input, pad)
    if k not in (1, 2) or input.ndim not in (k + 1, k + 2):
        if k == 3 and input.ndim in (4, 5):
            raise NotImplementedError(f"F.pad: 3-D padding with mode='{mode}' is not available "
                                      "in gradviz (1-D and 2-D are)")
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        return _pad_circular(input, pad)
    _no_bool(f"F.pad(mode='{mode}')", input, f"{_PAD_ROWS[mode]}{k}d")
    for i in range(k):
        dim = input.ndim - 1 - i
        lo, hi, n = pad[2 * i], pad[2 * i + 1], input.shape[dim]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError("Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({lo}, {hi}) at dimension "
                               f"{dim} of input {list(input.shape)}")
        if n + lo + hi < 1:
            raise RuntimeError(f"input (W: {n}) is too small. Calculated output W: {n + lo + hi}"
                               if k == 1 else f"input is too small at dimension {dim}: "
                               f"calculated output size {n + lo + hi}")
    return dispatch(OPS[f"{_PAD_ROWS[mode]}{k}d"], input, padding=pad)


def _pad_circular(input: Tensor, pad: tuple) -> Tensor:
    """PyTorch's ``_pad_circular``: a new tensor; the input copied into its middle; then, per
    padded dimension (the last first), its left border copied from the right end of the
    middle and its right border from the left end. Every copy is an in-place write into a
    slice (``CopySlices``), the corners written twice, as in PyTorch."""
    k = len(pad) // 2
    lead = input.ndim - k
    out_shape = list(input.shape)
    for i in range(k):
        lo, hi = pad[2 * (k - 1 - i)], pad[2 * (k - 1 - i) + 1]
        size = input.shape[lead + i]
        out_shape[lead + i] = size + lo + hi
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if out_shape[lead + i] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension.")
    out = input.new_empty(tuple(out_shape))
    out_slice, in_slice = out, input
    for i in range(k):
        dim = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        start = max(lo, 0)
        out_slice = out_slice.narrow(dim, start, out_shape[dim] - max(hi, 0) - start)
        start = max(-lo, 0)
        in_slice = in_slice.narrow(dim, start, input.shape[dim] - max(-hi, 0) - start)
    out_slice.copy_(in_slice)
    for i in range(k):
        dim = input.ndim - 1 - i
        lo, hi, n = pad[2 * i], pad[2 * i + 1], out_shape[dim]
        if lo > 0:
            out.narrow(dim, 0, lo).copy_(out.narrow(dim, n - lo - max(hi, 0), lo))
        if hi > 0:
            out.narrow(dim, n - hi, hi).copy_(out.narrow(dim, max(lo, 0), hi))
    return out


_INTERP_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resample the spatial dimensions (after N and C) to ``size`` or by ``scale_factor``.
    ``mode='nearest'`` (3-D or 4-D input: ``UpsampleNearest1DBackward0``/``2D``),
    ``'nearest-exact'`` (3-D, 4-D or 5-D: ``UpsampleNearestExact1DBackward0``/``2D``/``3D``),
    ``'linear'`` (3-D), ``'bilinear'`` and ``'bicubic'`` (4-D) and ``'trilinear'`` (5-D)
    (``UpsampleLinear1DBackward0``, ``UpsampleBilinear2DBackward0``,
    ``UpsampleBicubic2DBackward0``, ``UpsampleTrilinear3DBackward0``, with ``align_corners``),
    ``'area'`` (``adaptive_avg_pool1d``/``2d``). Each node saves ``output_size`` and the scales
    as given (None when ``size`` was).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.interpolate(gradviz.tensor([[[1.0, 2.0]]]), scale_factor=2)
        tensor([[[1., 1., 2., 2.]]])
        >>> F.interpolate(gradviz.tensor([[[1.0, 2.0]]]), size=3, mode="linear",
        ...               align_corners=True)
        tensor([[[1.0000, 1.5000, 2.0000]]])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    scale_factors: list | None = None
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format.")
            if not all(isinstance(x, (int, np.integer)) for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] "
                                "or Tuple[int, int, int], but got size with types "
                                f"{[type(x) for x in size]}")
            output_size: list | None = [int(x) for x in size]
        else:
            output_size = [int(size)] * dim
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in (N, "
                    "C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [math.floor(float(input.shape[i + 2]) * scale_factors[i])
                       for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and "
                         "requires a 4-D tensor as input")
    if antialias:
        raise NotImplementedError("F.interpolate: antialias=True is not available in gradviz")
    if output_size is None:  # PyTorch's C++: floor of each size times its factor
        output_size = [int(n * s) for n, s in zip(input.shape[2:], scale_factors)]
    if dim in (1, 2, 3) and min(list(input.shape[2:]) + list(output_size)) <= 0:
        names = ("D", "H", "W")[3 - dim:]
        ins, outs = (", ".join(f"{k}: {v}" for k, v in zip(names, sizes))
                     for sizes in (input.shape[2:], output_size))
        sep = " and" if dim == 1 else ""  # (PyTorch's two texts differ by this word)
        raise RuntimeError("Input and output sizes should be greater than 0, but got input "
                           f"({ins}){sep} output ({outs})")
    out_size = tuple(output_size)
    scales = tuple(scale_factors) if scale_factors is not None else (None,) * dim
    kernels = {("nearest", 1): "compute_indices_weights_nearest",
               ("nearest", 2): "upsample_nearest2d_channels_last",
               ("linear", 1): "compute_indices_weights_linear",
               ("bilinear", 2): "upsample_bilinear2d_channels_last",
               ("nearest-exact", 1): "compute_indices_weights_nearest",
               ("nearest-exact", 2): "upsample_nearest2d_channels_last",
               ("nearest-exact", 3): "compute_indices_weights_nearest",
               ("bicubic", 2): "compute_indices_weights_cubic",
               ("trilinear", 3): "compute_indices_weights_linear"}
    if (mode, dim) in kernels:
        _no_int("interpolate", input, kernels[mode, dim])
    if mode == "nearest" and dim in (1, 2):
        if dim == 1:
            return dispatch(OPS["upsample_nearest1d"], input, output_size=out_size,
                            scales=scales[0])
        return dispatch(OPS["upsample_nearest2d"], input, output_size=out_size,
                        scales_h=scales[0], scales_w=scales[1])
    if mode == "area" and dim in (1, 2):
        pool = adaptive_avg_pool1d if dim == 1 else adaptive_avg_pool2d
        return pool(input, out_size)
    if mode == "linear" and dim == 1:
        return dispatch(OPS["upsample_linear1d"], input, output_size=out_size,
                        align_corners=bool(align_corners), scales=scales[0])
    if mode == "bilinear" and dim == 2:
        return dispatch(OPS["upsample_bilinear2d"], input, output_size=out_size,
                        align_corners=bool(align_corners), scales_h=scales[0],
                        scales_w=scales[1])
    if mode == "nearest-exact" and dim in (1, 2, 3):
        names = ("scales",) if dim == 1 else ("scales_h", "scales_w") if dim == 2 else (
            "scales_d", "scales_h", "scales_w")
        return dispatch(OPS[f"upsample_nearest_exact{dim}d"], input, output_size=out_size,
                        **dict(zip(names, scales)))
    if mode == "bicubic" and dim == 2:
        return dispatch(OPS["upsample_bicubic2d"], input, output_size=out_size,
                        align_corners=bool(align_corners), scales_h=scales[0],
                        scales_w=scales[1])
    if mode == "trilinear" and dim == 3:
        return dispatch(OPS["upsample_trilinear3d"], input, output_size=out_size,
                        align_corners=bool(align_corners), scales_d=scales[0],
                        scales_h=scales[1], scales_w=scales[2])
    needs = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
    if mode in needs and input.ndim in (3, 4, 5):
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{needs[mode]}D input")
    if input.ndim in (3, 4, 5) and mode in _INTERP_MODES.split(" | "):
        raise NotImplementedError(f"F.interpolate: mode '{mode}' on {input.ndim}D input is not "
                                  "available in gradviz (nearest and area on 3D/4D input, "
                                  "nearest-exact on 3D/4D/5D, linear, bilinear, bicubic and "
                                  "trilinear are)")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                              f"{input.ndim}D) for the modes: {_INTERP_MODES} (got {mode})")


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated in PyTorch in favour of :func:`interpolate`, which it calls (with its
    warning).

    Example:
        >>> import warnings, gradviz
        >>> import gradviz.nn.functional as F
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     F.upsample(gradviz.tensor([[[1.0, 2.0]]]), scale_factor=2)
        tensor([[[1., 1., 2., 2.]]])
    """
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated in PyTorch: ``interpolate(mode='nearest')`` (with its warning).

    Example:
        >>> import warnings, gradviz
        >>> import gradviz.nn.functional as F
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     F.upsample_nearest(gradviz.tensor([[[1.0, 2.0]]]), 3).shape
        gradviz.Size([1, 1, 3])
    """
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated in PyTorch: ``interpolate(mode='bilinear', align_corners=True)`` (with its
    warning).

    Example:
        >>> import warnings, gradviz
        >>> import gradviz.nn.functional as F
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     F.upsample_bilinear(gradviz.ones(1, 1, 2, 2), 3).shape
        gradviz.Size([1, 1, 3, 3])
    """
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _pair(v: Any) -> tuple[int, int]:
    return (int(v), int(v)) if _is_number(v) else tuple(int(x) for x in v)


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """Every sliding ``kernel_size`` block of a (N, C, H, W) or (C, H, W) input as a column:
    (N, C * kh * kw, L) (``Im2ColBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.unfold(gradviz.arange(4.0).view(1, 1, 2, 2), 1)
        tensor([[[0., 1., 2., 3.]]])
    """
    k, d, p, s = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    if input._data.dtype.kind in "iu":  # (bools are unfolded, integers are not)
        _no_int("unfold", input, "im2col_out_cpu")
    if input.ndim not in (3, 4) or any(n == 0 for n in input.shape[1:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor for input with possibly 0 "
                           "batch size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    for name, v in (("kernel", k), ("stride", s), ("dilation", d)):
        if min(v) <= 0:
            raise RuntimeError(f"{name} should be greater than zero, but got {name}_height: "
                               f"{v[0]} {name}_width: {v[1]}")
    h, w = input.shape[-2:]
    oh, ow = ((n + 2 * pp - dd * (kk - 1) - 1) // ss + 1
              for n, kk, dd, pp, ss in zip((h, w), k, d, p, s))
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size={k}, "
                           f"dilation={d}, padding={p}, calculated shape of the array of "
                           f"sliding blocks as ({oh}, {ow}), but its components must be at "
                           "least one.")
    return dispatch(OPS["im2col"], input, kernel_size=k, dilation=d, padding=p, stride=s)


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Tensor:
    """The inverse arrangement of :func:`unfold`: each column of (N, C * kh * kw, L) added back
    at its block of a (N, C, *output_size) tensor, overlaps summed (``Col2ImBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.fold(gradviz.ones(1, 4, 4), (3, 3), 2)
        tensor([[[[1., 2., 1.],
                  [2., 4., 2.],
                  [1., 2., 1.]]]])
    """
    o, k, d = _pair(output_size), _pair(kernel_size), _pair(dilation)
    p, s = _pair(padding), _pair(stride)
    if input._data.dtype.kind in "iu":  # (bools are folded, integers are not)
        _no_int("fold", input, "col2im_out_cpu")
    if input.ndim not in (2, 3) or any(n == 0 for n in input.shape[1:]):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           "batch size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    c_k, length = input.shape[-2:]
    if c_k % (k[0] * k[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={c_k} and kernel_size={k}.")
    blocks = [(n + 2 * pp - dd * (kk - 1) - 1) // ss + 1 for n, kk, dd, pp, ss in zip(o, k, d, p,
                                                                                        s)]
    if blocks[0] * blocks[1] != length:
        raise RuntimeError(f"Given output_size={o}, kernel_size={k}, dilation={d}, padding={p}, "
                           f"stride={s}, expected size of input's dimension 2 to match the "
                           f"calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
                           f"{blocks[0] * blocks[1]}, but got input.size(2)={length}.")
    return dispatch(OPS["col2im"], input, output_size=o, kernel_size=k, dilation=d, padding=p,
                    stride=s)
