"""Rows of linear algebra: matrix products, torch.linalg's decompositions and solvers,
cross products, distances and F.bilinear's _trilinear."""

from __future__ import annotations

import math

import numpy as np

from gradviz.ops import _formula as f
from gradviz.ops import _kernels as K
from gradviz.ops.derivatives.reductions import _norm_backward
from gradviz.ops.opinfo import defop
from gradviz.ops.samples import A, C, R, Sample
from gradviz.tensor import Tensor


def _mat2_grad(grad, mat1):
    """``mat1.T @ grad``, computed as ``(grad.T @ mat1).T``: the same numbers, laid out so that
    for ``F.linear``'s ``weight.t()`` the weight's gradient comes out contiguous.

    NOTE [perf]: the gradient of ``weight.t()`` reaches ``weight`` through ``TBackward0``; in
    this layout that transpose is C-contiguous and ``AccumulateGrad`` copies it in one memcpy
    instead of a strided transpose.
    """
    return f.t(f.t(grad) @ mat1)


# PyTorch's mm formulas also take the sizes (and strides, which gradviz does not model).
defop("mm", "MmBackward0", np.matmul, ("self", "mat2"),
      calls=("`gradviz.mm`, `gradviz.matmul`, `x @ y`", "`.mm()`, `.matmul()`"),
      self=lambda grad, mat2, self_sym_sizes, self_sym_strides: grad @ f.t(mat2),
      mat2=lambda grad, self, mat2_sym_sizes, mat2_sym_strides: _mat2_grad(grad, self))
defop("dot", "DotBackward0", np.dot, ("self", "tensor"),
      calls=("`gradviz.dot`, `x @ y` (1-D)", "`.dot()`"),
      self=lambda grad, tensor: grad * tensor,
      tensor=lambda grad, self: grad * self)
defop("mv", "MvBackward0", np.matmul, ("self", "vec"),
      calls=("`gradviz.mv`, `x @ y` (2-D @ 1-D)", "`.mv()`"),
      self=lambda grad, vec: grad.reshape((-1, 1)) * vec.reshape((1, -1)),
      vec=lambda grad, self: f.t(self) @ grad)
defop("bmm", "BmmBackward0", np.matmul, ("self", "mat2"),
      calls=("`gradviz.bmm`, `x @ y` (N-D)", "`.bmm()`"),
      self=lambda grad, mat2: f.bmm(grad, f.transpose(mat2, 1, 2)),
      mat2=lambda grad, self: f.bmm(f.transpose(self, 1, 2), grad))
defop("addmm", "AddmmBackward0", K.addmm, ("self", "mat1", "mat2"),
      broadcasts=("self",),
      doc="beta * self + alpha * mat1 @ mat2: what F.linear records with a bias",
      calls=("`gradviz.addmm`, `F.linear`", ""),
      self=lambda grad, beta: grad if beta == 1 else grad * beta,
      mat1=lambda grad, mat2, mat1_sym_sizes, mat1_sym_strides, alpha: (
          grad @ f.t(mat2)) * alpha if alpha != 1 else grad @ f.t(mat2),
      mat2=lambda grad, mat1, mat2_sym_sizes, mat2_sym_strides, alpha: (
          _mat2_grad(grad, mat1) * alpha if alpha != 1 else _mat2_grad(grad, mat1)))


# <g, a × b> = <a, b × g> = <b, g × a>: each input's gradient is a cross product too.
defop("linalg_cross", "LinalgCrossBackward0", K.linalg_cross, ("self", "other"),
      broadcasts=True,
      doc="the cross product of 3-vectors along ``dim``",
      calls=("`gradviz.cross`", "`.cross()`"),
      samples=(Sample(R(4, 3), R(4, 3), dim=1), Sample(R(3, 2), R(3, 2), dim=0),
               Sample(R(2, 3), R(1, 3), dim=1)),
      self=lambda grad, other, dim: f.cross(other, grad, dim),
      other=lambda grad, self, dim: f.cross(grad, self, dim))


