"""Indexing and selection: where, select and narrow, index_select/add/copy/fill, gather and
scatter, masks, put and take, nonzero, unique, searchsorted."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from gradviz._factories import invalid_combination
from gradviz.ops import _args
from gradviz.ops.dispatch import (
    broadcast_message,
    dispatch,
    dispatch_inplace,
)
from gradviz.ops.functional.common import _O, _dtype_word, _tensor_arg, _tensors_only
from gradviz.tensor import Tensor, _AsGiven, _is_number, _wrap_dim

__all__ = [
    "where", "select", "narrow", "index_select", "gather", "scatter", "scatter_add", "masked_fill",
    "index_put", "index_put_", "masked_select", "take", "nonzero", "argwhere", "index_add",
    "index_copy", "index_fill", "scatter_reduce", "put", "searchsorted", "bucketize", "unique",
    "unique_consecutive"
]


def where(condition: Any, input: Any, other: Any) -> Tensor:
    """Pick ``input`` where ``condition`` holds, else ``other`` (``WhereBackward0``).

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([1.0, -1.0])
        >>> gradviz.where(x > 0, x, 0.0)
        tensor([1., 0.])
    """
    cond = condition if isinstance(condition, Tensor) else Tensor._make(np.asarray(condition))
    if cond._data.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {cond.dtype._legacy[:-6]}")
    for v in (input, other):
        if not (isinstance(v, (Tensor, np.ndarray)) or _is_number(v)):
            raise invalid_combination("where", (condition, input, other), {})
    return dispatch(_O["where"], _tensor_arg(input), _tensor_arg(other), condition=cond)


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at ``index`` along ``dim``, without that dimension: ``x[:, i]`` is
    ``x.select(1, i)`` (``SelectBackward0``, a view).

    Example:
        >>> import gradviz
        >>> gradviz.arange(6.0).view(2, 3).select(1, -1)
        tensor([2., 5.])
    """
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    i = int(index)
    if not -n <= i < n:
        raise IndexError(f"select(): index {i} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    return dispatch(_O["select"], input, dim=d, index=_AsGiven(i + n, i) if i < 0 else i)


def _slice(input: Tensor, dim: int, start: int, end: int, step: int = 1) -> Tensor:
    """``SliceBackward0``: ``input[..., start:end:step]`` along ``dim`` (normalized bounds)."""
    return dispatch(_O["slice"], input, dim=dim, start=start, end=end, step=step)


def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``length`` entries from ``start`` along ``dim``, as a view (``SliceBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.arange(5.0).narrow(0, 1, 3)
        tensor([1., 2., 3.])
    """
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    s = int(start) + (n if start < 0 else 0)
    if s + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return _slice(input, d, s, s + int(length))


def _index_list(indices: Any) -> tuple:
    """An index list as the table saves it: a tuple of int64/bool tensors or None."""
    return tuple(None if i is None else i if isinstance(i, Tensor)
                 else Tensor._make(np.asarray(i)) for i in indices)


def _put_indices(input: Tensor, indices: Any) -> tuple:
    """:func:`_index_list`, checked as torch checks ``index_put``'s indices (NumPy would say
    "axis" where torch says "dimension")."""
    idx = _index_list(indices)
    if len(idx) > input.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input.ndim} (got "
                         f"{len(idx)})")
    for dim, i in enumerate(idx):
        a = None if i is None else i._data
        if a is None or a.dtype == np.bool_ or not a.size:
            continue
        n = input.shape[dim]
        hi, lo = int(a.max()), int(a.min())
        if hi >= n or lo < -n:
            raise IndexError(f"index {hi if hi >= n else lo} is out of bounds for dimension "
                             f"{dim} with size {n}")
    return idx


def _index(input: Tensor, indices: Any) -> Tensor:
    """``IndexBackward0``: advanced indexing with one index tensor (or None) per leading dim."""
    return dispatch(_O["index"], input, indices=_index_list(indices))


def _index_put(input: Tensor, indices: Any, values: Tensor, accumulate: bool) -> Tensor:
    """``input`` with ``values`` put at ``indices`` (out of place): ``_index_put_impl`` when
    accumulating (the backward of indexing), ``index_put`` otherwise."""
    name = "_index_put_impl" if accumulate else "index_put"
    return dispatch(_O[name], input, values, indices=_index_list(indices),
                    accumulate=bool(accumulate))


def index_put(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """``input`` with ``values`` written (or added, with ``accumulate``) at the advanced index
    ``indices``, out of place (``IndexPutBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.zeros(3).index_put((gradviz.tensor([0, 2]),), gradviz.tensor(5.0))
        tensor([5., 0., 5.])
    """
    return dispatch(_O["index_put"], input, _tensor_arg(values),
                    indices=_put_indices(input, indices), accumulate=bool(accumulate))


def index_put_(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """In-place :func:`index_put` (what ``x[idx_tensor] = v`` records).

    Example:
        >>> import gradviz
        >>> x = gradviz.zeros(3)
        >>> gradviz.index_put_(x, (gradviz.tensor([0, 2]),), gradviz.tensor([1.0, 5.0]))
        tensor([1., 0., 5.])
    """
    return dispatch_inplace(_O["index_put"], input, _tensor_arg(values),
                            indices=_put_indices(input, indices), accumulate=bool(accumulate))


def _index_tensor(name: str, index: Any, kinds: str = "iu") -> Tensor:
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._data.dtype.kind not in kinds:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    return index


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The entries at ``index`` (a 1-D integer tensor) along ``dim`` (``IndexSelectBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.arange(5.0).index_select(0, gradviz.tensor([4, 0]))
        tensor([4., 0.])
    """
    if not isinstance(index, Tensor) or index._data.dtype.kind not in "iu":
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not input.ndim and index._data.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{index._data.size} value(s)")
    if not input.ndim and index._data.reshape(-1)[0] != 0:
        raise IndexError("index out of range in self")
    if index._data.size and (index._data.min() < -n or index._data.max() >= n):
        raise IndexError(f"index out of range in self (index_select: index "
                         f"{index.tolist()} for dimension {d} of size {n})")
    return dispatch(_O["index_select"], input, dim=d, index=index)


def _check_gather(name: str, input: Tensor, d: int, index: Tensor, src: Any = None) -> None:
    if isinstance(src, Tensor):  # torch wraps dim against src first
        _wrap_dim(d, src.ndim)
    if index.numel() == 0:  # torch checks nothing more: nothing is read or written
        return
    # a 0-d tensor counts as one dimension of size 1 (torch's ensure_nonempty_dim)
    index_shape, input_shape = tuple(index.shape) or (1,), tuple(input.shape) or (1,)
    if len(index_shape) != len(input_shape):
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           f"tensor ({name}: input {list(input.shape)}, index "
                           f"{list(index.shape)})")
    for k, (a, b) in enumerate(zip(index_shape, input_shape, strict=True)):
        if k != d and a > b:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(index.shape)} to be smaller than self "
                               f"{list(input.shape)} apart from dimension {d}")
    idx = index._data
    n = input.shape[d] if input.ndim else 1
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx.max() if idx.max() >= n else idx.min())
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    if isinstance(src, Tensor) and builtins.max(src.ndim, 1) != len(index_shape):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j] = input[i][index[i][j]]`` for ``dim=1`` (``GatherBackward0``).

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> gradviz.gather(x, 1, gradviz.tensor([[1], [0]]))
        tensor([[2.],
                [3.]])
    """
    _index_tensor("gather", index)
    d = _wrap_dim(dim, input.ndim)
    _check_gather("gather", input, d, index)
    return dispatch(_O["gather"], input, dim=d, index=index, sparse_grad=bool(sparse_grad))


def scatter(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None
            ) -> Tensor:
    """A copy of ``input`` with ``src`` (a tensor, ``ScatterBackward0``) or ``value`` (a number,
    ``ScatterBackward1``) written at ``index`` along ``dim``.

    Example:
        >>> import gradviz
        >>> gradviz.zeros(2, 3).scatter(1, gradviz.tensor([[2], [0]]), 1.0)
        tensor([[0., 0., 1.],
                [1., 0., 0.]])
    """
    _index_tensor("scatter", index)
    if not (src is None or isinstance(src, Tensor) or _is_number(src)) or not (
            value is None or _is_number(value)):  # torch's parser refuses it before anything
        given = (input, dim, index) if src is None else (input, dim, index, src)
        raise _args.overload_error("scatter", given, {} if value is None else {"value": value})
    if src is None:
        src = value
    d = _wrap_dim(dim, input.ndim)
    _check_gather("scatter", input, d, index, src)
    if isinstance(src, Tensor):
        return dispatch(_O["scatter"], input, src, dim=d, index=index)
    return dispatch(_O["scatter_value"], input, dim=d, index=index, value=src)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim``; repeated indices add
    up (``ScatterAddBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.zeros(3).scatter_add(0, gradviz.tensor([0, 0, 2]), gradviz.ones(3))
        tensor([2., 0., 1.])
    """
    _index_tensor("scatter_add", index)
    d = _wrap_dim(dim, input.ndim)
    _check_gather("scatter_add", input, d, index, src)
    return dispatch(_O["scatter_add"], input, src, dim=d, index=index)


