"""einsum and linear algebra (``gradviz.linalg``, ``gradviz.det`` ...): values, the graphs PyTorch
records (node chains with their saved values for einsum; node names and saved names for the
rest), gradients, and PyTorch's error texts.

The expectations are torch 2.13.0's (CPU), read off it for the same sources;
``tests/parity/test_linalg_parity.py`` derives them again from a live torch, and compares
values and gradients of random programs with torch. ``m`` is the module (gradviz here, torch
there); :func:`env` gives the float64 leaves the sources read.

einsum's rule (``gradviz/ops/_einsum.py``): each operand is aligned to one label order (output
labels first, then contracted ones: ``diagonal`` + ``movedim`` for a repeated label,
``unsqueeze`` for a missing one, one ``permute``), then the operands are contracted left to
right, each pair by ``sumproduct_pair`` (``mul`` when nothing is contracted, else permute ->
reshape -> ``bmm`` -> view -> permute), and contracted size-1 dimensions are viewed away (or
summed, for one operand).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest

import gradviz
from gradviz.autograd import gradcheck, gradgradcheck

A = [[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.3, 0.4, 1.5]]  # well conditioned, not symmetric
S = [[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]  # symmetric positive definite
T = [[1.0, 0.5, -0.2], [0.3, -1.0, 0.4], [0.7, 0.2, 1.1], [-0.5, 0.9, 0.3]]  # 4 x 3
V = [0.5, -1.0, 2.0]
inf, nan = math.inf, math.nan  # as the expected values below spell them


def env(m: Any = gradviz) -> dict[str, Any]:
    """Fresh float64 leaves that require grad: ``a`` (3x3), ``s`` (3x3 SPD), ``t`` (4x3),
    ``v`` (3), ``b`` (2x3x3: ``a`` and ``s``), and ``m`` itself."""
    def leaf(x: Any) -> Any:
        return m.tensor(x, dtype=m.float64, requires_grad=True)

    return {"m": m, "a": leaf(A), "s": leaf(S), "t": leaf(T), "v": leaf(V), "b": leaf([A, S]),
            "inf": math.inf}


def run(src: str, m: Any = gradviz, e: dict[str, Any] | None = None) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(src, env(m) if e is None else e)  # noqa: S307 - sources written here


def chain(t: Any) -> list[str]:
    """The graph behind ``t``, one node a line (indented by depth, depth first): its name and
    its saved values, a tensor as its shape and a negative dim as PyTorch stores it unsigned
    (2**64 - 1 for -1) read back as negative."""
    lines: list[str] = []
    stack = [(t.grad_fn, 0)]
    while stack:
        node, depth = stack.pop()
        if node is None:
            continue
        saved = []
        for attr in sorted(a for a in dir(node) if a.startswith("_saved_")):
            v = getattr(node, attr)
            if hasattr(v, "shape"):
                v = tuple(v.shape)
            elif isinstance(v, (tuple, list)):
                v = tuple(x - 2 ** 64 if isinstance(x, int) and x >= 2 ** 63 else x for x in v)
            elif isinstance(v, int) and not isinstance(v, bool) and v >= 2 ** 63:
                v = v - 2 ** 64
            saved.append(f"{attr[len('_saved_'):]}={v}")
        name = node.name().replace("torch::autograd::", "")
        lines.append("  " * depth + name + (f" {', '.join(saved)}" if saved else ""))
        stack.extend((child, depth + 1) for child, _ in reversed(node.next_functions))
    return lines


def same_values(got: Any, expected: Any) -> bool:
    return bool(np.allclose(np.asarray(got, dtype=float), np.asarray(expected, dtype=float),
                            rtol=1e-6, atol=1e-9, equal_nan=True))


# -- sources (the expectations below are torch's for each) ----------------------------------------
VALUE_SOURCES = [
    "m.einsum('ij,jk->ik', a, t.T)", "m.einsum('ii->', a)", "m.einsum('ii->i', a)",
    "m.einsum('ij->ji', t)", "m.einsum('ij->i', t)", "m.einsum('i,j->ij', v, v)",
    "m.einsum('bij,bjk->bik', b, b)", "m.einsum('...ij,...jk', b, a)", "m.einsum('ij,ij', a, s)",
    "m.einsum('i,i->', v, v)", "m.einsum('bn,anm,bm->ba', t, b, t)",
    "m.einsum(a, [0, 1], v, [1], [0])", "m.einsum('ij,j->i', [a, v])",
    "m.linalg.inv(a)", "m.inverse(b)", "m.linalg.inv_ex(a).info", "m.linalg.det(a)", "m.det(b)",
    "m.linalg.slogdet(a).logabsdet", "m.linalg.slogdet(-a).sign", "m.logdet(s)", "m.logdet(-a)",
    "m.linalg.solve(a, t.T)", "m.linalg.solve(a, v)", "m.linalg.solve(a, t, left=False)",
    "m.linalg.solve(b, v.expand(2, 3))", "m.linalg.cholesky(s)", "m.linalg.cholesky(s, upper=True)",
    "m.cholesky(s)", "m.linalg.cholesky_ex(-s).info", "m.linalg.qr(t).R.abs()",
    "m.linalg.qr(t, mode='complete').Q.shape", "m.linalg.qr(t, mode='r').Q.shape",
    "m.linalg.eigh(s).eigenvalues", "m.linalg.eigvalsh(s, UPLO='U')", "m.linalg.svdvals(t)",
    "m.linalg.svd(t).U.shape", "m.linalg.svd(t, full_matrices=False).U.shape", "m.svd(t).V.shape",
    "m.linalg.pinv(t)", "m.pinverse(a)", "m.linalg.matrix_power(a, 0)",
    "m.linalg.matrix_power(a, 5)", "m.linalg.matrix_power(a, -2)", "m.linalg.norm(a)",
    "m.linalg.norm(v, ord=1)", "m.linalg.norm(a, ord='nuc')", "m.linalg.norm(a, ord=2)",
    "m.linalg.norm(a, ord=-inf)", "m.linalg.norm(b, dim=(1, 2))", "m.linalg.vector_norm(t, 3, 0)",
    "m.linalg.matrix_norm(b, ord=1)", "m.linalg.matrix_norm(b, ord=2, keepdim=True)",
    "m.linalg.cross(a, s)", "m.linalg.vecdot(a, s)", "m.linalg.multi_dot([v, a, s, t.T])",
    "m.dist(a, s)", "m.dist(a, v, p=1)", "m.dist(a, s, inf)", "m.inner(t, a)", "m.inner(v, v)",
    "m.vdot(v, v)", "m.baddbmm(a, b, b, beta=0.5, alpha=2)", "m.addbmm(v, b, b)",
    "m.cdist(t, a)", "m.cdist(t, a, p=1)", "m.cdist(t.repeat(8, 1), a)",
    "m.linalg.det(m.ones(0, 0))",
    "m.einsum('ij,jk->ik', m.ones(2, 3, dtype=m.int32), m.ones(3, 4, dtype=m.int32))",
    "m.einsum(',i->i', m.tensor(2.0), v)", "m.einsum('ij,jk->ik', m.ones(2, 0), m.ones(0, 4))",
    "m.linalg.inv(m.eye(3, dtype=m.float32) * 2)", "m.linalg.svdvals(m.eye(2, dtype=m.float32))",
    "a.det() + a.logdet() + a.matrix_power(2).sum() + a.inverse().sum()",
    "t.pinverse().sum() + a.dist(s) + v.inner(v) + v.vdot(v)",
]

ERROR_SOURCES = [
    "m.einsum('ij')", "m.einsum('ij,jk->ik', a)", "m.einsum('ij,jk', a, a, a)",
    "m.einsum('ij->ik', a)", "m.einsum('ij,jk->ii', a, a)", "m.einsum('ijk->ik', a)",
    "m.einsum('ij,ik->jk', t, a)", "m.einsum('i.j->i', a)", "m.einsum('...i...->i', a)",
    "m.einsum('ij->...i.', a)", "m.einsum('i1->i', a)", "m.einsum('ij->i1', a)",
    "m.einsum('ii->i', t)", "m.einsum('...ij,...jk->...ik', b, t.expand(3, 4, 3))",
    "m.einsum('ij,jk->ik', a, 3)",
    "m.linalg.inv(m.zeros(2, 2))", "m.linalg.inv(m.stack([m.eye(2), m.zeros(2, 2)]))",
    "m.linalg.inv(t)", "m.linalg.inv(v)", "m.linalg.inv(m.ones(2, 2, dtype=m.int64))",
    "m.linalg.inv([[1.0]])", "m.linalg.det(t)", "m.linalg.slogdet(t)",
    "m.linalg.solve(a, m.zeros(2, 2, dtype=m.float64))",
    "m.linalg.solve(a, m.zeros(4, dtype=m.float64))", "m.linalg.solve(a, m.zeros(3, 2))",
    "m.linalg.solve(m.zeros(2, 2, dtype=m.float64), m.ones(2, dtype=m.float64))",
    "m.linalg.cholesky(-s)", "m.linalg.cholesky(m.stack([s, -s]))", "m.cholesky(-s)",
    "m.linalg.qr(v)", "m.linalg.qr(t, mode='x')", "m.linalg.eigh(t)", "m.linalg.eigh(s, UPLO='X')",
    "m.linalg.svd(v)", "m.linalg.svdvals(m.ones(2, 2, dtype=m.int64))", "m.linalg.pinv(v)",
    "m.linalg.matrix_power(t, 2)", "m.linalg.matrix_power(a, 2.5)",
    "m.linalg.matrix_power(m.zeros(2, 2), -1)", "m.linalg.vector_norm(m.ones(3, dtype=m.int64))",
    "m.linalg.matrix_norm(v)", "m.linalg.matrix_norm(a, ord=3)", "m.linalg.norm(b, ord=2)",
    "m.linalg.norm(v, ord='fro')", "m.linalg.multi_dot([a])", "m.linalg.multi_dot([t, t])",
    "m.linalg.multi_dot([b, a])", "m.linalg.multi_dot([a, b, a])",
    "m.linalg.cross(a[:, :2], s[:, :2])",
    "m.dist(v, m.zeros(4, dtype=m.float64))", "m.vdot(v, m.zeros(4, dtype=m.float64))",
    "m.vdot(a, a)", "m.inner(t, v[:2])", "m.inner(a, 2.0)",
    "m.baddbmm(b, b, m.zeros(2, 4, 3, dtype=m.float64))",
    "m.addbmm(a, b, m.zeros(3, 3, 3, dtype=m.float64))", "m.cdist(t, t[:, :2])",
    "m.cdist(v, a)", "m.cdist(t, a, p=-1.0)", "m.cdist(t, a, compute_mode='fast')",
    "m.linalg.inv(a).view(-1)",  # LAPACK's results are column-major, as torch's
    "m.einsum('ij,jk->ik', a, m.ones(3, 2))", "m.baddbmm(b, b, m.ones(2, 3, 3))",
    "m.dist(m.ones(3, dtype=m.int64), m.zeros(3, dtype=m.int64))",
]

GRAPH_SOURCES = [
    "m.linalg.inv(a)", "m.linalg.det(a)", "m.linalg.slogdet(a).logabsdet", "m.logdet(s)",
    "m.linalg.solve(a, t.T)", "m.linalg.cholesky(s)", "m.cholesky(s)", "m.linalg.qr(t).Q",
    "m.linalg.eigh(s).eigenvectors", "m.linalg.eigvalsh(s)", "m.linalg.svd(t).Vh",
    "m.linalg.svdvals(t)", "m.svd(t).V", "m.linalg.pinv(t)", "m.linalg.norm(a)",
    "m.linalg.vector_norm(a)", "m.linalg.matrix_norm(a)", "m.linalg.matrix_norm(a, ord=1)",
    "m.linalg.matrix_norm(a, ord='nuc')", "m.linalg.matrix_norm(a, ord=-2)",
    "m.linalg.vecdot(a, s)", "m.linalg.vecdot(v, v)", "m.dist(a, s)", "m.vdot(v, v)",
    "m.baddbmm(a, b, b, beta=0.5, alpha=2)", "m.addbmm(a, b, b)", "m.cdist(t, a)",
    "m.cdist(t.repeat(8, 1), a)", "m.inner(v, v)",
]

# The equations the brief of this module named, and a few more: each one's whole chain below.
CHAIN_SOURCES = [
    "m.einsum('ij,jk->ik', a, t.T)", "m.einsum('bij,bjk->bik', b, b)", "m.einsum('ij->ji', t)",
    "m.einsum('ii->', a)", "m.einsum('ij->i', t)", "m.einsum('i,j->ij', v, v)",
    "m.einsum('bhqd,bhkd->bhqk', b.reshape(1, 2, 3, 3), b.reshape(1, 2, 3, 3).flip(2))",
    "m.einsum('i,i->', v, v)", "m.einsum('bn,anm,bm->ba', t, b, t)",
    "m.einsum('ij,jk->ki', a, t.T)", "m.linalg.matrix_power(a, 5)", "m.linalg.matrix_power(a, -2)",
    "m.linalg.multi_dot([t, a, s, t.T])", "m.linalg.inv(a).reshape(-1)",
    "m.linalg.solve(b, b).reshape(-1)",
]

# Gradients of each output's sum (an exact derivative test of the formulas at fixed points).
GRAD_SOURCES = [
    "m.einsum('ij,jk->ik', a, t.T)", "m.einsum('ii->', a)", "m.einsum('bn,anm,bm->ba', t, b, t)",
    "m.linalg.inv(a)", "m.linalg.det(b)", "m.linalg.slogdet(a).logabsdet", "m.logdet(s)",
    "m.linalg.solve(a, t.T)", "m.linalg.solve(b, v.expand(2, 3))",
    "m.linalg.solve(a, t, left=False)", "m.linalg.cholesky(s)", "m.linalg.cholesky(s, upper=True)",
    "m.cholesky(s)", "m.linalg.qr(t).Q * m.linalg.qr(t).R.sum()", "m.linalg.qr(t.T).Q ** 2",
    "m.linalg.eigh(s).eigenvalues", "m.linalg.eigh(s).eigenvectors ** 2",
    "m.linalg.svdvals(t)",
    "(lambda r: r.U ** 2 + r.S.sum() + (r.Vh ** 2).sum())(m.linalg.svd(t, False))",
    "m.linalg.svd(t).U[:, :3] ** 2", "m.linalg.pinv(t)", "m.linalg.matrix_power(a, -3)",
    "m.linalg.norm(a, 'nuc')", "m.linalg.matrix_norm(b, ord=-1)",
    "m.linalg.multi_dot([v, a, s, t.T])",
    "m.dist(a, v, p=3)", "m.baddbmm(a, b, b, beta=0.5, alpha=2)", "m.addbmm(v, b, b, alpha=3)",
    "m.cdist(t, a)", "m.cdist(t, a, p=1.5)", "m.cdist(t.repeat(8, 1), a)", "m.inner(t, a)",
]

# -- torch 2.13.0's answers (tests/parity/test_linalg_parity.py derives them again) ---------------
# BEGIN GENERATED EXPECTATIONS
# (source, dtype, values)
VALUES = [("m.einsum('ij,jk->ik', a, t.T)", 'float64',
  [[2.4, -0.2, 2.15, 0.05000000000000002], [2.46, -2.62, 1.52, 2.2600000000000002],
   [0.19999999999999996, 0.29000000000000004, 1.9400000000000002, 0.66]]),
 ("m.einsum('ii->', a)", 'float64', 6.5), ("m.einsum('ii->i', a)", 'float64', [2.0, 3.0, 1.5]),
 ("m.einsum('ij->ji', t)", 'float64',
  [[1.0, 0.3, 0.7, -0.5], [0.5, -1.0, 0.2, 0.9], [-0.2, 0.4, 1.1, 0.3]]),
 ("m.einsum('ij->i', t)", 'float64', [1.3, -0.29999999999999993, 2.0, 0.7]),
 ("m.einsum('i,j->ij', v, v)", 'float64',
  [[0.25, -0.5, 1.0], [-0.5, 1.0, -2.0], [1.0, -2.0, 4.0]]),
 ("m.einsum('bij,bjk->bik', b, b)", 'float64',
  [[[5.15, 5.2, 1.95], [5.06, 10.08, 1.4000000000000001], [1.45, 2.1000000000000005, 2.48]],
   [[17.25, 7.1, 3.2], [7.1, 10.04, 1.5], [3.2, 1.5, 4.29]]]),
 ("m.einsum('...ij,...jk', b, a)", 'float64',
  [[[5.15, 5.2, 1.95], [5.06, 10.08, 1.4000000000000001], [1.45, 2.1000000000000005, 2.48]],
   [[9.15, 7.2, 2.95], [5.06, 10.08, 1.4000000000000001],
    [1.7999999999999998, 1.9000000000000001, 3.29]]]),
 ("m.einsum('ij,ij', a, s)", 'float64', 22.519999999999996),
 ("m.einsum('i,i->', v, v)", 'float64', 5.25),
 ("m.einsum('bn,anm,bm->ba', t, b, t)", 'float64',
  [[3.59, 5.590000000000001], [2.676, 3.04], [3.9430000000000005, 5.638],
   [2.2070000000000003, 2.668]]),
 ('m.einsum(a, [0, 1], v, [1], [0])', 'float64', [1.0, -2.1, 2.75]),
 ("m.einsum('ij,j->i', [a, v])", 'float64', [1.0, -2.1, 2.75]),
 ('m.linalg.inv(a)', 'float64',
  [[0.6181818181818182, -0.18181818181818182, -0.18181818181818182],
   [-0.20139860139860144, 0.3986013986013986, 0.013986013986013984],
   [-0.06993006993006994, -0.06993006993006994, 0.6993006993006994]]),
 ('m.inverse(b)', 'float64',
  [[[0.6181818181818182, -0.18181818181818182, -0.18181818181818182],
    [-0.20139860139860144, 0.3986013986013986, 0.013986013986013984],
    [-0.06993006993006994, -0.06993006993006994, 0.6993006993006994]],
   [[0.2799436355096289, -0.08924377642085486, -0.06106153123532174],
    [-0.08924377642085486, 0.36402066697980273, -0.014091122592766557],
    [-0.06106153123532174, -0.014091122592766559, 0.516674495068107]]]),
 ('m.linalg.inv_ex(a).info', 'int32', 0), ('m.linalg.det(a)', 'float64', 7.1499999999999995),
 ('m.det(b)', 'float64', [7.1499999999999995, 21.29]),
 ('m.linalg.slogdet(a).logabsdet', 'float64', 1.9671123567059163),
 ('m.linalg.slogdet(-a).sign', 'float64', -1.0), ('m.logdet(s)', 'float64', 3.0582374789053883),
 ('m.logdet(-a)', 'float64', nan),
 ('m.linalg.solve(a, t.T)', 'float64',
  [[0.5636363636363636, 0.29454545454545455, 0.19636363636363632, -0.5272727272727273],
   [-0.004895104895104895, -0.45342657342657344, -0.045874125874125864, 0.4636363636363636],
   [-0.24475524475524477, 0.32867132867132876, 0.7062937062937064, 0.18181818181818185]]),
 ('m.linalg.solve(a, v)', 'float64',
  [0.1272727272727273, -0.47132867132867134, 1.4335664335664335]),
 ('m.linalg.solve(a, t, left=False)', 'float64',
  [[0.5314685314685315, 0.03146853146853148, -0.31468531468531474],
   [0.35888111888111884, -0.48111888111888107, 0.21118881118881125],
   [0.3155244755244755, -0.12447552447552448, 0.6447552447552449],
   [-0.5113286713286713, 0.4286713286713286, 0.3132867132867133]]),
 ('m.linalg.solve(b, v.expand(2, 3))', 'float64',
  [[0.1272727272727273, -0.47132867132867134, 1.4335664335664335],
   [0.10709253170502586, -0.4368248003757633, 1.0169093471113198]]),
 ('m.linalg.cholesky(s)', 'float64',
  [[2.0, 0.0, 0.0], [0.5, 1.6583123951777, 0.0], [0.25, 0.04522670168666455, 1.391206147720224]]),
 ('m.linalg.cholesky(s, upper=True)', 'float64',
  [[2.0, 0.5, 0.25], [0.0, 1.6583123951777, 0.04522670168666455], [0.0, 0.0, 1.391206147720224]]),
 ('m.cholesky(s)', 'float64',
  [[2.0, 0.0, 0.0], [0.5, 1.6583123951777, 0.0], [0.25, 0.04522670168666455, 1.391206147720224]]),
 ('m.linalg.cholesky_ex(-s).info', 'int32', 1),
 ('m.linalg.qr(t).R.abs()', 'float64',
  [[1.3527749258468682, 0.08131433980500308, 0.3991794863154694],
   [0.0, 1.4468545117398903, 0.01552265014291948], [0.0, 0.0, 1.157762836265467]]),
 ("m.linalg.qr(t, mode='complete').Q.shape", 'Size', [4, 4]),
 ("m.linalg.qr(t, mode='r').Q.shape", 'Size', [0]),
 ('m.linalg.eigh(s).eigenvalues', 'float64',
  [1.8800869029150529, 2.3983430193369966, 4.72157007774795]),
 ("m.linalg.eigvalsh(s, UPLO='U')", 'float64',
  [1.8800869029150526, 2.3983430193369975, 4.721570077747947]),
 ('m.linalg.svdvals(t)', 'float64', [1.5099409871632843, 1.432841605700365, 1.0473982758522975]),
 ('m.linalg.svd(t).U.shape', 'Size', [4, 4]),
 ('m.linalg.svd(t, full_matrices=False).U.shape', 'Size', [4, 3]),
 ('m.svd(t).V.shape', 'Size', [3, 3]),
 ('m.linalg.pinv(t)', 'float64',
  [[0.6730834207238763, 0.06469529181625285, 0.19292326477435684, -0.34492341277839617],
   [0.27157183210499714, -0.47165771339602036, 0.10850838218927185, 0.41206077123736223],
   [-0.37383288591322905, 0.24023197685684217, 0.6646043472291603, 0.3269195004084717]]),
 ('m.pinverse(a)', 'float64',
  [[0.6181818181818185, -0.181818181818182, -0.18181818181818193],
   [-0.20139860139860172, 0.3986013986013989, 0.013986013986014095],
   [-0.06993006993006984, -0.06993006993007014, 0.6993006993006994]]),
 ('m.linalg.matrix_power(a, 0)', 'float64', [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
 ('m.linalg.matrix_power(a, 5)', 'float64',
  [[201.26255, 314.39840000000004, 77.72695], [297.2813, 482.64940000000007, 106.89508000000001],
   [80.87037000000001, 128.20466000000002, 35.5048]]),
 ('m.linalg.matrix_power(a, -2)', 'float64',
  [[0.4314812460267005, -0.17215511760966307, -0.24208518753973302],
   [-0.20575676072179572, 0.19452295955792462, 0.051973201623551284],
   [-0.07804782629957456, -0.06406181231356058, 0.500757983275466]]),
 ('m.linalg.norm(a)', 'float64', 4.217819341792628), ('m.linalg.norm(v, ord=1)', 'float64', 3.5),
 ("m.linalg.norm(a, ord='nuc')", 'float64', 6.513748600938086),
 ('m.linalg.norm(a, ord=2)', 'float64', 3.7167554373077847),
 ('m.linalg.norm(a, ord=-inf)', 'float64', 2.2),
 ('m.linalg.norm(b, dim=(1, 2))', 'float64', [4.217819341792628, 5.619608527290847]),
 ('m.linalg.vector_norm(t, 3, 0)', 'float64',
  [1.1434409219890058, 1.2302495803056248, 1.1266231713345758]),
 ('m.linalg.matrix_norm(b, ord=1)', 'float64', [4.4, 5.5]),
 ('m.linalg.matrix_norm(b, ord=2, keepdim=True)', 'float64',
  [[[3.7167554373077847]], [[4.72157007774795]]]),
 ('m.linalg.cross(a, s)', 'float64',
  [[0.0, 1.0, -2.0], [-5.551115123125783e-17, 0.0, 0.0], [0.5, 0.15000000000000002, -0.14]]),
 ('m.linalg.vecdot(a, s)', 'float64', [9.25, 10.04, 3.23]),
 ('m.linalg.multi_dot([v, a, s, t.T])', 'float64',
  [-0.9320000000000004, 6.9815000000000005, 7.4455, -2.7955000000000005]),
 ('m.dist(a, s)', 'float64', 2.080865204668481), ('m.dist(a, v, p=1)', 'float64', 13.4),
 ('m.dist(a, s, inf)', 'float64', 2.0),
 ('m.inner(t, a)', 'float64',
  [[2.4, 2.46, 0.19999999999999996], [-0.2, -2.62, 0.29000000000000004],
   [2.15, 1.52, 1.9400000000000002], [0.05000000000000002, 2.2600000000000002, 0.66]]),
 ('m.inner(v, v)', 'float64', 5.25), ('m.vdot(v, v)', 'float64', 5.25),
 ('m.baddbmm(a, b, b, beta=0.5, alpha=2)', 'float64',
  [[[11.3, 10.9, 4.15], [10.62, 21.66, 2.9000000000000004], [3.05, 4.400000000000001, 5.71]],
   [[35.5, 14.7, 6.65], [14.7, 21.58, 3.1], [6.550000000000001, 3.2, 9.33]]]),
 ('m.addbmm(v, b, b)', 'float64',
  [[22.9, 11.299999999999999, 7.15], [12.659999999999998, 19.119999999999997, 4.9],
   [5.15, 2.6, 8.77]]),
 ('m.cdist(t, a)', 'float64',
  [[1.3190905958272918, 2.5317977802344327, 1.841195263952197],
   [2.6267851073127395, 4.065710270051224, 1.7804493814764855],
   [1.6401219466856727, 2.956349099818896, 0.6],
   [2.5099800796022267, 2.582634314028992, 1.5264337522473748]]),
 ('m.cdist(t, a, p=1)', 'float64',
  [[2.2, 2.9, 2.5], [3.8000000000000003, 4.9, 2.5], [2.7, 4.0, 0.9999999999999999],
   [2.8000000000000003, 3.7, 2.5]]),
 ('m.cdist(t.repeat(8, 1), a)', 'float64',
  [[1.319090595827292, 2.5317977802344322, 1.841195263952197],
   [2.6267851073127395, 4.065710270051224, 1.7804493814764855],
   [1.6401219466856727, 2.956349099818896, 0.5999999999999999],
   [2.5099800796022267, 2.5826343140289914, 1.5264337522473748],
   [1.319090595827292, 2.5317977802344322, 1.841195263952197],
   [2.6267851073127395, 4.065710270051224, 1.7804493814764855],
   [1.6401219466856727, 2.956349099818896, 0.5999999999999999],
   [2.5099800796022267, 2.5826343140289914, 1.5264337522473748],
   [1.319090595827292, 2.5317977802344322, 1.841195263952197],
   [2.6267851073127395, 4.065710270051224, 1.7804493814764855],
   [1.6401219466856727, 2.956349099818896, 0.5999999999999999],
   [2.5099800796022267, 2.5826343140289914, 1.5264337522473748],
   [1.319090595827292, 2.5317977802344322, 1.841195263952197],
   [2.6267851073127395, 4.065710270051224, 1.7804493814764855],
   [1.6401219466856727, 2.956349099818896, 0.5999999999999999],
   [2.5099800796022267, 2.5826343140289914, 1.5264337522473748],
   [1.319090595827292, 2.5317977802344322, 1.841195263952197],
   [2.6267851073127395, 4.065710270051224, 1.7804493814764855],
   [1.6401219466856727, 2.956349099818896, 0.5999999999999999],
   [2.5099800796022267, 2.5826343140289914, 1.5264337522473748],
   [1.319090595827292, 2.5317977802344322, 1.841195263952197],
   [2.6267851073127395, 4.065710270051224, 1.7804493814764855],
   [1.6401219466856727, 2.956349099818896, 0.5999999999999999],
   [2.5099800796022267, 2.5826343140289914, 1.5264337522473748],
   [1.319090595827292, 2.5317977802344322, 1.841195263952197],
   [2.6267851073127395, 4.065710270051224, 1.7804493814764855],
   [1.6401219466856727, 2.956349099818896, 0.5999999999999999],
   [2.5099800796022267, 2.5826343140289914, 1.5264337522473748],
   [1.319090595827292, 2.5317977802344322, 1.841195263952197],
   [2.6267851073127395, 4.065710270051224, 1.7804493814764855],
   [1.6401219466856727, 2.956349099818896, 0.5999999999999999],
   [2.5099800796022267, 2.5826343140289914, 1.5264337522473748]]),
 ('m.linalg.det(m.ones(0, 0))', 'float32', 1.0),
 ("m.einsum('ij,jk->ik', m.ones(2, 3, dtype=m.int32), m.ones(3, 4, dtype=m.int32))", 'int32',
  [[3, 3, 3, 3], [3, 3, 3, 3]]),
 ("m.einsum(',i->i', m.tensor(2.0), v)", 'float64', [1.0, -2.0, 4.0]),
 ("m.einsum('ij,jk->ik', m.ones(2, 0), m.ones(0, 4))", 'float32',
  [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]),
 ('m.linalg.inv(m.eye(3, dtype=m.float32) * 2)', 'float32',
  [[0.5, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 0.5]]),
 ('m.linalg.svdvals(m.eye(2, dtype=m.float32))', 'float32', [1.0, 1.0]),
 ('a.det() + a.logdet() + a.matrix_power(2).sum() + a.inverse().sum()', 'float64',
  45.012287181880744),
 ('t.pinverse().sum() + a.dist(s) + v.inner(v) + v.vdot(v)', 'float64', 14.345049979921427)]
# (source, exception class name, message)
ERRORS = [("m.einsum('ij')",
  'ValueError',
  'einsum(): must specify the equation string and at least one operand, or at least one operand '
  'and its subscripts list'),
 ("m.einsum('ij,jk->ik', a)",
  'RuntimeError',
  'einsum(): fewer operands were provided than specified in the equation'),
 ("m.einsum('ij,jk', a, a, a)",
  'RuntimeError',
  'einsum(): more operands were provided than specified in the equation'),
 ("m.einsum('ij->ik', a)",
  'RuntimeError',
  'einsum(): output subscript k does not appear in the equation for any input operand'),
 ("m.einsum('ij,jk->ii', a, a)",
  'RuntimeError',
  'einsum(): output subscript i appears more than once in the output'),
 ("m.einsum('ijk->ik', a)",
  'RuntimeError',
  'einsum(): the number of subscripts in the equation (3) does not match the number of dimensions '
  '(2) for operand 0 and no ellipsis was given'),
 ("m.einsum('ij,ik->jk', t, a)",
  'RuntimeError',
  'einsum(): subscript i has size 3 for operand 1 which does not broadcast with previously seen '
  'size 4'),
 ("m.einsum('i.j->i', a)",
  'RuntimeError',
  "einsum(): found '.' for operand 0 that is not part of any ellipsis"),
 ("m.einsum('...i...->i', a)",
  'RuntimeError',
  "einsum(): found '.' for operand 0 for which an ellipsis was already found"),
 ("m.einsum('ij->...i.', a)",
  'RuntimeError',
  "einsum(): found '.' for output but an ellipsis (...) was already found"),
 ("m.einsum('i1->i', a)",
  'RuntimeError',
  'einsum(): invalid subscript given at index 1 in the equation string, subscripts must be in '
  '[a-zA-Z]'),
 ("m.einsum('ij->i1', a)",
  'RuntimeError',
  'einsum(): invalid subscript given at index 5 in the equation string, subscripts must be in '
  '[a-zA-Z]'),
 ("m.einsum('ii->i', t)",
  'RuntimeError',
  "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 3 != 4"),
 ("m.einsum('...ij,...jk->...ik', b, t.expand(3, 4, 3))",
  'RuntimeError',
  'einsum(): dimension 0 covered by ellipsis in operand 1has size 3 which does not broadcast with '
  'previously seen ellipsis with size 2 for the respective dimension'),
 ("m.einsum('ij,jk->ik', a, 3)",
  'TypeError',
  'expected Tensor as element 1 in argument 1, but got int'),
 ('m.linalg.inv(m.zeros(2, 2))',
  'LinAlgError',
  'linalg.inv: The diagonal element 1 is zero, the inversion could not be completed because the '
  'input matrix is singular.'),
 ('m.linalg.inv(m.stack([m.eye(2), m.zeros(2, 2)]))',
  'LinAlgError',
  'linalg.inv: (Batch element 1): The diagonal element 1 is zero, the inversion could not be '
  'completed because the input matrix is singular.'),
 ('m.linalg.inv(t)',
  'RuntimeError',
  'linalg.inv: A must be batches of square matrices, but they are 4 by 3 matrices'),
 ('m.linalg.inv(v)',
  'RuntimeError',
  'linalg.inv: The input tensor A must have at least 2 dimensions.'),
 ('m.linalg.inv(m.ones(2, 2, dtype=m.int64))',
  'RuntimeError',
  'linalg.inv: Expected a floating point or complex tensor as input. Got Long'),
 ('m.linalg.inv([[1.0]])',
  'TypeError',
  "linalg_inv(): argument 'A' (position 1) must be Tensor, not list"),
 ('m.linalg.det(t)',
  'RuntimeError',
  'linalg.det: A must be batches of square matrices, but they are 4 by 3 matrices'),
 ('m.linalg.slogdet(t)',
  'RuntimeError',
  'linalg.slogdet: A must be batches of square matrices, but they are 4 by 3 matrices'),
 ('m.linalg.solve(a, m.zeros(2, 2, dtype=m.float64))',
  'RuntimeError',
  'linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 2x2)'),
 ('m.linalg.solve(a, m.zeros(4, dtype=m.float64))',
  'RuntimeError',
  'linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x1)'),
 ('m.linalg.solve(a, m.zeros(3, 2))',
  'RuntimeError',
  'linalg.solve: Expected A and B to have the same dtype, but found A of type Double and B of '
  'type Float instead'),
 ('m.linalg.solve(m.zeros(2, 2, dtype=m.float64), m.ones(2, dtype=m.float64))',
  'LinAlgError',
  'torch.linalg.solve: The solver failed because the input matrix is singular.'),
 ('m.linalg.cholesky(-s)',
  'LinAlgError',
  'linalg.cholesky: The factorization could not be completed because the input is not '
  'positive-definite (the leading minor of order 1 is not positive-definite).'),
 ('m.linalg.cholesky(m.stack([s, -s]))',
  'LinAlgError',
  'linalg.cholesky: (Batch element 1): The factorization could not be completed because the input '
  'is not positive-definite (the leading minor of order 1 is not positive-definite).'),
 ('m.cholesky(-s)',
  'LinAlgError',
  'cholesky: The factorization could not be completed because the input is not positive-definite '
  '(the leading minor of order 1 is not positive-definite).'),
 ('m.linalg.qr(v)',
  'RuntimeError',
  'linalg.qr: The input tensor A must have at least 2 dimensions.'),
 ("m.linalg.qr(t, mode='x')",
  'RuntimeError',
  "qr received unrecognized mode 'x' but expected one of 'reduced' (default), 'r', or 'complete'"),
 ('m.linalg.eigh(t)',
  'RuntimeError',
  'linalg.eigh: A must be batches of square matrices, but they are 4 by 3 matrices'),
 ("m.linalg.eigh(s, UPLO='X')",
  'RuntimeError',
  "Expected UPLO argument to be 'L' or 'U', but got X"),
 ('m.linalg.svd(v)',
  'RuntimeError',
  'linalg.svd: The input tensor A must have at least 2 dimensions.'),
 ('m.linalg.svdvals(m.ones(2, 2, dtype=m.int64))',
  'RuntimeError',
  'linalg.svd: Expected a floating point or complex tensor as input. Got Long'),
 ('m.linalg.pinv(v)',
  'RuntimeError',
  'linalg.pinv(Double{[3]}): expected a tensor with 2 or more dimensions of float, double, cfloat '
  'or cdouble types'),
 ('m.linalg.matrix_power(t, 2)',
  'RuntimeError',
  'linalg.matrix_power: A must be batches of square matrices, but they are 4 by 3 matrices'),
 ('m.linalg.matrix_power(a, 2.5)',
  'TypeError',
  "linalg_matrix_power(): argument 'n' (position 2) must be int, not float"),
 ('m.linalg.matrix_power(m.zeros(2, 2), -1)',
  'LinAlgError',
  'linalg.inv: The diagonal element 1 is zero, the inversion could not be completed because the '
  'input matrix is singular.'),
 ('m.linalg.vector_norm(m.ones(3, dtype=m.int64))',
  'RuntimeError',
  'linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long'),
 ('m.linalg.matrix_norm(v)',
  'RuntimeError',
  'linalg.matrix_norm: The input tensor A must have at least 2 dimensions.'),
 ('m.linalg.matrix_norm(a, ord=3)', 'RuntimeError', 'linalg.matrix_norm: Order 3 not supported.'),
 ('m.linalg.norm(b, ord=2)',
  'RuntimeError',
  'linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D.'),
 ("m.linalg.norm(v, ord='fro')",
  'RuntimeError',
  'linalg.matrix_norm: The input tensor A must have at least 2 dimensions.'),
 ('m.linalg.multi_dot([a])', 'RuntimeError', 'multi_dot(): expected at least 2 tensors but got 1'),
 ('m.linalg.multi_dot([t, t])',
  'RuntimeError',
  'multi_dot(): tensors 0 and 1 with shapes [4, 3] and [4, 3] cannot be multiplied'),
 ('m.linalg.multi_dot([b, a])',
  'RuntimeError',
  'multi_dot(): the first tensor must be 1D or 2D but got 3D'),
 ('m.linalg.multi_dot([a, b, a])', 'RuntimeError', 'multi_dot(): tensor 1 must be 2D but got 3D'),
 ('m.linalg.cross(a[:, :2], s[:, :2])',
  'RuntimeError',
  'linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2'),
 ('m.dist(v, m.zeros(4, dtype=m.float64))',
  'RuntimeError',
  'The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0'),
 ('m.vdot(v, m.zeros(4, dtype=m.float64))',
  'RuntimeError',
  'inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, '
  'but got 3 and 4 elements respectively'),
 ('m.vdot(a, a)', 'RuntimeError', '1D tensors expected, but got 2D and 2D tensors'),
 ('m.inner(t, v[:2])',
  'RuntimeError',
  'inner() the last dimension must match on both input tensors but got shapes [4, 3] and [2]'),
 ('m.inner(a, 2.0)',
  'TypeError',
  "inner(): argument 'other' (position 2) must be Tensor, not float"),
 ('m.baddbmm(b, b, m.zeros(2, 4, 3, dtype=m.float64))',
  'RuntimeError',
  'Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].'),
 ('m.addbmm(a, b, m.zeros(3, 3, 3, dtype=m.float64))',
  'RuntimeError',
  'batch1 and batch2 must have same number of batches, got 2 and 3'),
 ('m.cdist(t, t[:, :2])',
  'RuntimeError',
  'X1 and X2 must have the same number of columns. X1: 3 X2: 2'),
 ('m.cdist(v, a)', 'RuntimeError', 'cdist only supports at least 2D tensors, X1 got: 1D'),
 ('m.cdist(t, a, p=-1.0)', 'RuntimeError', 'cdist only supports non-negative p values'),
 ("m.cdist(t, a, compute_mode='fast')",
  'ValueError',
  'fast is not a valid value for compute_mode'),
 ('m.linalg.inv(a).view(-1)',
  'RuntimeError',
  "view size is not compatible with input tensor's size and stride (at least one dimension spans "
  'across two contiguous subspaces). Use .reshape(...) instead.'),
 ("m.einsum('ij,jk->ik', a, m.ones(3, 2))",
  'RuntimeError',
  'expected scalar type Double but found Float'),
 ('m.baddbmm(b, b, m.ones(2, 3, 3))',
  'RuntimeError',
  'expected scalar type Double but found Float'),
 ('m.dist(m.ones(3, dtype=m.int64), m.zeros(3, dtype=m.int64))',
  'RuntimeError',
  'norm(): input dtype should be either floating point or complex. Got Long instead.')]
# (source, node name, saved names)
GRAPHS = [('m.linalg.inv(a)', 'LinalgInvExBackward0', ['inverse']),
 ('m.linalg.det(a)', 'LinalgDetBackward0', ['A', 'LU', 'pivots', 'result']),
 ('m.linalg.slogdet(a).logabsdet', 'LinalgSlogdetBackward0', ['A', 'LU', 'pivots', 'sign']),
 ('m.logdet(s)', 'WhereBackward0', ['condition']),
 ('m.linalg.solve(a, t.T)', 'LinalgSolveExBackward0', ['A', 'LU', 'left', 'pivots', 'result']),
 ('m.linalg.cholesky(s)', 'LinalgCholeskyExBackward0', ['L', 'upper']),
 ('m.cholesky(s)', 'CholeskyBackward0', ['result', 'upper']),
 ('m.linalg.qr(t).Q', 'LinalgQrBackward0', ['Q', 'R', 'mode']),
 ('m.linalg.eigh(s).eigenvectors', 'LinalgEighBackward0', ['eigenvalues', 'eigenvectors']),
 ('m.linalg.eigvalsh(s)', 'LinalgEighBackward0', ['eigenvalues', 'eigenvectors']),
 ('m.linalg.svd(t).Vh', 'LinalgSvdBackward0',
  ['S', 'S_sym_argsize_minus_1', 'U', 'Vh', 'full_matrices']),
 ('m.linalg.svdvals(t)', 'LinalgSvdBackward0',
  ['S', 'S_sym_argsize_minus_1', 'U', 'Vh', 'full_matrices']),
 ('m.svd(t).V', 'TransposeBackward0', ['dim0', 'dim1']),
 ('m.linalg.pinv(t)', 'LinalgPinvBackward0', ['result', 'self']),
 ('m.linalg.norm(a)', 'LinalgVectorNormBackward0', ['dim', 'keepdim', 'ord', 'result', 'self']),
 ('m.linalg.vector_norm(a)', 'LinalgVectorNormBackward0',
  ['dim', 'keepdim', 'ord', 'result', 'self']),
 ('m.linalg.matrix_norm(a)', 'LinalgVectorNormBackward0',
  ['dim', 'keepdim', 'ord', 'result', 'self']),
 ('m.linalg.matrix_norm(a, ord=1)', 'AmaxBackward0', ['dim', 'keepdim', 'result', 'self']),
 ("m.linalg.matrix_norm(a, ord='nuc')", 'SumBackward1', ['dim', 'keepdim', 'self_sym_sizes']),
 ('m.linalg.matrix_norm(a, ord=-2)', 'AminBackward0', ['dim', 'keepdim', 'result', 'self']),
 ('m.linalg.vecdot(a, s)', 'SumBackward1', ['dim', 'keepdim', 'self_sym_sizes']),
 ('m.linalg.vecdot(v, v)', 'VdotBackward0', ['other', 'self']),
 ('m.dist(a, s)', 'DistBackward0', ['other', 'p', 'result', 'self']),
 ('m.vdot(v, v)', 'VdotBackward0', ['other', 'self']),
 ('m.baddbmm(a, b, b, beta=0.5, alpha=2)', 'BaddbmmBackward0',
  ['alpha', 'batch1', 'batch2', 'beta']),
 ('m.addbmm(a, b, b)', 'AddbmmBackward0',
  ['alpha', 'batch1', 'batch1_sym_argsize_0', 'batch1_sym_argsize_1', 'batch2',
   'batch2_sym_argsize_2', 'beta']),
 ('m.cdist(t, a)', 'CdistBackward0', ['p', 'result', 'x1', 'x2']),
 ('m.cdist(t.repeat(8, 1), a)', 'ViewBackward0', ['self_sym_sizes']),
 ('m.inner(v, v)', 'ViewBackward0', ['self_sym_sizes'])]
# (source, chain lines)
CHAINS = [("m.einsum('ij,jk->ik', a, t.T)",
  ['ViewBackward0 self_sym_sizes=(3, 4, 1)',
   '  PermuteBackward0 dims=(0, 2, 1)',
   '    ViewBackward0 self_sym_sizes=(1, 3, 4)',
   '      BmmBackward0 mat2=(1, 3, 4), self=(1, 3, 3)',
   '        ViewBackward0 self_sym_sizes=(3, 3, 1)',
   '          PermuteBackward0 dims=(0, 2, 1)',
   '            PermuteBackward0 dims=(0, 2, 1)',
   '              UnsqueezeBackward0 dim=2',
   '                AccumulateGrad',
   '        ReshapeAliasBackward0 self_sym_sizes=(3, 4, 1)',
   '          PermuteBackward0 dims=(2, 1, 0)',
   '            PermuteBackward0 dims=(2, 1, 0)',
   '              UnsqueezeBackward0 dim=2',
   '                PermuteBackward0 dims=(1, 0)',
   '                  AccumulateGrad']),
 ("m.einsum('bij,bjk->bik', b, b)",
  ['ViewBackward0 self_sym_sizes=(2, 3, 3, 1)',
   '  PermuteBackward0 dims=(0, 1, 3, 2)',
   '    ViewBackward0 self_sym_sizes=(2, 3, 3)',
   '      BmmBackward0 mat2=(2, 3, 3), self=(2, 3, 3)',
   '        ViewBackward0 self_sym_sizes=(2, 3, 3, 1)',
   '          PermuteBackward0 dims=(0, 1, 3, 2)',
   '            PermuteBackward0 dims=(0, 1, 3, 2)',
   '              UnsqueezeBackward0 dim=3',
   '                AccumulateGrad',
   '        ViewBackward0 self_sym_sizes=(2, 3, 3, 1)',
   '          PermuteBackward0 dims=(0, 3, 2, 1)',
   '            PermuteBackward0 dims=(0, 3, 2, 1)',
   '              UnsqueezeBackward0 dim=3',
   '                AccumulateGrad']),
 ("m.einsum('ij->ji', t)", ['PermuteBackward0 dims=(1, 0)', '  AccumulateGrad']),
 ("m.einsum('ii->', a)",
  ['SumBackward1 dim=(0,), keepdim=False, self_sym_sizes=(3,)',
   '  PermuteBackward0 dims=(0,)',
   '    PermuteBackward0 dims=(0,)',
   '      DiagonalBackward0 dim1=0, dim2=1, offset=0, self_sym_sizes=(3, 3)',
   '        AccumulateGrad']),
 ("m.einsum('ij->i', t)",
  ['SumBackward1 dim=(1,), keepdim=False, self_sym_sizes=(4, 3)',
   '  PermuteBackward0 dims=(0, 1)',
   '    AccumulateGrad']),
 ("m.einsum('i,j->ij', v, v)",
  ['MulBackward0 other=(1, 3), self=(3, 1)',
   '  PermuteBackward0 dims=(0, 1)',
   '    UnsqueezeBackward0 dim=1',
   '      AccumulateGrad',
   '  PermuteBackward0 dims=(1, 0)',
   '    UnsqueezeBackward0 dim=1',
   '      AccumulateGrad']),
 ("m.einsum('bhqd,bhkd->bhqk', b.reshape(1, 2, 3, 3), b.reshape(1, 2, 3, 3).flip(2))",
  ['ViewBackward0 self_sym_sizes=(1, 2, 3, 3, 1)',
   '  PermuteBackward0 dims=(3, 0, 1, 4, 2)',
   '    ViewBackward0 self_sym_sizes=(2, 3, 3)',
   '      BmmBackward0 mat2=(2, 3, 3), self=(2, 3, 3)',
   '        ViewBackward0 self_sym_sizes=(2, 3, 3, 1, 1)',
   '          PermuteBackward0 dims=(1, 2, 4, 0, 3)',
   '            PermuteBackward0 dims=(0, 1, 2, 4, 3)',
   '              UnsqueezeBackward0 dim=4',
   '                ViewBackward0 self_sym_sizes=(2, 3, 3)',
   '                  AccumulateGrad',
   '        ReshapeAliasBackward0 self_sym_sizes=(2, 3, 1, 3, 1)',
   '          PermuteBackward0 dims=(1, 4, 0, 3, 2)',
   '            PermuteBackward0 dims=(0, 1, 4, 2, 3)',
   '              UnsqueezeBackward0 dim=4',
   '                FlipBackward0 dims=(2,)',
   '                  ViewBackward0 self_sym_sizes=(2, 3, 3)',
   '                    AccumulateGrad']),
 ("m.einsum('i,i->', v, v)",
  ['ViewBackward0 self_sym_sizes=(1,)',
   '  PermuteBackward0 dims=(0,)',
   '    ViewBackward0 self_sym_sizes=(1, 1, 1)',
   '      BmmBackward0 mat2=(1, 3, 1), self=(1, 1, 3)',
   '        ViewBackward0 self_sym_sizes=(3,)',
   '          PermuteBackward0 dims=(0,)',
   '            PermuteBackward0 dims=(0,)',
   '              AccumulateGrad',
   '        ViewBackward0 self_sym_sizes=(3,)',
   '          PermuteBackward0 dims=(0,)',
   '            PermuteBackward0 dims=(0,)',
   '              AccumulateGrad']),
 ("m.einsum('bn,anm,bm->ba', t, b, t)",
  ['ViewBackward0 self_sym_sizes=(4, 2, 1, 1)',
   '  PermuteBackward0 dims=(0, 1, 2, 3)',
   '    ViewBackward0 self_sym_sizes=(4, 2, 1)',
   '      BmmBackward0 mat2=(4, 3, 1), self=(4, 2, 3)',
   '        ViewBackward0 self_sym_sizes=(4, 2, 3, 1)',
   '          PermuteBackward0 dims=(0, 1, 2, 3)',
   '            PermuteBackward0 dims=(0, 2, 3, 1)',
   '              ViewBackward0 self_sym_sizes=(1, 4, 6)',
   '                BmmBackward0 mat2=(1, 3, 6), self=(1, 4, 3)',
   '                  ViewBackward0 self_sym_sizes=(4, 3, 1, 1)',
   '                    PermuteBackward0 dims=(0, 3, 1, 2)',
   '                      PermuteBackward0 dims=(0, 2, 3, 1)',
   '                        UnsqueezeBackward0 dim=3',
   '                          UnsqueezeBackward0 dim=2',
   '                            AccumulateGrad',
   '                  UnsafeViewBackward0 self_sym_sizes=(3, 2, 3, 1)',
   '                    CloneBackward0',
   '                      PermuteBackward0 dims=(3, 1, 2, 0)',
   '                        PermuteBackward0 dims=(3, 0, 2, 1)',
   '                          UnsqueezeBackward0 dim=3',
   '                            AccumulateGrad',
   '        ViewBackward0 self_sym_sizes=(4, 3, 1, 1)',
   '          PermuteBackward0 dims=(0, 2, 3, 1)',
   '            PermuteBackward0 dims=(0, 2, 1, 3)',
   '              UnsqueezeBackward0 dim=3',
   '                UnsqueezeBackward0 dim=2',
   '                  AccumulateGrad']),
 ("m.einsum('ij,jk->ki', a, t.T)",
  ['ViewBackward0 self_sym_sizes=(4, 3, 1)',
   '  PermuteBackward0 dims=(0, 2, 1)',
   '    ViewBackward0 self_sym_sizes=(1, 4, 3)',
   '      BmmBackward0 mat2=(1, 3, 3), self=(1, 4, 3)',
   '        ViewBackward0 self_sym_sizes=(4, 3, 1)',
   '          PermuteBackward0 dims=(0, 2, 1)',
   '            PermuteBackward0 dims=(1, 2, 0)',
   '              UnsqueezeBackward0 dim=2',
   '                PermuteBackward0 dims=(1, 0)',
   '                  AccumulateGrad',
   '        ReshapeAliasBackward0 self_sym_sizes=(3, 3, 1)',
   '          PermuteBackward0 dims=(2, 1, 0)',
   '            PermuteBackward0 dims=(2, 0, 1)',
   '              UnsqueezeBackward0 dim=2',
   '                AccumulateGrad']),
 ('m.linalg.matrix_power(a, 5)',
  ['MmBackward0 mat2=(3, 3), mat2_sym_sizes=(3, 3), mat2_sym_strides=(3, 1), self=(3, 3), '
   'self_sym_sizes=(3, 3), self_sym_strides=(3, 1)',
   '  AccumulateGrad',
   '  MmBackward0 mat2=(3, 3), mat2_sym_sizes=(3, 3), mat2_sym_strides=(3, 1), self=(3, 3), '
   'self_sym_sizes=(3, 3), self_sym_strides=(3, 1)',
   '    MmBackward0 mat2=(3, 3), mat2_sym_sizes=(3, 3), mat2_sym_strides=(3, 1), self=(3, 3), '
   'self_sym_sizes=(3, 3), self_sym_strides=(3, 1)',
   '      AccumulateGrad',
   '      AccumulateGrad',
   '    MmBackward0 mat2=(3, 3), mat2_sym_sizes=(3, 3), mat2_sym_strides=(3, 1), self=(3, 3), '
   'self_sym_sizes=(3, 3), self_sym_strides=(3, 1)',
   '      AccumulateGrad',
   '      AccumulateGrad']),
 ('m.linalg.matrix_power(a, -2)',
  ['MmBackward0 mat2=(3, 3), mat2_sym_sizes=(3, 3), mat2_sym_strides=(1, 3), self=(3, 3), '
   'self_sym_sizes=(3, 3), self_sym_strides=(1, 3)',
   '  LinalgInvExBackward0 inverse=(3, 3)',
   '    AccumulateGrad',
   '  LinalgInvExBackward0 inverse=(3, 3)',
   '    AccumulateGrad']),
 ('m.linalg.multi_dot([t, a, s, t.T])',
  ['ViewBackward0 self_sym_sizes=(4, 4)',
   '  MmBackward0 mat2=(3, 4), mat2_sym_sizes=(3, 4), mat2_sym_strides=(4, 1), self=(4, 3), '
   'self_sym_sizes=(4, 3), self_sym_strides=(3, 1)',
   '    AccumulateGrad',
   '    MmBackward0 mat2=(3, 4), mat2_sym_sizes=(3, 4), mat2_sym_strides=(1, 3), self=(3, 3), '
   'self_sym_sizes=(3, 3), self_sym_strides=(3, 1)',
   '      MmBackward0 mat2=(3, 3), mat2_sym_sizes=(3, 3), mat2_sym_strides=(3, 1), self=(3, 3), '
   'self_sym_sizes=(3, 3), self_sym_strides=(3, 1)',
   '        AccumulateGrad',
   '        AccumulateGrad',
   '      PermuteBackward0 dims=(1, 0)',
   '        AccumulateGrad']),
 ('m.linalg.inv(a).reshape(-1)',
  ['UnsafeViewBackward0 self_sym_sizes=(3, 3)',
   '  CloneBackward0',
   '    LinalgInvExBackward0 inverse=(3, 3)',
   '      AccumulateGrad']),
 ('m.linalg.solve(b, b).reshape(-1)',
  ['UnsafeViewBackward0 self_sym_sizes=(2, 3, 3)',
   '  CloneBackward0',
   '    LinalgSolveExBackward0 A=(2, 3, 3), LU=(2, 3, 3), left=True, pivots=(2, 3), result=(2, 3, '
   '3)',
   '      AccumulateGrad',
   '      AccumulateGrad'])]
# (source, {leaf: gradient of the output's sum})
GRADS = [("m.einsum('ij,jk->ik', a, t.T)",
  {'a': [[1.5, 0.6000000000000001, 1.6], [1.5, 0.6000000000000001, 1.6],
         [1.5, 0.6000000000000001, 1.6]],
   't': [[3.3, 4.4, 2.2], [3.3, 4.4, 2.2], [3.3, 4.4, 2.2], [3.3, 4.4, 2.2]]}),
 ("m.einsum('ii->', a)", {'a': [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]}),
 ("m.einsum('bn,anm,bm->ba', t, b, t)",
  {'b': [[[1.83, -0.11000000000000004, 0.5399999999999999],
          [-0.11000000000000004, 2.1, -0.009999999999999953],
          [0.5399999999999999, -0.009999999999999953, 1.5000000000000002]],
         [[1.83, -0.11000000000000004, 0.5399999999999999],
          [-0.11000000000000004, 2.1, -0.009999999999999953],
          [0.5399999999999999, -0.009999999999999953, 1.5000000000000002]]],
   't': [[13.64, 9.8, 0.8999999999999998], [0.31999999999999995, -10.4, 2.34],
         [11.18, 6.300000000000001, 9.16], [-1.8599999999999999, 9.100000000000001, 2.1]]}),
 ('m.linalg.inv(a)',
  {'a': [[-0.08828989192625554, -0.0732515037410142, -0.19404371851924299],
         [-0.03738080101716465, -0.031013741503251986, -0.08215560663113111],
         [-0.13528289891926257, -0.11224020734510246, -0.29732505256980785]]}),
 ('m.linalg.det(b)',
  {'b': [[[4.42, -1.4399999999999997, -0.5], [-1.2999999999999998, 2.8499999999999996, -0.5],
          [-1.3, 0.09999999999999998, 5.0]],
         [[5.96, -1.9, -1.2999999999999998], [-1.9, 7.75, -0.3],
          [-1.2999999999999998, -0.3, 10.999999999999998]]]}),
 ('m.linalg.slogdet(a).logabsdet',
  {'a': [[0.6181818181818182, -0.20139860139860138, -0.06993006993006995],
         [-0.18181818181818182, 0.3986013986013986, -0.06993006993006994],
         [-0.18181818181818185, 0.013986013986013986, 0.6993006993006994]]}),
 ('m.logdet(s)',
  {'s': [[0.2799436355096289, -0.08924377642085486, -0.06106153123532174],
         [-0.08924377642085486, 0.36402066697980273, -0.014091122592766557],
         [-0.06106153123532174, -0.014091122592766559, 0.516674495068107]]}),
 ('m.linalg.solve(a, t.T)',
  {'a': [[-0.18288620470438643, 0.014068169592645091, -0.3371509609271848],
         [-0.07743165924984102, 0.005956281480757011, -0.1427453665215903],
         [-0.28022886204704384, 0.021556066311311073, -0.5166022788400413]],
   't': [[0.34685314685314683, 0.14685314685314685, 0.5314685314685316],
         [0.34685314685314683, 0.14685314685314685, 0.5314685314685316],
         [0.34685314685314683, 0.14685314685314685, 0.5314685314685316],
         [0.34685314685314683, 0.14685314685314685, 0.5314685314685316]]}),
 ('m.linalg.solve(b, v.expand(2, 3))',
  {'b': [[[-0.044144945963127784, 0.1634818328524622, -0.49723702870556014],
          [-0.01869040050858233, 0.06921609858672796, -0.21052374199227344],
          [-0.0676414494596313, 0.25049635679006316, -0.7618954472101327]],
         [[-0.013883296735832384, 0.056629236685632085, -0.13183042733805747],
          [-0.027917498870967283, 0.11387400855262969, -0.2650937941037024],
          [-0.047283691781458095, 0.19286769016121064, -0.4489876873107752]]],
   'v': [0.4764914747065992, 0.40753891481932814, 0.9729903727085503]}),
 ('m.linalg.solve(a, t, left=False)',
  {'a': [[-0.17679338842975204, -0.146680228862047, -0.38855689764780676],
         [0.037024793388429775, 0.03071837253655435, 0.0813731722822632],
         [-0.21752066115702484, -0.18047043865225687, -0.4780673871582964]],
   't': [[0.2545454545454545, 0.21118881118881117, 0.5594405594405595],
         [0.2545454545454545, 0.21118881118881117, 0.5594405594405595],
         [0.2545454545454545, 0.21118881118881117, 0.5594405594405595],
         [0.2545454545454545, 0.21118881118881117, 0.5594405594405595]]}),
 ('m.linalg.cholesky(s)',
  {'s': [[0.19844470241382323, 0.14014740282787508, 0.13214757503366403],
         [0.14014740282787508, 0.29355563049445194, 0.2917095163880955],
         [0.13214757503366403, 0.29170951638809556, 0.3594003669544965]]}),
 ('m.linalg.cholesky(s, upper=True)',
  {'s': [[0.19844470241382323, 0.14014740282787508, 0.13214757503366403],
         [0.14014740282787508, 0.29355563049445194, 0.2917095163880955],
         [0.13214757503366403, 0.29170951638809556, 0.3594003669544965]]}),
 ('m.cholesky(s)',
  {'s': [[0.19844470241382323, 0.14014740282787508, 0.13214757503366403],
         [0.14014740282787508, 0.29355563049445194, 0.2917095163880955],
         [0.13214757503366403, 0.29170951638809556, 0.3594003669544965]]}),
 ('m.linalg.qr(t).Q * m.linalg.qr(t).R.sum()',
  {'t': [[2.632716258354139, 1.3361859658977715, 0.3709543120554544],
         [-1.5178900497909549, -0.05623455992238835, 2.8610891977871744],
         [1.700473038193551, -1.113300508375717, 1.326426705585739],
         [2.3385898163549013, -3.3167604398336694, -0.08121139334652483]]}),
 ('m.linalg.qr(t.T).Q ** 2',
  {'t': [[-0.0, -0.0, -0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]}),
 ('m.linalg.eigh(s).eigenvalues',
  {'s': [[0.9999999999999998, -5.551115123125783e-17, -1.3877787807814457e-16],
         [-5.551115123125783e-17, 0.9999999999999996, -8.326672684688674e-17],
         [-1.3877787807814457e-16, -8.326672684688674e-17, 0.9999999999999996]]}),
 ('m.linalg.eigh(s).eigenvectors ** 2',
  {'s': [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]}),
 ('m.linalg.svdvals(t)',
  {'t': [[0.8086975948009263, 0.36706321044991863, -0.3080725785531968],
         [0.15604724494333883, -0.6859427708950847, 0.3037941146335783],
         [0.39454795107064694, 0.14916713065931397, 0.8425519717909407],
         [-0.4074179326131145, 0.610324734646924, 0.32079058135921473]]}),
 ('(lambda r: r.U ** 2 + r.S.sum() + (r.Vh ** 2).sum())(m.linalg.svd(t, False))',
  {'t': [[9.704371137611115, 4.404758525399025, -3.69687094263836],
         [1.8725669393200648, -8.231313250741017, 3.6455293756029388],
         [4.734575412847761, 1.7900055679117686, 10.110623661491285],
         [-4.889015191357373, 7.32389681576309, 3.849486976310577]]}),
 ('m.linalg.svd(t).U[:, :3] ** 2',
  {'t': [[-2.7035259817943783e-16, 3.460571710880667e-16, 3.782011228133595e-16],
         [-9.822792427298323e-17, -5.739081440865492e-16, -3.9245226818975836e-16],
         [3.8783537771343367e-17, 1.7510759928848985e-16, -1.208003855458597e-15],
         [3.6704474855470257e-16, 3.775028598324164e-16, -3.9265512975065373e-16]]}),
 ('m.linalg.pinv(t)',
  {'t': [[-0.15398907107455823, 0.030208032223697223, -0.2695301475001192],
         [0.43743769012948147, 0.4549118191046432, 0.5577880029467287],
         [-0.7430025888835659, -0.5188850680178609, -1.044987950288847],
         [0.0858379765637601, 0.24789060495639573, 0.0484752535259034]]}),
 ('m.linalg.matrix_power(a, -3)',
  {'a': [[-0.0009013297497873142, -0.02864944789992802, -0.1821660521143834],
         [0.02641215879599619, 0.012855212748240837, 0.015189333465365211],
         [-0.020740262356131557, -0.06219035213613505, -0.34873439275931994]]}),
 ("m.linalg.norm(a, 'nuc')",
  {'a': [[0.9971109391541129, -0.007118563347417534, 0.07562473851242224],
         [0.011787085367833294, 0.9980395157814588, -0.061466979405559896],
         [-0.07503892081936475, 0.06218079281081043, 0.9952400260076381]]}),
 ('m.linalg.matrix_norm(b, ord=-1)',
  {'b': [[[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]],
         [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]]}),
 ('m.linalg.multi_dot([v, a, s, t.T])',
  {'a': [[3.6999999999999997, 1.81, 2.035], [-7.3999999999999995, -3.62, -4.07],
         [14.799999999999999, 7.24, 8.14]],
   's': [[0.8999999999999999, 0.36000000000000004, 0.96], [-2.55, -1.02, -2.72],
         [4.574999999999999, 1.83, 4.88]],
   't': [[2.2249999999999996, -3.89, 6.06], [2.2249999999999996, -3.89, 6.06],
         [2.2249999999999996, -3.89, 6.06], [2.2249999999999996, -3.89, 6.06]],
   'v': [20.455, 19.073999999999998, 9.773]}),
 ('m.dist(a, v, p=3)',
  {'a': [[0.11408608252295283, 0.20281970226302726, -0.11408608252295283],
         [0.012676231391439204, 0.811278809052109, -0.16428395883305208],
         [-0.002028197022630273, 0.09938165410888335, -0.012676231391439204]],
   'v': [-0.12473411689176175, -1.1134801654240196, 0.2910462727474441]}),
 ('m.baddbmm(a, b, b, beta=0.5, alpha=2)',
  {'a': [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]],
   'b': [[[13.6, 15.0, 11.0], [15.8, 17.200000000000003, 13.200000000000001], [11.4, 12.8, 8.8]],
         [[22.0, 19.4, 16.4], [19.4, 16.8, 13.8], [16.4, 13.8, 10.8]]]}),
 ('m.addbmm(v, b, b, alpha=3)',
  {'b': [[[20.4, 22.5, 16.5], [23.700000000000003, 25.800000000000004, 19.8],
          [17.1, 19.200000000000003, 13.200000000000001]],
         [[33.0, 29.1, 24.6], [29.1, 25.200000000000003, 20.700000000000003],
          [24.6, 20.700000000000003, 16.200000000000003]]],
   'v': [3.0, 3.0, 3.0]}),
 ('m.cdist(t, a)',
  {'a': [[3.1939248132783473, 1.6680455717405662, 0.2825934306657205],
         [0.854450472000684, 3.7315159431871874, -0.23435109149205596],
         [-0.5227570536178296, 0.7377782364561898, 2.9939476163041387]],
   't': [[-0.3779102309634056, -1.3121771090468002, -1.6119723908209715],
         [-0.8193505782629974, -2.5315432623358674, -0.6066990045189194],
         [-0.22743383616169421, -1.7682160701015213, 0.003589331014431263],
         [-2.100923586273104, -0.5254033098997553, -0.8271078911523433]]}),
 ('m.cdist(t, a, p=1.5)',
  {'a': [[3.3731743511032746, 2.2332187499898946, 0.5760636337530476],
         [1.4342344505804985, 3.7419417170868736, -0.5428426187358398],
         [-0.6734407313342963, 0.6172460458085112, 3.2364301720028585]],
   't': [[-0.21067529024719323, -1.3231035572578755, -1.9841080027284623],
         [-1.165821183299765, -2.634679373165924, -0.7095679772599467],
         [-0.37741234772257126, -2.113473761489588, 0.3380653182621586],
         [-2.380059249079947, -0.521149820971891, -0.914040525293816]]}),
 ('m.cdist(t.repeat(8, 1), a)',
  {'a': [[25.551398506226775, 13.34436457392453, 2.260747445325765],
         [6.835603776005473, 29.852127545497503, -1.8748087319364468],
         [-4.182056428942637, 5.902225891649521, 23.951580930433114]],
   't': [[-3.023281847707244, -10.497416872374401, -12.895779126567772],
         [-6.55480462610398, -20.252346098686942, -4.853592036151355],
         [-1.8194706892935528, -14.14572856081217, 0.028714648115450103],
         [-16.807388690184833, -4.203226479198044, -6.616863129218746]]}),
 ('m.inner(t, a)',
  {'a': [[1.5, 0.6000000000000001, 1.6], [1.5, 0.6000000000000001, 1.6],
         [1.5, 0.6000000000000001, 1.6]],
   't': [[3.3, 4.4, 2.2], [3.3, 4.4, 2.2], [3.3, 4.4, 2.2], [3.3, 4.4, 2.2]]})]
# END GENERATED EXPECTATIONS


# -- the tests -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("src", "dtype", "values"), VALUES, ids=[c[0] for c in VALUES])
def test_values_are_torchs(src: str, dtype: str, values: Any) -> None:
    out = run(src)
    if dtype == "Size":
        assert list(out) == values
        return
    assert str(out.dtype)[len("gradviz."):] == dtype
    assert same_values(out.tolist(), values), (out.tolist(), values)


def _error_name(e: BaseException) -> str:
    # torch.linalg.LinAlgError's class is named _LinAlgError in torch; gradviz's LinAlgError
    return type(e).__name__.lstrip("_")


@pytest.mark.parametrize(("src", "error", "message"), ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_are_torchs(src: str, error: str, message: str) -> None:
    with pytest.raises(Exception) as info:
        run(src)
    assert (_error_name(info.value), str(info.value)) == (error, message)


def test_linalg_errors_are_runtime_errors() -> None:
    with pytest.raises(RuntimeError):
        gradviz.linalg.inv(gradviz.zeros(2, 2))
    assert issubclass(gradviz.linalg.LinAlgError, RuntimeError)


@pytest.mark.parametrize(("src", "node", "saved"), GRAPHS, ids=[c[0] for c in GRAPHS])
def test_graphs_are_torchs(src: str, node: str, saved: list[str]) -> None:
    fn = run(src).grad_fn
    assert fn.name() == node
    assert sorted(a[len("_saved_"):] for a in dir(fn) if a.startswith("_saved_")) == saved


@pytest.mark.parametrize(("src", "lines"), CHAINS, ids=[c[0] for c in CHAINS])
def test_chains_are_torchs(src: str, lines: list[str]) -> None:
    assert chain(run(src)) == lines


@pytest.mark.parametrize(("src", "grads"), GRADS, ids=[c[0] for c in GRADS])
def test_gradients_are_torchs(src: str, grads: dict[str, Any]) -> None:
    e = env()
    out = run(src, e=e)
    (out.sum() if out.ndim else out).backward()
    got = {k: v.grad.tolist() for k, v in e.items()
           if isinstance(v, gradviz.Tensor) and v.grad is not None}
    assert sorted(got) == sorted(grads)
    for k in grads:
        assert same_values(got[k], grads[k]), k


# -- behaviour torch documents, checked without it ------------------------------------------------
def test_einsum_matches_numpy_on_random_equations() -> None:
    rng = np.random.default_rng(0)
    cases = [("ij,jk->ik", [(2, 3), (3, 4)]), ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
             ("iij->j", [(3, 3, 2)]), ("...ij,...jk->...ik", [(2, 1, 2, 3), (4, 3, 2)]),
             ("Ab,bA->A", [(3, 2), (2, 3)]), ("ij,jk,kl,lm->im", [(2, 3), (3, 4), (4, 5), (5, 2)]),
             ("i,i,i->", [(3,), (3,), (3,)]), ("ab,cd->", [(2, 3), (4, 5)]), ("ii", [(4, 4)])]
    for eq, shapes in cases:
        arrays = [rng.standard_normal(s) for s in shapes]
        got = gradviz.einsum(eq, *[gradviz.tensor(x) for x in arrays])
        np.testing.assert_allclose(got.numpy(), np.einsum(eq, *arrays), atol=1e-12)


@pytest.mark.parametrize(("name", "fn", "shapes"), [
    ("einsum attention", lambda q, k: gradviz.einsum("bhqd,bhkd->bhqk", q, k),
     [(1, 2, 3, 2), (1, 2, 4, 2)]),
    ("einsum three operands", lambda x, y, z: gradviz.einsum("bn,anm,bm->ba", x, y, z),
     [(2, 3), (2, 3, 4), (2, 4)]),
    ("einsum trace and diagonal", lambda x: gradviz.einsum("iij->j", x), [(3, 3, 2)]),
    ("det batched", lambda x: gradviz.linalg.det(x), [(2, 3, 3)]),
    ("solve vector batch", lambda x, y: gradviz.linalg.solve(x, y), [(2, 3, 3), (2, 3)]),
    ("qr wide", lambda x: gradviz.linalg.qr(x), [(2, 4)]),
    ("svd batched wide", lambda x: gradviz.linalg.svd(x, full_matrices=False), [(2, 2, 3)]),
    ("matrix_norm nuc", lambda x: gradviz.linalg.matrix_norm(x, "nuc"), [(3, 4)]),
    ("multi_dot", lambda x, y, z: gradviz.linalg.multi_dot([x, y, z]), [(2, 3), (3, 4), (4,)]),
    ("matrix_power -3", lambda x: gradviz.linalg.matrix_power(x + 3 * gradviz.eye(
        3, dtype=gradviz.float64), -3), [(3, 3)]),
    ("cdist mm path", lambda x, y: gradviz.cdist(x, y), [(26, 2), (3, 2)]),
])
def test_gradcheck_and_gradgradcheck(name: str, fn: Any, shapes: list[tuple]) -> None:
    rng = np.random.default_rng(1)
    xs = [gradviz.tensor(rng.uniform(-1, 1, s), requires_grad=True) for s in shapes]
    assert gradcheck(fn, xs)
    assert gradgradcheck(fn, xs)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # NumPy on inf - inf
def test_singular_matrix_gradients_are_not_finite() -> None:
    """The inverse of a singular matrix is infinite, and so is its gradient (NumPy warns about
    the inf - inf on the way, PyTorch does not)."""
    x = gradviz.tensor([[1.0, 2.0], [2.0, 4.0]], requires_grad=True)
    gradviz.linalg.inv_ex(x).inverse.sum().backward()
    assert not np.isfinite(x.grad.numpy()).all()


def test_qr_mode_r_has_no_derivative() -> None:
    r = gradviz.linalg.qr(gradviz.tensor(T, requires_grad=True), mode="r").R
    with pytest.raises(RuntimeError, match="mode='r'"):
        r.sum().backward()


def test_linalg_namespace() -> None:
    assert gradviz.linalg.__name__ == "gradviz.linalg"
    for name in gradviz.linalg.__all__:
        assert callable(getattr(gradviz.linalg, name)), name
    x = gradviz.tensor(A)
    for method in ("inverse", "det", "logdet", "slogdet", "matrix_power", "pinverse", "svd"):
        assert hasattr(x, method), method


def test_named_tuples() -> None:
    q = gradviz.linalg.qr(gradviz.tensor(T))
    assert type(q).__name__ == "linalg_qr" and q.Q is q[0] and q.R is q[1]
    assert repr(gradviz.linalg.slogdet(gradviz.eye(2))).startswith(
        "gradviz.return_types.linalg_slogdet(\nsign=tensor(1.),\nlogabsdet=tensor(0.))")
    assert type(gradviz.slogdet(gradviz.eye(2))).__name__ == "slogdet"
    assert gradviz.svd(gradviz.eye(2))._fields == ("U", "S", "V")


def test_torch_cholesky_warns() -> None:
    with pytest.warns(UserWarning, match="torch.cholesky is deprecated"):
        gradviz.cholesky(gradviz.eye(2))


def test_in_place_baddbmm_and_addbmm() -> None:
    b = gradviz.tensor([A, S], dtype=gradviz.float64, requires_grad=True)
    out = gradviz.zeros(2, 3, 3, dtype=gradviz.float64)
    out.baddbmm_(b, b)
    assert out.grad_fn.name() == "BaddbmmBackward0" and out._version == 1
    np.testing.assert_allclose(out.detach().numpy(), np.array([A, S]) @ np.array([A, S]))
    acc = gradviz.zeros(3, 3, dtype=gradviz.float64).addbmm_(b, b, alpha=2)
    assert acc.grad_fn.name() == "AddbmmBackward0"
    np.testing.assert_allclose(acc.detach().numpy(),
                               2 * (np.array(A) @ np.array(A) + np.array(S) @ np.array(S)))
