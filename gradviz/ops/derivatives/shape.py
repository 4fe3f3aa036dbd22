"""Rows of the shape ops and views: view, transpose, permute, expand, squeeze, select and
slice, split, cat and stack, flips and rolls, triangles and diagonals."""

from __future__ import annotations

import numpy as np

from gradviz.ops import _formula as f
from gradviz.ops import _kernels as K
from gradviz.ops import bindings as B
from gradviz.ops.opinfo import defop
from gradviz.ops.samples import R, Sample


def _repeat_backward(grad, repeats, self_sym_sizes):
    lead = len(repeats) - len(self_sym_sizes)
    sizes = (1,) * lead + tuple(self_sym_sizes)
    g = grad.reshape(tuple(x for r, s in zip(repeats, sizes, strict=True) for x in (r, s)))
    return f.sum(g, tuple(range(0, 2 * len(repeats), 2))).reshape(self_sym_sizes)


def _cat_backward(grad, dim, tensors_args_sizes):
    out, start = [], 0
    for sizes in tensors_args_sizes:
        if tuple(sizes) == (0,):  # a legacy empty tensor, skipped by the forward
            out.append(f.new_zeros((0,), f.dtype_of(grad), f.is_tensor(grad)))
            continue
        n = sizes[dim]
        out.append(f.slice_dim(grad, dim, start, start + n))
        start += n
    return out


