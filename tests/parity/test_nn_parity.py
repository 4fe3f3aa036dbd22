"""gradviz.nn against torch.nn: reprs, state_dict keys and error texts, init formulas.

torch is imported inside the tests (collection works without it; see conftest.py for how a
missing torch is handled).
"""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

import gradviz
from gradviz import nn


def _build(lib_nn):  # noqa: ANN001, ANN202
    """One model touching every module gradviz provides, built with ``lib_nn``."""
    lin = lib_nn.Linear(1, 1, bias=False)

    class Net(lib_nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = lib_nn.Linear(3, 2)
            self.norm = lib_nn.LayerNorm(2)

        def forward(self, x):  # noqa: ANN001, ANN202
            return self.norm(self.fc(x))

    return lib_nn.Sequential(OrderedDict([
        ("net", Net()),
        ("stack", lib_nn.Sequential(lib_nn.Linear(2, 16), lib_nn.ReLU(), lib_nn.Dropout(0.25),
                                    lib_nn.GELU(approximate="tanh"), lib_nn.Tanh(),
                                    lib_nn.Sigmoid(), lib_nn.Identity(), lib_nn.Flatten(0, -1))),
        ("emb", lib_nn.Embedding(10, 3, padding_idx=-2)),
        ("list", lib_nn.ModuleList([lin, lin, lin, lib_nn.ReLU(inplace=True), lib_nn.ReLU()])),
        ("dict", lib_nn.ModuleDict({"sm": lib_nn.Softmax(dim=1),
                                    "lsm": lib_nn.LogSoftmax(dim=-1)})),
        ("ln", lib_nn.LayerNorm((2, 3), eps=1e-6, elementwise_affine=False)),
        ("losses", lib_nn.ModuleList([lib_nn.MSELoss(), lib_nn.CrossEntropyLoss(),
                                      lib_nn.NLLLoss(), lib_nn.Linear(4, 5, bias=False),
                                      lib_nn.L1Loss(), lib_nn.BCELoss(),
                                      lib_nn.BCEWithLogitsLoss(pos_weight=None)])),
        ("acts", lib_nn.Sequential(lib_nn.LeakyReLU(), lib_nn.LeakyReLU(0.2, inplace=True),
                                   lib_nn.ELU(), lib_nn.ELU(0.5, True), lib_nn.SiLU(),
                                   lib_nn.SiLU(inplace=True), lib_nn.Softplus(),
                                   lib_nn.Softplus(2, 10))),
        ("emb2", lib_nn.Embedding(5, 2, max_norm=1.0, norm_type=3.0, scale_grad_by_freq=True)),
    ]))


def test_reprs_match_torch() -> None:
    import torch

    assert repr(_build(nn)) == repr(_build(torch.nn))
    assert repr(nn.Parameter(gradviz.ones(2))) == repr(torch.nn.Parameter(torch.ones(2)))
    assert repr(nn.Parameter(gradviz.tensor([[1.5, 2.0]]), requires_grad=False)) == repr(
        torch.nn.Parameter(torch.tensor([[1.5, 2.0]]), requires_grad=False))


def test_traversal_names_match_torch() -> None:
    import torch

    ours, theirs = _build(nn), _build(torch.nn)
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert ([n for n, _ in ours.named_modules(remove_duplicate=False)]
            == [n for n, _ in theirs.named_modules(remove_duplicate=False)])
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert ([(n, tuple(p.shape)) for n, p in ours.named_parameters()]
            == [(n, tuple(p.shape)) for n, p in theirs.named_parameters()])
    assert list(ours.state_dict()) == list(theirs.state_dict())
    order_ours: list[str] = []
    order_theirs: list[str] = []
    ours.apply(lambda m: order_ours.append(type(m).__name__))
    theirs.apply(lambda m: order_theirs.append(type(m).__name__))
    assert order_ours == order_theirs


def test_load_state_dict_messages_match_torch() -> None:
    import torch

    def message(lib, state: dict, strict: bool = True) -> str:  # noqa: ANN001
        model = _build(lib.nn)
        full = {k: lib.zeros(*v.shape) for k, v in model.state_dict().items()}
        full.update({k: lib.zeros(*shape) for k, shape in state.items() if shape is not None})
        for k, shape in state.items():
            if shape is None:
                del full[k]
        try:
            return repr(model.load_state_dict(full, strict=strict))
        except RuntimeError as e:
            return str(e)

    cases = [
        {},
        {"net.fc.bias": None, "list.0.weight": None, "extra": (1,), "net.other": (2,),
         "nope.weight": (1,)},
        {"net.fc.weight": (3, 2), "emb.weight": (10, 4)},
        {"net.fc.weight": (3, 2), "net.fc.bias": None, "extra": (1,)},
    ]
    for state in cases:
        for strict in (True, False):
            ours = message(gradviz, state, strict).replace("gradviz.Size", "torch.Size")
            assert ours == message(torch, state, strict)


def test_init_formulas_match_torch() -> None:
    import torch

    for args in (("linear",), ("sigmoid",), ("tanh",), ("relu",), ("leaky_relu",),
                 ("leaky_relu", 0.2), ("leaky_relu", math.sqrt(5)), ("selu",), ("conv2d",)):
        assert nn.init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)
    for shape in ((3, 2), (4, 3, 5, 5), (1, 7, 2)):
        assert (nn.init._calculate_fan_in_and_fan_out(gradviz.empty(*shape))
                == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape)))
    # Same bounds: the largest |value| of n uniform draws lies in [bound * (1 - 20/n), bound]
    # except with probability about e**-20, whatever the seed (the two libraries' generators
    # differ, so their samples are compared through the bound, not with each other).
    gradviz.manual_seed(0)
    torch.manual_seed(0)

    def near_bound(values: np.ndarray, bound: float) -> bool:
        big = float(abs(values).max())
        return bound * (1 - 20 / values.size) <= big <= bound * (1 + 1e-6)

    # (300, 200): fan_in 200, fan_out 300. kaiming_uniform_ (a=0): sqrt(2) * sqrt(3 / fan_in);
    # xavier_uniform_: sqrt(6 / (fan_in + fan_out)).
    for fill, bound in (("kaiming_uniform_", math.sqrt(2) * math.sqrt(3 / 200)),
                        ("xavier_uniform_", math.sqrt(6 / 500))):
        ours = getattr(nn.init, fill)(gradviz.empty(300, 200)).numpy()
        theirs = getattr(torch.nn.init, fill)(torch.empty(300, 200)).numpy()
        assert near_bound(theirs, bound), fill  # the formula is torch's
        assert near_bound(ours, bound), fill
    ours_lin, theirs_lin = nn.Linear(200, 300), torch.nn.Linear(200, 300)
    for a, b in ((ours_lin.weight, theirs_lin.weight), (ours_lin.bias, theirs_lin.bias)):
        bound = 1 / math.sqrt(200)
        assert near_bound(a.detach().numpy(), bound)
        assert near_bound(b.detach().numpy(), bound)


