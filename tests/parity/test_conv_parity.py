"""Convolution, pooling, batch_norm, dropout2d and pad against torch: values, gradients, the
graph's node names and the root node's ``_saved_*`` names and values, on random shapes and
options; the modules' initialisation, state_dict, repr and BatchNorm's train/eval behaviour."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from _graphs import graph_nodes

import gradviz
from gradviz import nn

TF = torch.nn.functional
GF = gradviz.nn.functional


def _names(out: Any) -> list[str]:
    """Every node's name in the graph behind ``out`` (sorted: a multiset of names)."""
    return sorted(node.name() for node in graph_nodes(out))


def _saved(node: Any) -> dict[str, Any]:
    """``_saved_*`` name -> value: tensors as arrays, torch's unsigned 64-bit view of a
    negative int (a dim, a crop) back as the negative int."""
    out: dict[str, Any] = {}
    for a in dir(node):
        if a.startswith("_saved_"):
            v = getattr(node, a)
            if isinstance(v, (torch.Tensor, gradviz.Tensor)):
                v = v.detach().numpy()
            elif isinstance(v, tuple):
                v = tuple(x - 2**64 if isinstance(x, int) and x >= 2**63 else x for x in v)
            elif isinstance(v, int) and v >= 2**63:
                v = v - 2**64
            out[a] = v
    return out


def _same_saved(g: Any, t: Any) -> None:
    gs, ts = _saved(g), _saved(t)
    assert gs.keys() == ts.keys()
    for k, gv in gs.items():
        tv = ts[k]
        if isinstance(gv, np.ndarray):
            assert gv.shape == tv.shape, k
            np.testing.assert_allclose(gv, tv, rtol=1e-10, atol=1e-12, err_msg=k)
        else:  # dims as written, negative ones as uint64, in both (NOTE [saved as given])
            assert gv == tv, (k, gv, tv)