# torch.linalg's decompositions and solvers. Their formulas use only `@`, the transposes and the
# inverse of gradviz/ops/_formula.py, so that under create_graph they are recorded again. Where
# PyTorch's gradient is undefined (a singular matrix for inv/det/solve, repeated eigenvalues or
# singular values for eigh/svd) gradviz's formulas give infinities, as the maths does, except
# det's, which handles singular matrices as PyTorch's does (NOTE [det of a singular matrix]).
# LU and pivots are outputs of det/slogdet/solve that no gradient flows into: PyTorch keeps them
# for its backward and shows them as `_saved_LU` and `_saved_pivots`.
def _batch_unsqueeze(x, n):
    """``x[..., None, None]`` for a per-matrix scalar ``x`` (``n`` batch dimensions)."""
    return f.unsqueeze_dims(x, (n, n + 1))


def _det_backward(grads, A, LU, pivots, result):
    """d det(A) = det(A) tr(A^{-1} dA): the gradient is grad det(A) A^{-T}, the cofactor matrix,
    defined for every A. NOTE [det of a singular matrix]: PyTorch's two ways, kept as they are.
    A plain backward solves Aᵀ X = grad det(A) I with the forward's LU, a zero pivot nudged to
    epsilon: a singular A (det exactly 0) gets zeros. Under create_graph (formulas get tensors,
    PyTorch's GradMode) a matrix with |det| < 100 eps gets the cofactors from the SVD,
    A = U S Vh: U diag(prod of the other singular values) Vh det(U) det(Vh), recorded and
    differentiable; the others a solve with Aᵀ."""
    g = grads[0]
    if math.prod(A.shape) == 0:  # no gradient to give (PyTorch's is undefined, i.e. zeros)
        return f.new_zeros(tuple(A.shape), f.dtype_of(A), f.is_tensor(g))
    if A.shape[-1] == 1:  # det([[a]]) = a: the gradient is grad itself, at a = 0 too (PyTorch)
        return f.expand(_batch_unsqueeze(g, len(A.shape) - 2), tuple(A.shape))
    if not f.is_tensor(g):
        return K.det_grad_lu(g * result, LU, pivots)
    singular = np.abs(f.data(result)) < 100 * np.finfo(f.dtype_of(A)).eps
    if singular.all():
        return _det_grad_singular(A, g)
    if not singular.any():
        return _det_grad_invertible(A, g * result)
    # A batch of both: each part by its formula, put back in the batch's order.
    n, shape = A.shape[-1], tuple(A.shape)
    flat_A, flat_g, flat_d = A.reshape(-1, n, n), g.reshape(-1), (g * result).reshape(-1)
    rows_s, rows_i = np.flatnonzero(singular), np.flatnonzero(~singular)
    part_s, part_i = (Tensor._make(rows_s), Tensor._make(rows_i))
    both = f.cat([_det_grad_singular(flat_A.index_select(0, part_s),
                                     flat_g.index_select(0, part_s)),
                  _det_grad_invertible(flat_A.index_select(0, part_i),
                                       flat_d.index_select(0, part_i))], 0)
    order = Tensor._make(np.argsort(np.concatenate([rows_s, rows_i]), kind="stable"))
    return both.index_select(0, order).reshape(shape)


def _det_grad_invertible(A, d):
    """``d A^{-T}`` (``d`` per matrix) as a solve with Aᵀ, so that it is differentiated again."""
    nb = len(A.shape) - 2
    return f.op("linalg_solve_ex", f.mT(A), _batch_unsqueeze(d, nb) * f.eye_like(A, A.shape[-1]))[0]


def _det_grad_singular(A, g):
    """``g`` times A's cofactor matrix from its SVD: det(A) = det(U) det(Vh) prod(S), so
    d det / dA = det(U) det(Vh) U diag(prod_{j != i} S_j) Vh, which needs no division."""
    U, S, Vh = f.op("linalg_svd", A, full_matrices=True)
    alpha = f.op("linalg_det", U)[0] * f.op("linalg_det", Vh)[0] * g
    return (U * f.as_rows(_prod_of_others(S) * f.as_cols(alpha))) @ Vh


def _prod_of_others(S):
    """Along the last dimension, each entry's product of all the others: the products before
    it times those after it (exclusive cumulative products), so a zero divides nothing."""
    n = S.shape[-1]
    if n == 1:
        return f.new_zeros(tuple(S.shape), f.dtype_of(S), f.is_tensor(S)) + 1
    ones = np.ones(tuple(S.shape[:-1]) + (1,), f.dtype_of(S))
    d = len(S.shape) - 1
    before = f.cumprod(f.cat([ones, f.slice_dim(S, d, 0, n - 1)], d), d)
    after = f.flip(f.cumprod(f.cat([ones, f.flip(f.slice_dim(S, d, 1, n), (d,))], d), d), (d,))
    return before * after


