"""``torch.linalg`` and the linear algebra of the ``torch`` namespace, as PyTorch records them.

The factorizations and solvers are rows of the derivative table (``LinalgInvExBackward0``,
``LinalgDetBackward0``, ``LinalgSlogdetBackward0``, ``LinalgSolveExBackward0``,
``LinalgCholeskyExBackward0``, ``LinalgQrBackward0``, ``LinalgEighBackward0``,
``LinalgSvdBackward0``, ``LinalgPinvBackward0`` ...); the rest is composed of rows as PyTorch
composes it: ``matrix_norm`` is ``vector_norm`` then ``amax`` (or ``svdvals`` then a reduction),
``matrix_power`` a chain of ``mm`` by repeated squaring, ``multi_dot`` the ``mm`` of the cheapest
parenthesization, ``logdet`` ``slogdet`` then ``where``, ``inner`` a ``tensordot``.

Argument checks and error texts are PyTorch's. ``gradviz.linalg`` re-exports this module's
public names under their ``torch.linalg`` names.
"""

from __future__ import annotations

import builtins
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradviz import return_types
from gradviz.ops import functional as F
from gradviz.ops.derivatives import OPS
from gradviz.ops.dispatch import dispatch, dispatch_inplace
from gradviz.tensor import Tensor, _wrap_dim

__all__ = [
    "LinAlgError", "inv", "inv_ex", "det", "slogdet", "logdet", "solve", "solve_ex", "cholesky",
    "cholesky_ex", "qr", "eigh", "eigvalsh", "svd", "svdvals", "pinv", "matrix_power",
    "vector_norm", "matrix_norm", "norm", "cross", "vecdot", "multi_dot", "matmul", "diagonal",
    "inverse", "torch_cholesky", "torch_svd", "pinverse", "dist", "inner", "vdot", "baddbmm",
    "baddbmm_", "addbmm", "addbmm_", "cdist", "trace", "torch_qr",
]


class LinAlgError(RuntimeError):
    """A matrix the factorization cannot handle (singular, not positive definite): PyTorch's
    ``torch.linalg.LinAlgError``, a ``RuntimeError``.

    Example:
        >>> import gradviz
        >>> try:
        ...     gradviz.linalg.inv(gradviz.zeros(2, 2))
        ... except gradviz.linalg.LinAlgError as e:
        ...     print(e)
        linalg.inv: The diagonal element 1 is zero, the inversion could not be completed because the input matrix is singular.
    """  # noqa: E501 - a doctest's output is one line


# -- checks ----------------------------------------------------------------------------------------
def _type_name(t: Tensor) -> str:
    return t.dtype._legacy[:-6]  # "FloatTensor" -> "Float", as PyTorch's messages spell it


def _floating(fn: str, A: Tensor) -> None:  # noqa: N803 - PyTorch's names
    if A._data.dtype.kind != "f":
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{_type_name(A)}")


def _matrix(fn: str, A: Tensor, what: str = "A") -> None:  # noqa: N803
    F._tensors_only(fn.replace(".", "_"), **{what: A})
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor {what} must have at least 2 dimensions.")


def _square(fn: str, A: Tensor) -> None:  # noqa: N803
    _matrix(fn, A)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    _floating(fn, A)


def _raise_info(fn: str, info: Tensor, batched: bool, message: str) -> None:
    """PyTorch's error for the first matrix whose ``info`` is not 0 (``message`` is formatted
    with ``{info}``)."""
    flat = info._data.reshape(-1)
    bad = np.flatnonzero(flat)
    if bad.size:
        i = int(bad[0])
        where = f"(Batch element {i}): " if batched else ""
        raise LinAlgError(f"{fn}: {where}" + message.format(info=int(flat[i])))


def _row(name: str, *args: Any, **kwargs: Any) -> Any:
    return dispatch(OPS[name], *args, **kwargs)


# -- inverse, determinants, solvers --------------------------------------------------------------
def inv_ex(A: Tensor, *, check_errors: bool = False) -> Any:  # noqa: N803
    """``(inverse, info)``: the inverse of a (batch of) square matrices and, per matrix, 0 or
    the order of the zero pivot that makes it singular (``LinalgInvExBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.linalg.inv_ex(gradviz.eye(2) * 2).inverse
        tensor([[0.5000, 0.0000],
                [0.0000, 0.5000]])
    """
    _square("linalg.inv_ex", A)
    inverse, info = _row("linalg_inv_ex", A)
    if check_errors:
        _raise_info("linalg.inv_ex", info, A.ndim > 2, _SINGULAR)
    return return_types.linalg_inv_ex(inverse, info)


_SINGULAR = ("The diagonal element {info} is zero, the inversion could not be completed "
             "because the input matrix is singular.")


