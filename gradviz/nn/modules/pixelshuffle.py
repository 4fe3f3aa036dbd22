"""``PixelShuffle`` and ``PixelUnshuffle`` (as in ``torch/nn/modules/pixelshuffle.py``)."""

from __future__ import annotations

from gradviz.nn import functional as F
from gradviz.nn.modules.module import Module
from gradviz.tensor import Tensor

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """Rearrange (*, C * r * r, H, W) into (*, C, H * r, W * r) (``F.pixel_shuffle``).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.PixelShuffle(2); m
        PixelShuffle(upscale_factor=2)
        >>> m(gradviz.ones(1, 8, 3, 3)).shape
        gradviz.Size([1, 2, 6, 6])
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearrange (*, C, H * r, W * r) into (*, C * r * r, H, W) (``F.pixel_unshuffle``).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.PixelUnshuffle(2); m
        PixelUnshuffle(downscale_factor=2)
        >>> m(gradviz.ones(1, 2, 6, 6)).shape
        gradviz.Size([1, 8, 3, 3])
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
