"""``ZeroPad2d`` (as in ``torch/nn/modules/padding.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from gradviz.nn import functional as F
from gradviz.nn.modules.module import Module
from gradviz.tensor import Tensor

__all__ = ["ZeroPad2d"]


class ZeroPad2d(Module):
    """Pad the last two dimensions with zeros: ``padding`` is one number for all four sides
    or ``(left, right, top, bottom)`` (``ConstantPadNdBackward0``).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.ZeroPad2d((1, 0, 0, 1))
        >>> m, m(gradviz.ones(1, 1, 1)).shape
        (ZeroPad2d((1, 0, 0, 1)), gradviz.Size([1, 2, 2]))
    """

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__()
        if isinstance(padding, int):
            padding = (padding,) * 4
        self.padding = tuple(padding)
        if len(self.padding) != 4:
            raise ValueError(f"ZeroPad2d: padding must be an int or 4 ints (left, right, top, "
                             f"bottom), got {padding!r}")
        self.value = 0.0

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"{self.padding}"
