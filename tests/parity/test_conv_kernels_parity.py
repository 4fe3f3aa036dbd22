"""The NumPy convolution and max-pooling kernels (NOTE [im2col] in
gradviz/ops/_kernels/conv_pool.py) against torch's, directly: 1-d, 2-d and 3-d, plain and
transposed, every option at once and one at a time, float32 and float64, empty batches; max
pooling's ties, NaN, -inf under padding, ceil_mode and dilation, and its backward with
overlapping windows."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import gradviz
from gradviz.ops import _kernels as K

# (spatial size, kernel, stride, padding, dilation, output_padding, groups), per dimension count
CONV_CASES = [
    ((9,), (3,), (1,), (0,), (1,), (0,), 1),
    ((9,), (4,), (2,), (2,), (2,), (1,), 2),
    ((7, 6), (3, 3), (1, 1), (1, 1), (1, 1), (0, 0), 1),
    ((7, 6), (2, 3), (2, 1), (1, 0), (2, 1), (1, 0), 2),
    ((8, 5), (3, 2), (3, 2), (0, 1), (1, 2), (2, 1), 1),
    ((5, 4, 6), (2, 3, 2), (1, 2, 1), (1, 0, 1), (1, 1, 2), (0, 1, 0), 1),
    ((4, 5, 3), (3, 2, 2), (2, 1, 1), (0, 1, 1), (1, 2, 1), (1, 0, 0), 3),
    ((6, 5), (3, 2), (1, 1), (1, 0), (2, 3), (1, 2), 1),  # output_padding >= stride
]


def _tol(dtype: Any) -> dict:
    return dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{len(c[0])}d-{c[1:]}")
def test_convolution_matches_torch(case: tuple, transposed: bool, dtype: Any) -> None:
    size, kernel, stride, padding, dilation, output_padding, groups = case
    rng = np.random.default_rng(len(size) * 10 + groups)
    cin, cout = 2 * groups, 3 * groups
    x = rng.standard_normal((2, cin) + size).astype(dtype)
    w_shape = (cin, cout // groups) if transposed else (cout, cin // groups)
    w = rng.standard_normal(w_shape + kernel).astype(dtype)
    b = rng.standard_normal(cout).astype(dtype)
    out_pad = output_padding if transposed else (0,) * len(size)
    args = (stride, padding, dilation, transposed, out_pad, groups)
    got = K.convolution(x, w, b, *args)
    want = torch.convolution(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b),
                             *args).numpy()
    assert got.dtype == dtype
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **_tol(dtype))


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{len(c[0])}d-{c[1:]}")
def test_convolution_gradients_match_torch(case: tuple, transposed: bool) -> None:
    """Through autograd: the input's gradient (a transposed convolution, or a plain one), the
    weight's (one matmul with the im2col matrix) and the bias's, float64."""
    size, kernel, stride, padding, dilation, output_padding, groups = case
    rng = np.random.default_rng(len(size) * 10 + groups + 1)
    cin, cout = 2 * groups, 3 * groups
    w_shape = (cin, cout // groups) if transposed else (cout, cin // groups)
    arrays = [rng.standard_normal((2, cin) + size), rng.standard_normal(w_shape + kernel),
              rng.standard_normal(cout)]
    args = (stride, padding, dilation, transposed,
            output_padding if transposed else (0,) * len(size), groups)
    g_in = [gradviz.tensor(a, requires_grad=True) for a in arrays]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    g_out, t_out = gradviz.convolution(*g_in, *args), torch.convolution(*t_in, *args)
    up = rng.standard_normal(tuple(t_out.shape))
    g_out.backward(gradviz.tensor(up))
    t_out.backward(torch.tensor(up))
    for g, t in zip(g_in, t_in):
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("transposed", [False, True])
def test_convolution_of_an_empty_batch(transposed: bool) -> None:
    x = np.zeros((0, 2, 5, 5), np.float32)
    w = np.ones((2, 3, 3, 3) if transposed else (3, 2, 3, 3), np.float32)
    args = ((2, 2), (1, 1), (1, 1), transposed, (1, 1) if transposed else (0, 0), 1)
    want = torch.convolution(torch.from_numpy(x), torch.from_numpy(w), None, *args)
    got = K.convolution(x, w, None, *args)
    assert got.shape == tuple(want.shape) and got.dtype == np.float32


def test_convolution_of_a_non_contiguous_input() -> None:
    """The weight gradient convolves permuted (non-contiguous) arrays."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 2, 6, 4)).transpose(1, 0, 2, 3)[:, :, ::-1]
    w = rng.standard_normal((3, 5, 2, 2)).transpose(0, 1, 3, 2)
    args = ((1, 2), (0, 1), (2, 1), False, (0, 0), 1)
    want = torch.convolution(torch.from_numpy(x.copy()), torch.from_numpy(w.copy()), None, *args)
    np.testing.assert_allclose(K.convolution(x, w, None, *args), want.numpy(), rtol=1e-10)


