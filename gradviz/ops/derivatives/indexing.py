"""Rows of indexing and selection: embedding, gather and scatter, index_*, masks, put and
take, unique, searchsorted."""

from __future__ import annotations

import numpy as np

from gradviz.ops import _formula as f
from gradviz.ops import _kernels as K
from gradviz.ops.opinfo import defop
from gradviz.ops.samples import P, R, Sample, W
from gradviz.tensor import Tensor


def _embedding_backward(grad, weight_sym_argsize_0, indices, padding_idx, scale_grad_by_freq,
                        sparse):
    idx = np.asarray(f.data(indices)).reshape(-1)
    n, d = weight_sym_argsize_0, grad.shape[-1]
    scale = (idx != padding_idx).astype(f.dtype_of(grad))
    if scale_grad_by_freq:
        scale = scale / np.bincount(idx, minlength=n)[idx]
    rows = grad.reshape((-1, d)) * scale.reshape(-1, 1).astype(f.dtype_of(grad))
    z = f.new_zeros((n, d), f.dtype_of(grad), f.is_tensor(grad))
    return f.index_put(z, (idx,), rows, True)


def _masked_fill_self(grad, mask, self_sym_sizes):
    """The gradient past the filled positions, summed back to ``self``'s shape: a larger mask
    broadcasts ``self``, and the mask is an argument, so the dispatch point never undoes it
    (PyTorch's engine does, in ``validate_outputs``; gradviz's leaves it to the rows)."""
    return f.sum_to(f.masked_fill(grad, mask, 0.0), tuple(self_sym_sizes))


# The condition is an argument, not an input: it has no derivative, so no edge (as PyTorch).
defop("where", "WhereBackward0", K.where, ("self", "other"),
      broadcasts=True,
      calls=("`gradviz.where`", ""),
      self=lambda grad, condition: f.where(condition, grad, 0.0),
      other=lambda grad, condition: f.where(condition, 0.0, grad))
defop("index", "IndexBackward0", K.index, ("self",),
      doc="x[tensor], x[list], x[mask]: advanced indexing (indices: one per leading dim)",
      calls=("`x[tensor]`, `x[list]`, `x[mask]`", ""),
      self=lambda grad, indices, self_sym_sizes: f.index_zeros(grad, self_sym_sizes, indices))
defop("index_put", "IndexPutBackward0", K.index_put, ("self", "values"),
      broadcasts=("values",),
      doc="x[tensor] = v (in place for __setitem__)",
      calls=("`gradviz.index_put`, `x[tensor] = v`", "`.index_put()`, `.index_put_()`"),
      self=lambda grad, indices, accumulate: grad if accumulate else f.index_put(
          grad, indices, np.zeros((), f.dtype_of(grad)), False),
      values=lambda grad, indices: f.index(grad, indices))
defop("_index_put_impl", "IndexPutImplBackward0", K.index_put, ("self", "values"),
      internal="aten internal: recorded by index_put(accumulate=True) and x[idx] += v",
      broadcasts=("values",),
      doc="index's backward, recorded under create_graph",
      calls=("index's backward under `create_graph=True`", ""),
      self=lambda grad, indices, accumulate: grad if accumulate else f.index_put(
          grad, indices, np.zeros((), f.dtype_of(grad)), False),
      values=lambda grad, indices: f.index(grad, indices))
defop("index_select", "IndexSelectBackward0", K.index_select, ("self",),
      calls=("`gradviz.index_select`", "`.index_select()`"),
      self=lambda grad, self_sym_sizes, dim, index: f.index_zeros(
          grad, self_sym_sizes, (None,) * dim + (index,)) if len(self_sym_sizes) else grad)
defop("gather", "GatherBackward0", K.gather, ("self",),
      calls=("`gradviz.gather`", "`.gather()`"),
      self=lambda grad, self, dim, index, sparse_grad: f.scatter_add(
          f.zeros_like(self), dim, index, grad))
defop("scatter", "ScatterBackward0", K.scatter, ("self", "src"),
      calls=("`gradviz.scatter`", "`.scatter()`, `.scatter_()`"),
      self=lambda grad, dim, index: f.scatter_zeros(grad, dim, index),
      src=lambda grad, dim, index: f.gather(grad, dim, index))
