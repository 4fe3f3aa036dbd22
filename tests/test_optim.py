"""gradviz.optim: the update formulas, checked against NumPy re-implementations written here from
the published algorithms (PyTorch's documentation), and the Optimizer API.

The expected values are computed independently of gradviz's code: the gradient of the fixed
problem below is derived by hand, and each optimizer's recurrence is written out in its textbook
form (e.g. Adam with explicit bias-corrected moments), in float64, to 1e-12.
"""

from __future__ import annotations

import copy
import math
import pickle
import time

import numpy as np
import pytest

import gradviz
from gradviz import nn, optim
from gradviz.data import make_moons

# -- a fixed small problem -----------------------------------------------------------------------
# loss(W, b) = 0.5 * || W @ x + b - y ||^2 + 0.25 * sum(W^4): gradients are
#   dW = outer(r, x) + W^3,  db = r,  with r = W @ x + b - y.
X = np.array([0.5, -1.5, 2.0])
Y = np.array([1.0, -2.0])
W0 = np.array([[0.3, -0.2, 0.1], [0.05, 0.4, -0.3]])
B0 = np.array([0.1, -0.1])
STEPS = 6


def _grads(W: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r = W @ X + b - Y
    return np.outer(r, X) + W**3, r


def _run_gradviz(make_opt, steps: int = STEPS) -> list[tuple[np.ndarray, np.ndarray]]:  # noqa: ANN001
    W = gradviz.tensor(W0, requires_grad=True)  # float64, from the NumPy array
    b = gradviz.tensor(B0, requires_grad=True)
    x, y = gradviz.tensor(X), gradviz.tensor(Y)
    opt = make_opt([W, b])
    history = []
    for _ in range(steps):
        opt.zero_grad()
        r = W @ x + b - y
        loss = (r * r).sum() * 0.5 + (W**4).sum() * 0.25
        loss.backward()
        opt.step()
        history.append((W.detach().numpy().copy(), b.detach().numpy().copy()))
    return history


def _sgd_reference(lr: float, momentum: float = 0.0, dampening: float = 0.0,
                   weight_decay: float = 0.0, nesterov: bool = False, maximize: bool = False
                   ) -> list[tuple[np.ndarray, np.ndarray]]:
    params = [W0.copy(), B0.copy()]
    bufs: list[np.ndarray | None] = [None, None]
    history = []
    for _ in range(STEPS):
        grads = _grads(*params)
        for i, (theta, g) in enumerate(zip(params, grads, strict=True)):
            if maximize:
                g = -g
            if weight_decay:
                g = g + weight_decay * theta
            if momentum:
                bufs[i] = g.copy() if bufs[i] is None else momentum * bufs[i] + (1 - dampening) * g
                g = g + momentum * bufs[i] if nesterov else bufs[i]
            params[i] = theta - lr * g
        history.append((params[0].copy(), params[1].copy()))
    return history


def _adam_reference(lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                    weight_decay: float = 0.0, amsgrad: bool = False, decoupled: bool = False,
                    maximize: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
    b1, b2 = betas
    params = [W0.copy(), B0.copy()]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    v_hat_max = [np.zeros_like(p) for p in params]
    history = []
    for t in range(1, STEPS + 1):
        grads = _grads(*params)
        for i, (theta, g) in enumerate(zip(params, grads, strict=True)):
            if maximize:
                g = -g
            if decoupled:
                theta = theta - lr * weight_decay * theta
            elif weight_decay:
                g = g + weight_decay * theta
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            m_hat = m[i] / (1 - b1**t)
            if amsgrad:
                v_hat_max[i] = np.maximum(v_hat_max[i], v[i])
                v_hat = v_hat_max[i] / (1 - b2**t)
            else:
                v_hat = v[i] / (1 - b2**t)
            params[i] = theta - lr * m_hat / (np.sqrt(v_hat) + eps)
        history.append((params[0].copy(), params[1].copy()))
    return history


def _assert_same(got: list, expected: list) -> None:
    assert len(got) == len(expected)
    for (gw, gb), (ew, eb) in zip(got, expected, strict=True):
        np.testing.assert_allclose(gw, ew, rtol=0, atol=1e-12)
        np.testing.assert_allclose(gb, eb, rtol=0, atol=1e-12)


def test_the_reference_gradient_is_the_autograd_gradient() -> None:
    W = gradviz.tensor(W0, requires_grad=True)
    b = gradviz.tensor(B0, requires_grad=True)
    r = W @ gradviz.tensor(X) + b - gradviz.tensor(Y)
    ((r * r).sum() * 0.5 + (W**4).sum() * 0.25).backward()
    dW, db = _grads(W0, B0)
    np.testing.assert_allclose(W.grad.numpy(), dW, rtol=0, atol=1e-14)
    np.testing.assert_allclose(b.grad.numpy(), db, rtol=0, atol=1e-14)


SGD_CASES = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3),
    dict(lr=0.05, momentum=0.8, nesterov=True),
    dict(lr=0.1, weight_decay=0.01),
    dict(lr=0.05, momentum=0.9, weight_decay=0.1, nesterov=True),
    dict(lr=0.01, momentum=0.5, maximize=True),
]


