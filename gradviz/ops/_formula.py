"""Helpers that backward formulas use, working on NumPy arrays *and* on tensors.

NOTE [dual-mode formulas]: a plain ``backward()`` runs every formula on raw NumPy arrays, which
keeps the engine close to hand-written NumPy speed. Under ``create_graph=True`` the engine hands
the same formulas tensors instead, so each operation they perform is itself recorded and can be
differentiated again. Formulas therefore use only Python operators (``+ - * / ** @``, comparisons,
``.reshape``) and the helpers below, which pick the NumPy or the gradviz version by type.
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np

from gradviz.tensor import Tensor


def _is_t(x: Any) -> bool:
    return isinstance(x, Tensor)


def expand(g: Any, shape: tuple[int, ...]) -> Any:
    """Broadcast ``g`` to ``shape`` (``Tensor.expand``)."""
    if _is_t(g):
        return g.expand(shape)
    return np.broadcast_to(g, shape)


def sum_to(g: Any, shape: tuple[int, ...]) -> Any:
    """Undo broadcasting: sum ``g`` down to ``shape``. The one place gradients are reduced."""
    gshape = g.shape
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1)
    if _is_t(g):
        return (g.sum(axes, keepdim=True) if axes else g).reshape(shape)
    return np.asarray(g.sum(axis=axes, keepdims=True)).reshape(shape)


def unsqueeze_dims(g: Any, dims: tuple[int, ...]) -> Any:
    """Re-insert reduced dimensions (``dims`` are non-negative, in the input's numbering)."""
    if _is_t(g):
        for d in sorted(dims):
            g = g.unsqueeze(d)
        return g
    return np.expand_dims(g, dims)


def transpose(g: Any, dim0: int, dim1: int) -> Any:
    if _is_t(g):
        return g.transpose(dim0, dim1)
    return np.swapaxes(g, dim0, dim1) if g.ndim else g


def t(g: Any) -> Any:
    return g.t() if _is_t(g) else g.T


def permute(g: Any, dims: tuple[int, ...]) -> Any:
    return g.permute(dims) if _is_t(g) else np.transpose(g, dims)


def log(x: Any) -> Any:
    if _is_t(x):
        return x.log()
    if isinstance(x, (int, float)):
        return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)
    return np.log(x)


def where(cond: Any, a: Any, b: Any) -> Any:
    if _is_t(cond) or _is_t(a) or _is_t(b):
        from gradviz.ops.functional import where as gv_where

        return gv_where(cond, a, b)
    return np.where(cond, a, b)


def zeros_like(x: Any) -> Any:
    if _is_t(x):
        from gradviz.ops.functional import zeros_like as gv_zeros_like

        return gv_zeros_like(x)
    return np.zeros(np.shape(x), dtype=np.result_type(x))


def to_dtype(g: Any, dt: np.dtype) -> Any:
    """Cast a gradient to its input's dtype (PyTorch casts in ``validate_outputs``)."""
    if _is_t(g):
        return g.to(dt) if g._data.dtype != dt else g
    return g.astype(dt, copy=False) if g.dtype != dt else g


# -- helpers of the op library (gradviz/ops/functional/, "The op library") ----------------------
# Each picks the gradviz op for tensors (so create_graph records it) and NumPy for arrays.

def _F() -> Any:
    from gradviz.ops import functional

    return functional


def is_tensor(x: Any) -> bool:
    """True under create_graph (formulas get tensors), False in a plain backward (arrays)."""
    return _is_t(x)


def data(x: Any) -> Any:
    """The NumPy value of a tensor or array: for constants formulas compute with NumPy."""
    return x._data if _is_t(x) else x


def dtype_of(x: Any) -> np.dtype:
    return x._data.dtype if _is_t(x) else np.result_type(x)


# The zeros standing in for gradients that never came (new_zeros), by id while they live: a
# formula that must tell them from computed zeros (svd's, where PyTorch sees an undefined
# gradient) asks is_missing. Weak: an id is never taken for another array's while it is here.
_MISSING: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()


def new_zeros(shape: tuple, dt: np.dtype, as_tensor: bool) -> Any:
    """Zeros standing in for an output's missing gradient (materialized, as PyTorch does)."""
    z = np.zeros(shape, dt)
    out = Tensor._make(z) if as_tensor else z
    _MISSING[id(out)] = out
    return out


def is_missing(g: Any) -> bool:
    """Whether ``g`` stands in for a gradient that never came (:func:`new_zeros`): what PyTorch
    passes to a formula as an undefined tensor, not a gradient that happens to be zero."""
    return _MISSING.get(id(g)) is g


