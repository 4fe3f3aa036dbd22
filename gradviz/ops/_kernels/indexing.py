"""Forwards of the indexing rows: advanced indexing, gather and scatter, index_*, masks,
embedding, put and take, unique, searchsorted."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gradviz.ops._kernels.common import arr


def np_index(indices: tuple) -> tuple:
    """A PyTorch index list (tensors or None per leading dimension) as a NumPy index."""
    return tuple(slice(None) if i is None else arr(i) for i in indices)


def _int_index(indices: tuple) -> tuple:
    """Like :func:`np_index`, with boolean masks turned into their nonzero positions (what
    ``np.add.at`` needs)."""
    out: list[Any] = []
    for i in indices:
        a = None if i is None else arr(i)
        if a is not None and a.dtype == np.bool_:
            out.extend(np.nonzero(a))
        else:
            out.append(slice(None) if a is None else a)
    return tuple(out)


def index(a: np.ndarray, indices: tuple) -> np.ndarray:
    return np.asarray(a[np_index(indices)])


def index_put(a: np.ndarray, values: Any, indices: tuple, accumulate: bool = False
              ) -> np.ndarray:
    out = a.copy()
    if accumulate:
        idx = _int_index(indices)
        np.add.at(out, idx, np.broadcast_to(values, out[idx].shape))
    else:
        out[np_index(indices)] = values
    return out


def _grid(index: np.ndarray, dim: int) -> tuple:
    index = index.reshape(index.shape or (1,))  # a 0-d index: one position along dim
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


def gather(a: np.ndarray, dim: int, index: Any, sparse_grad: bool = False) -> np.ndarray:
    idx = arr(index)
    if idx.size == 0:
        return np.zeros(idx.shape, a.dtype)
    if a.ndim == 0:  # a 0-d tensor has one element, at index 0 of its (only) dim
        return np.full(idx.shape, a, a.dtype)
    return np.asarray(a[_grid(idx, dim)]).reshape(idx.shape)


def scatter(a: np.ndarray, src: Any, dim: int, index: Any) -> np.ndarray:
    idx = arr(index)
    if a.ndim == 0:  # one element, at index 0 of its (only) dim: src's first, if indexed
        return np.asarray(np.reshape(src, -1)[0] if idx.size else a, dtype=a.dtype)
    out = a.copy()
    if idx.size == 0:
        return out
    if np.ndim(src):
        src = np.reshape(src, np.shape(src) or (1,))[tuple(slice(0, n) for n in idx.shape or (1,))]
    out[_grid(idx, dim)] = src
    return out


def scatter_value(a: np.ndarray, dim: int, index: Any, value: Any) -> np.ndarray:
    return scatter(a, value, dim, index)


def scatter_add(a: np.ndarray, src: np.ndarray, dim: int, index: Any) -> np.ndarray:
    idx = arr(index)
    if a.ndim == 0:  # every index is 0: the first idx.size values of src add up there
        return np.asarray(a + np.sum(np.reshape(src, -1)[:idx.size]), dtype=a.dtype)
    out = a.copy()
    if idx.size == 0:
        return out
    src = np.reshape(src, np.shape(src) or (1,))
    np.add.at(out, _grid(idx, dim), src[tuple(slice(0, n) for n in idx.shape or (1,))])
    return out


def index_select(a: np.ndarray, dim: int, index: Any) -> np.ndarray:
    if not a.ndim:  # a 0-d input stays 0-d (its one index is 0: checked before)
        return a.copy()
    return np.take(a, arr(index).reshape(-1), axis=dim)


def masked_fill(a: np.ndarray, mask: Any, value: Any) -> np.ndarray:
    return np.where(arr(mask), value, a).astype(a.dtype, copy=False)


def masked_fill_tensor(a: np.ndarray, value: np.ndarray, mask: Any) -> np.ndarray:
    return masked_fill(a, mask, value)


def embedding(weight: np.ndarray, indices: Any, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> np.ndarray:
    return weight[arr(indices)]


def where(a, b, condition):
    return np.where(arr(condition), a, b)


def take(a: np.ndarray, index: Any) -> np.ndarray:
    return np.take(a.reshape(-1), arr(index))


def masked_select(a: np.ndarray, mask: Any) -> np.ndarray:
    a_b, m_b = np.broadcast_arrays(a, arr(mask))
    return a_b[m_b]


def nonzero(a: np.ndarray) -> np.ndarray:
    return np.argwhere(a).astype(np.int64)


def _dim_first(a: np.ndarray, dim: int) -> np.ndarray:
    """``a`` with ``dim`` moved first (a view; a 0-d tensor as one element)."""
    return a.reshape(1) if a.ndim == 0 else np.moveaxis(a, dim, 0)


def index_add(a: np.ndarray, source: np.ndarray, dim: int = 0, index: Any = None,
              alpha: Any = 1, source_dim: int = 0) -> np.ndarray:
    out = a.copy()
    src = _dim_first(np.asarray(source), dim) if np.ndim(source) else np.reshape(source, 1)
    np.add.at(_dim_first(out, dim), arr(index).reshape(-1), (src * alpha).astype(a.dtype))
    return out


def index_copy(a: np.ndarray, source: np.ndarray, dim: int = 0, index: Any = None,
               source_dim: int = 0) -> np.ndarray:
    out = a.copy()
    src = _dim_first(np.asarray(source), dim) if np.ndim(source) else np.reshape(source, 1)
    _dim_first(out, dim)[arr(index).reshape(-1)] = src  # a repeated index: the last copy wins
    return out


def index_fill(a: np.ndarray, dim: int = 0, index: Any = None, value: Any = 0) -> np.ndarray:
    out = a.copy()
    _dim_first(out, dim)[arr(index).reshape(-1)] = value
    return out


def index_fill_tensor(a: np.ndarray, value: np.ndarray, dim: int = 0, index: Any = None
                      ) -> np.ndarray:
    return index_fill(a, dim, index, value)


def _scatter_count(shape: tuple, dim: int, idx: np.ndarray) -> np.ndarray:
    """How many elements of ``src`` scatter_reduce sends to each position of the result."""
    # a 0-d result is counted as a 1-D tensor of one, as scatter_reduce runs it
    count = np.zeros(shape or (1,), np.int64)
    np.add.at(count, _grid(idx if shape else idx.reshape(1), dim), 1)
    return count.reshape(shape)


def scatter_reduce(a: np.ndarray, src: np.ndarray, dim: int = 0, index: Any = None,
                   reduce: str = "sum", include_self: bool = True) -> np.ndarray:
    idx = arr(index)
    shape = a.shape
    if a.ndim == 0:  # one element: as a 1-D tensor of one, reshaped back at the end
        a, src, idx = a.reshape(1), np.reshape(src, 1), idx.reshape(1)
    grid = _grid(idx, dim)
    part = src[tuple(slice(0, n) for n in idx.shape)]
    out = a.copy()
    if reduce in ("sum", "mean"):
        if not include_self:
            out[grid] = 0
        np.add.at(out, grid, part)
        if reduce == "mean":
            n = _scatter_count(a.shape, dim, idx) + (1 if include_self else 0)
            n = np.maximum(n, 1)
            out = (out // n if out.dtype.kind in "iu" else out / n).astype(a.dtype)
            out = np.where(_scatter_count(a.shape, dim, idx) > 0, out, a)
        return out.reshape(shape)
    ufunc = {"prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[reduce]
    if not include_self:  # start from the reduction's identity where anything arrives
        if reduce == "prod":
            out[grid] = 1
        else:
            big = np.inf if a.dtype.kind == "f" else np.iinfo(a.dtype).max
            out[grid] = -big if reduce == "amax" else big
    ufunc.at(out, grid, part)
    return out.reshape(shape)


def put(a: np.ndarray, source: np.ndarray, index: Any = None, accumulate: bool = False
        ) -> np.ndarray:
    flat = a.reshape(-1).copy()
    idx = arr(index).reshape(-1)
    values = np.asarray(source).reshape(-1)
    if accumulate:
        np.add.at(flat, idx, values)
    else:
        flat[idx] = values
    return flat.reshape(a.shape)


def searchsorted(sorted_sequence: np.ndarray, values: Any, right: bool = False,
                 out_int32: bool = False, sorter: Any = None) -> np.ndarray:
    """PyTorch's searchsorted: a 1-D ``sorted_sequence`` for all values, or one row per leading
    index (rows searched separately)."""
    side = "right" if right else "left"
    seq, vals = np.asarray(sorted_sequence), np.asarray(values)
    order = None if sorter is None else arr(sorter)
    if seq.ndim == 1:
        out = np.searchsorted(seq, vals, side=side, sorter=order)
    else:
        # The row count spelled out, not -1: an empty sequence has rows of length 0.
        n = math.prod(seq.shape[:-1])
        rows_s = seq.reshape(n, seq.shape[-1])
        rows_v = vals.reshape(n, vals.shape[-1])
        rows_o = None if order is None else order.reshape(n, order.shape[-1])
        out = np.zeros(rows_v.shape, dtype=np.int64)
        for i, (s, v) in enumerate(zip(rows_s, rows_v, strict=True)):
            out[i] = np.searchsorted(s, v, side=side, sorter=None if rows_o is None else rows_o[i])
        out = out.reshape(vals.shape)
    return np.asarray(out).astype(np.int32 if out_int32 else np.int64)


def bucketize(a: np.ndarray, boundaries: Any, out_int32: bool = False, right: bool = False
              ) -> np.ndarray:
    return searchsorted(arr(boundaries), a, right, out_int32)


def unique(a: np.ndarray, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> tuple:
    """``(values, inverse, counts)``, always sorted (as PyTorch's CPU kernel gives them)."""
    if dim is None:
        values, inverse, counts = np.unique(a.reshape(-1), return_inverse=True,
                                            return_counts=True)
        inverse = inverse.reshape(a.shape)
    else:
        values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True,
                                            axis=dim)
        inverse = inverse.reshape(-1)
    return values, inverse.astype(np.int64), counts.astype(np.int64)


def unique_consecutive(a: np.ndarray, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> tuple:
    """``(values, inverse, counts)``: each run of equal elements (or, with ``dim``, of equal
    slices along ``dim``) kept once, in order; NaN equals nothing, so each NaN is a run."""
    x = a.reshape(-1) if dim is None else np.moveaxis(a, dim, 0)
    n = x.shape[0]
    if dim is not None and n and 0 in x.shape:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    rows = x.reshape(n, int(np.prod(x.shape[1:])))
    starts = np.ones(n, bool)
    starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)  # a run starts where a slice changes
    values = x[starts] if dim is None else np.moveaxis(x[starts], 0, dim)
    inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), n))
    return (values, inverse.reshape(a.shape if dim is None else (n,)).astype(np.int64),
            counts.astype(np.int64))
