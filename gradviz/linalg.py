"""``gradviz.linalg``: PyTorch's ``torch.linalg`` namespace.

The factorizations and solvers record their own nodes, as PyTorch's do (``LinalgInvExBackward0``,
``LinalgDetBackward0``, ``LinalgSlogdetBackward0``, ``LinalgSolveExBackward0``,
``LinalgCholeskyExBackward0``, ``LinalgQrBackward0``, ``LinalgEighBackward0``,
``LinalgSvdBackward0``, ``LinalgPinvBackward0``, ``LinalgVectorNormBackward0``,
``LinalgCrossBackward0``); ``matrix_norm``, ``norm``, ``matrix_power``, ``multi_dot`` and
``vecdot`` are composed of other ops as PyTorch composes them. The implementations are in
:mod:`gradviz.ops._linalg`.

Example:
    >>> import gradviz as torch
    >>> A = torch.tensor([[4.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> torch.linalg.inv(A).grad_fn.name()
    'LinalgInvExBackward0'
    >>> torch.linalg.det(A)
    tensor(11., grad_fn=<LinalgDetBackward0>)
"""

from __future__ import annotations

from gradviz.ops._linalg import (
    LinAlgError,
    cholesky,
    cholesky_ex,
    cross,
    det,
    diagonal,
    eigh,
    eigvalsh,
    inv,
    inv_ex,
    matmul,
    matrix_norm,
    matrix_power,
    multi_dot,
    norm,
    pinv,
    qr,
    slogdet,
    solve,
    solve_ex,
    svd,
    svdvals,
    vecdot,
    vector_norm,
)

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "diagonal", "eigh", "eigvalsh",
    "inv", "inv_ex", "matmul", "matrix_norm", "matrix_power", "multi_dot", "norm", "pinv", "qr",
    "slogdet", "solve", "solve_ex", "svd", "svdvals", "vecdot", "vector_norm",
]
