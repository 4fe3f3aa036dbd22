"""gradviz.optim.lr_scheduler: the learning-rate sequences, warnings and error texts of
torch.optim.lr_scheduler (PyTorch 2.13).

The expected sequences below were produced by torch 2.13.0 (two parameter groups, lr 0.1 and
0.02, ``optimizer.step()`` then ``scheduler.step()``) and are hard-coded, so this file runs
without torch; tests/parity/test_lr_scheduler_parity.py runs both side by side for 20 steps.
Rates are compared with ``==``: the chainable forms must round exactly as PyTorch's do.
"""

from __future__ import annotations

import copy
import importlib
import math
import pickle
import warnings

import pytest

import gradviz
from gradviz import optim
from gradviz.optim import lr_scheduler as S


def _opt(kind: str = "sgd", lib=gradviz):  # noqa: ANN001, ANN202
    """Two groups (lr 0.1 and 0.02) of SGD with momentum, or of Adam, in ``lib`` (gradviz, or
    torch when the parity file re-derives the expectations)."""
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(1, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.02}]
    if kind == "sgd":
        return lib.optim.SGD(groups, lr=0.1, momentum=0.9)
    return lib.optim.Adam(groups, lr=0.1)


def _lib(obj: object):  # noqa: ANN202
    """The library (gradviz or torch) an object comes from."""
    return importlib.import_module(type(obj).__module__.split(".")[0])


def _lrs(opt: optim.Optimizer, sched: S.LRScheduler, steps: int = 9) -> list[list[float]]:
    out = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr())
    return out


