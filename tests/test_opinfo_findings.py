"""What running PyTorch's op database (its OpInfo samples) on torch 2.13 and on gradviz found:
gradients, graphs and method forms where gradviz differed from torch, each pinned here.

The tables reuse tests/test_ops_more.py's leaves and helpers (``x``, ``y`` 2x3, ``v`` (3),
``s`` 0-d, ``z`` with signed zeros; ``m`` is the module). The expectations are torch 2.13.0's,
read off it for the same sources; tests/parity/test_opinfo_findings_parity.py derives them again
from a live torch.
"""

from __future__ import annotations

import importlib
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
    # the method forms gradviz lacked
    ("m.trace(x)", "x", [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
    ("x.trace() * 2", "x", [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]]),
    ("x.addmm(x[:, :2], y, beta=2, alpha=0.5)", "x", [[2.5, 2.2, 2.0], [2.5, 2.2, 2.0]]),
    ("x.addmm(x[:, :2], y, beta=2, alpha=0.5)", "y", [[0.6, 0.6, 0.6], [-0.4, -0.4, -0.4]]),
    ("(x * 1).addmm_(x[:, :2], y, alpha=3)", "x", [[4.0, 2.2, 1.0], [4.0, 2.2, 1.0]]),
    ("x.where(x > 0, y)", "y", [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]),
    ("x.mT * m.tensor([1.0, 2.0], dtype=m.float64)", "x", [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]),
    ("x.H.exp()", "x", [[1.3498588075760032, 0.4965853037914095, 1.2214027581601699],
                        [2.45960311115695, 0.9048374180359595, 1.6487212707001282]]),
    # a 0-d input and source: the one element reduced with itself or replaced
    ("m.scatter_reduce(s, 0, m.tensor(0), s * 3, 'prod')", "s", 2.4),
    ("m.scatter_reduce(s, 0, m.tensor(0), s * 3, 'mean', include_self=False)", "s", 3.0),
    ("m.scatter_reduce(s, 0, m.tensor(0), s * 3, 'amax')", "s", 3.0),
    # q requiring grad gets one through linear interpolation's weights, rank - floor(rank)
    ("m.quantile(x, s, dim=1)", "s", 3.0),
    ("m.nanquantile(x, s, dim=1)", "s", 3.0),
    ("m.quantile(x, s.reshape(1), dim=1, keepdim=True)", "s", 3.0),
    # cdist's batch dimensions broadcast: each input's gradient is summed back to its shape
    ("m.cdist(x.reshape(2, 1, 1, 3), y.reshape(1, 2, 3), 1.0)", "y",
     [[0.0, 2.0, -2.0], [-2.0, 2.0, -2.0]]),
    ("m.cdist(x.reshape(2, 1, 1, 3), y.reshape(1, 2, 3))", "y",
     [[-0.16874056120781927, 1.6424516098296507, -0.9899663661226445],
      [-0.7434506333060034, 1.450021990476292, -0.9566513496616138]]),
    ("m.cdist(x.reshape(1, 2, 3), y.reshape(2, 1, 1, 3), 3.0)", "x",
     [[0.007679052434763347, -1.926700364053245, 0.27796557023433943],
      [0.6280074707100541, -1.0753753595824591, 1.068420166873072]]),
    ("m.cdist(x[:0], y)", "y", [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),
    # norms of the singular values at repeated ones (here the zero matrix): U diag(gS) Vh, not NaN
    ("m.linalg.matrix_norm(m.diag(z[:2]), 'nuc')", "z", [1.0, 1.0, 0.0, 0.0]),
    ("m.linalg.matrix_norm(m.diag(z[:2]), 2)", "z", [0.5, 0.5, 0.0, 0.0]),
    ("m.linalg.norm(m.diag(z[:2]), -2)", "z", [0.5, 0.5, 0.0, 0.0]),
    # hermitian=True reads the lower triangle only; the gradient is the full input's formula
    ("m.linalg.pinv(x[:, :2] + m.eye(2, dtype=m.float64) * 2, hermitian=True)", "x",
     [[-0.04712973194566001, 0.02741255289239665, 0.0],
      [-0.11046585027143022, -0.07237906915055828, 0.0]]),
    ("m.norm(x, 'nuc')", "x", [[0.10893124018909706, -0.9880205499469714, 0.10931320960135196],
                              [0.8696742025766546, 0.14798541843784263, 0.47092154049526797]]),
    # full=True: Stirling's term is recorded, so a target that requires grad gets one
    ("m.nn.functional.poisson_nll_loss(x, p, full=True)", "p",
     [[-0.049999999999999996, 0.23979974024024958, 0.12385786342665756],
      [-0.15, 0.11649803724343688, 0.1275464925557961]]),
    # an empty batch normalises nothing: zero gradients, not a crash
    ("m.nn.functional.group_norm(x[:0], 1, v, v)", "x", [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),
    ("m.nn.functional.group_norm(x[:0], 3, v, v)", "v", [0.0, 0.0, 0.0]),
]

_ADDMM = ["alpha", "beta", "mat1", "mat1_sym_sizes", "mat1_sym_strides", "mat2", "mat2_sym_sizes",
          "mat2_sym_strides"]

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
    ("m.quantile(x, s, dim=1)",
     ["SqueezeBackward4", "  LerpBackward1", "    GatherBackward0", "      ViewBackward0",
      "        SortBackward0", "          AccumulateGrad", "    GatherBackward0",
      "    SubBackward0", "      MaskedFillBackward0", "        ExpandBackward0",
      "          MulBackward1", "            AccumulateGrad"], None),
    ("m.nanquantile(x, s)",
     ["SqueezeBackward4", "  LerpBackward1", "    GatherBackward0", "      ViewBackward0",
      "        SortBackward0", "          ViewBackward0", "            AccumulateGrad",
      "    GatherBackward0", "    SubBackward0", "      MaskedFillBackward0",
      "        MulBackward0", "          AccumulateGrad"], None),
    # to one number through a permutation that cannot be flattened as a view: the product
    # summed, not a dot
    ("m.tensordot(x, y, dims=([1, 0], [1, 0]))",
     ["ViewBackward0", "  SumBackward0", "    MulBackward0", "      SqueezeBackward0",
      "        PermuteBackward0", "          AccumulateGrad", "      SqueezeBackward0",
      "        PermuteBackward0", "          AccumulateGrad"], ["self_sym_sizes"]),
    ("m.tensordot(x, y, dims=([0, 1], [0, 1]))",
     ["ViewBackward0", "  DotBackward0", "    ViewBackward0", "      PermuteBackward0",
      "        AccumulateGrad", "    ViewBackward0", "      PermuteBackward0",
      "        AccumulateGrad"], ["self_sym_sizes"]),
    ("m.nn.functional.poisson_nll_loss(x, p, full=True)",
     ["MeanBackward0", "  AddBackward0", "    SubBackward0", "      ExpBackward0",
      "        AccumulateGrad", "      MulBackward0", "        AccumulateGrad",
      "    MaskedFillBackward0", "      AddBackward0", "        SubBackward0",
      "          MulBackward0", "            LogBackward0", "        MulBackward1",
      "          LogBackward0", "            MulBackward1"], None),
    # the method forms gradviz lacked, and the matrix trace
    ("m.trace(x)", ["TraceBackward0", "  AccumulateGrad"], ["self_sym_sizes"]),
    ("x.trace()", ["TraceBackward0", "  AccumulateGrad"], ["self_sym_sizes"]),
    ("x.addmm(x[:, :2], y, beta=2, alpha=0.5)",
     ["AddmmBackward0", "  AccumulateGrad", "  SliceBackward0", "  AccumulateGrad"], _ADDMM),
    ("(x * 1).addmm_(x[:, :2], y)",
     ["AddmmBackward0", "  MulBackward0", "    AccumulateGrad", "  SliceBackward0",
      "  AccumulateGrad"], _ADDMM),
    ("x.where(x > 0, y)", ["WhereBackward0", "  AccumulateGrad", "  AccumulateGrad"],
     ["condition"]),
    ("x.where(x > 0, 0.5)", ["WhereBackward0", "  AccumulateGrad"], ["condition"]),
    ("x.mT", ["TransposeBackward0", "  AccumulateGrad"], ["dim0", "dim1"]),
    ("x.mH", ["TransposeBackward0", "  AccumulateGrad"], ["dim0", "dim1"]),
    ("x.H", ["TransposeBackward0", "  AccumulateGrad"], ["dim0", "dim1"]),
    ("x.adjoint()", ["TransposeBackward0", "  AccumulateGrad"], ["dim0", "dim1"]),
    ("m.adjoint(x)", ["TransposeBackward0", "  AccumulateGrad"], ["dim0", "dim1"]),
    ("m.stack([x, y]).mT",
     ["TransposeBackward0", "  StackBackward0", "    AccumulateGrad", "    AccumulateGrad"],
     ["dim0", "dim1"]),
]

U = 2**64  # a negative saved integer -k reads back as U - k (NOTE [saved as given])
# (source, attribute of its grad_fn, what it reads back as), read off torch 2.13.0
SAVED_VALUES = [("x.mT", "_saved_dim0", U - 2), ("x.mT", "_saved_dim1", U - 1),
                ("x.H", "_saved_dim0", U - 2), ("m.adjoint(x)", "_saved_dim1", U - 1)]

# (source, dtype, values), read off torch 2.13.0
VALUES = [
    ("s.index_select(0, m.tensor([0]))", "float64", 0.4),
    ("m.diff(v, n=0, append=s.reshape(1))", "float64", [0.25, -0.5, 0.75]),
    ("x.sum_to_size(())", "float64", 1.1),
    ("s.sum_to_size(())", "float64", 0.4),
    ("m.trace(m.eye(3))", "float32", 3.0),
    ("m.trace(m.arange(9).reshape(3, 3))", "int64", 12),
    ("m.trace(m.ones(2, 0))", "float32", 0.0),
    ("m.trace(m.tensor([[1, 2], [3, 4]], dtype=m.int8))", "int64", 5),
    ("x.logical_not()", "bool", [[False, False, False], [False, False, False]]),
    ("x.logical_and(y > 0)", "bool", [[True, True, False], [True, True, False]]),
    ("x.logical_or(m.tensor(0))", "bool", [[True, True, True], [True, True, True]]),
    ("x.logical_xor(y)", "bool", [[False, False, False], [False, False, False]]),
    ("m.logical_xor(m.tensor([1, 0]), m.tensor([1.0, 1.0]))", "bool", [False, True]),
    # the in-place forms write the truth values in the tensor's own dtype
    ("x.detach().logical_not_()", "float64", [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),
    ("x.detach().logical_and_(y > 0)", "float64", [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]]),
    ("x.detach().logical_or_(y * 0)", "float64", [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]),
    ("m.tensor([2, 0, 1]).logical_xor_(m.tensor([True, False, False]))", "int64", [0, 0, 1]),
    ("x.where(x > 0, 0.5)", "float64", [[0.3, 0.5, 0.2], [0.9, 0.5, 0.5]]),
    ("m.zeros(2, 2).addmm_(m.ones(2, 3), m.ones(3, 2), beta=0.5, alpha=2)", "float32",
     [[6.0, 6.0], [6.0, 6.0]]),
    ("m.ones(2, 2).addmm(m.ones(2, 3), m.ones(3, 2), beta=0.5, alpha=2)", "float32",
     [[6.5, 6.5], [6.5, 6.5]]),
    # a float32 end point is stepped from in double
    ("m.linspace(m.tensor(4.3), -3, 5, dtype=m.float64)", "float64",
     [4.300000190734863, 2.475000143051147, 0.6500000953674316, -1.1749999523162842, -3.0]),
    # rows of an empty sequence: no position to find, and no crash
    ("m.nn.functional.group_norm(x[:0], 1, v, v).shape", None, [0, 3]),
    ("m.cdist(x[:0], y, float('inf'))", "float64", []),
    ("m.cdist(x[:, :0], y[:, :0], float('inf'))", "float64", [[0.0, 0.0], [0.0, 0.0]]),
    ("m.linalg.pinv(m.tensor([[2.0, 5.0], [1.0, -3.0]]), hermitian=True)", "float32",
     [[0.42857143, 0.14285715], [0.14285715, -0.28571430]]),
    ("m.norm(m.tensor([[3.0, 0.0], [0.0, -4.0]]), 'nuc')", "float32", 7.0),
    ("m.norm(m.ones(2, 2, 3), 'nuc', dim=(0, 2), keepdim=True)", "float32",
     [[[2.4494898319244385], [2.4494898319244385]]]),
    ("m.searchsorted(m.zeros(0, 0), m.zeros(0, 0))", "int64", []),
    ("m.searchsorted(m.zeros(2, 0), m.ones(2, 1))", "int64", [[0], [0]]),
]

# (source, error type, message), read off torch 2.13.0
ERRORS = [
    ("s.index_select(0, m.tensor([0, 0]))", "RuntimeError",
     "index_select(): Index to scalar can have only 1 value, got 2 value(s)"),
    ("s.index_select(0, m.tensor([1]))", "IndexError", "index out of range in self"),
    # max and min have no identity: inf and -inf norms over nothing raise
    ("m.linalg.vector_norm(x[:0], float('inf'))", "RuntimeError",
     "linalg.vector_norm cannot compute the inf norm on an empty tensor because the operation "
     "does not have an identity"),
    ("m.linalg.vector_norm(x[:0], -float('inf'), dim=0)", "RuntimeError",
     "linalg.vector_norm cannot compute the -inf norm on the dimension 0because this dimension "
     "is empty and the operation does not have an identity"),
    # 'nuc' (and 'fro' over more than two dims) is a matrix norm over all dims or dim
    ("m.norm(m.ones(2, 2, 2), 'nuc')", "RuntimeError",
     "linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2"),
    ("m.norm(m.ones(2, 2, 2), 'fro', dim=(0, 1, 2))", "RuntimeError",
     "linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2"),
    ("m.norm(x, 'nuc', dim=0)", "RuntimeError",
     "linalg.matrix_norm: dim must be a 2-tuple. Got 0"),
    ("m.norm(x, 'abc')", "RuntimeError", "linalg.matrix_norm: Order abc not supported."),
    ("m.trace(v)", "RuntimeError", "trace: expected a matrix, but got tensor with dim 1"),
    ("m.trace(s)", "RuntimeError", "trace: expected a matrix, but got tensor with dim 0"),
    ("m.trace(m.ones(2, 2, dtype=m.bool))", "NotImplementedError",
     "\"trace\" not implemented for 'Bool'"),
    ("v.mT", "RuntimeError",
     "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."),
    ("v.mH", "RuntimeError",
     "tensor.mH is only supported on matrices or batches of matrices. Got 1-D tensor."),
    ("v.H", "RuntimeError",
     "tensor.H is only supported on matrices (2-D tensors). Got 1-D tensor."),
    ("m.ones(2, 2, 2).H", "RuntimeError",
     "tensor.H is only supported on matrices (2-D tensors). Got 3-D tensor. For batches of "
     "matrices, consider using tensor.mH"),
    ("v.adjoint()", "RuntimeError",
     "tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor."),
    ("m.zeros(2).addmm_(m.ones(2, 3), m.ones(3, 2))", "RuntimeError",
     "Bad in-place call: input tensor size [2] and output tensor size [2, 2] should match"),
    ("m.zeros(2, 2).addmm_(m.ones(2, 3), m.ones(2, 2))", "RuntimeError",
     "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x2)"),
    ("m.zeros(2, 2).addmm_(m.ones(2, 3), m.ones(3, 2, dtype=m.float64))", "RuntimeError",
     "self and mat2 must have the same dtype, but got Float and Double"),
]

# a 0-d tensor is its own transpose, with torch's deprecation warning
ZERO_D_TRANSPOSES = [("mT", "Tensor.mT is deprecated on 0-D tensors. This function is the "
                            "identity in these cases."),
                     ("mH", "Tensor.mH is deprecated on 0-D tensors. Consider using x.conj()."),
                     ("H", "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().")]

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


@pytest.mark.parametrize(("src", "attr", "expected"), SAVED_VALUES,
                         ids=[c[0] + c[1] for c in SAVED_VALUES])
def test_saved_arguments_are_torchs(src: str, attr: str, expected: Any) -> None:
    assert getattr(run(src).grad_fn, attr) == expected


@pytest.mark.parametrize(("attr", "message"), ZERO_D_TRANSPOSES)
def test_a_0d_tensor_is_its_own_transpose_with_a_warning(attr: str, message: str) -> None:
    s = gradviz.tensor(0.5)
    with pytest.warns(UserWarning) as caught:
        assert getattr(s, attr) is s
    assert str(caught[0].message) == message


def test_import_gradviz_as_torch_trace_of_a_tensor_is_the_matrix_trace() -> None:
    import gradviz as torch

    a = torch.eye(3, requires_grad=True)
    out = torch.trace(a)
    assert out.item() == 3.0 and out.grad_fn.name() == "TraceBackward0"
    assert torch.trace(input=a).item() == 3.0
    out.backward()
    assert a.grad.tolist() == np.eye(3).tolist()


def test_trace_without_a_tensor_is_still_the_tracer_and_tracer_names_it_plainly() -> None:
    for start in (gradviz.trace, gradviz.tracer):
        with start() as tr:
            (gradviz.ones(2, requires_grad=True) * 2).sum().backward()
        assert [s.kind for s in tr.steps()][:2] == ["compute_dependencies", "enqueue"]
    with gradviz.trace(values="all", keep_runs="all") as tr:
        gradviz.ones(2, requires_grad=True).sum().backward()
    assert tr.runs_total == 1
    trace_layer = importlib.import_module("gradviz.trace")  # (gradviz.trace is the function)
    assert trace_layer.tracer is gradviz.tracer and "tracer" in trace_layer.__all__
    assert "matrix" in gradviz.trace.__doc__ and "tracer" in gradviz.trace.__doc__


def test_trace_refuses_a_tensor_with_tracer_arguments() -> None:
    with pytest.raises(TypeError, match="gradviz.tracer"):
        gradviz.trace(gradviz.eye(2), keep_runs=3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'valuez'"):
        gradviz.trace(valuez="all")


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


def _unit(*shape: int, seed: int = 0) -> gradviz.Tensor:
    """A leaf in [0, 1] (a quantile's q)."""
    return _f64(*shape, seed=seed).detach().abs().requires_grad_()


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
        (lambda a: gradviz.trace(a), (_f64(3, 3, seed=15),)),
        (lambda a: a.trace(), (_f64(2, 4, seed=16),)),
        (lambda a: a.mT.exp(), (_f64(2, 2, 3, seed=17),)),
        (lambda a, b, c: a.addmm(b, c, beta=0.5, alpha=2.0),
         (_f64(2, 2, seed=18), _f64(2, 3, seed=19), _f64(3, 2, seed=20))),
        (lambda a, b, c: (a * 1).addmm_(b, c, alpha=2.0),
         (_f64(2, 2, seed=21), _f64(2, 3, seed=22), _f64(3, 2, seed=23))),
        (lambda a, b: gradviz.tensordot(a, b, dims=([1, 0], [0, 1])),
         (_f64(2, 3, seed=28), _f64(3, 2, seed=29))),
        (lambda a, b: gradviz.cdist(a, b, 3.0),
         (_f64(2, 1, 1, 3, seed=30), _f64(1, 2, 3, seed=31))),
        (lambda x, t: gradviz.nn.functional.poisson_nll_loss(x, t, full=True),
         (_f64(2, 3, seed=32), (_f64(2, 3, seed=33).detach() * 2 + 3).requires_grad_())),
        (lambda x, q: gradviz.quantile(x, q, dim=1), (_f64(2, 5, seed=24), _unit(2, seed=25))),
        (lambda x, q: gradviz.nanquantile(x, q), (_f64(7, seed=26), _unit(seed=27))),
        (lambda x: gradviz.nn.functional.soft_margin_loss(
            x, gradviz.tensor([1.0, -1.0, 1.0], dtype=gradviz.float64)),
         (_f64(3, seed=14),)),
    ]
    for fn, inputs in cases:
        assert gradcheck(fn, inputs)
        assert gradgradcheck(fn, inputs)
