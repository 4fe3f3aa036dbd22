"""The generated three-input path (``addmm``, what ``F.linear`` records with a bias): the same
values, gradients, node, ``next_functions``, saved values and ``op`` event as the general
dispatch, for every set of inputs needing a gradient, and readable with ``generated_source``."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import gradviz
from gradviz import nn
from gradviz.autograd import events
from gradviz.ops import OPS, generated_source
from gradviz.ops.dispatch import general_dispatch

RNG = np.random.default_rng(19)


def _inputs(needs: tuple[bool, bool, bool], bias_shape: tuple[int, ...] = (4,),
            dtype: Any = np.float32) -> tuple[gradviz.Tensor, ...]:
    shapes = (bias_shape, (3, 5), (5, 4))
    return tuple(gradviz.tensor(RNG.standard_normal(s).astype(dtype), requires_grad=n)
                 for s, n in zip(shapes, needs))


def _saved(node: Any) -> dict[str, Any]:
    out = {}
    for name in sorted(a for a in dir(node) if a.startswith("_saved_")):
        v = getattr(node, name)
        out[name] = v.detach().numpy().tolist() if isinstance(v, gradviz.Tensor) else v
    return out


def _run(call: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The result, node and event of one call, then the gradients of a backward through it."""
    for a in args:
        a.grad = None
    seen: list = []
    listener = events.add_listener(lambda ev, data: seen.append((ev, data)))
    try:
        out = call(OPS["addmm"], *args, **kwargs)
    finally:
        events.remove_listener(listener)
    node = out.grad_fn
    (ev, data), = seen
    record = {"value": out.detach().numpy(), "dtype": out.dtype, "node": type(node),
              "next": node.next_functions, "saved": _saved(node),
              "in_meta": node._in_meta,
              "event": (ev, data["name"], data["node"] is node, data["inputs"], data["kwargs"])}
    (out * out).sum().backward()
    record["grads"] = [None if a.grad is None else a.grad.numpy() for a in args]
    return record


NEEDS = [n for n in itertools.product((False, True), repeat=3) if any(n)]


@pytest.mark.parametrize("needs", NEEDS, ids=["".join("xo"[n] for n in ns) for ns in NEEDS])
@pytest.mark.parametrize("kwargs", [{}, {"beta": 0.5, "alpha": 2.0}], ids=["plain", "scaled"])
def test_generated_addmm_makes_what_the_general_path_makes(needs: tuple, kwargs: dict) -> None:
    assert OPS["addmm"].fast is not None
    args = _inputs(needs)
    fast = _run(lambda op, *a, **k: op.fast(*a, **k), args, kwargs)
    assert OPS["addmm"].fast.__name__ == "addmm_fast"  # the checked-in generated function
    general = _run(general_dispatch, args, kwargs)
    np.testing.assert_array_equal(fast["value"], general["value"])
    for key in ("dtype", "node", "next", "saved", "in_meta"):
        assert fast[key] == general[key], key
    assert fast["event"][:3] == general["event"][:3] and fast["event"][3:] == general["event"][3:]
    for g_fast, g_general in zip(fast["grads"], general["grads"]):
        if g_general is None:
            assert g_fast is None
        else:
            np.testing.assert_array_equal(g_fast, g_general)


@pytest.mark.parametrize("bias_shape", [(4,), (1, 4), (3, 1), (3, 4), ()])
def test_a_broadcast_bias_gets_its_gradient_summed_back_to_its_shape(bias_shape: tuple) -> None:
    b, m1, m2 = _inputs((True, True, True), bias_shape, np.float64)
    out = gradviz.addmm(b, m1, m2)
    assert out.grad_fn.name() == "AddmmBackward0"
    out.sum().backward()
    # each bias element is added to as many output elements as it was broadcast over
    expected = np.full(bias_shape, 12.0 / max(1, int(np.prod(bias_shape))))
    np.testing.assert_array_equal(b.grad.numpy(), expected)
    assert b.grad.shape == bias_shape
    np.testing.assert_allclose(m2.grad.numpy(), m1.detach().numpy().T @ np.ones((3, 4)))