# torch 2.13.0's get_last_lr() after construction and after each of 9 steps.
TORCH_LRS = {
    "StepLR": (lambda s, o: s.StepLR(o, step_size=3, gamma=0.5), [
        [0.1, 0.02], [0.1, 0.02], [0.1, 0.02], [0.05, 0.01], [0.05, 0.01], [0.05, 0.01],
        [0.025, 0.005], [0.025, 0.005], [0.025, 0.005], [0.0125, 0.0025]]),
    "MultiStepLR": (lambda s, o: s.MultiStepLR(o, milestones=[2, 5, 5], gamma=0.1), [
        [0.1, 0.02], [0.1, 0.02], [0.010000000000000002, 0.002], [0.010000000000000002, 0.002],
        [0.010000000000000002, 0.002], [0.00010000000000000005, 2.0000000000000005e-05],
        [0.00010000000000000005, 2.0000000000000005e-05],
        [0.00010000000000000005, 2.0000000000000005e-05],
        [0.00010000000000000005, 2.0000000000000005e-05],
        [0.00010000000000000005, 2.0000000000000005e-05]]),
    "ExponentialLR": (lambda s, o: s.ExponentialLR(o, gamma=0.9), [
        [0.1, 0.02], [0.09000000000000001, 0.018000000000000002],
        [0.08100000000000002, 0.016200000000000003], [0.07290000000000002, 0.014580000000000003],
        [0.06561000000000002, 0.013122000000000003], [0.05904900000000002, 0.011809800000000004],
        [0.05314410000000002, 0.010628820000000004], [0.04782969000000002, 0.009565938000000005],
        [0.043046721000000024, 0.008609344200000004],
        [0.03874204890000002, 0.007748409780000004]]),
    "CosineAnnealingLR": (lambda s, o: s.CosineAnnealingLR(o, T_max=4, eta_min=0.01), [
        [0.1, 0.02], [0.08681980515339464, 0.01853553390593274], [0.05500000000000001, 0.015],
        [0.023180194846605363, 0.011464466094067262], [0.01, 0.01],
        [0.023180194846605363, 0.011464466094067262], [0.05500000000000002, 0.015],
        [0.08681980515339469, 0.01853553390593274], [0.10000000000000006, 0.02],
        [0.0868198051533947, 0.01853553390593274]]),
    "LambdaLR": (lambda s, o: s.LambdaLR(o, lr_lambda=lambda e: 1 / (e + 1)), [
        [0.1, 0.02], [0.05, 0.01], [0.03333333333333333, 0.006666666666666666], [0.025, 0.005],
        [0.020000000000000004, 0.004], [0.016666666666666666, 0.003333333333333333],
        [0.014285714285714285, 0.002857142857142857], [0.0125, 0.0025],
        [0.011111111111111112, 0.0022222222222222222], [0.010000000000000002, 0.002]]),
    "MultiplicativeLR": (lambda s, o: s.MultiplicativeLR(o, lr_lambda=lambda e: 0.95), [
        [0.1, 0.02], [0.095, 0.019], [0.09025, 0.01805], [0.0857375, 0.0171475],
        [0.08145062499999998, 0.016290125], [0.07737809374999999, 0.015475618749999998],
        [0.07350918906249998, 0.014701837812499997], [0.06983372960937498, 0.013966745921874996],
        [0.06634204312890622, 0.013268408625781245], [0.0630249409724609, 0.012604988194492182]]),
    "LinearLR": (lambda s, o: s.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=4), [
        [0.025, 0.005], [0.043750000000000004, 0.00875], [0.06250000000000001, 0.0125],
        [0.08125000000000002, 0.01625]] + [[0.10000000000000002, 0.02]] * 6),
    "ConstantLR": (lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=3),
                   [[0.05, 0.01]] * 3 + [[0.1, 0.02]] * 7),
    "OneCycleLR": (lambda s, o: s.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=10), [
        [0.040000000000000036, 0.020000000000000018], [0.52, 0.26], [1.0, 0.5],
        [0.9504846320134737, 0.47524231600673683], [0.8117456539497631, 0.40587282697488153],
        [0.6112620219362893, 0.30563101096814466], [0.38874197806371075, 0.19437098903185537],
        [0.18825834605023697, 0.09412917302511849], [0.049519367986526286, 0.024759683993263143],
        [4e-06, 2e-06]]),
    "SequentialLR": (lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, start_factor=0.5, total_iters=2), s.ExponentialLR(o, gamma=0.5)],
        milestones=[3]), [
        [0.05, 0.01], [0.07500000000000001, 0.015], [0.1, 0.019999999999999997], [0.1, 0.02],
        [0.05, 0.01], [0.025, 0.005], [0.0125, 0.0025], [0.00625, 0.00125], [0.003125, 0.000625],
        [0.0015625, 0.0003125]]),
    "ChainedScheduler": (lambda s, o: s.ChainedScheduler(
        [s.ConstantLR(o, factor=0.5, total_iters=2), s.ExponentialLR(o, gamma=0.9)]), [
        [0.05, 0.01], [0.045000000000000005, 0.009000000000000001],
        [0.08100000000000002, 0.016200000000000003], [0.07290000000000002, 0.014580000000000003],
        [0.06561000000000002, 0.013122000000000003], [0.05904900000000002, 0.011809800000000004],
        [0.05314410000000002, 0.010628820000000004], [0.04782969000000002, 0.009565938000000005],
        [0.043046721000000024, 0.008609344200000004],
        [0.03874204890000002, 0.007748409780000004]]),
}


def schedule(lib, name: str) -> tuple[list[list[float]], list[float]]:  # noqa: ANN001
    """TORCH_LRS[name]'s schedule in ``lib``: get_last_lr() after each step, and the groups'
    final rates. No warning may be raised (the calls are in the right order)."""
    make, _ = TORCH_LRS[name]
    opt = _opt(lib=lib)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _lrs(opt, make(lib.optim.lr_scheduler, opt))
    return got, [g["lr"] for g in opt.param_groups]


@pytest.mark.parametrize("name", list(TORCH_LRS))
def test_learning_rates_are_torchs(name: str) -> None:
    expected = TORCH_LRS[name][1]
    assert schedule(gradviz, name) == (expected, expected[-1])


def test_the_base_records_initial_lr_base_lrs_and_epochs() -> None:
    opt = _opt()
    assert "initial_lr" not in opt.param_groups[0]
    sched = S.StepLR(opt, step_size=2)
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.02]
    assert sched.base_lrs == [0.1, 0.02]
    assert (sched.last_epoch, sched._step_count) == (0, 1)
    opt.step()
    sched.step()
    assert (sched.last_epoch, sched._step_count) == (1, 2)
    # initial_lr is only set when missing: a second scheduler keeps the first's base
    opt.param_groups[0]["lr"] = 0.5
    assert S.ExponentialLR(opt, gamma=0.5).base_lrs == [0.1, 0.02]
    # get_last_lr() is a fresh list, not the groups' storage
    last = sched.get_last_lr()
    last[0] = 123.0
    assert opt.param_groups[0]["lr"] == 0.5


