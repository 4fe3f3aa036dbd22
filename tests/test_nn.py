"""gradviz.nn modules, parameters and init: the API, reprs and texts PyTorch users rely on.

Expected reprs and error texts were taken from torch 2.13 (see tests/parity/test_nn_parity.py,
which compares them live when torch is installed); this file never imports torch.
"""

from __future__ import annotations

import copy
import math
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import gradviz
from gradviz import nn
from gradviz.autograd import events
from gradviz.nn import init


@pytest.fixture(autouse=True)
def _seed() -> None:
    gradviz.manual_seed(0)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(2, 4)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(4, 1)

    def forward(self, x: gradviz.Tensor) -> gradviz.Tensor:
        return self.fc2(self.act(self.fc1(x)))


def test_import_gradviz_as_torch_reaches_nn_and_optim() -> None:
    import gradviz as torch

    assert torch.nn.Linear is nn.Linear and torch.optim.SGD is not None
    assert torch.nn.functional is nn.functional and torch.nn.init is init
    assert torch.nn.Parameter is nn.Parameter and torch.nn.Module is nn.Module


# -- Parameter -----------------------------------------------------------------------------------
def test_parameter_is_a_leaf_tensor_that_requires_grad() -> None:
    data = gradviz.ones(2)
    p = nn.Parameter(data)
    assert isinstance(p, gradviz.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert not nn.Parameter(data, requires_grad=False).requires_grad
    data._data[0] = 5.0  # shares memory with its data, as torch.nn.Parameter does
    assert p.tolist() == [5.0, 1.0]
    assert nn.Parameter().shape == (0,)
    y = p * 2  # results of ops are plain tensors
    assert type(y) is gradviz.Tensor


def test_parameter_repr() -> None:
    assert repr(nn.Parameter(gradviz.ones(2))) == (
        "Parameter containing:\ntensor([1., 1.], requires_grad=True)")
    assert repr(nn.Parameter(gradviz.ones(2), requires_grad=False)) == (
        "Parameter containing:\ntensor([1., 1.])")
    assert repr(nn.Parameter(gradviz.ones(2, 2))) == (
        "Parameter containing:\ntensor([[1., 1.],\n        [1., 1.]], requires_grad=True)")


def test_parameter_deepcopy_and_pickle_keep_type_and_values() -> None:
    p = nn.Parameter(gradviz.tensor([1.0, 2.0]))
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert type(q) is nn.Parameter and q.requires_grad
        assert q.tolist() == [1.0, 2.0]
        assert q._data is not p._data


# -- reprs ---------------------------------------------------------------------------------------
def test_sequential_repr_is_pytorchs() -> None:
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU())
    assert repr(model) == ("Sequential(\n  (0): Linear(in_features=2, out_features=16, "
                           "bias=True)\n  (1): ReLU()\n)")
    assert str(model) == repr(model)


def test_layer_reprs_are_pytorchs() -> None:
    cases = {
        nn.Linear(3, 1, bias=False): "Linear(in_features=3, out_features=1, bias=False)",
        nn.ReLU(): "ReLU()",
        nn.ReLU(inplace=True): "ReLU(inplace=True)",
        nn.Tanh(): "Tanh()",
        nn.Sigmoid(): "Sigmoid()",
        nn.GELU(): "GELU(approximate='none')",
        nn.GELU(approximate="tanh"): "GELU(approximate='tanh')",
        nn.Dropout(): "Dropout(p=0.5, inplace=False)",
        nn.Dropout(0.1): "Dropout(p=0.1, inplace=False)",
        nn.Embedding(10, 3): "Embedding(10, 3)",
        nn.Embedding(10, 3, padding_idx=-1): "Embedding(10, 3, padding_idx=9)",
        nn.LayerNorm(4): "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)",
        nn.LayerNorm((2, 3), elementwise_affine=False):
            "LayerNorm((2, 3), eps=1e-05, elementwise_affine=False, bias=False)",
        nn.MSELoss(): "MSELoss()",
        nn.CrossEntropyLoss(): "CrossEntropyLoss()",
        nn.NLLLoss(): "NLLLoss()",
        nn.Identity(): "Identity()",
        nn.Flatten(): "Flatten(start_dim=1, end_dim=-1)",
        nn.Softmax(dim=1): "Softmax(dim=1)",
        nn.LeakyReLU(): "LeakyReLU(negative_slope=0.01)",
        nn.LeakyReLU(0.2, inplace=True): "LeakyReLU(negative_slope=0.2, inplace=True)",
        nn.ELU(): "ELU(alpha=1.0)",
        nn.SiLU(): "SiLU()",
        nn.Softplus(2, 10): "Softplus(beta=2, threshold=10)",
        nn.L1Loss(): "L1Loss()",
        nn.BCELoss(): "BCELoss()",
        nn.BCEWithLogitsLoss(): "BCEWithLogitsLoss()",
        nn.Embedding(5, 2, max_norm=1.0, norm_type=3.0, scale_grad_by_freq=True):
            "Embedding(5, 2, max_norm=1.0, norm_type=3.0, scale_grad_by_freq=True)",
        nn.LogSoftmax(dim=-1): "LogSoftmax(dim=-1)",
        nn.Module(): "Module()",
        nn.Sequential(): "Sequential()",
        nn.ModuleList(): "ModuleList()",
    }
    for module, text in cases.items():
        assert repr(module) == text


