"""Rows of the reductions: sums, means, extrema, products, variance and norms, cumulative
ops, sorting and selection (topk, sort, median ...), statistics and counts."""

from __future__ import annotations

import math

import numpy as np

from gradviz.ops import _formula as f
from gradviz.ops import _kernels as K
from gradviz.ops import bindings as B
from gradviz.ops.opinfo import defop
from gradviz.ops.samples import P, R, Sample, W


def _restore(g, dims, keepdim):
    """Re-insert reduced dimensions into a gradient (``restore_reduced_dims``)."""
    return g if keepdim else f.unsqueeze_dims(g, dims)


def _all_dims(x, dim):
    """The dims a reduction of ``x`` over ``dim`` reduces: all for None or (); none for a 0-d
    ``x``, whose dim 0 (or -1) PyTorch accepts and reduces over nothing."""
    if not len(x.shape):
        return ()
    return tuple(range(len(x.shape))) if dim is None or dim == () else dim


def _reduced_count(self_sym_sizes, dim):
    n = 1
    for d in dim:
        n *= self_sym_sizes[d] if self_sym_sizes else 1  # a 0-d input: one element
    return n


def _sum_backward(grad, self_sym_sizes, dim, keepdim):
    if not keepdim and len(self_sym_sizes):
        grad = f.unsqueeze_dims(grad, dim)
    return f.expand(grad, self_sym_sizes)


def _even_share(grad, self, result, dims, keepdim):
    """Share ``grad`` evenly among the elements equal to the extremum (amax, max(), ...).
    The weights are constants: they depend on ties, not smoothly on ``self``."""
    x, r = f.data(self), np.asarray(f.data(result))
    dims = dims if x.ndim else ()
    if not keepdim:
        r = np.expand_dims(r, dims)
    mask = (x == r) | (np.isnan(x) & np.isnan(r))
    w = (mask / mask.sum(axis=dims, keepdims=True)).astype(f.dtype_of(grad))
    return _restore(grad, dims, keepdim) * w


def _amax_backward(grad, self, result, dim, keepdim):
    return _even_share(grad, self, result, _all_dims(self, dim), keepdim)


def _value_selecting_backward(grads, self_sym_sizes, dim, indices, keepdim):
    """max(dim)/min(dim): the gradient goes to the returned index (``scatter`` into zeros)."""
    grad = grads[0]
    if not self_sym_sizes:
        return grad
    if not keepdim:
        grad = f.unsqueeze_dims(grad, (dim,))
        indices = f.unsqueeze_dims(indices, (dim,))
    z = f.new_zeros(self_sym_sizes, f.dtype_of(grad), f.is_tensor(grad))
    return f.scatter(z, dim, indices, grad)


def _prod_backward(grad, self, result, dims, keepdim):
    """d prod / d x_i = product of the others, also when some x are 0 (PyTorch's
    ``prod_backward``): with no zero it is ``result / x``; with exactly one zero only that
    element gets the product of the non-zero ones; with more, all get 0."""
    grad, result = _restore(grad, dims or (), keepdim), _restore(result, dims or (), keepdim)
    zero = f.data(self) == 0
    if not zero.any():
        return grad * (result / self)
    one_zero = zero & (zero.sum(axis=dims, keepdims=True) == 1)
    nonzero_prod = f.prod(f.where(zero, 1.0, self), dims, keepdim=True)
    others = f.where(one_zero, nonzero_prod, f.where(zero, 0.0, result / f.where(zero, 1.0, self)))
    return grad * others


def _var_backward(grad, self, dim, correction, keepdim):
    dims = _all_dims(self, dim)
    n = _reduced_count(self.shape, dims)
    c = 1 if correction is None else correction
    if dim is not None:
        grad = _restore(grad, dims, keepdim)
    # No more elements than the correction: inf (times 0), NaN as in PyTorch, not an exception.
    scale = 2.0 / (n - c) if n != c else math.inf
    return scale * grad * (self - f.mean(self, dims))


def _std_backward(grad, self, result, dim, correction, keepdim):
    zero = result == 0
    g = f.where(zero, 0.0, grad / f.where(zero, 1.0, result * 2))
    return _var_backward(g, self, dim, correction, keepdim)


