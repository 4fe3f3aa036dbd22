"""LBFGS, Rprop, ASGD and PolynomialLR, CyclicLR, CosineAnnealingWarmRestarts against torch:
the optimizers on the same problems for 20 steps (Rprop bit for bit, ASGD and LBFGS to 1e-12 in
float64: torch's CPU kernels fuse ``p + alpha * g`` into one rounding, NumPy rounds twice), their
state (names, order, kinds, values), state_dict layout and error texts; the schedulers for 50
steps, bit for bit, with their groups, state_dict, warnings and errors.

The hard-coded expectations of tests/test_optim_extra.py are derived again from torch here.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from _parity import sibling

import gradviz

EXTRA = sibling("test_optim_extra")

RNG = np.random.default_rng(2468)
W0 = RNG.standard_normal((3, 4))
B0 = RNG.standard_normal(3)
XS = RNG.standard_normal((5, 4))
YS = RNG.standard_normal((5, 3))
STEPS = 20

# LBFGS's cases stop short of the minimum (a small lr or few iterations per step): at the
# minimum its history holds differences of nearly equal gradients, noise in any two libraries.
CASES = [
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05)),
    ("Rprop", dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2))),
    ("Rprop", dict(lr=0.02, etas=(0.7, 1.1), maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.6, t0=5)),
    ("ASGD", dict(lr=0.05, t0=0, weight_decay=0.1)),
    ("ASGD", dict(lr=0.01, lambd=0.1, t0=3, maximize=True)),
    ("LBFGS", dict(lr=0.05, history_size=3, max_iter=3)),
    ("LBFGS", dict(lr=0.02, max_iter=2)),
    ("LBFGS", dict(lr=0.1, max_iter=4, history_size=5, max_eval=3)),
    ("LBFGS", dict(lr=0.02, max_iter=2, history_size=3, line_search_fn="strong_wolfe")),
    ("LBFGS", dict(lr=2, max_iter=2, history_size=2, line_search_fn="strong_wolfe")),  # zooms
]


def _ids(case: tuple) -> str:
    name, kwargs = case
    return name + "(" + ",".join(f"{k}={v}" for k, v in kwargs.items()) + ")"


def _run(lib, name: str, kwargs: dict, dtype_name: str = "float64", steps: int = STEPS):  # noqa: ANN001, ANN202
    """Train the same linear model (plus a quartic penalty) in ``lib`` with closures; return
    the losses, the parameters after each step and the optimizer."""
    dtype = getattr(lib, dtype_name)
    W = lib.tensor(W0, dtype=dtype, requires_grad=True)
    b = lib.tensor(B0, dtype=dtype, requires_grad=True)
    x, y = lib.tensor(XS, dtype=dtype), lib.tensor(YS, dtype=dtype)
    opt = getattr(lib.optim, name)([W, b], **kwargs)

    def closure():  # noqa: ANN202
        opt.zero_grad()
        r = x @ W.t() + b - y
        loss = (r * r).mean() + (W * W * W * W).sum() * 0.01
        loss.backward()
        return loss

    losses, history = [], []
    for _ in range(steps):
        losses.append(opt.step(closure).item())
        history.append([W.detach().numpy().copy(), b.detach().numpy().copy()])
    return losses, history, opt


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_updates_match_torch_in_float64(case: tuple) -> None:
    name, kwargs = case
    losses, got, opt = _run(gradviz, name, kwargs)
    t_losses, want, t_opt = _run(torch, name, kwargs)
    for step, (g_params, w_params) in enumerate(zip(got, want, strict=True)):
        for g, w in zip(g_params, w_params, strict=True):
            if name == "Rprop":  # sign-driven steps: torch's numbers to the last bit
                np.testing.assert_array_equal(g, w, err_msg=f"step {step + 1}")
            else:  # to 1e-12 of the tensor's scale
                np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12 * np.abs(w).max(),
                                           err_msg=f"step {step + 1}")
    np.testing.assert_allclose(losses, t_losses, rtol=1e-12)
    state = opt.state_dict()["state"]
    t_state = t_opt.state_dict()["state"]
    assert list(state) == list(t_state)
    for k in t_state:
        assert EXTRA.kinds(state[k]) == EXTRA.kinds(t_state[k])  # names, order, kinds
        for n, v in t_state[k].items():
            if isinstance(v, torch.Tensor):
                assert str(state[k][n].dtype).split(".")[-1] == str(v.dtype).split(".")[-1], n
        # after 20 steps LBFGS's history vectors (entries ~1e-3) agree to 1e-13
        EXTRA.assert_close_tree(EXTRA.plain(state[k]), EXTRA.plain(t_state[k]), atol=1e-13)


@pytest.mark.parametrize("name", ["LBFGS", "LBFGS-strong_wolfe"])
def test_lbfgs_reaches_torchs_minimum(name: str) -> None:
    """The defaults (20 iterations a step) run into the minimum: the parameters agree, the
    history near the minimum is rounding noise (not compared)."""
    kwargs = {"line_search_fn": "strong_wolfe"} if name.endswith("wolfe") else {}
    losses, got, opt = _run(gradviz, "LBFGS", kwargs, steps=5)
    t_losses, want, t_opt = _run(torch, "LBFGS", kwargs, steps=5)
    for g, w in zip(got[-1], want[-1], strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(losses, t_losses, rtol=1e-12)
    assert list(opt.state_dict()["state"][0]) == list(t_opt.state_dict()["state"][0])


def _mlp_run(lib, steps: int = 5):  # noqa: ANN001, ANN202
    """A small tanh network trained by LBFGS with the strong-Wolfe search."""
    rng = np.random.default_rng(11)
    shapes = [(6, 4), (6,), (3, 6), (3,)]
    ps = [lib.tensor(rng.standard_normal(s) * 0.5, dtype=lib.float64, requires_grad=True)
          for s in shapes]
    x = lib.tensor(rng.standard_normal((16, 4)), dtype=lib.float64)
    y = lib.tensor(rng.standard_normal((16, 3)), dtype=lib.float64)
    opt = lib.optim.LBFGS(ps, line_search_fn="strong_wolfe", history_size=4, max_iter=6)

    def closure():  # noqa: ANN202
        opt.zero_grad()
        h = (x @ ps[0].t() + ps[1]).tanh()
        loss = ((h @ ps[2].t() + ps[3] - y) ** 2).mean()
        loss.backward()
        return loss

    losses = [opt.step(closure).item() for _ in range(steps)]
    s = opt.state[ps[0]]
    return losses, [p.detach().numpy().copy() for p in ps], s["func_evals"], s["n_iter"]


def test_lbfgs_trains_a_small_network_like_torch() -> None:
    losses, params, evals, iters = _mlp_run(gradviz)
    t_losses, t_params, t_evals, t_iters = _mlp_run(torch)
    assert (evals, iters) == (t_evals, t_iters)
    np.testing.assert_allclose(losses, t_losses, rtol=1e-12)
    for g, w in zip(params, t_params, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_updates_match_torch_in_float32(case: tuple) -> None:
    name, kwargs = case
    _, got, opt = _run(gradviz, name, kwargs, "float32", steps=5)
    _, want, t_opt = _run(torch, name, kwargs, "float32", steps=5)
    for g, w in zip(got[-1], want[-1], strict=True):
        assert g.dtype == w.dtype == np.float32
        if kwargs.get("line_search_fn"):
            # The line search interpolates a cubic through losses that differ by a float32
            # ulp between the libraries (their matmuls sum in different orders); f1 - f2 of
            # nearly equal losses then picks a different trial step: only dtypes compare.
            continue
        # float32 matmuls and dot products sum in different orders in NumPy and torch
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5 * max(1.0, np.abs(w).max()))
    state, t_state = opt.state_dict()["state"], t_opt.state_dict()["state"]
    for k in t_state:
        assert EXTRA.kinds(state[k]) == EXTRA.kinds(t_state[k])
        for n, v in t_state[k].items():
            if isinstance(v, torch.Tensor):
                assert str(state[k][n].dtype).split(".")[-1] == str(v.dtype).split(".")[-1], n


@pytest.mark.parametrize("name", ["LBFGS", "Rprop", "ASGD"])
def test_defaults_groups_and_state_dict_layout_match_torch(name: str) -> None:
    _, _, ours = _run(gradviz, name, {}, steps=2)
    _, _, theirs = _run(torch, name, {}, steps=2)
    assert list(ours.defaults.items()) == list(theirs.defaults.items())
    sd, tsd = ours.state_dict(), theirs.state_dict()
    for g, tg in zip(sd["param_groups"], tsd["param_groups"], strict=True):
        assert list(g.items()) == list(tg.items())
    assert {k: list(v) for k, v in sd["state"].items()} == {
        k: list(v) for k, v in tsd["state"].items()}


@pytest.mark.parametrize("name,kwargs", [("Rprop", {"lr": 0.05}), ("ASGD", {"lr": 0.05, "t0": 3}),
                                         ("LBFGS", {"lr": 0.05, "max_iter": 3,
                                                    "history_size": 4})])
def test_load_state_dict_continues_like_torch(name: str, kwargs: dict) -> None:
    """Save after 4 steps, load into a fresh optimizer, take 4 more: as 8 steps in torch."""
    def run(lib):  # noqa: ANN001, ANN202
        W = lib.tensor(W0, dtype=lib.float64, requires_grad=True)
        x, y = lib.tensor(XS, dtype=lib.float64), lib.tensor(YS[:, 0], dtype=lib.float64)
        opt = getattr(lib.optim, name)([W], **kwargs)
        for i in range(8):
            if i == 4:
                saved = opt.state_dict()
                opt = getattr(lib.optim, name)([W], lr=0.5)
                opt.load_state_dict(saved)

            def closure(opt=opt):  # noqa: ANN001, ANN202
                opt.zero_grad()
                loss = (((x @ W.t()).sum(1) - y) ** 2).mean()
                loss.backward()
                return loss

            opt.step(closure)
        return W.detach().numpy().copy()

    np.testing.assert_allclose(run(gradviz), run(torch), rtol=1e-12, atol=0)


def _message(fn) -> str:  # noqa: ANN001
    with warnings.catch_warnings(), pytest.raises(Exception) as info:
        warnings.simplefilter("ignore")
        fn()
    return f"{type(info.value).__name__}: {info.value}"


def test_optimizer_error_texts_match_torch() -> None:
    def lbfgs_groups(lib, p):  # noqa: ANN001, ANN202
        return lib.optim.LBFGS([{"params": [p]}, {"params": [lib.ones(1, requires_grad=True)]}])

    def lbfgs_no_closure(lib, p):  # noqa: ANN001, ANN202
        return lib.optim.LBFGS([p]).step()

    def lbfgs_bad_search(lib, p):  # noqa: ANN001, ANN202
        opt = lib.optim.LBFGS([p], line_search_fn="backtracking")

        def closure():  # noqa: ANN202
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss

        return opt.step(closure)

    makers = [m for m, _, _ in EXTRA.BAD_OPTIMIZERS] + [
        lbfgs_groups, lbfgs_no_closure, lbfgs_bad_search,
        lambda lib, p: lib.optim.Rprop([p], etas=(0.0, 1.2)),
        lambda lib, p: lib.optim.Rprop([p], etas=(0.5, 1.0)),
        lambda lib, p: lib.optim.ASGD([p], lr=lib.tensor([0.1, 0.2])),
    ]
    for make in makers:
        ours = _message(lambda make=make: make(gradviz, gradviz.ones(2, requires_grad=True)))
        theirs = _message(lambda make=make: make(torch, torch.ones(2, requires_grad=True)))
        assert ours == theirs


# -- schedulers ------------------------------------------------------------------------------------
SCHED_STEPS = 50


class _Decay:
    """A callable scale_fn object (its __dict__ goes into CyclicLR's state_dict)."""

    def __init__(self) -> None:
        self.rate = 0.8

    def __call__(self, x: float) -> float:
        return self.rate**x


def _sched(name: str, **kwargs):  # noqa: ANN202
    return lambda lib, opt: getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)