def _slogdet_backward(grads, A, LU, pivots, sign):
    # d log|det A| = tr(A^{-1} dA); the sign is locally constant (no gradient for real A)
    return _batch_unsqueeze(grads[1], len(A.shape) - 2) * f.mT(f.inv(A))


def _solve_vector(A, result):
    return len(result.shape) == len(A.shape) - 1


def _solve_B_backward(grads, A, LU, pivots, left):  # noqa: N802 - PyTorch's names
    # X = A^{-1} B: gB = A^{-T} gX (X = B A^{-1}: gB = gX A^{-T}), a solve with A^T
    return f.op("linalg_solve_ex", f.mT(A), grads[0], left=left)[0]


def _solve_A_backward(grads, A, LU, pivots, left, result):
    gB = _solve_B_backward(grads, A, LU, pivots, left)
    if _solve_vector(A, result):
        return -(f.as_cols(gB) * f.as_rows(result))
    return -(gB @ f.mT(result)) if left else -(f.mT(result) @ gB)


def _cholesky_backward(gL, L, upper):
    # Murray (2016), as PyTorch writes it: gA = L^{-T} Φ(L^T gL) L^{-1}, Φ taking the lower
    # triangle with its diagonal halved and mirroring the strict part (PyTorch's 0.5 (X + ..)).
    if upper:
        L, gL = f.mT(L), f.mT(gL)
    P = f.tril(f.mT(L) @ gL, 0)
    P = (P + f.mT(f.tril(P, -1))) * 0.5
    Linv = f.inv(L)
    return f.mT(Linv) @ P @ Linv


def _qr_backward(grads, Q, R, mode):
    """The gradient of A = QR (Q with orthonormal columns, R upper triangular), after Liao et
    al. (2019): for m >= n, gA = (gQ + Q copyltu(M)) R^{-T}, M = R gR^T - gQ^T Q, where
    copyltu(M) is the symmetric matrix with M's lower triangle. A wide A = [X | Y] (m < n) is
    X = Q R1, Y = Q R2: Y's gradient flows back through Q as gQ += Y gR2^T."""
    gQ, gR = grads
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going "
                           "to differentiate through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    nd = len(R.shape)
    gY = None
    if m < n:
        R2, gR2 = f.slice_dim(R, nd - 1, m, n), f.slice_dim(gR, nd - 1, m, n)
        R, gR = f.slice_dim(R, nd - 1, 0, m), f.slice_dim(gR, nd - 1, 0, m)
        gQ = gQ + (Q @ R2) @ f.mT(gR2)
        gY = Q @ gR2
    M = R @ f.mT(gR) - f.mT(gQ) @ Q
    low = f.tril(M, -1)
    sym = low + f.mT(low) + f.diag_embed(f.diagonal(M, 0, -2, -1))
    gX = (gQ + Q @ sym) @ f.mT(f.inv(R))
    return gX if gY is None else f.cat([gX, gY], nd - 1)


def _eigh_backward(grads, eigenvalues, eigenvectors):
    # gA = V (diag(gL) + skew(V^T gV) / E) V^T, E_ij = L_j - L_i (1 on the diagonal, where the
    # skew part is 0): PyTorch's linalg_eig_backward for Hermitian input.
    gL, gV = grads
    V, L = eigenvectors, eigenvalues
    VtgV = f.mT(V) @ gV
    skew = (VtgV - f.mT(VtgV)) * 0.5
    E = f.as_rows(L) - f.as_cols(L) + f.eye_like(L, L.shape[-1])
    return V @ (skew / E + f.diag_embed(gL)) @ f.mT(V)


