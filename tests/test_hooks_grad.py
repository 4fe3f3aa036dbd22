"""Hooks around ``autograd.grad``, gradients that do not arrive, and what a hook may return.

Each expectation was checked against torch 2.13.0 (tests/parity/test_hooks_modes_parity.py runs
the same programs on both).
"""

from __future__ import annotations

import numpy as np
import pytest

import gradviz as gv


def f64(values, requires_grad=True):
    return gv.tensor(values, dtype=gv.float64, requires_grad=requires_grad)


class _NoGradForSecond(gv.autograd.Function):
    """``a * b`` whose backward gives ``b`` no gradient."""

    @staticmethod
    def forward(ctx, a, b):
        return a * b

    @staticmethod
    def backward(ctx, grad):
        return grad, None


# -- autograd.grad and hooks ------------------------------------------------------------------
def test_grad_runs_the_tensor_hooks_of_its_inputs_but_not_their_nodes_hooks():
    log = []
    x = f64([1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: log.append(("tensor", g.tolist())))
    y.grad_fn.register_prehook(lambda go: log.append("prehook"))
    y.grad_fn.register_hook(lambda gi, go: log.append("posthook"))
    (gy,) = gv.autograd.grad((y * 3).sum(), y)
    assert log == [("tensor", [3.0, 3.0])]
    assert gy.tolist() == [3.0, 3.0]


def test_a_tensor_hook_on_an_input_changes_what_grad_returns():
    x = f64([1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: g * 10)
    assert gv.autograd.grad((y * 3).sum(), y)[0].tolist() == [30.0, 30.0]


def test_grad_runs_an_inputs_node_with_its_hooks_when_another_input_needs_it():
    log = []
    x = f64([1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: (log.append("y-tensor"), g * 10)[1])
    y.grad_fn.register_prehook(lambda go: log.append("y-pre"))
    y.grad_fn.register_hook(lambda gi, go: log.append("y-post"))
    x.register_hook(lambda g: log.append("x-tensor"))
    gy, gx = gv.autograd.grad((y * 3).sum(), [y, x])
    assert log == ["y-tensor", "y-pre", "y-post", "x-tensor"]
    assert gy.tolist() == [3.0, 3.0] and gx.tolist() == [60.0, 60.0]


def test_grad_on_a_leaf_runs_its_hook_but_not_its_post_accumulate_hook():
    log = []
    x = f64([1.0, 2.0])
    x.register_hook(lambda g: log.append("leaf"))
    x.register_post_accumulate_grad_hook(lambda t: log.append("post_acc"))
    assert gv.autograd.grad((x * 3).sum(), x)[0].tolist() == [3.0, 3.0]
    assert log == ["leaf"] and x.grad is None


# -- gradients that do not arrive -------------------------------------------------------------
def test_hooks_on_outputs_of_a_multi_output_node_see_none_when_unused():
    calls = []
    x = gv.arange(6.0).reshape(3, 2).requires_grad_()
    a, b, c = x.split(1)
    b.register_hook(lambda g: calls.append(("b", g)))
    c.register_hook(lambda g: calls.append(("c", g)))
    (a * 2).sum().backward()
    assert calls == [("b", None), ("c", None)]
    assert x.grad.tolist() == [[2.0, 2.0], [0.0, 0.0], [0.0, 0.0]]


def test_unbind_output_hook_sees_none_and_retain_grad_keeps_none():
    calls = []
    x = gv.arange(6.0).reshape(3, 2).requires_grad_()
    a, b, _ = x.unbind(0)
    a.register_hook(lambda g: calls.append(("a", None if g is None else g.tolist())))
    b.register_hook(lambda g: calls.append(("b", g)))
    b.retain_grad()
    (a * 2).sum().backward()
    assert calls == [("a", [2.0, 2.0]), ("b", None)]
    assert b.grad is None


def test_a_hook_cannot_replace_a_missing_gradient():
    x = gv.arange(6.0).reshape(3, 2).requires_grad_()
    a, b = x.split(2)
    b.register_hook(lambda g: gv.ones(1, 2))
    with pytest.raises(RuntimeError, match="^can't replace a None gradient with a non-None "
                                           "value$"):
        (a * 2).sum().backward()


def test_a_node_that_gets_no_gradient_still_runs_its_hooks_with_none():
    calls = []
    x = f64([1.0, 2.0])
    w = f64([3.0, 4.0])
    u = w * 1
    u.register_hook(lambda g: calls.append(("u", g)))
    u.grad_fn.register_prehook(lambda go: calls.append(("u-pre", go)))
    u.grad_fn.register_hook(lambda gi, go: calls.append(("u-post", gi, go)))
    w.register_hook(lambda g: calls.append(("w", g)))
    w.register_post_accumulate_grad_hook(lambda t: calls.append(("w-post-acc", t.grad)))
    _NoGradForSecond.apply(x, u).sum().backward()
    assert calls == [("u", None), ("u-pre", (None,)), ("u-post", (None, None), (None,)),
                     ("w", None), ("w-post-acc", None)]
    assert w.grad is None and x.grad.tolist() == [1.0, 1.0]


# -- post-accumulate-grad hooks ---------------------------------------------------------------
def test_post_accumulate_grad_hook_that_returns_a_value_raises():
    x = f64([1.0, 2.0])
    x.register_post_accumulate_grad_hook(lambda t: t * 2)
    with pytest.raises(RuntimeError,
                       match=r"^Tensor post accumulate grad hooks should return None\.$"):
        (x * 2).sum().backward()


def test_post_accumulate_grad_hook_sees_the_new_grad_and_may_change_it_in_place():
    x = f64([1.0, 2.0])
    seen = []

    def hook(t):
        seen.append(t.grad.tolist())
        t.grad.mul_(10)

    x.register_post_accumulate_grad_hook(hook)
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0]] and x.grad.tolist() == [20.0, 20.0]


def test_post_accumulate_grad_hook_refuses_non_leaves_and_tensors_without_grad():
    x = f64([1.0, 2.0])
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on "
                                           "non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                           "require gradient"):
        gv.ones(2).register_post_accumulate_grad_hook(lambda t: None)


# -- materialize_grads ----------------------------------------------------------------------
def test_materialized_grads_require_grad_only_under_create_graph():
    x = f64([1.0, 2.0])
    w = f64([1.0, 2.0])
    gx, gw = gv.autograd.grad((x * 2).sum(), [x, w], create_graph=True, materialize_grads=True)
    assert gw.tolist() == [0.0, 0.0] and gw.requires_grad and gw.grad_fn is None
    assert not gx.requires_grad  # d(2x)/dx does not depend on x
    gx, gw = gv.autograd.grad((x * 2).sum(), [x, w], materialize_grads=True)
    assert not gw.requires_grad and gw.tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed"):
        gv.autograd.grad((x * 2).sum(), [x, w], materialize_grads=True, allow_unused=False)


def test_a_materialized_grad_can_be_differentiated_further():
    x = f64([1.0, 2.0])
    w = f64([1.0, 2.0])
    _, gw = gv.autograd.grad((x * x).sum(), [x, w], create_graph=True, materialize_grads=True)
    (gww,) = gv.autograd.grad(gw.sum(), gw)
    assert gww.tolist() == [1.0, 1.0]


# -- calling a node by hand ------------------------------------------------------------------
def test_calling_a_node_with_the_wrong_number_of_gradients_is_a_type_error():
    x = f64([1.0, 2.0])
    y = x * 2
    with pytest.raises(TypeError, match=r"^expected 1 arguments, got 0 instead$"):
        y.grad_fn()
    with pytest.raises(TypeError, match=r"^expected 1 arguments, got 2 instead$"):
        y.grad_fn(gv.ones(2), gv.ones(2))
    a, _ = x.unbind(0)
    with pytest.raises(TypeError, match=r"^expected 2 arguments, got 1 instead$"):
        a.grad_fn(gv.tensor(1.0))
    assert a.grad_fn(gv.tensor(1.0, dtype=gv.float64), None).tolist() == [1.0, 0.0]
    with pytest.raises(TypeError, match=r"^expected 1 arguments, got 0 instead$"):
        y.grad_fn.next_functions[0][0]()
    gx, none = y.grad_fn(gv.ones(2, dtype=gv.float64))
    assert gx.tolist() == [2.0, 2.0] and none is None
    assert y.grad_fn(None) == (None, None)


# -- what a hook may return -----------------------------------------------------------------
def _mul():
    x = gv.tensor([1.0, 2.0], requires_grad=True)
    w = gv.tensor([3.0, 4.0], requires_grad=True)
    return x, w, x * w


@pytest.mark.parametrize("kind, hook, error, text", [
    ("post", lambda gi, go: (gv.ones(3), gi[1]), RuntimeError,
     "hook '<lambda>' has changed the size of value"),
    ("post", lambda gi, go: (3, gi[1]), TypeError, "expected Variable, but hook returned 'int'"),
    ("post", lambda gi, go: [gi[0], gi[1]], TypeError,
     "expected tuple, but hook returned 'list'"),
    ("post", lambda gi, go: (gi[0].double(), gi[1]), RuntimeError,
     "hook '<lambda>' has changed the type of value (was gradviz.FloatTensor got "
     "gradviz.DoubleTensor)"),
    ("post", lambda gi, go: (gi[0], gi[1], gi[1]), RuntimeError,
     "hook '<lambda>' has returned an incorrect number of values (got 3, but expected 2)"),
    ("pre", lambda go: (gv.ones(3),), RuntimeError,
     "hook '<lambda>' has changed the size of value"),
    ("pre", lambda go: (3,), TypeError, "expected Variable, but hook returned 'int'"),
    ("pre", lambda go: go[0] * 2, TypeError, "expected tuple, but hook returned 'Tensor'"),
    ("pre", lambda go: (go[0], go[0]), RuntimeError,
     "hook '<lambda>' has returned an incorrect number of values (got 2, but expected 1)"),
    ("tensor", lambda g: [g], TypeError, "expected Variable, but hook returned 'list'"),
    ("tensor", lambda g: gv.tensor(1.0), RuntimeError,
     "hook '<lambda>' has changed the size of value"),
    ("tensor", lambda g: g.double(), RuntimeError,
     "hook '<lambda>' has changed the type of value (was gradviz.FloatTensor got "
     "gradviz.DoubleTensor)"),
    # torch 2.13 names a bool tensor and a meta one by backend and scalar type
    ("tensor", lambda g: g > 0, RuntimeError,
     "hook '<lambda>' has changed the type of value (was gradviz.FloatTensor got CPUBoolType)"),
    ("pre", lambda go: (gv.ones(2, device="meta"),), RuntimeError,
     "hook '<lambda>' has changed the type of value (was gradviz.FloatTensor got "
     "MetaFloatType)"),
])
def test_hook_results_are_checked_as_pytorch_checks_them(kind, hook, error, text):
    x, w, y = _mul()
    {"post": y.grad_fn.register_hook, "pre": y.grad_fn.register_prehook,
     "tensor": y.register_hook}[kind](hook)
    with pytest.raises(error) as info:
        y.sum().backward()
    assert str(info.value).startswith(text)


def test_a_hook_is_named_in_the_error_by_its_name():
    def myhook(g):
        return gv.ones(3)

    x = gv.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(myhook)
    with pytest.raises(RuntimeError, match="^hook 'myhook' has changed the size of value"):
        (x * 2).sum().backward()


def test_post_hook_cannot_give_a_gradient_to_an_input_without_edge():
    x = gv.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2  # MulBackward0's second input (the 2) gets None
    y.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="can't replace a None gradient"):
        y.sum().backward()


