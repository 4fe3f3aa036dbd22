"""The im2col convolution kernels (NOTE [im2col] in gradviz/ops/_kernels/conv_pool.py) without
torch: the plain convolution against its definition written as loops over output positions, the
transposed one as its adjoint, in 1, 2 and 3 dimensions with every option; dtypes are kept."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import gradviz
from gradviz.ops import _kernels as K
from gradviz.ops.derivatives import _correlate_for_weight

# (spatial size, kernel, stride, padding, dilation, groups)
CASES = [
    ((7,), (3,), (2,), (1,), (2,), 1),
    ((6, 5), (3, 2), (1, 2), (1, 0), (1, 2), 2),
    ((5, 6), (2, 2), (2, 1), (0, 1), (2, 1), 1),
    ((4, 5, 4), (2, 3, 2), (1, 2, 2), (1, 1, 0), (2, 1, 1), 2),
]


def _conv_by_definition(x: np.ndarray, w: np.ndarray, stride: tuple, padding: tuple,
                        dilation: tuple, groups: int) -> np.ndarray:
    """out[n, o, p] = sum over c in o's group and kernel offsets k of
    x_padded[n, c, p * stride + k * dilation] * w[o, c, k], one output position at a time."""
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    kernel = w.shape[2:]
    n_out = tuple((n - d * (k - 1) - 1) // s + 1
                  for n, k, s, d in zip(xp.shape[2:], kernel, stride, dilation))
    o_per, c_per = w.shape[0] // groups, x.shape[1] // groups
    out = np.zeros((x.shape[0], w.shape[0]) + n_out, np.float64)
    for o in range(w.shape[0]):
        g = o // o_per
        for pos in itertools.product(*(range(n) for n in n_out)):
            window = xp[(slice(None), slice(g * c_per, (g + 1) * c_per)) + tuple(
                slice(p * s, p * s + d * (k - 1) + 1, d)
                for p, s, d, k in zip(pos, stride, dilation, kernel))]
            out[(slice(None), o) + pos] = (window * w[o]).reshape(x.shape[0], -1).sum(axis=1)
    assert out.ndim == nd + 2
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{len(c[0])}d")
def test_convolution_matches_its_definition(case: tuple) -> None:
    size, kernel, stride, padding, dilation, groups = case
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 2 * groups) + size)
    w = rng.standard_normal((3 * groups, 2) + kernel)
    got = K.convolution(x, w, None, stride, padding, dilation, False, (0,), groups)
    want = _conv_by_definition(x, w, stride, padding, dilation, groups)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{len(c[0])}d")
def test_transposed_convolution_is_the_adjoint(case: tuple) -> None:
    """<conv(x, w), y> == <x, conv_transpose(y, w)> for every x and y, when output_padding
    gives back the input rows the stride skipped."""
    size, kernel, stride, padding, dilation, groups = case
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 2 * groups) + size)
    w = rng.standard_normal((3 * groups, 2) + kernel)
    y_shape = K.convolution(x, w, None, stride, padding, dilation, False, (0,), groups).shape
    y = rng.standard_normal(y_shape)
    extra = tuple(n + 2 * p - d * (k - 1) - 1 - (o - 1) * s for n, o, k, s, p, d in zip(
        size, y_shape[2:], kernel, stride, padding, dilation))
    xt = K.convolution(y, w, None, stride, padding, dilation, True, extra, groups)
    assert xt.shape == x.shape
    lhs = float(np.sum(K.convolution(x, w, None, stride, padding, dilation, False, (0,),
                                     groups) * y))
    assert math.isclose(lhs, float(np.sum(x * xt)), rel_tol=1e-10)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{len(c[0])}d")
def test_weight_gradient_on_arrays_equals_the_recorded_one(case: tuple) -> None:
    """A plain backward computes the weight's gradient as one matmul on arrays; under
    create_graph the same formula records a convolution on tensors: both give one value."""
    size, kernel, stride, padding, dilation, groups = case
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 2 * groups) + size)
    w = rng.standard_normal((3 * groups, 2) + kernel)
    gy = rng.standard_normal(
        K.convolution(x, w, None, stride, padding, dilation, False, (0,), groups).shape)
    direct = _correlate_for_weight(x, gy, kernel, stride, padding, dilation, groups)
    recorded = _correlate_for_weight(gradviz.tensor(x), gradviz.tensor(gy), kernel, stride,
                                     padding, dilation, groups)
    assert direct.shape == w.shape
    np.testing.assert_allclose(direct, recorded.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("transposed", [False, True])
def test_float32_stays_float32(transposed: bool) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4, 5, 5)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3) if transposed else (3, 4, 3, 3)).astype(np.float32)
    b = np.ones(3, np.float32)
    out = K.convolution(x, w, b, (2, 1), (1, 1), (1, 1), transposed, (1, 0), 1)
    assert out.dtype == np.float32 and out.shape[1] == 3


def test_max_pool_keeps_the_first_maximum_and_the_last_nan() -> None:
    a = np.array([[[[3.0, 1.0, 3.0, np.nan, 2.0, np.nan]]]])
    values, indices = K.max_pool2d_with_indices(a, (1, 3))
    np.testing.assert_array_equal(values, [[[[3.0, np.nan]]]])
    np.testing.assert_array_equal(indices, [[[[0, 5]]]])
    g = K.max_pool2d_with_indices_backward(np.array([[[[1.0, 2.0]]]], np.float32), a, indices)
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g, [[[[1.0, 0, 0, 0, 0, 2.0]]]])


def test_index_caches_are_bounded_by_bytes_not_count(monkeypatch):
    """Many large geometries keep at most the byte budget of indices (the newest always)."""
    from gradviz.ops import _kernels as K
    from gradviz.ops._kernels import conv_pool

    # (the budget is read where the caches live: gradviz/ops/_kernels/conv_pool.py)
    monkeypatch.setattr(conv_pool, "_INDEX_CACHE_BYTES", 2 * 2**20)
    for size in range(20, 60, 4):  # each index: 16 * 9 * (size - 2)**2 entries, 0.4-3.6 MB
        x = np.ones((1, 16, size, size))
        w = np.ones((2, 16, 3, 3))
        out = K.convolution(x, w, None, (1, 1), (0, 0), (1, 1), False, (0, 0), 1)
        assert out.shape == (1, 2, size - 2, size - 2)
        assert (K._im2col_index.cache_bytes() <= 2 * 2**20
                or K._im2col_index.cache_len() == 1)
    # the same geometry again is served from the cache: the very same (read-only) array
    first = K._im2col_index(16, (56, 56), (3, 3), (1, 1), (1, 1), (54, 54))
    assert K._im2col_index(16, (56, 56), (3, 3), (1, 1), (1, 1), (54, 54)) is first
    assert not first.flags.writeable
