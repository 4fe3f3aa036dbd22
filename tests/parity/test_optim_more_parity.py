"""Adagrad, Adadelta, Adamax, NAdam and RAdam against torch.optim: same problem, same
hyperparameters, 20 steps; parameters and state to rtol 1e-12 in float64, the state_dict layout,
the groups' hyperparameters and the error texts.

The hard-coded expectations of tests/test_optim_more.py are derived again from torch here.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from _parity import sibling

import gradviz

RNG = np.random.default_rng(4321)
W0 = RNG.standard_normal((3, 4))
B0 = RNG.standard_normal(3)
XS = RNG.standard_normal((5, 4))
YS = RNG.standard_normal((5, 3))
STEPS = 20

CASES = [
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.2, lr_decay=0.05, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.3, eps=1e-6, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8)),
    ("Adadelta", dict(lr=2.0, rho=0.95, eps=1e-4, weight_decay=0.05, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.05)),
    ("Adamax", dict(lr=0.1, betas=(0.8, 0.9), eps=1e-5, weight_decay=0.1)),
    ("Adamax", dict(lr=0.05, betas=(0.3, 0.99), maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.05)),
    ("NAdam", dict(lr=0.05, betas=(0.8, 0.95), momentum_decay=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.05, weight_decay=0.2, decoupled_weight_decay=True, maximize=True)),
    ("NAdam", dict(lr=0.05, betas=(0.3, 0.9), eps=1e-4)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.05)),
    ("RAdam", dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1)),  # rho_t > 5 from step 6
    ("RAdam", dict(lr=0.05, betas=(0.5, 0.7), weight_decay=0.2, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.05, betas=(0.9, 0.6), eps=1e-4, maximize=True)),  # rho_inf < 5: never
]


def _ids(case: tuple) -> str:
    name, kwargs = case
    return name + "(" + ",".join(f"{k}={v}" for k, v in kwargs.items()) + ")"


def _run(lib, name: str, kwargs: dict, dtype_name: str, groups: bool = False):  # noqa: ANN001, ANN202
    """Train the same tiny linear model in ``lib`` (torch or gradviz); return params + state."""
    dtype = getattr(lib, dtype_name)
    W = lib.tensor(W0, dtype=dtype, requires_grad=True)
    b = lib.tensor(B0, dtype=dtype, requires_grad=True)
    x, y = lib.tensor(XS, dtype=dtype), lib.tensor(YS, dtype=dtype)
    lr = kwargs.get("lr", 0.01)
    params = [{"params": [W]}, {"params": [b], "lr": lr / 2}] if groups else [W, b]
    opt = getattr(lib.optim, name)(params, **kwargs)
    history = []
    for _ in range(STEPS):
        opt.zero_grad()
        r = x @ W.t() + b - y
        loss = (r * r).mean() + (W * W * W * W).sum() * 0.01
        loss.backward()
        opt.step()
        history.append([W.detach().numpy().copy(), b.detach().numpy().copy()])
    state = {k: {n: (v.detach().numpy().copy() if hasattr(v, "numpy") else v)
                 for n, v in s.items()} for k, s in opt.state_dict()["state"].items()}
    return history, state, opt


@pytest.mark.parametrize("case", CASES, ids=_ids)
@pytest.mark.parametrize("groups", [False, True], ids=["one-group", "two-groups"])
def test_updates_match_torch_in_float64(case: tuple, groups: bool) -> None:
    name, kwargs = case
    got, got_state, _ = _run(gradviz, name, kwargs, "float64", groups)
    want, want_state, _ = _run(torch, name, kwargs, "float64", groups)
    for step, (g_params, w_params) in enumerate(zip(got, want, strict=True)):
        for g, w in zip(g_params, w_params, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14, err_msg=f"step {step + 1}")
    assert got_state.keys() == want_state.keys()
    for k in want_state:
        assert list(got_state[k]) == list(want_state[k])  # same keys, same order
        for n in want_state[k]:
            assert got_state[k][n].dtype == want_state[k][n].dtype, n
            np.testing.assert_allclose(got_state[k][n], want_state[k][n], rtol=1e-12,
                                       atol=1e-14, err_msg=n)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_updates_match_torch_in_float32(case: tuple) -> None:
    name, kwargs = case
    got, got_state, _ = _run(gradviz, name, kwargs, "float32")
    want, want_state, _ = _run(torch, name, kwargs, "float32")
    for g, w in zip(got[-1], want[-1], strict=True):
        assert g.dtype == w.dtype == np.float32
        # float32 matmuls round differently in NumPy and torch; after 20 steps (some of them
        # maximizing, so the weights grow) an entry near 0 differs by a few float32 ulps of
        # the tensor's largest entry, hence an absolute tolerance on that scale.
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6 * max(1.0, np.abs(w).max()))
    for k in want_state:
        for n in want_state[k]:
            assert got_state[k][n].dtype == want_state[k][n].dtype, n


@pytest.mark.parametrize("name", ["Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"])
def test_defaults_groups_and_state_dict_layout_match_torch(name: str) -> None:
    _, _, ours = _run(gradviz, name, {}, "float64", groups=True)
    _, _, theirs = _run(torch, name, {}, "float64", groups=True)
    # every key torch writes, foreach/fused/capturable/differentiable too, in torch's order
    assert list(ours.defaults.items()) == list(theirs.defaults.items())
    sd, tsd = ours.state_dict(), theirs.state_dict()
    assert sd.keys() == tsd.keys()
    for g, tg in zip(sd["param_groups"], tsd["param_groups"], strict=True):
        assert list(g.items()) == list(tg.items())
    assert {k: list(v) for k, v in sd["state"].items()} == {
        k: list(v) for k, v in tsd["state"].items()}


def test_adagrad_state_exists_before_the_first_step_like_torch() -> None:
    def run(lib):  # noqa: ANN001, ANN202
        a = lib.tensor(W0, dtype=lib.float64, requires_grad=True)
        b = lib.tensor(B0, dtype=lib.float64, requires_grad=True)
        opt = lib.optim.Adagrad([{"params": [a]},
                                 {"params": [b], "initial_accumulator_value": 5.0}],
                                initial_accumulator_value=0.5)
        c = lib.ones(2, dtype=lib.float64, requires_grad=True)
        opt.add_param_group({"params": [c]})  # no state until its first step
        before = {k: {n: v.numpy().tolist() for n, v in s.items()}
                  for k, s in opt.state_dict()["state"].items()}
        (c * c).sum().backward()
        opt.step()
        after = {k: {n: v.numpy().tolist() for n, v in s.items()}
                 for k, s in opt.state_dict()["state"].items()}
        return before, after, c.detach().numpy().tolist()

    assert run(gradviz) == run(torch)


def test_load_state_dict_continues_like_torch() -> None:
    """Save after 5 steps, load into a fresh optimizer, take 5 more: same as 10 in torch."""
    def run(lib, name: str):  # noqa: ANN001, ANN202
        W = lib.tensor(W0, dtype=lib.float64, requires_grad=True)
        x, y = lib.tensor(XS, dtype=lib.float64), lib.tensor(YS[:, 0], dtype=lib.float64)
        opt = getattr(lib.optim, name)([W], lr=0.05)
        for i in range(10):
            if i == 5:
                saved = opt.state_dict()
                opt = getattr(lib.optim, name)([W], lr=0.5)
                opt.load_state_dict(saved)
            opt.zero_grad()
            (((x @ W.t()).sum(1) - y) ** 2).mean().backward()
            opt.step()
        return W.detach().numpy().copy()

    for name in ("Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"):
        np.testing.assert_allclose(run(gradviz, name), run(torch, name), rtol=1e-12, atol=0,
                                   err_msg=name)


def test_error_texts_match_torch() -> None:
    def message(fn) -> str:  # noqa: ANN001
        with warnings.catch_warnings(), pytest.raises(Exception) as info:
            warnings.simplefilter("ignore")
            fn()
        return f"{type(info.value).__name__}: {info.value}"

    for make in (
        lambda lib, p: lib.optim.Adagrad([p], lr=-0.1),
        lambda lib, p: lib.optim.Adagrad([p], lr_decay=-0.1),
        lambda lib, p: lib.optim.Adagrad([p], weight_decay=-0.1),
        lambda lib, p: lib.optim.Adagrad([p], initial_accumulator_value=-0.1),
        lambda lib, p: lib.optim.Adagrad([p], eps=-0.1),
        lambda lib, p: lib.optim.Adagrad([], lr=0.1),
        lambda lib, p: lib.optim.Adadelta([p], lr=-0.1),
        lambda lib, p: lib.optim.Adadelta([p], rho=1.5),
        lambda lib, p: lib.optim.Adadelta([p], rho=-0.5),
        lambda lib, p: lib.optim.Adadelta([p], eps=-0.1),
        lambda lib, p: lib.optim.Adadelta([p], weight_decay=-0.1),
        lambda lib, p: lib.optim.Adamax([p], lr=-0.1),
        lambda lib, p: lib.optim.Adamax([p], eps=-0.1),
        lambda lib, p: lib.optim.Adamax([p], betas=(1.0, 0.9)),
        lambda lib, p: lib.optim.Adamax([p], betas=(0.9, -0.9)),
        lambda lib, p: lib.optim.Adamax([p], weight_decay=-0.1),
        lambda lib, p: lib.optim.NAdam([p], lr=-0.1),
        lambda lib, p: lib.optim.NAdam([p], eps=-0.1),
        lambda lib, p: lib.optim.NAdam([p], betas=(-0.1, 0.9)),
        lambda lib, p: lib.optim.NAdam([p], betas=(0.9, 1.0)),
        lambda lib, p: lib.optim.NAdam([p], weight_decay=-0.1),
        lambda lib, p: lib.optim.NAdam([p], momentum_decay=-0.1),
        lambda lib, p: lib.optim.RAdam([p], lr=-0.1),
        lambda lib, p: lib.optim.RAdam([p], eps=-0.1),
        lambda lib, p: lib.optim.RAdam([p], betas=(1.5, 0.9)),
        lambda lib, p: lib.optim.RAdam([p], betas=(0.9, 1.5)),
        lambda lib, p: lib.optim.RAdam([p], weight_decay=-0.1),
        lambda lib, p: lib.optim.RAdam([p * 2]),
        lambda lib, p: lib.optim.NAdam([p], lr=lib.tensor([0.1, 0.2])),
    ):
        ours = message(lambda make=make: make(gradviz, gradviz.ones(2, requires_grad=True)))
        theirs = message(lambda make=make: make(torch, torch.ones(2, requires_grad=True)))
        assert ours == theirs


def test_schedulers_drive_the_new_optimizers_like_torch() -> None:
    """OneCycleLR cycles beta1 of the Adam family; a plain schedule drives Adagrad/Adadelta."""
    def run(lib, name: str, make_sched):  # noqa: ANN001, ANN202
        W = lib.tensor(W0, dtype=lib.float64, requires_grad=True)
        x, y = lib.tensor(XS, dtype=lib.float64), lib.tensor(YS[:, 0], dtype=lib.float64)
        opt = getattr(lib.optim, name)([W])
        sched = make_sched(lib.optim.lr_scheduler, opt)
        out = []
        for _ in range(12):
            opt.zero_grad()
            (((x @ W.t()).sum(1) - y) ** 2).mean().backward()
            opt.step()
            sched.step()
            out.append((sched.get_last_lr(), opt.param_groups[0].get("betas")))
        return out, W.detach().numpy().copy()

    for name in ("Adamax", "NAdam", "RAdam"):
        def one_cycle(s, opt):  # noqa: ANN001, ANN202
            return s.OneCycleLR(opt, max_lr=0.1, total_steps=12)
        ours, W = run(gradviz, name, one_cycle)
        theirs, t_W = run(torch, name, one_cycle)
        assert ours == theirs, name
        np.testing.assert_allclose(W, t_W, rtol=1e-12, atol=0, err_msg=name)
    for name in ("Adagrad", "Adadelta"):
        def cosine(s, opt):  # noqa: ANN001, ANN202
            return s.CosineAnnealingLR(opt, T_max=5)
        ours, W = run(gradviz, name, cosine)
        theirs, t_W = run(torch, name, cosine)
        assert ours == theirs, name
        np.testing.assert_allclose(W, t_W, rtol=1e-12, atol=0, err_msg=name)


# -- tests/test_optim_more.py's hard-coded expectations are torch's -------------------------------
MORE = sibling("test_optim_more")


@pytest.mark.parametrize("row", MORE.TORCH_RUNS, ids=[f"{r[0]}{r[1]}" for r in MORE.TORCH_RUNS])
def test_hard_coded_runs_are_torchs(row: tuple) -> None:
    assert MORE.run_row(torch, row) == row


@pytest.mark.parametrize("name", MORE.NAMES)
def test_hard_coded_defaults_and_state_keys_are_torchs(name: str) -> None:
    p = torch.zeros(2, requires_grad=True)
    opt = getattr(torch.optim, name)([p])
    assert list(opt.defaults.items()) == list(MORE.TORCH_DEFAULTS[name].items())
    p.sum().backward()
    opt.step()
    assert list(opt.state[p]) == MORE.STATE_KEYS[name]