def _sgd(lib, params):  # noqa: ANN001, ANN202
    return lib.optim.SGD(params, lr=0.1, momentum=0.9)


def _adam(lib, params):  # noqa: ANN001, ANN202
    return lib.optim.Adam(params, lr=0.05)


SCHED_CASES = [
    ("PolynomialLR", _sgd, _sched("PolynomialLR", total_iters=30, power=2.0)),
    ("PolynomialLR-defaults", _adam, _sched("PolynomialLR")),
    ("PolynomialLR-sqrt", _sgd, _sched("PolynomialLR", total_iters=7, power=0.5)),
    ("CyclicLR", _sgd, _sched("CyclicLR", base_lr=0.01, max_lr=0.1, step_size_up=4)),
    ("CyclicLR-triangular2", _sgd, _sched("CyclicLR", base_lr=[0.01, 0.002], max_lr=[0.1, 0.05],
                                          step_size_up=3, step_size_down=5,
                                          mode="triangular2")),
    ("CyclicLR-exp_range-adam", _adam, _sched("CyclicLR", base_lr=0.001, max_lr=0.1,
                                              step_size_up=5, mode="exp_range", gamma=0.97,
                                              base_momentum=0.85, max_momentum=0.95)),
    ("CyclicLR-no-momentum", _sgd, _sched("CyclicLR", base_lr=0.001, max_lr=0.1,
                                          step_size_up=6, cycle_momentum=False)),
    ("CyclicLR-lambda", _sgd, _sched("CyclicLR", base_lr=0.001, max_lr=0.1, step_size_up=2,
                                     scale_fn=lambda x: 1 / (x + 1))),
    ("CyclicLR-object-iterations", _sgd, _sched("CyclicLR", base_lr=0.001, max_lr=0.1,
                                                step_size_up=2, scale_fn=_Decay(),
                                                scale_mode="iterations")),
    ("CosineAnnealingWarmRestarts", _sgd, _sched("CosineAnnealingWarmRestarts", T_0=5)),
    ("CosineAnnealingWarmRestarts-T_mult", _adam, _sched("CosineAnnealingWarmRestarts", T_0=3,
                                                         T_mult=2, eta_min=0.001)),
]