POOL_CASES = [
    dict(kernel_size=(2, 2)),
    dict(kernel_size=(3, 2), stride=(1, 2), padding=(1, 1)),
    dict(kernel_size=(3, 3), stride=(2, 2), padding=(1, 0), ceil_mode=True),
    dict(kernel_size=(2, 3), stride=(2, 1), padding=(0, 1), dilation=(2, 2)),
    dict(kernel_size=(4, 4), stride=(3, 3), padding=(2, 2), dilation=(1, 2), ceil_mode=True),
]


def _torch_pool(a: np.ndarray, kw: dict) -> tuple[np.ndarray, np.ndarray]:
    t = torch.nn.functional.max_pool2d_with_indices(torch.from_numpy(a), **kw)
    return t[0].numpy(), t[1].numpy()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kw", POOL_CASES, ids=str)
def test_max_pool2d_values_indices_and_backward_match_torch(kw: dict, dtype: Any) -> None:
    rng = np.random.default_rng(7)
    # Few distinct values: many ties, which must resolve to the first maximum as in torch.
    a = rng.integers(-2, 3, (2, 3, 7, 8)).astype(dtype)
    values, indices = K.max_pool2d_with_indices(a, **kw)
    want_values, want_indices = _torch_pool(a, kw)
    assert values.dtype == dtype and indices.dtype == np.int64
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_array_equal(indices, want_indices)
    # Backward with overlapping windows: a position that is the maximum of several windows
    # gets the sum of their gradients.
    ta = torch.from_numpy(a).requires_grad_(True)
    g = rng.standard_normal(values.shape).astype(dtype)
    torch.nn.functional.max_pool2d(ta, **kw).backward(torch.from_numpy(g))
    got = K.max_pool2d_with_indices_backward(g, a, indices)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, ta.grad.numpy(), **_tol(dtype))


@pytest.mark.parametrize("kw", POOL_CASES[:3], ids=str)
def test_max_pool2d_nan_and_minus_infinity_match_torch(kw: dict) -> None:
    """torch keeps the last NaN of a window, and never picks padding, even when every value
    of the window is -inf."""
    rng = np.random.default_rng(8)
    a = rng.standard_normal((1, 2, 6, 7))
    a[0, 0, rng.random((6, 7)) < 0.3] = np.nan
    a[0, 1] = -np.inf
    a[0, 1, 3, 3] = 1.0
    values, indices = K.max_pool2d_with_indices(a, **kw)
    want_values, want_indices = _torch_pool(a, kw)
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_array_equal(indices, want_indices)


def test_max_pool2d_unbatched_and_empty() -> None:
    a = np.arange(30.0).reshape(1, 5, 6)[:, ::-1]
    for x in (a, np.zeros((0, 2, 4, 4))):
        values, indices = K.max_pool2d_with_indices(x, (2, 2))
        want_values, want_indices = _torch_pool(np.ascontiguousarray(x), dict(kernel_size=2))
        np.testing.assert_array_equal(values, want_values)
        np.testing.assert_array_equal(indices, want_indices)


@pytest.mark.parametrize("kw", [dict(kernel_size=(2, 2)),
                                dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1),
                                     ceil_mode=True, count_include_pad=False),
                                dict(kernel_size=(3, 3), stride=(2, 2), padding=(1, 0),
                                     divisor_override=4)], ids=str)
def test_avg_pool2d_matches_torch(kw: dict) -> None:
    a = np.random.default_rng(9).standard_normal((2, 3, 7, 6)).astype(np.float32)
    got = K.avg_pool2d(a, **kw)
    want = torch.nn.functional.avg_pool2d(torch.from_numpy(a), **kw).numpy()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("transposed", [False, True])
def test_convolution_second_derivatives_match_torch(transposed: bool) -> None:
    """Under create_graph the gradients are recorded as convolutions (the tensor path of the
    weight's gradient, the cropped input gradient when output_padding >= stride)."""
    rng = np.random.default_rng(11)
    xa = rng.standard_normal((2, 2, 5, 4))
    wa = rng.standard_normal((2, 3, 3, 2) if transposed else (3, 2, 3, 2))
    args = ((1, 2), (1, 0), (2, 3), transposed, (1, 2) if transposed else (0, 0), 1)
    results = []
    for lib in (gradviz, torch):
        x, w = lib.tensor(xa, requires_grad=True), lib.tensor(wa, requires_grad=True)
        y = lib.convolution(x, w, None, *args)
        gx, gw = lib.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        ((gx * gx).sum() + (gw * gw).sum()).backward()
        results.append((gx.detach().numpy(), gw.detach().numpy(), x.grad.numpy(),
                        w.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)