def test_module_error_texts_match_torch() -> None:
    import torch

    def message(fn) -> str:  # noqa: ANN001
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            return f"{type(e).__name__}: {e}"
        return "no error"

    def cases(lib):  # noqa: ANN001, ANN202
        m = lib.nn.Linear(2, 2)
        return [
            lambda: m.missing,
            lambda: lib.nn.Module()(1),
            lambda: lib.nn.Sequential(lib.nn.ReLU())[3],
            lambda: lib.nn.ModuleList([lib.nn.ReLU()])[-2],
            lambda: lib.nn.Dropout(-0.1),
            lambda: m.register_parameter("a.b", None),
            lambda: m.register_parameter("", None),
            lambda: m.register_parameter("in_features", None),
            lambda: m.add_module("x.y", lib.nn.ReLU()),
            lambda: m.train("yes"),
            lambda: m.load_state_dict(3),
            lambda: lib.nn.Embedding(3, 2, padding_idx=5),
            lambda: lib.nn.Sequential(m).get_submodule("0.nope"),
            lambda: lib.nn.init.calculate_gain("swish"),
            lambda: lib.nn.init.kaiming_normal_(lib.empty(2, 2), mode="avg"),
            lambda: lib.nn.init._calculate_fan_in_and_fan_out(lib.empty(2)),
        ]

    for ours, theirs in zip(cases(gradviz), cases(torch), strict=True):
        assert message(ours).replace("gradviz", "torch") == message(theirs)


def test_same_weights_give_same_training_step_as_torch() -> None:
    import torch

    def mlp(lib_nn):  # noqa: ANN001, ANN202
        return lib_nn.Sequential(lib_nn.Linear(3, 8), lib_nn.Tanh(), lib_nn.LayerNorm(8),
                                 lib_nn.GELU(), lib_nn.Linear(8, 4))

    theirs = mlp(torch.nn).double()
    ours = mlp(nn).double()
    ours.load_state_dict({k: gradviz.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((6, 3)), rng.integers(0, 4, 6)
    opt_t = torch.optim.AdamW(theirs.parameters(), lr=0.01)
    opt_o = gradviz.optim.AdamW(ours.parameters(), lr=0.01)
    for _ in range(3):
        for model, opt, lib in ((theirs, opt_t, torch), (ours, opt_o, gradviz)):
            opt.zero_grad()
            loss = lib.nn.CrossEntropyLoss()(model(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            opt.step()
    for (name, p), (tname, tp) in zip(ours.named_parameters(), theirs.named_parameters(),
                                      strict=True):
        assert name == tname
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=0, atol=1e-12)
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=0, atol=1e-12)
