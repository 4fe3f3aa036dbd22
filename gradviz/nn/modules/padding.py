"""``ZeroPad2d`` (as in ``torch/nn/modules/padding.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from gradviz.nn import functional as F
from gradviz.nn.modules.module import Module
from gradviz.tensor import Tensor

__all__ = ["ConstantPad1d", "ConstantPad2d", "ZeroPad1d", "ZeroPad2d", "ReflectionPad1d",
           "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "CircularPad1d",
           "CircularPad2d"]


def _ntuple(padding: int | Sequence[int], n: int) -> tuple[int, ...]:
    return tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * n


class _PadNd(Module):
    """A pad of ``_sides`` amounts (an int for all), run as ``F.pad(input, padding, mode)``."""

    _sides = 2
    _mode = "constant"
    _dims: tuple[int, ...] = ()  # the input dimensions it checks (the circular pads)

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__()
        self.padding = _ntuple(padding, self._sides)

    def forward(self, input: Tensor) -> Tensor:
        if self._dims and input.ndim not in self._dims:
            dims = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"expected {dims} input (got {input.ndim}D input)")
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ConstantPad1d(Module):
    """Pad the last dimension with ``value``: ``padding`` is an int or (left, right).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.ConstantPad1d(1, 3.5); m
        ConstantPad1d(padding=(1, 1), value=3.5)
        >>> m(gradviz.zeros(1, 2))
        tensor([[3.5000, 0.0000, 0.0000, 3.5000]])
    """

    _sides = 2

    def __init__(self, padding: int | Sequence[int], value: float) -> None:
        super().__init__()
        self.padding = _ntuple(padding, self._sides)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad2d(ConstantPad1d):
    """Pad the last two dimensions with ``value``: ``padding`` is an int or (left, right,
    top, bottom).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.ConstantPad2d((1, 0, 0, 1), 0.0); m
        ConstantPad2d(padding=(1, 0, 0, 1), value=0.0)
        >>> m(gradviz.ones(1, 1, 1)).shape
        gradviz.Size([1, 2, 2])
    """

    _sides = 4


class ZeroPad1d(ConstantPad1d):
    """Pad the last dimension with zeros.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.ZeroPad1d(2); m
        ZeroPad1d((2, 2))
        >>> m(gradviz.ones(1, 1)).shape
        gradviz.Size([1, 5])
    """

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


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


class ReflectionPad1d(_PadNd):
    """Pad the last dimension with its reflection (without the edge): ``F.pad(mode='reflect')``
    (``ReflectionPad1DBackward0``).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.ReflectionPad1d(2); m
        ReflectionPad1d((2, 2))
        >>> m(gradviz.tensor([[0.0, 1.0, 2.0]]))
        tensor([[2., 1., 0., 1., 2., 1., 0.]])
    """

    _sides, _mode = 2, "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last two dimensions with their reflection: ``F.pad(mode='reflect')``
    (``ReflectionPad2DBackward0``).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.ReflectionPad2d((1, 1, 0, 0)); m
        ReflectionPad2d((1, 1, 0, 0))
        >>> m(gradviz.tensor([[[0.0, 1.0]]]))
        tensor([[[1., 0., 1., 0.]]])
    """

    _sides, _mode = 4, "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last dimension by repeating its edge values: ``F.pad(mode='replicate')``
    (``ReplicationPad1DBackward0``).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.ReplicationPad1d((1, 2)); m
        ReplicationPad1d((1, 2))
        >>> m(gradviz.tensor([[0.0, 1.0]]))
        tensor([[0., 0., 1., 1., 1.]])
    """

    _sides, _mode = 2, "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last two dimensions by repeating their edges: ``F.pad(mode='replicate')``
    (``ReplicationPad2DBackward0``).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.ReplicationPad2d(1); m
        ReplicationPad2d((1, 1, 1, 1))
        >>> m(gradviz.ones(1, 2, 2)).shape
        gradviz.Size([1, 4, 4])
    """

    _sides, _mode = 4, "replicate"


class CircularPad1d(_PadNd):
    """Pad the last dimension by wrapping around: ``F.pad(mode='circular')``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.CircularPad1d(1); m
        CircularPad1d((1, 1))
        >>> m(gradviz.tensor([[0.0, 1.0, 2.0]]))
        tensor([[2., 0., 1., 2., 0.]])
    """

    _sides, _mode, _dims = 2, "circular", (2, 3)


class CircularPad2d(_PadNd):
    """Pad the last two dimensions by wrapping around: ``F.pad(mode='circular')``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.CircularPad2d((1, 0, 0, 1)); m
        CircularPad2d((1, 0, 0, 1))
        >>> m(gradviz.tensor([[[0.0, 1.0]]]))
        tensor([[[1., 0., 1.],
                 [1., 0., 1.]]])
    """

    _sides, _mode, _dims = 4, "circular", (3, 4)