def test_state_dict_holds_every_attribute_but_the_optimizer() -> None:
    opt = _opt()
    sched = S.StepLR(opt, step_size=2)
    assert sched.state_dict() == {  # torch 2.13's dict, keys in its order
        "step_size": 2, "gamma": 0.1, "base_lrs": [0.1, 0.02], "last_epoch": 0,
        "_step_count": 1, "_is_initial": False, "_get_lr_called_within_step": False,
        "_last_lr": [0.1, 0.02]}
    assert list(sched.state_dict()) == ["step_size", "gamma", "base_lrs", "last_epoch",
                                        "_step_count", "_is_initial",
                                        "_get_lr_called_within_step", "_last_lr"]
    for _ in range(3):
        opt.step()
        sched.step()
    other = S.StepLR(_opt(), step_size=5, gamma=0.9)
    other.load_state_dict(sched.state_dict())
    assert (other.step_size, other.gamma, other.last_epoch) == (2, 0.1, 3)
    assert other.get_last_lr() == sched.get_last_lr() == [0.010000000000000002, 0.002]


def test_lambda_state_dict_saves_callable_objects_not_functions() -> None:
    class Decay:
        def __init__(self) -> None:
            self.rate = 0.5

        def __call__(self, epoch: int) -> float:
            return self.rate**epoch

    opt = _opt()
    sched = S.LambdaLR(opt, lr_lambda=[lambda e: 1.0, Decay()])
    state = sched.state_dict()
    assert state["lr_lambdas"] == [None, {"rate": 0.5}]
    state["lr_lambdas"][1]["rate"] = 0.25
    fresh = S.LambdaLR(_opt(), lr_lambda=[lambda e: 1.0, Decay()])
    fresh.load_state_dict(state)
    assert fresh.lr_lambdas[1].rate == 0.25
    assert "lr_lambdas" in state  # loading leaves the caller's dict intact


def one_cycle(lib) -> tuple[list[float], float, list[tuple[float, tuple]], dict]:  # noqa: ANN001
    """OneCycleLR cycling SGD's momentum (cosine, 10 steps, then the 10th step the schedule
    allows past its end), and Adam's beta1 (three linear phases, 6 steps)."""
    opt = _opt(lib=lib)
    sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=[1.0, 0.5], total_steps=10)
    momenta = [opt.param_groups[0]["momentum"]]
    for _ in range(10):
        opt.step()
        sched.step()
        momenta.append(opt.param_groups[0]["momentum"])
    last_allowed = sched.get_last_lr()[0]  # last_epoch == total_steps: the cosine extrapolated
    adam = _opt("adam", lib=lib)
    sched = lib.optim.lr_scheduler.OneCycleLR(adam, max_lr=1.0, total_steps=6, three_phase=True,
                                              anneal_strategy="linear")
    seen = [(sched.get_last_lr()[0], adam.param_groups[0]["betas"])]
    for _ in range(5):
        adam.step()
        sched.step()
        seen.append((sched.get_last_lr()[0], adam.param_groups[0]["betas"]))
    group = {k: adam.param_groups[0][k] for k in ("initial_lr", "max_lr", "min_lr",
                                                   "max_momentum", "base_momentum")}
    return momenta, last_allowed, seen, group


ONE_CYCLE = (  # torch 2.13.0
    [0.95, 0.8999999999999999, 0.85, 0.854951556604879, 0.8688255099070633, 0.8888739533021842,
     0.9111260466978157, 0.9311744900929366, 0.945048443395121, 0.95, 0.945048443395121],
    0.04951936798652623,
    [(0.04, (0.95, 0.999)), (0.7599999999999998, (0.875, 0.999)),
     (0.03529458823529411, (0.95, 0.999)), (0.02353105882352941, (0.95, 0.999)),
     (0.011767529411764701, (0.95, 0.999)), (3.9999999999970615e-06, (0.95, 0.999))],
    {"initial_lr": 0.04, "max_lr": 1.0, "min_lr": 4e-06, "max_momentum": 0.95,
     "base_momentum": 0.85},
)