def _norm_backward(grad, self, result, ord, dim, keepdim):  # noqa: A002 - PyTorch's name
    dims = _all_dims(self, dim)
    if dim is not None:
        grad, result = _restore(grad, dims, keepdim), _restore(result, dims, keepdim)
    if ord == 0:
        return None  # a count has no gradient: PyTorch's is undefined, so .grad stays None
    if ord == 1:
        return grad * f.sign(self)
    if ord in (math.inf, -math.inf):
        x, r = np.abs(f.data(self)), np.asarray(f.data(result))
        mask = x == r
        w = (np.sign(f.data(self)) * mask / mask.sum(axis=dims, keepdims=True))
        return grad * w.astype(f.dtype_of(grad))
    if ord < 1:
        # |x| ** (ord - 1) is infinite at x == 0, where PyTorch's gradient is 0 (sign(0) = 0
        # against a finite stand-in); norm ** (1 - ord) is then finite, 0 for a zero norm.
        scaled = f.sign(self) * f.where(self == 0, 1.0, f.abs(self)) ** (ord - 1)
        return grad * scaled * result ** (1 - ord)
    safe = f.where(result == 0, 1.0, result)
    if ord == 2:
        return grad * self / safe
    return grad * f.sign(self) * f.abs(self) ** (ord - 1) / safe ** (ord - 1)


defop("sum", "SumBackward0", K.sum_all, ("self",),
      calls=("`gradviz.sum`", "`.sum()`"),
      self=lambda grad, self_sym_sizes: f.expand(grad, self_sym_sizes))
defop("sum_dim", "SumBackward1", K.sum_dim, ("self",),
      internal="overload of sum (dim=): reached through gradviz.sum, which picks torch's overload",
      calls=("`gradviz.sum(x, dim)`", "`.sum()`"),
      self=_sum_backward)
defop("mean", "MeanBackward0", K.mean_all, ("self",),
      calls=("`gradviz.mean`", "`.mean()`"),
      self=lambda grad, self_sym_sizes, self_sym_numel: f.expand(grad, self_sym_sizes)
      / self_sym_numel)
defop("mean_dim", "MeanBackward1", K.mean_dim, ("self",),
      internal="overload of mean (dim=): reached through gradviz.mean, which picks torch's "
               "overload",
      calls=("`gradviz.mean(x, dim)`", "`.mean()`"),
      self=lambda grad, self_sym_sizes, dim, self_sym_numel, keepdim: _sum_backward(
          grad, self_sym_sizes, dim, keepdim) / _reduced_count(self_sym_sizes, dim))
defop("amax", "AmaxBackward0", K.amax, ("self",),
      doc="ties share the gradient evenly; dim=() reduces every dimension",
      calls=("`gradviz.amax`", "`.amax()`"),
      self=_amax_backward)
defop("amin", "AminBackward0", K.amin, ("self",),
      doc="ties share the gradient evenly; dim=() reduces every dimension",
      calls=("`gradviz.amin`", "`.amin()`"),
      self=_amax_backward)
defop("max", "MaxBackward1", K.max_all, ("self",),
      doc="max of all elements; ties share the gradient evenly",
      calls=("`gradviz.max`", "`.max()`"),
      self=lambda grad, self, result: _even_share(grad, self, result, _all_dims(self, None),
                                                  False))
defop("min", "MinBackward1", K.min_all, ("self",),
      doc="min of all elements; ties share the gradient evenly",
      calls=("`gradviz.min`", "`.min()`"),
      self=lambda grad, self, result: _even_share(grad, self, result, _all_dims(self, None),
                                                  False))
defop("max_dim", "MaxBackward0", K.max_dim, ("self",),
      internal="overload of max (dim=): reached through gradviz.max, which picks torch's overload",
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="(values, indices); the gradient goes to the returned index",
      calls=("`gradviz.max(x, dim)`", "`.max()`"),
      self=_value_selecting_backward)
defop("min_dim", "MinBackward0", K.min_dim, ("self",),
      internal="overload of min (dim=): reached through gradviz.min, which picks torch's overload",
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="(values, indices); the gradient goes to the returned index",
      calls=("`gradviz.min(x, dim)`", "`.min()`"),
      self=_value_selecting_backward)