def inv(A: Tensor) -> Tensor:  # noqa: N803
    """The inverse of a (batch of) square matrices (``LinalgInvExBackward0``, saving the
    inverse: the gradient is ``-A⁻ᵀ grad A⁻ᵀ``). A singular matrix raises :class:`LinAlgError`.

    Example:
        >>> import gradviz
        >>> gradviz.linalg.inv(gradviz.tensor([[2.0, 0.0], [0.0, 4.0]]))
        tensor([[0.5000, 0.0000],
                [0.0000, 0.2500]])
    """
    _square("linalg.inv", A)
    inverse, info = _row("linalg_inv_ex", A)
    _raise_info("linalg.inv", info, A.ndim > 2, _SINGULAR)
    return inverse


def inverse(input: Tensor) -> Tensor:
    """``torch.inverse``: :func:`inv`.

    Example:
        >>> import gradviz
        >>> gradviz.inverse(gradviz.eye(2) * 4)
        tensor([[0.2500, 0.0000],
                [0.0000, 0.2500]])
    """
    return inv(input)


def det(A: Tensor) -> Tensor:  # noqa: N803
    """The determinant (``LinalgDetBackward0``, saving ``A``, its ``LU`` and ``pivots`` and the
    result: the gradient is ``grad * det(A) * A⁻ᵀ``; at a singular ``A`` it is PyTorch's, zeros
    in a plain backward and the cofactors under ``create_graph``).

    Example:
        >>> import gradviz
        >>> gradviz.linalg.det(gradviz.tensor([[1.0, 2.0], [3.0, 4.0]]))
        tensor(-2.)
    """
    _square("linalg.det", A)
    return _row("linalg_det", A)[0]


def slogdet(A: Tensor) -> Any:  # noqa: N803
    """``(sign, logabsdet)`` of the determinant (``LinalgSlogdetBackward0``): the logarithm
    stays finite where the determinant itself would overflow.

    Example:
        >>> import gradviz
        >>> gradviz.linalg.slogdet(gradviz.tensor([[0.0, 2.0], [3.0, 0.0]])).sign
        tensor(-1.)
    """
    _square("linalg.slogdet", A)
    sign, logabsdet, _, _ = _row("linalg_slogdet", A)
    return return_types.linalg_slogdet(sign, logabsdet)


def _torch_slogdet(input: Tensor) -> Any:
    """``torch.slogdet``: :func:`slogdet`, as a ``return_types.slogdet``.

    Example:
        >>> import gradviz
        >>> gradviz.slogdet(gradviz.eye(2) * 2).logabsdet
        tensor(1.3863)
    """
    sign, logabsdet = slogdet(input)
    return return_types.slogdet(sign, logabsdet)


def logdet(input: Tensor) -> Tensor:
    """``log(det(A))``: NaN for a negative determinant. Recorded as PyTorch does: ``slogdet``,
    then ``where(sign == -1, nan, logabsdet)`` (``WhereBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.logdet(gradviz.eye(3) * 2)
        tensor(2.0794)
    """
    _square("linalg.slogdet", input)
    sign, logabsdet, _, _ = _row("linalg_slogdet", input)
    return F.where(F.eq(sign, -1.0), math.nan, logabsdet)


def _solve_args(fn: str, A: Tensor, B: Tensor, left: bool) -> None:  # noqa: N803
    _matrix(fn, A)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    _floating(fn, A)
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"{fn}: Expected A and B to have the same dtype, but found A of type "
                           f"{_type_name(A)} and B of type {_type_name(B)} instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    rows, cols = (B.shape[-1], 1) if vector else (B.shape[-2], B.shape[-1])
    n = A.shape[-1]
    if (rows if left else cols) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation {eq} "
                           f"({A.shape[-2]}x{n} and {rows}x{cols})")


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True,  # noqa: N803
             check_errors: bool = False) -> Any:
    """``(result, info)`` of :func:`solve`; ``info`` is not 0 for a singular ``A`` (the result
    is then NaN).

    Example:
        >>> import gradviz
        >>> gradviz.linalg.solve_ex(gradviz.eye(2) * 2, gradviz.ones(2)).result
        tensor([0.5000, 0.5000])
    """
    _solve_args("linalg.solve_ex", A, B, left)
    result, _, _, info = _row("linalg_solve_ex", A, B, left=left)
    if check_errors and info._data.any():
        raise LinAlgError("torch.linalg.solve_ex: The solver failed because the input matrix is "
                          "singular.")
    return return_types.linalg_solve_ex(result, info)


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:  # noqa: N803
    """The solution X of ``A X = B`` (``X A = B`` with ``left=False``) for square ``A``; ``B``
    may be a (batch of) vectors. Recorded as ``LinalgSolveExBackward0`` (saving ``A``, its
    ``LU`` and ``pivots``, ``left`` and the result): ``gB = A⁻ᵀ grad``, ``gA = -gB Xᵀ``.

    Example:
        >>> import gradviz
        >>> A = gradviz.tensor([[3.0, 1.0], [1.0, 2.0]])
        >>> gradviz.linalg.solve(A, gradviz.tensor([9.0, 8.0]))
        tensor([2., 3.])
    """
    F._tensors_only("linalg_solve", A=A, B=B)
    _solve_args("linalg.solve", A, B, left)
    result, _, _, info = _row("linalg_solve_ex", A, B, left=left)
    if info._data.any():
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is "
                          "singular.")
    return result