def test_one_cycle_cycles_momentum_and_writes_torchs_group_entries() -> None:
    assert one_cycle(gradviz) == ONE_CYCLE


def test_one_cycle_refuses_to_step_past_total_steps() -> None:
    opt = _opt()
    sched = S.OneCycleLR(opt, max_lr=1.0, total_steps=3)
    for _ in range(3):
        opt.step()
        sched.step()
    with pytest.raises(ValueError, match="^Tried to step 4 times. The specified number of "
                                         "total steps is 3$"):
        sched.step()


def plateau(lib) -> tuple[list, dict, list[float]]:  # noqa: ANN001
    """ReduceLROnPlateau with patience 2, cooldown 1 and min_lr 0.004 over 12 metrics, then 20
    bad epochs (down to min_lr)."""
    opt = _opt(lib=lib)
    sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=2, cooldown=1,
                                                     min_lr=0.004)
    seen = []
    for m in [1.0, 0.9, 0.95, 0.91, 0.92, 0.93, 0.94, 0.95, 0.96, 0.97, 0.5, 0.6]:
        opt.step()
        sched.step(m)
        seen.append((sched.get_last_lr(), sched.num_bad_epochs, sched.cooldown_counter))
    state = sched.state_dict()
    for _ in range(20):
        sched.step(10.0)
    return seen, state, sched.get_last_lr()


PLATEAU = (  # torch 2.13.0
    [([0.1, 0.02], 0, 0), ([0.1, 0.02], 0, 0), ([0.1, 0.02], 1, 0), ([0.1, 0.02], 2, 0),
     ([0.05, 0.01], 0, 1), ([0.05, 0.01], 0, 0), ([0.05, 0.01], 1, 0), ([0.05, 0.01], 2, 0),
     ([0.025, 0.005], 0, 1), ([0.025, 0.005], 0, 0), ([0.025, 0.005], 0, 0),
     ([0.025, 0.005], 1, 0)],
    {"factor": 0.5, "default_min_lr": 0.004, "min_lrs": [0.004, 0.004], "patience": 2,
     "cooldown": 1, "eps": 1e-08, "last_epoch": 12, "_last_lr": [0.025, 0.005],
     "mode_worse": math.inf, "mode": "min", "threshold": 0.0001, "threshold_mode": "rel",
     "best": 0.5, "cooldown_counter": 0, "num_bad_epochs": 1},
    [0.004, 0.004],
)


def test_reduce_lr_on_plateau_patience_cooldown_min_lr() -> None:
    assert plateau(gradviz) == PLATEAU
    opt = _opt()
    S.ReduceLROnPlateau(opt)
    assert "initial_lr" not in opt.param_groups[0]  # it never calls LRScheduler.__init__


@pytest.mark.parametrize("mode,threshold_mode,metrics,reduced_at", [
    ("min", "rel", [1.0, 0.95, 0.941, 0.93], 2),     # 0.941 is not < 0.95 * (1 - 0.01)
    ("min", "abs", [1.0, 0.995, 0.98, 0.97], 1),     # 0.995 is not < 1.0 - 0.01
    ("max", "rel", [1.0, 1.05, 1.06, 1.2], 2),       # 1.06 is not > 1.05 * 1.01
    ("max", "abs", [1.0, 1.005, 1.02, 1.03], 1),     # 1.005 is not > 1.0 + 0.01
])
def test_reduce_lr_on_plateau_modes(mode: str, threshold_mode: str, metrics: list[float],
                                    reduced_at: int) -> None:
    opt = _opt()
    sched = S.ReduceLROnPlateau(opt, mode=mode, threshold=0.01, threshold_mode=threshold_mode,
                                patience=0, factor=0.5)
    lrs = []
    for m in metrics:
        sched.step(gradviz.tensor(m))
        lrs.append(sched.get_last_lr()[0])
    assert lrs[reduced_at] == 0.05 and lrs[reduced_at - 1] == 0.1