defop("scatter_value", "ScatterBackward1", K.scatter_value, ("self",),
      internal="overload of scatter (value=): reached through gradviz.scatter, which picks "
               "torch's overload",
      calls=("`gradviz.scatter(x, dim, index, 2.0)`", "`.scatter()`, `.scatter_()`"),
      self=lambda grad, dim, index: f.scatter_zeros(grad, dim, index))
defop("scatter_add", "ScatterAddBackward0", K.scatter_add, ("self", "src"),
      calls=("`gradviz.scatter_add`", "`.scatter_add()`, `.scatter_add_()`"),
      self=lambda grad, dim, index: grad,
      src=lambda grad, dim, index: f.gather(grad, dim, index))
defop("masked_fill", "MaskedFillBackward0", K.masked_fill, ("self",),
      hidden=("self_sym_sizes",),  # torch's engine sums back to it (validate_outputs)
      calls=("`gradviz.masked_fill`", "`.masked_fill()`, `.masked_fill_()`"),
      self=lambda grad, mask, self_sym_sizes: _masked_fill_self(grad, mask, self_sym_sizes))
defop("masked_fill_tensor", "MaskedFillBackward1", K.masked_fill_tensor, ("self", "value"),
      internal="overload of masked_fill (a tensor value): reached through gradviz.masked_fill, "
               "which picks torch's overload",
      hidden=("self_sym_sizes",),  # torch's engine sums back to it (validate_outputs)
      doc="masked_fill with a 0-d tensor value",
      calls=("`gradviz.masked_fill(x, mask, tensor)`", "`.masked_fill()`, `.masked_fill_()`"),
      self=lambda grad, mask, self_sym_sizes: _masked_fill_self(grad, mask, self_sym_sizes),
      value=lambda grad, mask: f.sum(f.where(mask, grad, 0.0), tuple(range(len(grad.shape)))))
defop("embedding", "EmbeddingBackward0", K.embedding, ("weight",),
      doc="rows of weight; padding_idx rows get no gradient",
      calls=("`F.embedding`", ""),
      weight=_embedding_backward)


# -- masks and flat positions
def _masked_select_backward(grad, self, mask):
    """Zeros of the broadcast shape with ``grad`` put where the mask holds, summed back to
    ``self``'s shape (PyTorch writes it with masked_scatter)."""
    m = np.asarray(f.data(mask))
    shape = tuple(np.broadcast_shapes(tuple(self.shape), m.shape))
    if not shape:  # 0-d self and mask: their one element, selected or not
        return f.index_zeros(grad, (1,), (m.reshape(1),)).reshape(())
    full = f.index_zeros(grad, shape, (np.broadcast_to(m, shape),))
    return f.sum_to(full, tuple(self.shape))


def _take_backward(grad, self, index):
    """Zeros of the flattened ``self`` with ``grad`` added at ``index`` (repeats add up)."""
    n = int(np.prod(self.shape, dtype=np.int64))
    idx = np.asarray(f.data(index)).reshape(-1)
    return f.index_zeros(grad.reshape((-1,)), (n,), (idx,)).reshape(tuple(self.shape))


# A fixed mask for the samples: a random one may select nothing.
_MASK = Tensor._make(np.array([[True, False, True, True], [False, False, True, False],
                               [True, True, False, True]]))
defop("masked_select", "MaskedSelectBackward0", K.masked_select, ("self",),
      doc="the elements where the (broadcast) bool mask holds, as a 1-D tensor",
      calls=("`gradviz.masked_select`", "`.masked_select()`"),
      samples=(Sample(R(3, 4), mask=_MASK), Sample(R(4), mask=_MASK),
               Sample(R(3, 1), mask=_MASK)),
      self=_masked_select_backward)
defop("take", "TakeBackward0", K.take, ("self",),
      doc="elements of the flattened tensor at ``index``, in ``index``'s shape",
      calls=("`gradviz.take`", "`.take()`"),
      samples=(Sample(R(3, 4), index=Tensor._make(np.array([[0, 5], [11, -1]]))),
               Sample(R(5), index=Tensor._make(np.array([1, 1, 3])))),
      self=_take_backward)