defop("prod", "ProdBackward0", K.prod_all, ("self",),
      quiet=True,
      doc="exact with zeros among the factors",
      calls=("`gradviz.prod`", "`.prod()`"),
      self=lambda grad, self, result: _prod_backward(grad, self, result, None, False))
defop("prod_dim", "ProdBackward1", K.prod, ("self",),
      internal="overload of prod (dim=): reached through gradviz.prod, which picks torch's "
               "overload",
      quiet=True,
      calls=("`gradviz.prod(x, dim)`", "`.prod()`"),
      self=lambda grad, self, result, dim, keepdim: _prod_backward(
          grad, self, result, _all_dims(self, (dim,)), keepdim))
defop("var", "VarBackward0", K.var, ("self",),
      quiet=True,
      calls=("`gradviz.var`", "`.var()`"),
      self=_var_backward)
defop("std", "StdBackward0", K.std, ("self",),
      quiet=True,
      calls=("`gradviz.std`", "`.std()`"),
      self=_std_backward)
defop("logsumexp", "LogsumexpBackward0", K.logsumexp, ("self",),
      signature="logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", method=True,
      with_out=True, normalize=B.logsumexp,
      promotes=True, quiet=True,
      doc="``log(sum(exp(input)))`` over ``dim``, computed without overflow.",
      example="gradviz.logsumexp(gradviz.zeros(2), 0)\ntensor(0.6931)",
      self=lambda grad, self, result, dim, keepdim: _restore(
          grad, _all_dims(self, dim), keepdim) * f.exp(
          self - _restore(result, _all_dims(self, dim), keepdim)))
defop("norm", "LinalgVectorNormBackward0", K.vector_norm, ("self",),
      quiet=True,
      doc="torch.norm / linalg.vector_norm: ord 2 ('fro'), 1, inf, -inf, 0 or any p",
      calls=("`gradviz.norm`", "`.norm()`"),
      self=_norm_backward)


defop("cumsum", "CumsumBackward0", K.cumsum, ("self",),
      signature="cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", method=True,
      with_out=True, normalize=B.cumulative,
      doc="Cumulative sum along ``dim`` (the formula is ``grad.flip(dim).cumsum(dim).flip(dim)``)"
          "; integer and bool inputs sum in int64.",
      example="gradviz.cumsum(gradviz.tensor([1.0, 2.0, 3.0]), 0)\ntensor([1., 3., 6.])",
      samples=(Sample(R(2, 3), dim=1), Sample(R(3, 2), dim=0), Sample(R(), dim=0)),
      self=lambda grad, dim: f.flip(f.cumsum(f.flip(grad, (dim,)), dim), (dim,)))


# -- sorting and selection: topk, sort, kthvalue, median, cumulative products and extrema
def _selected_backward(grads, self_sym_sizes, dim, indices):
    """topk/sort: each returned value's gradient goes to its index (the dim is kept)."""
    return _value_selecting_backward(grads, self_sym_sizes, dim, indices, True)


def _reverse_cumsum(v, dim):
    return f.flip(f.cumsum(f.flip(v, (dim,)), dim), (dim,))


def _cumprod_backward(grad, self, dim, result):
    """d out_j / d x_k = prod_{i <= j, i != k} x_i for j >= k (PyTorch's ``cumprod_backward``).
    Without zeros that is ``out_j / x_k``: a reverse cumulative sum of ``grad * result``,
    divided by ``self``. With a zero, dividing is wrong, so :func:`_cumprod_backward_zeros`
    multiplies instead."""
    if not len(self.shape):
        return grad
    if not (f.data(self) == 0).any():
        return _reverse_cumsum(grad * result, dim) / self
    return _cumprod_backward_zeros(grad, self, dim)