@pytest.mark.parametrize("kwargs", SGD_CASES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in
                                                                      kw.items()))
def test_sgd_matches_the_formula(kwargs: dict) -> None:
    _assert_same(_run_gradviz(lambda ps: optim.SGD(ps, **kwargs)), _sgd_reference(**kwargs))


ADAM_CASES = [
    dict(lr=0.1),
    dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6),
    dict(lr=0.1, weight_decay=0.1),
    dict(lr=0.1, amsgrad=True),
    dict(lr=0.1, weight_decay=0.05, amsgrad=True),
    dict(lr=0.02, maximize=True),
    dict(lr=0.1, betas=(0.3, 0.999)),  # 1 - beta1 >= 0.5: the other branch of lerp
]


@pytest.mark.parametrize("kwargs", ADAM_CASES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in
                                                                       kw.items()))
def test_adam_matches_the_formula(kwargs: dict) -> None:
    _assert_same(_run_gradviz(lambda ps: optim.Adam(ps, **kwargs)), _adam_reference(**kwargs))


@pytest.mark.parametrize("kwargs", [dict(lr=0.1), dict(lr=0.1, weight_decay=0.3),
                                    dict(lr=0.05, weight_decay=0.1, amsgrad=True)],
                         ids=["default-decay", "decay", "amsgrad"])
def test_adamw_matches_the_formula(kwargs: dict) -> None:
    expected = _adam_reference(decoupled=True, **{"weight_decay": 1e-2, **kwargs})
    _assert_same(_run_gradviz(lambda ps: optim.AdamW(ps, **kwargs)), expected)
    via_adam = _run_gradviz(lambda ps: optim.Adam(ps, decoupled_weight_decay=True,
                                                  **{"weight_decay": 1e-2, **kwargs}))
    _assert_same(via_adam, expected)


def test_adam_state_and_step_counter() -> None:
    w = gradviz.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.Adam([w], lr=0.1, amsgrad=True)
    for _ in range(3):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    state = opt.state[w]
    assert sorted(state) == ["exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"]
    assert state["step"].item() == 3.0 and state["step"].dtype is gradviz.float32
    assert state["exp_avg"].shape == (2,) and state["exp_avg"].dtype is gradviz.float32


def test_float32_parameters_stay_float32() -> None:
    for make in (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), lambda ps: optim.Adam(ps)):
        w = gradviz.tensor([1.0, -1.0], requires_grad=True)
        opt = make([w])
        (w * w).sum().backward()
        opt.step()
        assert w.dtype is gradviz.float32 and w.is_leaf and w.requires_grad


def test_step_skips_parameters_without_gradients_and_bumps_versions() -> None:
    a = gradviz.ones(2, requires_grad=True)
    b = gradviz.ones(2, requires_grad=True)
    opt = optim.SGD([a, b], lr=0.5)
    (a * 2).sum().backward()
    va, vb = a._version, b._version
    opt.step()
    assert a.tolist() == [0.0, 0.0] and b.tolist() == [1.0, 1.0]
    assert a._version == va + 1 and b._version == vb
    assert len(opt.state) == 0  # no momentum: no state