defop("nonzero", None, K.nonzero, ("self",),
      doc="the indices of the non-zero elements, one row each (not differentiable)",
      calls=("`gradviz.nonzero`, `gradviz.argwhere`", "`.nonzero()`, `.argwhere()`"))


# -- index_add/copy/fill, scatter_reduce, put, unique, searchsorted
def _index_select(grad, dim, index):
    """``grad.index_select(dim, index)`` (differentiable under create_graph)."""
    if not len(grad.shape):
        return grad
    idx = np.asarray(f.data(index)).reshape(-1)
    return f.index(grad, (None,) * dim + (idx,))


def _unique_index(grad, dim, index):
    """``index`` without repeats (negative entries counted from the end): ``index_fill``
    writes its value once per position, however often the index names it."""
    n = grad.shape[dim] if len(grad.shape) else 1
    return np.unique(np.asarray(f.data(index)).reshape(-1) % n)


def _index_fill_zeros(grad, dim, index):
    """``grad.index_fill(dim, index, 0)``: what the overwritten positions give back."""
    return f.op("index_fill", grad, dim=dim, index=index, value=0.0)


def _as_source(g, source, source_dim):
    """The selected slices in ``source``'s shape (PyTorch's ``expand_as(source)``; a 0-d
    source was one slice, and gets it back 0-d)."""
    return g.reshape(()) if source_dim == 0 else f.expand(g, tuple(source.shape))


def _scatter_mask(shape, dim, index):
    """Where scatter_reduce sends something (a constant bool array)."""
    return K._scatter_count(tuple(shape), dim, np.asarray(f.data(index))) > 0


def _scatter_reduce_grads(grad, self, src, dim, index, reduce, include_self, result):
    """PyTorch's ``scatter_reduce_backward``: both inputs' gradients at once."""
    idx = np.asarray(f.data(index))
    shape = tuple(self.shape)
    hit = _scatter_mask(shape, dim, idx)
    dt = f.dtype_of(grad)
    gi = Tensor._make(idx) if f.is_tensor(grad) else idx  # (gather takes a tensor index)
    if reduce == "sum":
        g_self, g_src = grad, f.gather(grad, dim, gi)
    elif reduce == "mean":
        n = K._scatter_count(shape, dim, idx) + (1 if include_self else 0)
        g_self = grad / np.maximum(n, 1).astype(dt)
        g_src = f.gather(g_self, dim, gi)
    elif reduce == "prod":
        g_self, g_src = _scatter_prod_grads(grad, self, src, dim, idx, gi, include_self, result)
    else:  # amax, amin: the gradient is shared evenly among the elements equal to the result
        value = np.asarray(f.data(K.gather(np.asarray(f.data(result)), dim, idx)))
        self_wins = (np.asarray(f.data(self)) == np.asarray(f.data(result)))
        src_part = np.asarray(f.data(src))[tuple(slice(0, k) for k in idx.shape)]
        src_wins = src_part == value
        # PyTorch counts self's ties also with include_self=False (its formula does)
        n = K.scatter_add(self_wins.astype(np.int64), src_wins.astype(np.int64), dim, idx)
        shared = grad / np.maximum(n, 1).astype(dt)
        g_self = shared * self_wins.astype(dt)
        g_src = f.gather(shared, dim, gi) * src_wins.astype(dt)
    if not include_self:  # what arrives replaces self's own value there
        g_self = f.where(hit, 0.0, g_self)
    g_src = _pad_to(g_src, tuple(src.shape))
    return g_self, g_src


def _scatter_prod_grads(grad, self, src, dim, idx, gi, include_self, result):
    """Each factor's gradient is the product of the others, also where some are 0 (PyTorch's
    rule): ``self``'s is the product reduced into its place with ``self`` taken as 1; a
    ``src`` element that is the only zero sent to its place gets the product of the others
    (``src`` there taken as 1); any other element ``result / x``, with zeros taken as 1."""
    def reduced(into, values):
        return f.op("scatter_reduce", into, values, dim=dim, index=gi, reduce="prod",
                    include_self=include_self)

    masked_self = f.where(self == 0, 1.0, self)
    g_self = grad * reduced(masked_self, src) / masked_self
    part = _src_part(src, idx.shape)
    zero = np.asarray(f.data(part)) == 0
    zeros_there = K.gather(K.scatter_add(np.zeros(tuple(self.shape)), zero.astype(np.float64),
                                         dim, idx), dim, idx)
    single = zero & (zeros_there == 1)
    if not single.any():
        return g_self, f.gather(grad * result, dim, gi) / f.where(zero, 1.0, part)
    single_full = np.zeros(tuple(src.shape), bool)
    single_full[tuple(slice(0, k) for k in idx.shape)] = single
    with_one = reduced(self, f.where(single_full, 1.0, src))
    g_src = f.where(single, f.gather(grad * with_one, dim, gi),
                    f.gather(grad * result, dim, gi) / f.where(zero, 1.0, part))
    return g_self, g_src