# -- factorizations ----------------------------------------------------------------------------
_NOT_PD = ("The factorization could not be completed because the input is not "
           "positive-definite (the leading minor of order {info} is not positive-definite).")


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> Any:  # noqa: N803
    """``(L, info)`` of :func:`cholesky`; ``info`` is the order of the first leading minor that
    is not positive definite (0 when there is none).

    Example:
        >>> import gradviz
        >>> gradviz.linalg.cholesky_ex(-gradviz.eye(2)).info
        tensor(1, dtype=gradviz.int32)
    """
    _square("linalg.cholesky_ex", A)
    L, info = _row("linalg_cholesky_ex", A, upper=upper)
    if check_errors:
        _raise_info("linalg.cholesky_ex", info, A.ndim > 2, _NOT_PD)
    return return_types.linalg_cholesky_ex(L, info)


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:  # noqa: N803
    """The lower triangular L with ``L Lᵀ = A`` (``Lᵀ`` with ``upper=True``) of a symmetric
    positive definite ``A``, read from its lower triangle (``LinalgCholeskyExBackward0``,
    saving ``L`` and ``upper``).

    Example:
        >>> import gradviz
        >>> gradviz.linalg.cholesky(gradviz.tensor([[4.0, 2.0], [2.0, 2.0]]))
        tensor([[2., 0.],
                [1., 1.]])
    """
    _square("linalg.cholesky", A)
    L, info = _row("linalg_cholesky_ex", A, upper=upper)
    _raise_info("linalg.cholesky", info, A.ndim > 2, _NOT_PD)
    return L


