"""gradviz.optim against torch.optim: same problem, same hyperparameters, same numbers.

torch is imported inside the tests (collection works without it; see conftest.py for how a
missing torch is handled).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradviz
from gradviz import optim

RNG = np.random.default_rng(1234)
W0 = RNG.standard_normal((3, 4))
B0 = RNG.standard_normal(3)
XS = RNG.standard_normal((5, 4))
YS = RNG.standard_normal((5, 3))
STEPS = 8

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.2)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.05, momentum=0.5, weight_decay=0.1, nesterov=True)),
    ("SGD", dict(lr=0.02, momentum=0.7, weight_decay=0.01, maximize=True)),
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.95), eps=1e-6)),
    ("Adam", dict(lr=0.1, weight_decay=0.1)),
    ("Adam", dict(lr=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.1, weight_decay=0.05, amsgrad=True, maximize=True)),
    ("Adam", dict(lr=0.1, betas=(0.3, 0.9))),
    ("Adam", dict(lr=0.1, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.1)),
    ("AdamW", dict(lr=0.05, weight_decay=0.3, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.02, alpha=0.9, centered=True, maximize=True, eps=1e-6)),
]


def _ids(case: tuple) -> str:
    name, kwargs = case
    return name + "(" + ",".join(f"{k}={v}" for k, v in kwargs.items()) + ")"


def _run(lib, opt_cls, kwargs: dict, dtype_name: str, groups: bool = False):  # noqa: ANN001, ANN202
    """Train the same tiny linear model in ``lib`` (torch or gradviz); return params + state."""
    dtype = getattr(lib, dtype_name)
    W = lib.tensor(W0, dtype=dtype, requires_grad=True)
    b = lib.tensor(B0, dtype=dtype, requires_grad=True)
    x, y = lib.tensor(XS, dtype=dtype), lib.tensor(YS, dtype=dtype)
    params = [{"params": [W]}, {"params": [b], "lr": kwargs["lr"] / 2}] if groups else [W, b]
    opt = opt_cls(params, **kwargs)
    for _ in range(STEPS):
        opt.zero_grad()
        r = x @ W.t() + b - y
        loss = (r * r).mean() + (W * W * W * W).sum() * 0.01
        loss.backward()
        opt.step()
    state = {k: {n: (v.detach().numpy().copy() if hasattr(v, "numpy") else v)
                 for n, v in s.items()} for k, s in opt.state_dict()["state"].items()}
    return [W.detach().numpy().copy(), b.detach().numpy().copy()], state, opt


@pytest.mark.parametrize("case", CASES, ids=_ids)
@pytest.mark.parametrize("groups", [False, True], ids=["one-group", "two-groups"])
def test_updates_match_torch_in_float64(case: tuple, groups: bool) -> None:
    import torch

    name, kwargs = case
    got, got_state, _ = _run(gradviz, getattr(optim, name), kwargs, "float64", groups)
    want, want_state, _ = _run(torch, getattr(torch.optim, name), kwargs, "float64", groups)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-12)
    assert got_state.keys() == want_state.keys()
    for k in want_state:
        assert got_state[k].keys() == want_state[k].keys()
        for n in want_state[k]:
            np.testing.assert_allclose(got_state[k][n], want_state[k][n], rtol=0, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_updates_match_torch_in_float32(case: tuple) -> None:
    import torch

    name, kwargs = case
    got, _, _ = _run(gradviz, getattr(optim, name), kwargs, "float32")
    want, _, _ = _run(torch, getattr(torch.optim, name), kwargs, "float32")
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_state_dict_layout_matches_torch() -> None:
    import torch

    for name, kwargs in (("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.1))):
        _, _, ours = _run(gradviz, getattr(optim, name), kwargs, "float64", groups=True)
        _, _, theirs = _run(torch, getattr(torch.optim, name), kwargs, "float64", groups=True)
        sd, tsd = ours.state_dict(), theirs.state_dict()
        assert sd.keys() == tsd.keys()
        assert [g["params"] for g in sd["param_groups"]] == [g["params"] for g in
                                                             tsd["param_groups"]]
        for g, tg in zip(sd["param_groups"], tsd["param_groups"], strict=True):
            # gradviz keeps only the hyperparameters it implements (no foreach/fused/...).
            assert {k: tg[k] for k in g} == g
        assert {k: sorted(v) for k, v in sd["state"].items()} == {
            k: sorted(v) for k, v in tsd["state"].items()}


def test_error_texts_match_torch() -> None:
    import torch

    def message(fn) -> str:  # noqa: ANN001
        with warnings.catch_warnings(), pytest.raises(Exception) as info:
            warnings.simplefilter("ignore")  # the duplicate-parameter warning, in both
            fn()
        return f"{type(info.value).__name__}: {info.value}"

    for make in (
        lambda lib, p: lib.optim.SGD([], lr=0.1),
        lambda lib, p: lib.optim.SGD([p], lr=-0.5),
        lambda lib, p: lib.optim.SGD([p], lr=0.1, momentum=-1.0),
        lambda lib, p: lib.optim.SGD([p], lr=0.1, weight_decay=-1.0),
        lambda lib, p: lib.optim.SGD([p], lr=0.1, nesterov=True),
        lambda lib, p: lib.optim.Adam([p], lr=-1.0),
        lambda lib, p: lib.optim.Adam([p], eps=-1.0),
        lambda lib, p: lib.optim.Adam([p], betas=(1.0, 0.9)),
        lambda lib, p: lib.optim.Adam([p], betas=(0.9, -0.1)),
        lambda lib, p: lib.optim.AdamW([p], weight_decay=-1.0),
        lambda lib, p: lib.optim.SGD([p * 2], lr=0.1),
        lambda lib, p: lib.optim.SGD([p, p], lr=0.1).add_param_group({"params": [p]}),
    ):
        ours = message(lambda make=make: make(gradviz, gradviz.ones(2, requires_grad=True)))
        theirs = message(lambda make=make: make(torch, torch.ones(2, requires_grad=True)))
        assert ours == theirs