def flip(g: Any, dims: tuple) -> Any:
    """Reverse ``g`` along ``dims`` (``Tensor.flip``); a 0-d value is its own flip."""
    if _is_t(g):
        return _F().flip(g, dims)
    return np.flip(g, dims) if np.ndim(g) else g


def cumsum(g: Any, dim: int) -> Any:
    if _is_t(g):
        return _F().cumsum(g, dim)
    return np.cumsum(g, axis=dim) if np.ndim(g) else g


def floor_divide_constant(a: Any, b: Any) -> Any:
    """``floor(a / b)`` as a constant: its derivative is zero wherever it exists, so under
    create_graph it is recorded as nothing (PyTorch's remainder formula reads it the same way)."""
    if _is_t(a) or _is_t(b):
        from gradviz.tensor import Tensor

        return Tensor._make(np.floor_divide(data(a), data(b)))
    return np.floor_divide(a, b)


def sum(g: Any, dims: tuple, keepdim: bool = False) -> Any:  # noqa: A001
    """Sum over ``dims`` (none of a 0-d ``g``, whose dim 0 PyTorch accepts)."""
    dims = dims if len(g.shape) else ()
    if _is_t(g):
        return g.sum(dims, keepdim=keepdim) if dims else g
    if type(g) is np.ndarray:  # NOTE [perf]: the ufunc's reduce, np.sum without its wrapper
        return np.asarray(_ADD_REDUCE(g, axis=dims, keepdims=keepdim))
    return np.asarray(np.sum(g, axis=dims, keepdims=keepdim))


_ADD_REDUCE = np.add.reduce


def mean(g: Any, dims: tuple) -> Any:
    """Mean over ``dims``, keeping them."""
    if _is_t(g):
        return g.mean(dims, keepdim=True)
    return np.mean(g, axis=dims, keepdims=True)


def sign(x: Any) -> Any:
    return x.sign() if _is_t(x) else np.sign(x)


def abs(x: Any) -> Any:  # noqa: A001
    return x.abs() if _is_t(x) else np.abs(x)


def exp(x: Any) -> Any:
    return x.exp() if _is_t(x) else np.exp(x)


def sin(x: Any) -> Any:
    return x.sin() if _is_t(x) else np.sin(x)


def cos(x: Any) -> Any:
    return x.cos() if _is_t(x) else np.cos(x)


def tanh(x: Any) -> Any:
    return x.tanh() if _is_t(x) else np.tanh(x)


def sigmoid(x: Any) -> Any:
    from gradviz.ops import _kernels

    return x.sigmoid() if _is_t(x) else _kernels.sigmoid(x)


def erf(x: Any) -> Any:
    from gradviz.ops import _kernels

    return _F().erf(x) if _is_t(x) else _kernels.erf(x)


def softplus(x: Any) -> Any:
    """``log(1 + exp(x))``."""
    from gradviz.ops import _kernels
    from gradviz.ops.dispatch import dispatch
    from gradviz.ops.opinfo import OPS

    return dispatch(OPS["softplus"], x, beta=1, threshold=20) if _is_t(x) else _kernels.softplus(x)


def clamp_min(x: Any, v: float) -> Any:
    return _F().clamp(x, min=v) if _is_t(x) else np.maximum(x, v)


def masked_fill(g: Any, mask: Any, value: float) -> Any:
    """``value`` where ``mask`` (an array or a bool tensor) holds, else ``g``."""
    if _is_t(g):
        return _F().masked_fill(g, mask if _is_t(mask) else Tensor._make(np.asarray(mask)),
                                value)
    return np.where(data(mask), value, g).astype(g.dtype, copy=False)


def select(g: Any, dim: int, index: int) -> Any:
    from gradviz.ops import _kernels

    return _F().select(g, dim, index) if _is_t(g) else _kernels.select(g, dim, index)


def slice_dim(g: Any, dim: int, start: int, end: int, step: int = 1) -> Any:
    from gradviz.ops import _kernels

    if _is_t(g):
        return _F()._slice(g, dim, start, end, step)
    return _kernels.slice_dim(g, dim, start, end, step)


def select_backward(g: Any, sizes: tuple, dim: int, index: int) -> Any:
    """Zeros of ``sizes`` with ``g`` written at ``index`` of ``dim``."""
    from gradviz.ops import _kernels

    if _is_t(g):
        return _F()._select_backward(g, sizes, dim, index)
    return _kernels.select_backward(g, sizes, dim, index)