def torch_cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky`` (deprecated, with PyTorch's warning): ``CholeskyBackward0``.

    Example:
        >>> import gradviz, warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     gradviz.cholesky(gradviz.eye(2) * 4)
        tensor([[2., 0.],
                [0., 2.]])
    """
    warnings.warn(
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in "
        "a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = "
        "torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced "
        "with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results "
        "for all valid (symmetric positive definite) inputs.", UserWarning, stacklevel=2)
    _square("cholesky", input)
    info = _row("linalg_cholesky_ex", input.detach(), upper=upper)[1]
    _raise_info("cholesky", info, input.ndim > 2, _NOT_PD)
    return _row("cholesky", input, upper=upper)


_QR_MODES = ("reduced", "r", "complete")


def qr(A: Tensor, mode: str = "reduced") -> Any:  # noqa: N803
    """``(Q, R)`` with ``A = Q R``, Q's columns orthonormal and R upper triangular
    (``LinalgQrBackward0``, saving Q, R and ``mode``). ``mode='r'`` returns an empty Q and
    cannot be differentiated; ``'complete'`` of a tall matrix neither (both as PyTorch).

    Example:
        >>> import gradviz
        >>> Q, R = gradviz.linalg.qr(gradviz.tensor([[3.0, 0.0], [4.0, 5.0]]))
        >>> (Q @ R).round(decimals=4)
        tensor([[3., 0.],
                [4., 5.]])
    """
    if mode not in _QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    _matrix("linalg.qr", A)
    _floating("linalg.qr", A)
    Q, R = _row("linalg_qr", A, mode=mode)
    return return_types.linalg_qr(Q, R)


def torch_qr(input: Tensor, some: bool = True) -> Any:
    """``torch.qr`` (deprecated, with PyTorch's warning): :func:`qr` with ``mode='reduced'``
    (``some=True``) or ``'complete'``, as a ``return_types.qr``.

    Example:
        >>> import gradviz, warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     gradviz.qr(gradviz.tensor([[0.0, 2.0], [3.0, 0.0]])).R.abs()
        tensor([[3., 0.],
                [0., 2.]])
    """
    warnings.warn(
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
        "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string "
        "parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\nQ, R = "
        "torch.linalg.qr(A, 'reduced' if some else 'complete')", UserWarning, stacklevel=2)
    Q, R = qr(input, "reduced" if some else "complete")
    return return_types.qr(Q, R)


def _uplo(UPLO: str) -> None:  # noqa: N803
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def eigh(A: Tensor, UPLO: str = "L") -> Any:  # noqa: N803
    """``(eigenvalues, eigenvectors)`` of a symmetric matrix, eigenvalues ascending, read from
    its lower (``UPLO='L'``) or upper triangle (``LinalgEighBackward0``, saving both outputs).
    The gradient of the eigenvectors is undefined for repeated eigenvalues (infinities).

    Example:
        >>> import gradviz
        >>> gradviz.linalg.eigh(gradviz.tensor([[2.0, 1.0], [1.0, 2.0]])).eigenvalues
        tensor([1., 3.])
    """
    _uplo(UPLO)
    _square("linalg.eigh", A)
    w, v = _row("linalg_eigh", A, UPLO=UPLO)
    return return_types.linalg_eigh(w, v)


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803
    """The eigenvalues of a symmetric matrix, ascending: :func:`eigh`'s first output (PyTorch
    records the same ``LinalgEighBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.linalg.eigvalsh(gradviz.tensor([[2.0, 0.0], [0.0, 1.0]]))
        tensor([1., 2.])
    """
    _uplo(UPLO)
    _square("linalg.eigvalsh", A)
    return _row("linalg_eigh", A, UPLO=UPLO)[0]


def svd(A: Tensor, full_matrices: bool = True) -> Any:  # noqa: N803
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, singular values descending
    (``LinalgSvdBackward0``, saving U, S, Vh, ``full_matrices`` and the number of singular
    values). The gradient of U and Vh is undefined for repeated singular values; with
    ``full_matrices`` only the first min(m, n) singular vectors carry gradient (as PyTorch).

    Example:
        >>> import gradviz
        >>> gradviz.linalg.svd(gradviz.tensor([[3.0, 0.0], [0.0, -2.0]])).S
        tensor([3., 2.])
    """
    _matrix("linalg.svd", A)
    _floating("linalg.svd", A)
    U, S, Vh = _row("linalg_svd", A, full_matrices=bool(full_matrices))
    return return_types.linalg_svd(U, S, Vh)


def svdvals(A: Tensor) -> Tensor:  # noqa: N803
    """The singular values, descending: the ``S`` of :func:`svd` with
    ``full_matrices=False`` (PyTorch records the same ``LinalgSvdBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.linalg.svdvals(gradviz.tensor([[0.0, 2.0], [1.0, 0.0]]))
        tensor([2., 1.])
    """
    _matrix("linalg.svd", A)
    _floating("linalg.svd", A)
    return _row("linalg_svd", A, full_matrices=False)[1]


def torch_svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> Any:
    """``torch.svd``: ``(U, S, V)`` with ``V = Vhᵀ`` (a ``TransposeBackward0``); ``some=False``
    gives the full U and V. ``compute_uv=False`` gives zeros for U and V, as PyTorch.

    Example:
        >>> import gradviz
        >>> gradviz.svd(gradviz.eye(2) * 3).S
        tensor([3., 3.])
    """
    _matrix("linalg.svd", input)
    _floating("linalg.svd", input)
    if not compute_uv:
        m, n = input.shape[-2:]
        S = svdvals(input)
        U = Tensor._make(np.zeros(tuple(input.shape[:-2]) + (m, m), input._data.dtype))
        V = Tensor._make(np.zeros(tuple(input.shape[:-2]) + (n, n), input._data.dtype))
        return return_types.svd(U, S, V)
    U, S, Vh = _row("linalg_svd", input, full_matrices=not some)
    return return_types.svd(U, S, F.transpose(Vh, -2, -1))


def pinv(A: Tensor, *, atol: float | Tensor | None = None,  # noqa: N803
         rtol: float | Tensor | None = None, hermitian: bool = False) -> Tensor:
    """The Moore-Penrose pseudo-inverse: singular values at most ``max(atol, rtol * largest)``
    count as zero (``rtol`` defaults to eps * max(m, n); a tolerance may be a tensor, one value
    per matrix of the batch). Recorded as ``LinalgPinvBackward0`` (saving the input and the
    result); differentiable where the rank does not change.

    Example:
        >>> import gradviz
        >>> gradviz.linalg.pinv(gradviz.tensor([[2.0, 0.0], [0.0, 0.0]]))
        tensor([[0.5000, 0.0000],
                [0.0000, 0.0000]])
    """
    if not isinstance(A, Tensor) or A.ndim < 2 or A._data.dtype.kind != "f":
        shape = list(A.shape) if isinstance(A, Tensor) else "?"
        dt = _type_name(A) if isinstance(A, Tensor) else type(A).__name__
        raise RuntimeError(f"linalg.pinv({dt}{{{shape}}}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types")
    # tensor tolerances are constants of the forward: no edge, no gradient (as in torch)
    atol, rtol = (t._data if isinstance(t, Tensor) else t for t in (atol, rtol))
    return _row("linalg_pinv", A, atol=atol, rtol=rtol, hermitian=hermitian)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """``torch.pinverse``: :func:`pinv` with ``rtol=rcond``.

    Example:
        >>> import gradviz
        >>> gradviz.pinverse(gradviz.eye(2) * 2)
        tensor([[0.5000, 0.0000],
                [0.0000, 0.5000]])
    """
    return pinv(input, rtol=rcond)


# -- powers and products --------------------------------------------------------------------------
def matrix_power(A: Tensor, n: int) -> Tensor:  # noqa: N803
    """``A`` multiplied by itself ``n`` times (``n < 0``: of its inverse), recorded as PyTorch
    computes it: ``n == 0`` is a clone overwritten with the identity (``CopyBackwards``), 1 a
    clone, -1 the inverse itself, 2 and 3 one and two ``matmul``, larger powers repeated
    squaring.

    Example:
        >>> import gradviz
        >>> gradviz.linalg.matrix_power(gradviz.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)
        tensor([[1., 3.],
                [0., 1.]])
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    _matrix("linalg.matrix_power", A)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {A.shape[-2]} by {A.shape[-1]} matrices")
    n = int(n)
    if n == 0:
        out = F.clone(A)
        eye = np.broadcast_to(np.eye(A.shape[-1], dtype=A._data.dtype), tuple(A.shape))
        return F.copy_(out, Tensor._make(np.ascontiguousarray(eye)))
    if n < 0:
        A, n = inv(A), -n
        if n == 1:  # the inverse itself, not a clone of it (LinalgInvExBackward0 on top)
            return A
    if n == 1:
        return F.clone(A)
    if n == 2:
        return F.matmul(A, A)
    if n == 3:
        return F.matmul(F.matmul(A, A), A)
    z = result = None
    while n > 0:  # binary decomposition: square z, multiply it in where n has a 1 bit
        bit, n = n % 2, n // 2
        z = A if z is None else F.matmul(z, z)
        if bit:
            result = z if result is None else F.matmul(result, z)
    assert result is not None
    return result


def _chain_order(shapes: list[tuple[int, int]]) -> list[list[int]]:
    """The split of the cheapest parenthesization of a matrix chain (the classic dynamic
    program, first cheapest split as PyTorch's ``matrix_chain_order``)."""
    n = len(shapes)
    p = [shapes[0][0]] + [s[1] for s in shapes]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = -1
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] == -1 or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain_multiply(tensors: list[Tensor], split: list[list[int]]) -> Tensor:
    """Multiply ``tensors[0..n-1]`` in the order ``split`` gives, with an explicit stack
    (left operand first, then the right, then their ``mm``)."""
    done: dict[tuple[int, int], Tensor] = {}
    stack = [(0, len(tensors) - 1)]
    while stack:
        i, j = stack[-1]
        if i == j:
            done[(i, j)] = tensors[i]
            stack.pop()
            continue
        k = split[i][j]
        left, right = (i, k), (k + 1, j)
        if left not in done:
            stack.append(left)
        elif right not in done:
            stack.append(right)
        else:
            done[(i, j)] = F.mm(done.pop(left), done.pop(right))
            stack.pop()
    return done[(0, len(tensors) - 1)]


def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """The product of a chain of matrices, multiplied in the cheapest order (the first may be
    a row vector, the last a column vector, given 1-D), as ``mm`` calls and a final view, as
    PyTorch records it.

    Example:
        >>> import gradviz
        >>> gradviz.linalg.multi_dot([gradviz.ones(2), gradviz.ones(2, 3), gradviz.ones(3)])
        tensor(6.)
    """
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    out_shape: list[int] = []
    mats = list(tensors)
    first, last = tensors[0], tensors[-1]
    if first.ndim == 1:
        mats[0] = F.unsqueeze(first, 0)
    elif first.ndim == 2:
        out_shape.append(first.shape[0])
    else:
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got "
                           f"{first.ndim}D")
    if last.ndim == 1:
        mats[-1] = F.unsqueeze(last, -1)
    elif last.ndim == 2:
        out_shape.append(last.shape[1])
    else:
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.ndim}D")
    for i in range(1, n - 1):
        if tensors[i].ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].ndim}D")
    for i in range(1, n):
        if mats[i]._data.dtype != mats[0]._data.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {mats[0].dtype} and tensor {i} {mats[i].dtype}")
        if mats[i - 1].shape[-1] != mats[i].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes "
                               f"{list(tensors[i - 1].shape)} and {list(tensors[i].shape)} "
                               "cannot be multiplied")
    if n == 2:
        result = F.mm(mats[0], mats[1])
    elif n == 3:
        a, b = mats[0].shape
        c, d = mats[2].shape
        if (a * c) * (b + d) > (b * d) * (a + c):  # (AB)C costs more than A(BC)
            result = F.mm(mats[0], F.mm(mats[1], mats[2]))
        else:
            result = F.mm(F.mm(mats[0], mats[1]), mats[2])
    else:
        result = _chain_multiply(mats, _chain_order([tuple(m.shape) for m in mats]))
    return F.view(result, tuple(out_shape))


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """``torch.linalg.matmul``: :func:`gradviz.matmul`.

    Example:
        >>> import gradviz
        >>> gradviz.linalg.matmul(gradviz.eye(2), gradviz.ones(2))
        tensor([1., 1.])
    """
    return F.matmul(input, other)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: N803
    """``torch.linalg.diagonal``: :func:`gradviz.diagonal` over the last two dimensions.

    Example:
        >>> import gradviz
        >>> gradviz.linalg.diagonal(gradviz.eye(2))
        tensor([1., 1.])
    """
    return F.diagonal(A, offset, dim1, dim2)


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """``torch.linalg.cross``: the cross product along ``dim`` (default the last),
    ``LinalgCrossBackward0``.

    Example:
        >>> import gradviz
        >>> gradviz.linalg.cross(gradviz.tensor([1.0, 0.0, 0.0]), gradviz.tensor([0.0, 1.0, 0.0]))
        tensor([0., 0., 1.])
    """
    return F.cross(input, other, dim=dim)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of vectors along ``dim`` (broadcasting): ``vdot`` for two 1-D tensors,
    else ``(x * y).sum(dim)``, as PyTorch records it.

    Example:
        >>> import gradviz
        >>> gradviz.linalg.vecdot(gradviz.ones(2, 3), gradviz.ones(3))
        tensor([3., 3.])
    """
    if x.ndim == 1 and y.ndim == 1 and dim in (0, -1):
        return vdot(x, y)
    return F.sum(F.mul(x, y), dim)


# -- norms -----------------------------------------------------------------------------------------
def _norm_dims(dim: Any, nd: int) -> tuple[int, ...] | None:
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    return tuple(_wrap_dim(int(d), nd) for d in dims)


def vector_norm(x: Tensor, ord: float = 2, dim: Any = None, keepdim: bool = False,  # noqa: A002
                *, dtype: Any = None) -> Tensor:
    """The vector ``ord``-norm of all elements, or over ``dim`` (ord 2, 1, inf, -inf, 0 or any
    number), ``LinalgVectorNormBackward0``.

    Example:
        >>> import gradviz
        >>> gradviz.linalg.vector_norm(gradviz.tensor([3.0, -4.0]), ord=1)
        tensor(7.)
    """
    if dtype is not None:
        x = x.to(dtype)
    if x._data.dtype.kind != "f":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_type_name(x)}")
    return _row("norm", x, ord=ord, dim=_norm_dims(dim, x.ndim), keepdim=bool(keepdim))


def _backshift(d0: int, d1: int, nd: int) -> list[int]:
    """The permutation that moves dimensions ``d0`` and ``d1`` to the end, in that order."""
    return [i for i in range(nd) if i not in (d0, d1)] + [d0, d1]


def matrix_norm(A: Tensor, ord: Any = "fro", dim: Any = (-2, -1),  # noqa: A002, N803
                keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The matrix norm over the two dimensions ``dim``: ``'fro'`` (``vector_norm`` over both),
    ``'nuc'`` (sum of singular values), 2 / -2 (largest / smallest singular value), 1 / -1
    (max / min column sum), inf / -inf (max / min row sum), composed as PyTorch composes them.

    Example:
        >>> import gradviz
        >>> gradviz.linalg.matrix_norm(gradviz.tensor([[1.0, -2.0], [3.0, 4.0]]), ord=1)
        tensor(6.)
    """
    _matrix("linalg.matrix_norm", A)
    if dtype is not None:
        A = A.to(dtype)
    dims = _norm_dims(dim, A.ndim)
    if dims is None or len(dims) != 2:
        given = " ".join(str(d) for d in dim) if isinstance(dim, (list, tuple)) else dim
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {given}")
    d0, d1 = dims
    if ord == "fro":
        return vector_norm(A, 2, dims, keepdim)
    if ord == "nuc" or ord in (2, -2):
        _floating("linalg.matrix_norm", A)
        perm = _backshift(d0, d1, A.ndim)
        s = svdvals(F.permute(A, perm))
        if ord == "nuc":
            out = F.sum(s, -1, keepdim)
        else:
            out = (F.amax if ord == 2 else F.amin)(s, -1, keepdim)
        if keepdim:  # back to A's layout: the reduced dimensions where they were
            out = F.unsqueeze(out, -1)
            out = F.permute(out, [perm.index(i) for i in range(A.ndim)])
        return out
    if isinstance(ord, str) or ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if abs(ord) == math.inf:
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    sums = vector_norm(A, 1.0, (d0,), keepdim)
    return (F.amax if ord > 0 else F.amin)(sums, d1, keepdim)


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False,  # noqa: A002, N803
         *, dtype: Any = None) -> Tensor:
    """``torch.linalg.norm``: a vector norm (1-D input, one ``dim``, or no ``ord``: the 2-norm
    of all elements) or a matrix norm (2-D input with ``ord``, two ``dim``).

    Example:
        >>> import gradviz
        >>> gradviz.linalg.norm(gradviz.tensor([[3.0, 0.0], [0.0, 4.0]]))
        tensor(5.)
    """
    if dim is not None:
        dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is not None:
        if isinstance(ord, str):
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        if A.ndim == 1:
            return vector_norm(A, ord, None, keepdim, dtype=dtype)
        if A.ndim == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A.ndim}D.")
    return vector_norm(A, 2.0, None, keepdim, dtype=dtype)


