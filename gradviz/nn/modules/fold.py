"""``Fold`` and ``Unfold`` (as in ``torch/nn/modules/fold.py``)."""

from __future__ import annotations

from typing import Any

from gradviz.nn import functional as F
from gradviz.nn.modules.module import Module
from gradviz.tensor import Tensor

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sum columns of sliding blocks back into a (N, C, *output_size) tensor (``F.fold``).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.Fold((3, 3), 2); m
        Fold(output_size=(3, 3), kernel_size=2, dilation=1, padding=0, stride=1)
        >>> m(gradviz.ones(1, 4, 4)).shape
        gradviz.Size([1, 1, 3, 3])
    """

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Every sliding block of a (N, C, H, W) input as a column (``F.unfold``).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.Unfold(2); m
        Unfold(kernel_size=2, dilation=1, padding=0, stride=1)
        >>> m(gradviz.ones(1, 1, 3, 3)).shape
        gradviz.Size([1, 4, 4])
    """

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
