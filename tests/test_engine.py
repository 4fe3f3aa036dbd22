"""The backward engine behaves as PyTorch's: order, accumulation, roots, retain/create graph,
``inputs=``, ``autograd.grad``, the graph's structure and the listener events.

Every expected value here was checked against torch 2.13.0 (the order lists, texts, gradients).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import gradviz as gv
from gradviz.autograd import events
from gradviz.autograd.function import Function
from gradviz.autograd.graph import AccumulateGrad, Node

FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)
ACC = "torch::autograd::AccumulateGrad"


def f64(values, requires_grad=True):
    return gv.tensor(values, dtype=gv.float64, requires_grad=requires_grad)


def record_order(*roots):
    """Register a prehook on every node reachable from ``roots``; the list fills during
    backward with the nodes in the order the engine runs them."""
    order, seen = [], set()
    stack = [r.grad_fn for r in roots]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        node.register_prehook(lambda grads, node=node: order.append(node))
        stack.extend(nxt for nxt, _ in node.next_functions)
    return order


def names(nodes):
    return [n.name() for n in nodes]


# -- engine order -------------------------------------------------------------------------------
def test_ready_queue_runs_highest_sequence_nr_first():
    x = f64([1.0, 2.0])
    y = x * 2
    z = y.exp()
    w = y.tanh()
    o = (z + w).sum()
    order = record_order(o)
    o.backward()
    # tanh was created after exp, so it has the higher sequence_nr and runs first.
    assert names(order) == ["SumBackward0", "AddBackward0", "TanhBackward0", "ExpBackward0",
                            "MulBackward0", ACC]


def test_accumulate_grad_runs_as_soon_as_it_is_ready():
    x = f64([1.0, 2.0])
    w = f64([0.5, 1.5])
    q = w.exp()  # created first: lowest priority among the op nodes
    p = x * 2
    o = (p + q).sum()
    order = record_order(o)
    o.backward()
    acc_x = p.grad_fn.next_functions[0][0]
    acc_w = q.grad_fn.next_functions[0][0]
    # x's AccumulateGrad jumps ahead of ExpBackward0, which had been waiting in the queue.
    assert order == [o.grad_fn, o.grad_fn.next_functions[0][0], p.grad_fn, acc_x, q.grad_fn,
                     acc_w]


def test_diamond_graph_waits_for_both_branches():
    x = f64([1.0, 2.0])
    a = x * 2
    b = a + 1
    c = a * 3
    d = (b * c).sum()
    order = record_order(d)
    d.backward()
    prod = d.grad_fn.next_functions[0][0]
    assert order == [d.grad_fn, prod, c.grad_fn, b.grad_fn, a.grad_fn,
                     a.grad_fn.next_functions[0][0]]
    # d = sum((2x + 1) * 6x) -> 24x + 6
    np.testing.assert_allclose(x.grad.numpy(), [30.0, 54.0])


def test_tensor_used_three_times_accumulates_once_with_the_sum():
    xv = np.array([0.5, 1.0])
    x = f64(xv)
    m = x * 2
    o = (m + x.exp() + x.tanh()).sum()
    acc = m.grad_fn.next_functions[0][0]
    received = []
    acc.register_prehook(lambda grads: received.append(grads[0].numpy().copy()))
    o.backward()
    expected = 2 + np.exp(xv) + (1 - np.tanh(xv) ** 2)
    assert len(received) == 1  # the three branches are summed in its input buffer first
    np.testing.assert_allclose(received[0], expected)
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_same_tensor_twice_in_one_op_counts_two_edges():
    x = f64([3.0, -1.0])
    y = x * x
    calls = []
    y.grad_fn.next_functions[0][0].register_prehook(lambda g: calls.append(1))
    assert y.grad_fn.next_functions[0][0] is y.grad_fn.next_functions[1][0]
    y.sum().backward()
    assert calls == [1]
    np.testing.assert_allclose(x.grad.numpy(), [6.0, -2.0])


# -- roots ----------------------------------------------------------------------------------------
def _capture_events():
    seen = []

    def listener(event, data):
        seen.append((event, data))

    events.add_listener(listener)
    return seen, listener


def test_multiple_roots_start_from_a_graph_root():
    xv = np.array([1.0, 2.0])
    x = f64(xv)
    a = x * 2
    b = x.exp()
    order = record_order(a, b)
    seen, listener = _capture_events()
    try:
        gv.autograd.backward([a, b], [f64([1.0, 1.0], False), f64([10.0, 10.0], False)])
    finally:
        events.remove_listener(listener)
    root = next(d["graph_root"] for e, d in seen if e == "backward_begin")
    assert root.name() == "torch::autograd::GraphRoot"
    assert root.next_functions == ((a.grad_fn, 0), (b.grad_fn, 0))
    assert names(order) == ["ExpBackward0", "MulBackward0", ACC]
    np.testing.assert_allclose(x.grad.numpy(), 2 + 10 * np.exp(xv))


def test_single_root_starts_at_its_grad_fn_without_graph_root():
    x = f64([1.0, 2.0])
    y = (x * 2).sum()
    seen, listener = _capture_events()
    try:
        y.backward()
    finally:
        events.remove_listener(listener)
    root = next(d["graph_root"] for e, d in seen if e == "backward_begin")
    assert root is y.grad_fn


def test_leaf_can_be_one_of_the_roots():
    x = f64([1.0, 2.0])
    a = x * 3
    gv.autograd.backward([a, x], [gv.ones(2, dtype=gv.float64), gv.ones(2, dtype=gv.float64)])
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 4.0])


# -- retain_graph / freeing -----------------------------------------------------------------------
def test_second_backward_without_retain_graph_raises_freed_error():
    x = f64([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError) as exc:
        y.backward()
    assert str(exc.value) == FREED


def test_retain_graph_allows_a_second_backward_that_accumulates():
    x = f64([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])
    with pytest.raises(RuntimeError, match=re.escape("Trying to backward through the graph")):
        y.backward()  # the second call did not retain


def test_backward_twice_through_nodes_that_save_no_tensors_works():
    # AddBackward0 saves only alpha, SumBackward0 only sizes: nothing to free, as in PyTorch.
    x = f64([1.0, 2.0])
    y = (x + 1).view(2, 1).sum()
    y.backward()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_number_operand_is_saved_and_freed_like_a_tensor():
    # PyTorch wraps the 3 of x * 3 in a tensor: it is freed, so a second backward fails.
    x = f64([1.0, 2.0])
    y = (x * 3).sum()
    y.backward()
    with pytest.raises(RuntimeError) as exc:
        y.backward()
    assert str(exc.value) == FREED
    with pytest.raises(RuntimeError, match=re.escape("Trying to backward")):
        _ = y.grad_fn.next_functions[0][0]._saved_other


# -- create_graph and higher order -----------------------------------------------------------
def test_create_graph_gives_higher_derivatives_of_a_cube():
    x = f64(2.0)
    (d1,) = gv.autograd.grad(x ** 3, x, create_graph=True)
    assert d1.item() == pytest.approx(12.0)  # 3x^2
    assert d1.grad_fn is not None
    (d2,) = gv.autograd.grad(d1, x, create_graph=True)
    assert d2.item() == pytest.approx(12.0)  # 6x
    (d3,) = gv.autograd.grad(d2, x)
    assert d3.item() == pytest.approx(6.0)
    assert d3.grad_fn is None


@pytest.mark.parametrize("fn, second", [
    (lambda t: t.exp(), lambda v: np.exp(v)),
    (lambda t: t.tanh(), lambda v: -2 * np.tanh(v) * (1 - np.tanh(v) ** 2)),
    (lambda t: t.sigmoid(), lambda v: (s := 1 / (1 + np.exp(-v))) * (1 - s) * (1 - 2 * s)),
])
def test_create_graph_differentiates_through_saved_results(fn, second):
    # These formulas use the op's own output (_saved_result): it must stay in the graph.
    xv = np.array([-0.5, 0.3, 1.2])
    x = f64(xv)
    (g,) = gv.autograd.grad(fn(x).sum(), x, create_graph=True)
    assert g.requires_grad
    (gg,) = gv.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), second(xv), rtol=1e-10)


def test_backward_with_create_graph_records_grad_and_warns():
    x = f64(2.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (x ** 3).backward(create_graph=True)
    # torch 2.13's whole text
    assert [str(w.message) for w in caught] == [
        "Using backward() with create_graph=True will create a reference cycle between the "
        "parameter and its gradient which can cause a memory leak. We recommend using "
        "autograd.grad when creating the graph to avoid this. If you have to use this function, "
        "make sure to reset the .grad fields of your parameters to None after use to break the "
        "cycle and avoid the leak."]
    g = x.grad
    assert g.item() == pytest.approx(12.0)
    # PyTorch copies the first gradient into a fresh tensor: CopyBackwards.
    assert type(g.grad_fn).__name__ == "CopyBackwards"
    x.grad = None
    g.backward()
    assert x.grad.item() == pytest.approx(12.0)  # d(3x^2)/dx = 6x


# -- inputs= ------------------------------------------------------------------------------------
def test_backward_inputs_limits_accumulation_to_a_leaf():
    x = f64([1.0, 2.0])
    w = f64([3.0, 4.0])
    z = (x * w).exp().sum()
    z.backward(inputs=[x])
    assert w.grad is None
    np.testing.assert_allclose(x.grad.numpy(), [3 * np.exp(3.0), 4 * np.exp(8.0)])


def test_backward_inputs_can_be_a_non_leaf():
    x = f64([1.0, 2.0])
    w = f64([3.0, 4.0])
    y = x * w
    z = y.exp().sum()
    z.backward(inputs=[y], retain_graph=True)
    assert x.grad is None and w.grad is None
    np.testing.assert_allclose(y.grad.numpy(), np.exp([3.0, 8.0]))
    assert y.retains_grad  # PyTorch gives a non-leaf input its .grad through retain_grad
    z.backward(inputs=x)  # a single tensor is accepted too
    assert w.grad is None
    np.testing.assert_allclose(x.grad.numpy(), [3 * np.exp(3.0), 4 * np.exp(8.0)])


# -- autograd.grad --------------------------------------------------------------------------------
def test_grad_returns_gradients_without_touching_dot_grad():
    x = f64([1.0, 2.0])
    (g,) = gv.autograd.grad((x * x).sum(), x)
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
    assert x.grad is None
    assert g.grad_fn is None and not g.requires_grad


def test_grad_unused_input_error_text():
    a = f64(1.0)
    b = f64(2.0)
    with pytest.raises(RuntimeError) as exc:
        gv.autograd.grad(a * 2, [a, b])
    assert str(exc.value) == ("The differentiated Tensor at index 1 appears to not have been used "
                              "in the graph. Set allow_unused=True if this is the desired "
                              "behavior.")


def test_grad_allow_unused_gives_none_and_materialize_gives_zeros():
    a = f64(1.0)
    b = f64([2.0, 3.0])
    ga, gb = gv.autograd.grad(a * 2, [a, b], allow_unused=True, retain_graph=True)
    assert ga.item() == 2.0 and gb is None
    ga, gb = gv.autograd.grad(a * 2, [a, b], materialize_grads=True)
    assert ga.item() == 2.0
    assert gb.shape == (2,) and gb.tolist() == [0.0, 0.0] and gb.dtype == gv.float64


def test_grad_materialize_with_allow_unused_false_is_a_value_error():
    a = f64(1.0)
    with pytest.raises(ValueError) as exc:
        gv.autograd.grad(a * 2, [a], allow_unused=False, materialize_grads=True)
    assert str(exc.value) == ("Expected allow_unused to be True or not passed when "
                              "materialize_grads=True, but got: allow_unused=False.")


def test_grad_with_respect_to_non_leaf_inputs():
    x = f64([1.0, 2.0])
    w = f64([3.0, 4.0])
    y = x * w
    z = y.exp().sum()
    gy, gx = gv.autograd.grad(z, [y, x])
    np.testing.assert_allclose(gy.numpy(), np.exp([3.0, 8.0]))
    np.testing.assert_allclose(gx.numpy(), np.exp([3.0, 8.0]) * [3.0, 4.0])
    assert y.grad is None and x.grad is None


def test_grad_outputs_weight_each_output():
    x = f64([1.0, 2.0])
    w = f64([3.0, 4.0])
    y = x * w
    z = y.exp().sum()
    (g,) = gv.autograd.grad(y, x, grad_outputs=f64([1.0, 10.0], False), retain_graph=True)
    np.testing.assert_allclose(g.numpy(), [3.0, 40.0])
    (g,) = gv.autograd.grad([y, z], [x], grad_outputs=[f64([1.0, 10.0], False), f64(2.0, False)])
    np.testing.assert_allclose(g.numpy(), [3.0, 40.0] + 2 * np.exp([3.0, 8.0]) * [3.0, 4.0])


# -- .grad and retain_grad --------------------------------------------------------------------
def test_leaf_grad_accumulates_across_backward_calls():
    x = f64([1.0, 2.0])
    (x * 3).sum().backward()
    first = x.grad
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 7.0])
    assert x.grad is first  # accumulated in place, as PyTorch does for a plain .grad
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_retain_grad_keeps_non_leaf_grad_and_accumulates():
    x = f64([1.0, 2.0])
    y = x * 2
    assert not y.retains_grad and not x.retains_grad
    y.retain_grad()
    assert y.retains_grad
    x.retain_grad()  # a no-op on a leaf
    assert not x.retains_grad
    z = (y * y).sum()
    z.backward(retain_graph=True)
    np.testing.assert_allclose(y.grad.numpy(), [4.0, 8.0])
    z.backward()
    # PyTorch 2.x accumulates a retained gradient across backward calls.
    np.testing.assert_allclose(y.grad.numpy(), [8.0, 16.0])
    np.testing.assert_allclose(x.grad.numpy(), [16.0, 32.0])


def test_non_leaf_grad_is_none_without_retain_grad():
    x = f64([1.0, 2.0])
    y = x * 2
    y.sum().backward()
    assert y.grad is None
    assert x.grad is not None


# -- graph structure ---------------------------------------------------------------------------
def test_next_functions_pairs_and_none_for_constants():
    x = f64([1.0, 2.0])
    w = f64([3.0, 4.0])
    y = x * 2
    nf = y.grad_fn.next_functions
    assert isinstance(nf, tuple) and len(nf) == 2
    assert type(nf[0][0]) is AccumulateGrad and nf[0][1] == 0
    assert nf[1] == (None, 0)
    s = x + w
    assert [type(n).__name__ for n, _ in s.grad_fn.next_functions] == ["AccumulateGrad"] * 2
    z = y.exp()
    assert z.grad_fn.next_functions == ((y.grad_fn, 0),)
    assert repr(z.grad_fn.next_functions[0]) == f"({y.grad_fn!r}, 0)"


def test_next_functions_input_nr_points_at_the_output_used():
    class Two(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    x = f64([1.0, 2.0])
    p, q = Two.apply(x)
    assert (p.output_nr, q.output_nr) == (0, 1)
    z = q * 1
    assert z.grad_fn.next_functions[0] == (q.grad_fn, 1)
    (p.sum() + z.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0])


def test_accumulate_grad_variable_is_the_leaf_and_is_shared():
    x = f64([1.0, 2.0])
    a = x * 2
    b = x * 3
    acc = a.grad_fn.next_functions[0][0]
    assert acc.variable is x
    assert b.grad_fn.next_functions[0][0] is acc
    assert type(acc).__name__ == "AccumulateGrad"
    assert acc.name() == ACC
    assert acc.next_functions == ()


@pytest.mark.parametrize("make, name", [
    (lambda x, c: x * c, "MulBackward0"),
    (lambda x, c: x + c, "AddBackward0"),
    (lambda x, c: x - c, "SubBackward0"),
    (lambda x, c: x / c, "DivBackward0"),
    (lambda x, c: 2 - x, "RsubBackward1"),
    (lambda x, c: -x, "NegBackward0"),
    (lambda x, c: x ** 2, "PowBackward0"),
    (lambda x, c: x ** c, "PowBackward1"),
    (lambda x, c: 2 ** x, "PowBackward2"),
    (lambda x, c: x.exp(), "ExpBackward0"),
    (lambda x, c: x.log(), "LogBackward0"),
    (lambda x, c: x.tanh(), "TanhBackward0"),
    (lambda x, c: x.sigmoid(), "SigmoidBackward0"),
    (lambda x, c: x.relu(), "ReluBackward0"),
    (lambda x, c: x.sum(), "SumBackward0"),
    (lambda x, c: x.sum(0), "SumBackward1"),
    (lambda x, c: x.mean(), "MeanBackward0"),
    (lambda x, c: x.view(2, 1), "ViewBackward0"),
    (lambda x, c: x.view(1, 2).t(), "TBackward0"),
    (lambda x, c: x.unsqueeze(0), "UnsqueezeBackward0"),
    (lambda x, c: x.expand(3, 2), "ExpandBackward0"),
    (lambda x, c: x.clone(), "CloneBackward0"),
    (lambda x, c: x.dot(c), "DotBackward0"),
    (lambda x, c: x.view(1, 2).mm(c.view(2, 1)), "MmBackward0"),
    (lambda x, c: x.float(), "ToCopyBackward0"),
])
def test_op_node_class_name_is_its_name(make, name):
    x = f64([1.0, 2.0])
    c = f64([3.0, 4.0], False)
    node = make(x, c).grad_fn
    assert node.name() == name
    assert type(node).__name__ == name
    assert isinstance(node, Node)
    assert re.fullmatch(rf"<{name} object at 0x[0-9a-f]+>", repr(node))


def test_sequence_nr_orders_nodes_by_creation():
    x = f64([1.0, 2.0])
    a = x * 2
    b = a.exp()
    c = x.tanh()
    seqs = [a.grad_fn._sequence_nr(), b.grad_fn._sequence_nr(), c.grad_fn._sequence_nr()]
    assert seqs == sorted(seqs) and len(set(seqs)) == 3
    assert a.grad_fn.next_functions[0][0]._sequence_nr() == 2**64 - 1


def test_node_metadata_is_a_persistent_dict():
    x = f64([1.0, 2.0])
    node = (x * 2).grad_fn
    assert node.metadata == {}
    assert node.metadata is node.metadata
    node.metadata["label"] = "double"
    assert node.metadata == {"label": "double"}


# -- saved values -------------------------------------------------------------------------------
def test_saved_inputs_of_mul():
    x = f64([1.0, 2.0])
    c = f64([3.0, 4.0], False)
    y = x * x
    assert y.grad_fn._saved_self is x and y.grad_fn._saved_other is x
    y = x * c
    # Only what x's gradient needs is saved: `other`; `self` is reported as None.
    assert y.grad_fn._saved_self is None
    assert y.grad_fn._saved_other.tolist() == [3.0, 4.0]
    y = c * x
    assert y.grad_fn._saved_self.tolist() == [3.0, 4.0] and y.grad_fn._saved_other is None


def test_saved_number_operand_reads_as_a_tensor():
    x = f64([1.0, 2.0])
    other = (x * 3).grad_fn._saved_other
    assert other.shape == () and other.item() == 3 and other.dtype == gv.int64
    assert not other.requires_grad


def test_saved_result_is_the_output_connected_to_its_node():
    x = f64([0.0, 1.0])
    y = x.exp()
    r = y.grad_fn._saved_result
    assert r is not y  # a new tensor (saving y itself would make a reference cycle)
    assert r.grad_fn is y.grad_fn and r.requires_grad and r.output_nr == 0
    np.testing.assert_allclose(r.detach().numpy(), np.exp([0.0, 1.0]))


def test_saved_non_tensor_values():
    x = f64([[1.0, 2.0, 3.0]])
    assert x.sum().grad_fn._saved_self_sym_sizes == (1, 3)
    n = x.mean(1).grad_fn
    assert (n._saved_dim, n._saved_keepdim, n._saved_self_sym_sizes) == ((1,), False, (1, 3))
    assert gv.add(x, 2.0, alpha=3).grad_fn._saved_alpha == 3
    p = (x ** 3).grad_fn
    assert p._saved_exponent == 3 and p._saved_self is x
    assert x.view(3, 1).transpose(0, 1).grad_fn._saved_dim0 == 0


def test_saved_tensors_raise_after_free_but_sizes_stay_readable():
    x = f64([1.0, 2.0])
    y = x.exp()
    s = y.sum()
    s.backward()
    with pytest.raises(RuntimeError) as exc:
        _ = y.grad_fn._saved_result
    assert str(exc.value) == FREED
    assert s.grad_fn._saved_self_sym_sizes == (2,)


def test_saved_tensors_stay_readable_with_retain_graph():
    x = f64([1.0, 2.0])
    y = x.exp()
    y.sum().backward(retain_graph=True)
    np.testing.assert_allclose(y.grad_fn._saved_result.detach().numpy(), np.exp([1.0, 2.0]))


# -- listeners -----------------------------------------------------------------------------------
def test_listener_sees_ops_and_backward_steps_in_engine_order():
    x = f64([1.0, 2.0])
    seen, listener = _capture_events()
    try:
        y = x * 2
        z = y.exp()
        w = y.tanh()
        o = (z + w).sum()
        o.backward()
    finally:
        events.remove_listener(listener)
    ops = [(d["name"], d["node"]) for e, d in seen if e == "op"]
    assert ops == [("mul", y.grad_fn), ("exp", z.grad_fn), ("tanh", w.grad_fn),
                   ("add", o.grad_fn.next_functions[0][0]), ("sum", o.grad_fn)]
    kinds = [e for e, _ in seen if e != "op"]
    assert kinds[0] == "backward_begin" and kinds[-1] == "backward_end"
    executed = [d["node"].name() for e, d in seen if e == "execute"]
    assert executed == ["SumBackward0", "AddBackward0", "TanhBackward0", "ExpBackward0",
                        "MulBackward0", ACC]
    (leaf,) = [d for e, d in seen if e == "leaf_grad"]
    assert leaf["tensor"] is x and leaf["before"] is None
    np.testing.assert_allclose(leaf["after"].numpy(), x.grad.numpy())


def test_removed_listener_receives_nothing():
    seen, listener = _capture_events()
    events.remove_listener(listener)
    x = f64([1.0, 2.0])
    (x * 2).exp().sum().backward()
    assert seen == []


def test_nothing_is_emitted_when_no_listener_is_registered(monkeypatch):
    # The hot paths must not even build event data without listeners: make emitting fatal.
    # (The engine reports to events.observer(), which does nothing then; a custom Function
    # does not even fetch it.)
    import gradviz.autograd.function as function_mod
    import gradviz.ops.dispatch as dispatch_mod

    def fail(event, data):
        raise AssertionError(f"emitted {event!r} with no listener registered")

    def fail_op(name, *fields):
        raise AssertionError(f"reported op {name!r} with no listener registered")

    def fail_fetch():
        raise AssertionError("asked for an observer with no listener registered")

    saved = events.listeners()
    for fn in saved:
        events.remove_listener(fn)
    try:
        monkeypatch.setattr(events, "emit", fail)
        monkeypatch.setattr(events.Forwarding, "__init__", fail)  # no event dicts' adapter
        monkeypatch.setattr(function_mod, "observer", fail_fetch)
        for mod in (events, dispatch_mod):  # the dispatch point reports ops with emit_op
            monkeypatch.setattr(mod, "emit_op", fail_op)
        assert type(events.observer()) is events.Observer  # the one whose methods do nothing

        class Double(Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = f64([1.0, 2.0])
        x.register_hook(lambda g: None)
        y = Double.apply(x * 3)
        y.mul_(2)
        y.retain_grad()
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), [12.0, 12.0])
    finally:
        for fn in saved:
            events.add_listener(fn)


def test_an_observer_is_called_directly_and_listeners_get_events():
    # NOTE [perf: direct observer]: the engine calls the observer a listener registered with
    # (alone: that very observer); a plain listener gets events through the dict adapter.
    seen, calls, others = [], [], []

    class Mine(events.Forwarding):
        def execute(self, node, grad_outputs, grad_inputs):
            calls.append(node.name())

    def listener(event, data):
        seen.append(event)

    def other(event, data):
        others.append(event)

    saved = events.listeners()
    for fn in saved:
        events.remove_listener(fn)
    try:
        events.add_listener(listener, Mine())
        assert type(events.observer()) is Mine
        (f64([1.0, 2.0]) * 2).sum().backward()
        assert calls == ["SumBackward0", "MulBackward0", "torch::autograd::AccumulateGrad"]
        # What Mine does not override still reaches the listener as events.
        assert "execute" not in seen and "enqueue" in seen and "backward_end" in seen
        events.add_listener(other)
        assert type(events.observer()) not in (Mine, events.Forwarding)  # both are told
        calls.clear()
        seen.clear()
        (f64([1.0]) * 2).sum().backward()
        assert calls == ["SumBackward0", "MulBackward0", "torch::autograd::AccumulateGrad"]
        assert "execute" not in seen and "enqueue" in seen
        assert others.count("execute") == 3 and "enqueue" in others
        events.remove_listener(other)
        events.remove_listener(listener)
        assert type(events.observer()) is events.Observer
        events.add_listener(listener)  # registered again without an observer: events only
        assert type(events.observer()) is events.Forwarding
        events.remove_listener(listener)
    finally:
        for fn in saved:
            events.add_listener(fn)


def test_error_event_is_sent_and_the_exception_propagates_unchanged():
    class Boom(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            raise KeyError("from backward")

    x = f64([1.0])
    y = Boom.apply(x).sum()
    seen, listener = _capture_events()
    try:
        with pytest.raises(KeyError, match="from backward"):
            y.backward()
    finally:
        events.remove_listener(listener)
    errors = [d for e, d in seen if e == "error"]
    assert len(errors) == 1 and isinstance(errors[0]["error"], KeyError)
    assert errors[0]["node"] is y.grad_fn.next_functions[0][0]


def test_backward_pauses_the_cyclic_collector_and_restores_it():
    import gc

    seen = []
    x = f64([1.0, 2.0])
    y = x * 3
    y.register_hook(lambda g: seen.append(gc.isenabled()))
    assert gc.isenabled()
    y.sum().backward()
    assert seen == [False] and gc.isenabled()

    def fail(g):
        raise ValueError("boom")

    z = x * 2
    z.register_hook(fail)
    with pytest.raises(ValueError, match="boom"):
        z.sum().backward()
    assert gc.isenabled()  # restored after an error too

    gc.disable()  # a program that turned the collector off keeps it off
    try:
        (x * 4).sum().backward()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_fresh_gradient_becomes_grad_without_a_copy():
    made = []

    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            out = g * 2
            made.append(id(out._data))  # the id only: no reference is kept
            return out

    x = f64([1.0, 2.0])
    Double.apply(x).sum().backward()
    assert id(x.grad._data) == made[0]  # PyTorch "steals" such a gradient too
    assert x.grad.tolist() == [2.0, 2.0]


def test_a_linear_weights_gradient_is_stolen_with_the_variables_layout():
    # F.linear's weight gradient arrives through TBackward0 as the transpose of a fresh product:
    # a C-contiguous view nobody else holds, so .grad is that view (no copy), typed and shaped
    # as the weight, and the setter's checks hold for it
    lin = gv.nn.Linear(4, 3)
    lin(gv.randn(5, 4)).sum().backward()
    g = lin.weight.grad
    assert g._data.base is not None and g._data.flags.c_contiguous  # the product, not a copy
    assert g.dtype == lin.weight.dtype and g.shape == lin.weight.shape
    assert not g.requires_grad and g.grad_fn is None
    lin.weight.grad = g  # what the setter accepts


def test_a_gradient_someone_else_holds_is_copied():
    # the same array reaches two leaves: each gets its own .grad
    a, b = f64([1.0, 2.0]), f64([3.0, 4.0])
    (a + b).sum().backward()
    assert not np.shares_memory(a.grad._data, b.grad._data)
    a.grad.zero_()
    assert b.grad.tolist() == [1.0, 1.0]
    # the caller's gradient for a leaf root
    x = f64([1.0, 2.0])
    g = f64([5.0, 6.0], requires_grad=False)
    x.backward(g)
    assert not np.shares_memory(x.grad._data, g._data)
    # a tensor a hook returns and the user keeps
    kept = f64([7.0, 8.0], requires_grad=False)
    y = f64([1.0, 2.0])
    y.register_hook(lambda grad: kept)
    (y * 1).sum().backward()
    assert not np.shares_memory(y.grad._data, kept._data)
    y.grad.zero_()
    assert kept.tolist() == [7.0, 8.0]
    # a gradient a retained graph still saves
    w = f64([1.0, 2.0])
    h = w * 1
    z = (h * h).sum()
    z.backward(retain_graph=True)
    before = w.grad.clone()
    z.backward()
    assert w.grad.tolist() == (before * 2).tolist()


def test_broadcast_gradients_keep_each_input_shape_even_when_empty():
    a, b = f64(np.zeros((1, 0))), f64(np.zeros((3, 0)))
    (a + b).sum().backward()
    assert a.grad.shape == (1, 0) and b.grad.shape == (3, 0)
    c, d = f64(np.ones((2, 1))), gv.ones(3, dtype=gv.float32, requires_grad=True)
    (c * d).sum().backward()
    assert c.grad.shape == (2, 1) and c.grad.dtype == gv.float64
    assert d.grad.shape == (3,) and d.grad.dtype == gv.float32


# -- the engine's parts ----------------------------------------------------------------------------
def test_a_long_chain_needs_no_recursion():
    import sys

    x = f64([1.0, 2.0])
    y = x
    for _ in range(100_000):
        y = y * 1.0
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(150)  # far below the chain's depth: any recursion would fail
    try:
        y.sum().backward()
    finally:
        sys.setrecursionlimit(limit)
    assert x.grad.tolist() == [1.0, 1.0]


def test_ready_queue_runs_the_latest_node_first_and_equals_in_arrival_order():
    from gradviz.autograd.engine import InputBuffer, ReadyQueue

    leaves = [f64([float(i)]) for i in range(3)]
    accs = [(t * 1).grad_fn.next_functions[0][0] for t in leaves]
    ops = [(t * 1).grad_fn for t in leaves]
    queue = ReadyQueue()
    for node in (ops[0], accs[1], ops[2], accs[0], accs[2], ops[1]):
        queue.push(node, InputBuffer([None]))
    assert queue.nodes() == [accs[1], accs[0], accs[2], ops[2], ops[1], ops[0]]
    expected = queue.nodes()
    assert [queue.pop()[0] for _ in range(6)] == expected and not queue


def test_nodes_left_waiting_fail_loudly():
    from gradviz.autograd.engine import GraphTask, InputBuffer, compute_dependencies, execute
    from gradviz.autograd.graph import GraphRoot, gradient_edge

    x = f64([1.0, 2.0])
    acc = gradient_edge(x).function
    meta = ((x.shape, x._data.dtype),)

    class Sends(Node):
        def apply(self, grad_outputs, create_graph):
            return (grad_outputs[0],)

    class Drops(Node):  # a broken node: no result for its edge, so acc never becomes ready
        def apply(self, grad_outputs, create_graph):
            return ()

    root = GraphRoot(((Sends(((acc, 0),), meta), 0), (Drops(((acc, 0),), meta), 0)),
                     [np.ones(2), np.ones(2)])
    task = GraphTask(False, False, events.observer())
    task.dependencies = compute_dependencies(root)
    with pytest.raises(RuntimeError, match="could not compute gradients for some functions"):
        execute(task, root, InputBuffer())
    assert x.grad is None


def test_a_watching_observer_sees_each_node_once_in_order():
    from gradviz.autograd.engine import run_backward

    class Order(events.Observer):
        def __init__(self):
            self.seen = []

        def execute(self, node, grad_outputs, grad_inputs):
            self.seen.append(node.name())

    x = f64([1.0, 2.0])
    order = Order()
    run_backward([(x.exp() * 2).sum()], [gv.tensor(1.0, dtype=gv.float64)], False, False,
                 observer=order)
    assert order.seen == ["SumBackward0", "MulBackward0", "ExpBackward0",
                          "torch::autograd::AccumulateGrad"]
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]))


class Nested(Function):
    """Its backward runs a backward pass of its own, ``depth`` levels deep (a reentrant
    backward, as checkpointing runs); the innermost one may fail."""

    @staticmethod
    def forward(ctx, x, depth, fail=False):
        ctx.depth, ctx.fail = depth, fail
        return x * 1

    @staticmethod
    def backward(ctx, g):
        if ctx.depth == 0 and ctx.fail:
            raise ValueError("the innermost backward failed")
        if ctx.depth > 0:
            with gv.enable_grad():
                inner = gv.ones(1, requires_grad=True)
                Nested.apply(inner * 2, ctx.depth - 1, ctx.fail).sum().backward()
                assert inner.grad.tolist() == [6.0]  # 2 (inner * 2) times 3 (this backward)
        return g * 3, None, None


@pytest.mark.parametrize("depth", [2000, 200])
def test_a_reentrant_backward_nested_deeper_than_the_recursion_limit_works(depth):
    # torch 2.13 runs it (past MAX_DEPTH nested passes on a new thread); gradviz used to end
    # in RecursionError at ~80 levels.
    x = f64([1.0])
    Nested.apply(x, depth).sum().backward()
    assert x.grad.tolist() == [3.0]
    assert gv.is_grad_enabled()
    from gradviz.autograd.engine import current_node

    assert current_node() is None


def test_an_error_deep_in_a_reentrant_backward_reaches_the_caller_unchanged():
    x = f64([1.0])
    with pytest.raises(ValueError, match="^the innermost backward failed$"):
        Nested.apply(x, 300, True).sum().backward()
    assert x.grad is None and gv.is_grad_enabled()



class Queues(Function):
    """Its backward queues callbacks on the engine, as PyTorch's library code does; with
    ``nested`` it also runs a backward pass of its own, which queues one of its own."""

    @staticmethod
    def forward(ctx, x, log, nested=False, fail=False):
        ctx.log, ctx.nested, ctx.fail = log, nested, fail
        return x * 1

    @staticmethod
    def backward(ctx, g):
        engine = gv.autograd.Variable._execution_engine
        log = ctx.log

        def first():
            from gradviz.autograd.engine import current_node

            log.append(("first", gv.is_grad_enabled(), current_node()))
            engine.queue_callback(lambda: log.append("queued by a callback"))

        engine.queue_callback(first)
        if ctx.nested:
            with gv.enable_grad():
                Queues.apply(gv.ones(1, requires_grad=True), log).sum().backward()
            log.append("inner pass returned")
        if ctx.fail:
            raise ValueError("this backward failed")
        return g * 2, None, None, None


def test_queued_callbacks_run_when_their_pass_ends():
    # As torch 2.13: after the last node, in order, with the pass's grad mode and no node
    # running; a callback may queue another; an inner (reentrant) pass runs its own at its end.
    log = []
    x = f64([1.0])
    Queues.apply(x, log).sum().backward()
    assert log == [("first", False, None), "queued by a callback"] and x.grad.tolist() == [2.0]
    log.clear()
    y = Queues.apply(x, log).sum()
    assert gv.autograd.grad(y, x, create_graph=True)[0].tolist() == [2.0]
    assert log == [("first", True, None), "queued by a callback"]
    log.clear()
    Queues.apply(x, log, True).sum().backward()
    assert log == [("first", False, None), "queued by a callback", "inner pass returned",
                   ("first", False, None), "queued by a callback"]
    log.clear()
    with pytest.raises(ValueError, match="^this backward failed$"):
        Queues.apply(x, log, False, True).sum().backward()
    assert log == []  # a failed pass runs none


def test_queue_callback_outside_a_backward_pass_is_refused():
    with pytest.raises(RuntimeError, match="^Final callbacks can only be installed during "
                                           r"backward pass\.$"):
        gv.autograd.Variable._execution_engine.queue_callback(print)

def test_two_threads_in_backward_each_see_their_own_pass():
    """current_node and will_engine_execute_node answer for the calling thread's pass, even
    while another thread is inside its own backward (the engine's state is per thread)."""
    import threading

    from gradviz.autograd.engine import current_node
    from gradviz.autograd.graph import will_engine_execute_node

    barrier = threading.Barrier(2, timeout=10)
    seen: dict[str, tuple] = {}
    graphs = {}
    for name in ("a", "b"):
        x = gv.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3.0
        graphs[name] = (x, y)

    def hook(name):
        def fn(grad):
            barrier.wait()  # both threads are inside backward now
            other = graphs["b" if name == "a" else "a"][1].grad_fn
            seen[name] = (current_node() is graphs[name][1].grad_fn,
                          will_engine_execute_node(graphs[name][1].grad_fn),
                          will_engine_execute_node(other))
            barrier.wait()  # neither pass ends before both have asked
            return grad
        return fn

    def run(name):
        _x, y = graphs[name]
        y.register_hook(hook(name))
        y.sum().backward()

    threads = [threading.Thread(target=run, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    # the hook runs as part of MulBackward0's call: it is the current node of its thread
    assert seen == {"a": (True, True, False), "b": (True, True, False)}
    assert current_node() is None