def test_linear_with_parameters_takes_the_generated_path() -> None:
    # A module's weight and bias are Parameters (a Tensor subclass): they take it too.
    layer = nn.Linear(5, 4)
    x = gradviz.tensor(RNG.standard_normal((3, 5)).astype(np.float32))
    calls: list = []
    fast = OPS["addmm"].fast
    OPS["addmm"].fast = lambda *a, **k: calls.append(a) or fast(*a, **k)
    try:
        y = layer(x)
    finally:
        OPS["addmm"].fast = fast
    assert len(calls) == 1
    node = y.grad_fn
    assert node.name() == "AddmmBackward0"
    assert [type(f).__name__ if f else None for f, _ in node.next_functions] == [
        "AccumulateGrad", None, "TBackward0"]
    assert node._saved_mat1_sym_sizes == (3, 5) and node._saved_mat2_sym_strides == (1, 5)
    y.sum().backward()
    np.testing.assert_allclose(layer.bias.grad.numpy(), np.full(4, 3.0))
    np.testing.assert_allclose(layer.weight.grad.numpy(),
                               np.ones((4, 3), np.float32) @ x.numpy(), rtol=1e-6)


def test_calls_the_three_input_path_does_not_take_go_the_general_way() -> None:
    b, m1, m2 = _inputs((True, True, True), dtype=np.float64)
    # a bias of another dtype: the general path's result (promoted)
    b32 = b.detach().float().requires_grad_()
    out = gradviz.addmm(b32, m1, m2)
    np.testing.assert_array_equal(out.detach().numpy(),
                                  general_dispatch(OPS["addmm"], b32, m1, m2).detach().numpy())
    assert out.dtype == gradviz.float64 and out.grad_fn._in_meta[0] == ((4,), np.float32)
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        gradviz.addmm(b, m1, m1)
    # integer tensors: no node, and the general path's result
    i = gradviz.tensor([[1, 2]])
    assert gradviz.addmm(gradviz.tensor([1]), i, gradviz.tensor([[3], [4]])).tolist() == [[12]]


def test_generated_source_shows_the_addmm_forward_and_node() -> None:
    src = generated_source("addmm")
    assert src.startswith("def addmm_fast(a, b, c, **kwargs):")
    assert "node = new(AddmmBackward0)" in src
    assert "node._rest = ((n0, i0), (n1, i1), (n2, i2))" in src  # NOTE [flat edges]
    assert "in_meta[0] = (x.shape, x.dtype)" in src  # the bias's shape, for the backward
    # one saved-value plan per set of inputs needing a gradient, bit i for input i
    assert "elif bits == 5:" in src and "'mat1': SavedVariable(b)" in src
    # the node's apply: the formulas' bodies copied in, the bias's gradient un-broadcast
    assert "def addmm_apply(_g_node, grad_outputs, create_graph):" in src
    assert "_g_0 = grad if beta == 1 else grad * beta  # the gradient for self" in src
    assert "_g_0 = _g_unbroadcast(_g_0, _g_meta[0])" in src
    assert "_g_2 = _mat2_grad(grad, mat1) * alpha if alpha != 1 else _mat2_grad(grad, mat1)" \
        in src
    assert OPS["addmm"].node_cls.__name__ == "AddmmBackward0"


def test_addmm_under_create_graph_matches_the_plain_backward() -> None:
    b, m1, m2 = _inputs((True, True, True), dtype=np.float64)
    out = gradviz.addmm(b, m1, m2, beta=0.5)
    gb, g1 = gradviz.autograd.grad(out.tanh().sum(), (b, m1), create_graph=True)
    pb, p1 = gradviz.autograd.grad(gradviz.addmm(b, m1, m2, beta=0.5).tanh().sum(), (b, m1))
    np.testing.assert_allclose(gb.detach().numpy(), pb.numpy())
    np.testing.assert_allclose(g1.detach().numpy(), p1.numpy())
    assert gb.grad_fn is not None