def _cumprod_backward_zeros(grad, self, dim):
    """``grad_k = prod_{i < k} x_i * sum_{j >= k} grad_j * prod_{k < i <= j} x_i``, with ``dim``
    moved last: products only, so exact at zeros and differentiable again (as PyTorch's is).
    The inner products form an (n, n) matrix per slice (row k, column j), so this costs
    O(n^2); it runs only when a factor is exactly 0."""
    nd, n = len(self.shape), self.shape[dim]
    order = tuple(i for i in range(nd) if i != dim) + (dim,)
    x, g = f.permute(self, order), f.permute(grad, order)
    k = np.arange(n)
    later, upper = k[None, :] > k[:, None], k[None, :] >= k[:, None]  # [k, j]: j > k, j >= k
    # Row k: 1 up to column k, then x_{k+1} .. x_j multiplied up (0 left of the diagonal).
    inner = f.where(upper, f.cumprod(f.where(later, f.unsqueeze_dims(x, (nd - 1,)), 1.0),
                                     nd), 0.0)
    tail = f.sum(inner * f.unsqueeze_dims(g, (nd - 1,)), (nd,))
    ones = np.ones(tuple(x.shape[:-1]) + (1,), f.dtype_of(grad))
    lead = f.cumprod(f.cat([ones, f.slice_dim(x, nd - 1, 0, n - 1)], nd - 1), nd - 1)
    return f.permute(lead * tail, tuple(np.argsort(order)))


defop("topk", "TopkBackward0", K.topk, ("self",),
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="the k largest (or smallest) values along ``dim`` and their indices",
      calls=("`gradviz.topk`", "`.topk()`"),
      samples=(Sample(R(3, 5), k=2, dim=1), Sample(R(6), k=3, dim=0, largest=False),
               Sample(R(4, 3), k=4, dim=0), Sample(R(), k=1, dim=0)),
      self=_selected_backward)
defop("sort", "SortBackward0", K.sort, ("self",),
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="``(values, indices)`` sorted along ``dim``; NaN sorts as the largest value",
      calls=("`gradviz.sort`, `gradviz.argsort`", "`.sort()`, `.argsort()`"),
      samples=(Sample(R(3, 4), dim=1), Sample(R(4, 3), dim=0, descending=True),
               Sample(R(), dim=0)),
      self=_selected_backward)
defop("sort_stable", "SortBackward1", K.sort_stable, ("self",),
      internal="overload of sort (stable=): reached through gradviz.sort, which picks torch's "
               "overload",
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="sort called with ``stable=``: equal values keep their order",
      calls=("`gradviz.sort(x, stable=True)`", "`.sort(stable=True)`"),
      samples=(Sample(R(3, 4), stable=True, dim=1, descending=True),),
      self=_selected_backward)
defop("kthvalue", "KthvalueBackward0", K.kthvalue, ("self",),
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="the k-th smallest value along ``dim`` and its index",
      calls=("`gradviz.kthvalue`", "`.kthvalue()`"),
      samples=(Sample(R(3, 5), k=2, dim=1), Sample(R(4, 3), k=4, dim=0, keepdim=True)),
      self=_value_selecting_backward)
defop("median", "MedianBackward0", K.median, ("self",),
      doc="the lower of the two middle values of all elements; ties share the gradient evenly",
      calls=("`gradviz.median`", "`.median()`"),
      samples=(Sample(R(3, 5)), Sample(R(4)),
               Sample(W([1.0, 2.0, 2.0, 3.0, 0.5]),
                      gg="tied medians: the even share is a kink, with no second derivative")),
      self=lambda grad, self, result: _even_share(grad, self, result, _all_dims(self, None),
                                                  False))
defop("median_dim", "MedianBackward1", K.median_dim, ("self",),
      internal="overload of median (dim=): reached through gradviz.median, which picks torch's "
               "overload",
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="(values, indices) along ``dim``; the gradient goes to the returned index",
      calls=("`gradviz.median(x, dim)`", "`.median()`"),
      samples=(Sample(R(3, 5), dim=1), Sample(R(4, 3), dim=0, keepdim=True)),
      self=_value_selecting_backward)
defop("nanmedian", "NanmedianBackward0", K.nanmedian, ("self",),
      doc="``median`` of the elements that are not NaN; ties share the gradient evenly",
      calls=("`gradviz.nanmedian`", "`.nanmedian()`"),
      samples=(Sample(R(3, 5)), Sample(W([1.0, float("nan"), 3.0, 2.0, float("nan")])),
               Sample(W([1.0, 2.0, 2.0, float("nan"), 0.5]),
                      gg="tied medians: the even share is a kink, with no second derivative")),
      self=lambda grad, self, result: _even_share(grad, self, result, _all_dims(self, None),
                                                  False))