def _svd_backward(grads, U, S, Vh, full_matrices, S_sym_argsize_minus_1):  # noqa: N803
    """The gradient of A = U diag(S) Vh (Townsend, 2016, real case):
    gA = U [(F∘(J - Jᵀ)) S + S (F∘(K - Kᵀ)) + diag(gS)] Vh
         + (I - U Uᵀ) gU S⁻¹ Vh + U S⁻¹ gVh (I - Vhᵀ Vh),
    J = Uᵀ gU, K = Vh gVhᵀ, F_ij = 1 / (S_j² - S_i²) off the diagonal, 0 on it. With
    ``full_matrices`` only the first k = min(m, n) singular vectors count, as in PyTorch."""
    gU, gS, gVh = grads
    k = S_sym_argsize_minus_1
    nd = len(U.shape)
    # Only the singular values got a gradient (svdvals, a matrix norm): U diag(gS) Vh, as
    # PyTorch does when gU and gVh are undefined, without the F terms that are 0 * inf = NaN
    # at repeated singular values. Computed zeros (a double backward) take the full formula.
    values_only = f.is_missing(gU) and f.is_missing(gVh)
    if full_matrices:
        U, gU = f.slice_dim(U, nd - 1, 0, k), f.slice_dim(gU, nd - 1, 0, k)
        Vh, gVh = f.slice_dim(Vh, nd - 2, 0, k), f.slice_dim(gVh, nd - 2, 0, k)
    if values_only:
        return U @ (f.as_cols(gS) * Vh)
    eye = f.eye_like(S, k)
    S2 = S * S
    F = (1 / (f.as_rows(S2) - f.as_cols(S2) + eye)) * (1 - eye)  # (a tensor first: create_graph)
    J = f.mT(U) @ gU
    K = Vh @ f.mT(gVh)
    inner = ((J - f.mT(J)) * F) * f.as_rows(S) + f.as_cols(S) * ((K - f.mT(K)) * F) \
        + f.diag_embed(gS)
    gA = U @ inner @ Vh
    # The projections onto what U's (Vh's) k columns (rows) leave out are 0 when they span the
    # whole space (m == k, n == k): skipped there, as PyTorch does, so that a zero singular
    # value (a singular square matrix, e.g. det's cofactors) divides nothing.
    if U.shape[-2] > k:
        gU_s = gU / f.as_rows(S)
        gA = gA + (gU_s - U @ (f.mT(U) @ gU_s)) @ Vh
    if Vh.shape[-1] > k:
        gVh_s = gVh / f.as_cols(S)
        gA = gA + U @ (gVh_s - (gVh_s @ f.mT(Vh)) @ Vh)
    return gA


def _pinv_backward(grad, self, result):
    # dP = -P dA P + P Pᵀ dAᵀ (I - A P) + (I - P A) dAᵀ Pᵀ P (Golub & Pereyra), so
    # gA = -Pᵀ G Pᵀ + (I - A P) Gᵀ P Pᵀ + Pᵀ P Gᵀ (I - P A)
    A, P, G = self, result, grad
    Pt, Gt = f.mT(P), f.mT(G)
    AP, PA = A @ P, P @ A
    return -(Pt @ G @ Pt) + (Gt - AP @ Gt) @ (P @ Pt) + (Pt @ P) @ (Gt - Gt @ PA)


def _trace_backward(grad, self_sym_sizes):
    """The gradient on the main diagonal (a rectangular matrix's too), zeros elsewhere."""
    n, m = self_sym_sizes
    return f.expand(grad, (n, m)) * np.eye(n, m, dtype=f.dtype_of(grad))


def _dist_backward(grad, self, other, p, result, shape, sign=1.0):
    """``dist``'s gradient for one input: the norm's of ``self - other``, summed back to that
    input's ``shape`` here, since the 0-d output cannot tell the dispatch point the shape both
    were broadcast to (a 0-d input against a (2, 3) one)."""
    g = _norm_backward(grad, self - other, result, p, None, False)
    if g is None:
        return None
    return f.sum_to(g if sign == 1.0 else -g, tuple(shape))


def _cdist_weights(x1, x2, p, result):
    """d result_ij / d x1_i: the per-pair vector the gradient scales."""
    diff = f.unsqueeze_dims(x1, (len(x1.shape) - 1,)) - f.unsqueeze_dims(x2, (len(x2.shape) - 2,))
    d = f.unsqueeze_dims(result, (len(result.shape),))
    if p == 0:
        return f.zeros_like(diff)
    if p == 1:
        return f.sign(diff)
    if p == math.inf:
        return f.sign(diff) * (f.abs(diff) == d)
    safe = f.where(d == 0, 1.0, d)
    if p == 2:
        return diff / safe
    return f.sign(diff) * f.abs(diff) ** (p - 1) / safe ** (p - 1)