def _sched_run(lib, make_opt, make_sched):  # noqa: ANN001, ANN202
    """SCHED_STEPS training steps of two groups with the scheduler stepping after each."""
    dtype = lib.float64
    W = lib.tensor(W0, dtype=dtype, requires_grad=True)
    b = lib.tensor(B0, dtype=dtype, requires_grad=True)
    x, y = lib.tensor(XS, dtype=dtype), lib.tensor(YS, dtype=dtype)
    opt = make_opt(lib, [{"params": [W]}, {"params": [b], "lr": 0.02}])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sched = make_sched(lib, opt)
        lrs = [list(sched.get_last_lr())]
        groups = []
        for _ in range(SCHED_STEPS):
            opt.zero_grad()
            r = x @ W.t() + b - y
            ((r * r).mean() + (W * W * W * W).sum() * 0.01).backward()
            opt.step()
            sched.step()
            lrs.append(list(sched.get_last_lr()))
            groups.append([{k: v for k, v in g.items() if k != "params"}
                           for g in opt.param_groups])
    messages = [(w.category.__name__, str(w.message)) for w in caught]
    return lrs, [W.detach().numpy().copy(), b.detach().numpy().copy()], groups, sched, messages


@pytest.mark.parametrize("case", SCHED_CASES, ids=[c[0] for c in SCHED_CASES])
def test_schedules_match_torch(case: tuple) -> None:
    _, make_opt, make_sched = case
    lrs, params, groups, sched, messages = _sched_run(gradviz, make_opt, make_sched)
    t_lrs, t_params, t_groups, t_sched, t_messages = _sched_run(torch, make_opt, make_sched)
    assert lrs == t_lrs  # the same floats, bit for bit
    for ours, theirs in zip(params, t_params, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0)
    for ours, theirs in zip(groups, t_groups, strict=True):
        assert [{k: t[k] for k in g} for g, t in zip(ours, theirs, strict=True)] == ours
    assert sched.state_dict() == t_sched.state_dict()
    assert messages == t_messages == []
    assert sched.last_epoch == t_sched.last_epoch