def slice_backward(g: Any, sizes: tuple, dim: int, start: int, end: int, step: int) -> Any:
    """Zeros of ``sizes`` with ``g`` written into the slice ``start:end:step`` of ``dim``."""
    from gradviz.ops import _kernels

    if _is_t(g):
        return _F()._slice_backward(g, sizes, dim, start, end, step)
    return _kernels.slice_backward(g, sizes, dim, start, end, step)


def cat(gs: list, dim: int) -> Any:
    if any(_is_t(g) for g in gs):
        return _F().cat([g if _is_t(g) else Tensor._make(g) for g in gs], dim)
    return np.concatenate(gs, axis=dim)


def index(g: Any, indices: tuple) -> Any:
    """``g[indices]`` with PyTorch's index list (tensors or None per leading dimension)."""
    from gradviz.ops import _kernels

    if _is_t(g):
        return _F()._index(g, indices)
    return _kernels.index(g, indices)


def index_put(z: Any, indices: tuple, values: Any, accumulate: bool) -> Any:
    """``z`` with ``values`` written (or added) at ``indices``, out of place."""
    from gradviz.ops import _kernels

    if _is_t(z) or _is_t(values):
        z = z if _is_t(z) else Tensor._make(z)
        values = values if _is_t(values) else Tensor._make(np.asarray(values))
        return _F()._index_put(z, indices, values, accumulate)
    return _kernels.index_put(z, values, indices, accumulate)


def index_zeros(g: Any, sizes: tuple, indices: tuple) -> Any:
    """The gradient of ``x[indices]``: zeros of ``sizes`` with ``g`` added at ``indices``."""
    z = np.zeros(sizes, dtype_of(g))
    return index_put(Tensor._make(z) if _is_t(g) else z, indices, g, True)


def gather(g: Any, dim: int, index: Any) -> Any:
    from gradviz.ops import _kernels

    return _F().gather(g, dim, index) if _is_t(g) else _kernels.gather(g, dim, index)


def scatter_add(z: Any, dim: int, index: Any, src: Any) -> Any:
    from gradviz.ops import _kernels

    if _is_t(src):
        z = z if _is_t(z) else Tensor._make(z)
        return _F().scatter_add(z, dim, index, src)
    return _kernels.scatter_add(z, src, dim, data(index))


def scatter_zeros(g: Any, dim: int, index: Any) -> Any:
    """``g`` with zeros scattered at ``index`` along ``dim`` (``grad.scatter(dim, index, 0)``)."""
    from gradviz.ops import _kernels

    if _is_t(g):
        return _F().scatter(g, dim, index if _is_t(index) else Tensor._make(index), 0.0)
    return _kernels.scatter(g, 0.0, dim, data(index))


def prod(x: Any, dims: tuple | None = None, keepdim: bool = False) -> Any:
    if _is_t(x):
        if dims is None:
            return x.prod()
        for d in sorted(dims, reverse=True):
            x = x.prod(d, keepdim=keepdim)
        return x
    return np.prod(x, axis=dims, keepdims=keepdim)


def layer_norm_stats(input: Any, axes: tuple, eps: float, mean: Any, rstd: Any) -> tuple:
    """The mean and 1/std layer_norm normalized with: as saved in a plain backward; recomputed
    from ``input`` under create_graph, so that second derivatives see how they depend on it."""
    if not _is_t(input):
        return mean, rstd
    m = input.mean(axes, keepdim=True)
    d = input - m
    return m, ((d * d).mean(axes, keepdim=True) + eps) ** -0.5


def scatter(z: Any, dim: int, index: Any, src: Any) -> Any:
    """``z`` with ``src`` written at ``index`` along ``dim`` (``z.scatter(dim, index, src)``)."""
    from gradviz.ops import _kernels

    if _is_t(z) or _is_t(src):
        z = z if _is_t(z) else Tensor._make(z)
        index = index if _is_t(index) else Tensor._make(np.asarray(index))
        return _F().scatter(z, dim, index, src)
    return _kernels.scatter(z, src, dim, data(index))


def bmm(a: Any, b: Any) -> Any:
    if _is_t(a) or _is_t(b):
        return _F().bmm(a if _is_t(a) else Tensor._make(a), b if _is_t(b) else Tensor._make(b))
    return np.matmul(a, b)


