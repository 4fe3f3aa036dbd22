"""Forwards of the reduction rows: extrema, products, variance, norms, logsumexp, cumulative
ops, sorting and selection (PyTorch's CPU order), statistics and counts."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from gradviz.ops._kernels.common import arr
from gradviz.ops._kernels.shape import slice_dim


def _axis(dim: Any, a: np.ndarray) -> Any:
    """NumPy's ``axis`` for PyTorch's ``dim``: None for all dims, and for a 0-d tensor, whose
    dim 0 (or -1) PyTorch accepts and reduces over nothing."""
    return None if dim is None or dim == () or a.ndim == 0 else dim


def amax(a: np.ndarray, dim: tuple = (), keepdim: bool = False) -> np.ndarray:
    return np.asarray(np.amax(a, axis=_axis(dim, a), keepdims=keepdim))


def amin(a: np.ndarray, dim: tuple = (), keepdim: bool = False) -> np.ndarray:
    return np.asarray(np.amin(a, axis=_axis(dim, a), keepdims=keepdim))


def max_dim(a: np.ndarray, dim: int, keepdim: bool = False) -> tuple[np.ndarray, np.ndarray]:
    return _select_dim(a, dim, keepdim, np.argmax)


def min_dim(a: np.ndarray, dim: int, keepdim: bool = False) -> tuple[np.ndarray, np.ndarray]:
    return _select_dim(a, dim, keepdim, np.argmin)


def _select_dim(a: np.ndarray, dim: int, keepdim: bool, arg: Any) -> tuple:
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    idx = np.expand_dims(arg(a, axis=dim), dim)
    values = np.take_along_axis(a, idx, axis=dim)
    if not keepdim:
        values, idx = np.squeeze(values, dim), np.squeeze(idx, dim)
    return values, idx.astype(np.int64)


def prod(a: np.ndarray, dim: int | None = None, keepdim: bool = False) -> np.ndarray:
    out = np.prod(a, axis=_axis(dim, a), keepdims=keepdim)
    if a.dtype.kind in "biu":
        out = out.astype(np.int64)  # PyTorch: integer and bool products are int64
    return np.asarray(out)


def var(a: np.ndarray, dim: tuple | None = None, correction: float | None = None,
        keepdim: bool = False, _name: str = "var") -> np.ndarray:
    ddof = 1 if correction is None else correction
    dim = _axis(dim, a)
    n = a.size if dim is None else int(np.prod([a.shape[d] for d in dim]))
    if n - ddof <= 0:  # PyTorch's warning instead of NumPy's
        warnings.warn(f"{_name}(): degrees of freedom is <= 0. Correction should be strictly "
                      "less than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(np.var(a, axis=dim, ddof=ddof, keepdims=keepdim))


def std(a: np.ndarray, dim: tuple | None = None, correction: float | None = None,
        keepdim: bool = False) -> np.ndarray:
    return np.sqrt(var(a, dim, correction, keepdim, "std"))


def logsumexp(a: np.ndarray, dim: tuple, keepdim: bool = False) -> np.ndarray:
    a = a if a.dtype.kind == "f" else a.astype(np.float64)
    if a.ndim == 0:
        return a.copy()
    if a.size == 0:
        return np.asarray(np.log(np.sum(np.exp(a), axis=dim, keepdims=keepdim)))
    m = np.amax(a, axis=dim, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    out = np.log(np.sum(np.exp(a - m), axis=dim, keepdims=True)) + m
    return np.asarray(out if keepdim else np.squeeze(out, dim))


def vector_norm(a: np.ndarray, ord: float = 2, dim: tuple | None = None,  # noqa: A002
                keepdim: bool = False) -> np.ndarray:
    x = np.abs(a)
    dim = _axis(dim, a)
    if ord in (math.inf, -math.inf):  # max and min have no identity: nothing to reduce raises
        text = f"linalg.vector_norm cannot compute the {ord} norm on "
        if dim is None and not x.size:
            raise RuntimeError(text + "an empty tensor because the operation does not have an "
                               "identity")
        for d in () if dim is None else np.atleast_1d(dim):
            if not x.shape[d]:
                raise RuntimeError(text + f"the dimension {d}because this dimension is "
                                   "empty and the operation does not have an identity")
    if ord == math.inf:
        out = np.amax(x, axis=dim, keepdims=keepdim)
    elif ord == -math.inf:
        out = np.amin(x, axis=dim, keepdims=keepdim)
    elif ord == 0:
        out = np.sum(x != 0, axis=dim, keepdims=keepdim).astype(a.dtype)
    elif ord == 1:
        out = np.sum(x, axis=dim, keepdims=keepdim)
    elif ord == 2:
        out = np.sqrt(np.sum(x * x, axis=dim, keepdims=keepdim))
    else:
        out = np.sum(x ** ord, axis=dim, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(out, dtype=a.dtype)


def sum_all(a):
    return sum_dim(a)


def sum_dim(a, dim=None, keepdim=False):
    return np.asarray(np.sum(a, axis=_axis(dim, a), keepdims=keepdim))


def mean_all(a):
    return mean_dim(a)


def mean_dim(a, dim=None, keepdim=False):
    return np.asarray(np.mean(a, axis=_axis(dim, a), keepdims=keepdim))


def cumsum(a, dim):
    if a.ndim == 0:
        return a.astype(np.int64) if a.dtype.kind in "iub" else a.copy()
    out = np.cumsum(a, axis=dim)
    return out.astype(np.int64) if a.dtype.kind in "iub" else out


def max_all(a):
    return amax(a)


def min_all(a):
    return amin(a)


def prod_all(a):
    return prod(a)


# Sorting and selection order as PyTorch's CPU kernels: NaN counts as the largest value (last in
# ascending order, first in descending order), and equal values keep their input order.
def _order(a: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """Indices that sort ``a`` along ``dim``, stably, NaN largest."""
    if not descending:
        return np.argsort(a, axis=dim, kind="stable")
    # Descending and still stable: sort the reversed array ascending and read it backwards.
    n = a.shape[dim]
    rev = np.flip(np.argsort(np.flip(a, dim), axis=dim, kind="stable"), dim)
    return (n - 1) - rev


def sort(a: np.ndarray, dim: int = -1, descending: bool = False) -> tuple:
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    idx = _order(a, dim, descending)
    return np.take_along_axis(a, idx, axis=dim), idx.astype(np.int64)


def sort_stable(a: np.ndarray, stable: Any = None, dim: int = -1, descending: bool = False
                ) -> tuple:
    return sort(a, dim, descending)  # gradviz's sort is always stable


def topk(a: np.ndarray, k: int, dim: int = -1, largest: bool = True, sorted: bool = True  # noqa: A002
         ) -> tuple:
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    idx = _order(a, dim, largest)
    idx = slice_dim(idx, dim, 0, k)
    return np.take_along_axis(a, idx, axis=dim), idx.astype(np.int64)


def kthvalue(a: np.ndarray, k: int, dim: int = -1, keepdim: bool = False) -> tuple:
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    idx = slice_dim(_order(a, dim, False), dim, k - 1, k)
    values = np.take_along_axis(a, idx, axis=dim)
    if not keepdim:
        values, idx = np.squeeze(values, dim), np.squeeze(idx, dim)
    return values, idx.astype(np.int64)


def median(a: np.ndarray) -> np.ndarray:
    """The lower of the two middle values; NaN if any element is NaN (or there are none)."""
    flat = a.reshape(-1)
    if flat.size == 0:
        # PyTorch's NaN, cast to an integer dtype as x86 casts it: the type's minimum.
        return np.asarray(np.nan if a.dtype.kind == "f" else np.iinfo(a.dtype).min, a.dtype)
    if a.dtype.kind == "f" and np.isnan(flat).any():
        return np.asarray(np.nan, a.dtype)
    return np.asarray(np.sort(flat, kind="stable")[(flat.size - 1) // 2])


def median_dim(a: np.ndarray, dim: int, keepdim: bool = False) -> tuple:
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    n = a.shape[dim]
    idx = _order(a, dim, False)
    pos = np.full(np.delete(a.shape, dim), (n - 1) // 2)
    if a.dtype.kind == "f":
        # A slice with NaN has median NaN, at its first NaN (NaNs sort last, in input order).
        nans = np.isnan(a).sum(axis=dim)
        pos = np.where(nans > 0, n - nans, pos)
    idx = np.take_along_axis(idx, np.expand_dims(pos, dim), axis=dim)
    values = np.take_along_axis(a, idx, axis=dim)
    if not keepdim:
        values, idx = np.squeeze(values, dim), np.squeeze(idx, dim)
    return values, idx.astype(np.int64)


def nanmedian(a: np.ndarray) -> np.ndarray:
    """The lower of the two middle values of the elements that are not NaN (NaN if none)."""
    if a.dtype.kind != "f":
        return median(a)  # no NaN to skip
    flat = a.reshape(-1)
    flat = flat[~np.isnan(flat)]
    if flat.size == 0:
        return np.asarray(np.nan, a.dtype)
    return np.asarray(np.sort(flat, kind="stable")[(flat.size - 1) // 2])


def nanmedian_dim(a: np.ndarray, dim: int, keepdim: bool = False) -> tuple:
    """``median_dim`` skipping NaN: the lower middle of each slice's numbers, at its index (a
    slice of NaN only gives NaN at its first index; PyTorch's index there is whatever its
    selection algorithm leaves, not a documented choice)."""
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    idx = _order(a, dim, False)  # NaNs sort last
    numbers = a.shape[dim] - (np.isnan(a).sum(axis=dim) if a.dtype.kind == "f" else 0)
    pos = np.maximum(numbers - 1, 0) // 2
    idx = np.take_along_axis(idx, np.expand_dims(pos, dim), axis=dim)
    values = np.take_along_axis(a, idx, axis=dim)
    if not keepdim:
        values, idx = np.squeeze(values, dim), np.squeeze(idx, dim)
    return values, idx.astype(np.int64)


def cumprod(a, dim):
    if a.ndim == 0:
        return a.astype(np.int64) if a.dtype.kind in "iub" else a.copy()
    out = np.cumprod(a, axis=dim)
    return out.astype(np.int64) if a.dtype.kind in "iub" else out


def _cum_extreme(a: np.ndarray, dim: int, better: Any) -> tuple:
    """Running max/min along ``dim`` with the index it came from: a later equal value takes the
    index over, and NaN, once met, stays (as PyTorch's cummax/cummin)."""
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    x = np.moveaxis(a, dim, 0)
    values, idx = np.empty_like(x), np.zeros(x.shape, np.int64)
    for i in range(x.shape[0]):
        if i == 0:
            values[0], idx[0] = x[0], 0
            continue
        cur, new = values[i - 1], x[i]
        if x.dtype.kind == "f":
            take = np.isnan(new) | (~np.isnan(cur) & better(new, cur))
        else:
            take = better(new, cur)
        values[i] = np.where(take, new, cur)
        idx[i] = np.where(take, i, idx[i - 1])
    return np.moveaxis(values, 0, dim), np.moveaxis(idx, 0, dim)


def cummax(a: np.ndarray, dim: int) -> tuple:
    return _cum_extreme(a, dim, np.greater_equal)


def cummin(a: np.ndarray, dim: int) -> tuple:
    return _cum_extreme(a, dim, np.less_equal)


def var_mean(a: np.ndarray, dim: tuple | None = None, correction: float | None = None,
             keepdim: bool = False) -> tuple:
    return (var(a, dim, correction, keepdim, "var_mean"),
            np.asarray(np.mean(a, axis=_axis(dim, a), keepdims=keepdim)))


def std_mean(a: np.ndarray, dim: tuple | None = None, correction: float | None = None,
             keepdim: bool = False) -> tuple:
    v, m = var_mean(a, dim, correction, keepdim)
    return np.sqrt(v), m


def logcumsumexp(a: np.ndarray, dim: int = 0) -> np.ndarray:
    if a.ndim == 0:
        return a.copy()
    # A running log-sum-exp, shifted by the running maximum so that nothing overflows.
    out = np.empty_like(a)
    src, dst = np.moveaxis(a, dim, 0), np.moveaxis(out, dim, 0)
    acc = src[0].copy()
    dst[0] = acc
    with np.errstate(invalid="ignore", over="ignore"):
        for i in range(1, src.shape[0]):
            hi, lo = np.maximum(acc, src[i]), np.minimum(acc, src[i])
            # exp(lo - hi) is NaN only when both are -inf (or inf): then the sum is hi
            acc = np.where(np.isneginf(hi) | (hi == lo) & np.isinf(hi), hi,
                           hi + np.log1p(np.exp(lo - hi)))
            dst[i] = acc
    return out


def nansum(a: np.ndarray, dim: tuple | None = None, keepdim: bool = False) -> np.ndarray:
    out = np.nansum(a, axis=_axis(dim, a), keepdims=keepdim)
    return np.asarray(out).astype(np.int64 if a.dtype.kind in "biu" else a.dtype, copy=False)


def aminmax(a: np.ndarray, dim: int | None = None, keepdim: bool = False) -> tuple:
    axis = None if dim is None or a.ndim == 0 else dim
    if dim is None and keepdim and a.ndim:  # all dims kept as 1s
        return (np.amin(a, axis=None, keepdims=True), np.amax(a, axis=None, keepdims=True))
    return (np.asarray(np.amin(a, axis=axis, keepdims=keepdim)),
            np.asarray(np.amax(a, axis=axis, keepdims=keepdim)))


def mode(a: np.ndarray, dim: int = -1, keepdim: bool = False) -> tuple:
    """The most frequent value along ``dim`` (the smallest of equally frequent ones, as
    PyTorch's sort-based kernel gives) and the index of its last occurrence."""
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    moved = np.moveaxis(a, dim, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    values = np.empty(flat.shape[0], a.dtype)
    indices = np.empty(flat.shape[0], np.int64)
    for r, row in enumerate(flat):
        uniq, counts = np.unique(row, return_counts=True)
        v = uniq[np.argmax(counts)]  # np.unique sorts: argmax takes the smallest of ties
        values[r] = v
        indices[r] = np.flatnonzero(row == v)[-1]
    shape = moved.shape[:-1]
    values, indices = values.reshape(shape), indices.reshape(shape)
    if keepdim:
        values, indices = np.expand_dims(values, dim), np.expand_dims(indices, dim)
    return values, indices


def count_nonzero(a: np.ndarray, dim: tuple | None = None) -> np.ndarray:
    return np.asarray(np.count_nonzero(a, axis=_axis(dim, a))).astype(np.int64)


def bincount(a: np.ndarray, weights: Any = None, minlength: int = 0) -> np.ndarray:
    w = None if weights is None else arr(weights)
    out = np.bincount(a, weights=w, minlength=minlength)
    if w is None:
        return out.astype(np.int64)
    # PyTorch: float weights keep their type; anything else counts in float64
    return out.astype(w.dtype if w.dtype.kind == "f" else np.float64)


def histc(a: np.ndarray, bins: int = 100, min: float = 0, max: float = 0  # noqa: A002
          ) -> np.ndarray:
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:  # PyTorch widens an empty range by 1 on each side
        lo, hi = lo - 1, hi + 1
    inside = a[(a >= lo) & (a <= hi)].astype(np.float64)
    # bin i holds [lo + i w, lo + (i+1) w); the top edge belongs to the last bin
    idx = np.minimum(((inside - lo) * bins / (hi - lo)).astype(np.int64), bins - 1)
    return np.bincount(idx, minlength=bins).astype(a.dtype)
