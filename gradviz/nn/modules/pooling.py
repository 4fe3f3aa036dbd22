"""``MaxPool2d``, ``AvgPool2d`` and ``AdaptiveAvgPool2d``."""

from __future__ import annotations

from typing import Any

from gradviz.nn import functional as F
from gradviz.nn.modules.module import Module
from gradviz.tensor import Tensor

__all__ = ["MaxPool2d", "MaxPool1d", "AvgPool2d", "AvgPool1d", "AvgPool3d", "AdaptiveAvgPool2d",
           "AdaptiveAvgPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool1d", "LPPool2d", "LPPool1d"]


def _single(v: Any) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class MaxPool2d(Module):
    """``F.max_pool2d`` as a layer; ``stride`` defaults to ``kernel_size``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> pool = nn.MaxPool2d(2); pool
        MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
        >>> pool(gradviz.ones(1, 1, 4, 4)).shape
        gradviz.Size([1, 1, 2, 2])
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Any:
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(MaxPool2d):
    """``F.max_pool1d`` as a layer; ``stride`` defaults to ``kernel_size``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> pool = nn.MaxPool1d(2); pool
        MaxPool1d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
        >>> pool(gradviz.tensor([[[1.0, 3.0, 2.0, 0.0]]]))
        tensor([[[3., 2.]]])
    """

    def forward(self, input: Tensor) -> Any:
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool2d(Module):
    """``F.avg_pool2d`` as a layer; ``stride`` defaults to ``kernel_size``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> pool = nn.AvgPool2d(2, stride=1); pool
        AvgPool2d(kernel_size=2, stride=1, padding=0)
        >>> pool(gradviz.ones(1, 1, 3, 3))
        tensor([[[[1., 1.],
                  [1., 1.]]]])
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(Module):
    """``F.avg_pool1d`` as a layer; sizes kept as 1-tuples, ``stride`` defaulting to
    ``kernel_size``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> pool = nn.AvgPool1d(2); pool
        AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))
        >>> pool(gradviz.tensor([[[1.0, 3.0, 2.0, 6.0]]]))
        tensor([[[2., 4.]]])
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    """``F.avg_pool3d`` as a layer; ``stride`` defaults to ``kernel_size``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> pool = nn.AvgPool3d(2); pool
        AvgPool3d(kernel_size=2, stride=2, padding=0)
        >>> pool(gradviz.ones(1, 1, 4, 4, 4)).shape
        gradviz.Size([1, 1, 2, 2, 2])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool2d(Module):
    """``F.adaptive_avg_pool2d`` to a fixed ``output_size`` (``None`` keeps that side).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> pool = nn.AdaptiveAvgPool2d((1, 1)); pool
        AdaptiveAvgPool2d(output_size=(1, 1))
        >>> pool(gradviz.ones(2, 3, 5, 4)).shape
        gradviz.Size([2, 3, 1, 1])
    """

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """``F.adaptive_avg_pool1d`` to a fixed ``output_size``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> pool = nn.AdaptiveAvgPool1d(2); pool
        AdaptiveAvgPool1d(output_size=2)
        >>> pool(gradviz.tensor([[1.0, 3.0, 2.0, 6.0]]))
        tensor([[2., 4.]])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveMaxPool2d(Module):
    """``F.adaptive_max_pool2d`` to a fixed ``output_size`` (``None`` keeps that side); with
    ``return_indices`` also the flat positions of the maxima.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> pool = nn.AdaptiveMaxPool2d((1, None)); pool
        AdaptiveMaxPool2d(output_size=(1, None))
        >>> pool(gradviz.arange(6.0).view(1, 2, 3))
        tensor([[[3., 4., 5.]]])
    """

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    """``F.adaptive_max_pool1d`` to a fixed ``output_size``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> pool = nn.AdaptiveMaxPool1d(2); pool
        AdaptiveMaxPool1d(output_size=2)
        >>> pool(gradviz.tensor([[1.0, 3.0, 2.0, 6.0]]))
        tensor([[3., 6.]])
    """

    def forward(self, input: Tensor) -> Any:
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class LPPool2d(Module):
    """``F.lp_pool2d``: the ``norm_type``-norm of each window.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> pool = nn.LPPool2d(2, 2); pool
        LPPool2d(norm_type=2, kernel_size=2, stride=None, ceil_mode=False)
        >>> pool(gradviz.full((1, 1, 2, 2), 2.0))
        tensor([[[[4.]]]])
    """

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(LPPool2d):
    """``F.lp_pool1d``: the ``norm_type``-norm of each window of the last dimension.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> pool = nn.LPPool1d(2, 2); pool
        LPPool1d(norm_type=2, kernel_size=2, stride=None, ceil_mode=False)
        >>> pool(gradviz.tensor([[[3.0, 4.0]]]))
        tensor([[[5.]]])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)
