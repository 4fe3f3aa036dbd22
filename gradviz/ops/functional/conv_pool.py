"""Convolution, pooling, batch normalization, constant padding, pixel (un)shuffle."""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradviz.ops.dispatch import (
    dispatch,
)
from gradviz.ops.functional.arithmetic import add, mul
from gradviz.ops.functional.common import _O, _TYPE_NAMES, _ints
from gradviz.ops.functional.indexing import select
from gradviz.tensor import Tensor, _is_number

__all__ = [
    "convolution", "conv1d", "conv2d", "conv_transpose2d", "max_pool1d", "max_pool2d",
    "batch_norm", "constant_pad_nd", "conv_transpose1d", "conv3d", "pixel_shuffle",
    "pixel_unshuffle"
]


def _conv_dtype(input: Tensor, other: Tensor | None, name: str) -> None:
    if other is not None and other._data.dtype != input._data.dtype:
        a, b = (_TYPE_NAMES.get(str(t._data.dtype), str(t._data.dtype)) for t in (input, other))
        raise RuntimeError(f"Input type ({a}) and {name} type ({b}) should be the same")


def _conv_checks(input: Tensor, weight: Tensor, bias: Tensor | None, padding: tuple,
                 dilation: tuple, groups: int, transposed: bool) -> None:
    """PyTorch's shape checks of ``convolution`` (its texts), on a batched input."""
    w = list(weight.shape)
    if weight.shape[0] % groups and not transposed:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size {w} instead")
    want = weight.shape[0] if transposed else weight.shape[1] * groups
    if input.shape[1] != want:
        head = "transposed=1, " if transposed else ""
        raise RuntimeError(f"Given {head}groups={groups}, weight of size {w}, expected "
                           f"input{list(input.shape)} to have {want} channels, but got "
                           f"{input.shape[1]} channels instead")
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias is not None and tuple(bias.shape) != (out_channels,):
        raise RuntimeError(f"Given weight of size {w}, expected bias to be 1-dimensional with "
                           f"{out_channels} elements, but got bias of size {list(bias.shape)} "
                           "instead")
    _conv_dtype(input, weight, "weight")
    _conv_dtype(input, bias, "bias")
    if not transposed:
        padded = [n + 2 * p for n, p in zip(input.shape[2:], padding)]
        kernel = [d * (k - 1) + 1 for k, d in zip(weight.shape[2:], dilation)]
        if builtins.any(k > n for k, n in zip(kernel, padded)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                f"Kernel size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater "
                "than actual input size")


def _conv_param_checks(full: dict[str, tuple], groups: int) -> None:
    """PyTorch's first checks of a convolution's parameters (before any shape check)."""
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if builtins.any(p < 0 for p in full["padding"]):
        raise RuntimeError("negative padding is not supported")
    if builtins.any(p < 0 for p in full["output_padding"]):
        raise RuntimeError("negative output_padding is not supported")
    if builtins.any(s <= 0 for s in full["stride"]):
        raise RuntimeError("non-positive stride is not supported")
    if builtins.any(d < 0 for d in full["dilation"]):
        raise RuntimeError("dilation should be greater than zero")


