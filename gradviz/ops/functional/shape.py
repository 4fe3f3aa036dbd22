"""Shapes and views: view and reshape, transposes and permutes, expand, squeeze, flatten,
split and chunk, cat and stack, triangles and diagonals, rolls, moves and tiles."""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradviz import _dtype
from gradviz._factories import int_list, invalid_combination
from gradviz.ops.dispatch import (
    dispatch,
    dispatch_inplace_view,
)
from gradviz.ops.functional.common import _O, _dims, _int_arg
from gradviz.ops.functional.indexing import _slice, index_select
from gradviz.tensor import Tensor, _AsGiven, _wrap_dim

__all__ = [
    "reshape", "view", "transpose", "swapaxes", "t", "permute", "expand", "squeeze",
    "adjoint", "flatten", "repeat", "flip", "contiguous", "split", "split_with_sizes",
    "chunk", "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk", "cat", "concat",
    "concatenate", "stack", "unbind", "diagonal", "diag", "diag_embed", "roll",
    "movedim", "moveaxis", "tile", "repeat_interleave", "atleast_1d", "atleast_2d", "atleast_3d",
    "hstack", "vstack", "row_stack", "dstack", "column_stack", "tensor_split", "hsplit", "vsplit",
    "dsplit", "unflatten", "swapdims", "rot90", "block_diag", "cartesian_prod", "meshgrid",
    "detach"
]


def _shape_arg(shape: tuple, fn: str = "view", arg: str = "size") -> tuple:
    if len(shape) == 1 and isinstance(shape[0], str):  # view('a'): no overload takes it
        raise invalid_combination(fn, shape, {})
    return int_list(fn, shape, arg)


