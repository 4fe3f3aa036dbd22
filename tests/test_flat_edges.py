"""A node keeps its edges without a tuple per edge (NOTE [flat edges] in autograd/node.py).

``next_functions`` is built on each access, as PyTorch's is; what it returns is what nodes
returned when they stored the tuple: one ``(node, input_nr)`` pair per input, plain tuples on
every recording path, ``()`` for ``AccumulateGrad``.
"""

from __future__ import annotations

import gc
import weakref

import pytest

import gradviz as gv
from gradviz.autograd.function import Function
from gradviz.autograd.graph import AccumulateGrad, Edge, Node, gradient_edge


def f64(values, requires_grad=True):
    return gv.tensor(values, dtype=gv.float64, requires_grad=requires_grad)


def acc(t):
    """The leaf's AccumulateGrad node."""
    return gradient_edge(t).function


def edge_tuples(node: Node) -> list:
    """What the node refers to that is an edge pair, or a tuple of them (the old storage)."""

    def is_pair(x: object) -> bool:
        return isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], Node)

    return [r for r in gc.get_referents(node)
            if is_pair(r) or (isinstance(r, tuple) and any(is_pair(e) for e in r))]


def nodes_of_chain(y) -> list:
    out, fn = [], y.grad_fn
    while not isinstance(fn, AccumulateGrad):
        out.append(fn)
        fn = fn.next_functions[0][0]
    return out


class MulAdd(Function):
    @staticmethod
    def forward(ctx, a, b, k):
        ctx.k = k
        return a * b + k

    @staticmethod
    def backward(ctx, g):
        return g * 2, g * 3, None