def test_a_none_in_a_returned_tuple_drops_that_gradient():
    x, w, y = _mul()
    y.grad_fn.register_hook(lambda gi, go: (None, gi[1]))
    y.sum().backward()
    assert x.grad is None and w.grad.tolist() == [1.0, 2.0]
    x, w, y = _mul()
    y.grad_fn.register_prehook(lambda go: (None,))
    y.sum().backward()
    assert x.grad is None and w.grad is None


# -- retain_grad, handles, order ------------------------------------------------------------
def test_retain_grad_on_a_leaf_does_nothing_and_twice_counts_once():
    x = f64([1.0, 2.0])
    x.retain_grad()
    assert not x.retains_grad
    y = x * 2
    y.retain_grad()
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward(retain_graph=True)
    assert y.grad.tolist() == [4.0, 8.0]
    (y * y).sum().backward()
    assert y.grad.tolist() == [8.0, 16.0]  # accumulated, once per pass
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has "
                                           "requires_grad=False"):
        gv.ones(2).retain_grad()


def test_handles_remove_once_twice_and_as_context_managers():
    log = []
    x = f64([1.0, 2.0])
    y = x * 2
    post = y.grad_fn.register_hook(lambda gi, go: log.append("post"))
    pre = y.grad_fn.register_prehook(lambda go: log.append("pre"))
    with y.register_hook(lambda g: log.append("ctx")):
        pass
    post.remove()
    post.remove()
    pre.remove()
    y.sum().backward()
    assert log == []
    assert isinstance(post.id, int) and post.id != pre.id