def stack(gs: list, dim: int) -> Any:
    if any(_is_t(g) for g in gs):
        return _F().stack([g if _is_t(g) else Tensor._make(g) for g in gs], dim)
    return np.stack(gs, axis=dim)


def at_targets(shape: tuple, targets: np.ndarray, values: Any) -> Any:
    """Zeros of ``shape`` (``(C,)`` or ``(N, C)``) with ``values`` at each row's ``targets``
    column: how nll_loss's gradient is laid out."""
    if _is_t(values):
        onehot = np.arange(shape[-1]) == targets[..., None]
        return where(onehot, values.reshape(tuple(targets.shape) + (1,)), 0.0)
    out = np.zeros(shape, values.dtype)
    if out.ndim == 1:
        out[targets] = values
    else:
        out[np.arange(shape[0]), targets] = values
    return out


def op(name: str, *args: Any, **kwargs: Any) -> Any:
    """Run the table row ``name``: its NumPy forward on arrays, or, when an argument is a
    tensor, through the dispatch point, so that create_graph records it (a convolution's
    gradient is a convolution, a pooling's gradient is the row of its backward)."""
    from gradviz.ops.dispatch import dispatch
    from gradviz.ops.opinfo import OPS

    row = OPS[name]
    if any(_is_t(a) for a in args):
        return dispatch(row, *[Tensor._make(a) if isinstance(a, np.ndarray) else a
                               for a in args], **kwargs)
    return row.forward(*args, **kwargs)


# -- triangles, diagonals, rolls, cumulative products, cross products ------------------------------
def tril(g: Any, diagonal: int) -> Any:
    return _F().tril(g, diagonal) if _is_t(g) else np.tril(g, diagonal)


def triu(g: Any, diagonal: int) -> Any:
    return _F().triu(g, diagonal) if _is_t(g) else np.triu(g, diagonal)


def diagonal(g: Any, offset: int, dim1: int, dim2: int) -> Any:
    from gradviz.ops import _kernels

    if _is_t(g):
        return _F().diagonal(g, offset, dim1, dim2)
    return _kernels.diagonal(g, offset, dim1, dim2)


def diagonal_backward(g: Any, sizes: tuple, offset: int, dim1: int, dim2: int) -> Any:
    """Zeros of ``sizes`` with ``g`` written on the diagonal (``diagonal_backward``)."""
    return op("diagonal_backward", g, input_sizes=tuple(sizes), offset=offset, dim1=dim1,
              dim2=dim2)


def roll(g: Any, shifts: tuple, dims: tuple) -> Any:
    from gradviz.ops import _kernels

    return _F().roll(g, shifts, dims) if _is_t(g) else _kernels.roll(g, shifts, dims)


def cumprod(g: Any, dim: int) -> Any:
    if _is_t(g):
        return _F().cumprod(g, dim)
    return np.cumprod(g, axis=dim) if np.ndim(g) else g


def cross(a: Any, b: Any, dim: int) -> Any:
    """``a × b`` along ``dim`` (both the same shape)."""
    if _is_t(a) or _is_t(b):
        return _F().cross(a if _is_t(a) else Tensor._make(a), b if _is_t(b) else Tensor._make(b),
                          dim=dim)
    return np.cross(a, b, axis=dim)


# -- linear algebra --------------------------------------------------------------------------------
def mT(x: Any) -> Any:  # noqa: N802 - PyTorch's name
    """The transpose of the last two dimensions (``Tensor.mT``)."""
    return x.transpose(-2, -1) if _is_t(x) else np.swapaxes(x, -1, -2)


def inv(x: Any) -> Any:
    """The inverse of a (batch of) square matrices: ``linalg_inv_ex``'s row, so that under
    create_graph the inverse in a formula is recorded and differentiated again."""
    return op("linalg_inv_ex", x)[0]


def eye_like(x: Any, n: int) -> np.ndarray:
    """The ``n x n`` identity in ``x``'s dtype (a constant)."""
    return np.eye(n, dtype=dtype_of(x))


def as_rows(v: Any) -> Any:
    """``v[..., None, :]``: a vector per matrix, broadcast over its rows."""
    return unsqueeze_dims(v, (len(v.shape) - 1,))


def as_cols(v: Any) -> Any:
    """``v[..., :, None]``: a vector per matrix, broadcast over its columns."""
    return unsqueeze_dims(v, (len(v.shape),))


def diag_embed(v: Any) -> Any:
    """A (batch of) diagonal matrices with ``v`` on the diagonal."""
    return as_cols(v) * eye_like(v, v.shape[-1])
