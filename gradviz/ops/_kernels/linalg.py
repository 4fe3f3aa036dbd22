"""Forwards of the linear algebra rows: matrix products, torch.linalg's factorizations and
solvers, cross products, distances, and _trilinear (F.bilinear)."""

from __future__ import annotations

import numpy as np

from gradviz.ops._kernels.reductions import vector_norm


def addmm(a, m1, m2, beta=1, alpha=1):
    return (a if beta == 1 else beta * a) + (m1 @ m2 if alpha == 1 else alpha * (m1 @ m2))


def linalg_cross(a, b, dim=-1):
    return np.cross(a, b, axis=dim)


def trilinear(i1: np.ndarray, i2: np.ndarray, i3: np.ndarray, expand1: tuple = (),
              expand2: tuple = (), expand3: tuple = (), sumdim: tuple = (),
              unroll_dim: int = 1) -> np.ndarray:
    """``at::_trilinear``: each input unsqueezed at its ``expand`` dims, the three multiplied
    (broadcasting) and summed over ``sumdim``."""
    prod = (np.expand_dims(i1, expand1) * np.expand_dims(i2, expand2)
            * np.expand_dims(i3, expand3))
    return np.ascontiguousarray(prod.sum(axis=tuple(sumdim)))


# Linear algebra. NumPy's LAPACK does the factorizations; what PyTorch returns
# beside them (LU and pivots, info) is computed here in PyTorch's layout.
def lapack_layout(x: np.ndarray) -> np.ndarray:
    """``x`` with each matrix stored column by column (Fortran order), the batch outermost: the
    layout PyTorch's LAPACK-backed results have (``inv(A).stride()`` is ``(1, n)``), so that
    ``view`` and ``reshape`` of them behave (and record) as in PyTorch."""
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)