# -- the torch namespace's products and distances -------------------------------------------------
def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm of ``input - other`` (broadcasting), ``DistBackward0``.

    Example:
        >>> import gradviz
        >>> gradviz.dist(gradviz.tensor([1.0, 1.0]), gradviz.tensor([4.0, 5.0]))
        tensor(5.)
    """
    F._tensors_only("dist", input=input, other=other)
    for t in (input, other):
        if t._data.dtype.kind != "f":
            raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                               f"Got {_type_name(t)} instead.")
    _broadcast_check(input, other)
    return _row("dist", input, other, p=p)


def _broadcast_check(a: Tensor, b: Tensor) -> None:
    """PyTorch's error for shapes that do not broadcast (the first clash from the right)."""
    sa, sb = tuple(a.shape), tuple(b.shape)
    nd = builtins.max(len(sa), len(sb))
    for i in range(1, nd + 1):
        x = sa[-i] if i <= len(sa) else 1
        y = sb[-i] if i <= len(sb) else 1
        if x != y and 1 not in (x, y):
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {nd - i}")


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """The dot product of two 1-D tensors (the first conjugated: the same for real ones),
    ``VdotBackward0``.

    Example:
        >>> import gradviz
        >>> gradviz.vdot(gradviz.tensor([1.0, 2.0]), gradviz.tensor([3.0, 4.0]))
        tensor(11.)
    """
    F._tensors_only("vdot", input=input, other=other)
    F._check_dot(input, other)
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"expected both vectors to have same dtype, but found "
                           f"{_type_name(input)} and {_type_name(other)}")
    return _row("vdot", input, other)


