"""What running PyTorch's op database (its OpInfo samples) on torch 2.13 and on gradviz found:
gradients, graphs and method forms where gradviz differed from torch, each pinned here.

The tables reuse tests/test_ops_more.py's leaves and helpers (``x``, ``y`` 2x3, ``v`` (3),
``s`` 0-d, ``z`` with signed zeros; ``m`` is the module). The expectations are torch 2.13.0's,
read off it for the same sources; tests/parity/test_opinfo_findings_parity.py derives them again
from a live torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_ops_more import chain, env, leaf_grad, plain, run, same_values, saved

import gradviz
from gradviz.autograd import gradcheck, gradgradcheck

# (source, leaf, gradient of out.sum()), read off torch 2.13.0
GRADS = [
    # index_fill writes its value once per position, however often the index repeats it
    ("m.index_fill(x, 1, m.tensor([0, 2, 0]), s)", "s", 4.0),
    ("m.index_fill(x, 1, m.tensor([0, 2, 0]), s)", "x", [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]),
    ("x.index_fill(0, m.tensor([1, 1]), 2.0)", "x", [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]),
    # p < 1: 0 at a zero element (not NaN), and everywhere when the norm itself is 0
    ("m.linalg.norm(z, ord=0.5)", "z", [0.0, 0.0, 2.224744871391589, -1.8164965809277265]),
    ("m.norm(z, p=0.5)", "z", [0.0, 0.0, 2.224744871391589, -1.8164965809277265]),
    ("m.linalg.vector_norm(z, ord=-0.5)", "z", [0.0, 0.0, 0.0, 0.0]),
    ("m.linalg.vector_norm(x * m.tensor([[0.0], [1.0]], dtype=m.float64), ord=0.3, dim=1)", "x",
     [[0.0, 0.0, 0.0], [7.383201683795179, -34.372766562965936, 11.141290175370232]]),
    # a mask larger than the input broadcasts it: the gradient is summed back to its shape
    ("v.masked_fill(m.tensor([[True, False, False], [True, True, False]]), 0.0)", "v",
     [0.0, 1.0, 2.0]),
    ("v.masked_fill(m.tensor([[True, False, False], [True, True, False]]), s)", "v",
     [0.0, 1.0, 2.0]),
    ("v.masked_fill(m.tensor([[True, False, False], [True, True, False]]), s)", "s", 3.0),
    ("s.masked_fill(m.tensor([True, False, False]), -1.0)", "s", 2.0),
    # dist's 0-d output hides the broadcast shape: a 0-d input still gets a 0-d gradient
    ("m.dist(s, x)", "s", 0.9771398364036777),
    ("m.dist(x, s, 3)", "s", 0.9171982693144791),
    ("m.dist(x, s, 3)", "x", [[-0.007337586154515837, -0.8878479246964157, -0.029350344618063334],
                              [0.1834396538628958, -0.1834396538628958, 0.007337586154515828]]),
    ("m.dist(v, x, 1)", "v", [-2.0, 0.0, 2.0]),
    ("s.index_select(0, m.tensor([0])) * 3", "s", 3.0),
    ("m.diff(v, n=0, append=s.reshape(1)) * v", "v", [0.5, -1.0, 1.5]),
    ("x.sum_to_size(()) * 2", "x", [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]),
]

# (source, node chain, the first node's saved names or None: not compared), read off torch 2.13.0
GRAPHS = [
    # n=0 copies the input into a new tensor; prepend and append go unused. (CopyBackwards
    # shows src_sym_sizes, which torch keeps unexposed: tests/parity/test_torch_parity.py.)
    ("m.diff(v, n=0)", ["CopyBackwards", "  AccumulateGrad"], None),
    ("m.diff(x, n=0, prepend=y)", ["CopyBackwards", "  AccumulateGrad"], None),
    # the target is an argument, not an input: one edge
    ("m.nn.functional.soft_margin_loss(x, m.sign(y.detach()))",
     ["SoftMarginLossBackward0", "  AccumulateGrad"], ["reduction", "self", "target"]),
    ("m.nn.functional.soft_margin_loss(x, m.sign(y.detach()), reduction='none')",
     ["SoftMarginLossBackward0", "  AccumulateGrad"], ["reduction", "self", "target"]),
    # -1 is the inverse itself; other negative powers multiply inverses
    ("m.linalg.matrix_power(x[:, :2], -1)",
     ["LinalgInvExBackward0", "  SliceBackward0", "    AccumulateGrad"], ["inverse"]),
    ("m.linalg.matrix_power(x[:, :2], -2)",
     ["MmBackward0", "  LinalgInvExBackward0", "    SliceBackward0", "      AccumulateGrad"],
     ["mat2", "mat2_sym_sizes", "mat2_sym_strides", "self", "self_sym_sizes",
      "self_sym_strides"]),
    # an empty size sums everything into a new tensor, even a 0-d one
    ("x.sum_to_size(())", ["SumBackward0", "  AccumulateGrad"], ["self_sym_sizes"]),
    ("s.sum_to_size(())", ["SumBackward0", "  AccumulateGrad"], ["self_sym_sizes"]),
    ("v.sum_to_size([])", ["SumBackward0", "  AccumulateGrad"], ["self_sym_sizes"]),
    ("s.index_select(0, m.tensor([0]))", ["IndexSelectBackward0", "  AccumulateGrad"],
     ["dim", "index", "self_sym_sizes"]),
    ("s.index_select(-1, m.tensor(0))", ["IndexSelectBackward0", "  AccumulateGrad"],
     ["dim", "index", "self_sym_sizes"]),
]

# (source, dtype, values), read off torch 2.13.0
VALUES = [
    ("s.index_select(0, m.tensor([0]))", "float64", 0.4),
    ("m.diff(v, n=0, append=s.reshape(1))", "float64", [0.25, -0.5, 0.75]),
    ("x.sum_to_size(())", "float64", 1.1),
    ("s.sum_to_size(())", "float64", 0.4),
]

# (source, error type, message), read off torch 2.13.0
ERRORS = [
    ("s.index_select(0, m.tensor([0, 0]))", "RuntimeError",
     "index_select(): Index to scalar can have only 1 value, got 2 value(s)"),
    ("s.index_select(0, m.tensor([1]))", "IndexError", "index out of range in self"),
]

# p = 0 counts the non-zero elements: the node is recorded, its gradient is undefined
ZERO_NORMS = ["m.norm(x, p=0)", "m.linalg.vector_norm(x, ord=0)",
              "m.linalg.vector_norm(x, ord=0, dim=1)", "m.linalg.norm(v, ord=0)"]


@pytest.mark.parametrize(("src", "leaf", "grad"), GRADS, ids=[c[0] + " d" + c[1] for c in GRADS])
def test_gradients_are_torchs(src: str, leaf: str, grad: Any) -> None:
    np.testing.assert_allclose(leaf_grad(src, leaf), np.asarray(grad, dtype=float),
                               rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize(("src", "nodes", "names"), GRAPHS, ids=[c[0] for c in GRAPHS])
def test_graphs_are_torchs(src: str, nodes: list[str], names: list[str] | None) -> None:
    out = run(src)
    assert chain(out) == nodes
    assert names is None or saved(out.grad_fn) == names


@pytest.mark.parametrize(("src", "dtype", "values"), VALUES, ids=[c[0] for c in VALUES])
def test_values_are_torchs(src: str, dtype: str, values: Any) -> None:
    got_dtype, got = plain(run(src))
    assert got_dtype == dtype and same_values(got, values, dtype), (got, values)


@pytest.mark.parametrize(("src", "error", "message"), ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_are_torchs(src: str, error: str, message: str) -> None:
    with pytest.raises(Exception) as info:
        run(src)
    assert type(info.value).__name__ == error and str(info.value) == message


def test_soft_margin_loss_has_no_edge_for_its_target() -> None:
    out = run("m.nn.functional.soft_margin_loss(x, m.sign(y.detach()))")
    assert [(type(n).__name__, i) for n, i in out.grad_fn.next_functions] == [
        ("AccumulateGrad", 0)]


def test_a_zero_size_sum_and_a_zero_order_diff_are_new_tensors() -> None:
    s, v = env()["s"].detach(), env()["v"].detach()
    assert s.sum_to_size(()) is not s and gradviz.diff(v, n=0) is not v


@pytest.mark.parametrize("src", ZERO_NORMS)
def test_a_zero_norm_records_its_node_but_leaves_grad_none(src: str) -> None:
    leaves = env()
    out = run(src, leaves=leaves)
    assert out.grad_fn.name() == "LinalgVectorNormBackward0"
    assert [type(n).__name__ for n, _ in out.grad_fn.next_functions] == ["AccumulateGrad"]
    out.sum().backward()
    assert leaves["x"].grad is None and leaves["v"].grad is None
    again = run(src)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        gradviz.autograd.grad(again.sum(), [again.grad_fn.next_functions[0][0].variable])


def test_index_fill_counts_a_negative_index_and_its_positive_twin_once() -> None:
    s = gradviz.tensor(0.5, dtype=gradviz.float64, requires_grad=True)
    gradviz.index_fill(gradviz.zeros(2, 3, dtype=gradviz.float64), 1,
                       gradviz.tensor([2, -1]), s).sum().backward()
    assert s.grad.item() == 2.0


def _f64(*shape: int, seed: int = 0) -> gradviz.Tensor:
    rng = np.random.default_rng(seed)
    return gradviz.tensor(rng.uniform(-1, 1, shape), dtype=gradviz.float64, requires_grad=True)


def test_the_fixed_formulas_pass_gradcheck_and_gradgradcheck_in_float64() -> None:
    mask = gradviz.tensor([[True, False, False], [True, True, False]])
    cases = [
        (lambda v: v.masked_fill(mask, 0.0), (_f64(3),)),
        (lambda v, s: v.masked_fill(mask, s), (_f64(3), _f64(seed=1))),
        (lambda s, x: gradviz.dist(s, x), (_f64(seed=2), _f64(2, 3, seed=3))),
        (lambda x, s: gradviz.dist(x, s, 3), (_f64(2, 3, seed=4), _f64(seed=5))),
        (lambda x: gradviz.linalg.vector_norm(x, 0.5), (_f64(4, seed=6),)),
        (lambda x: gradviz.linalg.vector_norm(x, -0.5, dim=1), (_f64(2, 3, seed=7),)),
        (lambda x, s: gradviz.index_fill(x, 1, gradviz.tensor([0, 2, 0]), s),
         (_f64(2, 3, seed=8), _f64(seed=9))),
        (lambda s: s.index_select(0, gradviz.tensor([0])), (_f64(seed=10),)),
        (lambda v: gradviz.diff(v, n=0), (_f64(3, seed=11),)),
        (lambda x: x.sum_to_size(()), (_f64(2, 3, seed=12),)),
        (lambda a: gradviz.linalg.matrix_power(a, -1), (_f64(3, 3, seed=13) + 3 * gradviz.eye(3),)),
        (lambda x: gradviz.nn.functional.soft_margin_loss(
            x, gradviz.tensor([1.0, -1.0, 1.0], dtype=gradviz.float64)),
         (_f64(3, seed=14),)),
    ]
    for fn, inputs in cases:
        assert gradcheck(fn, inputs)
        assert gradgradcheck(fn, inputs)
