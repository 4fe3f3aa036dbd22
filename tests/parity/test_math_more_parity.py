"""The elementwise math ops against a live torch: the expectations hard-coded in
tests/test_ops_math_more.py derived again from torch, and values, gradients and second
derivatives of random programs compared with torch's.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch
from _parity import sibling

import gradviz

MATH = sibling("test_ops_math_more")


@pytest.mark.parametrize(("src", "dtype", "values"), MATH.VALUES, ids=[c[0] for c in MATH.VALUES])
def test_hard_coded_values_are_torchs(src: str, dtype: str, values: Any) -> None:
    out = MATH.run(src, torch)
    assert str(out.dtype)[len("torch."):] == dtype
    assert MATH.same_values(out.tolist(), values, "exact"), (out.tolist(), values)


@pytest.mark.parametrize(("src", "error", "message"), MATH.ERRORS, ids=[c[0] for c in MATH.ERRORS])
def test_hard_coded_errors_are_torchs(src: str, error: str, message: str) -> None:
    with pytest.raises(Exception) as info:
        MATH.run(src, torch)
    assert type(info.value).__name__ == error and str(info.value) == message


@pytest.mark.parametrize(("src", "node", "saved"), MATH.GRAPHS, ids=[c[0] for c in MATH.GRAPHS])
def test_hard_coded_graphs_are_torchs(src: str, node: str, saved: list[str]) -> None:
    fn = MATH.run(src, torch).grad_fn
    assert fn.name() == node
    assert sorted(a[len("_saved_"):] for a in dir(fn) if a.startswith("_saved_")) == saved


# -- random programs: values, gradients and second derivatives, float64 ---------------------------
# ``x``, ``y``, ``w``: leaves of shape (2, 3) in [-1, 1] (``y`` also as (3,) ``v``); ``p``, ``q``:
# positive leaves in [0.5, 2]; ``u``: in (0, 1).
PROGRAMS = [
    "m.floor(x) + m.ceil(y) + m.trunc(w) + m.round(x * 3)",
    "m.round(x, decimals=1) * y",
    "m.frac(x * 3)",
    "m.log2(p) + m.log10(q)",
    "m.exp2(x) * m.sinh(y) + m.cosh(w)",
    "m.tan(x) + m.asin(y * 0.9) + m.acos(w * 0.9) + m.atan(x * 3)",
    "m.asinh(x) + m.acosh(p + 1) + m.atanh(y * 0.9)",
    "m.logit(u) + m.logit(u, eps=0.3)",
    "m.nan_to_num(x / y)",
    "m.atan2(x, y) + m.arctan2(w, v)",
    "m.hypot(x, y) + m.hypot(w, v)",
    "m.fmod(x * 3, p) + m.fmod(y, 0.3)",
    "m.fmax(x, y) + m.fmin(w, v)",
    "m.xlogy(x, p) + m.xlogy(y, 2.5) + m.xlogy(1.5, q)",
    "m.lerp(x, y, 0.3) + m.lerp(w, v, 0.8) + m.lerp(x, y, u)",
    "m.addcmul(x, y, w, value=0.5) + m.addcmul(x, v, w)",
    "m.addcdiv(x, y, p, value=2) + m.addcdiv(w, v, q)",
    "(x * 1).tan_() + (y * 1).xlogy_(p) + (w * 1).lerp_(x, u) + (x * 1).addcmul_(y, w)",
    "(u * 1).logit_(0.1) * (x * 1).fmod_(0.4) + (y * 1).atan2_(w) + (p * 1).log2_()",
]


def _leaves(m: Any, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    arrays = {"x": rng.uniform(-1, 1, (2, 3)), "y": rng.uniform(-1, 1, (2, 3)),
              "w": rng.uniform(-1, 1, (2, 3)), "v": rng.uniform(-1, 1, 3),
              "p": rng.uniform(0.5, 2, (2, 3)), "q": rng.uniform(0.5, 2, (2, 3)),
              "u": rng.uniform(0.05, 0.95, (2, 3))}
    return {k: m.tensor(a, dtype=m.float64, requires_grad=True) for k, a in arrays.items()}


def _run(m: Any, src: str, seed: int) -> tuple[Any, dict[str, Any], Any]:
    leaves = _leaves(m, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = eval(src, {"m": m, **leaves})  # noqa: S307 - PROGRAMS above
    return out, leaves, out.detach().numpy()


@pytest.mark.parametrize("src", PROGRAMS)
@pytest.mark.parametrize("seed", [0, 1])
def test_program_values_gradients_and_second_derivatives(src: str, seed: int) -> None:
    results = []
    for m in (gradviz, torch):
        out, leaves, value = _run(m, src, seed)
        names = sorted(leaves)
        grads = m.autograd.grad((out * out).sum(), [leaves[k] for k in names], create_graph=True,
                                allow_unused=True)
        # A second derivative: the gradient of the sum of the first ones (where they depend on
        # the leaves; a rounding op's zero gradient does not).
        first = [g for g in grads if g is not None and g.requires_grad]
        second = [None] * len(names)
        if first:
            second = m.autograd.grad(sum(g.sum() for g in first), [leaves[k] for k in names],
                                     allow_unused=True)
        results.append((value, [None if g is None else g.detach().numpy() for g in grads],
                        [None if g is None else g.numpy() for g in second]))
    (gv, gg, gs), (tv, tg, ts) = results
    np.testing.assert_allclose(gv, tv, rtol=1e-12, atol=1e-12)
    for a, b in zip(gg + gs, tg + ts, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["log2", "log10", "exp2", "sinh", "cosh", "tan", "asin", "acos",
                                  "atan", "asinh", "atanh", "frac", "floor", "round"])
def test_unary_values_close_to_torch_on_many_points(name: str, dtype: str) -> None:
    rng = np.random.default_rng(7)
    a = rng.uniform(-3, 3, 10000)
    if name in ("log2", "log10"):
        a = np.abs(a) + 0.01
    if name in ("asin", "acos", "atanh"):
        a = a / 3.01
    ours = getattr(gradviz, name)(gradviz.tensor(a, dtype=getattr(gradviz, dtype))).numpy()
    theirs = getattr(torch, name)(torch.tensor(a, dtype=getattr(torch, dtype))).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=MATH._ULPS[dtype], atol=0)