defop("view", "ViewBackward0", K.view, ("self",),
      view=True,
      doc="view/reshape that can share storage",
      calls=("`gradviz.reshape`, `gradviz.flatten`",
             "`.view()`, `.reshape()`, `.flatten()`, `.view_as()`"),
      self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
defop("_unsafe_view", "UnsafeViewBackward0", K.unsafe_view, ("self",),
      internal="aten internal: recorded by reshape, matmul and kron where they copy, as torch's "
               "composites record it",
      doc="the reshape of a copy (reshape of a non-contiguous tensor: clone, then this)",
      calls=("`gradviz.reshape` (copying), `x @ y` (N-D)", "`.reshape()`"),
      self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
defop("_reshape_alias", "ReshapeAliasBackward0", K.reshape_alias, ("self",),
      internal="aten internal: recorded by reshape of a non-contiguous viewable tensor",
      view=True,
      doc="reshape of a non-contiguous tensor that can still be a view",
      calls=("`gradviz.reshape` (non-contiguous view)", "`.reshape()`, `.flatten()`"),
      self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
defop("alias", "AliasBackward0", K.alias, ("self",),
      internal="aten internal: recorded by x[...] and Tensor.new's aliasing, as torch records it",
      view=True,
      doc="x[...] and x[:, :]: the same tensor as a new view",
      calls=("`x[...]`, `x[:, :]`", ""),
      self=lambda grad: grad)
defop("clone", "CloneBackward0", K.clone, ("self",),
      signature="clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
      method=True, with_out=True, normalize=B.clone,
      doc="A copy with its own storage.",
      example="gradviz.clone(gradviz.ones(2))\ntensor([1., 1.])",
      calls=("", "`.contiguous()`"),
      self=lambda grad: grad)
defop("transpose", "TransposeBackward0", K.transpose, ("self",),
      view=True,
      calls=("`gradviz.transpose`, `gradviz.swapaxes`", "`.transpose()`, `.swapaxes()`"),
      self=lambda grad, dim0, dim1: f.transpose(grad, dim0, dim1))
defop("t", "TBackward0", K.t, ("self",),
      view=True,
      calls=("`gradviz.t`", "`.t()`"),
      self=lambda grad: f.t(grad))
defop("permute", "PermuteBackward0", K.permute, ("self",),
      view=True,
      calls=("`gradviz.permute`", "`.permute()`, `x.T`"),
      self=lambda grad, dims: f.permute(grad, tuple(np.argsort(dims))))
defop("expand", "ExpandBackward0", K.expand, ("self",),
      view=True,
      calls=("`gradviz.expand`", "`.expand()`, `.expand_as()`"),
      self=lambda grad, self_sym_sizes: f.sum_to(grad, self_sym_sizes))
# ndarray.squeeze(axis) and Tensor.squeeze(dim) both serve unsqueeze's formula.
defop("unsqueeze", "UnsqueezeBackward0", K.unsqueeze, ("self",),
      signature="unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", method=True,
      normalize=B.unsqueeze,
      view=True,
      doc="Insert a dimension of size 1 at ``dim``.",
      example="gradviz.unsqueeze(gradviz.zeros(3), 0).shape\ngradviz.Size([1, 3])",
      calls=("`x[None]`", ""),
      self=lambda grad, dim: grad.squeeze(dim))
defop("squeeze", "SqueezeBackward0", K.squeeze, ("self",),
      view=True,
      calls=("`gradviz.squeeze`", "`.squeeze()`"),
      self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
# squeeze_dim saves dim although its formula reshapes: PyTorch shows _saved_dim.
defop("squeeze_dim", "SqueezeBackward1", K.squeeze_dim, ("self",),
      internal="overload of squeeze (one dim): reached through gradviz.squeeze, which picks "
               "torch's overload",
      view=True,
      calls=("`gradviz.squeeze(x, dim)`", "`.squeeze()`"),
      self=lambda grad, self_sym_sizes, dim: grad.reshape(self_sym_sizes))
defop("squeeze_dims", "SqueezeBackward2", K.squeeze_dims, ("self",),
      internal="overload of squeeze (a tuple of dims): reached through gradviz.squeeze, which "
               "picks torch's overload",
      view=True,
      doc="``squeeze`` with a tuple of dims: those of size 1 are removed.",
      calls=("`gradviz.squeeze(x, (0, 2))`", "`.squeeze((0, 2))`"),
      self=lambda grad, self_sym_sizes, dim: grad.reshape(self_sym_sizes))
defop("squeeze_dim_", "SqueezeBackward4", K.squeeze_dim, ("self",),
      internal="overload of squeeze_ (one dim): reached through gradviz.squeeze_, which picks "
               "torch's overload",
      doc="in-place ``squeeze_(dim)`` (also inside matmul, 1-D @ 2-D, as in PyTorch)",
      calls=("`x @ y` (1-D @ 2-D)", "`.squeeze_(dim)`"),
      self=lambda grad, self_sym_sizes, dim: grad.reshape(self_sym_sizes))
defop("to_copy", "ToCopyBackward0", K.to_copy, ("self",),
      internal="aten::_to_copy: recorded by Tensor.to, .float(), .double() ...",
      doc="a dtype cast (``x.double()``, ``x.to(dtype)``)",
      calls=("", "`.to()`, `.double()`, `.float()`, `.type_as()`"),
      self=lambda grad, self_dtype: f.to_dtype(grad, self_dtype))
defop("select", "SelectBackward0", K.select, ("self",),
      view=True,
      doc="x[i] and x.select(dim, i)",
      calls=("`gradviz.select`, `x[i]`", "`.select()`"),
      self=lambda grad, self_sym_sizes, dim, index: f.select_backward(grad, self_sym_sizes, dim,
                                                                      index))
defop("slice", "SliceBackward0", K.slice_dim, ("self",),
      internal="aten::slice: recorded by basic indexing (x[a:b]) and narrow; torch has no "
               "torch.slice",
      view=True,
      doc="x[a:b:c] and narrow; one node per sliced dimension",
      calls=("`gradviz.narrow`, `x[a:b:c]`", "`.narrow()`"),
      self=lambda grad, self_sym_sizes, dim, start, end, step: f.slice_backward(
          grad, self_sym_sizes, dim, start, end, step))
defop("select_backward", "SelectBackwardBackward0", K.select_backward, ("grad_output",),
      internal="backward-only: recorded by select's formula under create_graph",
      doc="select's backward, recorded under create_graph",
      calls=("select's backward under `create_graph=True`", ""),
      grad_output=lambda grad, dim, index: f.select(grad, dim, index))
defop("slice_backward", "SliceBackwardBackward0", K.slice_backward, ("grad_output",),
      internal="backward-only: recorded by slice's formula under create_graph",
      doc="slice's backward, recorded under create_graph",
      calls=("slice's backward under `create_graph=True`", ""),
      grad_output=lambda grad, dim, start, end, step: f.slice_dim(grad, dim, start, end, step))
defop("repeat", "RepeatBackward0", K.repeat, ("self",),
      calls=("", "`.repeat()`"),
      self=_repeat_backward)
defop("split", "SplitBackward0", K.split, ("self",),
      view=True, multi=True,
      doc="split(int) and chunk: several views; their gradients are concatenated",
      calls=("`gradviz.split`, `gradviz.chunk`", "`.split()`, `.chunk()`"),
      self=lambda grads, dim, self_sym_sizes, split_size: f.cat(grads, dim))
defop("split_with_sizes", "SplitWithSizesBackward0", K.split_with_sizes, ("self",),
      view=True, multi=True,
      doc="split(list of sizes)",
      calls=("`gradviz.split(x, [sizes])`", "`.split()`"),
      self=lambda grads, dim, self_sym_sizes, split_sizes: f.cat(grads, dim))
# unsafe_split: split whose pieces autograd does not track as views of the input (each piece
# has its own version counter; writing into one is not checked against the others). PyTorch's
# CPU RNN cells cut their gates with it (`unsafe_chunk` in ATen's RNN.cpp).
defop("unsafe_split", "UnsafeSplitBackward0", K.split, ("self",),
      multi=True,
      doc="split(int) and unsafe_chunk, the pieces not tracked as views (the CPU RNN cells' gates)",
      calls=("`gradviz.unsafe_split`, `gradviz.unsafe_chunk`, `nn.LSTMCell`, `nn.GRUCell`",
             "`.unsafe_split()`, `.unsafe_chunk()`"),
      self=lambda grads, dim, self_sym_sizes, split_size: f.cat(grads, dim))
defop("unsafe_split_with_sizes", "UnsafeSplitWithSizesBackward0", K.split_with_sizes, ("self",),
      multi=True,
      doc="unsafe_split(list of sizes)",
      calls=("`gradviz.unsafe_split_with_sizes`", "`.unsafe_split_with_sizes()`"),
      self=lambda grads, dim, self_sym_sizes, split_sizes: f.cat(grads, dim))
defop("unbind", "UnbindBackward0", K.unbind, ("self",),
      view=True, multi=True,
      doc="the slices along dim (iterating over a tensor)",
      calls=("`gradviz.unbind`, `iter(x)`", "`.unbind()`"),
      self=lambda grads, dim: f.stack(grads, dim))
defop("cat", "CatBackward0", K.cat, ("tensors",),
      variadic=True, hidden=("tensors_args_sizes",),
      doc="one edge per tensor of the list",
      calls=("`gradviz.cat`, `gradviz.concat`, `gradviz.concatenate`", ""),
      tensors=_cat_backward)
defop("stack", "StackBackward0", K.stack, ("tensors",),
      variadic=True,
      doc="one edge per tensor of the list",
      calls=("`gradviz.stack`", ""),
      tensors=lambda grad, dim: [f.select(grad, dim, i) for i in range(grad.shape[dim])])


defop("flip", "FlipBackward0", K.flip, ("self",),
      doc="Reverse the order of elements along ``dims``.",
      calls=("`gradviz.flip`", "`.flip()`"),
      samples=(Sample(R(2, 3), dims=(1,)), Sample(R(2, 3, 2), dims=(0, 2)), Sample(R(), dims=())),
      self=lambda grad, dims: f.flip(grad, dims))


# -- triangles, diagonals, rolls
def _diagonal_backward(grad, self_sym_sizes, offset, dim1, dim2):
    return f.diagonal_backward(grad, self_sym_sizes, offset, dim1, dim2)


defop("tril", "TrilBackward0", K.tril, ("self",),
      signature="tril(Tensor self, SymInt diagonal=0) -> Tensor", method=True, inplace=True,
      with_out=True, normalize=B.triangle("tril"),
      doc="the lower triangle of the last two dims (on and below ``diagonal``), zeros above",
      example="gradviz.tril(gradviz.ones(2, 2))\ntensor([[1., 0.],\n        [1., 1.]])",
      samples=(Sample(R(3, 4), diagonal=0), Sample(R(2, 3, 3), diagonal=-1),
               Sample(R(4, 3), diagonal=1)),
      self=lambda grad, diagonal: f.tril(grad, diagonal))
defop("triu", "TriuBackward0", K.triu, ("self",),
      signature="triu(Tensor self, SymInt diagonal=0) -> Tensor", method=True, inplace=True,
      with_out=True, normalize=B.triangle("triu"),
      doc="the upper triangle of the last two dims (on and above ``diagonal``), zeros below",
      example="gradviz.triu(gradviz.ones(2, 3), 1)\ntensor([[0., 1., 1.],\n        [0., 0., 1.]])",
      samples=(Sample(R(3, 4), diagonal=0), Sample(R(2, 3, 3), diagonal=1),
               Sample(R(4, 3), diagonal=-2)),
      self=lambda grad, diagonal: f.triu(grad, diagonal))
defop("diagonal", "DiagonalBackward0", K.diagonal, ("self",),
      view=True,
      doc="the diagonal of dims ``dim1, dim2`` as a view, on the last dimension",
      calls=("`gradviz.diagonal`", "`.diagonal()`"),
      samples=(Sample(R(3, 4), offset=1, dim1=0, dim2=1), Sample(R(3, 3), offset=0, dim1=0,
                                                                   dim2=1),
               Sample(R(2, 3, 4), offset=-1, dim1=2, dim2=0)),
      self=_diagonal_backward)
defop("diagonal_copy", "DiagonalBackward0_copy", K.diagonal_copy, ("self",),
      doc="the diagonal of a matrix as a copy: what ``diag`` of a 2-D tensor records",
      calls=("`gradviz.diag(matrix)`", "`.diag()`"),
      samples=(Sample(R(3, 4), offset=0, dim1=0, dim2=1), Sample(R(4, 3), offset=-1, dim1=0,
                                                                   dim2=1)),
      self=_diagonal_backward)
defop("diagonal_backward", "DiagonalBackwardBackward0", K.diagonal_backward, ("grad_output",),
      internal="backward-only: recorded by diagonal's formula under create_graph",
      doc="diagonal's backward, recorded under create_graph",
      calls=("diagonal's backward under `create_graph=True`", ""),
      samples=(Sample(R(3), input_sizes=(3, 4), offset=1, dim1=0, dim2=1),),
      grad_output=lambda grad, offset, dim1, dim2: f.diagonal(grad, offset, dim1, dim2))
defop("diag_embed", "DiagEmbedBackward0", K.diag_embed, ("self",),
      doc="the last dimension written on a diagonal of two new dims (``diag`` of a vector)",
      calls=("`gradviz.diag_embed`, `gradviz.diag(vector)`", "`.diag_embed()`, `.diag()`"),
      samples=(Sample(R(3), offset=0, dim1=0, dim2=1), Sample(R(2, 3), offset=1, dim1=1, dim2=2),
               Sample(R(2, 3), offset=-1, dim1=2, dim2=0)),
      self=lambda grad, offset, dim1, dim2: f.diagonal(grad, offset, dim1, dim2))
defop("roll", "RollBackward0", K.roll, ("self",),
      doc="shift elements along ``dims`` (of the flattened tensor when ``dims`` is empty), "
          "wrapping around",
      calls=("`gradviz.roll`", "`.roll()`"),
      samples=(Sample(R(3, 4), shifts=(1,), dims=(1,)), Sample(R(3, 4), shifts=(5,), dims=()),
               Sample(R(2, 3, 4), shifts=(1, -2), dims=(0, 2))),
      self=lambda grad, shifts, dims: f.roll(grad, tuple(-s for s in shifts), dims))


# -- in-place views, rotations, block diagonals, unfold
def _block_diag_backward(grad, tensors_args_sizes):
    """Each tensor's block cut out of the gradient, in the tensor's own shape (0-d, 1-D)."""
    out, r, c = [], 0, 0
    for sizes in tensors_args_sizes:
        rows, cols = (1, 1) if len(sizes) == 0 else (1, sizes[0]) if len(sizes) == 1 else sizes
        block = f.slice_dim(f.slice_dim(grad, 0, r, r + rows), 1, c, c + cols)
        out.append(block.reshape(tuple(sizes)))
        r, c = r + rows, c + cols
    return out


def _unfold_backward(grad, self_sym_sizes, dimension, size, step):
    """Each window's gradient added back where the window came from (PyTorch's
    ``unfold_backward``): one slice_backward per window, so it is differentiable again."""
    if not len(self_sym_sizes):
        return grad.reshape(())
    nd = len(self_sym_sizes)
    order = tuple(range(dimension)) + (nd,) + tuple(range(dimension, nd))
    total = None
    for i in range(grad.shape[dimension]):
        # window i: (..., size) with the window last; its dimension back in place
        w = f.permute(f.select(grad, dimension, i), order[:dimension] + (nd - 1,) + tuple(
            range(dimension, nd - 1)))
        part = f.slice_backward(w, tuple(self_sym_sizes), dimension, i * step,
                                i * step + size, 1)
        total = part if total is None else total + part
    if total is None:  # no window fits: nothing flows back
        return f.new_zeros(tuple(self_sym_sizes), f.dtype_of(grad), f.is_tensor(grad))
    return total


# In-place unsqueeze_/transpose_ (PyTorch's own calls inside quantile record them too).
defop("unsqueeze_", "UnsqueezeBackward1", K.unsqueeze, ("self",),
      doc="in-place ``unsqueeze_(dim)`` (also inside ``quantile`` with a tensor ``q``)",
      calls=("inside `gradviz.quantile(x, q_tensor)`", "`.unsqueeze_()`"),
      samples=(Sample(R(2, 3), dim=0), Sample(R(3), dim=1)),
      self=lambda grad, dim: grad.squeeze(dim))
defop("transpose_", "TransposeBackward1", K.transpose, ("self",),
      doc="in-place ``transpose_(dim0, dim1)`` (also inside ``quantile`` with a tensor ``q``)",
      calls=("inside `gradviz.quantile(x, q_tensor)`", "`.transpose_()`, `.swapaxes_()`"),
      samples=(Sample(R(2, 3, 1), dim0=0, dim1=2),),
      self=lambda grad, dim0, dim1: f.transpose(grad, dim0, dim1))
defop("t_", "TBackward1", K.t, ("self",),
      doc="in-place ``t_()``",
      calls=("", "`.t_()`"),
      samples=(Sample(R(2, 3)), Sample(R(3))),
      self=lambda grad: f.t(grad))
defop("squeeze_", "SqueezeBackward3", K.squeeze, ("self",),
      doc="in-place ``squeeze_()``: every dimension of size 1",
      calls=("", "`.squeeze_()`"),
      samples=(Sample(R(2, 1, 3, 1)), Sample(R(1))),
      self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
defop("rot90", "Rot90Backward0", K.rot90, ("self",),
      doc="rotate by 90 degrees ``k`` times, from the first of ``dims`` toward the second",
      calls=("`gradviz.rot90`", "`.rot90()`"),
      samples=(Sample(R(3, 4), k=1, dims=(0, 1)), Sample(R(2, 3, 4), k=2, dims=(2, 0)),
               Sample(R(3, 4), k=-1, dims=(0, 1)), Sample(R(3, 2), k=4, dims=(1, 0))),
      self=lambda grad, dims, k: f.op("rot90", grad, k=-k, dims=dims))
defop("block_diag", "BlockDiagBackward0", K.block_diag, ("tensors",),
      variadic=True, hidden=("tensors_args_sizes",),
      doc="the tensors on the diagonal of a zero matrix (one edge per tensor)",
      calls=("`gradviz.block_diag`", ""),
      samples=(Sample(R(2, 3), R(3), R()), Sample(R(1, 2), R(2, 2))),
      tensors=_block_diag_backward)
defop("unfold", "UnfoldBackward0", K.unfold, ("self",),
      doc="every window of ``size`` along ``dimension``, ``step`` apart, as a new last "
          "dimension (gradviz copies; PyTorch's result is a view)",
      calls=("", "`.unfold()`"),
      samples=(Sample(R(3, 5), dimension=1, size=2, step=1),
               Sample(R(7), dimension=0, size=3, step=2),
               Sample(R(4, 2, 3), dimension=0, size=2, step=3)),
      self=_unfold_backward)
