"""The random sampling ops against a live torch: the expectations hard-coded in
tests/test_ops_random.py derived again from torch (graphs, saved values, zero gradients,
draw-free values, dtypes, error texts, moments), then gradviz and torch side by side on the same
inputs. Torch's generator draws other numbers than gradviz's from the same seed, so drawn values
are compared through their distributions (the same statistics, within the same tolerances) and
everything else exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from _parity import sibling

import gradviz

RAND = sibling("test_ops_random")


@pytest.mark.parametrize(("src", "node", "values", "tensors", "nxt", "dtype", "shape"),
                         RAND.GRAPHS, ids=[g[0] for g in RAND.GRAPHS])
def test_hard_coded_graphs_are_torchs(src: str, node: str, values: dict, tensors: list,
                                      nxt: list, dtype: str, shape: tuple) -> None:
    out = RAND.run(src, torch)
    assert RAND.graph_of(out, torch) == (node, values, tensors, nxt, dtype, shape)


@pytest.mark.parametrize("src", RAND.GRADS)
def test_gradients_are_torchs(src: str) -> None:
    assert RAND.leaf_grads(src, gradviz) == RAND.leaf_grads(src, torch)


def test_dropout_masks_are_torchs() -> None:
    """The mask torch saves holds 0 and 1 / (1 - p) computed in the input's dtype."""
    for dt in ("float32", "float64"):
        masks = []
        for m in (gradviz, torch):
            x = m.ones(400, dtype=getattr(m, dt), requires_grad=True)
            out = m.nn.functional.dropout(x, 0.3)
            masks.append(sorted(set(out.grad_fn._saved_other.tolist())))
        assert masks[0] == masks[1], (dt, masks)


@pytest.mark.parametrize(("src", "dtype", "values"), RAND.VALUES, ids=[v[0] for v in RAND.VALUES])
def test_hard_coded_values_are_torchs(src: str, dtype: str, values: list) -> None:
    out = RAND.run(src, names=RAND._ns(torch))
    assert str(out.dtype).split(".")[-1] == dtype
    assert out.tolist() == values


@pytest.mark.parametrize(("src", "dtype", "shape"), RAND.DTYPES, ids=[d[0] for d in RAND.DTYPES])
def test_hard_coded_dtypes_are_torchs(src: str, dtype: str, shape: tuple) -> None:
    out = RAND.run(src, names=RAND._ns(torch))
    assert (str(out.dtype).split(".")[-1], tuple(out.shape)) == (dtype, shape)


@pytest.mark.parametrize(("src", "error", "message"), RAND.ERRORS, ids=[e[0] for e in RAND.ERRORS])
def test_hard_coded_errors_are_torchs(src: str, error: str, message: str) -> None:
    with pytest.raises(Exception) as info:
        RAND.run(src, names=RAND.error_names(torch))
    assert type(info.value).__name__ == error
    assert str(info.value).replace("torch.", "gradviz.") == message


@pytest.mark.parametrize(("src", "stat", "value", "tol"), RAND.MOMENTS,
                         ids=[f"{m[0]} {m[1]}" for m in RAND.MOMENTS])
def test_torchs_moments_match_the_same_expectations(src: str, stat: str, value: float,
                                                    tol: float) -> None:
    torch.manual_seed(0)
    out = RAND.run(src, names={"m": torch, "N": RAND.N})
    assert abs(RAND.statistic(out.numpy(), stat) - value) <= tol


# -- side by side on random float64 inputs -------------------------------------------------------
def _inputs(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"p": rng.uniform(0.05, 0.95, (3, 4)), "x": rng.uniform(-1, 1, (3, 4)),
            "s": rng.uniform(0.5, 2, (3, 4)), "v": rng.uniform(0.5, 2, (4,)),
            "r": rng.uniform(0.5, 5, (3, 4))}


SIDE_BY_SIDE = [
    "m.bernoulli(p)", "m.bernoulli(p, 0.25)", "m.normal(x, s)", "m.normal(x, v)",
    "m.normal(x, 0.5)", "m.normal(2.0, s)", "m.poisson(r)", "(x * 1).bernoulli_(p)",
    "(x * 1).exponential_(3.0)", "(x * 1).geometric_(0.4)", "(x * 1).cauchy_(0.5, 2.0)",
    "(x * 1).log_normal_(0.2, 0.3)", "(x * 1).uniform_(-2.0, 2.0)", "(x * 1).normal_(1.0, 3.0)",
    "(x * 1).random_(3, 9)", "m.dropout(x, 0.4, True)",
]


def _run_on(src: str, m: Any, arrays: dict[str, np.ndarray]) -> tuple:
    leaves = {k: m.tensor(v, dtype=m.float64, requires_grad=True) for k, v in arrays.items()}
    out = RAND.run(src, m, {"m": m, **leaves})
    return out, leaves


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("src", SIDE_BY_SIDE)
def test_side_by_side_with_torch(src: str, seed: int) -> None:
    """The same node, edges, saved values, dtype, shape, support of the samples and gradients
    (for bernoulli's NotImplemented node: the same error) on random float64 inputs."""
    arrays = _inputs(seed)
    gradviz.manual_seed(seed)
    torch.manual_seed(seed)
    (g, gl), (t, tl) = _run_on(src, gradviz, arrays), _run_on(src, torch, arrays)
    assert RAND.graph_of(g, gradviz)[:-1] == RAND.graph_of(t, torch)[:-1]
    assert tuple(g.shape) == tuple(t.shape)
    gv, tv = g.detach().numpy(), t.detach().numpy()
    assert np.isfinite(gv).all() == np.isfinite(tv).all()
    # integer-valued draws stay integers; bounded ones stay inside their bounds
    for stat in ("min", "max") if "uniform_" in src or "random_" in src else ():
        lo, hi = (-2.0, 2.0) if "uniform_" in src else (3, 8)
        assert lo <= RAND.statistic(gv, stat) <= hi and lo <= RAND.statistic(tv, stat) <= hi
    if any(k in src for k in ("bernoulli", "poisson", "geometric", "random_")):
        assert np.array_equal(gv, np.round(gv)) and np.array_equal(tv, np.round(tv))
    g_err = t_err = None
    try:
        g.sum().backward()
    except RuntimeError as e:
        g_err = str(e)
    try:
        t.sum().backward()
    except RuntimeError as e:
        t_err = str(e)
    assert g_err == t_err
    if g_err is None:
        for k in arrays:
            gg, tg = gl[k].grad, tl[k].grad
            assert (gg is None) == (tg is None), k
            if gg is not None and "dropout" not in src:
                np.testing.assert_array_equal(gg.numpy(), tg.numpy())


def test_dropout_gradient_is_the_mask_in_both() -> None:
    for m in (gradviz, torch):
        m.manual_seed(0)
        x = m.ones(200, dtype=m.float64, requires_grad=True)
        y = m.dropout(x, 0.4, True)
        mask = y.grad_fn._saved_other.detach().numpy().copy()
        y.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), mask)