def test_nested_repr_indents_and_modulelist_compresses_repeats() -> None:
    lin = nn.Linear(1, 1, bias=False)
    model = nn.Sequential(OrderedDict([
        ("body", nn.ModuleList([lin, lin, lin, nn.ReLU()])),
        ("heads", nn.ModuleDict({"a": nn.Tanh()})),
    ]))
    assert repr(model) == (
        "Sequential(\n"
        "  (body): ModuleList(\n"
        "    (0-2): 3 x Linear(in_features=1, out_features=1, bias=False)\n"
        "    (3): ReLU()\n"
        "  )\n"
        "  (heads): ModuleDict(\n"
        "    (a): Tanh()\n"
        "  )\n"
        ")")
    assert repr(Net()) == (
        "Net(\n"
        "  (fc1): Linear(in_features=2, out_features=4, bias=True)\n"
        "  (act): Tanh()\n"
        "  (fc2): Linear(in_features=4, out_features=1, bias=True)\n"
        ")")


def test_multiline_extra_repr() -> None:
    class Two(nn.Module):
        def extra_repr(self) -> str:
            return "a=1\nb=2"

    assert repr(Two()) == "Two(\n  a=1\n  b=2\n)"


# -- registration and traversal -----------------------------------------------------------------
def test_named_parameters_children_modules() -> None:
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [p.shape for p in net.parameters()] == [(4, 2), (4,), (1, 4), (1,)]
    assert list(net.parameters(recurse=False)) == []
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert list(net.children()) == [net.fc1, net.act, net.fc2]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "fc2"]
    assert list(net.modules())[0] is net
    assert [n for n, _ in net.named_parameters(prefix="model")][:1] == ["model.fc1.weight"]


def test_traversal_is_preorder_and_deduplicates_shared_members() -> None:
    shared = nn.Linear(1, 1)
    model = nn.Sequential(nn.Sequential(shared, nn.ReLU()), shared)
    assert [n for n, _ in model.named_modules()] == ["", "0", "0.0", "0.1"]
    assert [n for n, _ in model.named_modules(remove_duplicate=False)] == [
        "", "0", "0.0", "0.1", "1"]
    assert [n for n, _ in model.named_parameters()] == ["0.0.weight", "0.0.bias"]
    assert len(list(model.named_parameters(remove_duplicate=False))) == 4
    assert list(model.state_dict()) == ["0.0.weight", "0.0.bias", "1.weight", "1.bias"]


def test_deep_module_tree_is_traversed_without_recursion() -> None:
    depth = 5000
    root = inner = nn.Sequential()
    for _ in range(depth):
        child = nn.Sequential()
        inner.append(child)
        inner = child
    inner.append(nn.Linear(1, 1))
    assert len(list(root.modules())) == depth + 2
    assert len(list(root.parameters())) == 2
    assert len(root.state_dict()) == 2
    root.eval()
    root.apply(lambda m: None)


def test_buffers_and_state_dict_persistence() -> None:
    m = nn.Module()
    m.register_buffer("running", gradviz.zeros(2))
    m.register_buffer("scratch", gradviz.ones(1), persistent=False)
    m.register_buffer("nothing", None)
    assert [n for n, _ in m.named_buffers()] == ["running", "scratch"]
    assert list(m.state_dict()) == ["running"]
    m.running = gradviz.ones(2)  # assigning to a registered buffer keeps it a buffer
    assert m._buffers["running"].tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="cannot assign 'int' as buffer 'running'"):
        m.running = 3


def test_setattr_registers_and_delattr_unregisters() -> None:
    m = nn.Module()
    m.w = nn.Parameter(gradviz.ones(1))
    m.sub = nn.ReLU()
    m.plain = gradviz.ones(1)  # a plain tensor is just an attribute
    assert list(m._parameters) == ["w"] and list(m._modules) == ["sub"]
    assert "plain" not in m.state_dict()
    del m.w, m.sub
    assert not m._parameters and not m._modules
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'w'"):
        m.w  # noqa: B018