defop("nanmedian_dim", "NanmedianBackward1", K.nanmedian_dim, ("self",),
      internal="overload of nanmedian (dim=): reached through gradviz.nanmedian, which picks "
               "torch's overload",
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="(values, indices) along ``dim``, NaN skipped; the gradient goes to the returned index",
      calls=("`gradviz.nanmedian(x, dim)`", "`.nanmedian()`"),
      samples=(Sample(R(3, 5), dim=1), Sample(R(4, 3), dim=0, keepdim=True),
               Sample(W([[1.0, float("nan"), 3.0, 2.0], [0.5, 4.0, float("nan"), -1.0]]),
                      dim=1)),
      self=_value_selecting_backward)
defop("cumprod", "CumprodBackward0", K.cumprod, ("self",),
      signature="cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
      method=True, with_out=True, normalize=B.cumulative,
      doc="Cumulative product along ``dim``; exact with zeros among the factors; integer and "
          "bool inputs multiply in int64.",
      example="gradviz.cumprod(gradviz.tensor([1.0, 2.0, 3.0]), 0)\ntensor([1., 2., 6.])",
      samples=(Sample(R(2, 4), dim=1), Sample(P(3, 2), dim=0), Sample(R(), dim=0),
               Sample(W([[0.5, 0.0, 1.5, -2.0], [1.2, 0.7, 0.0, 0.0]]), dim=1),
               Sample(W([[0.0, 0.3], [0.0, 0.0], [1.1, -0.4]]), dim=0)),
      self=_cumprod_backward)
defop("cummax", "CummaxBackward0", K.cummax, ("self",),
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="running maximum along ``dim`` and where it came from",
      calls=("`gradviz.cummax`", "`.cummax()`"),
      samples=(Sample(R(3, 5), dim=1), Sample(R(6), dim=0)),
      self=lambda grads, self, dim, indices: f.scatter_add(f.zeros_like(self), dim, indices,
                                                           grads[0]))
defop("cummin", "CumminBackward0", K.cummin, ("self",),
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="running minimum along ``dim`` and where it came from",
      calls=("`gradviz.cummin`", "`.cummin()`"),
      samples=(Sample(R(3, 5), dim=1), Sample(R(6), dim=0)),
      self=lambda grads, self, dim, indices: f.scatter_add(f.zeros_like(self), dim, indices,
                                                           grads[0]))


# -- statistics and counts
def _mean_part(grad, self, dim, keepdim):
    """The mean's share of var_mean/std_mean's gradient: ``grad`` spread evenly."""
    dims = _all_dims(self, dim)
    if dim is not None:
        grad = _restore(grad, dims, keepdim)
    return f.expand(grad, tuple(self.shape)) / _reduced_count(tuple(self.shape), dims)


def _var_mean_backward(grads, self, dim, correction, keepdim):
    return (_var_backward(grads[0], self, dim, correction, keepdim)
            + _mean_part(grads[1], self, dim, keepdim))


def _std_mean_backward(grads, self, dim, correction, keepdim, result0):
    return (_std_backward(grads[0], self, result0, dim, correction, keepdim)
            + _mean_part(grads[1], self, dim, keepdim))


def _logcumsumexp_backward(grad, self, dim, result):
    """``grad_i = sum_{j >= i} grad_j exp(x_i - r_j)``. Every exponent is <= 0 (``r_j`` sums
    ``x_i`` among others), so with ``dim`` moved last the (n, n) matrix of them is computed
    directly: nothing overflows, however far apart the values (PyTorch gets the same in log
    space), and it is smooth, so differentiable again. O(n^2) per slice."""
    if not len(self.shape):
        return grad
    nd, n = len(self.shape), self.shape[dim]
    order = tuple(i for i in range(nd) if i != dim) + (dim,)
    x, r, g = f.permute(self, order), f.permute(result, order), f.permute(grad, order)
    k = np.arange(n)
    # [i, j]: j >= i, and x_i not -inf (then r_j is not either: no -inf - -inf)
    valid = (k[None, :] >= k[:, None]) & (np.asarray(f.data(x))[..., :, None] > -math.inf)
    expo = f.where(valid, f.unsqueeze_dims(x, (nd,)) - f.unsqueeze_dims(r, (nd - 1,)),
                   -math.inf)
    out = f.sum(f.exp(expo) * f.unsqueeze_dims(g, (nd - 1,)), (nd,))
    return f.permute(out, tuple(np.argsort(order)))


