"""Forwards of the shape rows: views, select and slice (and their backwards), split, cat and
stack, triangles and diagonals, rolls and rotations, unfold."""

from __future__ import annotations

import numpy as np

from gradviz.ops._kernels.common import INT64_MAX, _torch_result_type


def select(a: np.ndarray, dim: int, index: int) -> np.ndarray:
    # The trailing Ellipsis keeps a 0-d result a view (a[0] of a 1-d array is a scalar copy).
    return a[(slice(None),) * dim + (index, Ellipsis)]


def slice_dim(a: np.ndarray, dim: int, start: int = 0, end: int = INT64_MAX, step: int = 1
              ) -> np.ndarray:
    return a[(slice(None),) * dim + (slice(start, end, step),)]


def select_backward(g: np.ndarray, input_sizes: tuple, dim: int, index: int) -> np.ndarray:
    out = np.zeros(input_sizes, g.dtype)
    select(out, dim, index)[...] = g
    return out


def slice_backward(g: np.ndarray, input_sizes: tuple, dim: int, start: int, end: int,
                   step: int) -> np.ndarray:
    out = np.zeros(input_sizes, g.dtype)
    slice_dim(out, dim, start, end, step)[...] = g
    return out


def repeat(a: np.ndarray, repeats: tuple) -> np.ndarray:
    return np.tile(a, repeats)


def split(a: np.ndarray, split_size: int, dim: int) -> tuple:
    n = a.shape[dim]
    cuts = list(range(split_size, n, split_size)) if split_size else []
    return tuple(np.split(a, cuts, axis=dim)) if n else (a[...],)


def split_with_sizes(a: np.ndarray, split_sizes: tuple, dim: int) -> tuple:
    return tuple(np.split(a, np.cumsum(split_sizes)[:-1].tolist(), axis=dim))


def cat(*arrays: np.ndarray, dim: int = 0) -> np.ndarray:
    # 1-D arrays of size 0 are left out (torch's legacy rule), but still count for the dtype
    kept = [a for a in arrays if a.shape != (0,)]
    if not kept:
        return np.zeros((0,), np.result_type(*arrays))
    return np.concatenate(kept, axis=dim, dtype=np.result_type(*arrays))


def stack(*arrays: np.ndarray, dim: int = 0) -> np.ndarray:
    return np.stack(arrays, axis=dim)


def view(a, size):
    return a.reshape(size)


def unsafe_view(a, size):
    return a.reshape(size)


def clone(a):
    return a.copy()


def transpose(a, dim0, dim1):
    return np.swapaxes(a, dim0, dim1) if a.ndim else a.view()


def t(a):
    return a.T


def permute(a, dims):
    return np.transpose(a, dims)


def expand(a, size):
    out = np.broadcast_to(a, size)
    if a.flags.writeable:
        # Writable, as PyTorch's expanded tensors are: writing one element writes the memory
        # its copies share (in-place ops that would write one location twice are refused in
        # dispatch_inplace, as PyTorch refuses them).
        out = np.lib.stride_tricks.as_strided(a, out.shape, out.strides, writeable=True)
    return out


def unsqueeze(a, dim):
    return np.expand_dims(a, dim)


def squeeze(a):
    return np.squeeze(a)


def squeeze_dim(a, dim):
    return np.squeeze(a, dim) if a.ndim and a.shape[dim] == 1 else a


def squeeze_dims(a, dim):
    # squeeze(dim=(...)): the listed dims of size 1 go, the others stay
    return np.squeeze(a, tuple(d for d in dim if a.ndim and a.shape[d] == 1))


def to_copy(a, dtype):
    return a.astype(dtype)


def flip(a, dims):
    return np.flip(a, dims).copy() if a.ndim else a.copy()


def reshape_alias(a, size):
    return a.reshape(size)


def alias(a):
    return a[...]


def unbind(a, dim):
    return tuple(select(a, dim, i) for i in range(a.shape[dim]))


def tril(a, diagonal=0):
    return np.tril(a, diagonal)


def triu(a, diagonal=0):
    return np.triu(a, diagonal)


def diagonal(a: np.ndarray, offset: int = 0, dim1: int = 0, dim2: int = 1) -> np.ndarray:
    """The diagonal as a writable view (NumPy's own ``diagonal`` is read-only), its entries on
    the last dimension."""
    d = np.diagonal(a, offset, dim1, dim2)
    if not a.flags.writeable:
        return d
    # Start at the diagonal's first element, then walk it with NumPy's own strides.
    start = [slice(None)] * a.ndim
    if d.shape[-1]:
        start[dim1 if offset < 0 else dim2] = slice(abs(offset), None)
    base = a[tuple(start)]
    return np.lib.stride_tricks.as_strided(base, d.shape, d.strides, writeable=True)


def diagonal_copy(a: np.ndarray, offset: int = 0, dim1: int = 0, dim2: int = 1) -> np.ndarray:
    return np.diagonal(a, offset, dim1, dim2).copy()


def diagonal_backward(g: np.ndarray, input_sizes: tuple, offset: int, dim1: int, dim2: int
                      ) -> np.ndarray:
    out = np.zeros(input_sizes, g.dtype)
    diagonal(out, offset, dim1, dim2)[...] = g
    return out


def diag_embed(a: np.ndarray, offset: int = 0, dim1: int = -2, dim2: int = -1) -> np.ndarray:
    """Zeros with ``a``'s last dimension written on the diagonal of output dims ``dim1, dim2``
    (both already non-negative, in the output's numbering)."""
    n = a.shape[-1] + abs(offset)
    lead = list(a.shape[:-1])
    shape = []
    for d in range(len(lead) + 2):
        shape.append(n if d in (dim1, dim2) else lead.pop(0))
    out = np.zeros(shape, a.dtype)
    diagonal(out, offset, dim1, dim2)[...] = a
    return out


def roll(a, shifts, dims):
    if a.ndim == 0 or a.size == 0:
        return a.copy()
    return np.roll(a, shifts, axis=dims if dims else None)


def rot90(a: np.ndarray, k: int = 1, dims: tuple = (0, 1)) -> np.ndarray:
    return np.rot90(a, k, axes=dims).copy()


def block_diag(*arrays: np.ndarray) -> np.ndarray:
    """The tensors (0-d as 1x1, 1-D as one row) on the diagonal of a matrix of zeros."""
    mats = [a.reshape(1, -1) if a.ndim < 2 else a for a in arrays]
    mats = [m.reshape(1, 1) if a.ndim == 0 else m for a, m in zip(arrays, mats, strict=True)]
    rows, cols = sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)
    out = np.zeros((rows, cols), _torch_result_type(*arrays))  # (float32 with int64: float32)
    r = c = 0
    for m in mats:
        out[r:r + m.shape[0], c:c + m.shape[1]] = m
        r, c = r + m.shape[0], c + m.shape[1]
    return out


def unfold(a: np.ndarray, dimension: int = 0, size: int = 1, step: int = 1) -> np.ndarray:
    """Every window of ``size`` along ``dimension``, ``step`` apart: that dimension becomes the
    window count and the window is a new last dimension (a copy; PyTorch's is a view)."""
    if a.ndim == 0:
        return a.reshape(1)[:size].copy()
    win = np.lib.stride_tricks.sliding_window_view(a, size, axis=dimension)
    idx = [slice(None)] * win.ndim
    idx[dimension] = slice(None, None, step)
    return win[tuple(idx)].copy()
