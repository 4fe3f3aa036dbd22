"""``gradviz.functional``: PyTorch's ``torch.functional`` module.

PyTorch keeps some of its top-level functions in ``torch/functional.py`` and code sometimes
reaches them there (``torch.functional.einsum``, ``torch.functional.split``). These are the very
functions of ``gradviz.<name>``, for the names of that module that gradviz has.

Example:
    >>> import gradviz as torch
    >>> torch.functional.einsum is torch.einsum
    True
    >>> a = torch.ones(2, 3, requires_grad=True)
    >>> torch.functional.einsum("ij->j", a).grad_fn.name()
    'SumBackward1'
"""

from __future__ import annotations

from gradviz.ops.functional import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    cartesian_prod,
    cdist,
    einsum,
    meshgrid,
    norm,
    split,
    tensordot,
    unique,
    unique_consecutive,
)

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "cartesian_prod", "cdist",
           "einsum", "meshgrid", "norm", "split", "tensordot", "unique", "unique_consecutive"]
