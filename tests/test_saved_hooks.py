"""torch.autograd.graph: saved-tensor hooks, SavedTensor.register_hooks, save_on_cpu,
disable_saved_tensors_hooks, register_multi_grad_hook, GradientEdge, increment_version, and the
pack/unpack events the tracer can record (PyTorch's documented behaviour and error texts)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import gradviz
from gradviz.autograd import events
from gradviz.autograd.graph import (
    GradientEdge,
    SavedTensor,
    disable_saved_tensors_hooks,
    get_gradient_edge,
    increment_version,
    register_multi_grad_hook,
    save_on_cpu,
    saved_tensors_hooks,
)


def test_pack_at_save_and_unpack_at_backward() -> None:
    x = gradviz.tensor([1.0, 2.0, 3.0], requires_grad=True)
    log = []

    def pack(t):
        log.append(("pack", t is x, t.grad_fn.name() if t.grad_fn else None))
        return t

    def unpack(t):
        log.append(("unpack",))
        return t

    with saved_tensors_hooks(pack, unpack):
        y = x.pow(2)
        z = y.exp()
    # the input is handed over as it is, the output with its grad_fn (as torch 2.13 does)
    assert log == [("pack", True, None), ("pack", False, "ExpBackward0")]
    assert y.grad_fn._saved_self is not x  # unpacked: a new tensor with x's history
    assert log[-1] == ("unpack",)
    log.clear()
    z.sum().backward()
    assert log == [("unpack",), ("unpack",)]
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy() * z.detach().numpy(),
                               rtol=1e-6)


def test_the_packed_value_is_what_backward_uses() -> None:
    # pack stores a scaled copy; unpack undoes it: the gradient is unchanged
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach() * 10, lambda p: p / 10):
        y = (x * x).sum()
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0]
    # a "wrong" unpack shows that backward reads only what unpack returns
    x.grad = None
    with saved_tensors_hooks(lambda t: t, lambda p: gradviz.zeros_like(p)):
        y = (x * x).sum()
    y.backward()
    assert x.grad.tolist() == [0.0, 0.0]


def test_no_hooks_outside_the_context_and_nesting() -> None:
    x = gradviz.ones(2, requires_grad=True)
    seen = []
    with saved_tensors_hooks(lambda t: seen.append("outer") or t, lambda t: t):
        with saved_tensors_hooks(lambda t: seen.append("inner") or t, lambda t: t):
            _ = x * x
        _ = x.exp()
    _ = x.sin()
    assert seen == ["inner", "inner", "outer"]


def test_hooks_skip_the_version_check_as_torch() -> None:
    a = gradviz.ones(2, requires_grad=True) * 1
    with saved_tensors_hooks(lambda t: t.detach().clone(), lambda p: p):
        b = a.exp()
    with gradviz.no_grad():
        a.add_(1)
    b.sum().backward()  # torch does not check versions through hooks


def test_unpack_must_return_a_tensor() -> None:
    x = gradviz.ones(2, requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda t: "no"):
        y = x.exp()
    with pytest.raises(TypeError, match="^Output of saved tensor unpack_hook expected to be a "
                       "Tensor but got result of type str$"):
        y.sum().backward()


def test_pack_may_not_modify_its_input() -> None:
    a = gradviz.ones(2, requires_grad=True) * 1

    def pack(t):
        with gradviz.no_grad():
            t.add_(1)
        return t

    with pytest.raises(RuntimeError, match="^A saved tensor pack hook is modifying its input in "
                       "place"), saved_tensors_hooks(pack, lambda t: t):
        a.exp()


def test_disable_saved_tensors_hooks() -> None:
    with pytest.raises(RuntimeError, match="^no hooks here$"), \
            disable_saved_tensors_hooks("no hooks here"), \
            saved_tensors_hooks(lambda t: t, lambda t: t):
        pass
    with saved_tensors_hooks(lambda t: t, lambda t: t), \
            pytest.raises(RuntimeError, match="^nor here$"), \
            disable_saved_tensors_hooks("nor here"):
        pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):  # usable again after both
        pass

    @disable_saved_tensors_hooks("decorated")
    def f():
        with saved_tensors_hooks(lambda t: t, lambda t: t):
            pass

    with pytest.raises(RuntimeError, match="^decorated$"):
        f()


def test_save_on_cpu_copies() -> None:
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    with save_on_cpu(pin_memory=False):
        y = x * x
    with gradviz.no_grad():
        x.mul_(100)  # the node kept a copy, so backward uses the values at save time
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_raw_saved_register_hooks() -> None:
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    names = sorted(a for a in dir(y.grad_fn) if a.startswith(("_saved_", "_raw_saved_")))
    assert names == ["_raw_saved_other", "_raw_saved_self", "_saved_other", "_saved_self"]
    # as torch prints its <torch._C._autograd.SavedTensor object at 0x...>
    assert re.fullmatch(r"<gradviz\.autograd\.graph\.SavedTensor object at 0x[0-9a-f]+>",
                        repr(y.grad_fn._raw_saved_self))
    calls = []
    y.grad_fn._raw_saved_self.register_hooks(lambda t: calls.append("pack") or t * 3,
                                             lambda p: calls.append("unpack") or p / 3)
    assert calls == ["pack"]
    with pytest.raises(RuntimeError, match="^Calling register_hooks on a saved tensor whose "
                       "hooks have already been set. Hint: only one pair of hooks is allowed "
                       "at a time.$"):
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    y.sum().backward()
    assert calls == ["pack", "unpack"]
    assert x.grad.tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match="^Calling register_hooks on a saved tensor after it "
                       "has been freed"):
        y.grad_fn._raw_saved_other.register_hooks(lambda t: t, lambda t: t)
    with pytest.raises(TypeError, match="register_hooks"):
        (x * x).grad_fn._raw_saved_self.register_hooks(1, 2)


def test_raw_saved_indices_is_one_handle_per_index() -> None:
    # IndexBackward0 saves a list: torch 2.13 gives a tuple of SavedTensor, None entries too.
    a = gradviz.arange(12.0).reshape(3, 4).requires_grad_()
    i = gradviz.tensor([0, 2])
    log = []
    b = a[i]
    (raw,) = b.grad_fn._raw_saved_indices
    assert isinstance(raw, SavedTensor)
    raw.register_hooks(lambda t: log.append("pack") or t, lambda p: log.append("unpack") or p)
    b.sum().backward()
    assert log == ["pack", "unpack"] and a.grad.tolist()[0] == [1.0] * 4
    none, index = a[None, i].grad_fn._raw_saved_indices
    assert isinstance(index, SavedTensor)
    with pytest.raises(RuntimeError, match="^Calling register_hooks on a saved tensor with value "
                       "None is forbidden$"):
        none.register_hooks(lambda t: t, lambda p: p)


def test_raw_saved_result_and_custom_function() -> None:
    x = gradviz.ones(2, requires_grad=True)
    y = x.exp()
    y.grad_fn._raw_saved_result.register_hooks(lambda t: 1, lambda t: 5)
    with pytest.raises(TypeError, match="got result of type int"):
        y.sum().backward()

    class Square(gradviz.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a, None)
            return a * a

        @staticmethod
        def backward(ctx, g):
            a, _ = ctx.saved_tensors
            return 2 * a * g

    z = Square.apply(x)
    raw = z.grad_fn._raw_saved_tensors
    assert len(raw) == 2
    raw[0].register_hooks(lambda t: t, lambda t: t)
    with pytest.raises(RuntimeError, match="^Calling register_hooks on a saved tensor with "
                       "value None is forbidden$"):
        raw[1].register_hooks(lambda t: t, lambda t: t)
    z.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_hooked_saved_tensors_keep_their_history_for_double_backward() -> None:
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach(), lambda p: p):
        y = (x ** 3).sum()
        (g,) = gradviz.autograd.grad(y, x, create_graph=True)
    assert g.tolist() == [3.0, 12.0]
    (gg,) = gradviz.autograd.grad(g.sum(), x)
    assert gg.tolist() == [6.0, 12.0]


def test_pack_and_unpack_events() -> None:
    seen = []

    def listener(ev, data):
        if ev.startswith("saved_tensor"):
            seen.append((ev, data["saved"], data["fn"].__name__))

    def pack(t):
        return t

    def unpack(t):
        return t

    x = gradviz.ones(2, requires_grad=True)
    events.add_listener(listener)
    try:
        with saved_tensors_hooks(pack, unpack):
            y = x.exp()
        y.sum().backward()
    finally:
        events.remove_listener(listener)
    assert [(e, f) for e, _, f in seen] == [("saved_tensor_pack", "pack"),
                                            ("saved_tensor_unpack", "unpack")]
    assert seen[0][1] is seen[1][1]  # the same saved value: the tracer can pair them


def test_multi_grad_hook_all_and_any() -> None:
    a = gradviz.rand(2, 3, requires_grad=True)
    b = gradviz.rand(2, 3, requires_grad=True)
    c = a * b
    d = a * b
    got = []
    h = register_multi_grad_hook((a, b, c, d), lambda gs: got.append([g is not None for g in gs]))
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(a,), retain_graph=True)
    gradviz.autograd.grad(c.sum(), (c,), retain_graph=True)
    assert got == [[True, True, True, False], [True, False, True, False],
                   [False, False, True, False]]
    # As torch 2.13: autograd.grad of a leaf the hook watches is not supported.
    with pytest.raises(RuntimeError, match="^A leaf node was passed to _will_engine_execute_node "
                       "but we are currently running autograd.grad"):
        gradviz.autograd.grad(c.sum(), (b,), retain_graph=True)
    h.remove()
    c.sum().backward(retain_graph=True)
    assert len(got) == 3
    firsts = []
    register_multi_grad_hook((a, b), lambda g: firsts.append(g.shape), mode="any")
    (a * b).sum().backward()
    (a * b).sum().backward()
    assert firsts == [(2, 3), (2, 3)]  # once per backward pass
    with pytest.raises(ValueError, match="^Expects mode to be one of"):
        register_multi_grad_hook((a,), print, mode="some")


def test_gradient_edge_as_inputs() -> None:
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    edge = get_gradient_edge(y)
    assert isinstance(edge, GradientEdge) and edge.node is y.grad_fn and edge.output_nr == 0
    assert get_gradient_edge(x).node.name() == "torch::autograd::AccumulateGrad"
    z = (y * y).sum()
    (gy,) = gradviz.autograd.grad(z, edge, retain_graph=True)
    assert gy.tolist() == [4.0, 8.0]
    (gx, gy2) = gradviz.autograd.grad(z, (x, edge), retain_graph=True)
    assert gx.tolist() == [8.0, 16.0] and gy2.tolist() == gy.tolist()
    z.backward(inputs=[get_gradient_edge(x)])
    assert x.grad.tolist() == [8.0, 16.0]
    with pytest.raises(RuntimeError, match="^It is not possible to get the gradient edge for a "
                       "Tensor that does not require gradients"):
        get_gradient_edge(gradviz.ones(1))


def test_gradient_edge_as_outputs() -> None:
    # As torch 2.13: a GradientEdge may stand for an output of autograd.grad and backward.
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    edge = get_gradient_edge(y)
    (gx,) = gradviz.autograd.grad(edge, x, gradviz.tensor([1.0, 3.0]), retain_graph=True)
    assert gx.tolist() == [2.0, 6.0]
    (gx,) = gradviz.autograd.grad([edge, (x * 3).sum()], x, [gradviz.ones(2), None],
                                  retain_graph=True)
    assert gx.tolist() == [5.0, 5.0]
    gradviz.autograd.backward(edge, gradviz.ones(2))
    assert x.grad.tolist() == [2.0, 2.0]
    gradviz.autograd.backward(get_gradient_edge(x), gradviz.ones(2))  # a leaf's edge
    assert x.grad.tolist() == [3.0, 3.0]
    s = (x * 2).sum()
    gradviz.autograd.backward(get_gradient_edge(s))  # a one-element edge: its gradient is 1
    assert x.grad.tolist() == [5.0, 5.0]
    y = x * 2
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar "
                       "outputs$"):
        gradviz.autograd.grad(get_gradient_edge(y), x)
    with pytest.raises(RuntimeError, match=r"^Mismatch in shape: grad_output\[0\] has a shape "
                       r"of gradviz.Size\(\[3\]\) and output\[0\] has a shape of "
                       r"gradviz.Size\(\[2\]\).$"):
        gradviz.autograd.grad(get_gradient_edge(y), x, gradviz.ones(3))


def test_materialize_grads_refuses_an_unreached_gradient_edge() -> None:
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = (y * 3).sum()
    assert gradviz.autograd.grad(z, get_gradient_edge(y), retain_graph=True,
                                 materialize_grads=True)[0].tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="^materialize_grads cannot be used when the given "
                       "input is a GradientEdge$"):
        gradviz.autograd.grad((x * 3).sum(), [x, get_gradient_edge(y)], materialize_grads=True)


def test_increment_version() -> None:
    x = gradviz.ones(2, requires_grad=True)
    y = x * x
    increment_version(x)
    assert x._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    a, b = gradviz.ones(1), gradviz.ones(1)
    increment_version([a, b])
    assert (a._version, b._version) == (1, 1)



def test_increment_version_refuses_what_is_not_tensors_as_torch() -> None:
    # torch 2.13's texts; the tensors before a non-tensor are bumped already.
    with pytest.raises(RuntimeError, match=r"^increment_version expect a Iterable\[Tensor\] as "
                                           "input$"):
        increment_version(3)
    a = gradviz.ones(1)
    with pytest.raises(RuntimeError, match="^increment_version expects each element of the "
                                           "iterable to be a tensor$"):
        increment_version([a, 3])
    assert a._version == 1
    increment_version(iter([a]))  # any iterable
    assert a._version == 2


def test_multi_grad_hook_all_needs_every_tensor_to_have_a_node() -> None:
    # torch 2.13 looks up each tensor's node first and asserts it exists ("any" mode skips).
    a = gradviz.ones(2, requires_grad=True)
    for tensors in ((a, gradviz.ones(2)), (a * 1, gradviz.ones(2))):
        with pytest.raises(AssertionError, match="^Expected gradient function to be set$"):
            register_multi_grad_hook(tensors, lambda gs: None)
    assert a._backward_hooks is None or not a._backward_hooks  # nothing registered
    calls = []
    register_multi_grad_hook((a, gradviz.ones(2)), lambda g: calls.append(g.tolist()), mode="any")
    (a * 2).sum().backward()
    assert calls == [[2.0, 2.0]]

def test_module_exports_torch_names() -> None:
    g = gradviz.autograd.graph
    for name in ("saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
                 "register_multi_grad_hook", "GradientEdge", "get_gradient_edge",
                 "increment_version", "Node"):
        assert hasattr(g, name), name
