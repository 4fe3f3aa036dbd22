"""``Conv1d``, ``Conv2d`` and ``ConvTranspose2d``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from gradviz import _dtype as _dt
from gradviz import _factories
from gradviz.nn import functional as F
from gradviz.nn import init
from gradviz.nn.modules.module import Module, _factory_dtype, _on_device
from gradviz.nn.parameter import Parameter
from gradviz.tensor import Tensor

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose2d", "ConvTranspose1d"]


_PADDING_STRINGS = {"same", "valid"}


def _ntuple(v: int | Sequence[int], n: int) -> tuple[int, ...]:
    return tuple(int(x) for x in v) if isinstance(v, (tuple, list)) else (int(v),) * n


def _reversed_padding(padding: Any, kernel: tuple, dilation: tuple) -> Any:
    """PyTorch's ``_reversed_padding_repeated_twice``: a tuple for int padding, a list for
    'same' / 'valid' (as PyTorch keeps them)."""
    if isinstance(padding, str):
        out = [0, 0] * len(kernel)
        if padding == "same":
            for d, k, i in zip(dilation, kernel, range(len(kernel) - 1, -1, -1)):
                total = d * (k - 1)
                out[2 * i], out[2 * i + 1] = total // 2, total - total // 2
        return out
    return tuple(p for p in reversed(padding) for _ in range(2))


class _ConvNd(Module):
    """What the convolutions share: arguments kept as PyTorch keeps them (tuples, or the
    padding string), the weight and bias, their initialisation and the repr."""

    def __init__(self, nd: int, in_channels: int, out_channels: int, kernel_size: Any,
                 stride: Any, padding: Any, dilation: Any, transposed: bool,
                 output_padding: Any, groups: int, bias: bool, padding_mode: str,
                 device: Any, dtype: _dt.dtype | None) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, nd)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        if transposed and padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, nd)
        self.stride = _ntuple(stride, nd)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, nd)
        self.dilation = _ntuple(dilation, nd)
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, nd)
        self.groups = groups
        self.padding_mode = padding_mode
        # The other padding modes pad with F.pad first (last dimension first, each
        # amount twice, 'same' split as F.conv's own padding splits it), then convolve unpadded.
        self._reversed_padding_repeated_twice = _reversed_padding(self.padding, self.kernel_size,
                                                                  self.dilation)
        dt = _factory_dtype(device, dtype)
        shape = ((in_channels, out_channels // groups) if transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(_factories.empty(*shape, dtype=dt))
        if bias:
            self.bias = Parameter(_factories.empty(out_channels, dtype=dt))
        else:
            self.register_parameter("bias", None)
        _on_device(self, device)  # device="meta": its tensors become meta
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's scheme: ``kaiming_uniform_(a=sqrt(5))`` for the weight, that is
        ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``, and the bias from the same range."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        nd = len(self.kernel_size)
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) or (C_in, L): ``F.conv1d`` with a learned ``weight``
    (out_channels, in_channels / groups, kernel_size) and ``bias``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> conv = nn.Conv1d(2, 4, 3, padding="same"); conv
        Conv1d(2, 4, kernel_size=(3,), stride=(1,), padding=same)
        >>> conv(gradviz.ones(1, 2, 5)).shape
        gradviz.Size([1, 4, 5])
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        super().__init__(1, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        if self.padding_mode != "zeros":
            return F.conv1d(F.pad(input, self._reversed_padding_repeated_twice,
                                  mode=self.padding_mode), self.weight, self.bias, self.stride,
                            (0,), self.dilation, self.groups)
        return F.conv1d(input, self.weight, self.bias, self.stride, self.padding,
                        self.dilation, self.groups)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W): ``F.conv2d`` with a learned
    ``weight`` (out_channels, in_channels / groups, kh, kw) and ``bias``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> conv = nn.Conv2d(1, 6, 5); conv
        Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))
        >>> conv(gradviz.ones(1, 1, 32, 32)).shape
        gradviz.Size([1, 6, 28, 28])
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        super().__init__(2, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        if self.padding_mode != "zeros":
            return F.conv2d(F.pad(input, self._reversed_padding_repeated_twice,
                                  mode=self.padding_mode), self.weight, self.bias, self.stride,
                            (0, 0), self.dilation, self.groups)
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding,
                        self.dilation, self.groups)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W): ``F.conv3d`` with a learned
    ``weight`` (out_channels, in_channels / groups, kd, kh, kw) and ``bias``. Of the padding
    modes other than zeros, gradviz pads 3-D inputs with 'circular' only.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> conv = nn.Conv3d(1, 2, 3, padding=1); conv
        Conv3d(1, 2, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1))
        >>> conv(gradviz.ones(1, 1, 4, 4, 4)).shape
        gradviz.Size([1, 2, 4, 4, 4])
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        super().__init__(3, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        if self.padding_mode != "zeros":
            return F.conv3d(F.pad(input, self._reversed_padding_repeated_twice,
                                  mode=self.padding_mode), self.weight, self.bias, self.stride,
                            (0, 0, 0), self.dilation, self.groups)
        return F.conv3d(input, self.weight, self.bias, self.stride, self.padding,
                        self.dilation, self.groups)


class ConvTranspose2d(_ConvNd):
    """The transpose of :class:`Conv2d` (``F.conv_transpose2d``), with ``weight`` of shape
    (in_channels, out_channels / groups, kh, kw). ``forward(input, output_size)`` picks the
    output_padding that gives ``output_size``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> up = nn.ConvTranspose2d(4, 2, 3, stride=2, output_padding=1); up
        ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))
        >>> up(gradviz.ones(1, 4, 5, 5)).shape
        gradviz.Size([1, 2, 12, 12])
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        if isinstance(padding, str):
            raise ValueError(f"Only \"zeros\" padding mode and integer padding are supported "
                             f"for ConvTranspose2d, got padding={padding!r}")
        super().__init__(2, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input: Tensor, output_size: Sequence[int] | None) -> tuple:
        if output_size is None:
            return self.output_padding
        want = tuple(output_size)[-2:]
        smallest = tuple((n - 1) * s - 2 * p + d * (k - 1) + 1 for n, s, p, d, k in zip(
            input.shape[-2:], self.stride, self.padding, self.dilation, self.kernel_size))
        extra = tuple(w - m for w, m in zip(want, smallest))
        if any(e < 0 or e >= max(s, d) for e, s, d in zip(extra, self.stride, self.dilation)):
            largest = [m + max(s, d) - 1
                       for m, s, d in zip(smallest, self.stride, self.dilation)]
            raise ValueError(f"requested an output size of {list(want)}, but valid sizes range "
                             f"from {list(smallest)} to {largest} (for an input of "
                             f"{list(input.shape[-2:])})")
        return extra

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class ConvTranspose1d(ConvTranspose2d):
    """The transpose of :class:`Conv1d` (``F.conv_transpose1d``), with ``weight`` of shape
    (in_channels, out_channels / groups, k). ``forward(input, output_size)`` picks the
    output_padding that gives ``output_size``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> up = nn.ConvTranspose1d(4, 2, 3, stride=2); up
        ConvTranspose1d(4, 2, kernel_size=(3,), stride=(2,))
        >>> up(gradviz.ones(1, 4, 5)).shape
        gradviz.Size([1, 2, 11])
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        if isinstance(padding, str):
            raise ValueError(f"Only \"zeros\" padding mode and integer padding are supported "
                             f"for ConvTranspose1d, got padding={padding!r}")
        _ConvNd.__init__(self, 1, in_channels, out_channels, kernel_size, stride, padding,
                         dilation, True, output_padding, groups, bias, padding_mode, device,
                         dtype)

    def _output_padding(self, input: Tensor, output_size: Sequence[int] | None) -> tuple:
        if output_size is None:
            return self.output_padding
        want = tuple(output_size)[-1]
        n, s, p, d, k = (input.shape[-1], self.stride[0], self.padding[0], self.dilation[0],
                         self.kernel_size[0])
        smallest = (n - 1) * s - 2 * p + d * (k - 1) + 1
        if not 0 <= want - smallest < max(s, d):
            raise ValueError(f"requested an output size of {[want]}, but valid sizes range "
                             f"from {[smallest]} to {[smallest + max(s, d) - 1]} (for an "
                             f"input of {[n]})")
        return (want - smallest,)

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)