def _conv_zero_dilation(input: Tensor, weight: Tensor, dilation: tuple, groups: int,
                        transposed: bool) -> None:
    """A dilation of 0, which PyTorch refuses only in the kernel it picks, after the shape checks
    (an empty batch runs no kernel and is accepted).

    NOTE [conv dilation 0]: the text is the kernel's. For float32 PyTorch's CPU build takes
    oneDNN when ``groups > 1``, the batch has more than one sample, both kernel sides exceed 3
    or the input's first four sizes multiply to more than 20480 (its ``use_mkldnn``), and says
    "non-positive dilation is not supported"; otherwise (float64 always) its own kernels say
    "dilation should be greater than zero, but got ..." with the dilation as they see it: a
    1-D convolution is a 2-D one of height 1, a transposed one names height and width. (For a
    float32 transposed convolution oneDNN fails with an internal message; gradviz gives the
    other kernels' text there.)"""
    if builtins.all(d != 0 for d in dilation) or input.shape[0] == 0:
        return
    dims = list(dilation) if len(dilation) != 1 else [1, dilation[0]]
    if transposed:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{dims[0]}, dilation_width: {dims[1]}")
    sizes = list(input.shape[:4]) + [1] * (4 - input.ndim)
    kernel = list(weight.shape[2:]) if weight.ndim > 3 else [1, weight.shape[-1]]
    onednn = input._data.dtype == np.float32 and (
        groups > 1 or sizes[0] > 1 or (kernel[-1] > 3 and kernel[-2] > 3)
        or int(np.prod(sizes)) > 20480)
    if onednn:
        raise RuntimeError("non-positive dilation is not supported")
    raise RuntimeError(f"dilation should be greater than zero, but got {dims}")


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Sequence[int],
                padding: Sequence[int], dilation: Sequence[int], transposed: bool,
                output_padding: Sequence[int], groups: int) -> Tensor:
    """The convolution every ``conv*`` calls (``ConvolutionBackward0``), on a batched input.

    Example:
        >>> import gradviz
        >>> y = gradviz.convolution(gradviz.ones(1, 1, 3, 3), gradviz.ones(1, 1, 2, 2), None,
        ...                         (1, 1), (0, 0), (1, 1), False, (0, 0), 1)
        >>> y
        tensor([[[[4., 4.],
                  [4., 4.]]]])
    """
    nd = input.ndim - 2
    # Checked against the dimensions but saved as given: PyTorch saves 'valid' as (0,).
    full = {n: _ints(n, v, nd) for n, v in (("stride", stride), ("padding", padding),
                                            ("dilation", dilation),
                                            ("output_padding", output_padding))}
    stride, padding, dilation = (tuple(int(x) for x in ((v,) if _is_number(v) else v))
                                 for v in (stride, padding, dilation))
    _conv_param_checks(full, groups)
    _conv_checks(input, weight, bias, full["padding"], full["dilation"], groups, transposed)
    _conv_zero_dilation(input, weight, full["dilation"], groups, transposed)
    return dispatch(_O["convolution"], input, weight, bias, stride=stride, padding=padding,
                    dilation=dilation, transposed=bool(transposed),
                    output_padding=tuple(output_padding), groups=int(groups))


def _conv_nd(name: str, nd: int, input: Tensor, weight: Tensor, bias: Tensor | None,
             stride: Any, padding: Any, dilation: Any, groups: int) -> Tensor:
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    if weight.ndim != nd + 2:
        raise RuntimeError(f"weight should have at least three dimensions ({name} expects a "
                           f"weight of {nd + 2} dimensions (out_channels, in_channels / groups, "
                           f"*kernel), got size {list(weight.shape)})")
    unbatched = input.ndim == nd + 1
    if unbatched:  # PyTorch adds the batch dimension and removes it again
        input = input.unsqueeze(0)
    stride, dilation = _ints("stride", stride, nd), _ints("dilation", dilation, nd)
    output_padding: tuple = (0,) * nd
    if isinstance(padding, str):
        if padding == "valid":
            padding = output_padding = (0,)  # what PyTorch passes on (and saves)
        elif padding == "same":
            if builtins.any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            input, padding = _pad_same(input, weight, dilation)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _ints("padding", padding, nd)
    out = convolution(input, weight, bias, stride, padding, dilation, False, output_padding,
                      groups)
    return out.squeeze(0) if unbatched else out


