"""Forwards of convolution and pooling (NOTE [im2col]), padding, upsampling, pixel
(un)shuffle and im2col/col2im."""

from __future__ import annotations

import functools
import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from gradviz.ops._kernels.common import arr

# NOTE [im2col]: a convolution is one matrix product. ``_im2col`` copies the input values under
# every kernel position into one contiguous matrix per sample, of shape
# (C * prod(kernel), prod(n_out)): row (c, k) holds channel c at kernel offset k, column p the
# output position p. The weight seen as (O, C * prod(kernel)) times it is the output
# (O, prod(n_out)) in the (N, O, *n_out) layout already: one ``np.matmul`` over the batch (groups
# are one more batch dimension), BLAS doing the arithmetic. The copy is one ``take`` with a flat
# index that depends only on the geometry (cached), not a reshape of a strided window view:
# NumPy copies a 6-d view of 3-wide windows several times slower.
# The weight's gradient gathers the same entries with the positions first,
# (N * prod(n_out), C * prod(kernel)), and multiplies the output gradient, seen as
# (O, N * prod(n_out)), by it: one matmul sums over the batch and the positions.
# A transposed convolution (and so the input's gradient) is the product the other way round: the
# weight's transpose times the input gives, per input position, what it adds at each kernel
# offset; col2im then sums those into the output, again as one ``take`` (each output position
# reads the prod(kernel) entries that land on it; an entry that lands nowhere reads an appended
# zero) and a sum over the kernel offsets.
# Pooling gathers its windows with the same index, laid out (kernel offset, output position,
# plane) instead (``_pool_windows``): a window's reduction is then a few passes over contiguous
# (output position, plane) slabs.

# How many bytes of im2col / col2im / pooling indices are kept per kind, the geometries used
# last first: an index has one entry per element of a sample's im2col matrix (3.6 MB for 64
# channels, 3x3, 28x28; 58 MB for 256 channels, 3x3, 56x56) and rebuilding one costs a few ms,
# against tens of ms for the convolution that needs it. A bound by count would let a sweep over
# large shapes keep gigabytes.
_INDEX_CACHE_BYTES = 64 * 2**20


def _nbytes(value: Any) -> int:
    items = value if isinstance(value, tuple) else (value,)
    return sum(a.nbytes for a in items if isinstance(a, np.ndarray))


def _index_cache(build: Callable[..., Any]) -> Callable[..., Any]:
    """``build`` with its results kept by argument, least recently used dropped first once they
    hold more than ``_INDEX_CACHE_BYTES`` (the newest is always kept, however large)."""
    kept: OrderedDict[tuple, Any] = OrderedDict()
    size = [0]
    lock = threading.Lock()

    @functools.wraps(build)
    def cached(*key: Any) -> Any:
        with lock:
            hit = kept.get(key)
            if hit is not None:
                kept.move_to_end(key)
                return hit
        value = build(*key)
        with lock:
            if key not in kept:
                kept[key] = value
                size[0] += _nbytes(value)
                while size[0] > _INDEX_CACHE_BYTES and len(kept) > 1:
                    size[0] -= _nbytes(kept.popitem(last=False)[1])
        return value

    cached.cache_bytes = lambda: size[0]  # type: ignore[attr-defined]
    cached.cache_len = lambda: len(kept)  # type: ignore[attr-defined]
    return cached


def _per_dim(v: Any, nd: int) -> tuple:
    """An int or a 1-tuple stands for every spatial dimension (PyTorch saves 'valid' as (0,))."""
    v = tuple(v) if isinstance(v, (tuple, list)) else (int(v),)
    return v * nd if len(v) == 1 else v


def _pad_or_crop(a: np.ndarray, lo: tuple, hi: tuple, value: float = 0.0) -> np.ndarray:
    """Pad the last ``len(lo)`` dimensions by ``lo``/``hi`` with ``value``; negative amounts crop.
    (A filled array and one slice assignment: ``np.pad`` costs tens of µs more per call.)"""
    lead = a.ndim - len(lo)
    if any(x < 0 for x in lo + hi):
        a = a[(slice(None),) * lead + tuple(
            slice(max(-x, 0), n - max(-y, 0)) for x, y, n in zip(lo, hi, a.shape[lead:]))]
    if any(x > 0 for x in lo + hi):
        lo, hi = tuple(max(x, 0) for x in lo), tuple(max(y, 0) for y in hi)
        out = np.full(a.shape[:lead] + tuple(n + x + y for n, x, y in zip(a.shape[lead:], lo, hi)),
                      value, a.dtype)
        out[(slice(None),) * lead + tuple(slice(x, x + n) for x, n in zip(lo, a.shape[lead:]))] = a
        a = out
    return a


