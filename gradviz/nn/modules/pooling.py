"""``MaxPool2d``, ``AvgPool2d`` and ``AdaptiveAvgPool2d``."""

from __future__ import annotations

from typing import Any

from gradviz.nn import functional as F
from gradviz.nn.modules.module import Module
from gradviz.tensor import Tensor

__all__ = ["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"]


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