def _mask_value(input: Tensor, mask: Any, value: Any) -> tuple[Tensor, Any]:
    if not isinstance(mask, Tensor) or mask._data.dtype != np.bool_:
        dt = mask.dtype.name if isinstance(mask, Tensor) else type(mask).__name__
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{dt.replace('float32', 'float').replace('int64', 'long')}")
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    return mask, value


def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """``value`` where the bool ``mask`` (broadcast to ``input``) is True, else ``input``
    (``MaskedFillBackward0``; ``MaskedFillBackward1`` for a 0-d tensor ``value``).

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([1.0, -2.0])
        >>> x.masked_fill(x < 0, 0.0)
        tensor([1., 0.])
    """
    mask, value = _mask_value(input, mask, value)
    if isinstance(value, Tensor):
        return dispatch(_O["masked_fill_tensor"], input, value, mask=mask)
    return dispatch(_O["masked_fill"], input, mask=mask, value=value)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements of ``input`` where the bool ``mask`` holds (the two broadcast together),
    as a 1-D tensor (``MaskedSelectBackward0``).

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([[1.0, -2.0], [3.0, -4.0]])
        >>> gradviz.masked_select(x, x > 0)
        tensor([1., 3.])
    """
    if not isinstance(mask, Tensor) or mask._data.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    try:
        np.broadcast_shapes(input.shape, mask.shape)
    except ValueError:
        raise RuntimeError(broadcast_message("masked_select", [mask.shape, input.shape])
                           ) from None
    return dispatch(_O["masked_select"], input, mask=mask)


def take(input: Tensor, index: Tensor) -> Tensor:
    """The elements of the flattened ``input`` at ``index`` (negative counts from the end), in
    ``index``'s shape (``TakeBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.take(gradviz.tensor([[4.0, 3.0], [2.0, 1.0]]), gradviz.tensor([0, -1]))
        tensor([4., 1.])
    """
    if not isinstance(index, Tensor) or index._data.dtype != np.int64:
        got = index.dtype._legacy[:-6] if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {got}")
    n = input.numel()
    bad = index._data[(index._data >= n) | (index._data < -n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad.reshape(-1)[0])} on a "
                         f"tensor of {n} elements.")
    return dispatch(_O["take"], input, index=index)


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """The indices of the non-zero elements, one row per element in row-major order (shape
    ``(count, ndim)``, int64); with ``as_tuple=True`` one index tensor per dimension.

    Example:
        >>> import gradviz
        >>> gradviz.nonzero(gradviz.tensor([[0, 1], [2, 0]]))
        tensor([[0, 1],
                [1, 0]])
    """
    if as_tuple:
        # PyTorch treats a 0-d tensor as a 1-element vector here.
        flat = input.reshape(1) if input.ndim == 0 else input
        rows = dispatch(_O["nonzero"], flat)._data
        return tuple(Tensor._make(np.ascontiguousarray(rows[:, i])) for i in range(flat.ndim))
    return dispatch(_O["nonzero"], input)


def argwhere(input: Tensor) -> Tensor:
    """:func:`nonzero`'s ``(count, ndim)`` index rows.

    Example:
        >>> import gradviz
        >>> gradviz.argwhere(gradviz.tensor([0.0, 3.0, 5.0]))
        tensor([[1],
                [2]])
    """
    return dispatch(_O["nonzero"], input)


def _index_args(name: str, input: Tensor, dim: int, index: Any, source: Any = None) -> int:
    """PyTorch's checks of index_add/index_copy/index_fill: an int64/int32 vector ``index``
    inside ``dim``, and a ``source`` of matching shape and dtype."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' (position 2) must be Tensor, not "
                        f"{type(index).__name__}")
    d = _wrap_dim(dim, input.ndim)
    if index._data.dtype.kind not in "iu":
        raise RuntimeError(f"{name}_(): Expected dtype int32/int64 for index but got: "
                           f"{_dtype_word(index)}")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar" if name == "index_fill" else
                           f"{name}_(): Index is supposed to be a vector")
    n = input.shape[d] if input.ndim else 1
    idx = index._data.reshape(-1)
    for i in idx:  # (each op words it its own way, as in PyTorch)
        if not -n <= i < n or (name != "index_fill" and i < 0):
            if name == "index_add" and input.ndim <= 1:
                raise IndexError("index out of range in self")
            text = f"index {int(i)} is out of bounds for dimension {d} with size {n}"
            if name == "index_add":
                raise RuntimeError(text)
            raise IndexError(f"index_copy_(): {text}" if name == "index_copy" else text)
    if isinstance(source, Tensor):
        if source.dtype != input.dtype:
            raise RuntimeError(f"{name}_(): self and source expected to have the same dtype, "
                               f"but got (self) {_dtype_word(input)} and (source) "
                               f"{_dtype_word(source)}")
        m = source.shape[d] if source.ndim else 1
        if m != idx.size:
            raise RuntimeError(f"{name}_(): Number of indices ({idx.size}) should be equal to "
                               f"source.size(dim): ({m}), for dim: {d}")
    return d