def _infer_size(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    """Resolve one ``-1`` like PyTorch, with its error texts."""
    if builtins.sum(1 for s in shape if s == -1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _viewable(arr: np.ndarray, shape: tuple[int, ...]) -> bool:
    try:
        np.reshape(arr, shape, copy=False)
    except ValueError:
        return False
    return True


def view(input: Tensor, *shape: Any) -> Tensor:
    """The same data with another shape, sharing storage (``ViewBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.arange(6.0).view(2, -1).shape
        gradviz.Size([2, 3])
        >>> gradviz.tensor([1.0]).view(gradviz.int32)  # the same bytes read as another dtype
        tensor([1065353216], dtype=gradviz.int32)
    """
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        return _view_dtype(input, shape[0])
    size = _infer_size(_shape_arg(shape), input._data.size)
    if not _viewable(input._data, size):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return dispatch(_O["view"], input, size=size)


def _view_dtype(input: Tensor, dtype: _dtype.dtype) -> Tensor:
    """``x.view(dtype)``: the same bytes read as ``dtype``, sharing storage and the version
    counter. Not differentiable (torch's ``view.dtype`` row says
    ``output_differentiability: [False]``): the result is cut from the graph."""
    a = input._data
    old, new = a.dtype.itemsize, dtype.np.itemsize
    if old != new:  # torch's checks, in its order
        what = f"to view {input.dtype._legacy[:-6]} as {dtype._legacy[:-6]} (different element " \
               "sizes)"
        if a.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if a.shape[-1] != 1 and a.strides[-1] != old:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {a.strides[-1] // old}")
        if new > old and a.shape[-1] % (new // old):
            raise RuntimeError(f"self.size(-1) must be divisible by {new // old} {what}, but got "
                               f"{a.shape[-1]}")
        if not a.flags.c_contiguous:  # NumPy needs it; torch would check each stride instead
            raise RuntimeError(f"gradviz views a tensor as another element size only when it "
                               f"is contiguous ({what}); call .contiguous() first")
    out = Tensor._make(a.view(dtype.np))
    out._version_counter = input._version_counter  # an in-place write to either is seen
    return out


def reshape(input: Tensor, *shape: Any) -> Tensor:
    """Like :func:`view` when the data allows it; otherwise a copy, recorded as PyTorch records
    it (``UnsafeViewBackward0`` over ``CloneBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.reshape(gradviz.arange(6.0), (3, 2)).shape
        gradviz.Size([3, 2])
    """
    size = _infer_size(_shape_arg(shape, "reshape", "shape"), input._data.size)
    if _viewable(input._data, size):
        if input._data.flags.c_contiguous:
            return dispatch(_O["view"], input, size=size)
        # Not contiguous, yet expressible as a view (e.g. an expanded or sliced tensor):
        # PyTorch's reshape records `_reshape_alias` here.
        return dispatch(_O["_reshape_alias"], input, size=size)
    return dispatch(_O["_unsafe_view"], dispatch(_O["clone"], input), size=size)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions (a view).

    Example:
        >>> import gradviz
        >>> gradviz.transpose(gradviz.zeros(2, 3), 0, 1).shape
        gradviz.Size([3, 2])
    """
    nd = input.ndim
    return dispatch(_O["transpose"], input, dim0=_wrap_dim(dim0, nd), dim1=_wrap_dim(dim1, nd))


swapaxes = transpose


def t(input: Tensor) -> Tensor:
    """Transpose a tensor of at most 2 dimensions (``TBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.t(gradviz.zeros(2, 3)).shape
        gradviz.Size([3, 2])
    """
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D")
    return dispatch(_O["t"], input)


def _matrix_transpose(input: Tensor, what: str, deprecated: str) -> Tensor:
    """``.mT``, ``.mH``, ``adjoint()``: the last two dimensions swapped, as a view
    (``TransposeBackward0`` saving -2 and -1); no conjugate, gradviz's tensors being real.
    A 0-d tensor is returned as it is, with torch's deprecation warning."""
    if input.ndim == 1:
        raise RuntimeError(f"{what} is only supported on matrices or batches of matrices. Got "
                           "1-D tensor.")
    if input.ndim == 0:
        warnings.warn(f"{deprecated} is deprecated on 0-D tensors. " + (
            "This function is the identity in these cases." if deprecated == "Tensor.mT"
            else "Consider using x.conj()."), UserWarning, stacklevel=3)
        return input
    return dispatch(_O["transpose"], input, dim0=-2, dim1=-1)


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions: for gradviz's real tensors the
    transpose ``input.transpose(-2, -1)``, a view (``TransposeBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.adjoint(gradviz.zeros(4, 2, 3)).shape
        gradviz.Size([4, 3, 2])
    """
    return _matrix_transpose(input, "tensor.adjoint()", "adjoint()")


def permute(input: Tensor, *dims: Any) -> Tensor:
    """Reorder dimensions (a view).

    Example:
        >>> import gradviz
        >>> gradviz.permute(gradviz.zeros(2, 3, 4), (2, 0, 1)).shape
        gradviz.Size([4, 2, 3])
    """
    nd = input.ndim
    d = tuple(_wrap_dim(x, nd) for x in _shape_arg(dims, "permute", "dims"))
    if len(d) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {nd} is not equal to len(dims) = {len(d)}")
    if len(set(d)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return dispatch(_O["permute"], input, dims=d)


def expand(input: Tensor, *sizes: Any) -> Tensor:
    """Broadcast to a larger shape without copying (``-1`` keeps a dimension).

    Example:
        >>> import gradviz
        >>> gradviz.expand(gradviz.zeros(3), 2, 3).shape
        gradviz.Size([2, 3])
    """
    size = _shape_arg(sizes, "expand")
    shape = input.shape
    if len(size) < len(shape):
        raise RuntimeError(
            f"expand({input.type()}{{{list(shape)}}}, size={list(size)}): the number of sizes "
            f"provided ({len(size)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({len(shape)})")
    lead = len(size) - len(shape)
    final = list(size)
    for i in range(len(shape) - 1, -lead - 1, -1):  # the last dimension first, as torch
        want = size[lead + i]
        if i < 0:
            if want < 0:
                raise RuntimeError(f"The expanded size of the tensor ({want}) isn't allowed in a "
                                   f"leading, non-existing dimension {lead + i}")
            continue
        n = shape[i]
        if want == -1:
            final[lead + i] = n
        elif n != 1 and n != want:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({n}) at "
                f"non-singleton dimension {lead + i}.  Target sizes: {list(size)}.  Tensor "
                f"sizes: {list(shape)}")
    return dispatch(_O["expand"], input, size=tuple(final))


def squeeze(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """Remove dimensions of size 1 (all, or those of ``dim``, an int or a tuple, that have
    size 1).

    Example:
        >>> import gradviz
        >>> gradviz.squeeze(gradviz.zeros(1, 3, 1)).shape
        gradviz.Size([3])
        >>> gradviz.squeeze(gradviz.zeros(1, 3, 1, 1), (0, 1, 2)).shape
        gradviz.Size([3, 1])
    """
    if dim is None:
        return dispatch(_O["squeeze"], input)
    if isinstance(dim, (tuple, list)):
        dims = _dims(int_list("squeeze", (dim,), "dim"), builtins.max(input.ndim, 1))
        return dispatch(_O["squeeze_dims"], input, dim=dims)
    return dispatch(_O["squeeze_dim"], input, dim=_wrap_dim(dim, input.ndim))


# The in-place forms change ``input``'s shape over the same memory (``x.unsqueeze_(0)``); they
# are Tensor methods only, as in PyTorch, and record their own nodes (``UnsqueezeBackward1`` ...).
def unsqueeze_(input: Tensor, dim: int) -> Tensor:
    """In-place :func:`unsqueeze` (``UnsqueezeBackward1``).

    Example:
        >>> import gradviz
        >>> y = gradviz.ones(2, requires_grad=True) * 1
        >>> y.unsqueeze_(0).shape, y.grad_fn.name()
        (gradviz.Size([1, 2]), 'UnsqueezeBackward1')
    """
    return dispatch_inplace_view(_O["unsqueeze_"], _O["unsqueeze"], input,
                                 dim=_wrap_dim(dim, input.ndim + 1))


def squeeze_(input: Tensor, dim: int | None = None) -> Tensor:
    """In-place :func:`squeeze` (``SqueezeBackward3``, with ``dim`` ``SqueezeBackward4``).

    Example:
        >>> import gradviz
        >>> y = gradviz.ones(1, 2, requires_grad=True) * 1
        >>> y.squeeze_().shape, y.grad_fn.name()
        (gradviz.Size([2]), 'SqueezeBackward3')
    """
    if dim is None:
        return dispatch_inplace_view(_O["squeeze_"], _O["squeeze"], input)
    return dispatch_inplace_view(_O["squeeze_dim_"], _O["squeeze_dim"], input,
                                 dim=_wrap_dim(dim, input.ndim))


def transpose_(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """In-place :func:`transpose` (``TransposeBackward1``).

    Example:
        >>> import gradviz
        >>> y = gradviz.ones(2, 3, requires_grad=True) * 1
        >>> y.transpose_(0, 1).shape, y.grad_fn.name()
        (gradviz.Size([3, 2]), 'TransposeBackward1')
    """
    nd = input.ndim
    return dispatch_inplace_view(_O["transpose_"], _O["transpose"], input,
                                 dim0=_wrap_dim(dim0, nd), dim1=_wrap_dim(dim1, nd))


def t_(input: Tensor) -> Tensor:
    """In-place :func:`t` (``TBackward1``).

    Example:
        >>> import gradviz
        >>> y = gradviz.ones(2, 3, requires_grad=True) * 1
        >>> y.t_().shape, y.grad_fn.name()
        (gradviz.Size([3, 2]), 'TBackward1')
    """
    if input.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D")
    return dispatch_inplace_view(_O["t_"], _O["t"], input)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions ``start_dim..end_dim`` into one: a :func:`reshape`, so a view
    (``ViewBackward0``) when the data allows it, as PyTorch records it.

    Example:
        >>> import gradviz
        >>> gradviz.flatten(gradviz.zeros(2, 3, 4), 1).shape
        gradviz.Size([2, 12])
    """
    nd = input.ndim
    if nd == 0:
        return reshape(input, (1,))
    start, end = _wrap_dim(start_dim, nd), _wrap_dim(end_dim, nd)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    shape = input.shape
    merged = int(np.prod(shape[start:end + 1]))
    return reshape(input, shape[:start] + (merged,) + shape[end + 1:])


def flip(input: Tensor, dims: Sequence[int]) -> Tensor:
    """Reverse the order of elements along ``dims`` (a copy, ``FlipBackward0``). As torch's,
    the function takes one sequence of dims; the method also takes them one by one.

    Example:
        >>> import gradviz
        >>> gradviz.flip(gradviz.tensor([[1, 2], [3, 4]]), dims=(1,))
        tensor([[2, 1],
                [4, 3]])
    """
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"flip(): argument 'dims' (position 2) must be tuple of ints, not "
                        f"{type(dims).__name__}")
    norm = tuple(_wrap_dim(d, input.ndim) for d in int_list("flip", (dims,), "dims"))
    for d in norm:
        if norm.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return dispatch(_O["flip"], input, dims=norm if input.ndim else ())


def _flip_method(self: Tensor, *dims: Any, **kwargs: Any) -> Tensor:
    """``x.flip(0, 1)``, ``x.flip((0, 1))`` or ``x.flip(dims=(0, 1))``, with torch's errors."""
    if "dims" in kwargs:
        given = kwargs.pop("dims")
        if dims:
            raise TypeError("flip() got multiple values for argument 'dims'")
        if not isinstance(given, (tuple, list)):
            raise TypeError(f"flip(): argument 'dims' must be tuple of ints, not "
                            f"{type(given).__name__}")
        dims = (given,)
    if kwargs or not dims:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    if len(dims) > 1 and isinstance(dims[0], (tuple, list)):
        raise TypeError(f"flip() takes 1 positional argument but {len(dims)} were given")
    return flip(self, int_list("flip", dims, "dims"))


def repeat(input: Tensor, *sizes: Any) -> Tensor:
    """Tile the tensor ``sizes[i]`` times along each dimension (``RepeatBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.tensor([1.0, 2.0]).repeat(2)
        tensor([1., 2., 1., 2.])
    """
    repeats = _shape_arg(sizes, "repeat", "repeats")
    padded = (1,) * (len(repeats) - input.ndim) + input.shape
    if len(repeats) >= input.ndim and builtins.any(r < 0 for r in repeats):
        shape = [r * n for r, n in zip(repeats, padded, strict=True)]
        bad = next(n for n in shape if n < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {shape}")
    if len(repeats) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           f"of dimensions of tensor (repeat: sizes {list(repeats)} for a "
                           f"tensor of shape {list(input.shape)})")
    return dispatch(_O["repeat"], input, repeats=repeats)


def contiguous(input: Tensor) -> Tensor:
    """The tensor itself when its data is laid out row-major, else a row-major copy
    (``CloneBackward0``).

    Example:
        >>> import gradviz
        >>> x = gradviz.zeros(2, 3)
        >>> x.contiguous() is x, x.t().is_contiguous(), x.t().contiguous().is_contiguous()
        (True, False, True)
    """
    if input._data.flags.c_contiguous:
        return input
    return dispatch(_O["clone"], input)


def split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into pieces of ``split_size`` along ``dim`` (the last may be smaller), or of the
    listed sizes. The pieces are views sharing one node (``SplitBackward0`` /
    ``SplitWithSizesBackward0``) with output numbers 0, 1, ...

    Example:
        >>> import gradviz
        >>> [p.shape for p in gradviz.arange(5.0).split(2)]
        [gradviz.Size([2]), gradviz.Size([2]), gradviz.Size([1])]
    """
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if isinstance(split_size_or_sections, (list, tuple)):
        return split_with_sizes(tensor, split_size_or_sections, dim)
    size, d = _split_size_checked(tensor, split_size_or_sections, dim)
    return dispatch(_O["split"], tensor, split_size=size, dim=d)


def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0
                     ) -> tuple[Tensor, ...]:
    """Split into pieces of the listed sizes along ``dim``: views sharing one node
    (``SplitWithSizesBackward0``), with output numbers 0, 1, ... (``split`` with a list).

    Example:
        >>> import gradviz
        >>> [p.tolist() for p in gradviz.split_with_sizes(gradviz.arange(5.0), [2, 3])]
        [[0.0, 1.0], [2.0, 3.0, 4.0]]
    """
    sizes, d = _split_sizes_checked(input, split_sizes, dim)
    return dispatch(_O["split_with_sizes"], input, split_sizes=sizes, dim=d)


def _split_size_checked(tensor: Tensor, split_size: int, dim: int) -> tuple[int, int]:
    """``split_size`` and ``dim`` as (unsafe_)split takes them, checked as torch checks them."""
    d = _wrap_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    size = int(split_size)
    if size == 0 and n != 0 or size < 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {n}" if size == 0 else
                           f"split expects split_size be non-negative, but got split_size={size}")
    return size, d


def _split_sizes_checked(input: Tensor, split_sizes: Sequence[int], dim: int
                         ) -> tuple[tuple[int, ...], int]:
    """``split_sizes`` and ``dim`` as (unsafe_)split_with_sizes takes them, checked as torch
    checks them (its texts say ``split_with_sizes`` for both)."""
    _split_sizes_arg(split_sizes, 2)
    if input.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    sizes = tuple(int(s) for s in split_sizes)
    if builtins.any(s < 0 for s in sizes):
        raise RuntimeError("split_with_sizes expects split_sizes have only non-negative entries, "
                           f"but got split_sizes={list(sizes)}")
    if builtins.sum(sizes) != n:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
            f"size at dimension {dim}), but got split_sizes={list(sizes)}")
    return sizes, d


def _split_sizes_arg(split_sizes: Any, position: int) -> None:
    if not isinstance(split_sizes, (list, tuple)):
        raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position {position}) must "
                        f"be tuple of ints, not {type(split_sizes).__name__}")


def _split_with_sizes_method(self: Tensor, split_sizes: Sequence[int], dim: int = 0
                             ) -> tuple[Tensor, ...]:
    """``x.split_with_sizes(sizes, dim)``: torch counts the method's arguments without ``x``."""
    _split_sizes_arg(split_sizes, 1)
    return split_with_sizes(self, split_sizes, dim)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into ``chunks`` pieces of equal size (the last may be smaller): recorded as
    :func:`split` with ``ceil(size / chunks)``, as PyTorch does.

    Example:
        >>> import gradviz
        >>> [p.shape for p in gradviz.zeros(5, 2).chunk(2)]
        [gradviz.Size([3, 2]), gradviz.Size([2, 2])]
    """
    return split(input, _chunk_size(input, chunks, dim), dim)


def _chunk_size(input: Tensor, chunks: int, dim: int) -> int:
    """The piece size (un)safe_chunk splits by, ``ceil(size / chunks)``, checked as torch."""
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input.shape[_wrap_dim(dim, input.ndim)]
    return -(-n // chunks) if n else 1


def unsafe_split(tensor: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    """:func:`split` into pieces of ``split_size`` whose autograd does not treat them as views
    of ``tensor``: one ``UnsafeSplitBackward0`` node (same saved ``split_size``, ``dim`` and
    gradients as ``SplitBackward0``), each piece its own version counter. "Unsafe" as in
    PyTorch: writing into a piece in place is not checked against the input or the others.

    Example:
        >>> import gradviz
        >>> x = gradviz.arange(4.0, requires_grad=True)
        >>> a, b = gradviz.unsafe_split(x, 2)
        >>> a.grad_fn.name(), b.output_nr, a._is_view()
        ('UnsafeSplitBackward0', 1, False)
    """
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    size, d = _split_size_checked(tensor, split_size, dim)
    return dispatch(_O["unsafe_split"], tensor, split_size=size, dim=d)


def unsafe_split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0
                            ) -> tuple[Tensor, ...]:
    """:func:`split_with_sizes` with the pieces not tracked as views
    (``UnsafeSplitWithSizesBackward0``).

    Example:
        >>> import gradviz
        >>> x = gradviz.arange(5.0, requires_grad=True)
        >>> gradviz.unsafe_split_with_sizes(x, [2, 3])[1].grad_fn.name()
        'UnsafeSplitWithSizesBackward0'
    """
    sizes, d = _split_sizes_checked(input, split_sizes, dim)
    return dispatch(_O["unsafe_split_with_sizes"], input, split_sizes=sizes, dim=d)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """:func:`chunk` recorded as :func:`unsafe_split` (``UnsafeSplitBackward0``), as PyTorch
    does; what ATen's CPU ``LSTMCell`` and ``GRUCell`` cut their gates with.

    Example:
        >>> import gradviz
        >>> x = gradviz.zeros(2, 8, requires_grad=True)
        >>> [p.shape for p in gradviz.unsafe_chunk(x, 4, 1)][0]
        gradviz.Size([2, 2])
    """
    return unsafe_split(input, _chunk_size(input, chunks, dim), dim)


def _tensor_list(name: str, tensors: Any) -> list[Tensor]:
    if isinstance(tensors, Tensor):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        "not Tensor")
    out = list(tensors)
    for i, t in enumerate(out):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    return out


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Concatenate along an existing dimension (``CatBackward0``, one edge per tensor).

    Example:
        >>> import gradviz
        >>> gradviz.cat([gradviz.zeros(2, 3), gradviz.ones(1, 3)]).shape
        gradviz.Size([3, 3])
    """
    ts = _tensor_list("cat", tensors)
    if not ts:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(ts):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    # torch's legacy rule: a 1-D tensor of size 0 joins any cat, skipped by the checks
    kept = [(i, t) for i, t in enumerate(ts) if t.shape != (0,)]
    if not kept:  # nothing but legacy empty tensors: an empty result, dim unchecked
        return dispatch(_O["cat"], *ts, dim=dim)
    d = _wrap_dim(dim, kept[0][1].ndim)
    first = kept[0][1].shape
    for i, t in kept[1:]:
        if t.ndim != len(first):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(first)} "
                               f"and {t.ndim}")
        for k, (a, b) in enumerate(zip(first, t.shape, strict=True)):
            if k != d and a != b:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size {a} "
                    f"but got size {b} for tensor number {i} in the list. (cat: shapes "
                    f"{[list(x.shape) for x in ts]})")
    return dispatch(_O["cat"], *ts, dim=d)


concat = concatenate = cat


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join equally shaped tensors along a new dimension (``StackBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.stack([gradviz.zeros(3), gradviz.ones(3)], 1).shape
        gradviz.Size([3, 2])
    """
    ts = _tensor_list("stack", tensors)
    if not ts:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(ts[1:], 1):
        if t.shape != ts[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(ts[0].shape)} at entry 0 and {list(t.shape)} at entry {i}")
    return dispatch(_O["stack"], *ts, dim=_wrap_dim(dim, ts[0].ndim + 1))


def _select_backward(grad: Tensor, input_sizes: tuple, dim: int, index: int) -> Tensor:
    return dispatch(_O["select_backward"], grad, input_sizes=tuple(input_sizes), dim=dim,
                    index=index)


def _slice_backward(grad: Tensor, input_sizes: tuple, dim: int, start: int, end: int,
                    step: int) -> Tensor:
    return dispatch(_O["slice_backward"], grad, input_sizes=tuple(input_sizes), dim=dim,
                    start=start, end=end, step=step)


def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices along ``dim``, as views sharing one node (``UnbindBackward0``); iterating
    over a tensor does this.

    Example:
        >>> import gradviz
        >>> a, b = gradviz.tensor([[1.0, 2.0], [3.0, 4.0]]).unbind(1)
        >>> b
        tensor([2., 4.])
    """
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return dispatch(_O["unbind"], input, dim=_wrap_dim(dim, input.ndim))


def _diag_dims(input: Tensor, dim1: int, dim2: int, nd: int) -> tuple[int, int]:
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of dimensions ``dim1`` and ``dim2`` (above it for ``offset > 0``), as a view
    whose last dimension runs along it (``DiagonalBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.diagonal(gradviz.arange(12.0).reshape(3, 4), 1)
        tensor([ 1.,  6., 11.])
    """
    d1, d2 = _diag_dims(input, dim1, dim2, input.ndim)
    return dispatch(_O["diagonal"], input, offset=int(offset), dim1=d1, dim2=d2)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A vector's elements on a diagonal of a new square matrix (``DiagEmbedBackward0``), or a
    matrix's diagonal as a copy (``DiagonalBackward0_copy``, as PyTorch records it).

    Example:
        >>> import gradviz
        >>> gradviz.diag(gradviz.tensor([1.0, 2.0]))
        tensor([[1., 0.],
                [0., 2.]])
    """
    if input.ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    offset = _int_arg("diag", "diagonal", 2, diagonal)
    if input.ndim == 1:
        # torch runs diag_embed with its default dims, -2 and -1 (NOTE [saved as given])
        return dispatch(_O["diag_embed"], input, offset=offset, dim1=_AsGiven(0, -2),
                        dim2=_AsGiven(1, -1))
    return dispatch(_O["diagonal_copy"], input, offset=offset, dim1=0, dim2=1)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Zeros with ``input``'s last dimension written on the diagonal of the output's dimensions
    ``dim1`` and ``dim2`` (``DiagEmbedBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.diag_embed(gradviz.tensor([[1.0, 2.0]])).shape
        gradviz.Size([1, 2, 2])
    """
    d1, d2 = _diag_dims(input, dim1, dim2, input.ndim + 1)
    return dispatch(_O["diag_embed"], input, offset=int(offset), dim1=d1, dim2=d2)


def _ints_or_int(v: Any) -> tuple[int, ...]:
    return tuple(int(x) for x in v) if isinstance(v, (tuple, list)) else (int(v),)


def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """Shift elements along ``dims`` by ``shifts``, wrapping around; without ``dims``, along the
    flattened tensor (``RollBackward0``; its gradient rolls back).

    Example:
        >>> import gradviz
        >>> gradviz.roll(gradviz.tensor([1.0, 2.0, 3.0, 4.0]), 1)
        tensor([4., 1., 2., 3.])
    """
    s = _ints_or_int(shifts)
    d = () if dims is None else _ints_or_int(dims)
    if (d and len(s) != len(d)) or (not d and len(s) != 1):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(s)}, dims:{len(d)}")
    d = tuple(_wrap_dim(x, input.ndim) for x in d)
    return dispatch(_O["roll"], input, shifts=s, dims=d)


def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    """Move dimensions ``source`` to positions ``destination``, the others keeping their order:
    a :func:`permute` (a view, ``PermuteBackward0``), as PyTorch records it.

    Example:
        >>> import gradviz
        >>> gradviz.movedim(gradviz.zeros(2, 3, 4), 0, -1).shape
        gradviz.Size([3, 4, 2])
    """
    src, dst = _ints_or_int(source), _ints_or_int(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    nd = input.ndim
    s = [int(_wrap_dim(x, nd)) for x in src]  # computed dims: saved normalized, as torch
    t = [int(_wrap_dim(x, nd)) for x in dst]
    for what, raw, norm in (("source", src, s), ("destination", dst, t)):
        if len(set(norm)) != len(norm):
            raise RuntimeError(f"movedim: repeated dim in `{what}` ({list(raw)})")
    order = [-1] * nd
    for a, b in zip(s, t, strict=True):
        order[b] = a
    rest = iter(x for x in range(nd) if x not in s)
    dims = tuple(x if x != -1 else next(rest) for x in order)
    return dispatch(_O["permute"], input, dims=dims)


moveaxis = movedim


def tile(input: Tensor, *dims: Any) -> Tensor:
    """Repeat the tensor along each dimension, ``dims`` padded with leading 1s to the tensor's
    dimensions: a :func:`repeat` (``RepeatBackward0``), as PyTorch decomposes it.

    Example:
        >>> import gradviz
        >>> gradviz.tile(gradviz.tensor([[1, 2]]), (2,))
        tensor([[1, 2, 1, 2]])
    """
    reps = _shape_arg(dims, "tile", "dims")
    reps = (1,) * (input.ndim - len(reps)) + reps
    return repeat(input, reps)


def repeat_interleave(input: Tensor, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Repeat each element ``repeats`` times along ``dim`` (of the flattened tensor when
    ``dim`` is None), decomposed as PyTorch does: an int repeats is ``unsqueeze``, ``expand``,
    ``clone``, ``view``; a tensor of repeats an :func:`index_select`. With only a tensor of
    repeats, ``repeat_interleave(repeats)`` gives ``[0]*repeats[0] + [1]*repeats[1] ...``.

    Example:
        >>> import gradviz
        >>> gradviz.tensor([[1, 2], [3, 4]]).repeat_interleave(2, dim=0)
        tensor([[1, 2],
                [1, 2],
                [3, 4],
                [3, 4]])
    """
    if repeats is None:  # repeat_interleave(repeats): the indices, each repeated
        counts = input._data.reshape(-1)
        if (counts < 0).any():
            raise RuntimeError("repeats can not be negative")
        return Tensor._make(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
    if dim is None:
        input, d = flatten(input), 0
    else:
        d = _wrap_dim(dim, input.ndim)
    if isinstance(repeats, Tensor) and repeats.numel() != 1:
        counts = repeats._data.reshape(-1)
        if counts.size != input.shape[d]:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {counts.size} and input.size({d}) = "
                               f"{input.shape[d]}")
        if (counts < 0).any():
            raise RuntimeError("repeats can not be negative")
        index = Tensor._make(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
        return index_select(input, d, index)
    r = int(repeats.item() if isinstance(repeats, Tensor) else repeats)
    if r < 0:
        raise RuntimeError("Repeats must be non-negative")
    shape = input.shape
    wide = expand(dispatch(_O["unsqueeze"], input, dim=d + 1),
                  shape[:d + 1] + (r,) + shape[d + 1:])
    return view(dispatch(_O["clone"], wide), shape[:d] + (shape[d] * r,) + shape[d + 1:])


def _atleast(input: Tensor, nd: int) -> Tensor:
    """PyTorch's ``atleast_<nd>d`` of one tensor: a 0-d tensor reshaped (``ViewBackward0``),
    a 1-D one unsqueezed in front (and for 3-D also behind), a 2-D one behind for 3-D."""
    if input.ndim >= nd:
        return input
    if input.ndim == 0:
        return reshape(input, *([1] * nd))
    unsqueeze = _O["unsqueeze"]  # (the row, as torch's C++ calls at::unsqueeze)
    if nd == 2 or input.ndim == 2:  # (n) -> (1, n); (m, n) -> (m, n, 1)
        out = dispatch(unsqueeze, input, dim=0) if input.ndim == 1 else input
        return out if nd == 2 else dispatch(unsqueeze, out, dim=2)
    return dispatch(unsqueeze, dispatch(unsqueeze, input, dim=0), dim=2)  # (n) -> (1, n, 1)


def _atleast_fn(nd: int) -> Any:
    def fn(*tensors: Any) -> Any:
        ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
        out = [_atleast(t, nd) for t in ts]
        return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else tuple(out)

    fn.__name__ = fn.__qualname__ = f"atleast_{nd}d"
    fn.__doc__ = (f"Each tensor with at least {nd} dimensions (a tensor for one tensor, a tuple "
                  f"for several).\n\n    Example:\n        >>> import gradviz\n        >>> "
                  f"gradviz.atleast_{nd}d(gradviz.tensor(1.0)).shape\n        gradviz.Size("
                  f"{[1] * nd})\n    ")
    return fn


atleast_1d, atleast_2d, atleast_3d = _atleast_fn(1), _atleast_fn(2), _atleast_fn(3)


def _stack_list(name: str, tensors: Any) -> list[Tensor]:
    ts = _tensor_list(name, tensors)
    if not ts:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return ts


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenate column-wise: along dim 0 for 1-D tensors, else dim 1 (``CatBackward0``;
    0-d tensors become 1-D first).

    Example:
        >>> import gradviz
        >>> gradviz.hstack([gradviz.tensor([1, 2]), gradviz.tensor([3])])
        tensor([1, 2, 3])
    """
    ts = [_atleast(t, 1) for t in _stack_list("hstack", tensors)]
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenate row-wise (dim 0) after making every tensor at least 2-D (``CatBackward0``;
    a 1-D tensor becomes one row, ``UnsqueezeBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.vstack([gradviz.tensor([1, 2]), gradviz.tensor([3, 4])])
        tensor([[1, 2],
                [3, 4]])
    """
    return cat([_atleast(t, 2) for t in _stack_list("vstack", tensors)], 0)


row_stack = vstack


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenate depth-wise (dim 2) after making every tensor at least 3-D.

    Example:
        >>> import gradviz
        >>> gradviz.dstack([gradviz.tensor([1, 2]), gradviz.tensor([3, 4])]).shape
        gradviz.Size([1, 2, 2])
    """
    return cat([_atleast(t, 3) for t in _stack_list("dstack", tensors)], 2)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Tensors as columns side by side: 0-d and 1-D tensors become columns (``reshape(n, 1)``),
    then :func:`hstack`.

    Example:
        >>> import gradviz
        >>> gradviz.column_stack([gradviz.tensor([1, 2]), gradviz.tensor([3, 4])])
        tensor([[1, 3],
                [2, 4]])
    """
    ts = [reshape(t, t.numel(), 1) if t.ndim <= 1 else t
          for t in _stack_list("column_stack", tensors)]
    return cat(ts, 1)


_TENSOR_SPLIT_SIGNATURES = ("Tensor input, tuple of ints indices, int dim = 0",
                            "Tensor input, Tensor tensor_indices_or_sections, int dim = 0",
                            "Tensor input, int sections, int dim = 0")


def _no_out_overloads(fn: str, args: tuple, signatures: tuple[str, ...]) -> TypeError:
    """torch's "invalid combination of arguments" error for a function without ``out=``."""
    got = ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in args)
    listed = "".join(f" * ({s})\n" for s in signatures)
    return TypeError(f"{fn}() received an invalid combination of arguments - got ({got}), but "
                     f"expected one of:\n{listed}")


def _split_at(input: Tensor, bounds: list[int], d: int) -> tuple[Tensor, ...]:
    """The slices between consecutive ``bounds`` along ``d`` (``SliceBackward0`` each), clamped
    to the dimension as Python slicing clamps."""
    n = input.shape[d]
    edges = [0, *bounds, n]
    out = []
    for start, end in zip(edges, edges[1:]):
        start, end = builtins.min(builtins.max(start, 0), n), builtins.min(builtins.max(end, 0), n)
        out.append(_slice(input, d, start, builtins.max(start, end)))
    return tuple(out)


def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into ``sections`` nearly equal parts (the first ``n % sections`` one longer) or at
    the given ``indices``, along ``dim``: views, ``SliceBackward0`` each.

    Example:
        >>> import gradviz
        >>> [t.tolist() for t in gradviz.tensor_split(gradviz.arange(7), 3)]
        [[0, 1, 2], [3, 4], [5, 6]]
    """
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios._data.dtype.kind not in "iu" or ios.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have "
                               "integer dtype and be a 0-D or 1-D tensor")
        ios = int(ios.item()) if ios.ndim == 0 else [int(i) for i in ios.tolist()]
    if isinstance(ios, bool) or not (isinstance(ios, (int, np.integer)) or (
            isinstance(ios, (list, tuple)) and builtins.all(
                isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in ios))):
        raise _no_out_overloads("tensor_split", (input, ios), _TENSOR_SPLIT_SIGNATURES)
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = int(_wrap_dim(dim, input.ndim))  # (its slices save the dim normalized, as torch's)
    if isinstance(ios, (list, tuple)):
        return _split_at(input, [int(i) for i in ios], d)
    sections = int(ios)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    n = input.shape[d]
    size, extra = divmod(n, sections)
    bounds, at = [], 0
    for i in range(sections - 1):
        at += size + (1 if i < extra else 0)
        bounds.append(at)
    return _split_at(input, bounds, d)


def _dim_split(name: str, input: Tensor, ios: Any, d: int, need: int) -> tuple[Tensor, ...]:
    if input.ndim < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, but "
                           f"got a tensor with {input.ndim} dimensions!")
    if isinstance(ios, (int, np.integer)) and not isinstance(ios, bool):
        if ios == 0 or input.shape[d] % ios:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the "
                               f"size of the dimension {input.shape[d]} is not divisible by "
                               f"the split_size {ios}!")
        return tensor_split(input, int(ios), d)
    if not (isinstance(ios, (list, tuple)) and builtins.all(
            isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in ios)):
        kind = type(ios).__name__
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                        f"{kind}), but expected one of:\n * (Tensor input, int sections)\n * "
                        "(Tensor input, tuple of ints indices)\n")
    return tensor_split(input, list(ios), d)


def hsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """:func:`tensor_split` along dim 1 (dim 0 for a 1-D tensor); ``sections`` must divide it.

    Example:
        >>> import gradviz
        >>> [t.shape for t in gradviz.hsplit(gradviz.zeros(2, 4), 2)]
        [gradviz.Size([2, 2]), gradviz.Size([2, 2])]
    """
    return _dim_split("hsplit", input, indices_or_sections, 0 if input.ndim == 1 else 1, 1)


def vsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """:func:`tensor_split` along dim 0 of a tensor with at least 2 dimensions.

    Example:
        >>> import gradviz
        >>> [t.shape for t in gradviz.vsplit(gradviz.zeros(4, 2), [1])]
        [gradviz.Size([1, 2]), gradviz.Size([3, 2])]
    """
    return _dim_split("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """:func:`tensor_split` along dim 2 of a tensor with at least 3 dimensions.

    Example:
        >>> import gradviz
        >>> len(gradviz.dsplit(gradviz.zeros(1, 2, 6), 3))
        3
    """
    return _dim_split("dsplit", input, indices_or_sections, 2, 3)


def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Dimension ``dim`` viewed as ``sizes`` (one may be -1): ``ViewBackward0``.

    Example:
        >>> import gradviz
        >>> gradviz.unflatten(gradviz.zeros(2, 6), 1, (2, 3)).shape
        gradviz.Size([2, 2, 3])
    """
    sizes = [int(s) for s in sizes]
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    known = int(np.prod([s for s in sizes if s != -1], dtype=np.int64))
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if (-1 not in sizes and known != n) or (-1 in sizes and (known == 0 or n % known)):
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of "
                           f"dim {d} ({n}) in the input tensor")
    shape = list(input.shape)
    return view(input, *shape[:d], *sizes, *shape[d + 1:])


def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """:func:`transpose` under NumPy's other name (``TransposeBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.swapdims(gradviz.zeros(2, 3), 0, 1).shape
        gradviz.Size([3, 2])
    """
    return transpose(input, dim0, dim1)


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first toward the
    second (``Rot90Backward0``).

    Example:
        >>> import gradviz
        >>> gradviz.rot90(gradviz.tensor([[1, 2], [3, 4]]))
        tensor([[2, 4],
                [1, 3]])
    """
    dims = [int(d) for d in dims]
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = _wrap_dim(dims[0], input.ndim), _wrap_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    return dispatch(_O["rot90"], input, k=_int_arg("rot90", "k", 2, k), dims=(d0, d1))


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors on the diagonal of a zero matrix: 0-d ones as 1x1, 1-D ones as a row
    (``BlockDiagBackward0``, one edge per tensor).

    Example:
        >>> import gradviz
        >>> gradviz.block_diag(gradviz.tensor([[1, 2]]), gradviz.tensor(3))
        tensor([[1, 2, 0],
                [0, 0, 3]])
    """
    ts = _tensor_list("block_diag", tensors)
    for i, t in enumerate(ts):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.ndim} dimensions")
    if not ts:
        return Tensor._make(np.zeros((1, 0), _dtype.get_default_dtype().np))
    return dispatch(_O["block_diag"], *ts)


_MESHGRID_WARNING = ("torch.meshgrid: in an upcoming release, it will be required to pass the "
                     "indexing argument.")


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D tensors: the i-th output varies along dim i (``indexing="ij"``,
    the default, with PyTorch's warning when not given) or, with ``"xy"``, the first two
    inputs run along dims 1 and 0.
    Each output is a view then an expand (``ViewBackward0``, ``ExpandBackward0``).

    Example:
        >>> import gradviz
        >>> xs, ys = gradviz.meshgrid(gradviz.tensor([1, 2]), gradviz.tensor([3, 4, 5]),
        ...                           indexing="ij")
        >>> xs.shape, ys[0]
        (gradviz.Size([2, 3]), tensor([3, 4, 5]))
    """
    import warnings

    ts = list(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) \
        else list(tensors)
    ts = _tensor_list("meshgrid", ts)
    if indexing is None:
        warnings.warn(_MESHGRID_WARNING, UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError('torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f"{indexing}")
    if not ts:
        raise RuntimeError("torch.meshgrid expects a non-empty TensorList")
    for t in ts:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
    for t in ts[1:]:
        if t.dtype != ts[0].dtype:
            raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to "
                               "have the same dtype.")
    # "xy": the first two axes trade places, in the grid's shape and in where each input runs.
    place = list(range(len(ts)))
    if indexing == "xy" and len(ts) >= 2:
        place[0], place[1] = 1, 0
    shape = [0] * len(ts)
    for i, t in enumerate(ts):
        shape[place[i]] = t.numel()
    out = []
    for i, t in enumerate(ts):
        view_shape = [1] * len(ts)
        view_shape[place[i]] = -1
        out.append(expand(view(t, *view_shape), *shape))
    return tuple(out)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of the 1-D tensors' elements, one per row (``itertools.product``):
    :func:`meshgrid`, each grid flattened, stacked as columns (``StackBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.cartesian_prod(gradviz.tensor([1, 2]), gradviz.tensor([3, 4]))
        tensor([[1, 3],
                [1, 4],
                [2, 3],
                [2, 4]])
    """
    ts = _tensor_list("cartesian_prod", tensors)
    for t in ts:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(ts) == 1:
        return ts[0]
    return stack([flatten(g) for g in meshgrid(*ts, indexing="ij")], 1)


def detach(input: Tensor) -> Tensor:
    """``input.detach()``: the same data, cut from the graph.

    Example:
        >>> import gradviz
        >>> gradviz.detach(gradviz.ones(2, requires_grad=True)).requires_grad
        False
    """
    return input.detach()


def _unfold_method(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """``x.unfold(dimension, size, step)``: every window of ``size`` along ``dimension``,
    ``step`` apart, as a new last dimension (``UnfoldBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.arange(5).unfold(0, 2, 2)
        tensor([[0, 1],
                [2, 3]])
    """
    d = _wrap_dim(dimension, self.ndim)
    n = self.shape[d] if self.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return dispatch(_O["unfold"], self, dimension=d, size=int(size), step=int(step))
