"""Helpers that backward formulas use, working on NumPy arrays *and* on tensors.

NOTE [dual-mode formulas]: a plain ``backward()`` runs every formula on raw NumPy arrays, which
keeps the engine close to hand-written NumPy speed. Under ``create_graph=True`` the engine hands
the same formulas tensors instead, so each operation they perform is itself recorded and can be
differentiated again. Formulas therefore use only Python operators (``+ - * / ** @``, comparisons,
``.reshape``) and the helpers below, which pick the NumPy or the gradviz version by type.
"""

from __future__ import annotations

import math
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
    return g.transpose(dim0, dim1) if _is_t(g) else np.swapaxes(g, dim0, dim1)


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