@pytest.mark.parametrize("case", SCHED_CASES, ids=[c[0] for c in SCHED_CASES])
def test_state_dict_round_trip_resumes_like_torch(case: tuple) -> None:
    """Stop after 7 steps, load the state into a fresh scheduler, continue: same rates."""
    _, make_opt, make_sched = case

    def resumed(lib):  # noqa: ANN001, ANN202
        def fresh():  # noqa: ANN202
            ps = [lib.tensor(W0, requires_grad=True), lib.tensor(B0, requires_grad=True)]
            opt = make_opt(lib, [{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.02}])
            return opt, make_sched(lib, opt)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # stepping without optimizer.step(): same in both
            opt, sched = fresh()
            for _ in range(7):
                sched.step()
            saved_sched, saved_opt = sched.state_dict(), opt.state_dict()
            opt2, sched2 = fresh()
            opt2.load_state_dict(saved_opt)
            sched2.load_state_dict(saved_sched)
            out = []
            for _ in range(8):
                sched2.step()
                out.append((list(sched2.get_last_lr()),
                            opt2.param_groups[0].get("momentum", opt2.param_groups[0].get(
                                "betas"))))
        return out

    assert resumed(gradviz) == resumed(torch)


def test_warm_restarts_with_random_fractional_epochs_match_torch() -> None:
    epochs = np.round(np.sort(RNG.uniform(0, 40, SCHED_STEPS)), 3).tolist()

    def run(lib, t_mult: int):  # noqa: ANN001, ANN202
        opt = _sgd(lib, [lib.zeros(2, requires_grad=True)])
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=t_mult,
                                                                   eta_min=0.005)
        out = []
        for i, epoch in enumerate(epochs):
            opt.step()
            sched.step(epoch if i % 4 else None)  # mixed with plain steps
            out.append((sched.get_last_lr(), sched.T_cur, sched.T_i, sched.last_epoch))
        return out, sched.state_dict()

    for t_mult in (1, 2, 3):
        assert run(gradviz, t_mult) == run(torch, t_mult)


