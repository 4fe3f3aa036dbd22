"""``Flatten``."""

from __future__ import annotations

from gradviz.nn.modules.module import Module
from gradviz.ops import functional as _ops
from gradviz.tensor import Tensor, _wrap_dim

__all__ = ["Flatten"]


def _flatten(input: Tensor, start_dim: int, end_dim: int) -> Tensor:
    """``input.flatten(start_dim, end_dim)``: a reshape (a view when possible), as PyTorch."""
    nd = input.ndim
    if nd == 0:
        return _ops.reshape(input, (1,))
    start, end = _wrap_dim(start_dim, nd), _wrap_dim(end_dim, nd)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    shape = input.shape
    merged = 1
    for s in shape[start:end + 1]:
        merged *= s
    return _ops.reshape(input, shape[:start] + (merged,) + shape[end + 1:])


class Flatten(Module):
    """Merge dimensions ``start_dim`` to ``end_dim`` into one (by default all but the batch).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.Flatten()(gradviz.zeros(4, 2, 3)).shape
        gradviz.Size([4, 6])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return _flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