def test_registration_errors_have_pytorchs_texts() -> None:
    m = nn.Module()
    m.w = nn.Parameter(gradviz.ones(1))
    with pytest.raises(TypeError, match=r"cannot assign 'gradviz.FloatTensor' as parameter "
                                        r"'w' \(gradviz.nn.Parameter or None expected\)"):
        m.w = gradviz.ones(1)
    with pytest.raises(KeyError) as key_error:
        m.register_parameter("a.b", None)
    assert key_error.value.args == ('parameter name can\'t contain "."',)
    with pytest.raises(KeyError, match="attribute 'training' already exists"):
        m.register_parameter("training", None)
    with pytest.raises(TypeError, match=r"cannot assign 'gradviz.FloatTensor' object to "
                                        r"parameter 'y' \(gradviz.nn.Parameter or None "
                                        r"required\)"):
        m.register_parameter("y", gradviz.ones(1))  # type: ignore[arg-type]

    class Early(nn.Module):
        def __init__(self) -> None:
            self.fc = nn.Linear(1, 1)

    with pytest.raises(AttributeError, match=r"cannot assign module before "
                                             r"Module.__init__\(\) call"):
        Early()
    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required '
                                                   r'"forward" function'):
        nn.Module()(1)
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        m.add_module("x", 3)  # type: ignore[arg-type]


def test_registering_a_non_leaf_parameter_fails() -> None:
    m = nn.Module()
    x = gradviz.ones(1, requires_grad=True)
    p = nn.Parameter(x)
    p.grad_fn = (x * 2).grad_fn  # simulate a non-leaf Parameter
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'p'. "
                                         "Model parameters must be created explicitly"):
        m.register_parameter("p", p)


def test_get_submodule() -> None:
    net = nn.Sequential(Net())
    assert net.get_submodule("0.fc2") is net[0].fc2
    assert net.get_submodule("") is net
    with pytest.raises(AttributeError, match="Net has no attribute `nope`"):
        net.get_submodule("0.nope")


# -- containers ---------------------------------------------------------------------------------
def test_sequential_indexing_len_iteration_append() -> None:
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    model = nn.Sequential(a, b)
    assert len(model) == 2 and model[0] is a and model[-1] is b and list(model) == [a, b]
    assert model.append(c) is model and model[2] is c
    sliced = model[1:]
    assert isinstance(sliced, nn.Sequential) and list(sliced._modules) == ["1", "2"]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        model[3]
    model[1] = nn.Tanh()
    assert isinstance(model[1], nn.Tanh)
    del model[0]
    assert list(model._modules) == ["0", "1"] and model[1] is c
    named = nn.Sequential(OrderedDict([("fc", nn.Linear(1, 1)), ("act", nn.ReLU())]))
    assert list(named._modules) == ["fc", "act"] and named.fc is named[0]
    model.insert(0, nn.Identity())
    assert isinstance(model[0], nn.Identity) and len(model) == 3


def test_sequential_forward_chains_modules() -> None:
    model = nn.Sequential(nn.Identity(), nn.ReLU(), nn.Tanh())
    out = model(gradviz.tensor([-1.0, 0.5]))
    np.testing.assert_allclose(out.tolist(), [0.0, math.tanh(0.5)], rtol=1e-6)


def test_modulelist_and_moduledict() -> None:
    layers = nn.ModuleList([nn.Linear(1, 1) for _ in range(2)])
    layers.append(nn.ReLU())
    layers.extend([nn.Tanh()])
    assert len(layers) == 4 and isinstance(layers[-1], nn.Tanh)
    assert isinstance(layers[1:], nn.ModuleList) and len(layers[1:]) == 3
    assert len(list(layers.parameters())) == 4
    with pytest.raises(IndexError, match="index 4 is out of range"):
        layers[4]
    del layers[0]
    assert list(layers._modules) == ["0", "1", "2"]
    with pytest.raises(NotImplementedError):
        layers(gradviz.ones(1))
    heads = nn.ModuleDict({"a": nn.ReLU()})
    heads["b"] = nn.Tanh()
    assert list(heads) == ["a", "b"] and "b" in heads and len(heads) == 2
    assert heads.pop("a").__class__ is nn.ReLU and list(heads.keys()) == ["b"]