def test_resuming_with_last_epoch_matches_torch() -> None:
    def run(lib):  # noqa: ANN001, ANN202
        out = []
        s = lib.optim.lr_scheduler
        for make in (lambda o: s.PolynomialLR(o, total_iters=8, power=2.0, last_epoch=3),
                     lambda o: s.CyclicLR(o, 0.01, 0.1, step_size_up=3, last_epoch=4),
                     lambda o: s.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, last_epoch=4)):
            opt = _sgd(lib, [lib.zeros(2, requires_grad=True)])
            for g in opt.param_groups:
                g["initial_lr"] = 0.2
                g["max_momentum"], g["base_momentum"] = 0.95, 0.85
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sched = make(opt)
                lrs = [list(sched.get_last_lr())]
                for _ in range(6):
                    sched.step()
                    lrs.append(list(sched.get_last_lr()))
            out.append((sched.base_lrs, lrs, opt.param_groups[0]["momentum"]))
        return out

    assert run(gradviz) == run(torch)


def test_scheduler_error_texts_match_torch() -> None:
    for make, _, _ in EXTRA.BAD_SCHEDULERS:
        ours = _message(lambda make=make: make(gradviz.optim.lr_scheduler, EXTRA._opt()))
        theirs = _message(lambda make=make: make(torch.optim.lr_scheduler,
                                                 EXTRA._opt(lib=torch)))
        assert ours == theirs


# -- tests/test_optim_extra.py's hard-coded expectations are torch's -------------------------------
@pytest.mark.parametrize("row", EXTRA.TORCH_RUNS, ids=[f"{r[0]}{r[1]}" for r in EXTRA.TORCH_RUNS])
def test_hard_coded_runs_are_torchs(row: tuple) -> None:
    assert EXTRA.run_row(torch, row) == row