def test_step_after_forward_invalidates_saved_tensors_like_pytorch() -> None:
    w = gradviz.ones(2, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    loss = (w * w).sum()
    (w * 3).sum().backward()
    opt.step()  # modifies w in place, which `loss` saved
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_closure_is_called_with_grad_enabled_and_its_loss_returned() -> None:
    w = gradviz.tensor([3.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)

    def closure() -> gradviz.Tensor:
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with gradviz.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 9.0
    assert w.tolist() == pytest.approx([2.4])


def test_zero_grad_modes() -> None:
    w = gradviz.ones(2, requires_grad=True)
    opt = optim.Adam([w])
    (w * 2).sum().backward()
    g = w.grad
    opt.zero_grad(set_to_none=False)
    assert w.grad is g and g.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None


def test_param_groups_defaults_and_add_param_group() -> None:
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    opt = optim.SGD([{"params": model[0].parameters()},
                     {"params": model[1].parameters(), "lr": 0.5, "momentum": 0.9}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert [g["momentum"] for g in opt.param_groups] == [0, 0.9]
    assert opt.defaults == {"lr": 0.1, "momentum": 0, "dampening": 0, "weight_decay": 0,
                            "nesterov": False, "maximize": False, "foreach": None,
                            "differentiable": False, "fused": None}
    extra = gradviz.ones(1, requires_grad=True)
    opt.add_param_group({"params": extra, "lr": 1.0})
    assert opt.param_groups[-1]["params"] == [extra]
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter "
                                         "group"):
        opt.add_param_group({"params": [extra]})


def test_groups_use_their_own_hyperparameters() -> None:
    a = gradviz.ones(1, requires_grad=True)
    b = gradviz.ones(1, requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    (a + b).sum().backward()
    opt.step()
    assert a.tolist() == pytest.approx([0.9]) and b.tolist() == pytest.approx([0.0])


def test_constructor_errors_are_pytorchs() -> None:
    w = gradviz.ones(1, requires_grad=True)
    with pytest.raises(TypeError, match="params argument given to the optimizer should be an "
                                        "iterable of Tensors or dicts, but got "
                                        "gradviz.FloatTensor"):
        optim.SGD(w, lr=0.1)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.SGD([w], lr=-1)
    with pytest.raises(ValueError, match="Invalid momentum value: -0.5"):
        optim.SGD([w], lr=0.1, momentum=-0.5)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero "
                                         "dampening"):
        optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        optim.Adam([w], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Invalid epsilon value: -1"):
        optim.Adam([w], eps=-1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([w * 2], lr=0.1)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the "
                                        "params is int"):
        optim.SGD([1], lr=0.1)


def test_named_parameters_are_accepted() -> None:
    model = nn.Linear(2, 1)
    opt = optim.SGD(model.named_parameters(), lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.param_groups[0]["params"] == [model.weight, model.bias]


def test_repr() -> None:
    w = gradviz.ones(1, requires_grad=True)
    assert repr(optim.SGD([w], lr=0.1)) == (
        "SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n"
        "    foreach: None\n    fused: None\n    lr: 0.1\n    maximize: False\n"
        "    momentum: 0\n    nesterov: False\n    weight_decay: 0\n)")
    assert repr(optim.Adam([w])).startswith(
        "Adam (\nParameter Group 0\n    amsgrad: False\n    betas: (0.9, 0.999)\n")


def _train_a_bit(opt_factory, params, steps: int = 3) -> None:  # noqa: ANN001
    opt = opt_factory(params)
    for _ in range(steps):
        opt.zero_grad()
        sum((p * p).sum() for p in params).backward()
        opt.step()
    return opt


def test_state_dict_round_trip_continues_identically() -> None:
    for factory in (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
                    lambda ps: optim.Adam(ps, lr=0.1, amsgrad=True)):
        a = [gradviz.tensor([1.0, -2.0], requires_grad=True), gradviz.tensor([0.5],
                                                                             requires_grad=True)]
        opt_a = _train_a_bit(factory, a)
        sd = opt_a.state_dict()
        assert sorted(sd) == ["param_groups", "state"]
        assert sd["param_groups"][0]["params"] == [0, 1]
        assert sorted(sd["state"]) == [0, 1]
        b = [gradviz.tensor(p.detach().numpy().copy(), requires_grad=True) for p in a]
        opt_b = factory(b)
        opt_b.load_state_dict(copy.deepcopy(sd))
        for state in opt_b.state.values():  # a deep copy, not shared with opt_a
            for value in state.values():
                assert all(value is not v for s in opt_a.state.values() for v in s.values())
        for opt, ps in ((opt_a, a), (opt_b, b)):
            for _ in range(3):
                opt.zero_grad()
                sum((p * p).sum() for p in ps).backward()
                opt.step()
        for pa, pb in zip(a, b, strict=True):
            np.testing.assert_array_equal(pa.detach().numpy(), pb.detach().numpy())


def test_load_state_dict_errors_are_pytorchs() -> None:
    a = gradviz.ones(1, requires_grad=True)
    b = gradviz.ones(1, requires_grad=True)
    one_group = optim.SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="loaded state dict has a different number of "
                                         "parameter groups"):
        optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(one_group)
    with pytest.raises(ValueError, match="loaded state dict contains a parameter group that "
                                         "doesn't match the size of optimizer's group"):
        optim.SGD([a], lr=0.1).load_state_dict(one_group)


def test_optimizer_pickles() -> None:
    w = gradviz.tensor([1.0], requires_grad=True)
    opt = _train_a_bit(lambda ps: optim.Adam(ps, lr=0.1), [w])
    clone = pickle.loads(pickle.dumps(opt))
    assert clone.param_groups[0]["lr"] == 0.1 and len(clone.state) == 1


# -- end to end: a two-layer MLP on two moons ---------------------------------------------------
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_mlp_learns_two_moons(opt_name: str) -> None:
    gradviz.manual_seed(0)
    X_, y_ = make_moons(200, noise=0.1, seed=0)
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    if opt_name == "SGD":
        opt, steps = optim.SGD(model.parameters(), lr=0.2, momentum=0.9), 300
    else:
        opt, steps = optim.Adam(model.parameters(), lr=0.05), 200
    loss_fn = nn.CrossEntropyLoss()
    start = time.perf_counter()
    first = None
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(X_), y_)
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
    elapsed = time.perf_counter() - start
    with gradviz.no_grad():
        pred = model(X_).numpy().argmax(1)
    accuracy = (pred == y_.numpy()).mean()
    assert accuracy > 0.95, (opt_name, accuracy)
    assert loss.item() < first / 5
    assert elapsed < 20, elapsed  # a few seconds normally; generous for slow CI machines
    assert math.isfinite(loss.item())
