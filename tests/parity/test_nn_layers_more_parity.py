"""The nn layers added by nnmore against torch 2.13: values, gradients (and second
derivatives), the nodes of the graph with their saved values, module reprs and parameters,
error texts, and the hard-coded expectations of tests/test_nn_layers_more.py, all derived again
from torch on random float64 inputs.

NOTE [saved dims]: torch shows a negative dim as its unsigned 64-bit reading; gradviz saves dims
wrapped to non-negative. The graphs are compared with torch's dims wrapped the same way.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from _parity import sibling

import gradviz
import gradviz.nn.functional as GF

HERE = sibling("test_nn_layers_more")
_DIM_NAMES = ("_saved_dim", "_saved_dims")


def _norm_saved(name: str, v: Any, node: Any) -> Any:
    if isinstance(v, (torch.Tensor, gradviz.Tensor)):
        return ("tensor", tuple(v.shape))
    if name in _DIM_NAMES:
        sizes = getattr(node, "_saved_self_sym_sizes", None)
        if sizes is None:  # the rank of a saved tensor of the same shape (softmax's result)
            sizes = next((tuple(getattr(node, a).shape) for a in ("_saved_self", "_saved_result")
                          if getattr(node, a, None) is not None), None)
        ndim = len(sizes) if sizes is not None else None

        def wrap(d: int) -> int:
            d = d - 2**64 if d >= 2**63 else d
            return d % ndim if d < 0 and ndim else d

        return tuple(wrap(d) for d in v) if isinstance(v, tuple) else wrap(v)
    return v


def _chain(out: Any) -> list[tuple]:
    """The graph from ``out.grad_fn``, depth first: (depth, name, saved name -> value, tensors
    as their shapes, dims wrapped). An UnsqueezeBackward0's dim is left out (its output's rank
    is not on the node): the SqueezeBackward1 that undoes it shows the same position."""
    rows, stack = [], [(out.grad_fn, 0)]
    while stack:
        node, depth = stack.pop()
        if node is None:
            continue
        name = node.name().replace("torch::autograd::", "")
        saved = {a: _norm_saved(a, getattr(node, a), node)
                 for a in sorted(a for a in dir(node) if a.startswith("_saved_"))
                 if not (name == "UnsqueezeBackward0" and a == "_saved_dim")}
        rows.append((depth, name, saved))
        stack.extend((n, depth + 1) for n, _ in reversed(node.next_functions))
    return rows


def _same(ours: Any, theirs: Any) -> None:
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-9,
                               atol=1e-11)


def _fixed(L: Any, m: Any) -> Any:
    """``m`` in float64 with the same parameter values in both libraries (their random
    initialisations differ)."""
    m = m.double()
    with L.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(L.tensor(np.random.default_rng(i).uniform(-1, 1, tuple(p.shape))))
    return m


# Each case: a name, fn(lib, F, *inputs) run with (gradviz, gradviz.nn.functional) and
# (torch, torch.nn.functional), then input specs (kind, shape): "r" uniform [-2, 2] requiring
# grad, "c" the same without grad, "p" uniform [0.5, 2] requiring grad.
CASES: list[tuple[str, Callable[..., Any], tuple]] = [
    ("group_norm affine", lambda L, F, x, w, b: F.group_norm(x, 2, w, b),
     (("r", (2, 4, 3, 2)), ("r", (4,)), ("r", (4,)))),
    ("group_norm plain eps", lambda L, F, x: F.group_norm(x, 3, eps=1e-3), (("r", (3, 6, 5)),)),
    ("group_norm weight only", lambda L, F, x, w: F.group_norm(x, 1, w),
     (("r", (2, 3)), ("r", (3,)))),
    ("GroupNorm module", lambda L, F, x: L.nn.GroupNorm(2, 4).double()(x),
     (("r", (2, 4, 5)),)),
    ("instance_norm", lambda L, F, x: F.instance_norm(x), (("r", (2, 3, 5)),)),
    ("instance_norm affine 2d", lambda L, F, x, w, b: F.instance_norm(x, weight=w, bias=b),
     (("r", (2, 3, 4, 2)), ("r", (3,)), ("r", (3,)))),
    ("instance_norm running eval", lambda L, F, x, m, v: F.instance_norm(
        x, m, v * v + 0.5, use_input_stats=False), (("r", (2, 3, 4)), ("c", (3,)), ("c", (3,)))),
    ("InstanceNorm1d tracked", lambda L, F, x: L.nn.InstanceNorm1d(
        3, affine=True, track_running_stats=True).double()(x), (("r", (2, 3, 5)),)),
    ("InstanceNorm2d unbatched", lambda L, F, x: L.nn.InstanceNorm2d(3).double()(x),
     (("r", (3, 4, 2)),)),
    ("rms_norm", lambda L, F, x, w: F.rms_norm(x, (5,), w), (("r", (2, 4, 5)), ("r", (5,)))),
    ("rms_norm two dims eps", lambda L, F, x: F.rms_norm(x, (4, 5), eps=1e-3),
     (("r", (2, 4, 5)),)),
    ("RMSNorm module", lambda L, F, x: L.nn.RMSNorm(5).double()(x), (("r", (3, 5)),)),
    ("max_pool1d module", lambda L, F, x: L.nn.MaxPool1d(3, 2, 1)(x), (("r", (2, 3, 8)),)),
    ("avg_pool1d", lambda L, F, x: F.avg_pool1d(x, 2), (("r", (2, 3, 7)),)),
    ("avg_pool1d padded", lambda L, F, x: F.avg_pool1d(x, 3, 2, 1, ceil_mode=True,
                                                       count_include_pad=False),
     (("r", (3, 8)),)),
    ("AvgPool1d module", lambda L, F, x: L.nn.AvgPool1d(2, 1)(x), (("r", (2, 3, 5)),)),
    ("adaptive_avg_pool1d", lambda L, F, x: F.adaptive_avg_pool1d(x, 3), (("r", (2, 3, 7)),)),
    ("adaptive_avg_pool1d to 1", lambda L, F, x: F.adaptive_avg_pool1d(x, 1),
     (("r", (2, 3, 7)),)),
    ("AdaptiveAvgPool1d module", lambda L, F, x: L.nn.AdaptiveAvgPool1d(4)(x),
     (("r", (3, 9)),)),
    ("adaptive_max_pool1d", lambda L, F, x: F.adaptive_max_pool1d(x, 3), (("r", (2, 3, 7)),)),
    ("adaptive_max_pool2d", lambda L, F, x: F.adaptive_max_pool2d(x, (2, 3)),
     (("r", (2, 3, 5, 7)),)),
    ("adaptive_max_pool2d None", lambda L, F, x: F.adaptive_max_pool2d(x, (None, 2)),
     (("r", (3, 4, 5)),)),
    ("AdaptiveMaxPool2d module", lambda L, F, x: L.nn.AdaptiveMaxPool2d(3)(x),
     (("r", (1, 2, 7, 6)),)),
    ("lp_pool1d", lambda L, F, x: F.lp_pool1d(x, 2, 2), (("p", (2, 3, 6)),)),
    ("lp_pool2d", lambda L, F, x: F.lp_pool2d(x, 3, (2, 1), stride=1), (("p", (1, 2, 4, 3)),)),
    ("LPPool1d module", lambda L, F, x: L.nn.LPPool1d(1.5, 3, 2)(x), (("p", (2, 7)),)),
    ("conv_transpose1d", lambda L, F, x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1,
                                                                  output_padding=1),
     (("r", (2, 4, 5)), ("r", (4, 3, 3)), ("r", (3,)))),
    ("conv_transpose1d groups unbatched", lambda L, F, x, w: F.conv_transpose1d(
        x, w, groups=2, dilation=2), (("r", (4, 5)), ("r", (4, 1, 2)))),
    ("ConvTranspose1d module", lambda L, F, x: _fixed(L, L.nn.ConvTranspose1d(3, 2, 3))(x),
     (("c", (2, 3, 4)),)),
    ("Conv2d reflect", lambda L, F, x: _fixed(L, L.nn.Conv2d(2, 3, 3, padding=1,
                                                           padding_mode="reflect"))(x),
     (("r", (1, 2, 4, 5)),)),
    ("Conv1d circular same", lambda L, F, x: _fixed(L, L.nn.Conv1d(
        2, 2, 4, padding="same", padding_mode="circular"))(x), (("r", (2, 2, 6)),)),
    ("Conv2d replicate", lambda L, F, x: _fixed(L, L.nn.Conv2d(
        2, 1, (2, 3), stride=2, padding=(1, 2), padding_mode="replicate"))(x),
     (("r", (1, 2, 5, 5)),)),
    ("conv3d", lambda L, F, x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=(1, 0, 1),
                                              dilation=(1, 1, 2)),
     (("r", (2, 3, 4, 4, 5)), ("r", (2, 3, 2, 3, 2)), ("r", (2,)))),
    ("conv3d same groups unbatched", lambda L, F, x, w: F.conv3d(x, w, padding="same",
                                                                 groups=2),
     (("r", (4, 3, 3, 4)), ("r", (2, 2, 2, 3, 1)))),
    ("Conv3d circular", lambda L, F, x: _fixed(L, L.nn.Conv3d(
        2, 1, 3, padding=1, padding_mode="circular"))(x), (("r", (1, 2, 3, 3, 4)),)),
    ("pad circular 3d", lambda L, F, x: F.pad(x, (1, 0, 0, 2, 1, 1), mode="circular"),
     (("r", (1, 2, 3, 3, 4)),)),
    ("avg_pool3d", lambda L, F, x: F.avg_pool3d(x, 2), (("r", (2, 2, 4, 4, 5)),)),
    ("avg_pool3d options", lambda L, F, x: F.avg_pool3d(x, (3, 2, 2), (2, 1, 2), (1, 0, 1),
                                                        ceil_mode=True,
                                                        count_include_pad=False),
     (("r", (2, 4, 5, 5)),)),
    ("avg_pool3d divisor", lambda L, F, x: F.avg_pool3d(x, 2, 1, divisor_override=3),
     (("r", (1, 1, 3, 3, 3)),)),
    ("AvgPool3d module", lambda L, F, x: L.nn.AvgPool3d((1, 2, 2), padding=(0, 1, 0))(x),
     (("r", (1, 2, 3, 4, 4)),)),
    ("local_response_norm 3-d", lambda L, F, x: F.local_response_norm(x, 3), (("r", (2, 5, 4)),)),
    ("local_response_norm 4-d", lambda L, F, x: F.local_response_norm(x, 2, 0.1, 0.5, 2.0),
     (("r", (2, 4, 3, 3)),)),
    ("LocalResponseNorm 5-d", lambda L, F, x: L.nn.LocalResponseNorm(4)(x),
     (("r", (1, 5, 2, 2, 3)),)),
    ("pad reflect 1d", lambda L, F, x: F.pad(x, (2, 3), mode="reflect"), (("r", (2, 3, 5)),)),
    ("pad reflect 2d", lambda L, F, x: F.pad(x, (1, 2, 3, 0), mode="reflect"),
     (("r", (2, 2, 4, 5)),)),
    ("pad reflect 2d unbatched", lambda L, F, x: F.pad(x, (1, 1, 1, 1), mode="reflect"),
     (("r", (2, 3, 3)),)),
    ("pad replicate 1d", lambda L, F, x: F.pad(x, (3, 1), mode="replicate"), (("r", (3, 4)),)),
    ("pad replicate 2d", lambda L, F, x: F.pad(x, (2, 1, 0, 3), mode="replicate"),
     (("r", (2, 2, 3, 4)),)),
    ("pad circular 1d", lambda L, F, x: F.pad(x, (2, 1), mode="circular"), (("r", (2, 3, 4)),)),
    ("pad circular 2d", lambda L, F, x: F.pad(x, (1, 1, 2, 0), mode="circular"),
     (("r", (2, 2, 4, 5)),)),
    ("pad circular crop", lambda L, F, x: F.pad(x, (-1, 2), mode="circular"),
     (("r", (2, 3, 4)),)),
    ("ReflectionPad2d module", lambda L, F, x: L.nn.ReflectionPad2d(1)(x), (("r", (1, 2, 3, 3)),)),
    ("ReplicationPad1d module", lambda L, F, x: L.nn.ReplicationPad1d((0, 2))(x),
     (("r", (2, 3)),)),
    ("CircularPad2d module", lambda L, F, x: L.nn.CircularPad2d((1, 0, 0, 1))(x),
     (("r", (1, 2, 3)),)),
    ("ConstantPad1d module", lambda L, F, x: L.nn.ConstantPad1d((1, 2), 0.5)(x),
     (("r", (2, 3)),)),
    ("ZeroPad1d module", lambda L, F, x: L.nn.ZeroPad1d(1)(x), (("r", (2, 3)),)),
    ("nearest scale 2d", lambda L, F, x: F.interpolate(x, scale_factor=2),
     (("r", (2, 2, 3, 4)),)),
    ("nearest size 2d", lambda L, F, x: F.interpolate(x, size=(5, 7)), (("r", (2, 2, 3, 4)),)),
    ("nearest down 2d", lambda L, F, x: F.interpolate(x, size=(2, 3)), (("r", (1, 2, 5, 7)),)),
    ("nearest scale 1.5", lambda L, F, x: F.interpolate(x, scale_factor=1.5),
     (("r", (1, 2, 5, 7)),)),
    ("nearest 1d", lambda L, F, x: F.interpolate(x, scale_factor=3), (("r", (2, 3, 4)),)),
    ("nearest 1d size", lambda L, F, x: F.interpolate(x, size=7), (("r", (2, 3, 4)),)),
    ("linear 1d", lambda L, F, x: F.interpolate(x, size=7, mode="linear"), (("r", (2, 3, 4)),)),
    ("linear 1d align", lambda L, F, x: F.interpolate(x, scale_factor=2.5, mode="linear",
                                                      align_corners=True), (("r", (2, 3, 4)),)),
    ("bilinear scale", lambda L, F, x: F.interpolate(x, scale_factor=2, mode="bilinear"),
     (("r", (2, 2, 3, 4)),)),
    ("bilinear size align", lambda L, F, x: F.interpolate(x, size=(5, 2), mode="bilinear",
                                                          align_corners=True),
     (("r", (2, 2, 3, 4)),)),
    ("bilinear down", lambda L, F, x: F.interpolate(x, size=(2, 3), mode="bilinear"),
     (("r", (1, 1, 5, 7)),)),
    ("bilinear recompute", lambda L, F, x: F.interpolate(
        x, scale_factor=1.7, mode="bilinear", recompute_scale_factor=True),
     (("r", (1, 2, 3, 4)),)),
    ("area", lambda L, F, x: F.interpolate(x, size=(2, 3), mode="area"),
     (("r", (1, 2, 5, 7)),)),
    ("Upsample module", lambda L, F, x: L.nn.Upsample(scale_factor=(2, 3), mode="bilinear")(x),
     (("r", (1, 2, 3, 2)),)),
    ("UpsamplingBilinear2d module", lambda L, F, x: L.nn.UpsamplingBilinear2d(size=(4, 5))(x),
     (("r", (1, 2, 3, 2)),)),
    ("UpsamplingNearest2d module", lambda L, F, x: L.nn.UpsamplingNearest2d(scale_factor=2)(x),
     (("r", (1, 2, 3, 2)),)),
    ("pixel_shuffle", lambda L, F, x: F.pixel_shuffle(x, 2), (("r", (2, 8, 2, 3)),)),
    ("pixel_shuffle 5-d", lambda L, F, x: F.pixel_shuffle(x, 3), (("r", (2, 1, 9, 1, 2)),)),
    ("pixel_unshuffle", lambda L, F, x: F.pixel_unshuffle(x, 2), (("r", (2, 2, 4, 6)),)),
    ("PixelShuffle module", lambda L, F, x: L.nn.PixelShuffle(2)(x), (("r", (4, 1, 3)),)),
    ("unfold", lambda L, F, x: F.unfold(x, (2, 3), padding=1, stride=(1, 2)),
     (("r", (2, 2, 4, 5)),)),
    ("unfold unbatched dilated", lambda L, F, x: F.unfold(x, 2, dilation=2),
     (("r", (2, 5, 5)),)),
    ("fold", lambda L, F, x: F.fold(x, (3, 4), 2), (("r", (2, 12, 6)),)),
    ("fold padded strided", lambda L, F, x: F.fold(x, (4, 5), (2, 3), padding=(1, 0),
                                                   stride=2), (("r", (6, 6)),)),
    ("Unfold Fold modules", lambda L, F, x: L.nn.Fold((4, 4), 2)(L.nn.Unfold(2)(x)),
     (("r", (1, 2, 4, 4)),)),
    ("bilinear", lambda L, F, a, b, w, c: F.bilinear(a, b, w, c),
     (("r", (3, 4)), ("r", (3, 5)), ("r", (6, 4, 5)), ("r", (6,)))),
    ("bilinear batched no bias", lambda L, F, a, b, w: F.bilinear(a, b, w),
     (("r", (2, 3, 4)), ("r", (2, 3, 2)), ("r", (5, 4, 2)))),
    ("Bilinear module", lambda L, F, a, b: _fixed(L, L.nn.Bilinear(4, 2, 3))(a, b),
     (("r", (5, 4)), ("r", (5, 2)))),
    ("Softmax2d", lambda L, F, x: L.nn.Softmax2d()(x), (("r", (2, 3, 4, 2)),)),
    ("Softmax2d unbatched", lambda L, F, x: L.nn.Softmax2d()(x), (("r", (3, 4, 2)),)),
    ("dropout1d eval", lambda L, F, x: F.dropout1d(x, training=False), (("r", (2, 3, 4)),)),
    ("dropout1d unbatched eval", lambda L, F, x: F.dropout1d(x, training=False),
     (("r", (3, 4)),)),
    ("alpha_dropout eval", lambda L, F, x: F.alpha_dropout(x * 1, 0.3), (("r", (2, 3)),)),
    ("AlphaDropout eval", lambda L, F, x: L.nn.AlphaDropout(0.3).eval()(x * 1),
     (("r", (2, 3)),)),
    ("FeatureAlphaDropout p 0", lambda L, F, x: L.nn.FeatureAlphaDropout(0.0)(x * 1),
     (("r", (2, 3, 2)),)),
]


def _inputs(specs: tuple, seed: int) -> tuple[list, list]:
    rng = np.random.default_rng(seed)
    ours, theirs = [], []
    for kind, shape in specs:
        v = rng.uniform(0.5, 2, shape) if kind == "p" else rng.uniform(-2, 2, shape)
        grad = kind in ("r", "p")
        ours.append(gradviz.tensor(v, dtype=gradviz.float64, requires_grad=grad))
        theirs.append(torch.tensor(v, dtype=torch.float64, requires_grad=grad))
    return ours, theirs


def _run(fn: Callable[..., Any], ours: list, theirs: list) -> tuple[Any, Any]:
    import torch.nn.functional as TF

    gradviz.manual_seed(0)
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(gradviz, GF, *ours), fn(torch, TF, *theirs)


@pytest.mark.parametrize(("name", "fn", "specs"), CASES, ids=[c[0] for c in CASES])
def test_values_gradients_and_nodes_match_torch(name: str, fn: Callable[..., Any],
                                                specs: tuple) -> None:
    ours, theirs = _inputs(specs, len(name))
    out, ref = _run(fn, ours, theirs)
    _same(out, ref)
    assert _chain(out) == _chain(ref)
    g = np.random.default_rng(1).standard_normal(tuple(ref.shape))
    diff = [(a, b) for a, b in zip(ours, theirs) if b.requires_grad]
    if not diff or ref.grad_fn is None:
        return
    gs = gradviz.autograd.grad(out, [a for a, _ in diff], gradviz.tensor(g), create_graph=True)
    ts = torch.autograd.grad(ref, [b for _, b in diff], torch.tensor(g), create_graph=True)
    for a, b in zip(gs, ts):
        _same(a, b)
    # second derivatives: the gradient of <first gradients, h> for a fixed random h
    h = [np.random.default_rng(2).standard_normal(tuple(b.shape)) for b in ts]
    s_ours = sum((a * gradviz.tensor(v)).sum() for a, v in zip(gs, h))
    s_ref = sum((b * torch.tensor(v)).sum() for b, v in zip(ts, h))
    if s_ref.grad_fn is None:
        return
    t2 = torch.autograd.grad(s_ref, [b for _, b in diff], allow_unused=True)
    if not s_ours.requires_grad:  # the first gradients do not depend on the inputs
        assert all(b is None or not b.detach().numpy().any() for b in t2), name
        return
    g2 = gradviz.autograd.grad(s_ours, [a for a, _ in diff], allow_unused=True)
    for a, b in zip(g2, t2):
        assert (a is None) == (b is None) or (b is None and not a.detach().numpy().any()), name
        if a is not None and b is not None:
            _same(a, b)


BACKWARD_NODES = [
    ("reflect 2d", lambda F, x: F.pad(x, (1, 2, 2, 0), mode="reflect"), (2, 2, 4, 5)),
    ("reflect 1d", lambda F, x: F.pad(x, (1, 2), mode="reflect"), (2, 3, 5)),
    ("replicate 2d", lambda F, x: F.pad(x, (1, 2, 2, 0), mode="replicate"), (2, 2, 4, 5)),
    ("replicate 1d", lambda F, x: F.pad(x, (1, 2), mode="replicate"), (2, 3, 5)),
    ("nearest 2d", lambda F, x: F.interpolate(x, scale_factor=2), (2, 2, 3, 4)),
    ("nearest 1d", lambda F, x: F.interpolate(x, size=7), (2, 3, 4)),
    ("bilinear", lambda F, x: F.interpolate(x, size=(3, 7), mode="bilinear"), (2, 2, 3, 4)),
    ("linear", lambda F, x: F.interpolate(x, size=7, mode="linear", align_corners=True),
     (2, 3, 4)),
    ("pixel_shuffle", lambda F, x: F.pixel_shuffle(x, 2), (1, 4, 2, 3)),
    ("pixel_unshuffle", lambda F, x: F.pixel_unshuffle(x, 2), (1, 1, 4, 6)),
    ("unfold", lambda F, x: F.unfold(x, (2, 3), padding=1, stride=(1, 2)), (2, 2, 4, 5)),
    ("fold", lambda F, x: F.fold(x, (3, 4), 2), (2, 8, 6)),
    ("adaptive_max_pool2d", lambda F, x: F.adaptive_max_pool2d(x, (2, 3)), (2, 2, 5, 6)),
]


@pytest.mark.parametrize(("name", "fn", "shape"), BACKWARD_NODES,
                         ids=[c[0] for c in BACKWARD_NODES])
def test_backward_under_create_graph_records_torchs_node(name: str, fn: Callable[..., Any],
                                                         shape: tuple) -> None:
    import torch.nn.functional as TF

    v = np.random.default_rng(4).uniform(-2, 2, shape)
    x, tx = gradviz.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
    out, ref = fn(GF, x), fn(TF, tx)
    g = np.random.default_rng(5).standard_normal(tuple(ref.shape))
    gx = gradviz.autograd.grad(out, x, gradviz.tensor(g, requires_grad=True),
                               create_graph=True)[0]
    tgx = torch.autograd.grad(ref, tx, torch.tensor(g, requires_grad=True),
                              create_graph=True)[0]
    _same(gx, tgx)
    assert _chain(gx)[:1] == _chain(tgx)[:1]
    assert len(gx.grad_fn.next_functions) == len(tgx.grad_fn.next_functions)


def test_saved_values_match_torch() -> None:
    """What the new nodes hold, not only their names and shapes."""
    import torch.nn.functional as TF

    v = np.random.default_rng(3).uniform(-3, 3, (2, 4, 3, 5))
    x, tx = gradviz.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
    w = np.random.default_rng(6).uniform(-1, 1, 4)
    cases = [
        (lambda F, a, wt: F.group_norm(a, 2, wt), True),
        (lambda F, a, wt: F.adaptive_max_pool2d(a, (2, 3)), False),
        (lambda F, a, wt: F.pad(a, (1, 2, 0, 1), mode="reflect"), False),
        (lambda F, a, wt: F.interpolate(a, scale_factor=1.5, mode="bilinear"), False),
    ]
    for fn, uses_w in cases:
        ours = fn(GF, x, gradviz.tensor(w, requires_grad=True) if uses_w else None)
        ref = fn(TF, tx, torch.tensor(w, requires_grad=True) if uses_w else None)
        node, tnode = ours.grad_fn, ref.grad_fn
        for name in (n for n in dir(tnode) if n.startswith("_saved_")):
            theirs, mine = getattr(tnode, name), getattr(node, name)
            if isinstance(theirs, torch.Tensor):
                if theirs.dtype == torch.int64:
                    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
                else:
                    _same(mine, theirs)
            else:
                assert mine == theirs, name


def test_instance_norm_updates_running_stats_like_torch() -> None:
    import torch.nn.functional as TF

    v = np.random.default_rng(7).uniform(-2, 2, (3, 2, 5))
    rm, rv = np.array([0.1, -0.2]), np.array([1.5, 0.7])
    ours = [gradviz.tensor(a) for a in (rm, rv)]
    theirs = [torch.tensor(a) for a in (rm, rv)]
    GF.instance_norm(gradviz.tensor(v), *ours, momentum=0.3)
    TF.instance_norm(torch.tensor(v), *theirs, momentum=0.3)
    for a, b in zip(ours, theirs):
        _same(a, b)


def test_dropout_graphs_in_training_match_torch() -> None:
    """Random masks differ between the libraries; the graph, the mask's shape and the values
    it allows are compared."""
    import torch.nn.functional as TF

    for fn, shape in ((lambda F, a: F.dropout1d(a, 0.5), (2, 4, 5)),
                      (lambda F, a: F.dropout1d(a, 0.5), (4, 5)),
                      (lambda F, a: F.dropout3d(a, 0.5), (2, 3, 2, 2, 2)),
                      (lambda F, a: F.alpha_dropout(a, 0.5, True), (2, 4, 5)),
                      (lambda F, a: F.feature_alpha_dropout(a, 0.5, True), (2, 4, 5, 6))):
        v = np.ones(shape)
        out = fn(GF, gradviz.tensor(v, requires_grad=True))
        ref = fn(TF, torch.tensor(v, requires_grad=True))
        assert _chain(out) == _chain(ref)
        assert set(np.unique(np.round(out.detach().numpy(), 12))) <= set(
            np.round([0.0, 2.0, *np.unique(ref.detach().numpy())], 12)) | {0.0, 2.0}


def _modules(L: Any) -> list:
    m = L.nn
    return [m.GroupNorm(2, 4), m.GroupNorm(1, 3, eps=1e-3, affine=False), m.InstanceNorm1d(4),
            m.InstanceNorm2d(3, affine=True, track_running_stats=True), m.RMSNorm(5),
            m.RMSNorm([2, 3], eps=1e-4, elementwise_affine=False), m.MaxPool1d(2),
            m.MaxPool1d(3, 2, 1, return_indices=True), m.AvgPool1d(2),
            m.AvgPool1d(3, 2, 1, ceil_mode=True), m.AdaptiveAvgPool1d(3),
            m.AdaptiveMaxPool1d(2), m.AdaptiveMaxPool2d((2, None)), m.LPPool1d(2, 3),
            m.LPPool2d(1.5, 2, stride=1), m.ConvTranspose1d(4, 3, 2),
            m.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2,
                              bias=False, dilation=2),
            m.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"), m.Conv3d(2, 4, (1, 2, 3)),
            m.Conv3d(2, 4, 3, stride=2, padding=1, groups=2, bias=False),
            m.Conv1d(2, 3, 4, padding="same", padding_mode="circular"),
            m.ConstantPad1d(2, 3.5), m.ConstantPad2d((1, 2, 3, 4), 0.0), m.ZeroPad1d((1, 2)),
            m.ReflectionPad1d(2), m.ReflectionPad2d((1, 2, 3, 4)), m.ReplicationPad1d((1, 2)),
            m.ReplicationPad2d(1), m.CircularPad1d(1), m.CircularPad2d((1, 2, 0, 1)),
            m.Upsample(scale_factor=2), m.Upsample(size=3, mode="bilinear"),
            m.Upsample(scale_factor=(2, 3)), m.UpsamplingNearest2d(scale_factor=2),
            m.UpsamplingBilinear2d(size=(3, 4)), m.PixelShuffle(2), m.PixelUnshuffle(3),
            m.Unfold(2), m.Unfold((2, 3), dilation=2, padding=1, stride=(1, 2)),
            m.Fold((4, 5), 2), m.Bilinear(4, 5, 6), m.Bilinear(2, 3, 1, bias=False),
            m.AvgPool3d(2), m.AvgPool3d((1, 2, 3), stride=1, padding=(0, 1, 1)),
            m.LocalResponseNorm(3, alpha=1e-3), m.Softmax2d(), m.Dropout1d(), m.Dropout3d(0.2),
            m.AlphaDropout(0.3), m.FeatureAlphaDropout()]


def test_module_reprs_and_state_match_torch() -> None:
    ours, theirs = _modules(gradviz), _modules(torch)
    assert [repr(m) for m in ours] == [repr(m) for m in theirs]
    for a, b in zip(ours, theirs):
        assert list(a.state_dict()) == list(b.state_dict())
        for k, val in b.state_dict().items():
            assert tuple(a.state_dict()[k].shape) == tuple(val.shape), k
            if k not in ("weight", "bias") or "Conv" in type(b).__name__ or "Bilinear" in \
                    type(b).__name__:
                continue
            np.testing.assert_allclose(a.state_dict()[k].numpy(), val.numpy())


def test_module_initial_ranges_match_torch() -> None:
    """Bilinear draws weight and bias from U(-1/sqrt(in1), 1/sqrt(in1)), as torch does."""
    m = gradviz.nn.Bilinear(4, 5, 200)
    bound = 1 / np.sqrt(4)
    for p in (m.weight, m.bias):
        assert np.abs(p.detach().numpy()).max() <= bound
        assert np.abs(p.detach().numpy()).max() > 0.9 * bound


def _error(fn: Callable[[], Any]) -> tuple[str, str]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return type(e).__name__, str(e)
    return "no error", ""


@pytest.mark.parametrize(("name", "fn"), HERE.ERRORS, ids=[e[0] for e in HERE.ERRORS])
def test_errors_match_torch(name: str, fn: Callable[..., Any]) -> None:
    import torch.nn.functional as TF

    kind, text = _error(lambda: fn(torch, TF))
    assert kind != "no error"
    assert (kind, text) == HERE.ERROR_TEXTS[name]


def test_hard_coded_expectations_are_torchs() -> None:
    """tests/test_nn_layers_more.py's chains, saved lists and values, read off torch."""
    import torch.nn.functional as TF

    for name, (fn, shape) in HERE.CHAINS.items():
        v = np.random.default_rng(0).uniform(-2, 2, shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = fn(torch, TF, torch.tensor(v, requires_grad=True))
        assert [(d, n) for d, n, _ in _chain(ref)] == HERE.TORCH_CHAINS[name], name
    for name, (fn, x) in HERE.VALUES.items():
        ref = fn(torch, TF, torch.tensor(x, dtype=torch.float64))
        np.testing.assert_allclose(ref.numpy(), np.array(HERE.TORCH_VALUES[name]), rtol=1e-4,
                                   atol=5e-5, err_msg=name)
    assert [repr(ctor(torch)) for ctor in HERE.REPRS] == HERE.TORCH_REPRS


def _saved_names(node: Any) -> list[str]:
    return sorted(a[len("_saved_"):] for a in dir(node) if a.startswith("_saved_"))


def test_hard_coded_saved_lists_are_torchs() -> None:
    """tests/test_ops_forward.py's TORCH_SAVED entries for the new nodes (and the nodes their
    backwards record under create_graph), read off torch."""
    import torch.nn.functional as TF

    saved = sibling("test_ops_forward").TORCH_SAVED
    seen: dict[str, list[str]] = {}
    x4 = torch.randn(2, 4, 6, 6, dtype=torch.float64, requires_grad=True)
    x3 = torch.randn(2, 4, 6, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, dtype=torch.float64, requires_grad=True)
    for out, inp in (
            (TF.group_norm(x4, 2, w, w), x4), (TF.pad(x3, (1, 2), mode="reflect"), x3),
            (TF.pad(x4, (1, 2, 0, 1), mode="reflect"), x4),
            (TF.pad(x3, (1, 2), mode="replicate"), x3),
            (TF.pad(x4, (1, 2, 0, 1), mode="replicate"), x4),
            (TF.interpolate(x3, scale_factor=2), x3), (TF.interpolate(x4, scale_factor=2), x4),
            (TF.interpolate(x3, size=5, mode="linear"), x3),
            (TF.interpolate(x4, size=(3, 5), mode="bilinear"), x4),
            (TF.pixel_shuffle(x4, 2), x4), (TF.pixel_unshuffle(x4, 2), x4),
            (TF.unfold(x4, 2), x4), (TF.fold(x3, (3, 3), (2, 1)), x3),
            (TF.adaptive_max_pool2d(x4, 3), x4),
            (TF.bilinear(x4[0, 0, :, :4], x4[0, 1], x4[:, :, 0]), x4),
            (TF.avg_pool3d(x4, 2), x4)):
        node = out.grad_fn
        while node.name() in ("ViewBackward0", "AddBackward0"):
            node = node.next_functions[0][0]
        seen[node.name()] = _saved_names(node)
        g = torch.ones_like(out, requires_grad=True)
        back = torch.autograd.grad(out, inp, g, create_graph=True)[0].grad_fn
        if back.name().endswith("BackwardBackward0") or back.name() in ("Col2ImBackward0",
                                                                         "Im2ColBackward0"):
            seen[back.name()] = _saved_names(back)
    mine = sibling("test_nn_layers_more").NODES
    assert sorted(seen) == sorted(mine)
    for name in mine:
        assert saved[name] == seen[name], name


def test_cosine_similarity_saves_dims_exactly_as_torch() -> None:
    """Not wrapped: torch's unsigned reading of a negative dim is what gradviz's nodes show
    (NOTE [saved as given])."""
    rng = np.random.default_rng(8)
    for shape, dim in (((3, 5), -1), ((2, 3, 4), -2), ((2, 3, 4), 1), ((4,), 0)):
        a, b = rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape)
        out = gradviz.nn.CosineSimilarity(dim)(gradviz.tensor(a, requires_grad=True),
                                               gradviz.tensor(b))
        ref = torch.nn.CosineSimilarity(dim)(torch.tensor(a, requires_grad=True),
                                             torch.tensor(b))
        _same(out, ref)
        pairs, stack = [], [(out.grad_fn, ref.grad_fn)]
        while stack:
            g, t = stack.pop()
            if t is None:
                continue
            assert g.name() == t.name()
            if hasattr(t, "_saved_dim"):
                pairs.append((g._saved_dim, t._saved_dim))
            stack.extend((gn, tn) for (gn, _), (tn, _) in zip(g.next_functions,
                                                                t.next_functions))
        assert len(pairs) == 2 and all(ours == theirs for ours, theirs in pairs), pairs
    with pytest.raises(IndexError) as info:
        torch.nn.functional.cosine_similarity(torch.ones(3, 5), torch.ones(3, 5), dim=2)
    with pytest.raises(IndexError) as ours:
        GF.cosine_similarity(gradviz.ones(3, 5), gradviz.ones(3, 5), dim=2)
    assert str(ours.value) == str(info.value)


@pytest.mark.parametrize("case", range(len(HERE.DTYPE_ERRORS)))
def test_dtype_errors_are_torchs(case: int) -> None:
    import torch.nn.functional as TF

    fn, dtype, kind, text = HERE.DTYPE_ERRORS[case]
    x = torch.tensor(np.arange(40).reshape(2, 4, 5) % 3).to(getattr(torch, dtype))
    assert _error(lambda: fn(torch, TF, x)) == (kind, text)
    assert fn(torch, TF, x.float()).dtype == torch.float32