def _src_part(src, shape):
    """``src[:shape[0], :shape[1], ...]``: the part of ``src`` that ``index`` reaches."""
    for d, k in enumerate(shape):
        if src.shape[d] != k:
            src = f.slice_dim(src, d, 0, k)
    return src


def _pad_to(g, shape):
    """A gradient of ``src[:index.shape]`` put back in ``src``'s shape (zeros elsewhere)."""
    if tuple(g.shape) == shape:
        return g
    z = f.new_zeros(shape, f.dtype_of(g), f.is_tensor(g))
    idx = tuple(np.arange(k).reshape((-1,) + (1,) * (len(g.shape) - d - 1))
                for d, k in enumerate(g.shape))
    return f.index_put(z, idx, g, True)


def _put_self_backward(grad, index, source, accumulate):
    if accumulate:
        return grad
    return f.op("put", grad, np.zeros(tuple(source.shape), f.dtype_of(grad)), index=index,
                accumulate=False)


defop("index_add", "IndexAddBackward0", K.index_add, ("self", "source"),
      doc="``input`` with ``alpha * source`` added at ``index`` along ``dim`` (repeats add up)",
      calls=("`gradviz.index_add`", "`.index_add()`, `.index_add_()`"),
      samples=(Sample(R(3, 4), R(2, 4), dim=0, index=Tensor._make(np.array([0, 2])),
                      source_dim=2),
               Sample(R(3, 4), R(3, 3), dim=1, index=Tensor._make(np.array([1, 1, 3])),
                      alpha=2.0, source_dim=2)),
      self=lambda grad: grad,
      source=lambda grad, dim, index, source, source_dim, alpha: _as_source(
          _index_select(grad, dim, index) * alpha if alpha != 1
          else _index_select(grad, dim, index), source, source_dim))
defop("index_copy", "IndexCopyBackward0", K.index_copy, ("self", "source"),
      doc="``input`` with the slices of ``source`` copied to ``index`` along ``dim``",
      calls=("`gradviz.index_copy`", "`.index_copy()`, `.index_copy_()`"),
      samples=(Sample(R(3, 4), R(2, 4), dim=0, index=Tensor._make(np.array([2, 0])),
                      source_dim=2),
               Sample(R(2, 5), R(2, 2), dim=1, index=Tensor._make(np.array([4, 1])),
                      source_dim=2)),
      self=lambda grad, dim, index: _index_fill_zeros(grad, dim, index),
      source=lambda grad, dim, index, source, source_dim: _as_source(
          _index_select(grad, dim, index), source, source_dim))
defop("index_fill", "IndexFillBackward0", K.index_fill, ("self",),
      doc="``input`` with ``value`` (a number) written at ``index`` along ``dim``",
      calls=("`gradviz.index_fill`", "`.index_fill()`, `.index_fill_()`"),
      samples=(Sample(R(3, 4), dim=1, index=Tensor._make(np.array([0, 2])), value=-1.0),),
      self=lambda grad, dim, index: _index_fill_zeros(grad, dim, index))
defop("index_fill_tensor", "IndexFillBackward1", K.index_fill_tensor, ("self", "value"),
      internal="overload of index_fill (a tensor value): reached through gradviz.index_fill, "
               "which picks torch's overload",
      doc="``index_fill`` with a 0-d tensor ``value``",
      calls=("`gradviz.index_fill(x, dim, index, tensor)`", "`.index_fill()`, `.index_fill_()`"),
      samples=(Sample(R(3, 4), W(0.5), dim=0, index=Tensor._make(np.array([1]))),),
      self=lambda grad, dim, index: _index_fill_zeros(grad, dim, index),
      value=lambda grad, dim, index: f.sum(_index_select(grad, dim, _unique_index(grad, dim,
                                                                                   index)),
                                           tuple(range(len(grad.shape)))))