def _compare(gv_fn: Callable, t_fn: Callable, shapes: list[tuple], seed: int,
             positive: tuple[int, ...] = ()) -> None:
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(0.5, 2, s) if i in positive else rng.standard_normal(s)
              for i, s in enumerate(shapes)]
    gx = [gradviz.tensor(a, requires_grad=True) for a in arrays]
    tx = [torch.tensor(a, requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        gy, ty = gv_fn(*gx), t_fn(*tx)
    np.testing.assert_allclose(gy.detach().numpy(), ty.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    assert _names(gy) == [n for n in _names(ty)], (_names(gy), _names(ty))
    _same_saved(gy.grad_fn, ty.grad_fn)
    up = rng.standard_normal(ty.shape)
    gy.backward(gradviz.tensor(up))
    ty.backward(torch.tensor(up))
    for g, t in zip(gx, tx):
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def _conv2d_cases() -> list:
    rng = np.random.default_rng(15)
    cases = []
    for i in range(8):
        groups = int(rng.choice([1, 2]))
        n, cin, cout = int(rng.integers(1, 3)), groups * int(rng.integers(1, 3)), groups * 2
        k = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        stride = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        dilation = (int(rng.integers(1, 3)), 1)
        padding: Any = [0, 1, (1, 0), "valid", "same"][i % 5]
        if padding == "same":
            stride = (1, 1)
        kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
        bias = bool(i % 3)
        shapes = [(n, cin, 7, 6), (cout, cin // groups, *k)] + ([(cout,)] if bias else [])
        cases.append(pytest.param(shapes, kw, id=f"conv2d-{i}-{kw}-bias={bias}"))
    return cases


@pytest.mark.parametrize(("shapes", "kw"), _conv2d_cases())
def test_conv2d(shapes: list, kw: dict) -> None:
    _compare(lambda *a: GF.conv2d(*a, **kw), lambda *a: TF.conv2d(*a, **kw), shapes, 1)


@pytest.mark.parametrize("kw", [dict(stride=2), dict(padding="same", dilation=2),
                                dict(padding=1, groups=2), dict(padding="valid")])
def test_conv1d(kw: dict) -> None:
    shapes = [(2, 2, 9), (4, 2 // kw.get("groups", 1), 3), (4,)]
    _compare(lambda *a: GF.conv1d(*a, **kw), lambda *a: TF.conv1d(*a, **kw), shapes, 2)


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1, output_padding=1),
                                dict(stride=(2, 1), groups=2, dilation=(1, 2)),
                                dict(stride=3, padding=(0, 2), output_padding=(2, 1))])
def test_conv_transpose2d(kw: dict) -> None:
    g = kw.get("groups", 1)
    shapes = [(2, 4, 3, 4), (4, 6 // g, 3, 3), (6,)]
    _compare(lambda *a: GF.conv_transpose2d(*a, **kw),
             lambda *a: TF.conv_transpose2d(*a, **kw), shapes, 3)


def test_conv2d_unbatched_records_squeeze_over_convolution() -> None:
    _compare(lambda x, w: GF.conv2d(x, w, padding=1), lambda x, w: TF.conv2d(x, w, padding=1),
             [(2, 5, 5), (3, 2, 3, 3)], 4)


def test_conv2d_second_derivatives() -> None:
    rng = np.random.default_rng(5)
    xa, wa = rng.standard_normal((2, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3))
    results = []
    for lib, F in ((gradviz, GF), (torch, TF)):
        x, w = lib.tensor(xa, requires_grad=True), lib.tensor(wa, requires_grad=True)
        y = F.conv2d(x, w, stride=2, padding=1)
        gx, gw = lib.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        (gx.sum() + (gw * gw).sum()).backward()
        results.append((gx.detach().numpy(), x.grad.numpy(), w.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=(2, 3), stride=(1, 2), dilation=(2, 1)),
                                dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                dict(kernel_size=2, stride=2, ceil_mode=True)])
def test_max_pool2d(kw: dict) -> None:
    _compare(lambda x: GF.max_pool2d(x, **kw), lambda x: TF.max_pool2d(x, **kw), [(2, 3, 7, 6)],
             6)
    x = np.random.default_rng(7).standard_normal((1, 2, 5, 5))
    _, gi = GF.max_pool2d(gradviz.tensor(x), return_indices=True, **kw)
    _, ti = TF.max_pool2d(torch.tensor(x), return_indices=True, **kw)
    np.testing.assert_array_equal(gi.numpy(), ti.numpy())


def test_max_pool1d_records_squeeze_pool_unsqueeze() -> None:
    gy = GF.max_pool1d(gradviz.randn(2, 3, 7, requires_grad=True), 3, 2, 1)
    ty = TF.max_pool1d(torch.randn(2, 3, 7, requires_grad=True), 3, 2, 1)
    assert _names(gy) == _names(ty)
    pool = gy.grad_fn.next_functions[0][0]
    tpool = ty.grad_fn.next_functions[0][0]
    assert _saved(pool).keys() == _saved(tpool).keys()
    assert pool._saved_kernel_size == tpool._saved_kernel_size == (1, 3)
    assert pool._saved_stride == tpool._saved_stride
    _compare(lambda x: GF.max_pool1d(x, 2), lambda x: TF.max_pool1d(x, 2), [(2, 2, 8)], 8)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                     count_include_pad=False),
                                dict(kernel_size=(2, 3), stride=1, divisor_override=4)])
def test_avg_pool2d(kw: dict) -> None:
    _compare(lambda x: GF.avg_pool2d(x, **kw), lambda x: TF.avg_pool2d(x, **kw), [(2, 3, 7, 6)],
             9)


@pytest.mark.parametrize("size", [(3, 2), 4, (7, None), (1, 1), 1])
def test_adaptive_avg_pool2d(size: Any) -> None:
    _compare(lambda x: GF.adaptive_avg_pool2d(x, size),
             lambda x: TF.adaptive_avg_pool2d(x, size), [(2, 3, 7, 6)], 10)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 4, 4)])