# -- qualified names on parameters (what the visualizer labels leaves with) ----------------------
def test_parameters_are_named_by_their_qualified_names() -> None:
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    # Registration alone names them (no call to named_parameters needed).
    assert [model[0].weight.name, model[0].bias.name, model[2].weight.name] == [
        "0.weight", "0.bias", "2.weight"]
    net = Net()
    assert net.fc1.bias.name == "fc1.bias"
    lone = nn.Linear(1, 1)
    assert lone.weight.name == "weight"


def test_names_follow_nesting_and_later_registration() -> None:
    class Outer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(1, 1)])  # filled before it is attached...

    outer = Outer()
    outer.layers.append(nn.Linear(1, 1))  # ...and after: named "1.weight" for now
    assert outer.layers[0].weight.name == "layers.0.weight"
    assert outer.layers[1].weight.name == "1.weight"
    list(outer.parameters())  # the root's named_parameters renames from the root
    assert outer.layers[1].weight.name == "layers.1.weight"
    # Calling named_parameters on a submodule does not overwrite root-qualified names.
    list(outer.layers[1].named_parameters())
    assert outer.layers[1].weight.name == "layers.1.weight"
    nn.Sequential(outer)  # nesting again re-prefixes
    assert outer.layers[0].bias.name == "0.layers.0.bias"


def test_user_names_are_never_overwritten() -> None:
    lin = nn.Linear(2, 2)
    lin.weight.name = "W"
    model = nn.Sequential(lin)
    list(model.named_parameters())
    assert lin.weight.name == "W" and lin.bias.name == "0.bias"
    p = nn.Parameter(gradviz.ones(1))
    p.name = "mine"
    m = nn.Module()
    m.q = p
    assert p.name == "mine"


def test_deleting_from_a_sequential_renumbers_names() -> None:
    model = nn.Sequential(nn.ReLU(), nn.Linear(1, 1))
    assert model[1].weight.name == "1.weight"
    del model[0]
    assert model[0].weight.name == "0.weight"


# -- calling: hooks and scope events -----------------------------------------------------------
def test_forward_pre_hook_and_forward_hook_with_removable_handles() -> None:
    m = nn.Identity()
    calls: list[str] = []
    h1 = m.register_forward_pre_hook(lambda mod, args: calls.append("pre") or (args[0] * 2,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append("post") or out + 1)
    assert m(gradviz.ones(2)).tolist() == [3.0, 3.0]
    assert calls == ["pre", "post"]
    h1.remove()
    assert m(gradviz.ones(2)).tolist() == [2.0, 2.0]
    h2.remove()
    assert m(gradviz.ones(2)).tolist() == [1.0, 1.0]
    assert not m._forward_hooks and not m._forward_pre_hooks


def test_hooks_receive_the_module_and_none_keeps_values() -> None:
    m = nn.ReLU()
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append((mod, args, out)))
    x = gradviz.tensor([-1.0, 1.0])
    out = m(x)
    assert seen[0][0] is m and seen[0][1] == (x,) and seen[0][2] is out
    assert out.tolist() == [0.0, 1.0]