def _nansum_backward(grad, self, dim, keepdim):
    dims = _all_dims(self, dim)
    if dim is not None:
        grad = _restore(grad, dims, keepdim)
    return f.where(self != self, 0.0, f.expand(grad, tuple(self.shape)))


def _aminmax_backward(grads, self, dim, keepdim, min, max):  # noqa: A002 - PyTorch's names
    dims = _all_dims(self, None if dim is None else (dim,))
    return (_even_share(grads[0], self, min, dims, keepdim)
            + _even_share(grads[1], self, max, dims, keepdim))


defop("var_mean", "VarMeanBackward0", K.var_mean, ("self",),
      outputs=("result0", "result1"), quiet=True,
      doc="``(var, mean)`` over ``dim`` in one node",
      calls=("`gradviz.var_mean`", ""),
      samples=(Sample(R(3, 4)), Sample(R(3, 4), dim=(1,), correction=1),
               Sample(R(2, 3, 4), dim=(0, 2), correction=0, keepdim=True)),
      self=_var_mean_backward)
defop("std_mean", "StdMeanBackward0", K.std_mean, ("self",),
      outputs=("result0", "result1"), quiet=True,
      doc="``(std, mean)`` over ``dim`` in one node",
      calls=("`gradviz.std_mean`", ""),
      samples=(Sample(R(3, 4)), Sample(R(3, 4), dim=(1,), correction=1),
               Sample(R(2, 3, 4), dim=(0, 2), correction=0, keepdim=True)),
      self=_std_mean_backward)
defop("logcumsumexp", "LogcumsumexpBackward0", K.logcumsumexp, ("self",),
      signature="logcumsumexp(Tensor self, int dim) -> Tensor", method=True, with_out=True,
      normalize=B.logcumsumexp,
      quiet=True,
      doc="``log(cumsum(exp(input)))`` along ``dim``, without overflow",
      example="gradviz.logcumsumexp(gradviz.zeros(2), 0)\ntensor([0.0000, 0.6931])",
      samples=(Sample(R(3, 4), dim=1), Sample(R(4, 2), dim=0), Sample(R(), dim=0)),
      self=_logcumsumexp_backward)
defop("nansum", "NansumBackward0", K.nansum, ("self",),
      doc="the sum with NaN counted as 0 (and given no gradient)",
      calls=("`gradviz.nansum`, `gradviz.nanmean`", "`.nansum()`, `.nanmean()`"),
      samples=(Sample(R(3, 4)), Sample(R(3, 4), dim=(1,)),
               Sample(W([[1.0, math.nan, 0.5], [0.2, -0.3, math.nan]]), dim=(0,),
                      keepdim=True)),
      self=_nansum_backward)
defop("aminmax", "AminmaxBackward0", K.aminmax, ("self",),
      outputs=("min", "max"),
      doc="``(min, max)`` in one node; ties share the gradient evenly",
      calls=("`gradviz.aminmax`", "`.aminmax()`"),
      samples=(Sample(R(3, 4)), Sample(R(3, 4), dim=1), Sample(R(3, 4), dim=0, keepdim=True)),
      self=_aminmax_backward)
defop("mode", "ModeBackward0", K.mode, ("self",),
      outputs=("values", "indices"), nondiff_outputs=(1,),
      doc="the most frequent value along ``dim`` and its last index",
      calls=("`gradviz.mode`", "`.mode()`"),
      # (distinct values: a tie would move under gradcheck's nudges)
      samples=(Sample(R(2, 3), dim=1), Sample(R(3, 4), dim=0, keepdim=True)),
      self=_value_selecting_backward)
defop("count_nonzero", None, K.count_nonzero, ("self",),
      doc="how many elements are not zero (int64)",
      calls=("`gradviz.count_nonzero`", "`.count_nonzero()`"))
defop("bincount", None, K.bincount, ("self",),
      doc="how often each non-negative integer occurs (or the sum of its weights)",
      calls=("`gradviz.bincount`", "`.bincount()`"))
defop("histc", None, K.histc, ("self",),
      doc="a histogram of ``bins`` equal bins between ``min`` and ``max``",
      calls=("`gradviz.histc`", "`.histc()`"))
