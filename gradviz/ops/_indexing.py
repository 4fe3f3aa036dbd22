"""``Tensor.__getitem__`` and ``Tensor.__setitem__``, recorded as PyTorch records them.

PyTorch's Python indexing (``torch/csrc/autograd/python_variable_indexing.cpp`` and
``aten/src/ATen/TensorIndexing.h``) walks the index from left to right over the tensor's
dimensions:

* an integer selects (``SelectBackward0``; the dimension disappears);
* a slice slices (``SliceBackward0``, one per sliced dimension), except that a slice covering a
  whole dimension (``:``, ``0:n``, ``::1``) records nothing when the index has several parts;
  a lone slice ``x[:]`` is always recorded;
* ``None`` inserts a dimension (``UnsqueezeBackward0``), ``...`` skips dimensions;
* integer tensors, lists and boolean masks are collected and applied at the end by one advanced
  indexing op (``IndexBackward0``), with ``None`` for the dimensions they leave alone;
* an index that records nothing at all (``x[...]``, ``x[:, :]``) still returns a new view
  (``AliasBackward0``).

Assignment ``x[idx] = value`` takes the same walk to the region (as views), then writes into it
in place: ``copy_``/``fill_`` for basic indices (through a view, that records ``CopySlices`` on
the base) or ``index_put_`` for advanced ones (``IndexPutBackward0``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from gradviz.ops import functional as F
from gradviz.ops._kernels import INT64_MAX
from gradviz.ops.derivatives import OPS
from gradviz.ops.dispatch import dispatch, dispatch_inplace
from gradviz.tensor import Tensor, _AsGiven, _is_number

__all__ = ["getitem", "setitem"]

_INT_KINDS = "iu"


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _as_index_tensor(x: Any) -> Tensor:
    """A list, tuple or array used as an index, as the int64 or bool tensor PyTorch makes."""
    a = np.asarray(x)
    if a.dtype == np.bool_:
        return Tensor._make(a)
    if a.size == 0:
        return Tensor._make(a.astype(np.int64))
    if a.dtype.kind not in _INT_KINDS:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return Tensor._make(a.astype(np.int64))


def _treat_as_tuple(seq: list) -> bool:
    """PyTorch's ``treatSequenceAsTuple``: ``x[[0, 1]]`` indexes one dimension with a list, but
    ``x[[slice(None), 0]]`` or ``x[[[0, 1], [1, 2]]]`` is read as a tuple (deprecated)."""
    if len(seq) >= 32:
        return False
    return any(isinstance(i, (Tensor, list, tuple, slice, np.ndarray)) or i is None
               or i is Ellipsis for i in seq)


def _normalize(index: Any) -> tuple[Any, bool]:
    """``(items, single)``: the index as a tuple, and whether it was one non-tuple item."""
    if isinstance(index, tuple):
        return index, False
    if isinstance(index, list) and _treat_as_tuple(index):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated; "
                      "use x[tuple(seq)] instead of x[seq].", UserWarning, stacklevel=3)
        return tuple(index), False
    return (index,), True


def _item(i: Any) -> Any:
    """One index item as int, slice, None, Ellipsis, or an index tensor."""
    if i is None or i is Ellipsis or isinstance(i, slice) or _is_int(i):
        return i
    if isinstance(i, (bool, np.bool_)):
        return Tensor._make(np.asarray(bool(i)))
    if isinstance(i, Tensor):
        kind = i._data.dtype.kind
        if kind not in _INT_KINDS + "b":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return i
    if isinstance(i, (list, tuple, np.ndarray, range)):  # torch takes a range as its list
        return _as_index_tensor(i)
    if isinstance(i, str):  # torch reads a string as data for an index tensor
        raise TypeError("new(): invalid data type 'str'")
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     f"Variables are valid indices (got {type(i).__name__})")


def _consumed(i: Any) -> int:
    """How many dimensions of the tensor an index item uses up."""
    if i is None or i is Ellipsis:
        return 0
    if isinstance(i, Tensor):
        if i._data.dtype == np.bool_:
            return i.ndim
        return 1
    return 1


def _slice_args(s: slice, n: int) -> tuple[int, int, int, bool]:
    """``(start, end, step, whole)`` as the kernels use them (open ends: 0 and 2**63-1; negative
    bounds wrapped, remembering what was written: NOTE [saved as given] in gradviz/tensor.py),
    and whether the slice covers the whole dimension."""
    if s.step is not None and s.step == 0:
        raise ValueError("slice step cannot be zero")
    step = 1 if s.step is None else int(s.step)
    if step < 0:
        raise ValueError("step must be greater than zero")
    start = 0 if s.start is None else int(s.start)
    end = INT64_MAX if s.stop is None else int(s.stop)
    whole = start == 0 and step == 1 and end >= n
    if start < 0:  # kept as written for the node (NOTE [saved as given])
        start = _AsGiven(max(start + n, 0), start)
    if end < 0:
        end = _AsGiven(max(end + n, 0), end)
    return start, end, step, whole


def _walk(x: Tensor, items: tuple, single: bool) -> tuple[Tensor, list]:
    """Apply the basic part of an index; return the result and the advanced index list."""
    items = tuple(_item(i) for i in items)
    specified = sum(_consumed(i) for i in items)
    if x.ndim == 0 and any(_is_int(i) for i in items):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    if specified > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    result, dim = x, 0
    advanced: list = []
    ellipsis_seen = False
    for i in items:
        if i is None:
            result = F.unsqueeze(result, dim)
            dim += 1
        elif i is Ellipsis:
            # As in torch, the first `...` spans the dimensions not indexed; a later one spans
            # none (x[..., 0, ...] is x[..., 0]).
            if not ellipsis_seen:
                dim += x.ndim - specified
            ellipsis_seen = True
        elif _is_int(i):
            n = result.shape[dim]
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {n}")
            result = F.select(result, dim, i)
        elif isinstance(i, slice):
            start, end, step, whole = _slice_args(i, result.shape[dim])
            if not whole or single:
                result = F._slice(result, dim, start, end, step)
            dim += 1
        elif i.ndim == 0 and i._data.dtype != np.bool_:  # a 0-d integer tensor selects
            k, n = int(i.item()), result.shape[dim]
            if not -n <= k < n:  # worded as indexing, as torch does, not as select()
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {n}")
            result = F.select(result, dim, k)
        else:
            if i.ndim == 0:  # True / False: a new dimension, indexed by [0] or []
                result = F.unsqueeze(result, dim)
                i = Tensor._make(np.zeros(1 if i.item() else 0, np.int64))
            _check_index(result, dim, i)
            advanced += [None] * (dim - len(advanced)) + [i]
            dim += i.ndim if i._data.dtype == np.bool_ else 1
    return result, advanced


def _check_index(t: Tensor, dim: int, i: Tensor) -> None:
    a = i._data
    if a.dtype == np.bool_:
        shape = t.shape[dim:dim + a.ndim]
        for k, (m, n) in enumerate(zip(a.shape, shape, strict=False)):
            if m != n:
                raise IndexError(f"The shape of the mask {list(a.shape)} at index {k} does not "
                                 f"match the shape of the indexed tensor {list(t.shape)} at "
                                 f"index {dim + k}")
        return
    n = t.shape[dim]
    if a.size and (a.max() >= n or a.min() < -n):
        bad = int(a.max() if a.max() >= n else a.min())
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {n}")


def getitem(x: Tensor, index: Any) -> Tensor:
    """``x[index]`` with PyTorch's rules and graph (see the module docstring).

    Example:
        >>> import gradviz
        >>> x = gradviz.arange(12.0).view(3, 4).requires_grad_()
        >>> x[1:, ::2].grad_fn.name(), x[[0, 2]].grad_fn.name(), x[0].grad_fn.name()
        ('SliceBackward0', 'IndexBackward0', 'SelectBackward0')
    """
    if index is Ellipsis:
        return dispatch(OPS["alias"], x)
    items, single = _normalize(index)
    result, advanced = _walk(x, items, single)
    if advanced:
        return F._index(result, advanced)
    if result is x:
        return dispatch(OPS["alias"], x)
    return result


def _value_tensor(x: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if _is_number(value):
        return Tensor._make(np.asarray(value, dtype=x._data.dtype))
    if isinstance(value, (list, tuple, np.ndarray)):
        return Tensor._make(np.asarray(value, dtype=x._data.dtype))
    raise TypeError(f"can't assign a {type(value).__name__} to a {x.type()}")


def _strip_leading_ones(v: Tensor) -> Tensor:
    """PyTorch views the value without its leading 1-sized dimensions (``slicePrefix1sSize``)."""
    shape = v.shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return F.view(v, shape[k:]) if k else v


def _copy_to(dst: Tensor, src: Tensor) -> None:
    """PyTorch's ``copy_to``: ``copy_`` of an equal shape, ``fill_`` of a 0-d value, else
    ``copy_`` of the value viewed and expanded to the destination."""
    if dst.shape == src.shape:
        F.copy_(dst, src)
    elif src.ndim == 0:
        dispatch_inplace(OPS["fill_tensor_"], dst, src)
    else:
        shape = src.shape
        k = 0
        while k < len(shape) and shape[k] == 1:
            k += 1
        # expand raises PyTorch's "The expanded size of the tensor ..." for a bad value shape.
        F.copy_(dst, F.expand(F.view(src, shape[k:]), dst.shape))


def setitem(x: Tensor, index: Any, value: Any) -> None:
    """``x[index] = value``: an in-place write that bumps ``x``'s version and is recorded as
    PyTorch records it (``CopySlices`` over the write for basic indices, ``IndexPutBackward0``
    for advanced ones).

    Example:
        >>> import gradviz
        >>> h = gradviz.ones(3, requires_grad=True) * 2
        >>> h[0] = 5.0
        >>> h.grad_fn.name(), h._version
        ('torch::autograd::CopySlices', 1)
    """
    v = _value_tensor(x, value)
    if index is Ellipsis:
        _copy_to(x, v)
        return
    items, single = _normalize(index)
    if single and isinstance(items[0], slice):
        single = False  # x[:] = v writes into x itself: the whole-slice shortcut applies
    region, advanced = _walk(x, items, single)
    if not advanced:
        _copy_to(region, v)
        return
    index_region = np.empty(region.shape, dtype=np.int8)[tuple(
        slice(None) if a is None else a._data for a in advanced)].shape
    try:
        np.broadcast_shapes(v.shape, index_region)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(v.shape)} cannot be "
                           f"broadcast to indexing result of shape {list(index_region)}"
                           ) from None
    F.index_put_(region, advanced, _strip_leading_ones(v))
