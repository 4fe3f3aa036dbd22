"""gradviz.optim.lr_scheduler against torch.optim.lr_scheduler: every scheduler steps the same
optimizer on the same problem for 20 steps; the rates (bit for bit), the parameters, the
optimizer's groups, the scheduler's state_dict, the warnings and the error texts must match.

The hard-coded expectations of tests/test_lr_scheduler.py are derived again from torch here.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from _parity import sibling

import gradviz

RNG = np.random.default_rng(7)
W0 = RNG.standard_normal((3, 4))
B0 = RNG.standard_normal(3)
XS = RNG.standard_normal((5, 4))
YS = RNG.standard_normal((5, 3))
STEPS = 20


def _sgd(lib, params):  # noqa: ANN001, ANN202
    return lib.optim.SGD(params, lr=0.1, momentum=0.9)


def _adam(lib, params):  # noqa: ANN001, ANN202
    return lib.optim.Adam(params, lr=0.05)


class _Halve:
    """A callable object: its __dict__ is saved in LambdaLR's state_dict (a lambda's is not)."""

    def __init__(self) -> None:
        self.base = 0.5

    def __call__(self, epoch: int) -> float:
        return self.base ** (epoch // 3)


def _sched(name: str, **kwargs):  # noqa: ANN202
    return lambda lib, opt: getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)


def _sequential(lib, opt):  # noqa: ANN001, ANN202
    s = lib.optim.lr_scheduler
    return s.SequentialLR(opt, [s.LinearLR(opt, start_factor=0.1, total_iters=4),
                                s.CosineAnnealingLR(opt, T_max=8, eta_min=0.001),
                                s.StepLR(opt, step_size=2, gamma=0.5)], milestones=[4, 12])


def _sequential_lambda(lib, opt):  # noqa: ANN001, ANN202
    s = lib.optim.lr_scheduler
    return s.SequentialLR(opt, [s.ConstantLR(opt, factor=0.5, total_iters=3),
                                s.LambdaLR(opt, lambda e: 1 / (e + 1))], milestones=[5])


def _chained(lib, opt):  # noqa: ANN001, ANN202
    s = lib.optim.lr_scheduler
    return s.ChainedScheduler([s.ConstantLR(opt, factor=0.25, total_iters=6),
                               s.ExponentialLR(opt, gamma=0.9),
                               s.MultiStepLR(opt, milestones=[5, 9], gamma=0.3)])


# (id, optimizer factory, scheduler factory)
CASES = [
    ("StepLR", _sgd, _sched("StepLR", step_size=3, gamma=0.5)),
    ("StepLR-default-gamma", _sgd, _sched("StepLR", step_size=4)),
    ("MultiStepLR", _sgd, _sched("MultiStepLR", milestones=[2, 5, 5, 11], gamma=0.3)),
    ("ExponentialLR", _sgd, _sched("ExponentialLR", gamma=0.85)),
    ("CosineAnnealingLR", _sgd, _sched("CosineAnnealingLR", T_max=7, eta_min=0.002)),
    ("CosineAnnealingLR-past-T_max", _adam, _sched("CosineAnnealingLR", T_max=5)),
    ("LambdaLR", _sgd, _sched("LambdaLR", lr_lambda=lambda e: 0.9**e + 0.1 * (e % 4))),
    ("LambdaLR-object", _sgd, _sched("LambdaLR", lr_lambda=_Halve())),
    ("LambdaLR-per-group", _sgd, _sched("LambdaLR", lr_lambda=[lambda e: 1 / (1 + e),
                                                              lambda e: 0.95**e])),
    ("MultiplicativeLR", _sgd, _sched("MultiplicativeLR", lr_lambda=lambda e: 0.9 + 0.01 * e)),
    ("LinearLR", _sgd, _sched("LinearLR", start_factor=0.2, end_factor=0.9, total_iters=7)),
    ("LinearLR-defaults", _adam, _sched("LinearLR")),
    ("LinearLR-decay", _sgd, _sched("LinearLR", start_factor=1.0, end_factor=0.05,
                                    total_iters=12)),
    ("ConstantLR", _sgd, _sched("ConstantLR", factor=0.3, total_iters=6)),
    ("ConstantLR-defaults", _adam, _sched("ConstantLR")),
    ("OneCycleLR-cos-sgd", _sgd, _sched("OneCycleLR", max_lr=0.5, total_steps=STEPS)),
    ("OneCycleLR-linear-adam", _adam, _sched("OneCycleLR", max_lr=[0.3, 0.1], epochs=4,
                                             steps_per_epoch=5, anneal_strategy="linear",
                                             pct_start=0.25)),
    ("OneCycleLR-three-phase", _sgd, _sched("OneCycleLR", max_lr=1.0, total_steps=STEPS + 3,
                                            three_phase=True, div_factor=10.0,
                                            final_div_factor=100.0, base_momentum=0.8,
                                            max_momentum=[0.9, 0.99])),
    ("OneCycleLR-no-momentum", _sgd, _sched("OneCycleLR", max_lr=0.2, total_steps=STEPS,
                                            cycle_momentum=False)),
    ("SequentialLR", _sgd, _sequential),
    ("SequentialLR-lambda", _sgd, _sequential_lambda),
    ("ChainedScheduler", _sgd, _chained),
]


def _groups(lib, dtype_name: str):  # noqa: ANN001, ANN202
    dtype = getattr(lib, dtype_name)
    W = lib.tensor(W0, dtype=dtype, requires_grad=True)
    b = lib.tensor(B0, dtype=dtype, requires_grad=True)
    return W, b, [{"params": [W]}, {"params": [b], "lr": 0.02}]


def _loss(lib, W, b, dtype_name: str):  # noqa: ANN001, ANN202
    dtype = getattr(lib, dtype_name)
    x, y = lib.tensor(XS, dtype=dtype), lib.tensor(YS, dtype=dtype)
    r = x @ W.t() + b - y
    return (r * r).mean() + (W * W * W * W).sum() * 0.01


def _run(lib, make_opt, make_sched, steps: int = STEPS):  # noqa: ANN001, ANN202
    W, b, groups = _groups(lib, "float64")
    opt = make_opt(lib, groups)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sched = make_sched(lib, opt)
        lrs = [list(sched.get_last_lr())]
        group_log = []
        for _ in range(steps):
            opt.zero_grad()
            _loss(lib, W, b, "float64").backward()
            opt.step()
            sched.step()
            lrs.append(list(sched.get_last_lr()))
            group_log.append([{k: v for k, v in g.items() if k not in ("params",)}
                              for g in opt.param_groups])
    messages = [(w.category.__name__, str(w.message)) for w in caught]
    return lrs, [W.detach().numpy().copy(), b.detach().numpy().copy()], group_log, sched, \
        messages


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_schedules_match_torch(case: tuple) -> None:
    _, make_opt, make_sched = case
    lrs, params, groups, sched, messages = _run(gradviz, make_opt, make_sched)
    t_lrs, t_params, t_groups, t_sched, t_messages = _run(torch, make_opt, make_sched)
    assert lrs == t_lrs  # the same floats, bit for bit
    for ours, theirs in zip(params, t_params, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0)
    for ours, theirs in zip(groups, t_groups, strict=True):
        # every key gradviz keeps (it has no foreach/fused/...), with torch's value
        assert [{k: t[k] for k in g} for g, t in zip(ours, theirs, strict=True)] == ours
    # plain Python data on both sides (floats, lists, dicts, a Counter): == compares it all
    assert sched.state_dict() == t_sched.state_dict()
    assert messages == t_messages == []
    assert getattr(sched, "last_epoch", None) == getattr(t_sched, "last_epoch", None)


@pytest.mark.parametrize("case", [c for c in CASES if not c[0].startswith("OneCycle")],
                         ids=[c[0] for c in CASES if not c[0].startswith("OneCycle")])
def test_state_dict_round_trip_resumes_like_torch(case: tuple) -> None:
    """Stop after 7 steps, load the state into a fresh scheduler, continue: same rates."""
    _, make_opt, make_sched = case

    def resumed(lib):  # noqa: ANN001, ANN202
        _, _, groups = _groups(lib, "float64")
        opt = make_opt(lib, groups)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # stepping without optimizer.step(): same in both
            sched = make_sched(lib, opt)
            for _ in range(7):
                sched.step()
            saved_sched, saved_opt = sched.state_dict(), opt.state_dict()
            _, _, groups2 = _groups(lib, "float64")
            opt2 = make_opt(lib, groups2)
            sched2 = make_sched(lib, opt2)
            opt2.load_state_dict(saved_opt)
            sched2.load_state_dict(saved_sched)
            out = []
            for _ in range(8):
                sched2.step()
                out.append(list(sched2.get_last_lr()))
        return out

    assert resumed(gradviz) == resumed(torch)


def test_step_with_epoch_uses_the_closed_form_and_warns_like_torch() -> None:
    def run(lib):  # noqa: ANN001, ANN202
        out = []
        for name, kwargs in (("StepLR", dict(step_size=3, gamma=0.5)),
                             ("MultiStepLR", dict(milestones=[2, 4, 4], gamma=0.5)),
                             ("ExponentialLR", dict(gamma=0.8)),
                             ("CosineAnnealingLR", dict(T_max=6, eta_min=0.01)),
                             ("LinearLR", dict(start_factor=0.2, total_iters=5)),
                             ("ConstantLR", dict(factor=0.4, total_iters=3)),
                             ("LambdaLR", dict(lr_lambda=lambda e: 1 / (1 + e)))):
            _, _, groups = _groups(lib, "float64")
            opt = lib.optim.SGD(groups, lr=0.1)
            sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                opt.step()
                for epoch in (5, 2, 9, 4):
                    sched.step(epoch)
                    out.append((name, sched.last_epoch, list(sched.get_last_lr())))
            out.append([str(w.message) for w in caught])
        return out

    assert run(gradviz) == run(torch)


def test_resuming_with_last_epoch_matches_torch() -> None:
    """A scheduler built with last_epoch >= 0 over an optimizer that has initial_lr."""
    def run(lib):  # noqa: ANN001, ANN202
        out = []
        for name, kwargs in (("StepLR", dict(step_size=3, gamma=0.5)),
                             ("ExponentialLR", dict(gamma=0.8)),
                             ("CosineAnnealingLR", dict(T_max=6, eta_min=0.01)),
                             ("LinearLR", dict(start_factor=0.2, total_iters=5)),
                             ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.5))):
            _, _, groups = _groups(lib, "float64")
            opt = lib.optim.SGD(groups, lr=0.1)
            for g in opt.param_groups:
                g["initial_lr"] = g["lr"] * 2
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sched = getattr(lib.optim.lr_scheduler, name)(opt, last_epoch=4, **kwargs)
                lrs = [list(sched.get_last_lr())]
                for _ in range(4):
                    sched.step()
                    lrs.append(list(sched.get_last_lr()))
            out.append((name, sched.base_lrs, lrs))
        return out

    assert run(gradviz) == run(torch)


@pytest.mark.parametrize("mode,threshold_mode", [("min", "rel"), ("min", "abs"), ("max", "rel"),
                                                 ("max", "abs")])
def test_reduce_lr_on_plateau_matches_torch(mode: str, threshold_mode: str) -> None:
    metrics = [5.0, 4.0, 4.0, 3.9999, 3.99, 4.2, 4.1, 4.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 0.5,
               0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    if mode == "max":
        metrics = [-m for m in metrics]

    def run(lib):  # noqa: ANN001, ANN202
        _, _, groups = _groups(lib, "float64")
        opt = lib.optim.SGD(groups, lr=0.1, momentum=0.9)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(
            opt, mode=mode, factor=0.5, patience=1, threshold=0.01,
            threshold_mode=threshold_mode, cooldown=2, min_lr=[0.004, 0.01])
        out = [list(sched.get_last_lr())]
        for m in metrics:
            opt.step()
            sched.step(lib.tensor(m))
            out.append((list(sched.get_last_lr()), sched.num_bad_epochs, sched.cooldown_counter,
                        sched.best, sched.in_cooldown))
        out.append(sched.state_dict())
        return out

    assert run(gradviz) == run(torch)


def test_warnings_match_torch() -> None:
    def run(lib):  # noqa: ANN001, ANN202
        out = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _, _, groups = _groups(lib, "float64")
            opt = lib.optim.SGD(groups, lr=0.1)
            sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2)
            sched.step()  # before optimizer.step()
            sched.step()  # only the first scheduler step checks
            sched.get_lr()  # outside step(): use get_last_lr()
            opt2 = lib.optim.SGD(_groups(lib, "float64")[2], lr=0.1)
            sched2 = lib.optim.lr_scheduler.ExponentialLR(opt2, gamma=0.5)
            opt2.step = lambda closure=None: None  # overridden after the scheduler wrapped it
            sched2.step()
            plateau = lib.optim.lr_scheduler.ReduceLROnPlateau(opt2)
            plateau.step(1.0, epoch=3)
        out.append([(w.category.__name__, str(w.message)) for w in caught])
        return out

    ours, theirs = run(gradviz), run(torch)
    assert ours == theirs
    assert len(ours[0]) == 4


def _step_times(sched, n: int) -> None:  # noqa: ANN001
    for _ in range(n):
        sched.step()


def _message(fn) -> str:  # noqa: ANN001
    with warnings.catch_warnings(), pytest.raises(Exception) as info:
        warnings.simplefilter("ignore")
        fn()
    return f"{type(info.value).__name__}: {info.value}"


BAD = [
    lambda lib, opt: lib.optim.lr_scheduler.StepLR("sgd", step_size=2),
    lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, step_size=2, last_epoch=3),
    lambda lib, opt: lib.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0]),
    lambda lib, opt: lib.optim.lr_scheduler.MultiplicativeLR(opt, 0.5),
    lambda lib, opt: lib.optim.lr_scheduler.MultiplicativeLR(opt, [lambda e: 1.0, 3]),
    lambda lib, opt: lib.optim.lr_scheduler.ConstantLR(opt, factor=1.5),
    lambda lib, opt: lib.optim.lr_scheduler.ConstantLR(opt, factor=-0.1),
    lambda lib, opt: lib.optim.lr_scheduler.LinearLR(opt, start_factor=0.0),
    lambda lib, opt: lib.optim.lr_scheduler.LinearLR(opt, start_factor=1.5),
    lambda lib, opt: lib.optim.lr_scheduler.LinearLR(opt, end_factor=1.5),
    lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=1.0),
    lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="up"),
    lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, threshold_mode="pct"),
    lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, min_lr=[0.1]),
    lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(None),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=0),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, epochs=0,
                                                       steps_per_epoch=3),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, epochs=2,
                                                       steps_per_epoch=-1),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10,
                                                       pct_start=1.5),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10,
                                                       pct_start=1),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10,
                                                       anneal_strategy="exp"),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=[1.0], total_steps=10),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10,
                                                       base_momentum=[0.8, 0.8, 0.8]),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(
        lib.optim.Adagrad(opt.param_groups[0]["params"]), max_lr=1.0, total_steps=10),
    lambda lib, opt: _step_times(lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0,
                                                                  total_steps=2), 3),
    lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(opt, [], milestones=[]),
    lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(opt, [object()], milestones=[]),
    lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(
        opt, [lib.optim.lr_scheduler.ReduceLROnPlateau(opt)], milestones=[]),
    lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(
        opt, [lib.optim.lr_scheduler.StepLR(opt, 2), lib.optim.lr_scheduler.StepLR(opt, 3)],
        milestones=[1, 2]),
    lambda lib, opt: lib.optim.lr_scheduler.ChainedScheduler([]),
    lambda lib, opt: lib.optim.lr_scheduler.ChainedScheduler([object()], optimizer=opt),
    lambda lib, opt: lib.optim.lr_scheduler.ChainedScheduler(
        [lib.optim.lr_scheduler.StepLR(opt, 2), lib.optim.lr_scheduler.ReduceLROnPlateau(opt)]),
]


@pytest.mark.parametrize("index", range(len(BAD)))
def test_error_texts_match_torch(index: int) -> None:
    make = BAD[index]
    ours = _message(lambda: make(gradviz, gradviz.optim.SGD(_groups(gradviz, "float64")[2],
                                                            lr=0.1, momentum=0.9)))
    theirs = _message(lambda: make(torch, torch.optim.SGD(_groups(torch, "float64")[2],
                                                          lr=0.1, momentum=0.9)))
    assert ours == theirs


def test_different_optimizer_error_names_the_optimizer_class() -> None:
    """torch's text includes the other optimizer's repr, which lists torch-only group keys
    (foreach, fused, ...): compare up to that repr, and the repr's own start."""
    def run(lib):  # noqa: ANN001, ANN202
        a = lib.optim.SGD(_groups(lib, "float64")[2], lr=0.1)
        b = lib.optim.SGD(_groups(lib, "float64")[2], lr=0.1)
        s = lib.optim.lr_scheduler
        return _message(lambda: s.ChainedScheduler([s.StepLR(a, 2), s.StepLR(b, 2)]))

    ours, theirs = run(gradviz), run(torch)
    head = ("ValueError: ChainedScheduler expects all schedulers to belong to the same "
            "optimizer, but got scheduler StepLR at index 1 has SGD (\nParameter Group 0\n")
    assert ours.startswith(head) and theirs.startswith(head)
    assert ours.endswith("\n), which is different from SGD.")
    assert theirs.endswith("\n), which is different from SGD.")


