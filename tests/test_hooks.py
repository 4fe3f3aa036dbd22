"""Hooks run where and in the order PyTorch runs them, and can replace gradients.

Orders and values were checked against torch 2.13.0.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradviz as gv


def f64(values, requires_grad=True):
    return gv.tensor(values, dtype=gv.float64, requires_grad=requires_grad)


def test_hook_kinds_run_in_pytorch_order():
    log = []
    x = f64([1.0, 2.0])
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: log.append("tensor_hook1"))
    y.register_hook(lambda g: log.append("tensor_hook2"))
    y.grad_fn.register_prehook(lambda grad_outputs: log.append("prehook"))
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: log.append("posthook"))
    x.register_hook(lambda g: log.append("leaf_hook"))
    x.register_post_accumulate_grad_hook(lambda t: log.append("post_acc"))
    y.sum().backward()
    assert log == ["tensor_hook1", "tensor_hook2", "prehook", "posthook", "leaf_hook",
                   "post_acc"]


def test_tensor_hooks_chain_and_retain_grad_sees_the_final_gradient():
    # retain_grad is applied after all tensor hooks, whatever the registration order.
    x = f64([1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: g * 10)
    y.retain_grad()
    y.register_hook(lambda g: g * 100)
    y.sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [1000.0, 1000.0])
    np.testing.assert_allclose(x.grad.numpy(), [2000.0, 2000.0])


def test_leaf_hook_replaces_gradient_and_handle_removes_it():
    x = f64([1.0, 2.0])
    handle = x.register_hook(lambda g: g * 3)
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])
    handle.remove()
    x.grad = None
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])
    handle.remove()  # removing twice is harmless


def test_leaf_hook_returning_none_keeps_gradient_and_sees_it():
    seen = []
    x = f64([1.0, 2.0])
    x.register_hook(lambda g: seen.append(g.tolist()))
    (x * x).sum().backward()
    assert seen == [[2.0, 4.0]]
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_leaf_hook_survives_across_graphs():
    # Leaf hooks live on the tensor, not on one graph's AccumulateGrad.
    x = f64([1.0])
    x.register_hook(lambda g: g * 5)
    (x * 1).sum().backward()
    (x * 1).sum().backward()
    assert x.grad.tolist() == [10.0]


def test_non_leaf_hook_replaces_gradient_flowing_downstream():
    x = f64([1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: g + 1)
    (y * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [8.0, 8.0])  # (3 + 1) * 2


def test_non_leaf_hook_runs_once_on_the_summed_gradient():
    calls = []
    x = f64([1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: calls.append(g.tolist()))
    (y * y + y).sum().backward()
    assert calls == [[5.0, 9.0]]  # 2y + 1 with y = [2, 4]


def test_handle_works_as_a_context_manager():
    x = f64([1.0])
    with x.register_hook(lambda g: g * 100):
        (x * 1).sum().backward()
    (x * 1).sum().backward()
    assert x.grad.tolist() == [101.0]


def test_node_posthook_receives_tuples_and_replaces_grad_inputs():
    seen = []
    x = f64([1.0, 2.0])
    y = x * 2

    def posthook(grad_inputs, grad_outputs):
        seen.append((type(grad_inputs), len(grad_inputs), type(grad_outputs), len(grad_outputs),
                     grad_inputs[1]))
        return (grad_inputs[0] * 5, None)

    y.grad_fn.register_hook(posthook)
    y.sum().backward()
    # Two grad_inputs (x and the constant 2, which gets None); one grad_output.
    assert seen == [(tuple, 2, tuple, 1, None)]
    np.testing.assert_allclose(x.grad.numpy(), [10.0, 10.0])


def test_node_prehooks_chain_their_replacements_in_order():
    x = f64([1.0, 2.0])
    y = x * 2
    y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
    y.grad_fn.register_prehook(lambda go: (go[0] + 1,))
    y.backward(gv.ones(2, dtype=gv.float64))
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])  # ((1 * 2) + 1) * 2


def test_node_hook_handles_remove_the_hooks():
    calls = []
    x = f64([1.0])
    y = x * 2
    h1 = y.grad_fn.register_prehook(lambda go: calls.append("pre"))
    h2 = y.grad_fn.register_hook(lambda gi, go: calls.append("post"))
    h1.remove()
    h2.remove()
    y.sum().backward()
    assert calls == []


def test_accumulate_grad_node_hooks_see_the_leaf_gradient():
    seen = []
    x = f64([1.0, 2.0])
    y = x * 2
    acc = y.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: seen.append(("pre", go[0].tolist())))
    acc.register_hook(lambda gi, go: seen.append(("post", gi, go[0].tolist())))
    y.sum().backward()
    assert seen == [("pre", [2.0, 2.0]), ("post", (), [2.0, 2.0])]


def test_post_accumulate_grad_hook_sees_the_updated_grad():
    seen = []
    x = f64([1.0, 2.0])
    x.register_post_accumulate_grad_hook(lambda t: seen.append((t is x, t.grad.tolist())))
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    assert seen == [(True, [3.0, 3.0]), (True, [6.0, 6.0])]


def test_post_accumulate_grad_hook_changes_to_grad_stay():
    # The hook gets the leaf itself: an in-place change of its .grad, or a new .grad, is what
    # the leaf keeps (torch 2.13), whichever way the gradient was accumulated.
    x = f64([1.0, 2.0])

    def times_ten(t):
        t.grad.mul_(10)

    x.register_post_accumulate_grad_hook(times_ten)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [20.0, 20.0]
    (x * 2).sum().backward(create_graph=True)
    (x * 3).sum().backward(inputs=[x])
    assert x.grad.tolist() == [2230.0, 2230.0]
    seed = gv.ones(2, dtype=gv.float64)
    z = f64([1.0, 2.0])

    def plus_one(t):
        t.grad.add_(1)

    z.register_post_accumulate_grad_hook(plus_one)
    (z * 1).backward(seed)
    assert z.grad.tolist() == [2.0, 2.0] and seed.tolist() == [1.0, 1.0]
    w = f64([1.0, 2.0])

    def replace(t):
        t.grad = t.grad * 0 + 7

    w.register_post_accumulate_grad_hook(replace)
    (w * 2).sum().backward()
    assert w.grad.tolist() == [7.0, 7.0]


def test_hook_changing_the_gradient_size_is_an_error():
    x = f64([1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: g.sum())
    with pytest.raises(RuntimeError) as exc:
        y.sum().backward()
    # PyTorch's text; gradviz adds the two sizes after it.
    assert str(exc.value).startswith("hook '<lambda>' has changed the size of value")


def test_hook_changing_the_gradient_dtype_under_create_graph_is_torchs_error():
    # Under create_graph the hook's input is a tensor: the message names both tensor types
    # (it failed inside its own formatting before).
    x = gv.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g.double())
    with pytest.raises(RuntimeError) as exc:
        gv.autograd.grad(y.sum(), x, create_graph=True)
    assert str(exc.value) == ("hook '<lambda>' has changed the type of value (was "
                              "gradviz.FloatTensor got gradviz.DoubleTensor)")


@pytest.mark.parametrize("register", [
    lambda t: t.register_hook(lambda g: g),
    lambda t: t.register_post_accumulate_grad_hook(lambda t: None),
])
def test_registering_a_hook_on_a_tensor_not_requiring_grad_fails(register):
    with pytest.raises(RuntimeError) as exc:
        register(gv.ones(2))
    assert str(exc.value) == "cannot register a hook on a tensor that doesn't require gradient"


def test_post_accumulate_grad_hook_on_non_leaf_fails():
    x = f64([1.0])
    with pytest.raises(RuntimeError) as exc:
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
    assert str(exc.value) == "post accumulate grad hooks cannot be registered on non-leaf tensors"


def test_hooks_run_for_autograd_grad_without_touching_dot_grad():
    calls = []
    x = f64([1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: calls.append("y") or g * 2)
    (g,) = gv.autograd.grad(y.sum(), x)
    assert calls == ["y"]
    np.testing.assert_allclose(g.numpy(), [4.0, 4.0])
    assert x.grad is None


def test_leaf_hook_applies_to_the_gradient_autograd_grad_returns():
    # The captured gradient is taken after the leaf's tensor hooks, as in PyTorch.
    x = f64([1.0])
    x.register_hook(lambda g: g * 5)
    (g,) = gv.autograd.grad((x * 1).sum(), x)
    assert g.tolist() == [5.0]


def test_a_node_post_hook_can_still_read_saved_values():
    # PyTorch frees saved values after the post-hooks ran (checked with torch 2.13.0)
    x = f64([1.0, 1.0])
    y = x * x
    seen = []
    y.grad_fn.register_hook(lambda gi, go: seen.append(y.grad_fn._saved_self.tolist()))
    y.sum().backward()
    assert seen == [[1.0, 1.0]]
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        _ = y.grad_fn._saved_self