class Twice(Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


# -- no tuple per edge ----------------------------------------------------------------------------
def test_a_chain_of_ops_keeps_no_edge_tuple_alive() -> None:
    x = f64([0.5, 0.25])
    y = x
    for _ in range(5):
        y = y * 1.000001  # the generated fast path (one edge)
    y = y.tanh()  # a unary fast path
    y = y * f64([2.0, 3.0])  # two edges
    y = y + f64([[1.0, 2.0]] * 3)  # broadcasting: the general path (_record)
    nodes = nodes_of_chain(y)
    assert len(nodes) == 8
    for node in nodes:
        assert edge_tuples(node) == [], type(node).__name__


def test_each_op_of_a_chain_leaves_one_object_for_the_cyclic_collector() -> None:
    # The old storage left three: the node, its next_functions tuple, the (node, nr) pair.
    x = f64([0.5, 0.25])
    y = x * 1.000001  # compile the fast path and warm caches before counting
    n = 2000
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        before = len(gc.get_objects())
        for _ in range(n):
            y = y * 1.000001
        grown = len(gc.get_objects()) - before
    finally:
        if was:
            gc.enable()
    assert n <= grown < 1.2 * n, grown
    y.sum().backward()
    assert x.grad is not None


def test_custom_functions_keep_no_edge_tuple_alive() -> None:
    a, b = f64([1.0, 2.0]), f64([3.0, 4.0])
    one, two = Twice.apply(a), MulAdd.apply(a, b, 1.5)
    assert edge_tuples(one.grad_fn) == [] and edge_tuples(two.grad_fn) == []
    assert one.grad_fn.next_functions == ((acc(a), 0),)
    assert two.grad_fn.next_functions == ((acc(a), 0), (acc(b), 0))  # the number: no edge
    (one.sum() + two.sum()).backward()
    assert a.grad.tolist() == [4.0, 4.0] and b.grad.tolist() == [3.0, 3.0]


# -- what next_functions returns ------------------------------------------------------------------
def test_next_functions_of_one_two_and_more_edges() -> None:
    a, b, c = f64([[1.0, 2.0]]), f64([[3.0], [4.0]]), f64([5.0])
    d = f64([[1.0, 1.0]], requires_grad=False)
    one = a.tanh().grad_fn.next_functions
    assert one == ((acc(a), 0),) and type(one) is tuple and type(one[0]) is tuple
    scaled = (a * 2).grad_fn.next_functions  # the number is an input too, as in PyTorch
    assert scaled == ((acc(a), 0), (None, 0))
    two = (a * a).grad_fn.next_functions
    assert two == ((acc(a), 0), (acc(a), 0))
    assert two[0][0] is two[1][0] is acc(a)
    mixed = (a * d).grad_fn.next_functions  # an input needing no gradient: (None, 0)
    assert mixed == ((acc(a), 0), (None, 0))
    three = gv.addmm(c, a.t(), a).grad_fn.next_functions
    t_node = three[1][0]
    assert three == ((acc(c), 0), (t_node, 0), (acc(a), 0))
    assert t_node.name() == "TBackward0" and t_node.next_functions == ((acc(a), 0),)
    four = gv.cat([a, a * 1, d, b.t()]).grad_fn.next_functions
    assert [(n if n is None else n.name(), nr) for n, nr in four] == [
        ("torch::autograd::AccumulateGrad", 0), ("MulBackward0", 0), (None, 0),
        ("TBackward0", 0)]
    for edges in (one, scaled, two, mixed, three, four):
        assert all(type(e) is tuple and len(e) == 2 for e in edges)
    assert acc(a).next_functions == ()
    pair = a.tanh().grad_fn.next_functions
    assert repr(pair) == f"(({acc(a)!r}, 0),)"  # as PyTorch prints them: plain pairs


def test_a_multi_output_node_keeps_its_edges() -> None:
    a = f64([[1.0, 2.0], [3.0, 4.0]])
    values, _ = (a * 1).max(dim=1)
    fn = values.grad_fn
    assert fn.name() == "MaxBackward0" and edge_tuples(fn) == []
    assert [(n.name(), nr) for n, nr in fn.next_functions] == [("MulBackward0", 0)]


def test_views_and_in_place_ops_keep_their_edges() -> None:
    x = f64([1.0, 2.0, 3.0])
    h = x * 1
    mul_node = h.grad_fn
    v = h[1:]
    assert v.grad_fn.next_functions == ((mul_node, 0),)
    v.mul_(2)  # through a view: CopySlices over the base's old history
    assert h.grad_fn.name() == "torch::autograd::CopySlices"
    assert h.grad_fn.next_functions == ((mul_node, 0), (None, 0))  # (None, 0): the 2
    assert v.grad_fn.next_functions == ((h.grad_fn, 0),)
    y = x * 1
    old = y.grad_fn
    y.add_(f64([1.0, 1.0, 1.0]))
    assert y.grad_fn.next_functions[0] == (old, 0)
    (h.sum() + y.sum()).backward()
    assert x.grad.tolist() == [2.0, 3.0, 3.0]


# -- the setter -----------------------------------------------------------------------------------
def test_assigning_next_functions() -> None:
    a, b = f64([1.0]), f64([2.0])
    node = (a * b).grad_fn
    node.next_functions = ((acc(b), 0),)
    assert node.next_functions == ((acc(b), 0),)
    node.next_functions = ((acc(b), 0), (None, 0))
    assert node.next_functions == ((acc(b), 0), (None, 0))
    three = ((acc(a), 0), (acc(b), 0), (None, 0))
    node.next_functions = three
    assert node.next_functions is three  # three or more edges: the tuple as given
    node.next_functions = ()
    assert node.next_functions == ()
    # Pairs that are not plain tuples are kept as given (their type, their identity).
    given = (Edge(acc(a), 0),)
    node.next_functions = given
    assert node.next_functions is given and type(node.next_functions[0]) is Edge
    assert node.next_functions == ((acc(a), 0),)
    with pytest.raises(TypeError, match=r"next_functions must be a tuple of \(node, input_nr\)"):
        node.next_functions = (acc(a),)


def test_a_replaced_edge_is_not_kept_alive() -> None:
    a, b = f64([1.0]), f64([2.0])
    node = (a * b).grad_fn
    target = (a * 3).grad_fn
    gone = weakref.ref(target)
    node.next_functions = ((acc(a), 0), (target, 0))  # the second edge, in a slot
    node.next_functions = ((acc(a), 0),)  # one edge now: the second slot lets go of it
    del target
    assert gone() is None


def test_a_node_built_through_init_keeps_no_edge_tuple() -> None:
    b = f64([2.0])

    class Scale(Node):
        __slots__ = ()

        def apply(self, grad_outputs, create_graph):
            return (grad_outputs[0] * 5,)

    s = Scale(((acc(b), 0),), ((b.shape, b._data.dtype),))
    assert s.next_functions == ((acc(b), 0),) and edge_tuples(s) == []
    assert s(gv.ones(1)).tolist() == [5.0]