def _pad_same(input: Tensor, weight: Tensor, dilation: tuple) -> tuple[Tensor, tuple]:
    """'same' padding: ``d * (k - 1)`` in total per dimension, half on each side; an odd total
    puts its extra element on the right, with a ``constant_pad_nd`` first (as PyTorch)."""

    total = [d * (k - 1) for k, d in zip(weight.shape[2:], dilation)]
    left = tuple(t // 2 for t in total)
    extra = [t - 2 * lo for t, lo in zip(total, left)]
    if builtins.any(extra):
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may "
                      "require a zero-padded copy of the input be created", UserWarning,
                      stacklevel=4)
        pad: list[int] = []
        for e in reversed(extra):  # F.pad's order: the last dimension first
            pad += [0, e]
        input = constant_pad_nd(input, pad)
    return input, left


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D cross-correlation of ``input`` (N, C, L) or (C, L) with ``weight``
    (out_channels, C / groups, k); ``padding`` may be an int, a tuple, ``'same'`` or
    ``'valid'``. Records ``ConvolutionBackward0``.

    Example:
        >>> import gradviz
        >>> gradviz.conv1d(gradviz.tensor([[[1.0, 2.0, 3.0]]]), gradviz.ones(1, 1, 2))
        tensor([[[3., 5.]]])
    """
    return _conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D cross-correlation of ``input`` (N, C, H, W) or (C, H, W) with ``weight``
    (out_channels, C / groups, kh, kw); ``padding`` may be an int, a tuple, ``'same'`` or
    ``'valid'``. Records ``ConvolutionBackward0`` (its gradients are convolutions too).

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(1, 1, 3, 3, requires_grad=True)
        >>> y = gradviz.conv2d(x, gradviz.ones(2, 1, 2, 2), stride=1)
        >>> y.shape, y.grad_fn.name(), y.grad_fn._saved_stride
        (gradviz.Size([1, 2, 2, 2]), 'ConvolutionBackward0', (1, 1))
    """
    return _conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """The transpose (adjoint) of :func:`conv2d`: ``weight`` is (in_channels,
    out_channels / groups, kh, kw); each output side is
    ``(n - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``.
    Records ``ConvolutionBackward0`` with ``_saved_transposed == True``.

    Example:
        >>> import gradviz
        >>> gradviz.conv_transpose2d(gradviz.ones(1, 1, 2, 2), gradviz.ones(1, 1, 2, 2))
        tensor([[[[1., 2., 1.],
                  [2., 4., 2.],
                  [1., 2., 1.]]]])
    """
    if input.ndim not in (3, 4):
        raise RuntimeError("Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, "
                           f"but got input of size: {list(input.shape)}")
    unbatched = input.ndim == 3
    if unbatched:
        input = input.unsqueeze(0)
    stride, padding = _ints("stride", stride, 2), _ints("padding", padding, 2)
    output_padding, dilation = (_ints("output_padding", output_padding, 2),
                                _ints("dilation", dilation, 2))
    if builtins.any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding_height: {output_padding[0]} output_padding_width: "
            f"{output_padding[1]} stride_height: {stride[0]} stride_width: {stride[1]} "
            f"dilation_height: {dilation[0]} dilation_width: {dilation[1]}")
    out = convolution(input, weight, bias, stride, padding, dilation, True, output_padding,
                      groups)
    return out.squeeze(0) if unbatched else out


