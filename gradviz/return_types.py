"""Named tuples returned by reductions along a dimension (PyTorch's ``torch.return_types``).

``gradviz.max(x, dim)`` returns a ``gradviz.return_types.max``: a tuple ``(values, indices)``
whose fields can also be read by name. Only ``values`` carries a gradient.

Example:
    >>> import gradviz
    >>> r = gradviz.tensor([[1.0, 5.0], [7.0, 2.0]]).max(1)
    >>> r.values, r.indices
    (tensor([5., 7.]), tensor([1, 0]))
"""

from __future__ import annotations

from collections import namedtuple

__all__ = ["max", "min"]


def _structseq(name: str) -> type:
    base = namedtuple(name, ["values", "indices"])  # noqa: PYI024

    def __repr__(self: tuple) -> str:
        return (f"gradviz.return_types.{name}(\nvalues={self[0]!r},\n"
                f"indices={self[1]!r})")

    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__,
                               "__module__": "gradviz.return_types",
                               "__doc__": f"``(values, indices)`` of ``gradviz.{name}(x, dim)``."})
    return cls


max = _structseq("max")  # noqa: A001 - PyTorch's names
min = _structseq("min")  # noqa: A001


# -- more ops (opsselect)
__all__ += ["topk", "sort", "kthvalue", "median", "cummax", "cummin"]
topk = _structseq("topk")
sort = _structseq("sort")
kthvalue = _structseq("kthvalue")
median = _structseq("median")
cummax = _structseq("cummax")
cummin = _structseq("cummin")


# -- more (opsmore)
__all__ += ["mode", "aminmax"]
mode = _structseq("mode")


class aminmax(namedtuple("aminmax", ["min", "max"])):  # noqa: N801, PYI024 - PyTorch's name
    """``(min, max)`` of ``gradviz.aminmax(x)``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"gradviz.return_types.aminmax(\nmin={self[0]!r},\nmax={self[1]!r})"