def test_hook_options_prepend_kwargs_always_call() -> None:
    class Scale(nn.Module):
        def forward(self, x: gradviz.Tensor, *, factor: float = 1.0) -> gradviz.Tensor:
            if factor < 0:
                raise ValueError("negative")
            return x * factor

    m = Scale()
    order: list[str] = []
    m.register_forward_hook(lambda mod, a, o: order.append("first"))
    m.register_forward_hook(lambda mod, a, o: order.append("prepended"), prepend=True)
    m.register_forward_pre_hook(lambda mod, a, kw: (a, {"factor": 3.0}), with_kwargs=True)
    m.register_forward_hook(lambda mod, a, kw, o: o + kw["factor"], with_kwargs=True)
    assert m(gradviz.ones(1), factor=2.0).tolist() == [6.0]
    assert order == ["prepended", "first"]

    failing = Scale()
    ran = []
    failing.register_forward_hook(lambda mod, a, o: ran.append(o), always_call=True)
    with pytest.raises(ValueError, match="negative"):
        failing(gradviz.ones(1), factor=-1.0)
    assert ran == [None]
    bad = Scale()
    bad.register_forward_pre_hook(lambda mod, a, kw: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        bad(gradviz.ones(1))


def test_handles_work_as_context_managers() -> None:
    m = nn.Identity()
    with m.register_forward_hook(lambda mod, a, o: o * 0):
        assert m(gradviz.ones(1)).tolist() == [0.0]
    assert m(gradviz.ones(1)).tolist() == [1.0]


def _record_scopes(fn):  # noqa: ANN001, ANN202
    seen: list[tuple[str, str]] = []

    def listener(event: str, data: dict) -> None:
        if event.startswith("module_"):
            seen.append((event, data["name"]))
            assert isinstance(data["module"], nn.Module)

    events.add_listener(listener)
    try:
        fn()
    finally:
        events.remove_listener(listener)
    return seen


def test_module_enter_and_exit_events_carry_qualified_names() -> None:
    net = Net()
    model = nn.Sequential(net, nn.ReLU())
    x = gradviz.ones(3, 2)
    seen = _record_scopes(lambda: model(x))
    assert seen == [
        ("module_enter", "Sequential"),
        ("module_enter", "0"),
        ("module_enter", "0.fc1"), ("module_exit", "0.fc1"),
        ("module_enter", "0.act"), ("module_exit", "0.act"),
        ("module_enter", "0.fc2"), ("module_exit", "0.fc2"),
        ("module_exit", "0"),
        ("module_enter", "1"), ("module_exit", "1"),
        ("module_exit", "Sequential"),
    ]


def test_scope_events_group_the_ops_of_a_module() -> None:
    lin = nn.Linear(2, 1)
    log: list[str] = []

    def listener(event: str, data: dict) -> None:
        log.append(event if event != "op" else "op")

    events.add_listener(listener)
    try:
        lin(gradviz.ones(1, 2))
    finally:
        events.remove_listener(listener)
    assert log[0] == "module_enter" and log[-1] == "module_exit"
    assert "op" in log[1:-1]


def test_scope_names_for_modules_called_through_a_modulelist_or_standalone() -> None:
    class Stack(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.blocks = nn.ModuleList([nn.Tanh(), nn.ReLU()])

        def forward(self, x: gradviz.Tensor) -> gradviz.Tensor:
            for block in self.blocks:
                x = block(x)
            return nn.Identity()(x)  # not registered: named by its class

    seen = _record_scopes(lambda: Stack()(gradviz.ones(1)))
    assert [name for ev, name in seen if ev == "module_enter"] == [
        "Stack", "blocks.0", "blocks.1", "Identity"]


def test_module_exit_is_emitted_when_forward_raises() -> None:
    class Boom(nn.Module):
        def forward(self, x: gradviz.Tensor) -> gradviz.Tensor:
            raise RuntimeError("boom")

    model = nn.Sequential(nn.Identity(), Boom())
    seen: list[tuple[str, str]] = []

    def run() -> None:
        with pytest.raises(RuntimeError, match="boom"):
            model(gradviz.ones(1))

    seen = _record_scopes(run)
    assert seen[-2:] == [("module_exit", "1"), ("module_exit", "Sequential")]
    from gradviz.nn.modules.module import _scopes

    assert _scopes.stack == []


def test_no_scope_events_without_listeners(monkeypatch: pytest.MonkeyPatch) -> None:
    from gradviz.nn.modules import module as module_mod

    emitted: list[tuple] = []
    monkeypatch.setattr(module_mod, "emit_module_enter",
                        lambda *a: emitted.append(("module_enter", *a)))
    monkeypatch.setattr(module_mod, "emit_module_exit",
                        lambda *a: emitted.append(("module_exit", *a)))
    Net()(gradviz.ones(1, 2))
    assert emitted == [] and module_mod._scopes.stack == []
    listener = events.add_listener(lambda ev, data: None)
    try:
        Net()(gradviz.ones(1, 2))
    finally:
        events.remove_listener(listener)
    assert [a[0] for a in emitted][:2] == ["module_enter", "module_enter"]


# -- modes and bulk operations ------------------------------------------------------------------
def test_train_eval_propagate() -> None:
    model = nn.Sequential(nn.Dropout(), nn.Sequential(nn.Dropout()))
    assert all(m.training for m in model.modules())
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        model.train(0)  # type: ignore[arg-type]


def test_custom_train_override_is_honoured() -> None:
    calls = []

    class Custom(nn.Module):
        def train(self, mode: bool = True) -> nn.Module:
            calls.append(mode)
            return super().train(mode)

    nn.Sequential(Custom()).eval()
    assert calls == [False]


def test_requires_grad_and_zero_grad() -> None:
    lin = nn.Linear(2, 1)
    lin(gradviz.ones(3, 2)).sum().backward()
    assert lin.weight.grad is not None
    g = lin.weight.grad
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad is g and g.tolist() == [[0.0, 0.0]]
    lin.zero_grad()
    assert lin.weight.grad is None and lin.bias.grad is None
    assert lin.requires_grad_(False) is lin
    assert not any(p.requires_grad for p in lin.parameters())


def test_apply_visits_children_first() -> None:
    model = nn.Sequential(nn.Sequential(nn.ReLU(), nn.Tanh()), nn.Sigmoid())
    order: list[str] = []
    assert model.apply(lambda m: order.append(type(m).__name__)) is model
    assert order == ["ReLU", "Tanh", "Sequential", "Sigmoid", "Sequential"]

    def zero_linear(m: nn.Module) -> None:
        if isinstance(m, nn.Linear):
            init.zeros_(m.weight)

    net = Net().apply(zero_linear)
    assert not net.fc1.weight.detach().numpy().any()
    assert not net.fc2.weight.detach().numpy().any()


def test_dtype_conversion_keeps_parameter_identity() -> None:
    lin = nn.Linear(2, 1)
    w = lin.weight
    assert lin.double() is lin and lin.weight is w and w.dtype is gradviz.float64
    assert lin.to(gradviz.float32).weight.dtype is gradviz.float32
    assert lin.to("cpu") is lin and lin.cpu() is lin
    assert nn.Linear(1, 1, dtype=gradviz.float64).weight.dtype is gradviz.float64


# -- state dict ----------------------------------------------------------------------------------
def test_state_dict_round_trip() -> None:
    a, b = Net(), Net()
    x = gradviz.rand(5, 2)
    assert not np.allclose(a(x).detach().numpy(), b(x).detach().numpy())
    sd = a.state_dict()
    assert list(sd) == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert all(not t.requires_grad for t in sd.values())
    assert sd["fc1.weight"]._data is a.fc1.weight._data  # detached, sharing memory
    w_before = b.fc1.weight
    result = b.load_state_dict(sd)
    assert repr(result) == "<All keys matched successfully>"
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert b.fc1.weight is w_before  # loaded in place
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())
    assert b.fc1.weight._data is not a.fc1.weight._data
    assert all(t.requires_grad for t in a.state_dict(keep_vars=True).values())


def test_load_state_dict_strict_errors_are_pytorchs() -> None:
    lin = nn.Linear(2, 3)
    with pytest.raises(RuntimeError) as info:
        lin.load_state_dict({"weight": gradviz.zeros(3, 2), "foo": gradviz.zeros(1)})
    assert str(info.value) == (
        'Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: "bias". '
        '\n\tUnexpected key(s) in state_dict: "foo". ')
    with pytest.raises(RuntimeError) as info:
        lin.load_state_dict({"weight": gradviz.zeros(2, 2), "bias": gradviz.zeros(3)})
    assert str(info.value) == (
        "Error(s) in loading state_dict for Linear:\n\tsize mismatch for weight: copying a "
        "param with shape gradviz.Size([2, 2]) from checkpoint, the shape in current model is "
        "gradviz.Size([3, 2]).")
    result = lin.load_state_dict({"weight": gradviz.ones(3, 2), "foo": gradviz.zeros(1)},
                                 strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["foo"]
    assert lin.weight.tolist() == [[1.0, 1.0]] * 3
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        lin.load_state_dict([1, 2])  # type: ignore[arg-type]


def test_load_state_dict_nested_unexpected_and_assign() -> None:
    model = nn.Sequential(nn.Linear(1, 1))
    sd = dict(model.state_dict())
    sd["0.extra"] = gradviz.zeros(1)
    sd["1.weight"] = gradviz.zeros(1)
    result = model.load_state_dict(sd, strict=False)
    assert result.unexpected_keys == ["1.weight", "0.extra"]
    new_w = gradviz.full((1, 1), 7.0)
    model.load_state_dict({"0.weight": new_w, "0.bias": gradviz.zeros(1)}, assign=True)
    assert isinstance(model[0].weight, nn.Parameter) and model[0].weight.requires_grad
    assert model[0].weight.tolist() == [[7.0]]


def test_loading_bumps_the_version_like_an_inplace_copy() -> None:
    lin = nn.Linear(1, 1)
    v = lin.weight._version
    lin.load_state_dict(nn.Linear(1, 1).state_dict())
    assert lin.weight._version == v + 1


def test_module_deepcopy_and_pickle() -> None:
    net = Net()
    x = gradviz.rand(2, 2)
    for clone in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        assert clone.fc1.weight is not net.fc1.weight
        assert isinstance(clone.fc1.weight, nn.Parameter)
        np.testing.assert_array_equal(clone(x).detach().numpy(), net(x).detach().numpy())
        assert clone.fc1.weight.name == "fc1.weight"


# -- layers --------------------------------------------------------------------------------------
def test_linear_init_matches_pytorchs_bounds_and_is_seeded() -> None:
    lin = nn.Linear(50, 400)
    bound = 1 / math.sqrt(50)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    assert w.shape == (400, 50) and b.shape == (400,)
    assert w.dtype == np.float32
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.95 * bound  # uses the whole range
    # Uniform on [-bound, bound] has std bound / sqrt(3).
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound
    gradviz.manual_seed(123)
    a = nn.Linear(3, 2)
    gradviz.manual_seed(123)
    c = nn.Linear(3, 2)
    np.testing.assert_array_equal(a.weight.detach().numpy(), c.weight.detach().numpy())
    assert lin.bias is not None and nn.Linear(2, 2, bias=False).bias is None


def test_linear_forward_shapes_and_values() -> None:
    lin = nn.Linear(3, 2)
    x = gradviz.rand(4, 3)
    expected = x.numpy() @ lin.weight.detach().numpy().T + lin.bias.detach().numpy()
    np.testing.assert_allclose(lin(x).detach().numpy(), expected, rtol=1e-6)
    lin(x).sum().backward()
    np.testing.assert_allclose(lin.bias.grad.numpy(), [4.0, 4.0])


def test_embedding_and_layernorm_init() -> None:
    emb = nn.Embedding(1000, 8, padding_idx=3)
    w = emb.weight.detach().numpy()
    assert not w[3].any()
    assert abs(w.std() - 1.0) < 0.05
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)
    frozen = nn.Embedding.from_pretrained(gradviz.eye(3))
    assert not frozen.weight.requires_grad and frozen.weight.shape == (3, 3)
    ln = nn.LayerNorm(4)
    assert ln.weight.tolist() == [1.0] * 4 and ln.bias.tolist() == [0.0] * 4
    assert nn.LayerNorm(4, bias=False).bias is None


def test_dropout_arguments() -> None:
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        nn.Dropout(1.5)
    drop = nn.Dropout(0.5).eval()
    x = gradviz.ones(10)
    assert drop(x).tolist() == [1.0] * 10


def test_flatten_and_identity() -> None:
    x = gradviz.zeros(2, 3, 4)
    assert nn.Flatten()(x).shape == (2, 12)
    assert nn.Flatten(0, -1)(x).shape == (24,)
    assert nn.Flatten(1, 1)(x) is x
    assert nn.Identity(3, foo=1)(x) is x


def test_activation_modules_compute_their_functions() -> None:
    x = gradviz.tensor([-1.0, 0.0, 2.0])
    np.testing.assert_allclose(nn.ReLU()(x).tolist(), [0.0, 0.0, 2.0])
    np.testing.assert_allclose(nn.Tanh()(x).tolist(), np.tanh([-1.0, 0.0, 2.0]), rtol=1e-6)
    np.testing.assert_allclose(nn.Sigmoid()(x).tolist(), 1 / (1 + np.exp([1.0, 0.0, -2.0])),
                               rtol=1e-6)
    sm = nn.Softmax(dim=0)(x).detach().numpy()
    np.testing.assert_allclose(sm, np.exp([-1.0, 0.0, 2.0]) / np.exp([-1.0, 0.0, 2.0]).sum(),
                               rtol=1e-6)


def test_more_activations_and_losses() -> None:
    x = gradviz.tensor([-1.0, 2.0])
    np.testing.assert_allclose(nn.LeakyReLU(0.1)(x).tolist(), [-0.1, 2.0], rtol=1e-6)
    np.testing.assert_allclose(nn.ELU()(x).tolist(), [math.exp(-1) - 1, 2.0], rtol=1e-6)
    np.testing.assert_allclose(nn.SiLU()(x).tolist(), [-1 / (1 + math.e), 2 / (1 + math.exp(-2))],
                               rtol=1e-6)
    np.testing.assert_allclose(nn.Softplus()(x).tolist(), np.log1p(np.exp([-1.0, 2.0])),
                               rtol=1e-6)
    assert nn.L1Loss()(x, gradviz.zeros(2)).item() == pytest.approx(1.5)
    p, t = gradviz.tensor([0.25, 0.5]), gradviz.tensor([1.0, 0.0])
    expected = -(math.log(0.25) + math.log(0.5)) / 2
    assert nn.BCELoss()(p, t).item() == pytest.approx(expected, rel=1e-6)
    logits = gradviz.tensor([math.log(1 / 3), 0.0])  # sigmoid: 0.25, 0.5
    assert nn.BCEWithLogitsLoss()(logits, t).item() == pytest.approx(expected, rel=1e-6)
    assert list(nn.BCEWithLogitsLoss(pos_weight=gradviz.ones(2)).state_dict()) == ["pos_weight"]


def test_losses() -> None:
    mse = nn.MSELoss()(gradviz.tensor([1.0, 3.0]), gradviz.tensor([1.0, 1.0]))
    assert mse.item() == pytest.approx(2.0)
    assert nn.MSELoss(reduction="sum")(gradviz.tensor([1.0, 3.0]),
                                       gradviz.tensor([1.0, 1.0])).item() == pytest.approx(4.0)
    ce = nn.CrossEntropyLoss()(gradviz.zeros(2, 4), gradviz.tensor([0, 3]))
    assert ce.item() == pytest.approx(math.log(4), rel=1e-6)
    assert "weight" not in nn.CrossEntropyLoss().state_dict()
    weighted = nn.CrossEntropyLoss(weight=gradviz.ones(4))
    assert list(weighted.state_dict()) == ["weight"]
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        assert nn.MSELoss(size_average=False).reduction == "sum"


# -- init ----------------------------------------------------------------------------------------
def test_calculate_gain_and_fans() -> None:
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == 5.0 / 3
    assert init.calculate_gain("relu") == math.sqrt(2.0)
    assert init.calculate_gain("leaky_relu") == math.sqrt(2.0 / (1 + 0.01**2))
    assert init.calculate_gain("leaky_relu", math.sqrt(5)) == math.sqrt(2.0 / 6)
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)
    assert init._calculate_fan_in_and_fan_out(gradviz.empty(3, 2)) == (2, 3)
    assert init._calculate_fan_in_and_fan_out(gradviz.empty(4, 3, 5, 5)) == (75, 100)
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor "
                                         "with fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(gradviz.empty(3))
    with pytest.raises(ValueError, match=r"Mode fan_avg not supported, please use one of "
                                         r"\['fan_in', 'fan_out'\]"):
        init.kaiming_uniform_(gradviz.empty(2, 2), mode="fan_avg")