def lu_factor(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(LU, pivots)`` of ``a`` (``..., n, n``) by partial pivoting, as LAPACK's getrf packs
    them: the unit lower factor below the diagonal, the upper factor on and above it, and
    ``pivots`` (int32, 1-based): row ``k`` was swapped with row ``pivots[k] - 1``."""
    n = a.shape[-1]
    batch = int(np.prod(a.shape[:-2], dtype=np.int64))
    lu = np.array(a, dtype=a.dtype, copy=True).reshape(batch, n, n)
    piv = np.zeros((lu.shape[0], n), np.int32)
    rows = np.arange(lu.shape[0])
    for k in range(n):  # one column at a time, over the whole batch at once
        p = k + np.argmax(np.abs(lu[:, k:, k]), axis=1)
        piv[:, k] = p + 1
        top = lu[rows, k].copy()
        lu[rows, k] = lu[rows, p]
        lu[rows, p] = top
        pivot = lu[:, k, k]
        scale = np.where(pivot == 0, 0.0, 1.0 / np.where(pivot == 0, 1.0, pivot))
        lu[:, k + 1:, k] *= scale[:, None]
        lu[:, k + 1:, k + 1:] -= lu[:, k + 1:, k:k + 1] * lu[:, k:k + 1, k + 1:]
    return lu.reshape(a.shape), piv.reshape(a.shape[:-1])


def det_grad_lu(d: np.ndarray, lu: np.ndarray, piv: np.ndarray) -> np.ndarray:
    """The gradient of ``det`` in a plain backward, as PyTorch computes it from the forward's
    factorization: the solution X of ``Aᵀ X = d I`` (``d = grad * det`` per matrix), with each
    zero on U's diagonal replaced by the dtype's epsilon (det is C¹, so a singular A is taken
    through a nearby invertible one; there ``d`` is 0 and so is X). ``A = P L U`` is solved as
    LAPACK's getrs does for ``Aᵀ``: ``Uᵀ Z = d I``, then ``Lᵀ Y = Z``, then ``X = P Y``."""
    n = lu.shape[-1]
    diag = np.diagonal(lu, axis1=-2, axis2=-1)
    u = np.triu(lu) + (np.where(diag == 0, np.finfo(lu.dtype).eps, 0)[..., None]
                       * np.eye(n, dtype=lu.dtype))
    x = np.broadcast_to(np.asarray(d, lu.dtype)[..., None, None] * np.eye(n, dtype=lu.dtype),
                        lu.shape).copy()
    for i in range(n):  # Uᵀ is lower triangular: forward substitution
        x[..., i, :] = (x[..., i, :] - np.einsum("...k,...kj->...j", u[..., :i, i],
                                                 x[..., :i, :])) / u[..., i, i, None]
    for i in range(n - 1, -1, -1):  # Lᵀ is unit upper triangular: back substitution
        x[..., i, :] -= np.einsum("...k,...kj->...j", lu[..., i + 1:, i], x[..., i + 1:, :])
    for k in range(n - 1, -1, -1):  # undo the row swaps, the last one first
        p = piv[..., k] - 1
        rows = np.take_along_axis(x, p[..., None, None], axis=-2).copy()
        np.put_along_axis(x, p[..., None, None], x[..., k:k + 1, :], axis=-2)
        x[..., k, :] = rows[..., 0, :]
    return x


def _first_zero_pivot(lu: np.ndarray) -> np.ndarray:
    """LAPACK's ``info`` of a factorization: 1 + the index of the first zero on the diagonal,
    0 where there is none (int32, one per matrix)."""
    zero = np.diagonal(lu, axis1=-2, axis2=-1) == 0
    if zero.shape[-1] == 0:  # 0x0 matrices have no pivot to be zero
        return np.zeros(zero.shape[:-1], np.int32)
    return np.where(zero.any(-1), zero.argmax(-1) + 1, 0).astype(np.int32)


def linalg_inv_ex(a: np.ndarray, check_errors: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(inverse, info)``; a singular matrix gives ``info > 0`` and infinities, as LAPACK's."""
    lu, _ = lu_factor(a)
    info = _first_zero_pivot(lu)
    if not info.any():
        return lapack_layout(np.linalg.inv(a)), info
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.stack([np.linalg.inv(m) if i == 0 else _inv_singular(m)
                        for m, i in zip(a.reshape(-1, *a.shape[-2:]), info.reshape(-1),
                                        strict=True)])
    return lapack_layout(out.reshape(a.shape)), info


def _inv_singular(m: np.ndarray) -> np.ndarray:
    # Gauss-Jordan without the LinAlgError: the zero pivot turns into infinities and NaNs.
    lu, piv = lu_factor(m)
    n = m.shape[-1]
    perm = np.arange(n)
    for k, p in enumerate(piv - 1):
        perm[[k, p]] = perm[[p, k]]
    lower = np.tril(lu, -1) + np.eye(n, dtype=m.dtype)
    upper = np.triu(lu)
    y = np.linalg.solve(lower, np.eye(n, dtype=m.dtype)[perm])
    x = np.zeros_like(y)
    for i in range(n - 1, -1, -1):
        x[i] = (y[i] - upper[i, i + 1:] @ x[i + 1:]) / upper[i, i]
    return x


def linalg_det(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(det, LU, pivots)``: PyTorch's ``_linalg_det`` keeps the factorization for backward."""
    lu, piv = lu_factor(a)
    return np.asarray(np.linalg.det(a), a.dtype), lu, piv


def linalg_slogdet(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(sign, logabsdet, LU, pivots)`` (PyTorch's ``_linalg_slogdet``)."""
    lu, piv = lu_factor(a)
    with np.errstate(divide="ignore"):
        sign, logabs = np.linalg.slogdet(a)
    return np.asarray(sign, a.dtype), np.asarray(logabs, a.dtype), lu, piv


def linalg_solve_ex(a: np.ndarray, b: np.ndarray, left: bool = True
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(result, LU, pivots, info)`` of ``A X = B`` (``X A = B`` when not ``left``); ``B`` is a
    batch of vectors when it has one dimension less than ``A`` (PyTorch's rule)."""
    lu, piv = lu_factor(a)
    info = _first_zero_pivot(lu)
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    if info.any():  # what LAPACK leaves is not specified: NaNs say "no solution"
        shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-1 if vector else -2])
        x = np.full(shape + b.shape[-1 if vector else -2:], np.nan, a.dtype)
        return x, lu, piv, info
    if not left:  # X A = B is A^T X^T = B^T
        x = np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    elif vector:
        x = np.linalg.solve(a, b[..., None])[..., 0]
    else:
        x = lapack_layout(np.linalg.solve(a, b))
    return x.astype(a.dtype, copy=False), lu, piv, info


def linalg_cholesky_ex(a: np.ndarray, upper: bool = False, check_errors: bool = False
                       ) -> tuple[np.ndarray, np.ndarray]:
    """``(L, info)``: the lower (or upper) factor of a symmetric positive definite matrix, read
    from its lower triangle; ``info`` is the order of the first leading minor that is not
    positive definite (0 when all are)."""
    n = a.shape[-1]
    sym = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    flat = sym.reshape(int(np.prod(a.shape[:-2], dtype=np.int64)), n, n)  # (-1 fails for 0x0)
    out = np.zeros_like(flat)
    info = np.zeros(flat.shape[0], np.int32)
    for i, m in enumerate(flat):
        try:
            out[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            info[i] = next(k for k in range(1, n + 1)
                           if np.linalg.eigvalsh(m[:k, :k]).min() <= 0)
    out = out.reshape(a.shape)
    if upper:
        out = np.swapaxes(out, -1, -2)
    return lapack_layout(out), info.reshape(a.shape[:-2])


def linalg_qr(a: np.ndarray, mode: str = "reduced") -> tuple[np.ndarray, np.ndarray]:
    """``(Q, R)``; ``mode='r'`` gives an empty Q, as PyTorch."""
    if mode == "r":
        return np.zeros((0,), a.dtype), np.linalg.qr(a, mode="r").astype(a.dtype, copy=False)
    q, r = np.linalg.qr(a, mode=mode)
    return lapack_layout(q.astype(a.dtype, copy=False)), lapack_layout(r.astype(a.dtype,
                                                                               copy=False))


def linalg_eigh(a: np.ndarray, UPLO: str = "L") -> tuple[np.ndarray, np.ndarray]:  # noqa: N803
    """``(eigenvalues, eigenvectors)`` in ascending order, read from one triangle."""
    w, v = np.linalg.eigh(a, UPLO=UPLO)
    return w.astype(a.dtype, copy=False), lapack_layout(v.astype(a.dtype, copy=False))


def linalg_svd(a: np.ndarray, full_matrices: bool = True
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(U, S, Vh)``, singular values in descending order."""
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return (lapack_layout(u.astype(a.dtype, copy=False)), s.astype(a.dtype, copy=False),
            lapack_layout(vh.astype(a.dtype, copy=False)))


def linalg_pinv(a: np.ndarray, atol: float | None = None, rtol: float | None = None,
                hermitian: bool = False) -> np.ndarray:
    """The pseudo-inverse, singular values below ``max(atol, rtol * largest)`` treated as zero
    (PyTorch's default: ``rtol = eps * max(m, n)`` when neither is given)."""
    if atol is None and rtol is None:
        rtol = np.finfo(a.dtype).eps * max(a.shape[-2:])
    if hermitian:  # eigh of the lower triangle, as torch (the upper one is never read):
        # A = V diag(w) Vᵀ, the singular values |w|, and the pseudo-inverse V diag(1/w) Vᵀ
        w, v = np.linalg.eigh(a, UPLO="L")
        s, u, vh = np.abs(w), v * np.where(w < 0, -1.0, 1.0)[..., None, :], np.swapaxes(v, -1, -2)
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
    largest = s.max(-1, keepdims=True) if s.shape[-1] else s
    # numbers, or arrays of one tolerance per matrix (broadcast over the batch dims)
    atol, rtol = (0.0 if t is None else np.asarray(t, s.dtype)[..., None] for t in (atol, rtol))
    cut = np.maximum(atol, rtol * largest)
    inv_s = np.where(s > cut, 1 / np.where(s > cut, s, 1), 0)
    out = np.swapaxes(vh, -1, -2) @ (inv_s[..., :, None] * np.swapaxes(u, -1, -2))
    return out.astype(a.dtype, copy=False)


def dist(a: np.ndarray, b: np.ndarray, p: float = 2) -> np.ndarray:
    return vector_norm(a - b, p)


def vdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(np.vdot(a, b), np.result_type(a, b))


def trace(a: np.ndarray) -> np.ndarray:
    """The sum of a matrix's main diagonal; an integer one sums to int64, as PyTorch's does."""
    dt = np.dtype(np.int64) if a.dtype.kind in "iu" else a.dtype
    return np.asarray(np.trace(a, dtype=dt), dt)


def baddbmm(a: np.ndarray, batch1: np.ndarray, batch2: np.ndarray, beta: float = 1,
            alpha: float = 1) -> np.ndarray:
    prod = np.matmul(batch1, batch2)
    out = prod if alpha == 1 else alpha * prod
    if beta == 0:  # beta=0 ignores self, NaNs included (PyTorch's rule)
        return np.broadcast_to(out, np.broadcast_shapes(a.shape, out.shape)).astype(
            batch1.dtype, copy=True)
    return (out + (a if beta == 1 else beta * a)).astype(batch1.dtype, copy=False)


def addbmm(a: np.ndarray, batch1: np.ndarray, batch2: np.ndarray, beta: float = 1,
           alpha: float = 1) -> np.ndarray:
    return baddbmm(a, batch1.transpose(1, 0, 2).reshape(batch1.shape[1], -1),
                   batch2.reshape(-1, batch2.shape[2]), beta, alpha)


def cdist(x1: np.ndarray, x2: np.ndarray, p: float = 2.0) -> np.ndarray:
    """The p-norm distance between each row of ``x1`` and each row of ``x2`` (batched)."""
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    if not diff.shape[-1]:  # rows of no features are all at distance 0, for every p
        return np.zeros(diff.shape[:-1], x1.dtype)
    return vector_norm(diff, p, (-1,))


def euclidean_dist(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """``cdist`` with p=2 for many rows: PyTorch's ``_euclidean_dist`` (it computes it through
    a matrix product; the distances are the same)."""
    return cdist(x1, x2, 2.0)