def _cdist_x1(grad, x1, x2, p, result):
    # the batch dimensions broadcast against x2's are summed back to x1's shape
    w = _cdist_weights(x1, x2, p, result)
    g = f.sum(f.unsqueeze_dims(grad, (len(grad.shape),)) * w, (len(w.shape) - 2,))
    return f.sum_to(g, tuple(x1.shape))


def _cdist_x2(grad, x1, x2, p, result):
    w = _cdist_weights(x1, x2, p, result)
    g = -f.sum(f.unsqueeze_dims(grad, (len(grad.shape),)) * w, (len(w.shape) - 3,))
    return f.sum_to(g, tuple(x2.shape))


def _addbmm_grad(grad, batch1_sym_argsize_0, batch1_sym_argsize_1, batch2_sym_argsize_2):
    """``grad`` repeated for every batch: addbmm sums the batch's products."""
    g = f.unsqueeze_dims(grad, (0,))
    return f.expand(g, (batch1_sym_argsize_0, batch1_sym_argsize_1, batch2_sym_argsize_2))


def _times(g, alpha):
    return g if alpha == 1 else g * alpha


_SQUARE = (Sample(R(3, 3)), Sample(R(2, 4, 4)))
defop("linalg_inv_ex", "LinalgInvExBackward0", K.linalg_inv_ex, ("A",),
      outputs=("inverse", "info"), nondiff_outputs=(1,),
      doc="``(inverse, info)`` of a (batch of) square matrices",
      calls=("`gradviz.linalg.inv`, `gradviz.linalg.inv_ex`, `gradviz.inverse`",
             "`.inverse()`"),
      samples=_SQUARE,
      A=lambda grads, inverse: -(f.mT(inverse) @ grads[0] @ f.mT(inverse)))
defop("linalg_det", "LinalgDetBackward0", K.linalg_det, ("A",),
      outputs=("result", "LU", "pivots"), nondiff_outputs=(1, 2),
      doc="the determinant (LU and pivots kept for backward)",
      calls=("`gradviz.linalg.det`, `gradviz.det`", "`.det()`"),
      samples=_SQUARE,
      A=_det_backward)
defop("linalg_slogdet", "LinalgSlogdetBackward0", K.linalg_slogdet, ("A",),
      outputs=("sign", "logabsdet", "LU", "pivots"), nondiff_outputs=(2, 3),
      doc="``(sign, logabsdet)`` of the determinant",
      calls=("`gradviz.linalg.slogdet`, `gradviz.slogdet`, `gradviz.logdet`",
             "`.slogdet()`, `.logdet()`"),
      samples=_SQUARE,
      A=_slogdet_backward)
defop("linalg_solve_ex", "LinalgSolveExBackward0", K.linalg_solve_ex, ("A", "B"),
      outputs=("result", "LU", "pivots", "info"), nondiff_outputs=(1, 2, 3),
      doc="X with A X = B (X A = B when ``left=False``); B may be a (batch of) vectors",
      calls=("`gradviz.linalg.solve`, `gradviz.linalg.solve_ex`", ""),
      samples=(Sample(R(3, 3), R(3, 2)), Sample(R(3, 3), R(3)), Sample(R(2, 3, 3), R(2, 3, 4)),
               Sample(R(3, 3), R(2, 3), left=False)),
      A=_solve_A_backward, B=_solve_B_backward)
defop("linalg_cholesky_ex", "LinalgCholeskyExBackward0", K.linalg_cholesky_ex, ("self",),
      outputs=("L", "info"), nondiff_outputs=(1,),
      doc="``(L, info)``: L Lᵀ = A for a symmetric positive definite A (its lower triangle read)",
      calls=("`gradviz.linalg.cholesky`, `gradviz.linalg.cholesky_ex`", ""),
      self=lambda grads, L, upper: _cholesky_backward(grads[0], L, upper))