@pytest.mark.parametrize("name", EXTRA.NAMES)
def test_hard_coded_defaults_and_state_keys_are_torchs(name: str) -> None:
    W = torch.zeros(2, 3, requires_grad=True)
    b = torch.zeros(2, requires_grad=True)
    opt = getattr(torch.optim, name)([W, b])
    assert list(opt.defaults.items()) == list(EXTRA.TORCH_DEFAULTS[name].items())

    def closure():  # noqa: ANN202
        opt.zero_grad()
        loss = ((W - 1) ** 2).sum() + ((b + 1) ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    opt.step(closure)
    assert [list(s) for s in opt.state_dict()["state"].values()] == EXTRA.STATE_KEYS[name]


def test_hard_coded_behaviours_are_torchs() -> None:
    assert EXTRA.lbfgs_state_kinds(torch) == EXTRA.LBFGS_STATE_KINDS
    assert EXTRA.lbfgs_quadratic(torch) == EXTRA.LBFGS_QUADRATIC
    assert EXTRA.lbfgs_limits(torch) == EXTRA.LBFGS_LIMITS
    assert EXTRA.rprop_by_sign(torch) == EXTRA.RPROP_BY_SIGN
    assert EXTRA.asgd_average(torch) == EXTRA.ASGD_AVERAGE


@pytest.mark.parametrize("name", list(EXTRA.SCHEDULES))
def test_hard_coded_schedules_are_torchs(name: str) -> None:
    assert EXTRA.schedule(torch, name) == EXTRA.TORCH_SCHEDULES[name]


def test_hard_coded_scheduler_runs_are_torchs() -> None:
    assert EXTRA.warm_restarts_by_batch(torch) == EXTRA.TORCH_WARM_RESTARTS
    assert EXTRA.closed_forms_and_warnings(torch) == EXTRA.TORCH_CLOSED_FORMS
    assert EXTRA.cyclic_state(torch) == EXTRA.TORCH_CYCLIC_STATE


@pytest.mark.parametrize("index", range(len(EXTRA.BAD_OPTIMIZERS)))
def test_hard_coded_optimizer_errors_are_torchs(index: int) -> None:
    make, error, text = EXTRA.BAD_OPTIMIZERS[index]
    with pytest.raises(error) as info:
        make(torch, torch.ones(2, requires_grad=True))
    assert str(info.value) == text


@pytest.mark.parametrize("index", range(len(EXTRA.BAD_SCHEDULERS)))
def test_hard_coded_scheduler_errors_are_torchs(index: int) -> None:
    make, error, text = EXTRA.BAD_SCHEDULERS[index]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error) as info:
            make(torch.optim.lr_scheduler, EXTRA._opt(lib=torch))
    assert str(info.value) == text


def test_schedulers_drive_the_new_optimizers_like_torch() -> None:
    """A scheduler wraps step(closure) too: StepLR over LBFGS, ExponentialLR over ASGD (its
    lr enters eta) and PolynomialLR over Rprop (whose lr only starts the step sizes)."""
    def run(lib, name: str, kwargs: dict, make_sched):  # noqa: ANN001, ANN202
        W = lib.tensor(W0, dtype=lib.float64, requires_grad=True)
        x, y = lib.tensor(XS, dtype=lib.float64), lib.tensor(YS[:, 0], dtype=lib.float64)
        opt = getattr(lib.optim, name)([W], **kwargs)
        sched = make_sched(lib.optim.lr_scheduler, opt)

        def closure():  # noqa: ANN202
            opt.zero_grad()
            loss = (((x @ W.t()).sum(1) - y) ** 2).mean()
            loss.backward()
            return loss

        lrs = []
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the order check sees optimizer.step() first
            for _ in range(8):
                opt.step(closure)
                sched.step()
                lrs.append(sched.get_last_lr())
        return lrs, W.detach().numpy().copy()

    for name, kwargs, make in (
            ("LBFGS", {"lr": 0.1, "max_iter": 3}, lambda s, o: s.StepLR(o, 3, gamma=0.5)),
            ("ASGD", {"lr": 0.05, "t0": 2}, lambda s, o: s.ExponentialLR(o, 0.8)),
            ("Rprop", {"lr": 0.05}, lambda s, o: s.PolynomialLR(o, total_iters=5))):
        ours, W = run(gradviz, name, kwargs, make)
        theirs, t_W = run(torch, name, kwargs, make)
        assert ours == theirs, name
        np.testing.assert_allclose(W, t_W, rtol=1e-12, atol=0, err_msg=name)
