"""The "opsmore" tensor functions against a live torch: every expectation hard-coded in
tests/test_ops_more.py derived again from torch (values, error texts, node chains and saved
names, gradients), torch's ``_saved_`` lists for the new nodes (tests/test_ops_forward.py's
TORCH_SAVED), and random programs compared with torch: values, gradients and second
derivatives in float64.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch
from _parity import sibling

import gradviz

MORE = sibling("test_ops_more")
FORWARD = sibling("test_ops_forward")


@pytest.mark.parametrize(("src", "dtype", "values"), MORE.VALUES, ids=[c[0] for c in MORE.VALUES])
def test_hard_coded_values_are_torchs(src: str, dtype: str | None, values: Any) -> None:
    got_dtype, got = MORE.plain(MORE.run(src, torch))
    assert got_dtype == dtype
    assert MORE.same_values(got, values, dtype), (got, values)


@pytest.mark.parametrize(("src", "error", "message"), MORE.ERRORS, ids=[c[0] for c in MORE.ERRORS])
def test_hard_coded_errors_are_torchs(src: str, error: str, message: str) -> None:
    with pytest.raises(Exception) as info:
        MORE.run(src, torch)
    assert type(info.value).__name__ == error and str(info.value) == message


@pytest.mark.parametrize(("src", "nodes", "names"), MORE.GRAPHS, ids=[c[0] for c in MORE.GRAPHS])
def test_hard_coded_graphs_are_torchs(src: str, nodes: list[str], names: list[str]) -> None:
    out = MORE.run(src, torch)
    assert MORE.chain(out) == nodes
    assert MORE.saved(out.grad_fn) == names


@pytest.mark.parametrize(("src", "leaf", "grad"), MORE.GRADS, ids=[c[0] for c in MORE.GRADS])
def test_hard_coded_gradients_are_torchs(src: str, leaf: str | None, grad: Any) -> None:
    np.testing.assert_allclose(MORE.leaf_grad(src, leaf, torch), np.asarray(grad, dtype=float),
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(("src", "attr", "expected"), MORE.SAVED_VALUES,
                         ids=[c[0] for c in MORE.SAVED_VALUES])
def test_hard_coded_saved_arguments_are_torchs(src: str, attr: str, expected: Any) -> None:
    assert getattr(MORE.run(src, torch).grad_fn, attr) == expected


# The nodes this set added, and a torch call that records each.
NODES = {
    "ErfcBackward0": "m.erfc(x)", "ErfinvBackward0": "m.erfinv(x * 0.5)",
    "LgammaBackward0": "m.lgamma(p)", "DigammaBackward0": "m.digamma(p)",
    "PolygammaBackward0": "m.polygamma(2, p)", "PolygammaBackward1": "(p * 1).polygamma_(1)",
    "SincBackward0": "m.sinc(x)", "SgnBackward0": "m.sgn(x)",
    "CopysignBackward0": "m.copysign(x, y)", "CopysignBackward1": "m.copysign(x, 2.0)",
    "LogaddexpBackward0": "m.logaddexp(x, y)", "Logaddexp2Backward0": "m.logaddexp2(x, y)",
    "VarMeanBackward0": "m.var_mean(x)[0]", "StdMeanBackward0": "m.std_mean(x, 1)[0]",
    "LogcumsumexpBackward0": "m.logcumsumexp(x, 1)", "NansumBackward0": "m.nansum(x)",
    "AminmaxBackward0": "m.aminmax(x).min", "ModeBackward0": "m.mode(x).values",
    "Rot90Backward0": "m.rot90(x)", "BlockDiagBackward0": "m.block_diag(x, v)",
    "UnfoldBackward0": "x.unfold(1, 2, 1)",
    # (gradviz records these two only inside quantile with a tensor q, as torch does)
    "UnsqueezeBackward1": "m.quantile(x, m.tensor([0.5], dtype=m.float64), dim=1)",
    "TransposeBackward1": "m.quantile(x, m.tensor([0.5], dtype=m.float64), dim=1)",
    "IndexAddBackward0": "m.index_add(x, 0, m.tensor([1]), y[:1])",
    "IndexCopyBackward0": "m.index_copy(x, 0, m.tensor([1]), y[:1])",
    "IndexFillBackward0": "m.index_fill(x, 0, m.tensor([1]), 2.0)",
    "IndexFillBackward1": "m.index_fill(x, 0, m.tensor([1]), s)",
    "ScatterReduceBackward0": "m.scatter_reduce(x, 1, m.tensor([[0], [1]]), y, 'sum')",
    "PutBackward0": "m.put(x, m.tensor([1]), v[:1])",
    "Unique2Backward0": "m.unique(x)", "UniqueDimBackward0": "m.unique(x, dim=0)",
}


def _find(out: Any, name: str) -> Any:
    """The first node called ``name`` below ``out`` (depth first, no recursion)."""
    stack = [out.grad_fn]
    while stack:
        node = stack.pop()
        if node.name() == name:
            return node
        stack.extend(n for n, _ in reversed(node.next_functions) if n is not None)
    raise AssertionError(f"no {name} below {out.grad_fn.name()}")


@pytest.mark.parametrize("node", sorted(NODES))
def test_torch_saved_lists_of_the_new_nodes(node: str) -> None:
    theirs = _find(MORE.run(NODES[node], torch), node)
    assert FORWARD.TORCH_SAVED[node] == MORE.saved(theirs)
    assert MORE.saved(_find(MORE.run(NODES[node]), node)) == MORE.saved(theirs)


# -- random programs: values, gradients and second derivatives, float64 ---------------------------
# ``x``, ``y``, ``w``: (3, 4) in [-1, 1]; ``v``: (4,); ``p``, ``q``: (3, 4) in [0.5, 2].
PROGRAMS = [
    "m.erfc(x) * m.erfinv(y * 0.9) + m.sinc(w)",
    "m.lgamma(p) + m.digamma(q) * m.polygamma(2, p)",
    "m.copysign(x, y) * w + m.copysign(x, -2.0)",
    "m.logaddexp(x, y) + m.logaddexp2(w, v)",
    "m.float_power(x, 2) + m.float_power(p, y) + m.float_power(2, x)",
    "m.var_mean(x, 1)[0] * m.var_mean(x, 1)[1] + m.std_mean(y, correction=0)[0]",
    "m.logcumsumexp(x * 3, 1) + m.logcumsumexp(y, 0)",
    "m.nansum(x * y, 0) + m.nanmean(w, 0)",
    "m.aminmax(x, dim=1).min * m.aminmax(x, dim=1).max",
    "m.mode(x, 0).values + m.quantile(y, 0.3, dim=0)",
    "m.quantile(x, m.tensor([0.1, 0.9], dtype=m.float64), dim=1, keepdim=True).sum(0)",
    "m.nanquantile(x, 0.5) * m.quantile(y, 0.25, interpolation='midpoint')",
    "m.hstack([x, y]).sum(1) + m.vstack([x, v]).sum(0)[:3] + m.dstack([w, x]).sum(2)[0, :3]",
    "m.column_stack([v, v * 2]).sum(1) + m.row_stack([v, v]).sum(0)",
    "m.tensor_split(x, 3, dim=1)[0].sum(1) * m.hsplit(y, [1, 3])[2].sum(1)",
    "m.unflatten(x, 1, (2, 2)).sum(2) * m.swapdims(y, 0, 1)[:2].t()",
    "m.rot90(x) * m.rot90(y, -1, [1, 0])",
    "m.block_diag(x, v, w[:1]) @ m.ones(12, dtype=m.float64)",
    "m.cartesian_prod(v, v[:2]).prod(1) + m.meshgrid(v, v[:2], indexing='xy')[0].sum()",
    "m.msort(x) * y + x.unfold(1, 2, 1).sum(2).sum(1).reshape(3, 1)",
    "x.sum_to_size(1, 4) * v + p.sum_to_size(4)",
    "m.index_add(x, 1, m.tensor([0, 3, 0]), y[:, :3], alpha=-1.5) * w",
    "m.index_copy(x, 0, m.tensor([2, 0]), y[:2]) + m.index_fill(w, 1, m.tensor([1, 2]), 0.5)",
    "m.scatter_reduce(p, 1, m.tensor([[0, 0], [1, 3], [3, 3]]), q[:, :2], 'prod')",
    "m.scatter_reduce(x, 1, m.tensor([[0, 0], [1, 3], [3, 3]]), y[:, :2], 'mean',"
    " include_self=False) + m.scatter_reduce(x, 0, m.tensor([[2, 2, 0, 1]]), w[:1], 'amax')",
    "m.put(x, m.tensor([0, 5, 11]), v[:3]) + m.put(y, m.tensor([1, 1]), v[:2], accumulate=True)",
    "(x * 1).index_add_(0, m.tensor([1]), y[:1]) + (p * 1).polygamma_(1) + (w * 1).sgn_()",
]


def _leaves(m: Any, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    arrays = {"x": rng.uniform(-1, 1, (3, 4)), "y": rng.uniform(-1, 1, (3, 4)),
              "w": rng.uniform(-1, 1, (3, 4)), "v": rng.uniform(-1, 1, 4),
              "p": rng.uniform(0.5, 2, (3, 4)), "q": rng.uniform(0.5, 2, (3, 4))}
    return {k: m.tensor(a, dtype=m.float64, requires_grad=True) for k, a in arrays.items()}


def _run(m: Any, src: str, seed: int) -> tuple[Any, dict[str, Any]]:
    leaves = _leaves(m, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(src, {"m": m, **leaves}), leaves  # noqa: S307 - PROGRAMS above


@pytest.mark.parametrize("src", PROGRAMS)
@pytest.mark.parametrize("seed", [0, 1])
def test_program_values_gradients_and_second_derivatives(src: str, seed: int) -> None:
    results = []
    for m in (gradviz, torch):
        out, leaves = _run(m, src, seed)
        names = sorted(leaves)
        grads = m.autograd.grad((out * out).sum(), [leaves[k] for k in names], create_graph=True,
                                allow_unused=True)
        first = [g for g in grads if g is not None and g.requires_grad]
        second = [None] * len(names)
        if first:
            second = m.autograd.grad(sum(g.sum() for g in first), [leaves[k] for k in names],
                                     allow_unused=True)
        results.append((out.detach().numpy(),
                        [None if g is None else g.detach().numpy(force=True)
                         if m is torch else g.detach().numpy() for g in grads],
                        [None if g is None else g.numpy(force=True) if m is torch else g.numpy()
                         for g in second]))
    (gv, gg, gs), (tv, tg, ts) = results
    np.testing.assert_allclose(gv, tv, rtol=1e-12, atol=1e-12)
    for a, b in zip(gg + gs, tg + ts, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)
