"""Adagrad, Adadelta, Adamax, NAdam and RAdam: torch 2.13's numbers, defaults, state layout and
error texts.

``TORCH_RUNS`` was produced by torch 2.13.0 on the fixed float64 problem below (``W`` 2x3, ``b``
2, loss ``0.5 * ||W x + b - y||^2 + 0.25 * sum(W^4)``) and is hard-coded so this file runs
without torch: each row is (optimizer, hyperparameters, steps, W after, b after, the state of
``b`` after). RAdam runs 8 steps so that its rectified branch (``rho_t > 5``, from step 6 with
the default betas) is exercised; betas (0.5, 0.6) give ``rho_inf = 4`` and never rectify.
tests/parity/test_optim_more_parity.py runs both libraries side by side for 20 steps.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import gradviz
from gradviz import optim

W0 = [[0.3, -0.2, 0.1], [0.05, 0.4, -0.3]]
B0 = [0.1, -0.1]
X = [0.5, -1.5, 2.0]
Y = [1.0, -2.0]
NAMES = ["Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"]

TORCH_RUNS = [('Adagrad',
      {'lr': 0.1},
      3,
      [[0.3247822840582764, -0.25536080284752766, 0.15999743731059057],
       [-0.09223417328690352, 0.5208725565873797, -0.43415790181977404]],
      [0.16108236051441777, -0.24240590934025735],
      {'step': 3.0, 'sum': [0.1390557140229433, 0.5857967558934997]}),
     ('Adagrad',
      {'lr': 0.1,
       'lr_decay': 0.1,
       'weight_decay': 0.05,
       'initial_accumulator_value': 0.2,
       'maximize': True},
      3,
      [[0.17521988033632097, 0.005941525541283868, -0.12048852052545501],
       [0.23447871581091023, 0.16993577256354225, -0.06612802820813138]],
      [-0.08055622220672812, 0.11932947268079463],
      {'step': 3.0, 'sum': [1.4163941939419231, 4.47764794849109]}),
     ('Adadelta',
      {},
      3,
      [[0.3091952883216715, -0.2093445295867211, 0.1093571769900325],
       [0.04040907227234645, 0.4095758848083559, -0.309585971240309]],
      [0.10935851738438439, -0.1095914858436097],
      {'step': 3.0,
       'square_avg': [0.014773224895421617, 0.13588633169137607],
       'acc_delta': [2.631360005520635e-06, 2.7736835237801668e-06]}),
     ('Adadelta',
      {'lr': 0.5, 'rho': 0.7, 'eps': 0.001, 'weight_decay': 0.1},
      3,
      [[0.29940916804693224, -0.2469158301053208, 0.15241495365354862],
       [-0.030576317981117953, 0.47900728492147693, -0.3808566044181891]],
      [0.14942068776084708, -0.1813517023754279],
      {'step': 3.0,
       'square_avg': [0.010611821827207817, 0.19752697284246232],
       'acc_delta': [0.0007306846248765397, 0.0018702605435049241]}),
     ('Adamax',
      {'lr': 0.05},
      3,
      [[0.35104869936260596, -0.27746486539480797, 0.1799928342881397],
       [-0.07378797562513872, 0.5200518921637179, -0.4224013488008863]],
      [0.18049353719205422, -0.22380358744841364],
      {'step': 3.0,
       'exp_avg': [-0.00917613669911073, 0.12877518263377888],
       'exp_inf': [0.24950025998000988, 0.72355073498001]}),
     ('Adamax',
      {'lr': 0.05, 'betas': (0.7, 0.9), 'weight_decay': 0.1, 'maximize': True},
      3,
      [[0.17216341987215653, -0.07170786308491797, -0.028214454979265925],
       [0.18744966428545187, 0.2631742613704232, -0.16273907301578205]],
      [-0.028521202311803252, 0.03760746852793711],
      {'step': 3.0,
       'exp_avg': [0.3543560472396434, -0.6734915801691512],
       'exp_inf': [0.7002868394427052, 1.198821945790496]}),
     ('NAdam',
      {'lr': 0.05},
      3,
      [[0.3149677229205607, -0.2511497478437493, 0.1552839674996987],
       [-0.05718939120096068, 0.502600698172381, -0.405524834070434]],
      [0.15609289565368262, -0.2072042395118168],
      {'step': 3.0,
       'mu_product': 0.09121428430080414,
       'exp_avg': [-0.01897277369463178, 0.13129756050766092],
       'exp_avg_sq': [6.257404335203887e-05, 0.0008334544945249968]}),
     ('NAdam',
      {'lr': 0.05, 'momentum_decay': 0.1, 'weight_decay': 0.1, 'decoupled_weight_decay': True},
      3,
      [[0.31247287150212694, -0.24970040505571936, 0.15521716441284716],
       [-0.05808639168653222, 0.4970968786783032, -0.4013030709948382]],
      [0.15601143961250305, -0.20586253817104763],
      {'step': 3.0,
       'mu_product': 0.09336294233798981,
       'exp_avg': [-0.019743449452219203, 0.13311370824234162],
       'exp_avg_sq': [6.250487711770285e-05, 0.0008471921597052176]}),
     ('RAdam',
      {'lr': 0.05},
      8,
      [[0.31227831267513784, -0.2596191004739254, 0.18237437386107175],
       [-0.011441449845454473, 0.5563410465573667, -0.5261452682320026]],
      [0.14222612021532088, -0.22111808551118203],
      {'step': 8.0,
       'exp_avg': [-0.012308685366059035, 0.047800123937688684],
       'exp_avg_sq': [0.00010203172394089256, 0.0008409577558191771]}),
     ('RAdam',
      {'lr': 0.05, 'betas': (0.5, 0.6), 'weight_decay': 0.1},
      8,
      [[0.2963514390532289, -0.24474654553641745, 0.17141582045791753],
       [-0.008959485977686235, 0.5106248381281929, -0.4848046948961088]],
      [0.13437073737870203, -0.21000794319689284],
      {'step': 8.0,
       'exp_avg': [0.0022140869445787855, 0.032775145695619956],
       'exp_avg_sq': [0.001419989097774796, 0.013099968726706377]}),
     ('RAdam',
      {'lr': 0.05, 'betas': (0.8, 0.9), 'weight_decay': 0.1, 'decoupled_weight_decay': True},
      8,
      [[0.2866934217608663, -0.2568401715101923, 0.18565558961960354],
       [-0.02562331341187569, 0.5342619388203065, -0.510485823582955]],
      [0.14800040997312872, -0.22664724084271595],
      {'step': 8.0,
       'exp_avg': [-0.008461878602376212, 0.05410943355099123],
       'exp_avg_sq': [0.005446632065796273, 0.04283428932878187]})]


def _train(name: str, kwargs: dict, steps: int, dtype: str = "float64", lib=gradviz):  # noqa: ANN001, ANN202
    """``steps`` steps of ``lib.optim.<name>`` on the fixed problem; returns W, b, optimizer."""
    W = lib.tensor(W0, dtype=getattr(lib, dtype), requires_grad=True)
    b = lib.tensor(B0, dtype=getattr(lib, dtype), requires_grad=True)
    x, y = lib.tensor(X, dtype=getattr(lib, dtype)), lib.tensor(Y, dtype=getattr(lib, dtype))
    opt = getattr(lib.optim, name)([W, b], **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        r = W @ x + b - y
        loss = (r * r).sum() * 0.5 + (W**4).sum() * 0.25
        loss.backward()
        opt.step()
    return W, b, opt


def run_row(lib, row: tuple) -> tuple:  # noqa: ANN001
    """A TORCH_RUNS row recomputed in ``lib``: the same layout, W and b and b's state as lists
    (a 0-dim state entry as a float)."""
    name, kwargs, steps = row[:3]
    W, b, opt = _train(name, kwargs, steps, lib=lib)
    state = {k: (v.tolist() if v.dim() else v.item()) for k, v in opt.state[b].items()}
    return name, kwargs, steps, W.tolist(), b.tolist(), state


@pytest.mark.parametrize("run", TORCH_RUNS, ids=[f"{r[0]}{r[1]}" for r in TORCH_RUNS])
def test_parameters_and_state_are_torchs(run: tuple) -> None:
    name, kwargs, steps, w_want, b_want, state_want = run
    W, b, opt = _train(name, kwargs, steps)
    np.testing.assert_allclose(W.detach().numpy(), w_want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(b.detach().numpy(), b_want, rtol=1e-12, atol=1e-15)
    state = opt.state[b]
    assert list(state) == list(state_want)  # torch's keys, in torch's order
    for key, want in state_want.items():
        np.testing.assert_allclose(state[key].numpy(), want, rtol=1e-12, atol=1e-15,
                                   err_msg=key)
    # step (and NAdam's mu_product) are 0-dim float32 tensors under the float32 default dtype
    assert state["step"].shape == () and state["step"].dtype == gradviz.float32
    if name == "NAdam":
        assert state["mu_product"].shape == () and state["mu_product"].dtype == gradviz.float32


# torch 2.13.0's defaults, in its order, foreach/fused/capturable/differentiable included as
# torch writes them (gradviz computes one way, on NumPy, and raises NotImplementedError for
# differentiable/capturable set to True).
TORCH_DEFAULTS = {
    "Adagrad": {"lr": 0.01, "lr_decay": 0, "eps": 1e-10, "weight_decay": 0,
                "initial_accumulator_value": 0, "foreach": None, "maximize": False,
                "differentiable": False, "fused": None},
    "Adadelta": {"lr": 1.0, "rho": 0.9, "eps": 1e-06, "weight_decay": 0, "maximize": False,
                 "capturable": False, "foreach": None, "differentiable": False},
    "Adamax": {"lr": 0.002, "betas": (0.9, 0.999), "eps": 1e-08, "weight_decay": 0,
               "foreach": None, "maximize": False, "differentiable": False, "capturable": False},
    "NAdam": {"lr": 0.002, "betas": (0.9, 0.999), "eps": 1e-08, "weight_decay": 0,
              "momentum_decay": 0.004, "decoupled_weight_decay": False, "maximize": False,
              "foreach": None, "capturable": False, "differentiable": False},
    "RAdam": {"lr": 0.001, "betas": (0.9, 0.999), "eps": 1e-08, "weight_decay": 0,
              "maximize": False, "foreach": None, "capturable": False,
              "decoupled_weight_decay": False, "differentiable": False},
}
STATE_KEYS = {"Adagrad": ["step", "sum"], "Adadelta": ["step", "square_avg", "acc_delta"],
              "Adamax": ["step", "exp_avg", "exp_inf"],
              "NAdam": ["step", "mu_product", "exp_avg", "exp_avg_sq"],
              "RAdam": ["step", "exp_avg", "exp_avg_sq"]}


@pytest.mark.parametrize("name", NAMES)
def test_defaults_groups_and_state_dict_layout(name: str) -> None:
    W = gradviz.zeros(2, 3, requires_grad=True)
    b = gradviz.zeros(2, requires_grad=True)
    opt = getattr(optim, name)([{"params": [W]}, {"params": [b], "lr": 0.5}])
    assert opt.defaults == TORCH_DEFAULTS[name]
    assert list(opt.defaults) == list(TORCH_DEFAULTS[name])
    assert opt.param_groups[1] == {"params": [b], **TORCH_DEFAULTS[name], "lr": 0.5}
    (W.sum() + b.sum()).backward()
    opt.step()
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1]]
    assert {k: list(v) for k, v in sd["state"].items()} == {0: STATE_KEYS[name],
                                                            1: STATE_KEYS[name]}
    assert sd["state"][0]["step"].item() == 1.0
    assert repr(opt).startswith(f"{name} (\nParameter Group 0\n")


def test_adagrad_creates_its_state_at_construction() -> None:
    a = gradviz.ones(2, dtype=gradviz.float64, requires_grad=True)
    b = gradviz.ones(1, dtype=gradviz.float64, requires_grad=True)
    opt = optim.Adagrad([{"params": [a]}, {"params": [b], "initial_accumulator_value": 5.0}],
                        initial_accumulator_value=0.5)
    sd = opt.state_dict()["state"]
    assert list(sd) == [0, 1]
    # as in torch, the constructor's value fills every sum, even a group's own value's
    assert sd[0]["sum"].tolist() == [0.5, 0.5] and sd[1]["sum"].tolist() == [0.5]
    assert sd[0]["step"].item() == 0.0
    c = gradviz.ones(2, dtype=gradviz.float64, requires_grad=True)
    opt.add_param_group({"params": [c], "lr": 0.5})
    assert c not in opt.state  # a later group gets its state at its first step
    (c * c).sum().backward()
    opt.step()  # a and b have no gradient: untouched, their step stays 0
    assert opt.state[a]["step"].item() == 0.0 and a.tolist() == [1.0, 1.0]
    assert opt.state[c]["sum"].tolist() == [4.5, 4.5]
    np.testing.assert_allclose(c.detach().numpy(), 1 - 0.5 * 2 / (4.5**0.5 + 1e-10))


@pytest.mark.parametrize("name", NAMES)
def test_float32_parameters_keep_their_dtype(name: str) -> None:
    W, b, opt = _train(name, {"lr": 0.05}, 3, dtype="float32")
    assert W.dtype == b.dtype == gradviz.float32
    for key, value in opt.state[W].items():
        want = gradviz.float32 if key in ("step", "mu_product") else W.dtype
        assert value.dtype == want, key
    W64, b64, _ = _train(name, {"lr": 0.05}, 3)
    np.testing.assert_allclose(W.detach().numpy(), W64.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_step_is_an_in_place_update_with_a_closure(name: str) -> None:
    W = gradviz.tensor([1.0, -2.0], requires_grad=True)
    opt = getattr(optim, name)([W], lr=0.1)
    version = W._version
    data = W.detach()

    def closure():  # noqa: ANN202
        opt.zero_grad()
        loss = (W * W).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 5.0
    assert W._version == version + 1
    assert data.tolist() == W.tolist() != [1.0, -2.0]  # updated in place


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_round_trip_and_copies(name: str) -> None:
    W, b, opt = _train(name, {"lr": 0.05}, 3)
    saved = opt.state_dict()
    fresh = getattr(optim, name)([W, b], lr=0.7)
    fresh.load_state_dict(saved)
    assert fresh.param_groups[0]["lr"] == 0.05
    for key in STATE_KEYS[name]:
        np.testing.assert_array_equal(fresh.state[b][key].numpy(), opt.state[b][key].numpy())
    buffer = STATE_KEYS[name][-1]
    assert fresh.state[b][buffer] is not opt.state[b][buffer]  # loaded values are copies
    again = pickle.loads(pickle.dumps(opt))
    assert again.param_groups[0]["lr"] == copy.deepcopy(opt).param_groups[0]["lr"] == 0.05


@pytest.mark.parametrize("make,text", [
    (lambda p: optim.Adagrad([p], lr=-1.0), "Invalid learning rate: -1.0"),
    (lambda p: optim.Adagrad([p], lr_decay=-1.0), "Invalid lr_decay value: -1.0"),
    (lambda p: optim.Adagrad([p], weight_decay=-1.0), "Invalid weight_decay value: -1.0"),
    (lambda p: optim.Adagrad([p], initial_accumulator_value=-1.0),
     "Invalid initial_accumulator_value value: -1.0"),
    (lambda p: optim.Adagrad([p], eps=-1.0), "Invalid epsilon value: -1.0"),
    (lambda p: optim.Adadelta([p], rho=1.1), "Invalid rho value: 1.1"),
    (lambda p: optim.Adadelta([p], eps=-1.0), "Invalid epsilon value: -1.0"),
    (lambda p: optim.Adamax([p], betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (lambda p: optim.Adamax([p], betas=(0.9, -0.1)),
     "Invalid beta parameter at index 1: -0.1"),
    (lambda p: optim.NAdam([p], momentum_decay=-0.5), "Invalid momentum_decay value: -0.5"),
    (lambda p: optim.NAdam([p], weight_decay=-0.5), "Invalid weight_decay value: -0.5"),
    (lambda p: optim.RAdam([p], lr=-0.5), "Invalid learning rate: -0.5"),
    (lambda p: optim.RAdam([p], lr=gradviz.tensor([0.1, 0.2])), "Tensor lr must be 1-element"),
    (lambda p: optim.RAdam([]), "optimizer got an empty parameter list"),
])
def test_bad_hyperparameters_raise_torchs_errors(make, text: str) -> None:  # noqa: ANN001
    with pytest.raises(ValueError) as info:
        make(gradviz.ones(2, requires_grad=True))
    assert str(info.value) == text


@pytest.mark.parametrize("name", NAMES)
def test_differentiable_is_refused_plainly(name: str) -> None:
    with pytest.raises(NotImplementedError, match="not differentiable|neither differentiable"):
        getattr(optim, name)([gradviz.ones(1, requires_grad=True)], differentiable=True)


def test_the_new_optimizers_are_exported_like_torchs() -> None:
    import gradviz as torch

    for name in NAMES + ["lr_scheduler"]:
        assert name in torch.optim.__all__
    assert torch.optim.lr_scheduler.StepLR.__module__ == "gradviz.optim.lr_scheduler"
    assert issubclass(torch.optim.NAdam, torch.optim.Optimizer)