def _pool_args(name: str, input: Tensor, kernel_size: Any, stride: Any, padding: Any,
               dilation: Any, ceil_mode: bool) -> tuple:
    """kernel, stride (``()`` when not given, as PyTorch saves it), padding and dilation as
    pairs, after PyTorch's checks of a 2-D pooling."""
    k = _ints("kernel_size", kernel_size, 2, "pooling")
    s = () if stride is None or (not _is_number(stride) and len(stride) == 0) else _ints(
        "stride", stride, 2, "pooling")
    p, d = _ints("padding", padding, 2, "pooling"), _ints("dilation", dilation, 2, "pooling")
    if input.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if 0 in input.shape[-3:]:  # only a batch (of a 4-D input) may be empty
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(input.shape)}")
    if builtins.any(v <= 0 for v in k + (s or k) + d):
        raise RuntimeError(f"{name}: kernel_size, stride and dilation must be greater than "
                           f"zero, got kernel_size={list(k)}, stride={list(s or k)}, "
                           f"dilation={list(d)}")
    for pp, kk, dd in zip(p, k, d):
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation={dd}")
    from gradviz.ops._kernels import pool_out_size

    h, w = input.shape[-2:]
    oh, ow = (pool_out_size(n, kk, ss, pp, dd, ceil_mode)
              for n, kk, ss, pp, dd in zip((h, w), k, s or k, p, d))
    if oh < 1 or ow < 1:
        c = input.shape[-3]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{oh}x{ow}). Output size is too small")
    return k, s, p, d


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """The maximum of each (dilated) window of the last two dimensions
    (``MaxPool2DWithIndicesBackward0``, which saves the indices as ``_saved_result1``); with
    ``return_indices`` also the flat position of each maximum in its H*W plane.

    Example:
        >>> import gradviz
        >>> x = gradviz.arange(16.0).view(1, 1, 4, 4)
        >>> gradviz.max_pool2d(x, 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    k, s, p, d = _pool_args("max_pool2d", input, kernel_size, stride, padding, dilation,
                            ceil_mode)
    out, indices = dispatch(_O["max_pool2d_with_indices"], input, kernel_size=k, stride=s,
                            padding=p, dilation=d, ceil_mode=bool(ceil_mode))
    return (out, indices) if return_indices else out


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """:func:`max_pool2d` over the last dimension, recorded as PyTorch records it:
    ``SqueezeBackward1 <- MaxPool2DWithIndicesBackward0 <- UnsqueezeBackward0``.

    Example:
        >>> import gradviz
        >>> gradviz.max_pool1d(gradviz.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
        tensor([[[3., 2.]]])
    """
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    k = (1, _ints("kernel_size", kernel_size, 1, "pooling")[0])
    s = () if stride is None or (not _is_number(stride) and len(stride) == 0) else (
        1, _ints("stride", stride, 1, "pooling")[0])
    p = (0, _ints("padding", padding, 1, "pooling")[0])
    d = (1, _ints("dilation", dilation, 1, "pooling")[0])
    out, indices = max_pool2d(input.unsqueeze(-2), k, s or k, p, d, ceil_mode, True)
    out, indices = out.squeeze(-2), indices.squeeze(-2)
    return (out, indices) if return_indices else out


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
               running_mean: Tensor | None, running_var: Tensor | None, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool = True) -> Tensor:
    """``torch.batch_norm``: normalize each channel (dimension 1) by its batch statistics in
    training (updating ``running_mean``/``running_var`` in place), by the running ones in
    evaluation; then scale and shift. Records ``NativeBatchNormBackward0``; an empty input is
    only copied, scaled by ``weight[0]`` and shifted by ``bias[0]``, as in torch.

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([[1.0], [3.0]])
        >>> gradviz.batch_norm(x, None, None, None, None, True, 0.1, 0.0, False)
        tensor([[-1.],
                [ 1.]])
    """
    if input.numel() == 0:
        # torch checks nothing and computes no statistics (the running ones stay as they
        # are): a copy, kept in the graph, times weight[0] plus bias[0]
        out = dispatch(_O["clone"], input)
        if weight is not None:
            out = mul(out, select(weight, 0, 0))
        if bias is not None:
            out = add(out, select(bias, 0, 0))
        return out
    if input.ndim < 2:
        raise RuntimeError(f"batch_norm: expected an input of at least 2 dimensions (N, C, "
                           f"...), got size {list(input.shape)}")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t._data.size != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t._data.size}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean must be defined in evaluation mode")
    out, _, _ = dispatch(_O["native_batch_norm"], input, weight, bias,
                         running_mean=running_mean, running_var=running_var,
                         training=bool(training), momentum=float(momentum), eps=float(eps))
    return out


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:
    """Pad (or, with negative amounts, crop) the last ``len(pad) // 2`` dimensions with
    ``value``; ``pad`` is ``(left, right, top, bottom, ...)`` from the last dimension
    backwards (``ConstantPadNdBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.constant_pad_nd(gradviz.tensor([1.0, 2.0]), (1, 2))
        tensor([0., 1., 2., 0., 0.])
    """
    pad = tuple(int(v) for v in pad)
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions "
                           f"of the input. Pad length is {len(pad)} while the input has "
                           f"{input.ndim} dimensions.")
    for i in range(len(pad) // 2):
        dim = input.ndim - 1 - i
        new = input.shape[dim] + pad[2 * i] + pad[2 * i + 1]
        if new < 0:
            raise RuntimeError(f"The input size {input.shape[dim]}, plus negative padding "
                               f"{pad[2 * i]} and {pad[2 * i + 1]} resulted in a negative "
                               f"output size, which is invalid. Check dimension {dim} of your "
                               "input.")
    return dispatch(_O["constant_pad_nd"], input, pad=pad, value=value)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-D cross-correlation of ``input`` (N, C, D, H, W) or (C, D, H, W) with ``weight``
    (out_channels, C / groups, kd, kh, kw); ``padding`` may be an int, a tuple, ``'same'`` or
    ``'valid'``. Records ``ConvolutionBackward0``.

    Example:
        >>> import gradviz
        >>> gradviz.conv3d(gradviz.ones(1, 1, 2, 2, 2), gradviz.ones(1, 1, 2, 2, 2))
        tensor([[[[[8.]]]]])
    """
    return _conv_nd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """The transpose (adjoint) of :func:`conv1d`: ``weight`` is (in_channels,
    out_channels / groups, k); the output length is
    ``(n - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``. Records
    ``ConvolutionBackward0`` with ``_saved_transposed == True``, as PyTorch.

    Example:
        >>> import gradviz
        >>> gradviz.conv_transpose1d(gradviz.ones(1, 1, 2), gradviz.ones(1, 1, 2))
        tensor([[[1., 2., 1.]]])
    """
    if input.ndim not in (2, 3):
        raise RuntimeError("Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d, "
                           f"but got input of size: {list(input.shape)}")
    unbatched = input.ndim == 2
    if unbatched:
        input = input.unsqueeze(0)
    stride, padding = _ints("stride", stride, 1), _ints("padding", padding, 1)
    output_padding, dilation = (_ints("output_padding", output_padding, 1),
                                _ints("dilation", dilation, 1))
    if output_padding[0] >= stride[0] and output_padding[0] >= dilation[0]:
        # PyTorch checks a 1-D call as a 2-D one of height 1, and says so.
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding_height: 0 output_padding_width: {output_padding[0]} stride_height: "
            f"1 stride_width: {stride[0]} dilation_height: 1 dilation_width: {dilation[0]}")
    out = convolution(input, weight, bias, stride, padding, dilation, True, output_padding,
                      groups)
    return out.squeeze(0) if unbatched else out


def _shuffle_checks(name: str, input: Tensor, factor: int) -> None:
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    if factor <= 0:
        what = "upscale_factor" if name == "pixel_shuffle" else "downscale_factor"
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearrange (*, C * r * r, H, W) into (*, C, H * r, W * r) (``PixelShuffleBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.pixel_shuffle(gradviz.arange(4.0).view(1, 4, 1, 1), 2)
        tensor([[[[0., 1.],
                  [2., 3.]]]])
    """
    r = int(upscale_factor)
    _shuffle_checks("pixel_shuffle", input, r)
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    return dispatch(_O["pixel_shuffle"], input, upscale_factor=r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """Rearrange (*, C, H * r, W * r) into (*, C * r * r, H, W), the inverse of
    :func:`pixel_shuffle` (``PixelUnshuffleBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.pixel_unshuffle(gradviz.arange(4.0).view(1, 1, 2, 2), 2).flatten()
        tensor([0., 1., 2., 3.])
    """
    r = int(downscale_factor)
    _shuffle_checks("pixel_unshuffle", input, r)
    for what, dim in (("height", -2), ("width", -1)):
        if input.shape[dim] % r:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by "
                               f"downscale_factor, but input.size({dim})={input.shape[dim]} is "
                               f"not divisible by {r}")
    return dispatch(_O["pixel_unshuffle"], input, downscale_factor=r)