def test_a_hook_removed_by_an_earlier_hook_of_the_same_pass_still_runs():
    log = []
    x = f64([1.0, 2.0])
    y = x * 2
    handles = []

    def first(g):
        log.append("first")
        handles[1].remove()

    handles.append(y.register_hook(first))
    handles.append(y.register_hook(lambda g: log.append("second")))
    y.sum().backward(retain_graph=True)
    assert log == ["first", "second"]  # the hooks to run were fixed when the node started
    y.sum().backward()
    assert log == ["first", "second", "first"]


def test_a_hook_registered_during_backward_runs_from_the_next_pass():
    log = []
    x = f64([1.0, 2.0])
    y = x * 2

    def adder(g):
        log.append("adder")
        y.register_hook(lambda g: log.append("added"))

    y.register_hook(adder)
    y.sum().backward(retain_graph=True)
    assert log == ["adder"]
    y.sum().backward()
    assert log == ["adder", "adder", "added"]


def test_leaf_hooks_chain_and_see_the_gradient_before_accumulation():
    x = f64([1.0, 2.0])
    seen = []
    x.register_hook(lambda g: g * 2)
    x.register_hook(lambda g: (seen.append(g.tolist()), None)[1])
    (x * 3).sum().backward()
    assert seen == [[6.0, 6.0]]
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])