def test_init_distributions_have_the_documented_bounds_and_stds() -> None:
    w = gradviz.empty(200, 300)
    cases = [
        (lambda: init.kaiming_uniform_(w, nonlinearity="relu"),
         math.sqrt(2.0) * math.sqrt(3.0 / 300), "uniform"),
        (lambda: init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu"),
         math.sqrt(2.0) * math.sqrt(3.0 / 200), "uniform"),
        (lambda: init.xavier_uniform_(w, gain=2.0), 2.0 * math.sqrt(6.0 / 500), "uniform"),
        (lambda: init.uniform_(w, -0.3, 0.3), 0.3, "uniform"),
        (lambda: init.kaiming_normal_(w, nonlinearity="tanh"), (5.0 / 3) / math.sqrt(300),
         "normal"),
        (lambda: init.xavier_normal_(w), math.sqrt(2.0 / 500), "normal"),
        (lambda: init.normal_(w, 0.0, 0.02), 0.02, "normal"),
    ]
    for fill, scale, kind in cases:
        assert fill() is w
        arr = w.numpy()
        if kind == "uniform":
            assert np.abs(arr).max() <= scale and np.abs(arr).max() > 0.99 * scale
            assert abs(arr.std() - scale / math.sqrt(3)) < 0.02 * scale
        else:
            assert abs(arr.std() - scale) < 0.02 * scale and abs(arr.mean()) < 0.02 * scale
    t = init.trunc_normal_(gradviz.empty(1000), std=1.0, a=-0.5, b=0.5)
    assert t.numpy().min() >= -0.5 and t.numpy().max() <= 0.5


def test_init_fills_in_place_without_recording_and_is_seeded() -> None:
    p = nn.Parameter(gradviz.empty(2, 2))
    v = p._version
    assert init.constant_(p, 0.25) is p
    assert p.grad_fn is None and p.is_leaf and p.requires_grad
    assert p.tolist() == [[0.25, 0.25], [0.25, 0.25]] and p._version == v + 1
    assert init.ones_(p).tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert init.zeros_(p).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert init.eye_(gradviz.empty(2, 3)).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    gradviz.manual_seed(7)
    a = init.normal_(gradviz.empty(5)).tolist()
    gradviz.manual_seed(7)
    assert init.normal_(gradviz.empty(5)).tolist() == a
    g1, g2 = np.random.default_rng(1), np.random.default_rng(1)
    assert (init.uniform_(gradviz.empty(3), generator=g1).tolist()
            == init.uniform_(gradviz.empty(3), generator=g2).tolist())
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(gradviz.empty(0, 3))