def test_step_before_optimizer_step_warns_with_torchs_text() -> None:
    opt = _opt()
    sched = S.StepLR(opt, step_size=2)
    with pytest.warns(UserWarning) as record:
        sched.step()
    assert [str(w.message) for w in record] == [
        "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 "
        "and later, you should call them in the opposite order: `optimizer.step()` before "
        "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first "
        "value of the learning rate schedule. See more details at "
        "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"]
    assert record[0].filename == __file__  # points at the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()  # only the first scheduler step checks


def test_the_optimizer_step_is_wrapped_once_and_records_the_call() -> None:
    opt = _opt()
    S.StepLR(opt, step_size=2)
    wrapped = opt.step
    assert wrapped._wrapped_by_lr_sched is True
    S.ExponentialLR(opt, gamma=0.5)
    assert opt.step is wrapped
    assert not getattr(opt, "_opt_called", False)
    opt.step()
    assert opt._opt_called is True
    # the optimizer still pickles and deep-copies (the wrapper is not part of its state)
    assert copy.deepcopy(opt).param_groups[0]["initial_lr"] == 0.1
    assert pickle.loads(pickle.dumps(opt)).param_groups[1]["lr"] == 0.02


def test_overridden_optimizer_step_warns() -> None:
    opt = _opt()
    sched = S.StepLR(opt, step_size=2)
    opt.step = lambda closure=None: None
    with pytest.warns(UserWarning, match=r"^Seems like `optimizer.step\(\)` has been overridden "
                                         r"after learning rate scheduler initialization\."):
        sched.step()


def test_get_lr_outside_step_and_step_with_epoch_warn() -> None:
    opt = _opt()
    sched = S.MultiStepLR(opt, milestones=[2, 4])
    with pytest.warns(UserWarning, match=r"^To get the last learning rate computed by the "
                                         r"scheduler, please use `get_last_lr\(\)`\.$"):
        sched.get_lr()
    opt.step()
    with pytest.warns(UserWarning, match=r"^The epoch parameter in `scheduler.step\(\)` was not "
                                         r"necessary and is being deprecated"):
        sched.step(3)  # the closed form: base_lr * gamma ** (milestones passed)
    assert sched.last_epoch == 3
    assert sched.get_last_lr() == [0.010000000000000002, 0.002]


def test_resuming_needs_initial_lr() -> None:
    opt = _opt()
    with pytest.raises(KeyError) as info:
        S.StepLR(opt, step_size=2, last_epoch=4)
    assert info.value.args[0].startswith(
        "param 'initial_lr' is not specified in param_groups[0] when resuming scheduler with "
        "last_epoch >= 0.\nThis typically happens when:\n")
    for g in opt.param_groups:
        g["initial_lr"] = g["lr"]
    sched = S.StepLR(opt, step_size=2, last_epoch=4)
    assert sched.last_epoch == 5 and sched.base_lrs == [0.1, 0.02]


