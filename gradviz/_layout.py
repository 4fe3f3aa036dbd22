"""Memory layouts, as PyTorch spells them: ``gradviz.layout`` and ``gradviz.strided``.

A gradviz tensor is a NumPy array: dense, with strides, what PyTorch calls ``torch.strided``.
Code written for PyTorch reads ``x.layout`` or compares it with ``torch.strided``; sparse layouts
are not part of gradviz.

Example:
    >>> import gradviz
    >>> gradviz.ones(2).layout, gradviz.ones(2).layout is gradviz.strided
    (gradviz.strided, True)
"""

from __future__ import annotations

__all__ = ["layout", "strided"]


class layout:  # noqa: N801 - torch.layout
    """A tensor's memory layout; ``gradviz.strided`` is the only one (no new ones can be made).

    Example:
        >>> import gradviz
        >>> isinstance(gradviz.strided, gradviz.layout), str(gradviz.strided)
        (True, 'gradviz.strided')
    """

    __slots__ = ("name",)

    def __new__(cls, *args: object, **kwargs: object) -> layout:
        raise TypeError("cannot create 'gradviz.layout' instances")

    @classmethod
    def _named(cls, name: str) -> layout:
        made = object.__new__(cls)
        made.name = name
        return made

    def __repr__(self) -> str:
        return f"gradviz.{self.name}"

    def __reduce__(self) -> str:
        return self.name  # pickled by name: one object per layout


strided = layout._named("strided")
