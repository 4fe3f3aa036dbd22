"""``Flatten``."""

from __future__ import annotations

from collections.abc import Sequence

from gradviz.nn.modules.module import Module
from gradviz.ops import functional as _ops
from gradviz.tensor import Tensor, _wrap_dim

__all__ = ["Flatten", "Unflatten"]


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


def _unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """``input.unflatten(dim, sizes)``: a view (``ViewBackward0``), one size may be -1."""
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    sizes = [int(s) for s in sizes]
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in sizes:
        known *= s if s != -1 else 1
    if -1 in sizes and known and n % known == 0:
        sizes[sizes.index(-1)] = n // known
    elif -1 in sizes or known != n:
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of "
                           f"dim {dim} ({n}) in the input tensor")
    shape = input.shape
    return _ops.view(input, tuple(shape[:d]) + tuple(sizes) + tuple(shape[d + 1:]))


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size`` (the inverse of :class:`Flatten`).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.Unflatten(1, (2, 3))
        >>> m, m(gradviz.zeros(4, 6)).shape
        (Unflatten(dim=1, unflattened_size=(2, 3)), gradviz.Size([4, 2, 3]))
    """

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        if not isinstance(dim, int):
            raise TypeError("invalid argument type for dim parameter")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("unflattened_size must be a tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        for i, s in enumerate(unflattened_size):
            if not isinstance(s, int):
                raise TypeError("unflattened_size must be tuple of ints, but found element of "
                                f"type {type(s).__name__} at pos {i}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return _unflatten(input, self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
