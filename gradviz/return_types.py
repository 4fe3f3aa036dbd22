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

__all__ = ["max", "min", "topk", "sort", "kthvalue", "median", "nanmedian", "mode", "cummax",
           "cummin", "aminmax"]


def _structseq(name: str) -> type:
    base = namedtuple(name, ["values", "indices"])  # noqa: PYI024

    def __repr__(self: tuple) -> str:
        return (f"gradviz.return_types.{name}(\nvalues={self[0]!r},\n"
                f"indices={self[1]!r})")

    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__,
                               "__module__": "gradviz.return_types",
                               "__doc__": f"``(values, indices)`` of ``gradviz.{name}(x, dim)``."})
    return cls


# -- reductions and selection along a dimension: (values, indices) -----------------------------
max = _structseq("max")  # noqa: A001 - PyTorch's names
min = _structseq("min")  # noqa: A001
topk = _structseq("topk")
sort = _structseq("sort")
kthvalue = _structseq("kthvalue")
median = _structseq("median")
nanmedian = _structseq("nanmedian")
mode = _structseq("mode")
cummax = _structseq("cummax")
cummin = _structseq("cummin")


class aminmax(namedtuple("aminmax", ["min", "max"])):  # noqa: N801, PYI024 - PyTorch's name
    """``(min, max)`` of ``gradviz.aminmax(x)``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"gradviz.return_types.aminmax(\nmin={self[0]!r},\nmax={self[1]!r})"


# -- linear algebra: the named tuples of torch.linalg (and torch.slogdet, torch.svd) ------------
def _fields(name: str, fields: tuple[str, ...]) -> type:
    base = namedtuple(name, fields)  # noqa: PYI024

    def __repr__(self: tuple) -> str:
        body = ",\n".join(f"{k}={v!r}" for k, v in zip(fields, self, strict=True))
        return f"gradviz.return_types.{name}(\n{body})"

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__,
                                "__module__": "gradviz.return_types",
                                "__doc__": f"``({', '.join(fields)})`` of ``{name}``."})


__all__ += ["linalg_inv_ex", "linalg_slogdet", "slogdet", "linalg_solve_ex", "linalg_cholesky_ex",
            "linalg_qr", "qr", "linalg_eigh", "linalg_svd", "svd"]
linalg_inv_ex = _fields("linalg_inv_ex", ("inverse", "info"))
linalg_slogdet = _fields("linalg_slogdet", ("sign", "logabsdet"))
slogdet = _fields("slogdet", ("sign", "logabsdet"))
linalg_solve_ex = _fields("linalg_solve_ex", ("result", "info"))
linalg_cholesky_ex = _fields("linalg_cholesky_ex", ("L", "info"))
linalg_qr = _fields("linalg_qr", ("Q", "R"))
qr = _fields("qr", ("Q", "R"))
linalg_eigh = _fields("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_svd = _fields("linalg_svd", ("U", "S", "Vh"))
svd = _fields("svd", ("U", "S", "V"))