def test_batch_norm(training: bool, shape: tuple) -> None:
    rng = np.random.default_rng(11)
    rm, rv = rng.standard_normal(3), rng.uniform(0.5, 2, 3)
    stats = [(gradviz.tensor(rm), gradviz.tensor(rv)), (torch.tensor(rm), torch.tensor(rv))]
    _compare(lambda x, w, b: GF.batch_norm(x, *stats[0], w, b, training, 0.2, 1e-3),
             lambda x, w, b: TF.batch_norm(x, *stats[1], w, b, training, 0.2, 1e-3),
             [shape, (3,), (3,)], 12)
    for g, t in zip(stats[0], stats[1]):
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-12)


def test_batch_norm_without_running_stats_or_affine() -> None:
    _compare(lambda x: GF.batch_norm(x, None, None, training=True),
             lambda x: TF.batch_norm(x, None, None, training=True), [(3, 2, 2, 2)], 13)


def test_dropout2d_graph_and_mask_shape() -> None:
    gy = GF.dropout2d(gradviz.randn(2, 3, 4, 4, requires_grad=True), 0.5)
    ty = TF.dropout2d(torch.randn(2, 3, 4, 4, requires_grad=True), 0.5)
    assert _names(gy) == _names(ty)
    assert gy.grad_fn._saved_other.shape == tuple(ty.grad_fn._saved_other.shape) == (2, 3, 1, 1)
    kept = gy.grad_fn._saved_other.numpy().ravel()
    assert set(np.unique(kept)) <= {0.0, 2.0}
    x = gradviz.ones(2, 3, 4, 4)
    assert GF.dropout2d(x, 0.5, training=False) is x


@pytest.mark.parametrize("pad", [(1, 2), (1, -1, 2, 0), (0, 1, 1, 0, 2, 1)])
def test_pad_constant(pad: tuple) -> None:
    _compare(lambda x: GF.pad(x, pad, value=0.5), lambda x: TF.pad(x, pad, value=0.5),
             [(2, 3, 4, 5)], 14)


@pytest.mark.parametrize(("call", "args"), [
    ("conv2d", ((2, 3, 7, 7), (4, 2, 3, 3))),
    ("conv2d", ((2, 3, 7, 7), (4, 3, 9, 9))),
    ("conv2d", ((7, 7), (4, 3, 3, 3))),
    ("max_pool2d", ((2, 3, 4, 4),)),
    ("avg_pool2d", ((2, 3, 4, 4),)),
])
def test_error_texts(call: str, args: tuple) -> None:
    kw = {"max_pool2d": dict(kernel_size=2, padding=2), "avg_pool2d": dict(kernel_size=2,
                                                                          padding=2)}.get(call, {})
    with pytest.raises(RuntimeError) as t_err:
        getattr(TF, call)(*[torch.zeros(s) for s in args], **kw)
    with pytest.raises(RuntimeError) as g_err:
        getattr(GF, call)(*[gradviz.zeros(*s) for s in args], **kw)
    assert str(g_err.value) == str(t_err.value)


# -- modules ---------------------------------------------------------------------------------------
_MODULES = [
    ("Conv1d", (2, 4, 3), {}), ("Conv1d", (2, 4, 3), dict(padding="same", bias=False)),
    ("Conv2d", (1, 6, 5), {}), ("Conv2d", (4, 8, (3, 2)), dict(stride=2, padding=1, groups=2)),
    ("Conv2d", (3, 3, 3), dict(dilation=2, padding="valid")),
    ("ConvTranspose2d", (4, 2, 3), dict(stride=2, output_padding=1, bias=False)),
    ("MaxPool2d", (2,), {}), ("MaxPool2d", ((3, 2), 1, 1), dict(ceil_mode=True)),
    ("AvgPool2d", (3,), dict(stride=2, padding=1)), ("AdaptiveAvgPool2d", ((5, 7),), {}),
    ("AdaptiveAvgPool2d", (1,), {}), ("BatchNorm1d", (3,), {}),
    ("BatchNorm2d", (4,), dict(momentum=None, affine=False)),
    ("BatchNorm2d", (4,), dict(track_running_stats=False)),
    ("BatchNorm2d", (4,), dict(bias=False)), ("Dropout2d", (0.3,), {}),
]


