"""``gradviz.Size``: PyTorch's ``torch.Size``, the tuple ``.shape`` and ``.size()`` return.

A ``tuple`` subclass: it equals, hashes and unpacks like the plain tuple of the same sizes, so
that NumPy calls, dict keys and JSON (it serialises as a list) take it unchanged; it only prints
as PyTorch prints it and knows its ``numel()``.

NOTE [perf]: internal code reads ``tensor._data.shape`` (NumPy's plain tuple); a ``Size`` is made
only where a user asks for ``.shape`` or ``.size()``.

Example:
    >>> import gradviz
    >>> s = gradviz.zeros(2, 3).shape
    >>> s, s == (2, 3), s[1:], s.numel()
    (gradviz.Size([2, 3]), True, gradviz.Size([3]), 6)
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any, SupportsIndex

__all__ = ["Size"]


class Size(tuple):
    """The sizes of a tensor's dimensions (PyTorch's ``torch.Size``): a tuple of ints.

    Example:
        >>> Size([2, 3]), Size([2, 3]).numel(), Size([2, 3]) + (4,)
        (gradviz.Size([2, 3]), 6, gradviz.Size([2, 3, 4]))
    """

    __slots__ = ()

    def __new__(cls, sizes: Iterable[Any] = ()) -> Size:
        items = tuple(sizes)
        for i, s in enumerate(items):
            if type(s) is not int:
                try:
                    items = items[:i] + (operator.index(s),) + items[i + 1:]
                except TypeError:
                    raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is "
                                    f"'{type(s).__name__}')") from None
        return tuple.__new__(cls, items)

    def __repr__(self) -> str:
        return f"gradviz.Size({list(self)})"

    __str__ = __repr__

    def numel(self) -> int:
        """The number of elements a tensor of this size holds (1 for ``Size([])``).

        Example:
            >>> Size([2, 3, 4]).numel()
            24
        """
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key: SupportsIndex | slice) -> Any:
        out = tuple.__getitem__(self, key)
        return Size(out) if isinstance(key, slice) else out

    def __add__(self, other: tuple) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other: tuple) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n: SupportsIndex) -> Size:
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __reduce__(self) -> tuple:
        return (Size, (tuple(self),))