defop("cholesky", "CholeskyBackward0", lambda a, upper=False: K.linalg_cholesky_ex(a, upper)[0],
      ("self",),
      doc="the deprecated torch.cholesky: L (or U with ``upper``)",
      calls=("`gradviz.cholesky`", "`.cholesky()`"),
      self=lambda grad, result, upper: _cholesky_backward(grad, result, upper))
defop("linalg_qr", "LinalgQrBackward0", K.linalg_qr, ("A",),
      outputs=("Q", "R"),
      doc="``(Q, R)``: Q with orthonormal columns, R upper triangular",
      calls=("`gradviz.linalg.qr`", ""),
      samples=(Sample(R(4, 3)), Sample(R(3, 3)), Sample(R(2, 5, 3)), Sample(R(3, 5))),
      A=_qr_backward)
defop("linalg_eigh", "LinalgEighBackward0", K.linalg_eigh, ("A",),
      outputs=("eigenvalues", "eigenvectors"),
      doc="eigenvalues (ascending) and eigenvectors of a symmetric matrix (one triangle read)",
      calls=("`gradviz.linalg.eigh`, `gradviz.linalg.eigvalsh`", ""),
      A=_eigh_backward)
defop("linalg_svd", "LinalgSvdBackward0", K.linalg_svd, ("A",),
      outputs=("U", "S", "Vh"),
      doc="``(U, S, Vh)``, singular values descending",
      calls=("`gradviz.linalg.svd`, `gradviz.linalg.svdvals`, `gradviz.svd`", "`.svd()`"),
      samples=(Sample(R(4, 3), full_matrices=False), Sample(R(3, 4), full_matrices=False),
               Sample(R(3, 3), full_matrices=True), Sample(R(2, 4, 3), full_matrices=False)),
      A=_svd_backward)
defop("linalg_pinv", "LinalgPinvBackward0", K.linalg_pinv, ("self",),
      doc="the Moore-Penrose pseudo-inverse",
      calls=("`gradviz.linalg.pinv`, `gradviz.pinverse`", "`.pinverse()`"),
      samples=(Sample(R(4, 3)), Sample(R(3, 4)), Sample(R(2, 3, 3))),
      self=_pinv_backward)
defop("dist", "DistBackward0", K.dist, ("self", "other"),
      broadcasts=True,
      doc="the p-norm of ``self - other``",
      calls=("`gradviz.dist`", "`.dist()`"),
      samples=(Sample(R(2, 3), R(2, 3)), Sample(R(2, 3), R(3), p=1),
               Sample(R(4), R(4), p=3), Sample(A(3), C([0.1, 0.2, 0.3]), p=math.inf)),
      self=lambda grad, self, other, p, result: _dist_backward(grad, self, other, p, result,
                                                               self.shape),
      other=lambda grad, self, other, p, result: _dist_backward(grad, self, other, p, result,
                                                                other.shape, -1.0))
defop("vdot", "VdotBackward0", K.vdot, ("self", "other"),
      doc="the dot product of two 1-D tensors (conjugating the first: the same for real ones)",
      calls=("`gradviz.vdot`", "`.vdot()`"),
      samples=(Sample(R(4), R(4)),),
      self=lambda grad, other: grad * other,
      other=lambda grad, self: grad * self)
defop("trace", "TraceBackward0", K.trace, ("self",),
      doc="the sum of a matrix's main diagonal",
      calls=("`gradviz.trace(x)`", "`.trace()`"),
      samples=(Sample(R(3, 3)), Sample(R(2, 4)), Sample(R(4, 2))),
      self=_trace_backward)
defop("baddbmm", "BaddbmmBackward0", K.baddbmm, ("self", "batch1", "batch2"),
      broadcasts=("self",),
      doc="beta * self + alpha * batch1 @ batch2, batch by batch",
      calls=("`gradviz.baddbmm`", "`.baddbmm()`, `.baddbmm_()`"),
      samples=(Sample(R(2, 3, 4), R(2, 3, 5), R(2, 5, 4)),
               Sample(R(3, 4), R(2, 3, 5), R(2, 5, 4), beta=0.5, alpha=2.0)),
      self=lambda grad, beta: _times(grad, beta),
      batch1=lambda grad, batch2, alpha: _times(f.bmm(grad, f.mT(batch2)), alpha),
      batch2=lambda grad, batch1, alpha: _times(f.bmm(f.mT(batch1), grad), alpha))
