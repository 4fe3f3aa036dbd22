"""``Upsample``, ``UpsamplingNearest2d`` and ``UpsamplingBilinear2d`` (as in
``torch/nn/modules/upsampling.py``)."""

from __future__ import annotations

from typing import Any

from gradviz.nn import functional as F
from gradviz.nn.modules.module import Module
from gradviz.tensor import Tensor

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """``F.interpolate`` as a layer: to ``size`` or by ``scale_factor`` (kept as a float, or
    a tuple of floats), with ``mode`` and ``align_corners``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> up = nn.Upsample(scale_factor=2, mode="bilinear"); up
        Upsample(scale_factor=2.0, mode='bilinear')
        >>> up(gradviz.ones(1, 1, 2, 3)).shape
        gradviz.Size([1, 1, 4, 6])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: Any = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """:class:`Upsample` with ``mode='nearest'``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.UpsamplingNearest2d(scale_factor=2)(gradviz.ones(1, 1, 2, 2)).shape
        gradviz.Size([1, 1, 4, 4])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """:class:`Upsample` with ``mode='bilinear'`` and ``align_corners=True``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.UpsamplingBilinear2d(size=(3, 4))
        UpsamplingBilinear2d(size=(3, 4), mode='bilinear')
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