def _index_add_call(inplace: bool, input: Tensor, dim: int, index: Tensor, source: Tensor,
                    alpha: Any) -> Tensor:
    d = _index_args("index_add", input, dim, index, source)
    run = dispatch_inplace if inplace else dispatch
    return run(_O["index_add"], input, source, dim=d, index=index, alpha=alpha,
               source_dim=source.ndim)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1
              ) -> Tensor:
    """``input`` with ``alpha * source`` added at ``index`` along ``dim``; repeated indices
    add up (``IndexAddBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.index_add(gradviz.zeros(3), 0, gradviz.tensor([0, 0, 2]),
        ...                   gradviz.tensor([1.0, 2.0, 3.0]))
        tensor([3., 0., 3.])
    """
    return _index_add_call(False, input, dim, index, source, alpha)


def index_add_(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1
               ) -> Tensor:
    """In-place :func:`index_add`."""
    return _index_add_call(True, input, dim, index, source, alpha)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``input`` with the slices of ``source`` copied to ``index`` along ``dim``
    (``IndexCopyBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.index_copy(gradviz.zeros(3), 0, gradviz.tensor([2]), gradviz.tensor([5.0]))
        tensor([0., 0., 5.])
    """
    d = _index_args("index_copy", input, dim, index, source)
    return dispatch(_O["index_copy"], input, source, dim=d, index=index,
                    source_dim=source.ndim)


def index_copy_(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """In-place :func:`index_copy`."""
    d = _index_args("index_copy", input, dim, index, source)
    return dispatch_inplace(_O["index_copy"], input, source, dim=d, index=index,
                            source_dim=source.ndim)


def _index_fill_call(inplace: bool, input: Tensor, dim: int, index: Tensor, value: Any
                     ) -> Tensor:
    d = _index_args("index_fill", input, dim, index)
    run = dispatch_inplace if inplace else dispatch
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.ndim} dimension(s).")
        return run(_O["index_fill_tensor"], input, value, dim=d, index=index)
    return run(_O["index_fill"], input, dim=d, index=index, value=value)


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """``input`` with ``value`` written at ``index`` along ``dim`` (``IndexFillBackward0``; a
    0-d tensor ``value`` records ``IndexFillBackward1`` and gets a gradient too).

    Example:
        >>> import gradviz
        >>> gradviz.index_fill(gradviz.zeros(2, 3), 1, gradviz.tensor([0, 2]), -1.0)
        tensor([[-1.,  0., -1.],
                [-1.,  0., -1.]])
    """
    return _index_fill_call(False, input, dim, index, value)


def index_fill_(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """In-place :func:`index_fill`."""
    return _index_fill_call(True, input, dim, index, value)


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_call(inplace: bool, input: Tensor, dim: int, index: Tensor, src: Tensor,
                         reduce: str, include_self: bool) -> Tensor:
    if reduce not in _REDUCTIONS:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    _index_tensor("scatter_reduce", index)
    d = _wrap_dim(dim, input.ndim)
    _check_gather("scatter_reduce", input, d, index, src)
    if src.dtype != input.dtype:
        raise RuntimeError("scatter_reduce(): Expected self.dtype to be equal to src.dtype")
    run = dispatch_inplace if inplace else dispatch
    return run(_O["scatter_reduce"], input, src, dim=d, index=index, reduce=reduce,
               include_self=bool(include_self))


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """Reduce ``src`` into ``input`` at ``index`` along ``dim`` with ``"sum"``, ``"prod"``,
    ``"mean"``, ``"amax"`` or ``"amin"``, counting ``input``'s own values unless
    ``include_self=False`` (``ScatterReduceBackward0``; amax/amin share the gradient among
    ties; prod's gradient is exact also with zero factors, as PyTorch's).

    Example:
        >>> import gradviz
        >>> gradviz.scatter_reduce(gradviz.zeros(2), 0, gradviz.tensor([0, 0, 1]),
        ...                        gradviz.tensor([1.0, 5.0, 2.0]), "amax")
        tensor([5., 2.])
    """
    return _scatter_reduce_call(False, input, dim, index, src, reduce, include_self)


def scatter_reduce_(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    """In-place :func:`scatter_reduce`."""
    return _scatter_reduce_call(True, input, dim, index, src, reduce, include_self)


def _put_call(inplace: bool, input: Tensor, index: Tensor, source: Tensor, accumulate: bool
              ) -> Tensor:
    _index_tensor("put", index, "iu")
    n = input.numel()
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, "
                         f"index.numel() = {index.numel()}")
    for i in index._data.reshape(-1):
        if not -n <= i < n:
            raise IndexError(f"out of range: tried to access index {int(i)} on a tensor of {n} "
                             "elements.")
    run = dispatch_inplace if inplace else dispatch
    return run(_O["put"], input, source, index=index, accumulate=bool(accumulate))


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """``source`` written at ``index`` of the flattened ``input`` (added with ``accumulate``):
    ``PutBackward0``.

    Example:
        >>> import gradviz
        >>> gradviz.put(gradviz.zeros(2, 2), gradviz.tensor([0, -1]), gradviz.tensor([1.0, 2.0]))
        tensor([[1., 0.],
                [0., 2.]])
    """
    return _put_call(False, input, index, source, accumulate)


def put_(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """In-place :func:`put`."""
    return _put_call(True, input, index, source, accumulate)


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None, sorter: Tensor | None = None
                 ) -> Tensor:
    """Where each value of ``input`` would be inserted in the sorted last dimension of
    ``sorted_sequence`` to keep it sorted (the leftmost place, or with ``right=True`` /
    ``side="right"`` the rightmost); int64 indices, not differentiable.

    Example:
        >>> import gradviz
        >>> gradviz.searchsorted(gradviz.tensor([1, 3, 5]), gradviz.tensor([3, 6]))
        tensor([1, 3])
    """
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    values = Tensor._make(np.asarray(input)) if scalar else input
    seq = sorted_sequence
    if seq.ndim > 1 and (scalar or tuple(seq.shape[:-1]) != tuple(values.shape[:-1])):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                           "first N-1 dimensions of boundaries tensor and input value tensor "
                           f"must match, but we got boundaries tensor {list(seq.shape)} and "
                           f"input value tensor {list(values.shape)}")
    return dispatch(_O["searchsorted"], seq, values=values._data, right=bool(right),
                    out_int32=bool(out_int32), sorter=sorter)


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False
              ) -> Tensor:
    """The bucket of each element among the sorted 1-D ``boundaries``: the ``i`` with
    ``boundaries[i-1] < x <= boundaries[i]`` (``right=True``: ``boundaries[i-1] <= x <
    boundaries[i]``); int64, not differentiable.

    Example:
        >>> import gradviz
        >>> gradviz.bucketize(gradviz.tensor([1, 5, 3]), gradviz.tensor([1, 3, 5]))
        tensor([0, 2, 1])
    """
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    values = input if isinstance(input, Tensor) else Tensor._make(np.asarray(input))
    return dispatch(_O["bucketize"], values, boundaries=boundaries, out_int32=bool(out_int32),
                    right=bool(right))


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct elements (or, with ``dim``, distinct slices along ``dim``), sorted;
    with ``return_inverse`` also where each element went, with ``return_counts`` how often
    each occurs. Recorded as ``Unique2Backward0`` (``UniqueDimBackward0``), whose backward
    fails: unique has no derivative in PyTorch.

    Example:
        >>> import gradviz
        >>> gradviz.unique(gradviz.tensor([3, 1, 3, 2]), return_counts=True)
        (tensor([1, 2, 3]), tensor([1, 1, 2]))
    """
    if dim is None:
        values, inverse, counts = dispatch(_O["unique"], input, sorted=bool(sorted),
                                           return_inverse=bool(return_inverse),
                                           return_counts=bool(return_counts))
    else:
        d = _wrap_dim(dim, input.ndim)
        values, inverse, counts = dispatch(_O["unique_dim"], input, sorted=bool(sorted),
                                           return_inverse=bool(return_inverse),
                                           return_counts=bool(return_counts), dim=d)
    out = (values,) + ((inverse,) if return_inverse else ()) + (
        (counts,) if return_counts else ())
    return out[0] if len(out) == 1 else out


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:
    """Each run of equal consecutive elements (or, with ``dim``, of equal slices along
    ``dim``) kept once, in order; with ``return_inverse`` also the run each element is in,
    with ``return_counts`` each run's length. Recorded as ``UniqueConsecutiveBackward0``,
    whose backward fails: PyTorch defines no derivative.

    Example:
        >>> import gradviz
        >>> gradviz.unique_consecutive(gradviz.tensor([1, 1, 2, 2, 3, 1]), return_counts=True)
        (tensor([1, 2, 3, 1]), tensor([2, 2, 1, 1]))
    """
    _tensors_only("unique_consecutive", input=input)
    d = None if dim is None else _wrap_dim(dim, input.ndim)
    values, inverse, counts = dispatch(_O["unique_consecutive"], input,
                                       return_inverse=bool(return_inverse),
                                       return_counts=bool(return_counts), dim=d)
    out = (values,) + ((inverse,) if return_inverse else ()) + (
        (counts,) if return_counts else ())
    return out[0] if len(out) == 1 else out
