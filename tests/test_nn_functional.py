"""``gradviz.nn.functional``: graphs, values, gradients and errors, against PyTorch's.

Expected graphs, gradients and error texts were read off torch 2.13.0 (CPU) for the same
programs and are hard-coded (no torch import). Finite-difference checks of each table entry are
in tests/test_ops_gradcheck.py; here are the composite functions and the behaviour around them.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest
from _graphs import execution_order, sig

import gradviz
import gradviz.nn.functional as F
from gradviz.autograd import gradcheck, gradgradcheck

F64 = gradviz.float64
RNG = np.random.default_rng(11)
XA = RNG.standard_normal((4, 5))
YA = RNG.standard_normal((4, 5))




def env() -> dict[str, Any]:
    def t(a: np.ndarray) -> gradviz.Tensor:
        return gradviz.tensor(a, dtype=F64, requires_grad=True)

    return {"F": F, "m": gradviz, "x": t(XA), "y": t(YA), "W": t(RNG.standard_normal((3, 5))),
            "b": t(RNG.standard_normal(3)), "x3": t(RNG.standard_normal((2, 4, 5))),
            "x1": t(RNG.standard_normal(5)), "E": t(RNG.standard_normal((6, 3))),
            "lw": t(RNG.standard_normal(5)), "lb": t(RNG.standard_normal(5)),
            "t": gradviz.tensor([0, 2, 1, 4]), "p": gradviz.full_like(gradviz.tensor(XA), 0.3),
            "w5": gradviz.tensor(np.linspace(0.1, 0.5, 5))}


GRAPHS = [
    ("F.cross_entropy(x, t)", "NllLossBackward0(LogSoftmaxBackward0(Acc))"),
    ("F.nll_loss(F.log_softmax(x, 1), t)", "NllLossBackward0(LogSoftmaxBackward0(Acc))"),
    ("F.cross_entropy(x, t, label_smoothing=0.1)",
     "AddBackward0(MulBackward1(NllLossBackward0(LogSoftmaxBackward0(Acc))), "
     "MulBackward1(DivBackward0(SumBackward0(MaskedFillBackward0(NegBackward0(SumBackward1("
     "LogSoftmaxBackward0(Acc))))), None)))"),
    ("F.cross_entropy(x, t, label_smoothing=0.1, reduction='sum')",
     "AddBackward0(MulBackward1(NllLossBackward0(LogSoftmaxBackward0(Acc))), "
     "MulBackward1(SumBackward0(MaskedFillBackward0(NegBackward0(SumBackward1("
     "LogSoftmaxBackward0(Acc)))))))"),
    ("F.cross_entropy(x, t, weight=w5, label_smoothing=0.1)",
     "AddBackward0(MulBackward1(NllLossBackward0(LogSoftmaxBackward0(Acc))), "
     "MulBackward1(DivBackward0(SumBackward0(MaskedFillBackward0(NegBackward0(SumBackward1("
     "MulBackward0(LogSoftmaxBackward0(Acc), None))))), None)))"),
    ("F.cross_entropy(x, p)",
     "DivBackward1(NegBackward0(SumBackward0(MulBackward0(LogSoftmaxBackward0(Acc), None))))"),
    ("F.cross_entropy(x, p, reduction='none')",
     "NegBackward0(SumBackward1(MulBackward0(LogSoftmaxBackward0(Acc), None)))"),
    ("F.linear(x, W, b)", "AddmmBackward0(Acc, Acc, TBackward0(Acc))"),
    ("F.linear(x, W)", "MmBackward0(Acc, TBackward0(Acc))"),
    ("F.linear(x3, W, b)",
     "ViewBackward0(AddmmBackward0(Acc, ViewBackward0(Acc), TBackward0(Acc)))"),
    ("F.linear(x3, W)", "UnsafeViewBackward0(MmBackward0(ViewBackward0(Acc), TBackward0(Acc)))"),
    ("F.linear(x1, W, b)",
     "ViewBackward0(AddmmBackward0(Acc, ViewBackward0(Acc), TBackward0(Acc)))"),
    ("F.linear(x3.transpose(0, 1), W, b)",
     "AddBackward0(UnsafeViewBackward0(MmBackward0(UnsafeViewBackward0(CloneBackward0("
     "TransposeBackward0(Acc))), TBackward0(Acc))), Acc)"),
    ("x @ W.t() + b", "AddBackward0(MmBackward0(Acc, TBackward0(Acc)), Acc)"),
    ("F.mse_loss(x, y)", "MseLossBackward0(Acc, Acc)"),
    ("F.l1_loss(x, y)", "MeanBackward0(AbsBackward0(SubBackward0(Acc, Acc)))"),
    ("F.l1_loss(x, y, reduction='sum')", "SumBackward0(AbsBackward0(SubBackward0(Acc, Acc)))"),
    ("F.binary_cross_entropy(m.sigmoid(x), p)",
     "BinaryCrossEntropyBackward0(SigmoidBackward0(Acc), None)"),
    ("F.binary_cross_entropy_with_logits(x, p, pos_weight=w5)",
     "BinaryCrossEntropyWithLogitsBackward0(Acc, None)"),
    ("F.layer_norm(x, (5,), lw, lb)", "NativeLayerNormBackward0(Acc, Acc, Acc)"),
    ("F.layer_norm(x, [5])", "NativeLayerNormBackward0(Acc, None, None)"),
    ("F.embedding(t, E)", "EmbeddingBackward0(Acc)"),
    ("F.relu(x * 1, inplace=True)", "ReluBackward0(MulBackward0(Acc, None))"),
    ("F.leaky_relu(x * 1, inplace=True)", "LeakyReluBackward1(MulBackward0(Acc, None))"),
    ("F.elu(x * 1, inplace=True)", "EluBackward1(MulBackward0(Acc, None))"),
    ("F.gelu(x, approximate='tanh')", "GeluBackward0(Acc)"),
    ("F.silu(x)", "SiluBackward0(Acc)"),
    ("F.softplus(x)", "SoftplusBackward0(Acc)"),
    ("F.softmax(x, dim=0)", "SoftmaxBackward0(Acc)"),
    ("F.dropout(x, 1.0)", "MulBackward0(Acc, None)"),
    ("F.dropout(x, 0.5)", "MulBackward0(Acc, None)"),
    ("F.dropout(x, 0.5, training=False)", "Acc"),
]


@pytest.mark.parametrize(("src", "expected"), GRAPHS)
def test_graph_matches_pytorch(src: str, expected: str) -> None:
    out = eval(src, env())  # noqa: S307 - programs written in this file
    got = "Acc" if out.grad_fn is None and out.requires_grad else sig(out)
    assert got == expected


def test_cross_entropy_is_log_softmax_then_nll_loss() -> None:
    e = env()
    loss = F.cross_entropy(e["x"], e["t"])
    nll = loss.grad_fn
    assert nll.name() == "NllLossBackward0"
    (lsm, _), = nll.next_functions
    assert lsm.name() == "LogSoftmaxBackward0" and lsm._saved_dim == 1
    assert (nll._saved_reduction, nll._saved_ignore_index, nll._saved_weight) == (
        1, 18446744073709551516, None)  # ignore_index -100 read back as uint64, as in torch
    assert nll._saved_total_weight.item() == 4.0
    assert nll._saved_target.tolist() == [0, 2, 1, 4]
    lse = XA - np.log(np.exp(XA).sum(1, keepdims=True))
    assert loss.item() == pytest.approx(-lse[np.arange(4), [0, 2, 1, 4]].mean())


def test_linear_saves_what_pytorch_saves() -> None:
    e = env()
    node = F.linear(e["x"], e["W"], e["b"]).grad_fn
    assert (node._saved_alpha, node._saved_beta) == (1, 1)
    assert node._saved_mat1_sym_sizes == (4, 5) and node._saved_mat2_sym_sizes == (5, 3)
    assert node.next_functions[0][0].variable is e["b"]
    np.testing.assert_allclose(F.linear(e["x"], e["W"], e["b"]).detach().numpy(),
                               XA @ e["W"].detach().numpy().T + e["b"].detach().numpy())


# -- values ----------------------------------------------------------------------------------------
def _sigmoid(a: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-a))


PP = RNG.uniform(0.1, 0.9, (4, 5))
VALUES = [
    ("relu", lambda x: F.relu(x), np.maximum(XA, 0)),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), np.where(XA > 0, XA, 0.2 * XA)),
    ("elu", lambda x: F.elu(x, 0.5), np.where(XA > 0, XA, 0.5 * np.expm1(XA))),
    ("silu", lambda x: F.silu(x), XA * _sigmoid(XA)),
    ("gelu tanh", lambda x: F.gelu(x, approximate="tanh"),
     0.5 * XA * (1 + np.tanh(np.sqrt(2 / np.pi) * (XA + 0.044715 * XA ** 3)))),
    ("softplus", lambda x: F.softplus(x, beta=2), np.log1p(np.exp(2 * XA)) / 2),
    ("softplus threshold", lambda x: F.softplus(x * 30), np.where(XA * 30 > 20, XA * 30,
                                                                  np.log1p(np.exp(XA * 30)))),
    ("mse", lambda x: F.mse_loss(x, gradviz.tensor(YA)), ((XA - YA) ** 2).mean()),
    ("mse none", lambda x: F.mse_loss(x, gradviz.tensor(YA), reduction="none"), (XA - YA) ** 2),
    ("l1 sum", lambda x: F.l1_loss(x, gradviz.tensor(YA), reduction="sum"), np.abs(XA - YA).sum()),
    ("bce", lambda x: F.binary_cross_entropy(x.sigmoid(), gradviz.tensor(PP)),
     -(PP * np.log(_sigmoid(XA)) + (1 - PP) * np.log(1 - _sigmoid(XA))).mean()),
    ("bce logits pos_weight",
     lambda x: F.binary_cross_entropy_with_logits(x, gradviz.tensor(PP), reduction="sum",
                                                  pos_weight=gradviz.tensor([2.0] * 5)),
     -(2 * PP * np.log(_sigmoid(XA)) + (1 - PP) * np.log(1 - _sigmoid(XA))).sum()),
    ("nll weight ignore", lambda x: F.nll_loss(x, gradviz.tensor([0, 2, 1, 4]), ignore_index=1,
                                               weight=gradviz.tensor([1.0, 2, 3, 4, 5])),
     -(XA[0, 0] * 1 + XA[1, 2] * 3 + XA[3, 4] * 5) / 9),
    ("layer_norm", lambda x: F.layer_norm(x, (5,)),
     (XA - XA.mean(1, keepdims=True)) / np.sqrt(XA.var(1, keepdims=True) + 1e-5)),
]


@pytest.mark.parametrize(("name", "fn", "expected"), VALUES, ids=[v[0] for v in VALUES])
def test_values_match_numpy(name: str, fn: Any, expected: np.ndarray) -> None:
    out = fn(gradviz.tensor(XA, dtype=F64))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-12)


def test_gradients_match_pytorch() -> None:
    x = gradviz.tensor([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]], dtype=F64, requires_grad=True)
    loss = F.cross_entropy(x, gradviz.tensor([2, 0]), label_smoothing=0.1)
    loss.backward()
    assert loss.item() == pytest.approx(0.803109, abs=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), [[0.028349, 0.105698, -0.134046],
                                                [-0.3, 0.15, 0.15]], atol=1e-6)
    x.grad = None
    loss = F.cross_entropy(x, gradviz.tensor([2, -100]))
    loss.backward()
    assert loss.item() == pytest.approx(0.407606, abs=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), [[0.090031, 0.244728, -0.334759], [0, 0, 0]],
                               atol=1e-6)


def test_embedding_padding_and_frequency_match_pytorch() -> None:
    idx = gradviz.tensor([[0, 2], [2, 4]])
    w = gradviz.arange(15.0, dtype=F64).view(5, 3).requires_grad_()
    F.embedding(idx, w, padding_idx=2, scale_grad_by_freq=True).sum().backward()
    assert w.grad.tolist() == [[1.0] * 3, [0.0] * 3, [0.0] * 3, [0.0] * 3, [1.0] * 3]
    w.grad = None
    out = F.embedding(idx, w, padding_idx=-1)
    assert out.grad_fn._saved_padding_idx == 4 and out.grad_fn._saved_weight_sym_argsize_0 == 5
    out.sum().backward()
    assert w.grad.tolist() == [[1.0] * 3, [0.0] * 3, [2.0] * 3, [0.0] * 3, [0.0] * 3]
    assert F.embedding(idx, w).grad_fn._saved_padding_idx == -1


def test_embedding_max_norm_renorms_in_place() -> None:
    w = gradviz.tensor([[3.0, 4.0], [0.3, 0.4]], dtype=F64, requires_grad=True)
    out = F.embedding(gradviz.tensor([0, 1]), w, max_norm=1.0)
    np.testing.assert_allclose(w.detach().numpy()[0], [0.6, 0.8], atol=1e-6)
    assert w.detach().numpy()[1].tolist() == [0.3, 0.4] and w._version == 1
    np.testing.assert_allclose(out.detach().numpy(), w.detach().numpy())


def test_dropout() -> None:
    x = gradviz.ones(1000, dtype=F64, requires_grad=True)
    gradviz.manual_seed(3)
    a = F.dropout(x, 0.25)
    gradviz.manual_seed(3)
    b = F.dropout(x, 0.25)
    assert a.tolist() == b.tolist()  # the generator is gradviz's: manual_seed repeats it
    assert set(np.unique(a.detach().numpy())) <= {0.0, 1 / 0.75}
    assert 150 < (a.detach().numpy() == 0).sum() < 350
    a.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), a.detach().numpy())
    assert F.dropout(x, 0.5, training=False) is x and F.dropout(x, 0.0) is x
    assert F.dropout(x, 1.0).abs().sum().item() == 0.0
    h = x * 1
    out = F.dropout(h, 0.5, inplace=True)
    assert out is h and h._version == 1 and h.grad_fn.name() == "MulBackward0"


def test_one_hot() -> None:
    out = F.one_hot(gradviz.tensor([0, 2, 1]))
    assert out.dtype == gradviz.int64 and out.tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    assert F.one_hot(gradviz.tensor([[1]]), 4).shape == (1, 1, 4)


def test_layer_norm_saves_mean_and_rstd() -> None:
    x = gradviz.tensor(XA, dtype=F64, requires_grad=True)
    node = F.layer_norm(x, (5,)).grad_fn
    np.testing.assert_allclose(node._saved_result1.numpy(), XA.mean(1, keepdims=True))
    np.testing.assert_allclose(node._saved_result2.numpy(),
                               1 / np.sqrt(XA.var(1, keepdims=True) + 1e-5))
    assert node._saved_normalized_shape == (5,) and node._saved_weight is None
    assert node.num_outputs == 1


# -- composite gradients (the per-op checks are in tests/test_ops_gradcheck.py) -------------------
COMPOSITES = [
    ("l1_loss", lambda x, y: F.l1_loss(x, y), (4, 5), (4, 5)),
    ("linear 3-D no bias", lambda x, w: F.linear(x, w), (2, 3, 4), (5, 4)),
    ("linear non-contiguous + bias", lambda x, w, b: F.linear(x.transpose(0, 1), w, b),
     (3, 2, 4), (5, 4), (5,)),
    ("cross_entropy smoothing ignore", lambda x: F.cross_entropy(
        x, gradviz.tensor([0, 2, 1, 4]), label_smoothing=0.2, ignore_index=1), (4, 5)),
    ("cross_entropy smoothing weight none", lambda x: F.cross_entropy(
        x, gradviz.tensor([0, 2, 1, 4]), weight=gradviz.tensor(np.linspace(0.1, 0.5, 5)),
        label_smoothing=0.2, reduction="none"), (4, 5)),
    ("cross_entropy 1-D", lambda x: F.cross_entropy(x, gradviz.tensor(3)), (5,)),
    ("mlp step", lambda x, w, b: F.cross_entropy(F.relu(F.linear(x, w, b)) + 0.01 * x.sum(),
                                                 gradviz.tensor([0, 1, 4])), (3, 4), (5, 4), (5,)),
]


@pytest.mark.parametrize(("name", "fn", *["s"]), [(c[0], c[1], c[2:]) for c in COMPOSITES],
                         ids=[c[0] for c in COMPOSITES])
def test_composites_gradcheck(name: str, fn: Any, s: tuple) -> None:
    rng = np.random.default_rng(len(name))
    inputs = tuple(gradviz.tensor(rng.uniform(-1, 1, shape), dtype=F64, requires_grad=True)
                   for shape in s)
    assert gradcheck(fn, inputs)
    if name != "mlp step":  # relu's kink
        assert gradgradcheck(fn, inputs)


# -- errors ----------------------------------------------------------------------------------------
ERRORS = [
    ("F.nll_loss(x, m.tensor([0.0, 1, 2, 3]))", RuntimeError,
     "expected target dtype to be Long or Byte, but got Float"),
    ("F.nll_loss(x, m.tensor([0, 1]))", ValueError,
     "Expected input batch_size (4) to match target batch_size (2)."),
    ("F.nll_loss(x, m.tensor([0, 1, 2, 7]))", IndexError, "Target 7 is out of bounds."),
    ("F.nll_loss(x, t, weight=w5.requires_grad_())", RuntimeError,
     "The function 'nll_loss_forward' is not differentiable with respect to argument 'weight'. "
     "This input cannot have requires_grad True."),
    ("F.cross_entropy(x, m.tensor([0, 1]))", ValueError,
     "Expected input batch_size (4) to match target batch_size (2)."),
    ("F.mse_loss(x, m.zeros(3, 5))", RuntimeError,
     "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 0"),
    ("F.binary_cross_entropy(x, m.zeros(4, 5))", RuntimeError,
     "all elements of input should be between 0 and 1"),
    ("F.binary_cross_entropy(m.sigmoid(x), m.zeros(5))", ValueError,
     "Using a target size (gradviz.Size([5])) that is different to the input size "
     "(gradviz.Size([4, 5])) is deprecated. Please ensure they have the same size."),
    ("F.binary_cross_entropy(m.sigmoid(x), p, weight=w5.requires_grad_())", RuntimeError,
     "The function 'binary_cross_entropy' is not differentiable with respect to argument "
     "'weight'. This input cannot have requires_grad True."),
    ("F.one_hot(m.tensor([0.0]))", RuntimeError,
     "one_hot is only applicable to index tensor of type LongTensor."),
    ("F.one_hot(m.tensor([-1]))", RuntimeError, "Class values must be non-negative."),
    ("F.one_hot(m.tensor([3]), 2)", RuntimeError, "Class values must be smaller than num_classes."),
    ("F.layer_norm(x, (4,))", RuntimeError,
     "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[4, 5]"),
    ("F.embedding(m.tensor([9]), E)", IndexError, "index out of range in self"),
    ("F.embedding(m.tensor([1.0]), E)", RuntimeError,
     "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, "
     "Int; but got gradviz.FloatTensor instead (while checking arguments for embedding)"),
    ("F.linear(x, m.zeros(3, 4, dtype=m.float64))", RuntimeError,
     "mat1 and mat2 shapes cannot be multiplied (4x5 and 4x3)"),
    ("F.dropout(x, 1.5)", ValueError, "dropout probability has to be between 0 and 1, but got 1.5"),
    ("F.gelu(m.tensor([1]))", NotImplementedError, "\"GeluKernelImpl\" not implemented for 'Long'"),
    ("F.silu(m.tensor([1]))", NotImplementedError, "\"silu_cpu\" not implemented for 'Long'"),
    ("F.softmax(m.tensor([1]), 0)", NotImplementedError,
     "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'"),
    ("F.gelu(x, approximate='fast')", RuntimeError,
     "approximate argument must be either none or tanh."),
    ("F.mse_loss(x, y, reduction='avg')", ValueError, "avg is not a valid value for reduction"),
]


@pytest.mark.parametrize(("src", "exc", "message"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_pytorch(src: str, exc: type, message: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc, match=re.escape(message)):
            eval(src, env())  # noqa: S307


def test_broadcast_warning_matches_pytorch() -> None:
    e = env()
    with pytest.warns(UserWarning, match=re.escape(
            "Using a target size (gradviz.Size([5])) that is different to the input size "
            "(gradviz.Size([4, 5])). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.")):
        loss = F.mse_loss(e["x"], gradviz.zeros(5, dtype=F64))
    assert sig(loss) == "MseLossBackward0(Acc, None)"


def test_implicit_softmax_dim_warns() -> None:
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = F.softmax(gradviz.zeros(2, 3))
    assert out.grad_fn is None
    np.testing.assert_allclose(out.numpy(), np.full((2, 3), 1 / 3), rtol=1e-6)


# -- linear: the order its nodes are made in, and so the order the engine runs them -------------
# What torch 2.13 records and runs, written out (tests/parity/test_engine_order_parity.py checks
# these against torch): (name, sequence_nr counted from the first number linear takes,
# next_functions). The engine runs the ready node with the highest number first, so the order
# of creation decides which of two ready nodes runs first.
_ACC = ("AccumulateGrad", None, ())
LINEAR_ORDERS = {
    # 2-D with a bias: t, addmm
    "2-D, bias": ((4, 3), (5,), [
        ("SumBackward0", 2, (("AddmmBackward0", 0),)),
        ("AddmmBackward0", 1, (("AccumulateGrad", 0), ("AccumulateGrad", 0), ("TBackward0", 0))),
        _ACC, _ACC, ("TBackward0", 0, (("AccumulateGrad", 0),)), _ACC]),
    "2-D, no bias": ((4, 3), None, [
        ("SumBackward0", 2, (("MmBackward0", 0),)),
        ("MmBackward0", 1, (("AccumulateGrad", 0), ("TBackward0", 0))),
        _ACC, ("TBackward0", 0, (("AccumulateGrad", 0),)), _ACC]),
    # 3-D with a bias: the input's view is made before weight.t(), so TBackward0 runs first
    "3-D, bias": ((2, 4, 3), (5,), [
        ("SumBackward0", 4, (("ViewBackward0", 0),)),
        ("ViewBackward0", 3, (("AddmmBackward0", 0),)),
        ("AddmmBackward0", 2, (("AccumulateGrad", 0), ("ViewBackward0", 0), ("TBackward0", 0))),
        _ACC, ("TBackward0", 1, (("AccumulateGrad", 0),)), _ACC,
        ("ViewBackward0", 0, (("AccumulateGrad", 0),)), _ACC]),
    # 3-D without a bias (matmul): weight.t() first, so the input's ViewBackward0 runs first
    "3-D, no bias": ((2, 4, 3), None, [
        ("SumBackward0", 4, (("UnsafeViewBackward0", 0),)),
        ("UnsafeViewBackward0", 3, (("MmBackward0", 0),)),
        ("MmBackward0", 2, (("ViewBackward0", 0), ("TBackward0", 0))),
        ("ViewBackward0", 1, (("AccumulateGrad", 0),)), _ACC,
        ("TBackward0", 0, (("AccumulateGrad", 0),)), _ACC]),
    # A (1, 5) bias is one row once squeezed: the flattened path; the squeeze's node is in no
    # graph but took number 0
    "3-D, (1, 5) bias": ((2, 4, 3), (1, 5), [
        ("SumBackward0", 5, (("ViewBackward0", 0),)),
        ("ViewBackward0", 4, (("AddmmBackward0", 0),)),
        ("AddmmBackward0", 3, (("AccumulateGrad", 0), ("ViewBackward0", 0), ("TBackward0", 0))),
        _ACC, ("TBackward0", 2, (("AccumulateGrad", 0),)), _ACC,
        ("ViewBackward0", 1, (("AccumulateGrad", 0),)), _ACC]),
    # A (4, 5) bias is not: matmul, then the bias added (the squeeze took number 0 here too)
    "3-D, (4, 5) bias": ((2, 4, 3), (4, 5), [
        ("SumBackward0", 6, (("AddBackward0", 0),)),
        ("AddBackward0", 5, (("UnsafeViewBackward0", 0), ("AccumulateGrad", 0))), _ACC,
        ("UnsafeViewBackward0", 4, (("MmBackward0", 0),)),
        ("MmBackward0", 3, (("ViewBackward0", 0), ("TBackward0", 0))),
        ("ViewBackward0", 2, (("AccumulateGrad", 0),)), _ACC,
        ("TBackward0", 1, (("AccumulateGrad", 0),)), _ACC]),
}


def _numbered_from(first: int, ran: list) -> list:
    return [(n, None if s is None else s - first, e) for n, s, e in ran]


@pytest.mark.parametrize("case", sorted(LINEAR_ORDERS))
def test_linear_makes_and_runs_its_nodes_in_pytorchs_order(case: str) -> None:
    x_shape, b_shape, expected = LINEAR_ORDERS[case]
    rng = np.random.default_rng(0)
    x = gradviz.tensor(rng.standard_normal(x_shape), requires_grad=True)
    w = gradviz.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    b = None if b_shape is None else gradviz.tensor(rng.standard_normal(b_shape),
                                                    requires_grad=True)
    first = (x * 1).grad_fn._sequence_nr() + 1  # the next number is linear's first
    ran = execution_order(F.linear(x, w, b).sum())
    assert _numbered_from(first, ran) == expected


def test_leaves_take_no_sequence_number() -> None:
    # AccumulateGrad is made with UINT64_MAX (as in PyTorch): making one, on first use of a
    # leaf, leaves the op nodes around it numbered one after the other.
    a, b = gradviz.ones(2, requires_grad=True), gradviz.ones(2, requires_grad=True)
    y = a * 2
    z = y * b  # makes b's AccumulateGrad
    assert z.grad_fn._sequence_nr() == y.grad_fn._sequence_nr() + 1
    assert z.grad_fn.next_functions[1][0]._sequence_nr() == 2**64 - 1