def test_tensor_lr_is_filled_in_place_like_torch() -> None:
    def run(lib):  # noqa: ANN001, ANN202
        w = lib.zeros(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        lr = lib.tensor(0.1, dtype=lib.float64)
        opt.param_groups[0]["lr"] = lr
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
            for _ in range(3):
                sched.step()
        last = sched.get_last_lr()[0]
        return (opt.param_groups[0]["lr"] is lr, lr.item(), last.item(), last is not lr,
                math.isclose(sched.base_lrs[0].item(), 0.1))

    assert run(gradviz) == run(torch)


# -- tests/test_lr_scheduler.py's hard-coded expectations are torch's ------------------------------
SCHED = sibling("test_lr_scheduler")


@pytest.mark.parametrize("name", list(SCHED.TORCH_LRS))
def test_hard_coded_sequences_are_torchs(name: str) -> None:
    expected = SCHED.TORCH_LRS[name][1]
    assert SCHED.schedule(torch, name) == (expected, expected[-1])


def test_hard_coded_one_cycle_and_plateau_runs_are_torchs() -> None:
    assert SCHED.one_cycle(torch) == SCHED.ONE_CYCLE
    assert SCHED.plateau(torch) == SCHED.PLATEAU


@pytest.mark.parametrize("index", range(len(SCHED.BAD_ARGUMENTS)))
def test_hard_coded_error_texts_are_torchs(index: int) -> None:
    make, error, text = SCHED.BAD_ARGUMENTS[index]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error) as info:
            make(torch.optim.lr_scheduler, SCHED._opt(lib=torch))
    assert str(info.value) == text
