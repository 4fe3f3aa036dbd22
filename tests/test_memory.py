"""Deep graphs work without recursion, and graphs are freed as soon as nobody holds them.

Graphs are acyclic (a node never refers back to its outputs), so reference counting alone frees
them: several tests switch the cyclic garbage collector off to prove exactly that.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
import weakref
from contextlib import contextmanager

import numpy as np
import pytest

import gradviz as gv
from gradviz.autograd.function import Function


def f64(values, requires_grad=True):
    return gv.tensor(values, dtype=gv.float64, requires_grad=requires_grad)


@contextmanager
def no_cyclic_gc():
    """Only reference counting may free objects inside this block."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def traced_bytes() -> int:
    return tracemalloc.get_traced_memory()[0]


def test_million_op_chain_runs_forward_and_backward_without_recursion():
    n_pairs = 500_000  # 1,000,000 recorded ops: alternating mul and add
    c = 1.0000001
    limit = sys.getrecursionlimit()
    with no_cyclic_gc():  # also keeps the 1M-object build fast
        x = f64([1.0, 2.0])
        y = x * c
        first_node = weakref.ref(y.grad_fn)
        leaf_node = weakref.ref(y.grad_fn.next_functions[0][0])
        y = y + 0.5
        for _ in range(n_pairs - 1):
            y = y * c
            y = y + 0.5
        # Forward value: x c^n + 0.5 (c^n - 1) / (c - 1); gradient: c^n.
        cn = c ** n_pairs
        np.testing.assert_allclose(y.detach().numpy(), np.array([1.0, 2.0]) * cn
                                   + 0.5 * (cn - 1) / (c - 1), rtol=1e-6)
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), [cn, cn], rtol=1e-8)
        assert first_node() is not None
        del y  # tearing down a million-node chain must not overflow the C stack either
        assert first_node() is None and leaf_node() is None
    assert sys.getrecursionlimit() == limit  # no "fix" by raising the limit


def test_deep_chain_works_with_autograd_grad_and_retain_graph():
    x = f64([0.5])
    y = x
    for _ in range(5_000):  # 10,000 nodes: far past Python's recursion limit
        y = y.tanh() * 1.5
    (g1,) = gv.autograd.grad(y.sum(), x, retain_graph=True)
    (g2,) = gv.autograd.grad(y.sum(), x)
    assert g1.tolist() == g2.tolist() and np.isfinite(g1.item())


def test_graph_nodes_and_intermediates_are_freed_by_reference_counting():
    class Square(Function):
        @staticmethod
        def forward(ctx, a):
            r = a * a
            ctx.save_for_backward(a, r)  # saving an output must not make a cycle
            return r

        @staticmethod
        def backward(ctx, g):
            a, _ = ctx.saved_tensors
            return 2 * a * g

    class Double(Function):
        @staticmethod
        def forward(ctx, a):
            a.mul_(2)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with no_cyclic_gc():
        x = f64([1.0, 2.0])
        a = x * 3
        b = a.exp()
        c = Square.apply(b)
        d = Double.apply(c * 1)
        d.add_(1)
        d.retain_grad()
        d.register_hook(lambda g: g)
        e = d.tanh().sum()
        refs = [weakref.ref(t) for t in (a, b, c, d, e)]
        node_refs = [weakref.ref(t.grad_fn) for t in (a, b, c, d, e)]
        acc_ref = weakref.ref(a.grad_fn.next_functions[0][0])
        e.backward(retain_graph=True)
        del a, b, c, d, e
        assert [r() for r in refs] == [None] * 5
        assert [r() for r in node_refs] == [None] * 5
        assert acc_ref() is None
    assert x.grad is not None  # the leaf and its .grad stay


def test_leaf_grad_does_not_keep_the_graph_alive():
    with no_cyclic_gc():
        x = f64([1.0, 2.0])
        y = (x * 2).exp()
        node = weakref.ref(y.grad_fn)
        y.sum().backward()
        del y
        assert node() is None
        assert x.grad is not None and x.grad.grad_fn is None


def test_accumulate_grad_is_recreated_after_its_graph_died():
    x = f64([1.0])
    a = x * 2
    acc = weakref.ref(a.grad_fn.next_functions[0][0])
    assert (x * 3).grad_fn.next_functions[0][0] is acc()  # shared while a graph holds it
    del a
    gc.collect()
    assert acc() is None
    fresh = (x * 4).grad_fn.next_functions[0][0]
    assert fresh.variable is x


def test_retain_grad_holds_its_tensor_weakly():
    with no_cyclic_gc():
        x = f64([1.0])
        y = x * 2
        y.retain_grad()
        z = y * 3
        ref = weakref.ref(y)
        del y
        assert ref() is None  # the node's retain_grad entry does not keep y alive
        z.sum().backward()  # and backward copes with the vanished tensor
        assert x.grad.tolist() == [6.0]


def test_backward_frees_saved_tensors_and_dropping_the_graph_frees_the_rest():
    n, size = 200, 1000  # 200 saved results of 8 KB each: 1.6 MB
    gc.collect()
    tracemalloc.start()
    try:
        base = traced_bytes()
        x = gv.randn(size, dtype=gv.float64, requires_grad=True)
        y = x
        for _ in range(n):
            y = (y * 0.999).tanh()  # TanhBackward0 saves its result; * 0.999 saves a number
        built = traced_bytes() - base
        y.sum().backward()
        after_backward = traced_bytes() - base
        del y
        gc.collect()
        after_drop = traced_bytes() - base
    finally:
        tracemalloc.stop()
    saved_bytes = n * size * 8
    assert built > saved_bytes  # the check below is not vacuous
    assert built - after_backward > 0.9 * saved_bytes  # backward released the saved results
    assert after_drop < 0.05 * built  # only x and x.grad (16 KB) remain
    assert x.grad.shape == (size,)


def test_retain_graph_keeps_saved_tensors_until_the_graph_is_dropped():
    n, size = 100, 1000
    gc.collect()
    tracemalloc.start()
    try:
        base = traced_bytes()
        x = gv.randn(size, dtype=gv.float64, requires_grad=True)
        y = x
        for _ in range(n):
            y = (y * 0.5).sigmoid()  # SigmoidBackward0 saves its result
        built = traced_bytes() - base
        y.sum().backward(retain_graph=True)
        after_backward = traced_bytes() - base
        del y
        gc.collect()
        after_drop = traced_bytes() - base
    finally:
        tracemalloc.stop()
    saved_bytes = n * size * 8
    assert built > saved_bytes
    assert after_backward > built - 0.1 * saved_bytes  # still held for another backward
    assert after_drop < 0.05 * built


@pytest.mark.parametrize("create_graph", [False, True])
def test_autograd_grad_leaves_no_graph_behind(create_graph):
    x = f64([1.0, 2.0])
    with no_cyclic_gc():
        y = (x * x).exp()
        node = weakref.ref(y.grad_fn)
        (g,) = gv.autograd.grad(y.sum(), x, create_graph=create_graph)
        del y
        if create_graph:
            assert node() is not None  # g's graph goes through y's node
            del g
        assert node() is None
