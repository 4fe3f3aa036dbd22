"""The activations and losses added by nnact against torch 2.13: values, gradients, the nodes
of the graph (names, saved attributes and their values), module reprs and error texts, all
derived again from torch on random float64 inputs.

torch is imported inside the tests (collection works without it; see conftest.py).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradviz
import gradviz.nn.functional as GF


def _chain(out: Any) -> list[tuple]:
    """The graph from ``out.grad_fn``, depth first: (depth, name, saved name -> shape or value)."""
    rows, stack = [], [(out.grad_fn, 0)]
    while stack:
        node, depth = stack.pop()
        if node is None:
            continue
        saved = {}
        for a in sorted(a for a in dir(node) if a.startswith("_saved_")):
            v = getattr(node, a)
            saved[a] = ("tensor", tuple(v.shape)) if hasattr(v, "shape") else v
        rows.append((depth, node.name().replace("torch::autograd::", ""), saved))
        stack.extend((n, depth + 1) for n, _ in reversed(node.next_functions))
    return rows


def _same(ours: Any, theirs: Any) -> None:
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10,
                               atol=1e-12)


# Each case: a name, then fn(lib, F, *inputs) run with (gradviz, gradviz.nn.functional) and
# (torch, torch.nn.functional), then input specs: "r" uniform [-2, 2] requiring grad, "p"
# uniform [0.1, 1] (probabilities) without grad, "s" random signs without grad, "c" like r
# without grad.
CASES: list[tuple[str, Callable[..., Any], tuple]] = [
    ("hardtanh", lambda L, F, x: F.hardtanh(x), ("r",)),
    ("hardtanh args", lambda L, F, x: F.hardtanh(x, -0.5, 1.5), ("r",)),
    ("hardtanh inplace", lambda L, F, x: F.hardtanh(x * 1, inplace=True), ("r",)),
    ("hardtanh_", lambda L, F, x: F.hardtanh_(x * 1, 0.0, 1.0), ("r",)),
    ("relu6", lambda L, F, x: F.relu6(x * 4), ("r",)),
    ("relu6 inplace", lambda L, F, x: F.relu6(x * 4, inplace=True), ("r",)),
    ("ReLU6 module", lambda L, F, x: L.nn.ReLU6()(x * 4), ("r",)),
    ("selu", lambda L, F, x: F.selu(x), ("r",)),
    ("selu inplace", lambda L, F, x: F.selu(x * 1, inplace=True), ("r",)),
    ("celu", lambda L, F, x: F.celu(x, 0.5), ("r",)),
    ("celu inplace", lambda L, F, x: F.celu(x * 1, 0.5, inplace=True), ("r",)),
    ("mish", lambda L, F, x: F.mish(x), ("r",)),
    ("mish inplace", lambda L, F, x: F.mish(x * 1, inplace=True), ("r",)),
    ("prelu one", lambda L, F, x, w: F.prelu(x, w[0, :1]), ("r", "r")),
    ("prelu channels", lambda L, F, x, w: F.prelu(x, w[0]), ("r", "r")),
    ("prelu 1-d", lambda L, F, x, w: F.prelu(x[0], w[0, :1]), ("r", "r")),
    ("PReLU module", lambda L, F, x: L.nn.PReLU(4, init=0.1).double()(x), ("r",)),
    ("glu", lambda L, F, x: F.glu(x), ("r",)),
    ("glu dim 0", lambda L, F, x: F.glu(x[:2], 0), ("r",)),
    ("glu dim -2", lambda L, F, x: F.glu(x[:2], -2), ("r",)),
    ("hardswish", lambda L, F, x: F.hardswish(x * 3), ("r",)),
    ("hardswish inplace", lambda L, F, x: F.hardswish(x * 3, inplace=True), ("r",)),
    ("hardsigmoid", lambda L, F, x: F.hardsigmoid(x * 3), ("r",)),
    ("hardsigmoid inplace", lambda L, F, x: F.hardsigmoid(x * 3, inplace=True), ("r",)),
    ("logsigmoid", lambda L, F, x: F.logsigmoid(x * 10), ("r",)),
    ("softsign", lambda L, F, x: F.softsign(x), ("r",)),
    ("softshrink", lambda L, F, x: F.softshrink(x), ("r",)),
    ("softshrink lambd", lambda L, F, x: F.softshrink(x, 1.2), ("r",)),
    ("hardshrink", lambda L, F, x: F.hardshrink(x, 0.7), ("r",)),
    ("tanhshrink", lambda L, F, x: F.tanhshrink(x), ("r",)),
    ("threshold", lambda L, F, x: F.threshold(x, 0.1, 20.0), ("r",)),
    ("threshold inplace", lambda L, F, x: F.threshold(x * 1, 0.1, 20.0, inplace=True), ("r",)),
    ("threshold_", lambda L, F, x: F.threshold_(x * 1, -0.2, 3), ("r",)),
    ("softmin", lambda L, F, x: F.softmin(x, dim=1), ("r",)),
    ("Softmin module", lambda L, F, x: L.nn.Softmin(0)(x), ("r",)),
    ("smooth_l1", lambda L, F, x, y: F.smooth_l1_loss(x, y), ("r", "c")),
    ("smooth_l1 sum beta", lambda L, F, x, y: F.smooth_l1_loss(x, y, reduction="sum", beta=0.4),
     ("r", "r")),
    ("smooth_l1 none", lambda L, F, x, y: F.smooth_l1_loss(x, y, reduction="none"), ("r", "r")),
    ("smooth_l1 beta 0", lambda L, F, x, y: F.smooth_l1_loss(x, y, beta=0.0), ("r", "c")),
    ("huber", lambda L, F, x, y: F.huber_loss(x, y), ("r", "c")),
    ("huber sum delta", lambda L, F, x, y: F.huber_loss(x, y, reduction="sum", delta=0.3),
     ("r", "r")),
    ("huber weight", lambda L, F, x, y, w: F.huber_loss(x, y, weight=w), ("r", "c", "p")),
    ("kl_div batchmean", lambda L, F, x, t: F.kl_div(x, t, reduction="batchmean"), ("r", "p")),
    ("kl_div sum", lambda L, F, x, t: F.kl_div(x, t, reduction="sum"), ("r", "p")),
    ("kl_div none", lambda L, F, x, t: F.kl_div(x, t, reduction="none"), ("r", "p")),
    ("kl_div target grad", lambda L, F, x, t: F.kl_div(x, t * t + 0.1, reduction="sum"),
     ("r", "r")),
    ("kl_div log_target", lambda L, F, x, t: F.kl_div(x, t, reduction="batchmean",
                                                      log_target=True), ("r", "r")),
    ("cosine_similarity", lambda L, F, a, b: F.cosine_similarity(a, b), ("r", "c")),
    ("cosine_similarity both", lambda L, F, a, b: F.cosine_similarity(a, b, dim=0), ("r", "r")),
    ("cosine_similarity bcast", lambda L, F, a, b: F.cosine_similarity(a, b[0], dim=1),
     ("r", "r")),
    ("CosineSimilarity module", lambda L, F, a, b: L.nn.CosineSimilarity(dim=1)(a, b),
     ("r", "r")),
    ("normalize", lambda L, F, x: F.normalize(x), ("r",)),
    ("normalize p1 dim0", lambda L, F, x: F.normalize(x, p=1.0, dim=0), ("r",)),
    ("margin_ranking", lambda L, F, a, b, s: F.margin_ranking_loss(a, b, s), ("r", "c", "s")),
    ("margin_ranking both", lambda L, F, a, b, s: F.margin_ranking_loss(a, b, s, margin=0.5,
                                                                        reduction="sum"),
     ("r", "r", "s")),
    ("soft_margin", lambda L, F, x, s: F.soft_margin_loss(x, s), ("r", "s")),
    ("soft_margin none", lambda L, F, x, y: F.soft_margin_loss(x, y, reduction="none"),
     ("r", "c")),
    ("pairwise_distance", lambda L, F, a, b: F.pairwise_distance(a, b), ("r", "r")),
    ("pairwise_distance p1 keepdim", lambda L, F, a, b: F.pairwise_distance(a, b, 1.0,
                                                                            keepdim=True),
     ("r", "c")),
    ("pairwise_distance 1-d", lambda L, F, a, b: F.pairwise_distance(a[0], b[0], p=3.0),
     ("r", "r")),
    ("PairwiseDistance module", lambda L, F, a, b: L.nn.PairwiseDistance(eps=0.0)(a, b),
     ("r", "r")),
    ("hinge_embedding", lambda L, F, x, s: F.hinge_embedding_loss(x, s), ("r", "s")),
    ("hinge_embedding sum margin", lambda L, F, x, s: F.hinge_embedding_loss(
        x, s, margin=0.5, reduction="sum"), ("r", "s")),
    ("cosine_embedding", lambda L, F, a, b, s: F.cosine_embedding_loss(a, b, s[:, 0]),
     ("r", "r", "s")),
    ("cosine_embedding none margin", lambda L, F, a, b, s: F.cosine_embedding_loss(
        a, b, s[:, 1], margin=0.2, reduction="none"), ("r", "c", "s")),
    ("cosine_embedding 0-d target", lambda L, F, a, b, s: F.cosine_embedding_loss(
        a[0], b[0], s[0, 0]), ("r", "r", "s")),
    ("poisson_nll", lambda L, F, x, t: F.poisson_nll_loss(x, t), ("r", "p")),
    ("poisson_nll rates", lambda L, F, x, t: F.poisson_nll_loss(x * x + 0.1, t,
                                                                log_input=False), ("r", "p")),
    ("poisson_nll full sum", lambda L, F, x, t: F.poisson_nll_loss(x, t * 5, full=True,
                                                                   reduction="sum"), ("r", "p")),
    ("PoissonNLLLoss module", lambda L, F, x, t: L.nn.PoissonNLLLoss(reduction="none")(x, t),
     ("r", "p")),
    ("gaussian_nll", lambda L, F, x, y, v: F.gaussian_nll_loss(x, y, v), ("r", "r", "p")),
    ("gaussian_nll var grad full sum", lambda L, F, x, y, v: F.gaussian_nll_loss(
        x, y, v * v + 0.5, full=True, reduction="sum"), ("r", "c", "r")),
    ("gaussian_nll var (3, 1)", lambda L, F, x, y, v: F.gaussian_nll_loss(x, y, v[:, :1]),
     ("r", "r", "r")),
    ("GaussianNLLLoss module", lambda L, F, x, y, v: L.nn.GaussianNLLLoss(full=True)(x, y, v),
     ("r", "c", "p")),
    ("Unflatten", lambda L, F, x: L.nn.Unflatten(1, (2, -1))(x), ("r",)),
    ("ZeroPad2d", lambda L, F, x: L.nn.ZeroPad2d((1, 0, 2, 1))(x), ("r",)),
]


def _inputs(specs: tuple, seed: int) -> tuple[list, list]:
    import torch

    rng = np.random.default_rng(seed)
    ours, theirs = [], []
    for s in specs:
        if s == "p":
            v = rng.uniform(0.1, 1.0, (3, 4))
        elif s == "s":
            v = np.where(rng.random((3, 4)) < 0.5, -1.0, 1.0)
        else:
            v = rng.uniform(-2, 2, (3, 4))
        grad = s == "r"
        ours.append(gradviz.tensor(v, dtype=gradviz.float64, requires_grad=grad))
        theirs.append(torch.tensor(v, dtype=torch.float64, requires_grad=grad))
    return ours, theirs


@pytest.mark.parametrize(("name", "fn", "specs"), CASES, ids=[c[0] for c in CASES])
def test_values_gradients_and_nodes_match_torch(name: str, fn: Callable[..., Any],
                                                specs: tuple) -> None:
    import torch
    import torch.nn.functional as TF

    ours, theirs = _inputs(specs, len(name))
    gradviz.manual_seed(0)
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(gradviz, GF, *ours)
        ref = fn(torch, TF, *theirs)
    _same(out, ref)
    assert _chain(out) == _chain(ref)
    rng = np.random.default_rng(1)
    g = rng.standard_normal(tuple(ref.shape))
    out.backward(gradviz.tensor(g, dtype=gradviz.float64))
    ref.backward(torch.tensor(g, dtype=torch.float64))
    for a, b in zip(ours, theirs):
        assert (a.grad is None) == (b.grad is None)
        if b.grad is not None:
            _same(a.grad, b.grad)


def test_saved_values_match_torch() -> None:
    """What the nodes hold, not only their names and shapes."""
    import torch
    import torch.nn.functional as TF

    v = np.random.default_rng(3).uniform(-3, 3, (3, 4))
    x, tx = gradviz.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
    for fn in (lambda F, a: F.logsigmoid(a), lambda F, a: F.hardtanh(a * 1, inplace=True),
               lambda F, a: F.threshold(a * 1, 0.5, 2.0, inplace=True),
               lambda F, a: F.mish(a * 1, inplace=True)):
        node, ref = fn(GF, x).grad_fn, fn(TF, tx).grad_fn
        for name in (n for n in dir(ref) if n.startswith("_saved_")):
            theirs, ours = getattr(ref, name), getattr(node, name)
            if isinstance(theirs, torch.Tensor):
                _same(ours, theirs)
            else:
                assert ours == theirs, name


def _modules(L: Any) -> list:
    m = L.nn
    return [m.Hardtanh(), m.Hardtanh(-2, 3.0, True), m.ReLU6(), m.ReLU6(True), m.SELU(),
            m.SELU(True), m.CELU(), m.CELU(0.5, True), m.Mish(), m.Mish(True), m.PReLU(),
            m.PReLU(3, 0.1), m.GLU(), m.GLU(0), m.Hardswish(True), m.Hardsigmoid(),
            m.LogSigmoid(), m.Softsign(), m.Softshrink(), m.Softshrink(0.3), m.Hardshrink(2),
            m.Tanhshrink(), m.Threshold(0.1, 20), m.Threshold(0.1, 20.0, True), m.Softmin(),
            m.Softmin(1), m.SmoothL1Loss(beta=0.5), m.HuberLoss(delta=2.0),
            m.KLDivLoss(reduction="batchmean", log_target=True), m.CosineSimilarity(),
            m.MarginRankingLoss(0.5), m.SoftMarginLoss(), m.Unflatten(1, (2, 2)),
            m.Unflatten(-1, [3, -1]), m.ZeroPad2d(1), m.ZeroPad2d((1, 2, 3, 4)),
            m.PairwiseDistance(), m.HingeEmbeddingLoss(0.5), m.CosineEmbeddingLoss(0.1),
            m.PoissonNLLLoss(full=True), m.GaussianNLLLoss(full=True),
            m.ParameterList(), m.ParameterDict(),
            m.ParameterList([L.ones(2), m.Parameter(L.ones(2, 3, dtype=L.float64)), L.ones(0)]),
            m.ParameterDict({"b": L.ones(2), "a": L.ones(1, dtype=L.float64)}),
            m.ParameterDict([("z", L.ones(2)), ("y", L.ones(3))])]


def test_module_reprs_and_state_match_torch() -> None:
    import torch

    ours, theirs = _modules(gradviz), _modules(torch)
    assert [repr(m).replace("gradviz.", "torch.") for m in ours] == [repr(m) for m in theirs]
    for a, b in zip(ours, theirs):
        assert list(a.state_dict()) == list(b.state_dict())
        for k, val in b.state_dict().items():
            np.testing.assert_allclose(a.state_dict()[k].numpy(), val.numpy())


def _error(fn: Callable[[], Any]) -> tuple[str, str]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return type(e).__name__, str(e)
    return "no error", ""


ERRORS: list[tuple[str, Callable[..., Any]]] = [
    ("hardtanh min > max", lambda L, F: F.hardtanh(L.ones(2), 2.0, 1.0)),
    ("Hardtanh max <= min", lambda L, F: L.nn.Hardtanh(1, 1)),
    ("celu alpha 0", lambda L, F: F.celu(L.ones(2), 0.0)),
    ("glu odd", lambda L, F: F.glu(L.ones(3, 3))),
    ("glu scalar", lambda L, F: F.glu(L.tensor(1.0))),
    ("prelu channels", lambda L, F: F.prelu(L.ones(3, 4), L.ones(3))),
    ("prelu 2-d weight", lambda L, F: F.prelu(L.ones(3, 4), L.ones(2, 2))),
    ("mish int", lambda L, F: F.mish(L.tensor([1, 2]))),
    ("hardswish int", lambda L, F: F.hardswish(L.tensor([1, 2]))),
    ("hardsigmoid int", lambda L, F: F.hardsigmoid(L.tensor([1, 2]))),
    ("logsigmoid int", lambda L, F: F.logsigmoid(L.tensor([1, 2]))),
    ("selu int", lambda L, F: F.selu(L.tensor([1, 2]))),
    ("softshrink negative", lambda L, F: F.softshrink(L.ones(2), -1.0)),
    ("softshrink negative float64", lambda L, F: F.softshrink(L.ones(2, dtype=L.float64),
                                                              -0.5)),
    ("smooth_l1 negative beta", lambda L, F: F.smooth_l1_loss(L.ones(2), L.ones(2), beta=-1.0)),
    ("smooth_l1 bad reduction", lambda L, F: F.smooth_l1_loss(L.ones(2), L.ones(2),
                                                              reduction="bad")),
    ("huber delta 0", lambda L, F: F.huber_loss(L.ones(2), L.ones(2), delta=0.0)),
    ("huber weight size", lambda L, F: F.huber_loss(L.ones(2), L.ones(2), weight=L.ones(3))),
    ("huber weight reduction", lambda L, F: F.huber_loss(L.ones(2), L.ones(2), reduction="x",
                                                         weight=L.ones(2))),
    ("kl_div bad reduction", lambda L, F: F.kl_div(L.ones(2), L.ones(2), reduction="bad")),
    ("soft_margin target grad", lambda L, F: F.soft_margin_loss(
        L.ones(2), L.ones(2, requires_grad=True))),
    ("margin_ranking dims", lambda L, F: F.margin_ranking_loss(L.ones(4), L.ones(4),
                                                               L.ones(1, 4))),
    ("normalize int", lambda L, F: F.normalize(L.tensor([1, 2]), dim=0)),
    ("cosine_embedding 2-d target", lambda L, F: F.cosine_embedding_loss(
        L.ones(2, 3), L.ones(2, 3), L.ones(2, 1))),
    ("cosine_embedding 1-d inputs", lambda L, F: F.cosine_embedding_loss(
        L.ones(3), L.ones(3), L.ones(2))),
    ("cosine_embedding 2-d inputs 0-d target", lambda L, F: F.cosine_embedding_loss(
        L.ones(2, 3), L.ones(2, 3), L.tensor(1.0))),
    ("poisson_nll bad reduction", lambda L, F: F.poisson_nll_loss(L.ones(2), L.ones(2),
                                                                  reduction="x")),
    ("gaussian_nll var size", lambda L, F: F.gaussian_nll_loss(L.ones(2, 3), L.ones(2, 3),
                                                               L.ones(3, 2))),
    ("gaussian_nll negative var", lambda L, F: F.gaussian_nll_loss(L.ones(2), L.ones(2),
                                                                   -L.ones(2))),
    ("gaussian_nll bad reduction", lambda L, F: F.gaussian_nll_loss(
        L.ones(2), L.ones(2), L.ones(2), reduction="x")),
    ("Unflatten sizes", lambda L, F: L.nn.Unflatten(1, (3, 2))(L.ones(3, 4))),
    ("Unflatten int size", lambda L, F: L.nn.Unflatten(1, 2)),
    ("ParameterDict int key", lambda L, F: L.nn.ParameterDict().__setitem__(1, L.ones(1))),
    ("ParameterDict update int", lambda L, F: L.nn.ParameterDict().update(5)),
    ("ParameterDict update element", lambda L, F: L.nn.ParameterDict().update([1])),
    ("ParameterDict update pair", lambda L, F: L.nn.ParameterDict().update([(1, 2, 3)])),
    ("ParameterList index", lambda L, F: L.nn.ParameterList([L.ones(1)])[3]),
    ("ParameterList call", lambda L, F: L.nn.ParameterList()(1)),
    ("ParameterList extend tensor", lambda L, F: L.nn.ParameterList().extend(L.ones(2))),
    ("Unflatten float element", lambda L, F: L.nn.Unflatten(1, (2, 2.0))),
]


@pytest.mark.parametrize(("name", "fn"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name: str, fn: Callable[..., Any]) -> None:
    import torch
    import torch.nn.functional as TF

    kind, text = _error(lambda: fn(torch, TF))
    ours_kind, ours_text = _error(lambda: fn(gradviz, GF))
    assert kind != "no error"
    assert ours_kind == kind
    # gradviz may add what to do after PyTorch's text (its shapes, the op), never change it
    assert ours_text.replace("gradviz.", "torch.").startswith(text), (ours_text, text)


def test_warnings_match_torch() -> None:
    import torch
    import torch.nn.functional as TF

    def caught(L: Any, F: Any) -> list[str]:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            F.kl_div(L.zeros(2, 3), L.ones(2, 3) / 3)
            F.softmin(L.zeros(2, 3))
            F.smooth_l1_loss(L.zeros(2, 3), L.zeros(3))
        return [str(m.message).replace("gradviz.", "torch.") for m in w]

    assert caught(gradviz, GF) == caught(torch, TF)


def test_gaussian_nll_with_a_var_one_dimension_short_matches_torchs_values() -> None:
    """``var`` of shape (3,) for inputs (3, 4) is unsqueezed at -1. Values and gradients match
    torch; the nodes differ in one saved value only: torch's UnsqueezeBackward0 shows the dim
    unwrapped (-1 read as 18446744073709551615), gradviz's unsqueeze row saves it wrapped (1)
    -- the same for every ``x.unsqueeze(-1)``, a difference of the shared row, not of this loss.
    """
    import torch.nn.functional as TF

    ours, theirs = _inputs(("r", "r", "p"), 7)
    out = GF.gaussian_nll_loss(ours[0], ours[1], ours[2][:, 0] * 2, reduction="none")
    ref = TF.gaussian_nll_loss(theirs[0], theirs[1], theirs[2][:, 0] * 2, reduction="none")
    _same(out, ref)
    assert [name for _, name, _ in _chain(out)] == [name for _, name, _ in _chain(ref)]
    out.sum().backward()
    ref.sum().backward()
    for a, b in zip(ours, theirs):
        if b.grad is not None:
            _same(a.grad, b.grad)


def test_hard_coded_saved_lists_are_torchs() -> None:
    """tests/test_ops_forward.py's TORCH_SAVED entries for these nodes, read off torch."""
    import torch
    import torch.nn.functional as TF
    from _parity import sibling

    FWD = sibling("test_ops_forward")

    seen: dict[str, list[str]] = {}
    for name, fn, specs in CASES:
        _, theirs = _inputs(specs, len(name))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = fn(torch, TF, *theirs)
        for _, node, saved in _chain(ref):
            seen[node] = sorted(a[len("_saved_"):] for a in saved)
    ours = ["CeluBackward0", "CeluBackward1", "GluBackward0", "HardshrinkBackward0",
            "HardsigmoidBackward0", "HardswishBackward0", "HardtanhBackward0",
            "HuberLossBackward0", "LogSigmoidBackward0", "MishBackward0", "NormBackward1",
            "PreluKernelBackward0", "SmoothL1LossBackward0", "SoftMarginLossBackward0",
            "SoftshrinkBackward0", "SubBackward1", "ThresholdBackward0", "ThresholdBackward1"]
    assert {n: seen[n] for n in ours} == {n: FWD.TORCH_SAVED[n] for n in ours}
