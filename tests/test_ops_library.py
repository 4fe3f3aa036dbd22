"""The op library: node names, saved names, graphs, values, indexing, in-place writes, errors.

Every expected node name, ``_saved_*`` list, graph, gradient and error text below was read off
torch 2.13.0 (CPU) for the same program and is hard-coded here: these tests do not import torch.
(Finite-difference gradchecks of every op live in tests/test_ops_gradcheck.py, which walks
``OPS``; the ``nn.functional`` forms are tested in tests/test_nn_functional.py.)
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest
from _graphs import sig

import gradviz
from gradviz.autograd import gradcheck, gradgradcheck
from gradviz.ops.derivatives import OPS

F64 = gradviz.float64
RNG = np.random.default_rng(7)


def leaf(*shape: int, low: float = -1.0, high: float = 1.0) -> gradviz.Tensor:
    return gradviz.tensor(RNG.uniform(low, high, shape), dtype=F64, requires_grad=True)




def saved(node: Any) -> list[str]:
    return sorted(a[len("_saved_"):] for a in dir(node) if a.startswith("_saved_"))


# -- the table: node names and saved names, as PyTorch 2.13 shows them ----------------------------
# name in OPS -> (PyTorch node, its `_saved_*` names), strides included (read from NumPy).
TABLE: dict[str, tuple[str, list[str]]] = {
    "abs": ("AbsBackward0", ["self"]),
    "sign": ("SignBackward0", []),
    "sqrt": ("SqrtBackward0", ["result"]),
    "rsqrt": ("RsqrtBackward0", ["result"]),
    "sin": ("SinBackward0", ["self"]),
    "cos": ("CosBackward0", ["self"]),
    "log1p": ("Log1PBackward0", ["self"]),
    "expm1": ("Expm1Backward0", ["result"]),
    "erf": ("ErfBackward0", ["self"]),
    "clamp": ("ClampBackward1", ["max", "min", "self"]),
    "clamp_tensor": ("ClampBackward0", ["max", "min", "self"]),
    "clamp_min": ("ClampMinBackward0", ["min", "self"]),
    "clamp_min_tensor": ("ClampMinBackward1", ["min", "self"]),
    "clamp_max": ("ClampMaxBackward0", ["max", "self"]),
    "clamp_max_tensor": ("ClampMaxBackward1", ["max", "self"]),
    "maximum": ("MaximumBackward0", ["other", "self"]),
    "minimum": ("MinimumBackward0", ["other", "self"]),
    "mul_scalar": ("MulBackward1", ["other"]),
    "add_scalar": ("AddBackward1", []),
    "div_scalar": ("DivBackward1", ["other"]),
    "leaky_relu": ("LeakyReluBackward0", ["negative_slope", "self"]),
    "leaky_relu_": ("LeakyReluBackward1", ["negative_slope", "result"]),
    "elu": ("EluBackward0", ["alpha", "input_scale", "scale", "self"]),
    "elu_": ("EluBackward1", ["alpha", "input_scale", "result", "scale"]),
    "gelu": ("GeluBackward0", ["approximate", "self"]),
    "silu": ("SiluBackward0", ["self"]),
    "softplus": ("SoftplusBackward0", ["beta", "self", "threshold"]),
    "softmax": ("SoftmaxBackward0", ["dim", "result"]),
    "log_softmax": ("LogSoftmaxBackward0", ["dim", "result"]),
    "amax": ("AmaxBackward0", ["dim", "keepdim", "result", "self"]),
    "amin": ("AminBackward0", ["dim", "keepdim", "result", "self"]),
    "max": ("MaxBackward1", ["result", "self"]),
    "min": ("MinBackward1", ["result", "self"]),
    "max_dim": ("MaxBackward0", ["dim", "indices", "keepdim", "self_sym_sizes"]),
    "min_dim": ("MinBackward0", ["dim", "indices", "keepdim", "self_sym_sizes"]),
    "prod": ("ProdBackward0", ["result", "self"]),
    "prod_dim": ("ProdBackward1", ["dim", "keepdim", "result", "self"]),
    "var": ("VarBackward0", ["correction", "dim", "keepdim", "self"]),
    "std": ("StdBackward0", ["correction", "dim", "keepdim", "result", "self"]),
    "logsumexp": ("LogsumexpBackward0", ["dim", "keepdim", "result", "self"]),
    "norm": ("LinalgVectorNormBackward0", ["dim", "keepdim", "ord", "result", "self"]),
    "_reshape_alias": ("ReshapeAliasBackward0", ["self_sym_sizes"]),
    "alias": ("AliasBackward0", []),
    "select": ("SelectBackward0", ["dim", "index", "self_sym_sizes"]),
    "slice": ("SliceBackward0", ["dim", "end", "self_sym_sizes", "start", "step"]),
    "select_backward": ("SelectBackwardBackward0", ["dim", "index"]),
    "slice_backward": ("SliceBackwardBackward0", ["dim", "end", "start", "step"]),
    "repeat": ("RepeatBackward0", ["repeats", "self_sym_sizes"]),
    "split": ("SplitBackward0", ["dim", "self_sym_sizes", "split_size"]),
    "split_with_sizes": ("SplitWithSizesBackward0", ["dim", "self_sym_sizes", "split_sizes"]),
    "unsafe_split": ("UnsafeSplitBackward0", ["dim", "self_sym_sizes", "split_size"]),
    "unsafe_split_with_sizes": ("UnsafeSplitWithSizesBackward0",
                                ["dim", "self_sym_sizes", "split_sizes"]),
    "unbind": ("UnbindBackward0", ["dim"]),
    "cat": ("CatBackward0", ["dim"]),
    "stack": ("StackBackward0", ["dim"]),
    "bmm": ("BmmBackward0", ["mat2", "self"]),
    "addmm": ("AddmmBackward0", ["alpha", "beta", "mat1", "mat1_sym_sizes", "mat1_sym_strides",
                                 "mat2", "mat2_sym_sizes", "mat2_sym_strides"]),
    "index": ("IndexBackward0", ["indices", "self_sym_sizes"]),
    "index_put": ("IndexPutBackward0", ["accumulate", "indices"]),
    "_index_put_impl": ("IndexPutImplBackward0", ["accumulate", "indices"]),
    "index_select": ("IndexSelectBackward0", ["dim", "index", "self_sym_sizes"]),
    "gather": ("GatherBackward0", ["dim", "index", "self", "sparse_grad"]),
    "scatter": ("ScatterBackward0", ["dim", "index"]),
    "scatter_value": ("ScatterBackward1", ["dim", "index"]),
    "scatter_add": ("ScatterAddBackward0", ["dim", "index"]),
    "masked_fill": ("MaskedFillBackward0", ["mask"]),
    "masked_fill_tensor": ("MaskedFillBackward1", ["mask"]),
    "fill_tensor_": ("FillBackward3", []),
    "embedding": ("EmbeddingBackward0", ["indices", "padding_idx", "scale_grad_by_freq",
                                         "sparse", "weight_sym_argsize_0"]),
    "nll_loss": ("NllLossBackward0", ["ignore_index", "reduction", "self", "target",
                                      "total_weight", "weight"]),
    "mse_loss": ("MseLossBackward0", ["reduction", "self", "target"]),
    "binary_cross_entropy": ("BinaryCrossEntropyBackward0",
                             ["reduction", "self", "target", "weight"]),
    "binary_cross_entropy_with_logits": ("BinaryCrossEntropyWithLogitsBackward0",
                                         ["pos_weight", "reduction", "self", "target",
                                          "weight"]),
    "layer_norm": ("NativeLayerNormBackward0", ["bias", "input", "normalized_shape", "result1",
                                                "result2", "weight"]),
}


@pytest.mark.parametrize("name", sorted(TABLE))
def test_table_entry_has_pytorch_node_and_saved_names(name: str) -> None:
    node, names = TABLE[name]
    op = OPS[name]
    assert op.node == node
    assert sorted(n for n in op.saved_names if n not in op.hidden) == names


# Programs whose recorded node must show exactly PyTorch's name and `_saved_*` attributes.
NODE_PROGRAMS = [
    ("x.abs()", "abs"), ("x.sign()", "sign"), ("p.sqrt()", "sqrt"), ("p.rsqrt()", "rsqrt"),
    ("x.sin()", "sin"), ("x.cos()", "cos"), ("p.log1p()", "log1p"), ("x.expm1()", "expm1"),
    ("m.erf(x)", "erf"), ("x.clamp(-0.5, 0.5)", "clamp"), ("x.clamp(min=-0.5)", "clamp"),
    ("x.clamp(min=y)", "clamp_tensor"), ("x.clamp_min(0.1)", "clamp_min"),
    ("x.clamp_min(y)", "clamp_min_tensor"), ("x.clamp_max(0.1)", "clamp_max"),
    ("x.clamp_max(y)", "clamp_max_tensor"), ("m.maximum(x, y)", "maximum"),
    ("m.minimum(x, y)", "minimum"), ("m.max(x, y)", "maximum"),
    ("x.softmax(1)", "softmax"), ("m.log_softmax(x, 0)", "log_softmax"),
    ("x.amax()", "amax"), ("x.amin(1)", "amin"), ("x.max()", "max"), ("x.min()", "min"),
    ("x.max(1)[0]", "max_dim"), ("m.min(x, 0).values", "min_dim"), ("p.prod()", "prod"),
    ("x.prod(1)", "prod_dim"), ("x.var()", "var"), ("x.std(1)", "std"),
    ("x.logsumexp(1)", "logsumexp"), ("x.norm()", "norm"), ("x.norm(1, dim=0)", "norm"),
    ("x.t().reshape(12)[::2].reshape(2, 3)", "_reshape_alias"), ("x[...]", "alias"),
    ("x[0]", "select"), ("x[1:]", "slice"), ("x.repeat(2, 1)", "repeat"),
    ("x.split(2)[0]", "split"), ("x.split([1, 2])[1]", "split_with_sizes"),
    ("x.unsafe_chunk(2)[1]", "unsafe_split"),
    ("x.unsafe_split_with_sizes([1, 2])[1]", "unsafe_split_with_sizes"),
    ("x.unbind(1)[0]", "unbind"), ("m.cat([x, y])", "cat"), ("m.stack([x, y])", "stack"),
    ("m.bmm(x[None], y.t()[None])", "bmm"), ("m.addmm(y[0, :3], x, y.t())", "addmm"),
    ("x[[0, 1]]", "index"), ("x.index_put((m.tensor([0]),), y[0])", "index_put"),
    ("x.index_select(0, m.tensor([0, 2]))", "index_select"),
    ("x.gather(1, m.tensor([[0], [1], [3]]))", "gather"),
    ("x.scatter(1, m.tensor([[0], [1], [3]]), y)", "scatter"),
    ("x.scatter(1, m.tensor([[0], [1], [3]]), 1.0)", "scatter_value"),
    ("x.scatter_add(1, m.tensor([[0], [1], [3]]), y)", "scatter_add"),
    ("x.masked_fill(x > 0, 1.0)", "masked_fill"), ("x.masked_fill(x > 0, y[0, 0])",
                                                   "masked_fill_tensor"),
]


def _env() -> dict[str, Any]:
    return {"m": gradviz, "x": leaf(3, 4), "y": leaf(3, 4), "p": leaf(3, 4, low=0.5, high=2.0)}


@pytest.mark.parametrize(("src", "name"), NODE_PROGRAMS)
def test_recorded_node_matches_pytorch(src: str, name: str) -> None:
    out = eval(src, _env())  # noqa: S307 - programs written in this file
    node, names = TABLE[name]
    assert out.grad_fn.name() == node
    assert saved(out.grad_fn) == names


# -- graphs --------------------------------------------------------------------------------------
GRAPHS = [
    # indexing
    ("x[1:, ::2]", "SliceBackward0(SliceBackward0(Acc))"),
    ("x[[0, 2]]", "IndexBackward0(Acc)"),
    ("x[0]", "SelectBackward0(Acc)"),
    ("x[:, 0]", "SelectBackward0(Acc)"),  # a whole-dimension slice records nothing
    ("x[0:100, 1]", "SelectBackward0(Acc)"),
    ("x[-100:, 1]", "SelectBackward0(SliceBackward0(Acc))"),
    ("x[:]", "SliceBackward0(Acc)"),  # a lone slice is always recorded
    ("x[...]", "AliasBackward0(Acc)"),
    ("x[:, :]", "AliasBackward0(Acc)"),
    ("x[None]", "UnsqueezeBackward0(Acc)"),
    ("x[..., 0]", "SelectBackward0(Acc)"),
    ("x[0, [0, 1]]", "IndexBackward0(SelectBackward0(Acc))"),
    ("x[[0, 2], 1:3]", "IndexBackward0(SliceBackward0(Acc))"),
    ("x[::2, None, 1]", "SelectBackward0(UnsqueezeBackward0(SliceBackward0(Acc)))"),
    ("x[m.tensor(1)]", "SelectBackward0(Acc)"),
    ("x[x > 0]", "IndexBackward0(Acc)"),
    # matmul, decomposed as PyTorch decomposes it
    ("x @ w + b", "AddBackward0(MmBackward0(Acc, Acc), Acc)"),
    ("a3 @ w", "UnsafeViewBackward0(MmBackward0(ViewBackward0(Acc), Acc))"),
    ("a3 @ b3", "UnsafeViewBackward0(BmmBackward0(ViewBackward0(ExpandBackward0(Acc)), "
                "ViewBackward0(ExpandBackward0(Acc))))"),
    ("a3 @ v4", "UnsafeViewBackward0(MvBackward0(ViewBackward0(Acc), Acc))"),
    ("v4 @ b3", "UnsafeViewBackward0(MvBackward0(UnsafeViewBackward0(CloneBackward0("
                "TransposeBackward0(Acc))), Acc))"),
    ("x @ b3", "CloneBackward0(TransposeBackward0(UnsafeViewBackward0(MmBackward0("
               "UnsafeViewBackward0(CloneBackward0(TransposeBackward0(Acc))), "
               "TBackward0(Acc)))))"),
    ("a1 @ b3", "CloneBackward0(TransposeBackward0(UnsafeViewBackward0(MmBackward0("
                "UnsafeViewBackward0(CloneBackward0(TransposeBackward0(Acc))), "
                "TBackward0(SqueezeBackward1(Acc))))))"),
    ("a3 @ b1", "UnsafeViewBackward0(MmBackward0(ViewBackward0(Acc), SqueezeBackward1(Acc)))"),
    ("a4 @ b3", "UnsafeViewBackward0(BmmBackward0(UnsafeViewBackward0(CloneBackward0("
                "ExpandBackward0(Acc))), UnsafeViewBackward0(CloneBackward0(ExpandBackward0("
                "Acc)))))"),
    ("a3.detach() @ b3", "UnsafeViewBackward0(BmmBackward0(None, "
                         "ViewBackward0(ExpandBackward0(Acc))))"),
    ("m.bmm(a3, b3)", "BmmBackward0(Acc, Acc)"),
    ("m.outer(v4, v3)", "MulBackward0(ViewBackward0(Acc), Acc)"),
    # shapes
    ("a3.flatten()", "ViewBackward0(Acc)"),
    ("a3.transpose(0, 2).flatten()", "UnsafeViewBackward0(CloneBackward0(TransposeBackward0("
                                     "Acc)))"),
    ("x[:, ::2].reshape(6)", "ReshapeAliasBackward0(SliceBackward0(Acc))"),
    ("w.expand(2, 4, 5).reshape(2, 20)", "ReshapeAliasBackward0(ExpandBackward0(Acc))"),
    ("b.expand(2, 5).reshape(10)", "UnsafeViewBackward0(CloneBackward0(ExpandBackward0(Acc)))"),
    ("x.t().contiguous()", "CloneBackward0(TBackward0(Acc))"),
    ("m.cat([x, x.detach(), w.t()])", "CatBackward0(Acc, None, TBackward0(Acc))"),
    ("m.stack([x, x])", "StackBackward0(Acc, Acc)"),
    ("x.clamp(min=b[:4])", "ClampBackward0(Acc, SliceBackward0(Acc), None)"),
    ("x.masked_fill(x > 0, b[0])", "MaskedFillBackward1(Acc, SelectBackward0(Acc))"),
]


@pytest.fixture
def genv() -> dict[str, Any]:
    return {"m": gradviz, "x": leaf(3, 4), "w": leaf(4, 5), "b": leaf(5), "a3": leaf(2, 3, 4),
            "b3": leaf(2, 4, 5), "v4": leaf(4), "v3": leaf(3), "a1": leaf(1, 3, 4),
            "b1": leaf(1, 4, 5), "a4": leaf(2, 1, 3, 4)}


@pytest.mark.parametrize(("src", "expected"), GRAPHS)
def test_graph_matches_pytorch(src: str, expected: str, genv: dict[str, Any]) -> None:
    out = eval(src, genv)  # noqa: S307
    assert sig(out) == expected


def test_two_slices_are_two_nodes() -> None:
    x = leaf(3, 4)
    y = x[1:, ::2]
    assert y.grad_fn.name() == "SliceBackward0"
    (inner, _), = y.grad_fn.next_functions
    assert inner.name() == "SliceBackward0"
    assert (y.grad_fn._saved_dim, y.grad_fn._saved_start, y.grad_fn._saved_step) == (1, 0, 2)
    assert (inner._saved_dim, inner._saved_start, inner._saved_end) == (0, 1, 2**63 - 1)


def test_saved_values_match_pytorch() -> None:
    x = leaf(3, 4)
    n = x[[0, 2]].grad_fn
    assert n._saved_self_sym_sizes == (3, 4)
    assert [t.tolist() for t in n._saved_indices] == [[0, 2]]
    n = x[:, [0, 2]].grad_fn
    assert n._saved_indices[0] is None and n._saved_indices[1].tolist() == [0, 2]
    n = x.var(1).grad_fn
    assert (n._saved_correction, n._saved_dim, n._saved_keepdim) == (1, (1,), False)
    n = x.var().grad_fn
    assert (n._saved_correction, n._saved_dim) == (None, None)
    n = x.amax().grad_fn
    assert n._saved_dim == ()
    n = x.norm("fro").grad_fn
    assert n._saved_ord == 2 and n._saved_dim is None
    n = x.max(1).values.grad_fn
    assert n._saved_indices.dtype == gradviz.int64 and n._saved_self_sym_sizes == (3, 4)
    n = gradviz.square(x).grad_fn
    assert n.name() == "PowBackward0" and n._saved_exponent == 2
    n = x.clamp(min=-0.5).grad_fn
    assert n._saved_min == -0.5 and n._saved_max is None
    n = x.split(2, 1)[0].grad_fn
    assert (n._saved_split_size, n._saved_dim, n._saved_self_sym_sizes) == (2, 1, (3, 4))
    assert x.chunk(2, 0)[0].grad_fn._saved_split_size == 2
    n = x.repeat(2, 1, 3).grad_fn
    assert n._saved_repeats == (2, 1, 3)


# -- multi-output and variadic dispatch ------------------------------------------------------------
def test_multi_output_node_has_one_output_per_piece() -> None:
    x = leaf(5, 2)
    pieces = x.split(2)
    node = pieces[0].grad_fn
    assert all(p.grad_fn is node for p in pieces)
    assert [p.output_nr for p in pieces] == [0, 1, 2]
    assert node.num_outputs == 3 and len(node._out_meta) == 3
    assert [shape for shape, _ in node._out_meta] == [(2, 2), (2, 2), (1, 2)]
    assert all(p._base is x for p in pieces)


def test_unused_outputs_get_zero_gradients() -> None:
    x = gradviz.arange(10.0, dtype=F64).requires_grad_()
    _, b = x.split([3, 7])
    (b * 2).sum().backward()
    assert x.grad.tolist() == [0.0] * 3 + [2.0] * 7


def test_max_dim_indices_are_not_differentiable() -> None:
    x = leaf(3, 4)
    r = x.max(1)
    assert isinstance(r, tuple) and type(r).__name__ == "max"
    assert r.values.output_nr == 0 and r.values.grad_fn.num_outputs == 1
    assert r.indices.grad_fn is None and not r.indices.requires_grad
    assert r.indices.dtype == gradviz.int64
    assert repr(r).startswith("gradviz.return_types.max(\nvalues=tensor(")


def test_cat_has_one_edge_per_tensor() -> None:
    x, y = leaf(2, 3), leaf(1, 3)
    out = gradviz.cat([x, y.detach(), y])
    assert len(out.grad_fn.next_functions) == 3
    assert out.grad_fn.next_functions[1] == (None, 0)
    (out * gradviz.arange(12.0, dtype=F64).view(4, 3)).sum().backward()
    assert x.grad.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert y.grad.tolist() == [[9, 10, 11]]


# -- forward values against NumPy -----------------------------------------------------------------
A = RNG.uniform(-2, 2, (3, 4))
PA = RNG.uniform(0.5, 2, (3, 4))
VALUES = [
    ("abs", lambda t: t.abs(), np.abs(A)),
    ("sqrt", lambda t: t.abs().sqrt(), np.sqrt(np.abs(A))),
    ("rsqrt", lambda t: t.abs().rsqrt(), 1 / np.sqrt(np.abs(A))),
    ("sin", lambda t: t.sin(), np.sin(A)),
    ("cos", lambda t: t.cos(), np.cos(A)),
    ("log1p", lambda t: t.abs().log1p(), np.log1p(np.abs(A))),
    ("expm1", lambda t: t.expm1(), np.expm1(A)),
    ("square", gradviz.square, A ** 2),
    ("sign", lambda t: t.sign(), np.sign(A)),
    ("clamp", lambda t: t.clamp(-0.5, 0.5), np.clip(A, -0.5, 0.5)),
    ("clamp_min", lambda t: t.clamp_min(0.1), np.maximum(A, 0.1)),
    ("maximum", lambda t: gradviz.maximum(t, t.t().reshape(3, 4)),
     np.maximum(A, A.T.reshape(3, 4))),
    ("amax", lambda t: t.amax(1), A.max(1)),
    ("amin keepdim", lambda t: t.amin(0, keepdim=True), A.min(0, keepdims=True)),
    ("max", lambda t: t.max(), A.max()),
    ("max dim values", lambda t: t.max(1).values, A.max(1)),
    ("max dim indices", lambda t: t.max(1).indices, A.argmax(1)),
    ("min dim", lambda t: t.min(0)[0], A.min(0)),
    ("prod", lambda t: t.prod(), A.prod()),
    ("prod dim", lambda t: t.prod(1, keepdim=True), A.prod(1, keepdims=True)),
    ("var", lambda t: t.var(), A.var(ddof=1)),
    ("var unbiased=False", lambda t: t.var(1, unbiased=False), A.var(1)),
    ("std correction 2", lambda t: t.std(0, correction=2), A.std(0, ddof=2)),
    ("logsumexp", lambda t: t.logsumexp(1), np.log(np.exp(A).sum(1))),
    ("norm", lambda t: t.norm(), np.linalg.norm(A)),
    ("norm 1 dim", lambda t: t.norm(1, dim=1), np.abs(A).sum(1)),
    ("norm inf", lambda t: t.norm(float("inf")), np.abs(A).max()),
    ("norm 3", lambda t: t.norm(3), (np.abs(A) ** 3).sum() ** (1 / 3)),
    ("softmax", lambda t: t.softmax(1), np.exp(A) / np.exp(A).sum(1, keepdims=True)),
    ("log_softmax", lambda t: t.log_softmax(0),
     A - np.log(np.exp(A).sum(0, keepdims=True))),
    ("flatten", lambda t: t.flatten(), A.reshape(-1)),
    ("repeat", lambda t: t.repeat(2, 1, 2), np.tile(A, (2, 1, 2))),
    ("split", lambda t: t.split(3, 1)[1], A[:, 3:]),
    ("chunk", lambda t: t.chunk(3, 1)[1], A[:, 2:]),  # 4 / 3 -> pieces of 2: two chunks
    ("cat", lambda t: gradviz.cat([t, t], 1), np.concatenate([A, A], 1)),
    ("stack", lambda t: gradviz.stack([t, t], 2), np.stack([A, A], 2)),
    ("bmm", lambda t: gradviz.bmm(t[None], t.t()[None]), (A @ A.T)[None]),
    ("matmul 3-D", lambda t: t.reshape(2, 2, 3) @ t.reshape(2, 3, 2),
     A.reshape(2, 2, 3) @ A.reshape(2, 3, 2)),
    ("outer", lambda t: gradviz.outer(t[0], t[1]), np.outer(A[0], A[1])),
    ("index_select", lambda t: t.index_select(1, gradviz.tensor([3, 0])), A[:, [3, 0]]),
    ("gather", lambda t: t.gather(1, gradviz.tensor([[1], [0], [3]])),
     np.take_along_axis(A, np.array([[1], [0], [3]]), 1)),
    ("scatter_add", lambda t: t.scatter_add(0, gradviz.tensor([[0, 0, 0, 0]]), t[:1]),
     A + np.array([[1.0], [0], [0]]) * A[:1]),
    ("masked_fill", lambda t: t.masked_fill(t > 0, 0.0), np.where(A > 0, 0.0, A)),
]


@pytest.mark.parametrize(("name", "fn", "expected"), VALUES, ids=[v[0] for v in VALUES])
def test_forward_matches_numpy(name: str, fn: Any, expected: np.ndarray) -> None:
    out = fn(gradviz.tensor(A, dtype=F64))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_erf_gelu_are_exact() -> None:
    import math

    x = np.linspace(-3, 3, 13)
    np.testing.assert_allclose(gradviz.erf(gradviz.tensor(x)).numpy(),
                               [math.erf(v) for v in x], rtol=1e-15, atol=1e-15)


# -- indexing against NumPy ------------------------------------------------------------------------
X = np.arange(120.0).reshape(4, 5, 6)
INDICES = ["0", "-1", "1:", "1:, ::2", ":, 0", "None", "..., 0", "[0, 2]", "[0, 2], 1:3",
           ":, [0, 1]", "0, [0, 1]", "[0, 1], [1, 2]", "::2, None, 1", "0, 0, 0", "1:3, 2",
           "-2:", "[[0, 1], [2, 3]], 0", "[0, 1], :, [1, 2]", "..., None", "X > 60",
           "np.array([True, False, True, False])"]


@pytest.mark.parametrize("index", INDICES)
def test_getitem_matches_numpy(index: str) -> None:
    t = gradviz.tensor(X)
    env = {"X": X, "t": t, "np": np}
    expected = eval(f"X[{index}]", env)  # noqa: S307
    got = eval(f"t[{index.replace('X >', 't >')}]", env)  # noqa: S307
    np.testing.assert_array_equal(got.numpy(), expected)


def test_getitem_gradients() -> None:
    x = gradviz.tensor(X, requires_grad=True)
    (x[1:, ::2].sum() + x[[0, 0, 3]].sum() * 10 + x[0, 1, 2] * 100).backward()
    expected = np.zeros_like(X)
    expected[1:, ::2] += 1
    expected[0] += 20
    expected[3] += 10
    expected[0, 1, 2] += 100
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_views_share_storage_and_version() -> None:
    x = gradviz.zeros(3, 4)
    v, s = x[0], x[:, 1:]
    assert v._base is x and s._base is x and x[[0]]._base is None
    x[0, 0] = 5.0
    assert v[0].item() == 5.0 and x._version == v._version == s._version == 1


# -- in-place writes: __setitem__ and CopySlices ---------------------------------------------------
def test_setitem_bumps_version_and_records_copyslices() -> None:
    x = leaf(3, 4)
    h = x * 1
    h[0] = 2.0
    assert h._version == 1
    assert sig(h) == "torch::autograd::CopySlices(MulBackward0(Acc, None), None)"
    h[[0, 2]] = 1.0
    assert h._version == 2
    assert sig(h) == ("IndexPutBackward0(torch::autograd::CopySlices(MulBackward0(Acc, None), "
                      "None), None)")
    assert h.grad_fn._saved_accumulate is False
    h[...] = x
    assert sig(h).startswith("torch::autograd::CopyBackwards(IndexPutBackward0(")


def test_setitem_graphs_match_pytorch() -> None:
    x, v = leaf(4, 5, 6), leaf(5, 6)
    h = x * 1
    h[0] = v
    assert sig(h) == "torch::autograd::CopySlices(MulBackward0(Acc, None), Acc)"
    h = x * 1
    h[:, 0] = v[0]
    assert sig(h) == ("torch::autograd::CopySlices(MulBackward0(Acc, None), ExpandBackward0("
                      "ViewBackward0(SelectBackward0(Acc))))")
    h = x * 1
    h[:] = v
    assert sig(h) == ("torch::autograd::CopyBackwards(MulBackward0(Acc, None), "
                      "ExpandBackward0(ViewBackward0(Acc)))")
    h = x * 1
    h[x > 0] = 0.0
    assert sig(h) == "IndexPutBackward0(MulBackward0(Acc, None), None)"


def test_setitem_gradients_match_pytorch() -> None:
    x = gradviz.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    h = x * 1
    h[0] = h[1] * 2
    h.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0], [3.0, 3.0]]

    x = gradviz.tensor([[1.0, -2.0], [-3.0, 4.0]], requires_grad=True)
    h = x * 1
    h[h < 0] = 0.0
    h.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0], [0.0, 1.0]]

    h = gradviz.zeros(3, 4, dtype=F64)  # a plain tensor becomes part of the graph
    v = gradviz.ones(4, dtype=F64, requires_grad=True)
    h[1] = v * 2
    assert h.requires_grad and not h.is_leaf and h.grad_fn.name() == "torch::autograd::CopySlices"
    (h * gradviz.arange(12.0, dtype=F64).view(3, 4)).sum().backward()
    assert v.grad.tolist() == [8.0, 10.0, 12.0, 14.0]


def test_inplace_through_a_view() -> None:
    x = gradviz.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    h = x * 1
    v = h[:, 1]
    v.mul_(3)
    assert h.grad_fn.name() == "torch::autograd::CopySlices"
    assert [n.name() if n else None for n, _ in h.grad_fn.next_functions] == ["MulBackward0",
                                                                             None]
    # The view's own grad_fn is regenerated from the base's new history (PyTorch's rebase).
    assert sig(v) == ("AsStridedBackward0(torch::autograd::CopySlices(MulBackward0(Acc, None), "
                      "None))")
    assert h.tolist() == [[1.0, 6.0], [3.0, 12.0]]
    (h * gradviz.tensor([[1.0, 10.0], [100.0, 1000.0]], dtype=F64)).sum().backward()
    assert x.grad.tolist() == [[1.0, 30.0], [100.0, 3000.0]]


def test_other_views_are_regenerated_when_used() -> None:
    x = leaf(3, 4)
    h = x * 1
    u = h[1]
    h[1:].zero_()  # changes u's data: u's old graph no longer describes it
    (u * 2).sum().backward()
    assert x.grad.abs().sum().item() == 0.0  # u is all zeros now, whatever x is


def test_view_chains_are_linked_not_copied() -> None:
    h = leaf(2, 3) * 1
    y = h
    for _ in range(500):
        y = y.view(6).view(2, 3)
    meta = y._view_meta  # each view links to its parent's recipe: O(1) per view
    assert len(meta.chain) == 1000 and meta.parent.parent is not None
    y.mul_(2)  # replays the 1000 view ops from h, iteratively
    assert h.grad_fn.name() == "torch::autograd::CopySlices"
    assert y.grad_fn.name() == "AsStridedBackward0"
    y.sum().backward()


def test_double_backward_through_copyslices() -> None:
    def fn(x: gradviz.Tensor) -> gradviz.Tensor:
        h = x * x
        h[1:].mul_(x[1:])
        return h

    assert gradcheck(fn, (leaf(4),))
    assert gradgradcheck(fn, (leaf(4),))

    def fn2(x: gradviz.Tensor, v: gradviz.Tensor) -> gradviz.Tensor:
        h = x * 1
        h[0] = v ** 3
        return h * h

    assert gradgradcheck(fn2, (leaf(3, 2), leaf(2)))


INPLACE_ERRORS = [
    ("x = m.ones(3, requires_grad=True)\nx[0] = 2.0",
     "a view of a leaf Variable that requires grad is being used in an in-place operation."),
    ("x = m.ones(3, requires_grad=True)\nx[1:].mul_(2)",
     "a view of a leaf Variable that requires grad is being used in an in-place operation."),
    ("x = m.ones(4, requires_grad=True) * 1\na, b = x.split(2)\na.mul_(2)",
     "Output 0 of Split is a view and is being modified inplace. This view is the output of a "
     "function that returns multiple views. Such functions do not allow the output views to be "
     "modified inplace. You should replace the inplace operation by an out-of-place one."),
    ("x = m.ones(4, 3, requires_grad=True) * 1\na, b = x.split(2)\na[0] = 1.0",
     "Output 0 of Select is a view and is being modified inplace."),
    ("x = m.ones(4, requires_grad=True) * 1\nx.unbind()[2].mul_(2)",
     "Output 2 of Unbind is a view and is being modified inplace."),
    ("x = m.ones(4, requires_grad=True) * 1\nwith m.no_grad():\n    v = x[1:]\nv.mul_(2)",
     "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
     "Given that this use case is ambiguous and error-prone, it is forbidden."),
    ("x = m.ones(3, 1, requires_grad=True) * 1\nx.expand(3, 4).mul_(2)",
     "unsupported operation: more than one element of the written-to tensor refers to a single "
     "memory location. Please clone() the tensor before performing the operation."),
]


@pytest.mark.parametrize(("src", "message"), INPLACE_ERRORS)
def test_inplace_errors_match_pytorch(src: str, message: str) -> None:
    with pytest.raises(RuntimeError, match=re.escape(message)):
        exec(src, {"m": gradviz})  # noqa: S102


def test_inplace_allowed_without_grad() -> None:
    x = gradviz.ones(3, requires_grad=True)
    with gradviz.no_grad():
        x[0] = 2.0
    assert x.tolist() == [2.0, 1.0, 1.0] and x._version == 1 and x.is_leaf
    a, _ = gradviz.zeros(4).split(2)
    a.mul_(2)  # no graph involved: fine


# -- gradients PyTorch defines specially (ties, zeros) --------------------------------------------
def _grad(src: str, **tensors: Any) -> list:
    env = {"m": gradviz, **{k: gradviz.tensor(v, dtype=F64, requires_grad=True)
                           for k, v in tensors.items()}}
    exec(src, env)  # noqa: S102
    return env["x"].grad.tolist()


def test_ties_match_pytorch() -> None:
    t = [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]
    assert _grad("v, i = x.max(1); v.sum().backward()", x=t) == [[0, 1, 0], [1, 0, 0]]
    assert _grad("x.amax().backward()", x=t) == [[0, 0.5, 0.5], [0, 0, 0]]
    third = 1 / 3
    assert _grad("x.amax(1).sum().backward()", x=t) == [[0, 0.5, 0.5], [third] * 3]
    assert _grad("x.max().backward()", x=[[1.0, 3.0, 3.0], [2.0, 3.0, 2.0]]) == [
        [0, third, third], [0, third, 0]]
    assert _grad("m.maximum(x, m.tensor([1.0, 3.0], dtype=m.float64)).sum().backward()",
                 x=[1.0, 2.0]) == [0.5, 0.0]


def test_prod_with_zeros_matches_pytorch() -> None:
    t = [[2.0, 0.0, 3.0], [0.0, 0.0, 1.0], [1.0, 2.0, 3.0]]
    assert _grad("x.prod(1).sum().backward()", x=t) == [[0, 6, 0], [0, 0, 0], [6, 3, 2]]
    assert _grad("x.prod().backward()", x=[2.0, 0.0, 3.0]) == [0, 6, 0]
    x = gradviz.tensor([[2.0, 0.0, 3.0], [0.5, 1.5, -1.0]], dtype=F64, requires_grad=True)
    assert gradcheck(lambda t: t.prod(1), (x,))
    assert gradcheck(lambda t: t.prod(), (x,))


def test_norm_and_std_at_zero_have_zero_gradient() -> None:
    assert _grad("x.norm().backward()", x=[0.0, 0.0]) == [0.0, 0.0]
    assert _grad("x.std().backward()", x=[1.0, 1.0, 1.0]) == [0.0, 0.0, 0.0]


# -- dtypes --------------------------------------------------------------------------------------
DTYPES = [
    ("m.sqrt(m.tensor([4, 9]))", "float32"), ("m.abs(m.tensor([-4, 9]))", "int64"),
    ("m.tensor([1, 5]).amax()", "int64"), ("m.tensor([True, False]).prod()", "int64"),
    ("m.tensor([[1, 2]]).logsumexp(1)", "float32"), ("m.tensor([1, 2]).clamp(0.5)", "float32"),
    ("m.maximum(m.tensor([1, 2]), m.tensor([0.5, 3.0]))", "float32"),
    ("m.square(m.tensor([1, 2]))", "int64"), ("m.square(m.tensor([True]))", "int64"),
    ("m.cos(m.tensor([True]))", "float32"), ("m.tensor([1, 2]).max(0).indices", "int64"),
    ("m.tensor([[1, 2]]).repeat(2, 1)", "int64"), ("m.tensor([1, 2])[[0, 0]]", "int64"),
]


@pytest.mark.parametrize(("src", "dtype"), DTYPES)
def test_integer_and_bool_dtypes_match_pytorch(src: str, dtype: str) -> None:
    out = eval(src, {"m": gradviz})  # noqa: S307
    assert out.dtype.name == dtype and out.grad_fn is None


# -- errors: PyTorch's text, plus the op and shapes where PyTorch does not name them -------------
ERRORS = [
    ("m.abs(m.tensor([True]))", NotImplementedError, "\"abs_cpu\" not implemented for 'Bool'"),
    ("m.tensor([1, 2]).var()", RuntimeError,
     "std and var only support floating point and complex dtypes"),
    ("m.tensor([1, 2]).norm()", RuntimeError,
     "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
    ("m.tensor([1, 2]).softmax(0)", NotImplementedError,
     "\"softmax_lastdim_kernel_impl\" not implemented for 'Long' (softmax: input of shape [2]"),
    ("m.zeros(0).max()", RuntimeError,
     "max(): Expected reduction dim to be specified for input.numel() == 0."),
    ("m.zeros(0).amax()", RuntimeError, "amax(): Expected reduction dim to be specified"),
    ("m.zeros(4, 5).max(2)", IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ("m.zeros(3).clamp()", RuntimeError, "At least one of 'min' or 'max' must not be None"),
    ("m.maximum(m.zeros(3), 1.0)", TypeError,
     "maximum(): argument 'other' (position 2) must be Tensor, not float"),
    ("m.cat([m.zeros(4, 5), m.zeros(3, 4)])", RuntimeError,
     "Sizes of tensors must match except in dimension 0. Expected size 5 but got size 4 for "
     "tensor number 1 in the list. (cat: shapes [[4, 5], [3, 4]])"),
    ("m.cat([])", ValueError, "expected a non-empty list of Tensors"),
    ("m.stack([m.zeros(4, 5), m.zeros(3, 5)])", RuntimeError,
     "stack expects each tensor to be equal size, but got [4, 5] at entry 0 and [3, 5] at "
     "entry 1"),
    ("m.stack([])", RuntimeError, "stack expects a non-empty TensorList"),
    ("m.bmm(m.zeros(2, 3), m.zeros(3, 2))", RuntimeError, "batch1 must be a 3D tensor"),
    ("m.bmm(m.zeros(2, 3, 4), m.zeros(2, 5, 6))", RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 5]."),
    ("m.zeros(2, 3, 4) @ m.zeros(5, 6)", RuntimeError,
     "mat1 and mat2 shapes cannot be multiplied (6x4 and 5x6)"),
    ("m.zeros(2, 3, 4) @ m.zeros(2, 5, 6)", RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 5]."),
    ("m.zeros(2, 3, 4) @ m.zeros(3, 4, 6)", RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0 "
     "(matmul: batch shapes [2] and [3] do not broadcast)"),
    ("m.outer(m.zeros(2, 2), m.zeros(2))", RuntimeError,
     "outer: Expected 1-D argument self, but got 2-D"),
    ("m.zeros(4, 5).gather(1, m.tensor([[7]]))", RuntimeError,
     "index 7 is out of bounds for dimension 1 with size 5"),
    ("m.zeros(4, 5).gather(1, m.tensor([0]))", RuntimeError,
     "Index tensor must have the same number of dimensions as input tensor"),
    ("m.zeros(4, 5).gather(1, m.tensor([[0.0]]))", RuntimeError,
     "gather(): Expected dtype int32/int64 for index"),
    ("m.zeros(4, 5).index_select(0, m.tensor([[0]]))", IndexError,
     "index_select(): Index is supposed to be a vector"),
    ("m.zeros(4, 5).index_select(0, m.tensor([9]))", IndexError, "index out of range in self"),
    ("m.zeros(4, 5).masked_fill(m.ones(4, 5), 0.0)", RuntimeError,
     "masked_fill_ only supports boolean masks, but got mask with dtype float"),
    ("m.zeros(4, 5).masked_fill(m.zeros(4, 5) > 0, m.ones(2))", RuntimeError,
     "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 "
     "dimension(s)."),
    ("m.zeros(4, 5).split(0)", RuntimeError,
     "split_size can only be 0 if dimension size is 0, but got dimension size of 4"),
    ("m.zeros(4, 5).split([1, 2])", RuntimeError,
     "split_with_sizes expects split_sizes to sum exactly to 4 (input tensor's size at "
     "dimension 0), but got split_sizes=[1, 2]"),
    ("m.zeros(4).chunk(0)", RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0"),
    ("m.zeros(4, 5).repeat(2)", RuntimeError,
     "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
     "tensor"),
    ("m.zeros(4, 5).flatten(1, 0)", RuntimeError,
     "flatten() has invalid args: start_dim cannot come after end_dim"),
    ("m.zeros(4, 5)[4]", IndexError, "index 4 is out of bounds for dimension 0 with size 4"),
    ("m.zeros(4, 5)[0, 0, 0]", IndexError, "too many indices for tensor of dimension 2"),
    ("m.zeros(4, 5)[0.5]", IndexError,
     "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
     "indices (got float)"),
    ("m.zeros(4, 5)[m.tensor([True, False])]", IndexError,
     "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor "
     "[4, 5] at index 0"),
    ("m.zeros(4, 5)[[0, 9]]", IndexError,
     "index 9 is out of bounds for dimension 0 with size 4"),
    ("m.zeros(4, 5)[m.tensor([0.0])]", IndexError,
     "tensors used as indices must be long, int, byte or bool tensors"),
    ("m.zeros(4, 5)[::-1]", ValueError, "step must be greater than zero"),
    ("m.zeros(4, 5)[::0]", ValueError, "slice step cannot be zero"),
    ("m.tensor(1.0).select(0, 0)", IndexError, "select() cannot be applied to a 0-dim tensor."),
    ("list(m.tensor(1.0))", TypeError, "iteration over a 0-d tensor"),
]


@pytest.mark.parametrize(("src", "exc", "message"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_pytorch(src: str, exc: type, message: str) -> None:
    with pytest.raises(exc, match=re.escape(message)):
        eval(src, {"m": gradviz})  # noqa: S307


def test_setitem_shape_errors() -> None:
    x = gradviz.zeros(4, 5)
    with pytest.raises(RuntimeError, match=re.escape(
            "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result "
            "of shape [2, 5]")):
        x[[0, 1]] = gradviz.ones(3)
    with pytest.raises(RuntimeError, match=re.escape(
            "The expanded size of the tensor (5) must match the existing size (3) at "
            "non-singleton dimension 0.  Target sizes: [5].  Tensor sizes: [3]")):
        x[0] = gradviz.ones(3)


def test_deprecated_nested_list_index_warns_like_pytorch() -> None:
    x = gradviz.tensor(X)
    with pytest.warns(UserWarning, match="non-tuple sequence for multidimensional indexing"):
        out = x[[[0, 1], [2, 3]]]
    np.testing.assert_array_equal(out.numpy(), X[[0, 1], [2, 3]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x[[0, 1]]  # a flat list is one index tensor: no warning


def test_argmax_argmin_match_numpy_and_never_require_grad():
    import gradviz as gv

    data = np.array([[1.0, 5.0, 5.0], [7.0, 2.0, -1.0]])
    x = gv.tensor(data, requires_grad=True)
    assert gv.argmax(x).item() == int(np.argmax(data))
    assert x.argmax(dim=1).tolist() == [1, 0]  # first of tied maxima, as NumPy and PyTorch
    assert x.argmin(dim=0, keepdim=True).tolist() == [[0, 1, 1]]
    assert gv.argmax(x, keepdim=True).shape == (1, 1)
    out = x.argmax(1)
    assert out.dtype is gv.int64 and not out.requires_grad and out.grad_fn is None
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.argmax(dim=2)


def test_boolean_tests_and_reductions():
    import gradviz as gv

    x = gv.tensor([[1.0, float("nan")], [float("inf"), 0.0]], requires_grad=True)
    assert gv.isnan(x).tolist() == [[False, True], [False, False]]
    assert x.isinf().tolist() == [[False, False], [True, False]]
    assert x.isfinite().tolist() == [[True, False], [False, True]]
    assert not gv.all(x).item() and gv.any(x).item()
    assert (x != 0).all(dim=1).tolist() == [True, False]
    assert (x == 0).any(dim=0, keepdim=True).tolist() == [[False, True]]
    assert gv.all(x).dtype is gv.bool and gv.all(x).grad_fn is None
    a = gv.tensor([1.0, 2.0])
    assert gv.allclose(a, a + 1e-9) and not gv.allclose(a, a + 1e-3)
    assert gv.equal(a, gv.tensor([1.0, 2.0])) and not gv.equal(a, gv.tensor([1.0]))