# (make(lr_scheduler module, optimizer), exception type, torch 2.13's text)
BAD_ARGUMENTS = [
    (lambda s, o: s.StepLR(object(), step_size=2), TypeError, "object is not an Optimizer"),
    (lambda s, o: s.LambdaLR(o, [lambda e: 1.0]), ValueError, "Expected 2 lr_lambdas, but got 1"),
    (lambda s, o: s.MultiplicativeLR(o, 0.9), TypeError,
     "lr_lambda should be a function, but got float"),
    (lambda s, o: s.ConstantLR(o, factor=2.0), ValueError,
     "Constant multiplicative factor expected to be between 0 and 1."),
    (lambda s, o: s.LinearLR(o, start_factor=0), ValueError,
     "Starting multiplicative factor expected to be greater than 0 and less or equal to 1."),
    (lambda s, o: s.LinearLR(o, end_factor=-1), ValueError,
     "Ending multiplicative factor expected to be between 0 and 1."),
    (lambda s, o: s.ReduceLROnPlateau(o, factor=1.5), ValueError, "Factor should be < 1.0."),
    (lambda s, o: s.ReduceLROnPlateau(o, mode="lowest"), ValueError, "mode lowest is unknown!"),
    (lambda s, o: s.ReduceLROnPlateau(o, threshold_mode="x"), ValueError,
     "threshold mode x is unknown!"),
    (lambda s, o: s.ReduceLROnPlateau(o, min_lr=[0.1, 0.2, 0.3]), ValueError,
     "expected 2 min_lrs, got 3"),
    (lambda s, o: s.OneCycleLR(o, max_lr=1.0), ValueError,
     "You must define either total_steps OR (epochs AND steps_per_epoch)"),
    (lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=-3), ValueError,
     "Expected positive integer total_steps, but got -3"),
    (lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=5, pct_start=2.0), ValueError,
     "Expected float between 0 and 1 pct_start, but got 2.0"),
    (lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=5, anneal_strategy="exp"), ValueError,
     "anneal_strategy must be one of 'cos' or 'linear', instead got exp"),
    (lambda s, o: s.OneCycleLR(o, max_lr=[1.0, 2.0, 3.0], total_steps=5), ValueError,
     "max_lr must have the same length as optimizer.param_groups. max_lr has 3 values, "
     "param_groups has 2."),
    (lambda s, o: s.OneCycleLR(_lib(o).optim.Adagrad(o.param_groups[0]["params"]), max_lr=1.0,
                            total_steps=5), ValueError,
     "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"),
    (lambda s, o: s.SequentialLR(o, [], milestones=[]), ValueError,
     "SequentialLR expects at least one scheduler, but got no scheduler."),
    (lambda s, o: s.SequentialLR(o, [s.StepLR(o, 2)], milestones=[3]), ValueError,
     "Sequential Schedulers expects number of schedulers provided to be one more than the "
     "number of milestone points, but got number of schedulers 1 and the number of milestones "
     "to be equal to 1"),
    (lambda s, o: s.SequentialLR(o, [s.ReduceLROnPlateau(o)], milestones=[]), ValueError,
     "SequentialLR does not support `ReduceLROnPlateau` scheduler as it requires additional "
     "kwargs to be specified when calling `step`, but got one at index 0 in the given "
     "schedulers sequence."),
    (lambda s, o: s.ChainedScheduler([]), ValueError,
     "ChainedScheduler expects at least one scheduler to be chained, but got no scheduler."),
    (lambda s, o: s.ChainedScheduler([s.StepLR(o, 2), 3], optimizer=o), TypeError,
     "ChainedScheduler at index 1 should have `optimizer` as its attribute."),
]


@pytest.mark.parametrize("make,error,text", BAD_ARGUMENTS)
def test_bad_arguments_raise_torchs_errors(make, error: type, text: str) -> None:  # noqa: ANN001
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error) as info:
            make(S, _opt())
    assert str(info.value) == text


def test_schedulers_of_another_optimizer_are_refused() -> None:
    a, b = _opt(), _opt()
    with pytest.raises(ValueError, match=r"^ChainedScheduler expects all schedulers to belong to "
                                         r"the same optimizer, but got scheduler ExponentialLR at "
                                         r"index 1 has SGD \(\nParameter Group 0\n"):
        S.ChainedScheduler([S.StepLR(a, 2), S.ExponentialLR(b, 0.5)])


def test_sequential_lr_undoes_nested_schedulers_without_recursion() -> None:
    opt = _opt()
    inner = S.ChainedScheduler([S.ConstantLR(opt, factor=0.5, total_iters=2),
                                S.ExponentialLR(opt, gamma=0.9)])
    before = [s.last_epoch for s in inner._schedulers]
    seq = S.SequentialLR(opt, [S.StepLR(opt, 3), inner], milestones=[2])
    assert [s.last_epoch for s in inner._schedulers] == [e - 1 for e in before]
    assert seq.last_epoch == 0


def test_a_pytorch_tutorial_loop_runs_with_import_gradviz_as_torch() -> None:
    """The transfer-learning tutorial's schedule: SGD(momentum) + StepLR(step_size=7)."""
    import gradviz as torch

    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    exp_lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=7, gamma=0.1)
    x, y = torch.ones(4, 3), torch.zeros(4, 2)
    seen = []
    for _ in range(15):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        exp_lr_scheduler.step()
        seen.append(exp_lr_scheduler.get_last_lr()[0])
    assert seen[:6] == [0.001] * 6
    assert seen[6:13] == [0.0001] * 7
    assert seen[13:] == [1e-05] * 2
