"""einsum and linear algebra against a live torch: the expectations hard-coded in
tests/test_linalg.py derived again from torch, einsum's whole recorded graph compared with
torch's for many equations, and values, gradients and node names of random programs compared
with torch's in float64.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch
from _parity import sibling

import gradviz

LIN = sibling("test_linalg")


def _error_name(e: BaseException) -> str:
    return type(e).__name__.lstrip("_")  # torch's class is _LinAlgError


@pytest.mark.parametrize(("src", "dtype", "values"), LIN.VALUES, ids=[c[0] for c in LIN.VALUES])
def test_hard_coded_values_are_torchs(src: str, dtype: str, values: Any) -> None:
    out = LIN.run(src, torch)
    if dtype == "Size":
        assert list(out) == values
        return
    assert str(out.dtype)[len("torch."):] == dtype
    assert LIN.same_values(out.tolist(), values)


@pytest.mark.parametrize(("src", "error", "message"), LIN.ERRORS, ids=[c[0] for c in LIN.ERRORS])
def test_hard_coded_errors_are_torchs(src: str, error: str, message: str) -> None:
    with pytest.raises(Exception) as info:
        LIN.run(src, torch)
    assert (_error_name(info.value), str(info.value)) == (error, message)


@pytest.mark.parametrize(("src", "node", "saved"), LIN.GRAPHS, ids=[c[0] for c in LIN.GRAPHS])
def test_hard_coded_graphs_are_torchs(src: str, node: str, saved: list[str]) -> None:
    fn = LIN.run(src, torch).grad_fn
    assert fn.name() == node
    assert sorted(a[len("_saved_"):] for a in dir(fn) if a.startswith("_saved_")) == saved


@pytest.mark.parametrize(("src", "lines"), LIN.CHAINS, ids=[c[0] for c in LIN.CHAINS])
def test_hard_coded_chains_are_torchs(src: str, lines: list[str]) -> None:
    assert LIN.chain(LIN.run(src, torch)) == lines


@pytest.mark.parametrize(("src", "grads"), LIN.GRADS, ids=[c[0] for c in LIN.GRADS])
def test_hard_coded_gradients_are_torchs(src: str, grads: dict[str, Any]) -> None:
    e = LIN.env(torch)
    out = LIN.run(src, torch, e)
    (out.sum() if out.ndim else out).backward()
    got = {k: v.grad.tolist() for k, v in e.items()
           if isinstance(v, torch.Tensor) and v.grad is not None}
    assert sorted(got) == sorted(grads)
    for k in grads:
        assert LIN.same_values(got[k], grads[k]), k


# -- einsum: the whole graph (names and saved values) of many equations, random operands ---------
EQUATIONS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]), ("ij->ji", [(2, 3)]), ("ii->", [(3, 3)]),
    ("ii", [(3, 3)]), ("ii->i", [(3, 3)]), ("ij->i", [(2, 3)]), ("ij->", [(2, 3)]),
    ("i,j->ij", [(2,), (3,)]), ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 5)]), ("i,i->", [(3,), (3,)]),
    ("i,i->i", [(3,), (3,)]), ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (5, 3, 4)]), ("ij", [(2, 3)]), ("ji", [(2, 3)]),
    ("ij,j->i", [(2, 3), (3,)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ijk->", [(2, 3, 4)]), ("i->", [(3,)]), ("i->i", [(3,)]), ("ij,jk->k", [(2, 3), (3, 4)]),
    ("ij,jk->", [(2, 3), (3, 4)]), ("iij->ji", [(3, 3, 4)]), ("...ij->...ji", [(2, 5, 3, 4)]),
    ("...ii->...i", [(2, 3, 3)]), ("b...,b...->b", [(2, 3, 4), (2, 3, 4)]),
    ("...,...->...", [(2, 1, 4), (3, 1)]), ("ijk,ikl->ijl", [(2, 3, 4), (2, 4, 5)]),
    ("ij,kj->ik", [(2, 3), (4, 3)]), ("Ab,bA->A", [(3, 2), (2, 3)]),
    ("i,i,i->", [(3,), (3,), (3,)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("bqd,bkd->bqk", [(2, 1, 3), (2, 4, 3)]), ("ij,ij->", [(2, 3), (2, 3)]),
    ("iji->j", [(3, 2, 3)]), ("i...->...", [(2, 3, 4)]), ("...j,j", [(2, 3, 4), (4,)]),
    ("ab,cd->", [(2, 3), (4, 5)]), ("ij,jk,kl,lm->im", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    (" i j , j k -> k i ", [(2, 3), (3, 4)]), ("ij,jk->ki", [(2, 3), (3, 4)]),
    ("bij,bjk->bki", [(2, 3, 4), (2, 4, 5)]), ("ik,jk->ji", [(2, 3), (4, 3)]),
    ("abc,cd->dba", [(2, 3, 4), (4, 5)]), ("ab,bc,cd->da", [(2, 3), (3, 4), (4, 5)]),
    ("ij,kl->lj", [(2, 3), (4, 5)]), ("qhd,khd->hkq", [(2, 3, 4), (5, 3, 4)]),
]


@pytest.mark.parametrize(("eq", "shapes"), EQUATIONS, ids=[e for e, _ in EQUATIONS])
def test_einsum_graph_values_and_gradients_are_torchs(eq: str, shapes: list[tuple]) -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    seed = rng.standard_normal(1)
    results = []
    for m in (torch, gradviz):
        xs = [m.tensor(a, dtype=m.float64, requires_grad=True) for a in arrays]
        y = m.einsum(eq, *xs)
        lines = LIN.chain(y)
        g = np.random.default_rng(int(abs(seed[0]) * 1000)).standard_normal(tuple(y.shape))
        y.backward(m.tensor(g, dtype=m.float64))
        results.append((lines, y.detach().numpy(), [x.grad.numpy() for x in xs]))
    (t_lines, t_y, t_g), (g_lines, g_y, g_g) = results
    assert g_lines == t_lines
    np.testing.assert_allclose(g_y, t_y, atol=1e-10)
    for a, b in zip(g_g, t_g, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-10)


# -- random programs: values, gradients, node names -----------------------------------------------
# Leaves (float64, requiring grad): a, a4 square; b batched 2x3x3; s SPD; t 4x3; w 3x4; v, x3,
# y3 vectors and 2x3 rows of 3-vectors; c 3x2; c2 2x3x4; big 30x3.
PROGRAMS = [
    "m.linalg.inv(a)", "m.inverse(b)", "m.linalg.det(a) + m.det(b).sum()",
    "m.linalg.slogdet(a).logabsdet + m.slogdet(b)[1].sum()", "m.logdet(s)",
    "m.linalg.solve(a, c)", "m.linalg.solve(a, v)", "m.linalg.solve(b, c2)",
    "m.linalg.solve(a, c.transpose(0, 1), left=False)", "m.linalg.cholesky(s)",
    "m.linalg.cholesky(s, upper=True)", "m.cholesky(s)",
    "m.linalg.qr(t).Q * 2 + m.linalg.qr(t).R.sum()",
    "(lambda q: q.Q.sum() + q.R.sum())(m.linalg.qr(w))",
    "(lambda q: (q.Q * q.Q).sum() + q.R.sum())(m.linalg.qr(b))",
    "(lambda e: (e.eigenvectors ** 2).sum() + e.eigenvalues.sum())(m.linalg.eigh(s))",
    "m.linalg.eigvalsh(s, UPLO='U')", "m.linalg.svdvals(t)",
    "(lambda u: (u.U ** 2).sum() + u.S.sum() + (u.Vh ** 2).sum())(m.linalg.svd(t, False))",
    "(lambda u: (u.U ** 2).sum() + u.S.sum() + (u.Vh ** 2).sum())(m.linalg.svd(w))",
    "m.svd(t).V ** 2", "m.linalg.pinv(t)", "m.pinverse(w)", "m.linalg.pinv(b)",
    "m.linalg.matrix_power(a, 0)", "m.linalg.matrix_power(a, 1)", "m.linalg.matrix_power(a, 3)",
    "m.linalg.matrix_power(a, 6)", "m.linalg.matrix_power(a, -2)", "m.linalg.matrix_power(b, 4)",
    "m.linalg.norm(a)", "m.linalg.norm(v)", "m.linalg.norm(a, ord=1)",
    "m.linalg.norm(a, ord='nuc')", "m.linalg.norm(a, ord=2)", "m.linalg.norm(a, ord=-2)",
    "m.linalg.norm(a, ord=float('inf'))", "m.linalg.norm(a, dim=1)",
    "m.linalg.norm(b, dim=(1, 2))", "m.linalg.vector_norm(a, ord=3, dim=0, keepdim=True)",
    "m.linalg.matrix_norm(b, ord=-1)", "m.linalg.matrix_norm(b, ord=float('-inf'), keepdim=True)",
    "m.linalg.matrix_norm(b, ord=2, keepdim=True)",
    "m.linalg.matrix_norm(c2, ord='nuc', dim=(0, 2))", "m.linalg.cross(x3, y3)",
    "m.linalg.vecdot(t, t)", "m.linalg.vecdot(v, v)", "m.linalg.multi_dot([t, w])",
    "m.linalg.multi_dot([t, w, t])", "m.linalg.multi_dot([v, a, a, w, a4])",
    "m.linalg.multi_dot([t, w, a4, a4, w.transpose(0, 1)])", "m.dist(a, a * 2)",
    "m.dist(v, v * 3, p=1)", "m.dist(a, v, 3)", "m.inner(t, t)", "m.inner(v, v)",
    "m.vdot(v, v * 2)", "m.baddbmm(b, b, b)", "m.baddbmm(a, b, b, beta=0.5, alpha=2)",
    "m.addbmm(a, b, b)", "m.addbmm(v, b, b, beta=2, alpha=0.5)", "b.clone().baddbmm_(b, b)",
    "a.clone().addbmm_(b, b, alpha=3)", "m.cdist(t, w.transpose(0, 1))",
    "m.cdist(t, w.transpose(0, 1), p=1)", "m.cdist(t, w.transpose(0, 1), p=float('inf'))",
    "m.cdist(t, w.transpose(0, 1), p=0.5)", "m.cdist(big, t)", "m.cdist(c2, c2)",
    "m.cdist(b, b, compute_mode='use_mm_for_euclid_dist')",
    "a.inverse() + a.det() + a.matrix_power(2)", "a.dist(a * 2) + v.inner(v) + v.vdot(v)",
    "t.pinverse()",
]


def _leaves(m: Any, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    sx = rng.standard_normal((3, 3))
    arrays = {"a": rng.standard_normal((3, 3)) + 2 * np.eye(3), "b": rng.standard_normal(
        (2, 3, 3)), "s": sx @ sx.T + 3 * np.eye(3), "c": rng.standard_normal((3, 2)),
        "c2": rng.standard_normal((2, 3, 4)), "v": rng.standard_normal(3),
        "t": rng.standard_normal((4, 3)), "w": rng.standard_normal((3, 4)),
        "x3": rng.standard_normal((2, 3)), "y3": rng.standard_normal((2, 3)),
        "big": rng.standard_normal((30, 3)), "a4": rng.standard_normal((4, 4))}
    leaves = {k: m.tensor(v, dtype=m.float64, requires_grad=True) for k, v in arrays.items()}
    return {"m": m, **leaves}


def _names(t: Any) -> list[str]:
    return [line.split(" ")[0].strip() for line in LIN.chain(t)]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("src", PROGRAMS)
def test_programs_match_torch(src: str, seed: int) -> None:
    results = []
    for m in (torch, gradviz):
        e = _leaves(m, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = eval(src, e)  # noqa: S307 - sources written above
        names = _names(y)
        g = np.random.default_rng(99).standard_normal(tuple(y.shape))
        y.backward(m.tensor(g, dtype=m.float64))
        grads = {k: v.grad.numpy() for k, v in e.items()
                 if isinstance(v, m.Tensor) and v.grad is not None}
        results.append((names, y.detach().numpy(), grads))
    (t_names, t_y, t_g), (g_names, g_y, g_g) = results
    assert g_names == t_names
    np.testing.assert_allclose(g_y, t_y, rtol=1e-7, atol=1e-9)
    assert sorted(g_g) == sorted(t_g)
    for k in t_g:
        np.testing.assert_allclose(g_g[k], t_g[k], rtol=1e-6, atol=1e-8, err_msg=k)