def _along(values: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """``values`` as an ``ndim``-d array that varies along ``axis`` only (for broadcasting)."""
    return values.reshape(tuple(-1 if i == axis else 1 for i in range(ndim)))


@_index_cache
def _im2col_index(channels: int, spatial: tuple, kernel: tuple, stride: tuple, dilation: tuple,
                  n_out: tuple, positions_first: bool = False) -> np.ndarray:
    """For a (channels, *spatial) block flattened: the position of each im2col entry, in
    (channel, *kernel offset, *output position) order (NOTE [im2col]), or with
    ``positions_first`` in (*output position, channel, *kernel offset) order."""
    nd = len(kernel)
    dims = 1 + 2 * nd
    idx = _along(np.arange(channels) * math.prod(spatial), 0, dims)
    step = math.prod(spatial)
    for i in range(nd):
        step //= spatial[i]  # elements between neighbours along spatial dimension i
        idx = (idx + _along(np.arange(kernel[i]) * (dilation[i] * step), 1 + i, dims)
               + _along(np.arange(n_out[i]) * (stride[i] * step), 1 + nd + i, dims))
    if positions_first:
        idx = idx.transpose(tuple(range(1 + nd, dims)) + tuple(range(1 + nd)))
    idx = idx.ravel()
    idx.flags.writeable = False
    return idx


def _im2col(a: np.ndarray, kernel: tuple, stride: tuple, dilation: tuple, n_out: tuple,
            positions_first: bool = False) -> np.ndarray:
    """``(N, C * prod(kernel), prod(n_out))``: each output position's input window as a column,
    for an already padded ``a`` of shape (N, C, *spatial); with ``positions_first`` as a row,
    ``(N, prod(n_out), C * prod(kernel))``."""
    n, c = a.shape[:2]
    idx = _im2col_index(c, a.shape[2:], kernel, stride, dilation, n_out, positions_first)
    flat = a.reshape(n, math.prod(a.shape[1:]))  # sizes spelled out: N may be 0
    shape = (c * math.prod(kernel), math.prod(n_out))
    return flat.take(idx, axis=1).reshape((n,) + (shape[::-1] if positions_first else shape))


def _conv(x: np.ndarray, w: np.ndarray, stride: tuple, padding: tuple, dilation: tuple,
          groups: int) -> np.ndarray:
    """Cross-correlation of ``x`` (N, C, *spatial) with ``w`` (O, C/groups, *kernel)."""
    kernel = w.shape[2:]
    x = _pad_or_crop(x, padding, padding)
    n_out = tuple((n - d * (k - 1) - 1) // s + 1
                  for n, k, s, d in zip(x.shape[2:], kernel, stride, dilation))
    n, o, g = x.shape[0], w.shape[0], groups
    rows = x.shape[1] // g * math.prod(kernel)  # one group's im2col rows
    cols = _im2col(x, kernel, stride, dilation, n_out).reshape(n, g, rows, math.prod(n_out))
    out = np.matmul(w.reshape(g, o // g, rows), cols)  # (N, G, O/G, prod(n_out))
    return out.reshape((n, o) + n_out)


@_index_cache
def _col2im_index(channels: int, n_in: tuple, kernel: tuple, stride: tuple, padding: tuple,
                  dilation: tuple, n_out: tuple) -> np.ndarray:
    """For contributions laid out (channels, *kernel, *n_in), flattened, with a zero appended:
    the entry that each (kernel offset, channel, *output position) reads, in that order (NOTE
    [im2col]). Input position p at offset k lands on ``p * stride + k * dilation - padding``;
    where no input position lands at some offset, the output position reads the zero."""
    nd = len(kernel)
    dims = 2 + nd  # (flat kernel offset, channel, *output position)
    k_all, p_all = math.prod(kernel), math.prod(n_in)
    offsets = np.unravel_index(np.arange(k_all), kernel)  # each flat offset's index per dimension
    src, ok = 0, True
    for i in range(nd):
        num = (_along(np.arange(n_out[i]) + padding[i], 2 + i, dims)
               - _along(offsets[i] * dilation[i], 0, dims))
        pos = num // stride[i]
        ok = ok & (num % stride[i] == 0) & (pos >= 0) & (pos < n_in[i])
        src = src * n_in[i] + pos
    chan = _along(np.arange(channels), 1, dims)
    src = (chan * k_all + _along(np.arange(k_all), 0, dims)) * p_all + src
    idx = np.where(ok, src, channels * k_all * p_all).ravel()
    idx.flags.writeable = False
    return idx


def _conv_transpose(x: np.ndarray, w: np.ndarray, stride: tuple, padding: tuple,
                    output_padding: tuple, dilation: tuple, groups: int) -> np.ndarray:
    """The adjoint of :func:`_conv` (``w`` is (C, O/groups, *kernel)): matmul, then col2im."""
    n, c, g = x.shape[0], x.shape[1], groups
    og, kernel = w.shape[1], w.shape[2:]
    k_all = math.prod(kernel)
    wt = w.reshape(g, c // g, og * k_all).swapaxes(1, 2)  # (G, O/G * prod(kernel), C/G)
    p_in = math.prod(x.shape[2:])
    # Per sample: what each input position adds at each kernel offset, and a zero after it.
    flat = np.empty((n, g * og * k_all * p_in + 1), np.result_type(w, x))
    flat[:, -1] = 0
    np.matmul(wt, x.reshape(n, g, c // g, p_in), out=flat[:, :-1].reshape(n, g, og * k_all, p_in))
    n_out = tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1 for i, k, s, p, d, op in zip(
        x.shape[2:], kernel, stride, padding, dilation, output_padding))
    idx = _col2im_index(g * og, x.shape[2:], kernel, stride, padding, dilation, n_out)
    out = flat.take(idx, axis=1).reshape(n, k_all, g * og * math.prod(n_out)).sum(axis=1)
    return out.reshape((n, g * og) + n_out)


def convolution_weight(input: np.ndarray, grad: np.ndarray, kernel: tuple, stride: tuple,
                       padding: tuple, dilation: tuple, groups: int) -> np.ndarray:
    """The gradient of :func:`_conv`'s weight, ``(O, C/groups, *kernel)``: for each group, the
    output gradient as (O/G, N * prod(n_out)) times ``input``'s im2col matrix with its rows as
    output positions, (N * prod(n_out), C/G * prod(kernel)): one matmul, summing over the batch
    and the positions at once (NOTE [im2col])."""
    n, c, o, g = input.shape[0], input.shape[1], grad.shape[1], groups
    n_out = grad.shape[2:]
    rows = n * math.prod(n_out)
    cols = _im2col(_pad_or_crop(input, padding, padding), kernel, stride, dilation, n_out,
                   positions_first=True).reshape(rows, g, c // g * math.prod(kernel))
    gy = grad.reshape(n, g, o // g, math.prod(n_out)).transpose(1, 2, 0, 3).reshape(
        g, o // g, rows)
    return np.matmul(gy, cols.transpose(1, 0, 2)).reshape((o, c // g) + tuple(kernel))


def convolution(input: np.ndarray, weight: np.ndarray, bias: Any = None, stride: Any = (1,),
                padding: Any = (0,), dilation: Any = (1,), transposed: bool = False,
                output_padding: Any = (0,), groups: int = 1) -> np.ndarray:
    nd = input.ndim - 2
    stride, padding, dilation = (_per_dim(v, nd) for v in (stride, padding, dilation))
    if transposed:
        out = _conv_transpose(input, weight, stride, padding, _per_dim(output_padding, nd),
                              dilation, groups)
    else:
        out = _conv(input, weight, stride, padding, dilation, groups)
    if bias is not None:
        out += bias.reshape((1, -1) + (1,) * nd)  # ``out`` is a fresh array
    return out.astype(input.dtype, copy=False)


def pool_out_size(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's ``pooling_output_shape``: with ``ceil_mode`` a last window may start in the
    right padding, but not beyond it."""
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool_geometry(a: np.ndarray, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                   ceil_mode: bool) -> tuple:
    k = _per_dim(kernel_size, 2)
    st = tuple(stride) if isinstance(stride, (tuple, list)) else (stride,)
    s = _per_dim(st, 2) if st and st[0] is not None else k  # () or None: the kernel size
    p, d = _per_dim(padding, 2), _per_dim(dilation, 2)
    n_out = tuple(pool_out_size(n, *args, ceil_mode) for n, *args in zip(a.shape[-2:], k, s, p, d))
    # Right padding so that the last (ceil_mode) window fits.
    hi = tuple(max((o - 1) * st + dd * (kk - 1) + 1 - n - pp, 0)
               for o, st, dd, kk, n, pp in zip(n_out, s, d, k, a.shape[-2:], p))
    return k, s, p, d, n_out, hi


@_index_cache
def _pool_positions(size: tuple, k: tuple, s: tuple, p: tuple, d: tuple, n_out: tuple, hi: tuple
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """For 2-d pooling windows over a (h, w) plane padded by ``p`` and ``hi``: the im2col index
    into the padded plane, in (kernel offset, output position) order; in the unpadded plane
    (flat positions), where each window starts and where each kernel offset is from the start;
    shape (kh * kw, n_out, 1): whether an entry is inside the plane (None: no padding)."""
    h, w = size
    idx = _im2col_index(1, (h + p[0] + hi[0], w + p[1] + hi[1]), k, s, d, n_out)
    start = ((np.arange(n_out[0])[:, None] * s[0] - p[0]) * w
             + np.arange(n_out[1]) * s[1] - p[1]).ravel()
    offset = (np.arange(k[0])[:, None] * (d[0] * w) + np.arange(k[1]) * d[1]).ravel()
    inside = None
    if any(p) or any(hi):
        rows = np.arange(k[0])[:, None, None, None] * d[0] + _along(
            np.arange(n_out[0]) * s[0] - p[0], 2, 4)
        cols = np.arange(k[1])[None, :, None, None] * d[1] + np.arange(n_out[1]) * s[1] - p[1]
        inside = ((rows >= 0) & (rows < h) & (cols >= 0) & (cols < w)).reshape(
            k[0] * k[1], -1, 1)
    start, offset = start.astype(np.int64), offset.astype(np.int64)
    for table in (start, offset, inside):
        if table is not None:
            table.flags.writeable = False
    return idx, start, offset, inside


def _pool_windows(padded: np.ndarray, idx: np.ndarray, n_k: int, n_pos: int) -> np.ndarray:
    """``(kh * kw, n_out positions, planes)``: every window's elements (NOTE [im2col])."""
    planes = math.prod(padded.shape[:-2])
    by_position = padded.reshape(planes, padded.shape[-2] * padded.shape[-1]).T
    return by_position.take(idx, axis=0).reshape(n_k, n_pos, planes)


def _planes_first(a: np.ndarray, lead: tuple, n_out: tuple) -> np.ndarray:
    """A pooled (output position, plane) array in the input's layout, (*lead, *n_out)."""
    return np.ascontiguousarray(a.T).reshape(lead + n_out)


def max_pool2d_with_indices(a: np.ndarray, kernel_size: Any, stride: Any = (), padding: Any = 0,
                            dilation: Any = 1, ceil_mode: bool = False
                            ) -> tuple[np.ndarray, np.ndarray]:
    """Each window's maximum and the position of its first maximum in the input's H*W plane
    (when a window holds NaN: NaN and its last NaN, as PyTorch's kernel); padding is never
    picked. The windows are gathered as in NOTE [im2col] but laid out (kernel offset, output
    position, plane), so that every step below is a whole-array pass over contiguous memory:
    NumPy's ``argmax`` along a short axis or a masked assignment costs several times more."""
    k, s, p, d, n_out, hi = _pool_geometry(a, kernel_size, stride, padding, dilation, ceil_mode)
    low = -np.inf if a.dtype.kind == "f" else np.iinfo(a.dtype).min
    padded = _pad_or_crop(a, p, hi, low)
    lead, (h, w) = a.shape[:-2], a.shape[-2:]
    n_k, n_pos = k[0] * k[1], n_out[0] * n_out[1]
    idx, start, offset, inside = _pool_positions((h, w), k, s, p, d, n_out, hi)
    win = _pool_windows(padded, idx, n_k, n_pos)
    values = win.max(axis=0)  # NaN wins, as in PyTorch
    # The first offset holding the maximum: n_k minus the largest score (n_k - offset number)
    # among the offsets whose element equals it (small unsigned integers: cheap passes).
    score = np.min_scalar_type(n_k).type
    best, hit = np.zeros(values.shape, score), np.empty(values.shape, bool)
    for kk in range(n_k):
        np.equal(win[kk], values, out=hit)
        if inside is not None:
            hit &= inside[kk]
        np.maximum(best, hit.view(np.uint8) * score(n_k - kk), out=best)
    first = score(n_k) - best
    if a.dtype.kind == "f" and np.isnan(values).any():  # the last NaN: score = offset number + 1
        last = np.zeros(values.shape, score)
        for kk in range(n_k):
            np.maximum(last, np.isnan(win[kk]).view(np.uint8) * score(kk + 1), out=last)
        first = np.where(last > 0, last - score(1), first)
    index = offset.take(first.T) + start  # transposed as uint8, the cheapest to move
    return _planes_first(values, lead, n_out), index.reshape(lead + n_out)


def max_pool2d_with_indices_backward(grad_output: np.ndarray, self: np.ndarray, indices: Any
                                     ) -> np.ndarray:
    """Each output gradient added at its maximum's position (a flat index into H*W)."""
    idx = arr(indices)
    hw = self.shape[-2] * self.shape[-1]
    planes = math.prod(self.shape[:-2])
    flat = (np.arange(planes)[:, None] * hw + idx.reshape(planes, idx.size // max(planes, 1))
            ).ravel()
    out = np.zeros(planes * hw, grad_output.dtype)
    np.add.at(out, flat, grad_output.ravel())  # overlapping windows may share a maximum
    return out.reshape(self.shape)


def max_pool3d_with_indices(a: np.ndarray, kernel_size: tuple = (), stride: tuple = (),
                            padding: tuple = (0, 0, 0), dilation: tuple = (1, 1, 1),
                            ceil_mode: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Each window's maximum over the last three dimensions and its flat position in the
    input's D*H*W volume, as PyTorch's CPU kernel scans a window: the first maximum, or the
    last NaN when there is one; padding is never picked. ``stride`` () is the kernel size.
    The windows are gathered whole, (*lead, *n_out, kd * kh * kw): plain, not fast."""
    st = tuple(stride) or tuple(kernel_size)
    sizes = a.shape[-3:]
    coords, valid, starts = [], [], []
    for i, (n, k, s, p, d) in enumerate(zip(sizes, kernel_size, st, padding, dilation)):
        n_out = pool_out_size(n, k, s, p, d, ceil_mode)
        c = (np.arange(n_out) * s - p)[:, None] + np.arange(k) * d  # (n_out, k) positions
        shape = [1] * 6
        shape[i], shape[3 + i] = n_out, k
        coords.append(c.reshape(shape))
        valid.append(((c >= 0) & (c < n)).reshape(shape))
        # the first position not in the left padding: PyTorch's index for a window that
        # holds no input at all (a dilated window over padding only)
        first_in = np.where(c[:, 0] < 0, c[:, 0] + -(c[:, 0] // d) * d, c[:, 0])
        starts.append(first_in.reshape([n_out if j == i else 1 for j in range(3)]))
    inside = valid[0] & valid[1] & valid[2]
    clipped = [np.clip(c, 0, n - 1) for c, n in zip(coords, sizes)]
    lead = a.shape[:-3]
    win = a[(Ellipsis, *clipped)]  # (*lead, od, oh, ow, kd, kh, kw)
    n_out, n_k = win.shape[len(lead):len(lead) + 3], math.prod(kernel_size)
    win = win.reshape(lead + n_out + (n_k,))
    inside = np.broadcast_to(inside, n_out + tuple(kernel_size)).reshape(n_out + (n_k,))
    low = -np.inf if a.dtype.kind == "f" else np.iinfo(a.dtype).min
    win = np.where(inside, win, np.asarray(low, a.dtype))
    values = win.max(axis=-1)  # NaN wins
    first = np.argmax((win == values[..., None]) & inside, axis=-1)
    if a.dtype.kind == "f":
        nan = np.isnan(win)
        last_nan = win.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
        first = np.where(nan.any(-1), last_nan, first)
    h, w = sizes[1], sizes[2]
    flat = np.broadcast_to((clipped[0] * h + clipped[1]) * w + clipped[2],
                           n_out + tuple(kernel_size)).reshape(n_out + (n_k,))
    index = np.take_along_axis(np.broadcast_to(flat, win.shape), first[..., None], -1)[..., 0]
    empty = ~inside.any(-1)
    if empty.any():
        index = np.where(empty, (starts[0] * h + starts[1]) * w + starts[2], index)
    return np.ascontiguousarray(values), np.ascontiguousarray(index.astype(np.int64))


def max_pool3d_with_indices_backward(grad_output: np.ndarray, self: np.ndarray, indices: Any
                                     ) -> np.ndarray:
    """Each output gradient added at its maximum's position (a flat index into D*H*W)."""
    idx = arr(indices)
    volume = math.prod(self.shape[-3:])
    planes = math.prod(self.shape[:-3])
    idx = idx.reshape(planes, idx.size // max(planes, 1))
    # a window over padding only points past its volume (PyTorch's kernel then writes out of
    # bounds): its gradient is dropped
    kept = (idx < volume).ravel()
    flat = (np.arange(planes)[:, None] * volume + idx).ravel()
    out = np.zeros(planes * volume, grad_output.dtype)
    np.add.at(out, flat[kept], grad_output.ravel()[kept])  # overlapping windows may share one
    return out.reshape(self.shape)


def _avg_divisor(a: np.ndarray, k: tuple, s: tuple, p: tuple, n_out: tuple,
                 count_include_pad: bool, divisor_override: Any) -> Any:
    """Per output position, what its window's sum is divided by (PyTorch's avg_pool2d)."""
    if divisor_override:
        return divisor_override
    sizes = []
    for n, kk, st, pp, o in zip(a.shape[-2:], k, s, p, n_out):
        start = np.arange(o) * st - pp
        end = np.minimum(start + kk, n + pp)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, n)
        sizes.append(end - start)
    return (sizes[0][:, None] * sizes[1][None, :]).astype(a.dtype)


def avg_pool2d(a: np.ndarray, kernel_size: Any, stride: Any = (), padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: Any = None) -> np.ndarray:
    k, s, p, d, n_out, hi = _pool_geometry(a, kernel_size, stride, padding, 1, ceil_mode)
    idx = _pool_positions(a.shape[-2:], k, s, p, d, n_out, hi)[0]
    sums = _pool_windows(_pad_or_crop(a, p, hi), idx, k[0] * k[1], n_out[0] * n_out[1]).sum(0)
    out = _planes_first(sums, a.shape[:-2], n_out) / _avg_divisor(
        a, k, s, p, n_out, count_include_pad, divisor_override)
    return out.astype(a.dtype, copy=False)


def avg_pool2d_backward(grad_output: np.ndarray, self: np.ndarray, kernel_size: Any,
                        stride: Any = (), padding: Any = 0, ceil_mode: bool = False,
                        count_include_pad: bool = True, divisor_override: Any = None
                        ) -> np.ndarray:
    """Each output gradient, divided like its window's sum, spread over the window: one strided
    add per kernel offset (kh * kw of them), never a loop over pixels."""
    k, s, p, d, n_out, hi = _pool_geometry(self, kernel_size, stride, padding, 1, ceil_mode)
    g = grad_output / _avg_divisor(self, k, s, p, n_out, count_include_pad, divisor_override)
    h, w = self.shape[-2:]
    out = np.zeros(self.shape[:-2] + (h + p[0] + hi[0], w + p[1] + hi[1]), grad_output.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            out[..., i:i + (n_out[0] - 1) * s[0] + 1:s[0],
                j:j + (n_out[1] - 1) * s[1] + 1:s[1]] += g
    return np.ascontiguousarray(out[..., p[0]:p[0] + h, p[1]:p[1] + w])


def _adaptive_matrix(n_in: int, n_out: int, dt: np.dtype) -> np.ndarray:
    """(n_out, n_in): row i averages PyTorch's adaptive window [floor(i*n/o), ceil((i+1)*n/o))."""
    i = np.arange(n_out)
    start, end = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
    cols = np.arange(n_in)
    inside = (cols >= start[:, None]) & (cols < end[:, None])
    return (inside / (end - start)[:, None]).astype(dt)


def adaptive_avg_pool2d(a: np.ndarray, output_size: tuple) -> np.ndarray:
    # A window's mean is a mean of row means: the pooling is separable, two small matmuls.
    mh = _adaptive_matrix(a.shape[-2], output_size[0], a.dtype)
    mw = _adaptive_matrix(a.shape[-1], output_size[1], a.dtype)
    return np.einsum("...hw,ih,jw->...ij", a, mh, mw, optimize=True)


def adaptive_avg_pool2d_backward(grad_output: np.ndarray, self: np.ndarray) -> np.ndarray:
    mh = _adaptive_matrix(self.shape[-2], grad_output.shape[-2], grad_output.dtype)
    mw = _adaptive_matrix(self.shape[-1], grad_output.shape[-1], grad_output.dtype)
    return np.einsum("...ij,ih,jw->...hw", grad_output, mh, mw, optimize=True)


def constant_pad_nd(a: np.ndarray, pad: tuple, value: float = 0) -> np.ndarray:
    """``pad`` lists (before, after) pairs from the last dimension backwards; negative crops."""
    pairs = [(pad[i], pad[i + 1]) for i in range(0, len(pad), 2)][::-1]
    lo, hi = tuple(x for x, _ in pairs), tuple(y for _, y in pairs)
    return np.ascontiguousarray(_pad_or_crop(a, lo, hi, value))


# The forwards of the reflection/replication pads, upsampling, pixel (un)shuffle,
# im2col/col2im and adaptive max pooling. Index maps along one axis
# (a pad, a nearest or linear resampling) are applied as (n_out, n_in) matrices: the backward
# is the same product with the matrix transposed, so each op is one table and two directions.
def _along_axes(a: np.ndarray, mats: tuple, transpose: bool = False) -> np.ndarray:
    """``a`` with the matrix ``mats[i]`` (n_out, n_in) applied along its ``i``-th of the last
    ``len(mats)`` axes (``transpose``: the matrices' transposes, the backward direction)."""
    nd = len(mats)
    for i, m in enumerate(mats):
        ax = a.ndim - nd + i
        m = m.astype(a.dtype, copy=False)
        a = np.moveaxis(np.moveaxis(a, ax, -1) @ (m if transpose else m.T), -1, ax)
    return np.ascontiguousarray(a)


def _index_matrix(index: np.ndarray, n_in: int) -> np.ndarray:
    """(len(index), n_in): row o is one-hot at ``index[o]`` (a gather as a matrix)."""
    m = np.zeros((len(index), n_in))
    m[np.arange(len(index)), index] = 1.0
    return m


def _pad_index(n: int, lo: int, hi: int, mode: str) -> np.ndarray:
    """Where each padded position reads from: mirrored without the edge (``reflect``) or the
    nearest edge (``replicate``); negative amounts crop."""
    i = np.arange(-lo, n + hi)
    if mode == "reflect":
        period = 2 * (n - 1)
        i = np.abs(i) % period if period else np.zeros_like(i)
        return np.where(i >= n, period - i, i)
    return np.clip(i, 0, n - 1)


def _pad_maps(shape: tuple, padding: tuple, mode: str) -> list[np.ndarray]:
    """One index map per padded dimension, first dimension first (``padding`` is PyTorch's
    order: the last dimension's (left, right) first)."""
    k = len(padding) // 2
    return [_pad_index(shape[len(shape) - k + i], padding[2 * (k - 1 - i)],
                       padding[2 * (k - 1 - i) + 1], mode) for i in range(k)]


def _pad_nd(a: np.ndarray, padding: tuple, mode: str) -> np.ndarray:
    maps = _pad_maps(a.shape, padding, mode)
    return np.ascontiguousarray(a[(Ellipsis,) + np.ix_(*maps)])


def _pad_nd_backward(grad: np.ndarray, self: np.ndarray, padding: tuple, mode: str
                     ) -> np.ndarray:
    maps = _pad_maps(self.shape, padding, mode)
    mats = tuple(_index_matrix(m, n) for m, n in zip(maps, self.shape[self.ndim - len(maps):]))
    return _along_axes(grad, mats, transpose=True)


def reflection_pad(a: np.ndarray, padding: tuple = ()) -> np.ndarray:
    return _pad_nd(a, padding, "reflect")


def reflection_pad_backward(grad_output: np.ndarray, self: np.ndarray, padding: tuple = ()
                            ) -> np.ndarray:
    return _pad_nd_backward(grad_output, self, padding, "reflect")


def replication_pad(a: np.ndarray, padding: tuple = ()) -> np.ndarray:
    return _pad_nd(a, padding, "replicate")


def replication_pad_backward(grad_output: np.ndarray, self: np.ndarray, padding: tuple = ()
                             ) -> np.ndarray:
    return _pad_nd_backward(grad_output, self, padding, "replicate")


def _nearest_index(n_in: int, n_out: int, scale: Any) -> np.ndarray:
    """PyTorch's ``nearest_idx``: ``floor(o * s)`` in float32 with ``s = 1 / scale`` (or
    ``n_in / n_out``), clamped to the last input position."""
    if n_out == n_in:
        return np.arange(n_out)
    if n_out == 2 * n_in:
        return np.arange(n_out) >> 1
    s = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
    return np.minimum(np.floor(np.arange(n_out, dtype=np.float32) * s).astype(np.int64),
                      n_in - 1)


def _nearest_exact_index(n_in: int, n_out: int, scale: Any) -> np.ndarray:
    """PyTorch's ``nearest_neighbor_exact_compute_source_index``: ``floor((o + 0.5) * s)`` in
    float32 with ``s = 1 / scale`` (or ``n_in / n_out``), clamped to the last input position:
    each output reads the input whose cell holds its centre."""
    s = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
    src = ((np.arange(n_out) + 0.5) * np.float64(s)).astype(np.float32)
    return np.minimum(np.floor(src).astype(np.int64), n_in - 1)


_CUBIC_A = -0.75  # PyTorch's (and OpenCV's) cubic convolution coefficient


def _cubic_matrix(n_in: int, n_out: int, align_corners: bool, scale: Any, dt: np.dtype
                  ) -> np.ndarray:
    """(n_out, n_in) weights of PyTorch's bicubic interpolation: Keys' cubic convolution with
    ``A = -0.75`` over the four inputs around the source position (``s * o`` with
    align_corners, else ``s * (o + 0.5) - 0.5``, not clamped), the indices clamped to the
    border (so a border input takes the weights of the positions beyond it)."""
    ft = np.float32 if dt == np.float32 else np.float64
    if align_corners:
        s = ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
        src = np.arange(n_out, dtype=ft) * s
    else:
        s = ft(1.0 / scale) if scale else ft(n_in) / ft(n_out)
        src = s * (np.arange(n_out, dtype=ft) + ft(0.5)) - ft(0.5)
    i0 = np.floor(src).astype(np.int64)
    t = src - i0.astype(ft)
    a = ft(_CUBIC_A)

    def near(x: np.ndarray) -> np.ndarray:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    m = np.zeros((n_out, n_in), ft)
    rows = np.arange(n_out)
    for k, w in enumerate((far(t + 1), near(t), near(1 - t), far(2 - t))):
        np.add.at(m, (rows, np.clip(i0 - 1 + k, 0, n_in - 1)), w)
    return m


def _linear_matrix(n_in: int, n_out: int, align_corners: bool, scale: Any, dt: np.dtype
                   ) -> np.ndarray:
    """(n_out, n_in) weights of PyTorch's linear interpolation (``area_pixel_compute_*``): the
    source position ``s * o`` (align_corners) or ``max(s * (o + 0.5) - 0.5, 0)``, computed in
    the input's float type, split between its two neighbours."""
    ft = np.float32 if dt == np.float32 else np.float64
    if n_out == n_in:  # PyTorch copies, whatever the scale says
        return np.eye(n_in, dtype=ft)
    if align_corners:
        s = ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
        src = np.arange(n_out, dtype=ft) * s
    else:
        s = ft(1.0 / scale) if scale else ft(n_in) / ft(n_out)
        src = np.maximum(s * (np.arange(n_out, dtype=ft) + ft(0.5)) - ft(0.5), ft(0))
    i0 = src.astype(np.int64)
    i1 = i0 + (i0 < n_in - 1)
    l1 = src - i0.astype(ft)
    m = np.zeros((n_out, n_in), ft)
    rows = np.arange(n_out)
    np.add.at(m, (rows, i0), ft(1) - l1)
    np.add.at(m, (rows, i1), l1)
    return m


def _upsample_mats(in_sizes: tuple, output_size: tuple, scales: tuple, mode: str,
                   align_corners: bool, dt: np.dtype) -> tuple:
    if mode in ("nearest", "nearest-exact"):
        index = _nearest_index if mode == "nearest" else _nearest_exact_index
        return tuple(_index_matrix(index(n, o, s), n)
                     for n, o, s in zip(in_sizes, output_size, scales))
    weights = _cubic_matrix if mode == "cubic" else _linear_matrix
    return tuple(weights(n, o, align_corners, s, dt)
                 for n, o, s in zip(in_sizes, output_size, scales))


def upsample_nearest(a: np.ndarray, output_size: tuple = (), scales: tuple = (),
                     mode: str = "nearest") -> np.ndarray:
    """Nearest-neighbour resampling of the last ``len(output_size)`` dimensions (a gather);
    ``mode='nearest-exact'`` rounds to the nearest centre."""
    nd = len(output_size)
    index = _nearest_index if mode == "nearest" else _nearest_exact_index
    maps = [index(n, o, s) for n, o, s in zip(a.shape[a.ndim - nd:], output_size, scales)]
    return np.ascontiguousarray(a[(Ellipsis,) + np.ix_(*maps)])


def upsample_nearest_backward(grad_output: np.ndarray, output_size: tuple = (),
                              input_size: tuple = (), scales: tuple = (),
                              mode: str = "nearest") -> np.ndarray:
    nd = len(output_size)
    mats = _upsample_mats(tuple(input_size[-nd:]), output_size, scales, mode, False,
                          grad_output.dtype)
    return _along_axes(grad_output, mats, transpose=True)


def upsample_linear(a: np.ndarray, output_size: tuple = (), align_corners: bool = False,
                    scales: tuple = (), mode: str = "linear") -> np.ndarray:
    """(Bi/tri)linear resampling of the last ``len(output_size)`` dimensions, separable;
    ``mode='cubic'`` the bicubic one."""
    nd = len(output_size)
    mats = _upsample_mats(a.shape[a.ndim - nd:], output_size, scales, mode, align_corners,
                          a.dtype)
    return _along_axes(a, mats).astype(a.dtype, copy=False)


def upsample_linear_backward(grad_output: np.ndarray, output_size: tuple = (),
                             input_size: tuple = (), align_corners: bool = False,
                             scales: tuple = (), mode: str = "linear") -> np.ndarray:
    nd = len(output_size)
    mats = _upsample_mats(tuple(input_size[-nd:]), output_size, scales, mode,
                          align_corners, grad_output.dtype)
    return _along_axes(grad_output, mats, transpose=True).astype(grad_output.dtype, copy=False)


def pixel_shuffle(a: np.ndarray, upscale_factor: int = 1) -> np.ndarray:
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r)."""
    r = upscale_factor
    *lead, c, h, w = a.shape
    x = a.reshape(tuple(lead) + (c // (r * r), r, r, h, w))
    n = len(lead)
    x = x.transpose(tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return np.ascontiguousarray(x).reshape(tuple(lead) + (c // (r * r), h * r, w * r))


def pixel_unshuffle(a: np.ndarray, downscale_factor: int = 1) -> np.ndarray:
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W), the inverse of :func:`pixel_shuffle`."""
    r = downscale_factor
    *lead, c, h, w = a.shape
    x = a.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    n = len(lead)
    x = x.transpose(tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return np.ascontiguousarray(x).reshape(tuple(lead) + (c * r * r, h // r, w // r))


def _unfold_out(size: tuple, kernel: tuple, dilation: tuple, padding: tuple, stride: tuple
                ) -> tuple:
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                 for n, k, d, p, s in zip(size, kernel, dilation, padding, stride))


def im2col(a: np.ndarray, kernel_size: tuple = (), dilation: tuple = (), padding: tuple = (),
           stride: tuple = ()) -> np.ndarray:
    """(N, C, H, W) -> (N, C * kh * kw, L): every window as a column (NOTE [im2col])."""
    batched = a.ndim == 4
    x = a if batched else a[None]
    n_out = _unfold_out(x.shape[2:], kernel_size, dilation, padding, stride)
    cols = _im2col(_pad_or_crop(x, padding, padding), kernel_size, stride, dilation, n_out)
    return np.ascontiguousarray(cols if batched else cols[0])


def col2im(a: np.ndarray, output_size: tuple = (), kernel_size: tuple = (),
           dilation: tuple = (), padding: tuple = (), stride: tuple = ()) -> np.ndarray:
    """(N, C * kh * kw, L) -> (N, C, H, W): each column added back at its window (overlaps
    sum), one strided add per kernel offset."""
    batched = a.ndim == 3
    x = a if batched else a[None]
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    oh, ow = _unfold_out(output_size, kernel_size, dilation, padding, stride)
    n, c = x.shape[0], x.shape[1] // (kh * kw)
    cols = x.reshape(n, c, kh, kw, oh, ow)
    h, w = output_size
    out = np.zeros((n, c, h + 2 * ph, w + 2 * pw), a.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, i * dh:i * dh + (oh - 1) * sh + 1:sh,
                j * dw:j * dw + (ow - 1) * sw + 1:sw] += cols[:, :, i, j]
    out = np.ascontiguousarray(out[:, :, ph:ph + h, pw:pw + w])
    return out if batched else out[0]


def adaptive_max_pool2d(a: np.ndarray, output_size: tuple = ()) -> tuple[np.ndarray, np.ndarray]:
    """Each adaptive window's maximum (windows as in :func:`adaptive_avg_pool2d`) and its
    first position in the H*W plane (a NaN wins)."""
    (h, w), (oh, ow) = a.shape[-2:], output_size
    lead = a.shape[:-2]
    values = np.empty(lead + (oh, ow), a.dtype)
    index = np.empty(lead + (oh, ow), np.int64)
    for i in range(oh):
        r0, r1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        for j in range(ow):
            c0, c1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            win = a[..., r0:r1, c0:c1].reshape(lead + (-1,))
            nan = np.isnan(win) if a.dtype.kind == "f" else np.zeros(win.shape, bool)
            k = np.where(nan.any(-1), nan.argmax(-1), win.argmax(-1))
            values[..., i, j] = np.take_along_axis(win, k[..., None], -1)[..., 0]
            index[..., i, j] = (r0 + k // (c1 - c0)) * w + c0 + k % (c1 - c0)
    return values, index


# The upsampling rows' forwards, with PyTorch's argument names (its nodes save them by name).
def upsample_nearest1d(a: np.ndarray, output_size: tuple = (), scales: Any = None
                       ) -> np.ndarray:
    return upsample_nearest(a, output_size, (scales,))


def upsample_nearest1d_backward(grad_output: np.ndarray, output_size: tuple = (),
                                input_size: tuple = (), scales: Any = None) -> np.ndarray:
    return upsample_nearest_backward(grad_output, output_size, input_size, (scales,))


def upsample_nearest2d(a: np.ndarray, output_size: tuple = (), scales_h: Any = None,
                       scales_w: Any = None) -> np.ndarray:
    return upsample_nearest(a, output_size, (scales_h, scales_w))


def upsample_nearest2d_backward(grad_output: np.ndarray, output_size: tuple = (),
                                input_size: tuple = (), scales_h: Any = None,
                                scales_w: Any = None) -> np.ndarray:
    return upsample_nearest_backward(grad_output, output_size, input_size, (scales_h, scales_w))


def upsample_linear1d(a: np.ndarray, output_size: tuple = (), align_corners: bool = False,
                      scales: Any = None) -> np.ndarray:
    return upsample_linear(a, output_size, align_corners, (scales,))


def upsample_linear1d_backward(grad_output: np.ndarray, output_size: tuple = (),
                               input_size: tuple = (), align_corners: bool = False,
                               scales: Any = None) -> np.ndarray:
    return upsample_linear_backward(grad_output, output_size, input_size, align_corners,
                                    (scales,))


def upsample_bilinear2d(a: np.ndarray, output_size: tuple = (), align_corners: bool = False,
                        scales_h: Any = None, scales_w: Any = None) -> np.ndarray:
    return upsample_linear(a, output_size, align_corners, (scales_h, scales_w))


def upsample_bilinear2d_backward(grad_output: np.ndarray, output_size: tuple = (),
                                 input_size: tuple = (), align_corners: bool = False,
                                 scales_h: Any = None, scales_w: Any = None) -> np.ndarray:
    return upsample_linear_backward(grad_output, output_size, input_size, align_corners,
                                    (scales_h, scales_w))


def upsample_nearest_exact1d(a: np.ndarray, output_size: tuple = (), scales: Any = None
                             ) -> np.ndarray:
    return upsample_nearest(a, output_size, (scales,), "nearest-exact")


def upsample_nearest_exact1d_backward(grad_output: np.ndarray, output_size: tuple = (),
                                      input_size: tuple = (), scales: Any = None
                                      ) -> np.ndarray:
    return upsample_nearest_backward(grad_output, output_size, input_size, (scales,),
                                     "nearest-exact")


def upsample_nearest_exact2d(a: np.ndarray, output_size: tuple = (), scales_h: Any = None,
                             scales_w: Any = None) -> np.ndarray:
    return upsample_nearest(a, output_size, (scales_h, scales_w), "nearest-exact")


def upsample_nearest_exact2d_backward(grad_output: np.ndarray, output_size: tuple = (),
                                      input_size: tuple = (), scales_h: Any = None,
                                      scales_w: Any = None) -> np.ndarray:
    return upsample_nearest_backward(grad_output, output_size, input_size, (scales_h, scales_w),
                                     "nearest-exact")


def upsample_nearest_exact3d(a: np.ndarray, output_size: tuple = (), scales_d: Any = None,
                             scales_h: Any = None, scales_w: Any = None) -> np.ndarray:
    return upsample_nearest(a, output_size, (scales_d, scales_h, scales_w), "nearest-exact")


def upsample_nearest_exact3d_backward(grad_output: np.ndarray, output_size: tuple = (),
                                      input_size: tuple = (), scales_d: Any = None,
                                      scales_h: Any = None, scales_w: Any = None
                                      ) -> np.ndarray:
    return upsample_nearest_backward(grad_output, output_size, input_size,
                                     (scales_d, scales_h, scales_w), "nearest-exact")


def upsample_bicubic2d(a: np.ndarray, output_size: tuple = (), align_corners: bool = False,
                       scales_h: Any = None, scales_w: Any = None) -> np.ndarray:
    return upsample_linear(a, output_size, align_corners, (scales_h, scales_w), "cubic")


def upsample_bicubic2d_backward(grad_output: np.ndarray, output_size: tuple = (),
                                input_size: tuple = (), align_corners: bool = False,
                                scales_h: Any = None, scales_w: Any = None) -> np.ndarray:
    return upsample_linear_backward(grad_output, output_size, input_size, align_corners,
                                    (scales_h, scales_w), "cubic")


def upsample_trilinear3d(a: np.ndarray, output_size: tuple = (), align_corners: bool = False,
                         scales_d: Any = None, scales_h: Any = None, scales_w: Any = None
                         ) -> np.ndarray:
    return upsample_linear(a, output_size, align_corners, (scales_d, scales_h, scales_w))


def upsample_trilinear3d_backward(grad_output: np.ndarray, output_size: tuple = (),
                                  input_size: tuple = (), align_corners: bool = False,
                                  scales_d: Any = None, scales_h: Any = None,
                                  scales_w: Any = None) -> np.ndarray:
    return upsample_linear_backward(grad_output, output_size, input_size, align_corners,
                                    (scales_d, scales_h, scales_w))


def _avg_pool3d_geometry(shape: tuple, kernel_size: Any, stride: Any, padding: Any,
                         ceil_mode: bool, count_include_pad: bool, divisor_override: Any
                         ) -> tuple:
    """3-D average pooling's kernel, stride, padding, output size, right padding (for a last
    ceil_mode window) and, per output position, its divisor (as :func:`_avg_divisor`)."""
    k = _per_dim(kernel_size, 3)
    st = tuple(stride) if isinstance(stride, (tuple, list)) else (stride,)
    s = _per_dim(st, 3) if st and st[0] is not None else k
    p = _per_dim(padding, 3)
    n_out = tuple(pool_out_size(n, kk, ss, pp, 1, ceil_mode)
                  for n, kk, ss, pp in zip(shape, k, s, p))
    hi = tuple(max((o - 1) * ss + kk - n - pp, 0) for o, ss, kk, n, pp in zip(n_out, s, k, shape,
                                                                             p))
    if divisor_override:
        return k, s, p, n_out, hi, divisor_override
    sizes = []
    for n, kk, ss, pp, o in zip(shape, k, s, p, n_out):
        start = np.arange(o) * ss - pp
        end = np.minimum(start + kk, n + pp)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, n)
        sizes.append(end - start)
    divisor = sizes[0][:, None, None] * sizes[1][None, :, None] * sizes[2][None, None, :]
    return k, s, p, n_out, hi, divisor


def _window_slices(offset: tuple, n_out: tuple, stride: tuple) -> tuple:
    """The positions kernel offset ``offset`` reads for every output position: strided."""
    return (Ellipsis,) + tuple(slice(o, o + (n - 1) * s + 1, s)
                               for o, n, s in zip(offset, n_out, stride))


def avg_pool3d(a: np.ndarray, kernel_size: Any, stride: Any = (), padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: Any = None) -> np.ndarray:
    """The mean of each window of the last three dimensions: one strided add per kernel
    offset."""
    k, s, p, n_out, hi, divisor = _avg_pool3d_geometry(
        a.shape[-3:], kernel_size, stride, padding, ceil_mode, count_include_pad,
        divisor_override)
    padded = _pad_or_crop(a, p, hi)
    out = np.zeros(a.shape[:-3] + n_out, np.result_type(a.dtype, np.float32))
    for offset in np.ndindex(*k):
        out += padded[_window_slices(offset, n_out, s)]
    return (out / divisor).astype(a.dtype, copy=False)


def avg_pool3d_backward(grad_output: np.ndarray, self: np.ndarray, kernel_size: Any,
                        stride: Any = (), padding: Any = 0, ceil_mode: bool = False,
                        count_include_pad: bool = True, divisor_override: Any = None
                        ) -> np.ndarray:
    """Each output gradient, divided like its window's sum, spread over the window."""
    k, s, p, n_out, hi, divisor = _avg_pool3d_geometry(
        self.shape[-3:], kernel_size, stride, padding, ceil_mode, count_include_pad,
        divisor_override)
    g = grad_output / divisor
    d, h, w = self.shape[-3:]
    out = np.zeros(self.shape[:-3] + (d + p[0] + hi[0], h + p[1] + hi[1], w + p[2] + hi[2]),
                   grad_output.dtype)
    for offset in np.ndindex(*k):
        out[_window_slices(offset, n_out, s)] += g
    return np.ascontiguousarray(out[..., p[0]:p[0] + d, p[1]:p[1] + h, p[2]:p[2] + w])