defop("scatter_reduce", "ScatterReduceBackward0", K.scatter_reduce, ("self", "src"),
      doc="``src`` reduced into ``input`` at ``index`` along ``dim``: sum, prod, mean, amax or "
          "amin, with or without ``input``'s own values (``include_self``)",
      calls=("`gradviz.scatter_reduce`", "`.scatter_reduce()`, `.scatter_reduce_()`"),
      samples=tuple(Sample(R(3, 4), P(3, 2) if r == "prod" else R(3, 2), dim=1,
                           index=Tensor._make(np.array([[0, 0], [1, 3], [3, 3]])), reduce=r,
                           include_self=inc)
                    for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False))
      # prod with zero factors, one per place (PyTorch has no second derivative for more)
      + (Sample(W([[1.0, 0.0, 3.0, 2.0]]), W([[5.0, 0.5, 0.0, 4.0]]), dim=1,
                index=Tensor._make(np.array([[0, 0, 1, 3]])), reduce="prod", include_self=True),),
      self=lambda grad, self, src, dim, index, reduce, include_self, result:
          _scatter_reduce_grads(grad, self, src, dim, index, reduce, include_self, result)[0],
      src=lambda grad, self, src, dim, index, reduce, include_self, result:
          _scatter_reduce_grads(grad, self, src, dim, index, reduce, include_self, result)[1])
defop("put", "PutBackward0", K.put, ("self", "source"),
      doc="``source`` written (or with ``accumulate``, added) at ``index`` of the flattened "
          "``input``",
      calls=("`gradviz.put`", "`.put()`, `.put_()`"),
      samples=(Sample(R(3, 4), R(2), index=Tensor._make(np.array([1, -1])), accumulate=False),
               Sample(R(3, 4), R(2, 2), index=Tensor._make(np.array([[0, 5], [5, 7]])),
                      accumulate=True)),
      self=_put_self_backward,
      source=lambda grad, index, source: f.op("take", grad, index=index).reshape(
          tuple(source.shape)))


def _no_derivative(aten: str):
    """The formula of a node PyTorch records but has no derivative for (``Unique2Backward0``):
    its backward fails with PyTorch's text."""
    def formula(grads):
        raise NotImplementedError(f"the derivative for '{aten}' is not implemented.")
    formula.not_implemented = True  # (the generic gradcheck suite has nothing to check)
    return formula


defop("unique", "Unique2Backward0", K.unique, ("self",),
      outputs=("output", "inverse", "counts"), nondiff_outputs=(1, 2),
      doc="the sorted distinct values (with ``return_inverse``/``return_counts``); recorded "
          "but not differentiable, as in PyTorch",
      calls=("`gradviz.unique`", "`.unique()`"),
      self=_no_derivative("_unique2"))
defop("unique_dim", "UniqueDimBackward0", K.unique, ("self",),
      internal="reached through gradviz.unique(dim=...) (a Python function in torch too)",
      outputs=("output", "inverse", "counts"), nondiff_outputs=(1, 2),
      doc="``unique(dim=d)``: the distinct slices along ``d`` (not differentiable)",
      calls=("`gradviz.unique(x, dim=0)`", "`.unique(dim=0)`"),
      self=_no_derivative("unique_dim"))
defop("unique_consecutive", "UniqueConsecutiveBackward0", K.unique_consecutive, ("self",),
      outputs=("output", "inverse", "counts"), nondiff_outputs=(1, 2),
      doc="each run of equal elements (or slices along ``dim``) once; recorded but not "
          "differentiable, as in PyTorch",
      calls=("`gradviz.unique_consecutive`", "`.unique_consecutive()`"),
      self=_no_derivative("unique_consecutive"))
defop("searchsorted", None, K.searchsorted, ("sorted_sequence",),
      doc="where each value would go in the sorted last dimension (int64 indices)",
      calls=("`gradviz.searchsorted`", ""))
defop("bucketize", None, K.bucketize, ("self",),
      doc="the bucket of each element among sorted 1-D ``boundaries``",
      calls=("`gradviz.bucketize`", ""))