@pytest.mark.parametrize(("name", "args", "kw"), _MODULES)
def test_module_repr_and_state_dict(name: str, args: tuple, kw: dict) -> None:
    g, t = getattr(nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
    assert repr(g) == repr(t)
    gs, ts = g.state_dict(), t.state_dict()
    assert list(gs) == list(ts)
    for k in gs:
        assert tuple(gs[k].shape) == tuple(ts[k].shape)
        assert str(gs[k].dtype).split(".")[-1] == str(ts[k].dtype).split(".")[-1]


@pytest.mark.parametrize(("name", "args"), [("Conv2d", (16, 32, 3)), ("Conv1d", (8, 4, 5)),
                                            ("ConvTranspose2d", (8, 16, 3))])
def test_conv_init_bounds_match_torch(name: str, args: tuple) -> None:
    g, t = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    fan_in = math.prod(t.weight.shape[1:])
    bound = 1 / math.sqrt(fan_in)  # kaiming_uniform(a=sqrt(5)) and the bias: the same bound
    for gp, tp in ((g.weight, t.weight), (g.bias, t.bias)):
        ga, ta = gp.detach().numpy(), tp.detach().numpy()
        assert np.abs(ga).max() <= bound and np.abs(ta).max() <= bound
        if ga.size > 200:  # uniform over the whole range, as torch's is
            assert np.abs(ga).max() > 0.9 * bound and abs(ga.mean()) < 0.1 * bound
            assert abs(ga.std() - ta.std()) < 0.1 * bound


def _copy_weights(src: Any, dst: Any) -> None:
    """torch module -> gradviz module (same structure)."""
    for k, v in src.state_dict().items():
        dst.state_dict()[k]._data[...] = v.numpy()


@pytest.mark.parametrize("kw", [dict(), dict(momentum=None), dict(momentum=0.3, eps=1e-3),
                                dict(affine=False), dict(track_running_stats=False)])
def test_batchnorm2d_train_eval_matches_torch(kw: dict) -> None:
    g, t = nn.BatchNorm2d(3, dtype=gradviz.float64, **kw), torch.nn.BatchNorm2d(
        3, dtype=torch.float64, **kw)
    rng = np.random.default_rng(16)
    if kw.get("affine", True):
        with torch.no_grad():
            t.weight.uniform_(0.5, 1.5)
            t.bias.uniform_(-1, 1)
        _copy_weights(t, g)
    for step in range(3):
        x = rng.standard_normal((4, 3, 2, 3)) * (step + 1) + step
        np.testing.assert_allclose(g(gradviz.tensor(x)).detach().numpy(),
                                   t(torch.tensor(x)).detach().numpy(), rtol=1e-10, atol=1e-12)
    for k, v in t.state_dict().items():
        np.testing.assert_allclose(g.state_dict()[k].numpy(), v.numpy(), rtol=1e-12)
    g.eval(), t.eval()
    x = rng.standard_normal((2, 3, 2, 3))
    np.testing.assert_allclose(g(gradviz.tensor(x)).detach().numpy(),
                               t(torch.tensor(x)).detach().numpy(), rtol=1e-10, atol=1e-12)


def test_batchnorm1d_train_matches_torch() -> None:
    g, t = nn.BatchNorm1d(4, dtype=gradviz.float64), torch.nn.BatchNorm1d(4, dtype=torch.float64)
    x = np.random.default_rng(17).standard_normal((5, 4, 3))
    gx, tx = gradviz.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    gy, ty = g(gx), t(tx)
    np.testing.assert_allclose(gy.detach().numpy(), ty.detach().numpy(), rtol=1e-10)
    assert _saved(gy.grad_fn).keys() == _saved(ty.grad_fn).keys()
    (gy * gy).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(g.weight.grad.numpy(), t.weight.grad.numpy(), rtol=1e-10)
    with pytest.raises(ValueError) as te:
        t(torch.zeros(1, 4, 1, 1))
    with pytest.raises(ValueError) as ge:
        g(gradviz.zeros(1, 4, 1, 1))
    assert str(ge.value) == str(te.value)
