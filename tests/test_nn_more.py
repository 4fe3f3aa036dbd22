"""The activations, losses and layers nnact added, without torch: values, the recorded nodes
and what they save, in-place forms, reductions, module reprs and error texts, with torch 2.13's
answers written out (tests/parity/test_nn_more_parity.py derives them again from torch)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import gradviz
import gradviz.nn.functional as F
from gradviz import nn


def _names(out: gradviz.Tensor) -> list[str]:
    """The nodes from ``out.grad_fn`` following first edges: the main chain."""
    names, node = [], out.grad_fn
    while node is not None:
        names.append(node.name())
        node = node.next_functions[0][0] if node.next_functions else None
    return names


def _saved(node: object) -> list[str]:
    return sorted(a for a in dir(node) if a.startswith("_saved_"))


def x34() -> gradviz.Tensor:
    return gradviz.tensor([[-2.5, -0.7, 0.3, 1.6], [4.0, -4.0, 0.0, 2.9], [-0.2, 0.9, -1.3, 7.0]],
                          dtype=gradviz.float64, requires_grad=True)


def test_hardtanh_and_relu6_values_nodes_and_saved() -> None:
    x = x34()
    y = F.hardtanh(x)
    np.testing.assert_allclose(y.detach().numpy(), np.clip(x.detach().numpy(), -1, 1))
    assert y.grad_fn.name() == "HardtanhBackward0"
    assert _saved(y.grad_fn) == ["_saved_max_val", "_saved_min_val", "_saved_self"]
    assert (y.grad_fn._saved_min_val, y.grad_fn._saved_max_val) == (-1.0, 1.0)
    y.sum().backward()
    inside = (x.detach().numpy() > -1) & (x.detach().numpy() < 1)
    np.testing.assert_array_equal(x.grad.numpy(), inside.astype(float))
    r = F.relu6(x)
    assert r.grad_fn.name() == "HardtanhBackward0"
    # F.relu6 saves the ints 0 and 6, nn.ReLU6 the floats (its min_val/max_val attributes)
    assert (r.grad_fn._saved_min_val, r.grad_fn._saved_max_val) == (0, 6)
    assert isinstance(r.grad_fn._saved_max_val, int)
    m = nn.ReLU6()(x)
    assert isinstance(m.grad_fn._saved_max_val, float) and m.grad_fn._saved_max_val == 6.0
    assert m.max().item() == 6.0


def test_inplace_forms_record_torchs_nodes_and_save_the_input_as_it_was() -> None:
    x = x34()
    for fn, node in [(lambda h: F.hardtanh(h, inplace=True), "HardtanhBackward0"),
                     (lambda h: F.hardtanh_(h), "HardtanhBackward0"),
                     (lambda h: F.relu6(h, inplace=True), "HardtanhBackward0"),
                     (lambda h: F.mish(h, inplace=True), "MishBackward0"),
                     (lambda h: F.hardswish(h, inplace=True), "HardswishBackward0"),
                     (lambda h: F.hardsigmoid(h, inplace=True), "HardsigmoidBackward0"),
                     (lambda h: F.threshold(h, 0.5, 9.0, inplace=True), "ThresholdBackward1"),
                     (lambda h: F.threshold_(h, 0.5, 9.0), "ThresholdBackward1")]:
        h = x * 1
        before = h.detach().clone()
        out = fn(h)
        assert out is h and h._version == 1
        assert h.grad_fn.name() == node
        assert h.grad_fn.next_functions[0][0].name() == "MulBackward0"
        np.testing.assert_array_equal(h.grad_fn._saved_self.detach().numpy(), before.numpy())
    # celu_ and selu_ save the result instead (CeluBackward1, EluBackward1)
    c = F.celu(x * 1, 0.5, inplace=True)
    assert c.grad_fn.name() == "CeluBackward1" and _saved(c.grad_fn) == ["_saved_alpha",
                                                                        "_saved_result"]
    s = F.selu_(x * 1)
    assert s.grad_fn.name() == "EluBackward1"


def test_selu_is_elu_with_selus_constants() -> None:
    x = x34()
    y = F.selu(x)
    node = y.grad_fn
    assert node.name() == "EluBackward0"
    assert node._saved_alpha == 1.6732632423543772 and node._saved_scale == 1.0507009873554805
    assert node._saved_input_scale == 1
    v = x.detach().numpy()
    ref = 1.0507009873554805 * np.where(v > 0, v, 1.6732632423543772 * np.expm1(v))
    np.testing.assert_allclose(y.detach().numpy(), ref)


def test_celu_mish_hardswish_hardsigmoid_values() -> None:
    v = np.array([-4.0, -2.5, -0.5, 0.0, 0.7, 3.5])
    x = gradviz.tensor(v, dtype=gradviz.float64)
    np.testing.assert_allclose(F.celu(x, 0.5).numpy(), np.where(v > 0, v, 0.5 * np.expm1(v / 0.5)))
    np.testing.assert_allclose(F.mish(x).numpy(), v * np.tanh(np.log1p(np.exp(v))))
    np.testing.assert_allclose(F.hardswish(x).numpy(), v * np.clip(v + 3, 0, 6) / 6)
    np.testing.assert_allclose(F.hardsigmoid(x).numpy(), np.clip(v + 3, 0, 6) / 6)
    np.testing.assert_allclose(F.softsign(x).numpy(), v / (1 + np.abs(v)))
    np.testing.assert_allclose(F.tanhshrink(x).numpy(), v - np.tanh(v))
    np.testing.assert_allclose(F.softshrink(x, 1.0).numpy(),
                               [-3.0, -1.5, 0.0, 0.0, 0.0, 2.5])
    np.testing.assert_allclose(F.hardshrink(x, 0.6).numpy(), [-4.0, -2.5, 0.0, 0.0, 0.7, 3.5])
    np.testing.assert_allclose(F.threshold(x, 0.5, 20.0).numpy(),
                               [20.0, 20.0, 20.0, 20.0, 0.7, 3.5])


def test_threshold_double_backward_records_threshold_backward_backward() -> None:
    # As torch 2.13: threshold's gradient is ThresholdBackwardBackward0 (self, threshold saved),
    # whose gradient reaches grad_output; self's is zeros.
    x = gradviz.tensor([-1.0, 0.5, 2.0], dtype=gradviz.float64, requires_grad=True)
    seed = gradviz.tensor([1.0, 2.0, 3.0], dtype=gradviz.float64, requires_grad=True)
    (g,) = gradviz.autograd.grad(F.threshold(x, 0.1, 20.0), x, seed, create_graph=True)
    node = g.grad_fn
    assert node.name() == "ThresholdBackwardBackward0"
    assert node._saved_self.tolist() == [-1.0, 0.5, 2.0] and node._saved_threshold == 0.1
    assert [n.variable for n, _ in node.next_functions] == [seed, x]
    assert g.tolist() == [0.0, 2.0, 3.0]
    (g * g).sum().backward()
    assert seed.grad.tolist() == [0.0, 4.0, 6.0] and x.grad.tolist() == [0.0, 0.0, 0.0]


def test_relu_gradient_is_threshold_backward_of_its_result() -> None:
    # torch 2.13: zeros where the result is not positive, even for a nan or inf gradient; under
    # create_graph a ThresholdBackwardBackward0 saving the result and threshold 0.
    x = gradviz.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    F.relu(x).backward(gradviz.tensor([float("nan"), float("inf"), 1.0]))
    assert x.grad.tolist() == [0.0, 0.0, 1.0]
    seed = gradviz.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = F.relu(x)
    (g,) = gradviz.autograd.grad(y, x, seed, create_graph=True)
    node = g.grad_fn
    assert node.name() == "ThresholdBackwardBackward0" and node._saved_threshold == 0
    assert node._saved_self.tolist() == [0.0, 0.0, 2.0]
    assert [(n.name(), i) for n, i in node.next_functions] == [
        ("torch::autograd::AccumulateGrad", 0), ("ReluBackward0", 0)]
    assert g.tolist() == [0.0, 0.0, 3.0]


def test_hardsigmoid_gradient_is_torchs_float32_one_sixth() -> None:
    x = gradviz.tensor([0.5, -4.0], dtype=gradviz.float64, requires_grad=True)
    F.hardsigmoid(x).sum().backward()
    assert x.grad.tolist() == [0.1666666716337204, 0.0]  # torch 2.13, float64


def test_logsigmoid_saves_the_kernels_buffer_and_is_stable() -> None:
    x = gradviz.tensor([-800.0, -1.0, 0.0, 2.0, 800.0], dtype=gradviz.float64,
                       requires_grad=True)
    y = F.logsigmoid(x)
    node = y.grad_fn
    assert node.name() == "LogSigmoidBackward0"
    assert _saved(node) == ["_saved_buffer", "_saved_self"]
    np.testing.assert_allclose(node._saved_buffer.numpy(), np.exp(-np.abs(x.detach().numpy())))
    np.testing.assert_allclose(y.detach().numpy(),
                               [-800.0, -1.3132616875182228, -math.log(2), -0.1269280110429725,
                                0.0], atol=1e-12)
    y.sum().backward()
    # d/dx log(sigmoid(x)) = sigmoid(-x) = exp(-log(1 + exp(x))), written without overflow
    np.testing.assert_allclose(x.grad.numpy(), np.exp(-np.logaddexp(0, x.detach().numpy())))


def test_prelu_views_the_weight_then_runs_the_kernel() -> None:
    x = x34()
    w = gradviz.tensor([0.1, 0.2, 0.3, 0.4], dtype=gradviz.float64, requires_grad=True)
    y = F.prelu(x, w)
    node = y.grad_fn
    assert node.name() == "PreluKernelBackward0"
    assert _saved(node) == ["_saved_self", "_saved_weight"]
    assert node._saved_weight.shape == (1, 4)
    assert node.next_functions[1][0].name() == "ViewBackward0"
    y.sum().backward()
    v = x.detach().numpy()
    np.testing.assert_allclose(w.grad.numpy(), np.where(v > 0, 0, v).sum(0))
    np.testing.assert_allclose(x.grad.numpy(), np.where(v > 0, 1.0, [0.1, 0.2, 0.3, 0.4]) + 0 * v)
    m = nn.PReLU(3)
    assert repr(m) == "PReLU(num_parameters=3)" and m.weight.tolist() == [0.25] * 3
    assert list(m.state_dict()) == ["weight"]


def test_glu_halves_and_shows_its_dim_unsigned() -> None:
    x = x34()
    y = F.glu(x)
    assert y.shape == (3, 2)
    v = x.detach().numpy()
    np.testing.assert_allclose(y.detach().numpy(), v[:, :2] / (1 + np.exp(-v[:, 2:])))
    assert y.grad_fn.name() == "GluBackward0"
    assert y.grad_fn._saved_dim == 18446744073709551615  # -1, as torch shows it
    assert F.glu(x[:2], 0).grad_fn._saved_dim == 0


def test_softmin_softsign_tanhshrink_are_composites() -> None:
    x = x34()
    assert _names(F.softmin(x, 1)) == ["SoftmaxBackward0", "NegBackward0",
                                       "torch::autograd::AccumulateGrad"]
    d = F.softsign(x).grad_fn
    assert d.name() == "DivBackward0" and d.next_functions[1][0].name() == "AddBackward0"
    assert d.next_functions[1][0].next_functions[0][0].name() == "AbsBackward0"
    t = F.tanhshrink(x).grad_fn
    assert t.name() == "SubBackward0" and t.next_functions[1][0].name() == "TanhBackward0"
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        F.softmin(x)


def test_smooth_l1_and_huber_losses() -> None:
    x = gradviz.tensor([0.5, 3.0, -0.2], dtype=gradviz.float64, requires_grad=True)
    t = gradviz.zeros(3, dtype=gradviz.float64)
    loss = F.smooth_l1_loss(x, t)
    assert loss.item() == pytest.approx((0.125 + 2.5 + 0.02) / 3)
    assert loss.grad_fn.name() == "SmoothL1LossBackward0"
    assert _saved(loss.grad_fn) == ["_saved_beta", "_saved_reduction", "_saved_self",
                                    "_saved_target"]
    assert (loss.grad_fn._saved_beta, loss.grad_fn._saved_reduction) == (1.0, 1)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.array([0.5, 1.0, -0.2]) / 3)
    # beta=0 is l1_loss, recorded as PyTorch decomposes it
    assert _names(F.smooth_l1_loss(x, t, beta=0.0))[:3] == ["MeanBackward0", "AbsBackward0",
                                                            "SubBackward0"]
    h = F.huber_loss(x, t, reduction="sum", delta=2.0)
    assert h.item() == pytest.approx(0.125 + 2 * (3.0 - 1.0) + 0.02)
    assert h.grad_fn.name() == "HuberLossBackward0" and h.grad_fn._saved_delta == 2.0
    assert h.grad_fn._saved_reduction == 2
    assert F.huber_loss(x, t, reduction="none").shape == (3,)
    w = F.huber_loss(x, t, weight=gradviz.ones(3, dtype=gradviz.float64))
    assert _names(w)[:3] == ["MeanBackward0", "MulBackward0", "HuberLossBackward0"]


def test_kl_div_reductions_and_mean_warning() -> None:
    p = gradviz.tensor([[0.2, 0.8], [0.5, 0.5]], dtype=gradviz.float64)
    q = gradviz.tensor([[0.4, 0.6], [0.1, 0.9]], dtype=gradviz.float64, requires_grad=True)
    logq = q.log()
    kl = F.kl_div(logq, p, reduction="batchmean")
    pv, qv = p.numpy(), q.detach().numpy()
    assert kl.item() == pytest.approx((pv * np.log(pv / qv)).sum() / 2)
    assert _names(kl) == ["DivBackward0", "SumBackward0", "SubBackward0"]
    sub = kl.grad_fn.next_functions[0][0].next_functions[0][0]
    # xlogy(target, target) is a constant: no edge; target * input is MulBackward0
    assert sub.next_functions[0] == (None, 0) and sub.next_functions[1][0].name() == "MulBackward0"
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        mean = F.kl_div(logq, p)
    assert mean.item() == pytest.approx(kl.item() / 2)
    assert F.kl_div(logq, p, reduction="none").shape == (2, 2)
    lt = F.kl_div(logq, p.log(), reduction="sum", log_target=True)
    assert lt.item() == pytest.approx(kl.item() * 2)
    assert _names(lt) == ["SumBackward0", "MulBackward0"]
    assert lt.grad_fn.next_functions[0][0].next_functions[1][0].name() == "SubBackward0"
    pg = p.clone().requires_grad_(True)
    sub = F.kl_div(logq, pg, reduction="sum").grad_fn.next_functions[0][0]
    assert [n.name() for n, _ in sub.next_functions] == ["XlogyBackward0", "MulBackward0"]


def test_cosine_similarity_and_normalize_chains() -> None:
    a = x34()
    b = gradviz.tensor(np.arange(12.0).reshape(3, 4) - 5, dtype=gradviz.float64)
    c = F.cosine_similarity(a, b)
    av, bv = a.detach().numpy(), b.numpy()
    ref = (av * bv).sum(1) / (np.linalg.norm(av, axis=1) * np.linalg.norm(bv, axis=1))
    np.testing.assert_allclose(c.detach().numpy(), ref)
    assert _names(c) == ["SumBackward1", "MulBackward0", "DivBackward0",
                         "torch::autograd::AccumulateGrad"]
    div = c.grad_fn.next_functions[0][0].next_functions[0][0]
    assert [n.name() for n, _ in div.next_functions[1][0].next_functions] == [
        "LinalgVectorNormBackward0"]
    assert div.next_functions[1][0].name() == "CloneBackward0"
    n = F.normalize(a)
    np.testing.assert_allclose(n.detach().numpy(), av / np.linalg.norm(av, axis=1, keepdims=True))
    assert _names(n)[:1] == ["DivBackward0"]
    denom = n.grad_fn.next_functions[1][0]
    assert denom.name() == "ExpandBackward0"
    clamp = denom.next_functions[0][0]
    assert clamp.name() == "ClampMinBackward0" and clamp._saved_min == 1e-12
    norm = clamp.next_functions[0][0]
    assert norm.name() == "LinalgVectorNormBackward0" and norm._saved_ord == 2.0
    assert norm._saved_dim == (1,) and norm._saved_keepdim is True
    assert nn.CosineSimilarity(dim=0)(gradviz.tensor([1.0, 0.0]),
                                      gradviz.tensor([3.0, 0.0])).item() == 1.0


def test_margin_ranking_and_soft_margin_losses() -> None:
    a = gradviz.tensor([1.0, 0.0, 2.0], dtype=gradviz.float64, requires_grad=True)
    b = gradviz.tensor([0.0, 1.0, 2.0], dtype=gradviz.float64)
    y = gradviz.tensor([1.0, 1.0, -1.0], dtype=gradviz.float64)
    loss = F.margin_ranking_loss(a, b, y, margin=0.5)
    assert loss.item() == pytest.approx((0 + 1.5 + 0.5) / 3)
    assert _names(loss)[:4] == ["MeanBackward0", "ClampMinBackward0", "AddBackward1",
                                "MulBackward0"]
    assert loss.grad_fn.next_functions[0][0]._saved_min == 0
    s = F.soft_margin_loss(a, y, reduction="sum")
    assert s.item() == pytest.approx(float(np.log1p(np.exp(-y.numpy() * a.detach().numpy())).sum()))
    assert s.grad_fn.name() == "SoftMarginLossBackward0"
    assert _saved(s.grad_fn) == ["_saved_reduction", "_saved_self", "_saved_target"]


def test_module_reprs_are_torchs() -> None:
    reprs = [repr(m) for m in (
        nn.Hardtanh(), nn.Hardtanh(-2, 3.0, True), nn.ReLU6(), nn.ReLU6(True), nn.SELU(True),
        nn.CELU(0.5, True), nn.Mish(True), nn.GLU(0), nn.Hardswish(True), nn.Hardsigmoid(),
        nn.LogSigmoid(), nn.Softsign(), nn.Softshrink(0.3), nn.Hardshrink(), nn.Tanhshrink(),
        nn.Threshold(0.1, 20), nn.Threshold(0.1, 20.0, True), nn.Softmin(),
        nn.SmoothL1Loss(beta=0.5), nn.HuberLoss(delta=2.0), nn.KLDivLoss(), nn.CosineSimilarity(),
        nn.MarginRankingLoss(0.5), nn.SoftMarginLoss(), nn.Unflatten(1, (2, 2)),
        nn.Unflatten(-1, [3, -1]), nn.ZeroPad2d(1), nn.ZeroPad2d((1, 2, 3, 4)))]
    assert reprs == [
        "Hardtanh(min_val=-1.0, max_val=1.0)", "Hardtanh(min_val=-2, max_val=3.0, inplace=True)",
        "ReLU6()", "ReLU6(inplace=True)", "SELU(inplace=True)", "CELU(alpha=0.5, inplace=True)",
        "Mish(inplace=True)", "GLU(dim=0)", "Hardswish()", "Hardsigmoid()", "LogSigmoid()",
        "Softsign()", "Softshrink(0.3)", "Hardshrink(0.5)", "Tanhshrink()",
        "Threshold(threshold=0.1, value=20)", "Threshold(threshold=0.1, value=20.0, inplace=True)",
        "Softmin(dim=None)", "SmoothL1Loss()", "HuberLoss()", "KLDivLoss()", "CosineSimilarity()",
        "MarginRankingLoss()", "SoftMarginLoss()", "Unflatten(dim=1, unflattened_size=(2, 2))",
        "Unflatten(dim=-1, unflattened_size=[3, -1])", "ZeroPad2d((1, 1, 1, 1))",
        "ZeroPad2d((1, 2, 3, 4))"]


def test_unflatten_and_zeropad2d() -> None:
    x = x34()
    u = nn.Unflatten(1, (2, -1))(x)
    assert u.shape == (3, 2, 2) and u.grad_fn.name() == "ViewBackward0"
    p = nn.ZeroPad2d((1, 0, 2, 1))(x)
    assert p.shape == (6, 5) and p.grad_fn.name() == "ConstantPadNdBackward0"
    assert p[0].abs().sum().item() == 0.0


@pytest.mark.parametrize(("call", "kind", "text"), [
    (lambda: F.hardtanh(gradviz.ones(2), 2.0, 1.0), ValueError,
     "min_val cannot be greater than max_val"),
    (lambda: nn.Hardtanh(1, 1), AssertionError, "max_val (1) must be greater than min_val (1)"),
    (lambda: F.celu(gradviz.ones(2), 0.0), RuntimeError,
     "ZeroDivisionError: alpha cannot be 0 for CELU"),
    (lambda: F.glu(gradviz.ones(3, 3)), RuntimeError,
     "Halving dimension must be even, but dimension 1 is size 3"),
    (lambda: F.glu(gradviz.tensor(1.0)), RuntimeError,
     "glu does not support scalars because halving size must be even"),
    (lambda: F.prelu(gradviz.ones(3, 4), gradviz.ones(3)), RuntimeError,
     "Mismatch of parameter numbers and input channel size. Found parameter numbers = 3 and "
     "channel size = 4."),
    (lambda: F.prelu(gradviz.ones(3, 4), gradviz.ones(2, 2)), RuntimeError,
     "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2"),
    (lambda: F.mish(gradviz.tensor([1, 2])), NotImplementedError,
     "\"mish_cpu\" not implemented for 'Long'"),
    (lambda: F.logsigmoid(gradviz.tensor([1, 2])), NotImplementedError,
     "\"log_sigmoid_cpu\" not implemented for 'Long'"),
    (lambda: F.softshrink(gradviz.ones(2), -1.0), RuntimeError,
     "lambda must be in range [0, 3.40282e+38] for input dtype Float, but found -1"),
    (lambda: F.smooth_l1_loss(gradviz.ones(2), gradviz.ones(2), beta=-1.0), RuntimeError,
     "smooth_l1_loss does not support negative values for beta."),
    (lambda: F.huber_loss(gradviz.ones(2), gradviz.ones(2), delta=0.0), RuntimeError,
     "huber_loss does not support non-positive values for delta."),
    (lambda: F.huber_loss(gradviz.ones(2), gradviz.ones(2), weight=gradviz.ones(3)),
     ValueError, "Weights and input must have the same size."),
    (lambda: F.kl_div(gradviz.ones(2), gradviz.ones(2), reduction="bad"), ValueError,
     "bad is not a valid value for reduction"),
    (lambda: F.soft_margin_loss(gradviz.ones(2), gradviz.ones(2, requires_grad=True)),
     RuntimeError, "The function 'soft_margin_loss' is not differentiable with respect to "
     "argument 'target'. This input cannot have requires_grad True."),
    (lambda: F.margin_ranking_loss(gradviz.ones(4), gradviz.ones(4), gradviz.ones(1, 4)),
     RuntimeError, "margin_ranking_loss : All input tensors should have same dimension but got "
     "sizes: input1: gradviz.Size([4]), input2: gradviz.Size([4]), target: gradviz.Size([1, 4]) "),
    (lambda: nn.Unflatten(1, (3, 2))(gradviz.ones(3, 4)), RuntimeError,
     "unflatten: Provided sizes [3, 2] don't multiply up to the size of dim 1 (4) in the input "
     "tensor"),
    (lambda: nn.Unflatten(1, 2), TypeError,
     "unflattened_size must be a tuple of ints, but found type int"),
])
def test_errors_have_torchs_texts(call, kind, text) -> None:  # noqa: ANN001
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(kind) as info:
            call()
    assert str(info.value).startswith(text)


def test_parameter_list_and_dict_register_their_parameters() -> None:
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ps = nn.ParameterList([gradviz.ones(2), nn.Parameter(gradviz.ones(3))])
            self.pd = nn.ParameterDict({"b": gradviz.ones(1), "a": gradviz.zeros(2)})

    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["ps.0", "ps.1", "pd.a", "pd.b"]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in net.parameters())
    assert repr(net.ps) == ("ParameterList(\n"
                            "    (0): Parameter containing: [gradviz.float32 of size 2]\n"
                            "    (1): Parameter containing: [gradviz.float32 of size 3]\n)")
    assert repr(nn.ParameterDict({"a": gradviz.ones(2, 3)})) == (
        "ParameterDict(  (a): Parameter containing: [gradviz.FloatTensor of size 2x3])")
    net.ps.append(gradviz.zeros(4))
    assert len(net.ps) == 3 and net.ps[-1].shape == (4,) and len(net.ps[1:]) == 2
    assert list(net.pd.keys()) == ["a", "b"] and "a" in net.pd
    assert net.pd.pop("b").shape == (1,) and list(net.pd) == ["a"]
    (net.ps[0].sum() * 3).backward()
    assert net.ps[0].grad.tolist() == [3.0, 3.0]
    with pytest.raises(IndexError, match="index 5 is out of range"):
        net.ps[5]
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        net.ps(1)
    with pytest.raises(TypeError, match="Index given to ParameterDict cannot be used as a key"):
        net.pd[1] = gradviz.ones(1)
    with pytest.raises(TypeError, match="ParameterList.extend should be called with an iterable"):
        net.ps.extend(gradviz.ones(2))


def test_distance_and_embedding_losses() -> None:
    a = gradviz.tensor([[3.0, 4.0], [1.0, 0.0]], dtype=gradviz.float64, requires_grad=True)
    b = gradviz.tensor([[0.0, 0.0], [0.0, 1.0]], dtype=gradviz.float64)
    d = F.pairwise_distance(a, b, eps=0.0)
    np.testing.assert_allclose(d.detach().numpy(), [5.0, math.sqrt(2)])
    assert _names(d)[:3] == ["NormBackward1", "AddBackward1", "SubBackward0"]
    assert _saved(d.grad_fn) == ["_saved_dim", "_saved_keepdim", "_saved_p", "_saved_result",
                                 "_saved_self"]
    assert (d.grad_fn._saved_dim, d.grad_fn._saved_p) == ((1,), 2.0)
    y = gradviz.tensor([1.0, -1.0], dtype=gradviz.float64)
    cel = F.cosine_embedding_loss(a, b, y, reduction="none")
    np.testing.assert_allclose(cel.detach().numpy(), [1.0, 0.0], atol=1e-12)
    assert cel.grad_fn.name() == "AddBackward0"
    assert [n.name() for n, _ in cel.grad_fn.next_functions] == ["WhereBackward0",
                                                                 "WhereBackward0"]
    s = gradviz.tensor([[1.0, -1.0], [-1.0, 1.0]], dtype=gradviz.float64)
    h = F.hinge_embedding_loss(a, s, margin=2.0, reduction="sum")
    assert h.item() == pytest.approx(3.0 + 0.0 + 1.0 + 0.0)
    assert _names(h)[:2] == ["SumBackward0", "AddBackward0"]


def test_poisson_and_gaussian_nll_losses() -> None:
    x = gradviz.tensor([0.0, 1.0], dtype=gradviz.float64, requires_grad=True)
    t = gradviz.tensor([1.0, 3.0], dtype=gradviz.float64)
    p = F.poisson_nll_loss(x, t, reduction="sum")
    assert p.item() == pytest.approx(1.0 + math.e - 3.0)
    assert _names(p)[:3] == ["SumBackward0", "SubBackward0", "ExpBackward0"]
    full = F.poisson_nll_loss(x, t, full=True, reduction="none")
    stirling = 3 * math.log(3) - 3 + 0.5 * math.log(2 * math.pi * 3)
    np.testing.assert_allclose(full.detach().numpy(), [1.0, math.e - 3 + stirling])
    var = gradviz.tensor([1.0, 4.0], dtype=gradviz.float64, requires_grad=True)
    g = F.gaussian_nll_loss(x, t, var)
    assert g.item() == pytest.approx(0.5 * ((0 + 1.0) + (math.log(4) + 1.0)) / 2)
    assert _names(g)[:4] == ["MeanBackward0", "MulBackward0", "AddBackward0", "LogBackward0"]
    g.backward()
    np.testing.assert_allclose(var.grad.numpy(), [0.5 * (1 - 1) / 2, 0.5 * (1 / 4 - 4 / 16) / 2])
    with pytest.raises(ValueError, match="var has negative entry/entries"):
        F.gaussian_nll_loss(x, t, -var.detach())