defop("addbmm", "AddbmmBackward0", K.addbmm, ("self", "batch1", "batch2"),
      broadcasts=("self",),
      doc="beta * self + alpha * the sum over the batch of batch1 @ batch2",
      calls=("`gradviz.addbmm`", "`.addbmm()`, `.addbmm_()`"),
      samples=(Sample(R(3, 4), R(2, 3, 5), R(2, 5, 4)),
               Sample(R(4), R(2, 3, 5), R(2, 5, 4), beta=0.5, alpha=2.0)),
      self=lambda grad, beta: _times(grad, beta),
      batch1=lambda grad, batch2, batch1_sym_argsize_0, batch1_sym_argsize_1,
      batch2_sym_argsize_2, alpha: _times(f.bmm(_addbmm_grad(
          grad, batch1_sym_argsize_0, batch1_sym_argsize_1, batch2_sym_argsize_2),
          f.mT(batch2)), alpha),
      batch2=lambda grad, batch1, batch1_sym_argsize_0, batch1_sym_argsize_1,
      batch2_sym_argsize_2, alpha: _times(f.bmm(f.mT(batch1), _addbmm_grad(
          grad, batch1_sym_argsize_0, batch1_sym_argsize_1, batch2_sym_argsize_2)), alpha))
defop("cdist", "CdistBackward0", K.cdist, ("x1", "x2"),
      doc="the p-norm distance between each row of x1 and each row of x2",
      calls=("`gradviz.cdist`", ""),
      samples=(Sample(R(3, 4), R(2, 4)), Sample(R(2, 3, 4), R(2, 5, 4), p=1.0),
               Sample(R(3, 2), R(4, 2), p=3.0)),
      x1=_cdist_x1, x2=_cdist_x2)
defop("_euclidean_dist", "EuclideanDistBackward0", K.euclidean_dist, ("x1", "x2"),
      doc="cdist with p=2 when either input has more than 25 rows (PyTorch's mm path)",
      calls=("`gradviz.cdist`", ""),
      samples=(Sample(R(30, 2), R(3, 2)),),
      x1=lambda grad, x1, x2, result: _cdist_x1(grad, x1, x2, 2.0, result),
      x2=lambda grad, x1, x2, result: _cdist_x2(grad, x1, x2, 2.0, result))


def _trilinear_grad(grad, mine, expand, others, sumdim):
    """One input's gradient: the output gradient unsqueezed at ``sumdim`` times the other two
    inputs (unsqueezed at theirs), summed back to this input's unsqueezed shape."""
    full = f.unsqueeze_dims(grad, tuple(sumdim))
    for x, ex in others:
        full = full * f.unsqueeze_dims(x, tuple(ex))
    shape = tuple(np.expand_dims(np.empty(tuple(mine.shape), np.bool_), tuple(expand)).shape)
    full = f.expand(full, tuple(np.broadcast_shapes(tuple(full.shape), shape)))
    return f.sum_to(full, shape).reshape(tuple(mine.shape))


defop("_trilinear", "TrilinearBackward0", K.trilinear, ("i1", "i2", "i3"),
      doc="each input unsqueezed at its ``expand`` dims, multiplied, summed over ``sumdim`` "
          "(what F.bilinear runs)",
      calls=("`F.bilinear`, `nn.Bilinear`", ""),
      samples=(Sample(R(3, 4), R(2, 4, 5), R(3, 5), expand1=(1, 3), expand2=(0,),
                      expand3=(1, 2), sumdim=(2, 3)),
               Sample(R(1, 2), R(3, 2, 2), R(1, 2), expand1=(1, 3), expand2=(0,),
                      expand3=(1, 2), sumdim=(2, 3))),
      i1=lambda grad, i1, i2, i3, expand1, expand2, expand3, sumdim: _trilinear_grad(
          grad, i1, expand1, ((i2, expand2), (i3, expand3)), sumdim),
      i2=lambda grad, i1, i2, i3, expand1, expand2, expand3, sumdim: _trilinear_grad(
          grad, i2, expand2, ((i1, expand1), (i3, expand3)), sumdim),
      i3=lambda grad, i1, i2, i3, expand1, expand2, expand3, sumdim: _trilinear_grad(
          grad, i3, expand3, ((i1, expand1), (i2, expand2)), sumdim))