def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a 2-D tensor (``TraceBackward0``); an integer matrix
    sums to int64. ``torch.trace``: reached as ``gradviz.trace(x)``, whose other use is the
    tracer (:func:`gradviz.tracer`), and as ``x.trace()``.

    Example:
        >>> import gradviz
        >>> gradviz.trace(gradviz.tensor([[1.0, 2.0], [3.0, 4.0]]))
        tensor(5.)
    """
    F._tensors_only("trace", input=input)
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input._data.dtype == np.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return _row("trace", input)


def inner(input: Tensor, other: Tensor) -> Tensor:
    """Sum of products over the last dimension of both: a product for a 0-d operand, else
    ``tensordot`` over the last dimensions (its permutes, reshapes and ``mm``).

    Example:
        >>> import gradviz
        >>> gradviz.inner(gradviz.ones(2, 3), gradviz.ones(4, 3)).shape
        gradviz.Size([2, 4])
    """
    F._tensors_only("inner", input=input, other=other)
    if input.ndim == 0 or other.ndim == 0:
        return F.mul(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    if input.ndim == 1 and other.ndim == 1:  # tensordot's 1-D case: a dot, viewed as 0-d
        return F.view(F.dot(F.permute(input, (0,)), F.permute(other, (0,))), ())
    return F.tensordot(input, other, ([-1], [-1]))


def _bmm_args(fn: str, input: Tensor, batch1: Tensor, batch2: Tensor) -> None:
    F._tensors_only(fn, input=input, batch1=batch1, batch2=batch2)
    for t in (batch1, batch2):
        if t._data.dtype != input._data.dtype:
            raise RuntimeError(f"expected scalar type {_type_name(input)} but found "
                               f"{_type_name(t)}")
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if fn == "addbmm" and batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if fn == "addbmm" and batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
                           f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})")
    if fn == "baddbmm" and (batch2.shape[0], batch2.shape[1]) != (batch1.shape[0],
                                                                  batch1.shape[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch1.shape[0]}, {batch1.shape[2]}] but got: "
                           f"[{batch2.shape[0]}, {batch2.shape[1]}].")


def _out_shape(fn: str, input: Tensor, shape: tuple[int, ...]) -> None:
    try:
        out = np.broadcast_shapes(tuple(input.shape), shape)
    except ValueError:
        out = None
    if out != shape:
        raise RuntimeError(f"The expanded size of the tensor ({shape[-1]}) must match the "
                           f"existing size ({input.shape[-1]}) at non-singleton dimension "
                           f"{input.ndim - 1}.  Target sizes: {list(shape)}.  Tensor sizes: "
                           f"{list(input.shape)}")


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: float = 1,
            alpha: float = 1) -> Tensor:
    """``beta * input + alpha * batch1 @ batch2`` for batches of matrices (``input``
    broadcasts), ``BaddbmmBackward0``.

    Example:
        >>> import gradviz
        >>> gradviz.baddbmm(gradviz.zeros(2, 1, 1), gradviz.ones(2, 1, 3), gradviz.ones(2, 3, 1))
        tensor([[[3.]],
        <BLANKLINE>
                [[3.]]])
    """
    _bmm_args("baddbmm", input, batch1, batch2)
    _out_shape("baddbmm", input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    return _row("baddbmm", input, batch1, batch2, beta=beta, alpha=alpha)


def baddbmm_(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: float = 1,
             alpha: float = 1) -> Tensor:
    """In-place :func:`baddbmm` (``input`` must have the product's shape)."""
    _bmm_args("baddbmm", input, batch1, batch2)
    return dispatch_inplace(OPS["baddbmm"], input, batch1, batch2, beta=beta, alpha=alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: float = 1,
           alpha: float = 1) -> Tensor:
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]`` (``input`` broadcasts),
    ``AddbmmBackward0``.

    Example:
        >>> import gradviz
        >>> gradviz.addbmm(gradviz.zeros(1, 1), gradviz.ones(2, 1, 3), gradviz.ones(2, 3, 1))
        tensor([[6.]])
    """
    _bmm_args("addbmm", input, batch1, batch2)
    _out_shape("addbmm", input, (batch1.shape[1], batch2.shape[2]))
    return _row("addbmm", input, batch1, batch2, beta=beta, alpha=alpha)


def addbmm_(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: float = 1,
            alpha: float = 1) -> Tensor:
    """In-place :func:`addbmm`."""
    _bmm_args("addbmm", input, batch1, batch2)
    return dispatch_inplace(OPS["addbmm"], input, batch1, batch2, beta=beta, alpha=alpha)


_COMPUTE_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                  "donot_use_mm_for_euclid_dist": 2}


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The ``p``-norm distance between each row of ``x1`` and each row of ``x2`` (batches
    broadcast): ``CdistBackward0``; for p = 2 with more than 25 rows on either side (or
    ``compute_mode='use_mm_for_euclid_dist'``), PyTorch's matrix-product path,
    ``EuclideanDistBackward0`` then a view.

    Example:
        >>> import gradviz
        >>> gradviz.cdist(gradviz.tensor([[0.0, 0.0]]), gradviz.tensor([[3.0, 4.0], [1.0, 0.0]]))
        tensor([[5., 1.]])
    """
    F._tensors_only("cdist", x1=x1, x2=x2)
    for name, t in (("X1", x1), ("X2", x2)):
        if t.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for t in (x1, x2):
        _floating("cdist", t)
    mode = _COMPUTE_MODES[compute_mode]
    r1, r2 = x1.shape[-2], x2.shape[-2]
    batch = np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    if p == 2 and x1.numel() and x2.numel() and (mode == 1 or (mode == 0 and builtins.max(
            r1, r2) > 25)):
        out_shape = tuple(batch) + (r1, r2)
        product = int(np.prod(batch, dtype=np.int64))
        if product != 1:  # PyTorch expands both to the common batch and folds it
            c = x1.shape[-1]
            x1 = F.reshape(F.expand(x1, tuple(batch) + (r1, c)), (product, r1, c))
            x2 = F.reshape(F.expand(x2, tuple(batch) + (r2, c)), (product, r2, c))
        return F.view(_row("_euclidean_dist", x1, x2), out_shape)
    return _row("cdist", x1, x2, p=float(p))


# What the torch namespace (and so gradviz.ops.functional) gets from this module, by torch's name;
# gradviz/ops/__init__.py installs them.
TORCH_NAMESPACE = {
    "inverse": inverse, "det": det, "logdet": logdet, "slogdet": _torch_slogdet,
    "cholesky": torch_cholesky, "matrix_power": matrix_power, "dist": dist, "inner": inner,
    "vdot": vdot, "baddbmm": baddbmm, "addbmm": addbmm, "cdist": cdist, "svd": torch_svd,
    "pinverse": pinverse, "qr": torch_qr,
}
