"""Reductions: sum, mean, extrema, products, variance and norms, softmax, cumulative ops,
sorting and selection (topk, sort, median ...), statistics and counts, quantiles."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradviz import _dtype
from gradviz._factories import int_list, invalid_combination
from gradviz.ops.dispatch import (
    dispatch,
)
from gradviz.ops.functional.arithmetic import div, mul, sub
from gradviz.ops.functional.common import (
    _O,
    _dims,
    _dtype_word,
    _int_arg,
    _named,
    _no_bool,
)
from gradviz.ops.functional.comparison import ne
from gradviz.ops.functional.factories import empty_like
from gradviz.ops.functional.indexing import gather, masked_fill, narrow
from gradviz.ops.functional.inplace import copy_, masked_fill_
from gradviz.ops.functional.pointwise import _floating_kernel, lerp
from gradviz.ops.functional.shape import cat, expand, flatten, transpose, view
from gradviz.tensor import Tensor, _wrap_dim

__all__ = [
    "sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "all", "any", "prod", "var",
    "std", "norm", "softmax", "log_softmax", "topk", "sort", "argsort",
    "kthvalue", "median", "nanmedian", "cummax", "cummin", "diff", "msort", "var_mean",
    "std_mean", "nansum", "nanmean", "aminmax", "mode", "count_nonzero",
    "bincount", "histc", "quantile", "nanquantile"
]


def sum(input: Tensor, dim: int | Sequence[int] | None = None,  # noqa: A001 - torch.sum
        keepdim: bool = False, *, dtype: _dtype.dtype | None = None) -> Tensor:
    """Sum of all elements (``SumBackward0``) or over ``dim`` (``SumBackward1``).

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> gradviz.sum(x), gradviz.sum(x, 0), x.sum(1, keepdim=True).shape
        (tensor(10.), tensor([4., 6.]), gradviz.Size([2, 1]))
    """
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        return dispatch(_O["sum"], input)
    if isinstance(dim, str):
        raise invalid_combination("sum", (dim,), {})
    return dispatch(_O["sum_dim"], input, dim=_dims(dim, input.ndim), keepdim=bool(keepdim))


def mean(input: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
         dtype: _dtype.dtype | None = None) -> Tensor:
    """Mean of all elements (``MeanBackward0``) or over ``dim`` (``MeanBackward1``).

    Example:
        >>> import gradviz
        >>> gradviz.mean(gradviz.tensor([1.0, 2.0, 6.0]))
        tensor(3.)
    """
    if dtype is not None:
        input = input.to(dtype)
    if input._data.dtype.kind not in "fc":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {input.dtype._legacy[:-6]}")
    if dim is None:
        return dispatch(_O["mean"], input)
    return dispatch(_O["mean_dim"], input, dim=_dims(dim, input.ndim), keepdim=bool(keepdim))


def _nonempty(name: str, input: Tensor) -> None:
    if input._data.size == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")


def _max_min(name: str, input: Tensor, dim: Any, keepdim: bool) -> Any:
    from gradviz import return_types

    if dim is None:
        _nonempty(name, input)
        return dispatch(_O[name], input)
    if isinstance(dim, Tensor):
        # (maximum and minimum are generated from their rows, after this file is imported)
        return dispatch(_O["maximum" if name == "max" else "minimum"], input, dim)
    d = _wrap_dim(int(dim), input.ndim)
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    values, indices = dispatch(_O[name + "_dim"], input, dim=d, keepdim=bool(keepdim))
    return getattr(return_types, name)(values, indices)


def max(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001
    """The largest element (``MaxBackward1``); along ``dim``, the named tuple
    ``(values, indices)`` (``MaxBackward0``; the indices carry no gradient); with a tensor as
    second argument, :func:`maximum`.

    Ties: the whole-tensor max shares the gradient evenly among the tied elements; ``max(dim)``
    sends it to the returned index only, as PyTorch does.

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([[1.0, 5.0], [7.0, 2.0]])
        >>> gradviz.max(x), gradviz.max(x, 1).indices
        (tensor(7.), tensor([1, 0]))
    """
    return _max_min("max", input, dim, keepdim)


def min(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001
    """The smallest element (``MinBackward1``), or ``(values, indices)`` along ``dim``
    (``MinBackward0``); see :func:`max`.

    Example:
        >>> import gradviz
        >>> gradviz.min(gradviz.tensor([[1.0, 5.0], [7.0, 2.0]]), 0).values
        tensor([1., 2.])
    """
    return _max_min("min", input, dim, keepdim)


def _amax_amin(name: str, input: Tensor, dim: Any, keepdim: bool) -> Tensor:
    dims = () if dim is None or dim == () else _dims(dim, input.ndim)
    if input._data.size == 0:
        if not dims:
            _nonempty(name, input)
        for d in dims:
            if input.shape[d] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return dispatch(_O[name], input, dim=dims, keepdim=bool(keepdim))


def _arg_reduce(name: str, input: Tensor, dim: int | None, keepdim: bool) -> Tensor:
    if input._data.size == 0:
        raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == "
                         "0." if dim is None else f"{name}(): Expected reduction dim {dim} to "
                         "have non-zero size.")
    if dim is None:
        out = dispatch(_O[name], input)
        # PyTorch: no dim means the flattened index, keepdim keeps every dim as size 1.
        return out.reshape((1,) * input.ndim) if keepdim else out
    return dispatch(_O[name], input, dim=_wrap_dim(dim, builtins.max(input.ndim, 1)),
                    keepdim=bool(keepdim))


def _bool_reduce(name: str, input: Tensor, dim: int | Sequence[int] | None,
                 keepdim: bool) -> Tensor:
    if dim is None:
        return dispatch(_O[name], input)
    if isinstance(dim, (tuple, list)):  # () reduces nothing: each element as a bool
        dims = _dims(int_list(name, (dim,), "dim"), builtins.max(input.ndim, 1))
        return dispatch(_O[name], input, dim=dims if input.ndim else (), keepdim=bool(keepdim))
    return dispatch(_O[name], input, dim=_wrap_dim(dim, builtins.max(input.ndim, 1)),
                    keepdim=bool(keepdim))


def all(input: Tensor, dim: int | Sequence[int] | None = None,  # noqa: A001
        keepdim: bool = False) -> Tensor:
    """Whether every element (or every element along ``dim``, an int or a tuple) is true /
    non-zero.

    Example:
        >>> import gradviz
        >>> gradviz.all(gradviz.tensor([1.0, 0.0])), gradviz.tensor([[1, 1], [0, 1]]).all(dim=1)
        (tensor(False), tensor([ True, False]))
    """
    return _bool_reduce("all", input, dim, keepdim)


def any(input: Tensor, dim: int | Sequence[int] | None = None,  # noqa: A001
        keepdim: bool = False) -> Tensor:
    """Whether some element (or some element along ``dim``, an int or a tuple) is true /
    non-zero.

    Example:
        >>> import gradviz
        >>> gradviz.any(gradviz.tensor([0.0, 2.0]))
        tensor(True)
    """
    return _bool_reduce("any", input, dim, keepdim)


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the largest value (of the flattened tensor, or along ``dim``); int64, no grad.

    Example:
        >>> import gradviz
        >>> gradviz.argmax(gradviz.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=1)
        tensor([1, 0])
    """
    return _arg_reduce("argmax", input, dim, keepdim)


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the smallest value (of the flattened tensor, or along ``dim``); int64, no grad.

    Example:
        >>> import gradviz
        >>> gradviz.argmin(gradviz.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=0)
        tensor([0, 1])
    """
    return _arg_reduce("argmin", input, dim, keepdim)


def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """The maximum over ``dim`` (all dimensions by default), ``AmaxBackward0``: tied maxima
    share the gradient evenly.

    Example:
        >>> import gradviz
        >>> gradviz.amax(gradviz.tensor([[1.0, 5.0], [7.0, 2.0]]), 1)
        tensor([5., 7.])
    """
    return _amax_amin("amax", input, dim, keepdim)


def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """The minimum over ``dim`` (all dimensions by default), ``AminBackward0``.

    Example:
        >>> import gradviz
        >>> gradviz.amin(gradviz.tensor([[1.0, 5.0], [7.0, 2.0]]), 0)
        tensor([1., 2.])
    """
    return _amax_amin("amin", input, dim, keepdim)


def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *,
         dtype: _dtype.dtype | None = None) -> Tensor:
    """Product of all elements (``ProdBackward0``) or along one ``dim`` (``ProdBackward1``).
    The gradient is exact when some factors are zero.

    Example:
        >>> import gradviz
        >>> gradviz.prod(gradviz.tensor([2.0, 3.0, 4.0]))
        tensor(24.)
    """
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        return dispatch(_O["prod"], input)
    return dispatch(_O["prod_dim"], input, dim=_wrap_dim(int(dim), input.ndim),
                    keepdim=bool(keepdim))


def _var_args(name: str, input: Tensor, dim: Any, unbiased: Any, keepdim: bool,
              correction: Any) -> dict:
    if input._data.dtype.kind != "f":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if isinstance(dim, bool):  # var(x, True): the legacy `unbiased` positional
        dim, unbiased = None, dim
    if correction is None:
        if unbiased is not None:
            correction = 1 if unbiased else 0
        elif dim is not None:
            correction = 1  # PyTorch's var(dim) overload has unbiased=True, saved as 1
    elif unbiased is not None:
        # no overload of torch's takes both: its overload-resolution TypeError
        raise invalid_combination(name, (), {"correction": correction, "unbiased": unbiased})
    dims = None if dim is None else _dims(dim, input.ndim)
    return {"dim": dims, "correction": correction, "keepdim": bool(keepdim)}


def var(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None) -> Tensor:
    """Variance over ``dim`` (all by default) with Bessel's ``correction`` (1 unless given;
    ``unbiased=False`` means 0). ``VarBackward0``.

    Example:
        >>> import gradviz
        >>> gradviz.var(gradviz.tensor([1.0, 2.0, 3.0, 4.0]))
        tensor(1.6667)
    """
    return dispatch(_O["var"], input, **_var_args("var", input, dim, unbiased, keepdim,
                                                  correction))


def std(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None) -> Tensor:
    """Standard deviation, the square root of :func:`var` (``StdBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.std(gradviz.tensor([1.0, 3.0]))
        tensor(1.4142)
    """
    return dispatch(_O["std"], input, **_var_args("std", input, dim, unbiased, keepdim,
                                                  correction))


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         dtype: _dtype.dtype | None = None) -> Tensor:
    """The vector norm of all elements or over ``dim``: ``p`` = 2 or ``'fro'`` (Euclidean),
    1, ``inf``, ``-inf``, 0 or any number. Recorded as PyTorch records ``torch.norm``:
    ``LinalgVectorNormBackward0``. ``p='nuc'`` (or ``'fro'`` over more than two dims) is
    :func:`gradviz.linalg.matrix_norm` over ``dim``, all dims by default.

    Example:
        >>> import gradviz
        >>> gradviz.norm(gradviz.tensor([3.0, 4.0]))
        tensor(5.)
    """
    if dtype is not None:
        input = input.to(dtype)
    if isinstance(p, str) and not (p == "fro" and (dim is None or isinstance(dim, int)
                                                   or len(dim) <= 2)):
        # 'nuc', or 'fro' over more than two dims: a matrix norm over ``dim`` (all dims by
        # default), which raises torch's errors for what is not a pair of dims
        from gradviz.ops._linalg import matrix_norm

        dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else dim
        return matrix_norm(input, p, dims, keepdim)
    if p is None or p == "fro":
        p = 2
    if input._data.dtype.kind != "f":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {input.dtype._legacy[:-6]}")
    dims = None if dim is None else _dims(dim, input.ndim)
    return dispatch(_O["norm"], input, ord=p, dim=dims, keepdim=bool(keepdim))


def softmax(input: Tensor, dim: int, dtype: _dtype.dtype | None = None) -> Tensor:
    """``exp(input) / exp(input).sum(dim)``, computed stably (``SoftmaxBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.softmax(gradviz.tensor([0.0, 0.0]), 0)
        tensor([0.5000, 0.5000])
    """
    if dtype is not None:
        input = input.to(dtype)
    _floating_kernel("softmax", input, "softmax_lastdim_kernel_impl")
    return dispatch(_O["softmax"], input, dim=_wrap_dim(int(dim), input.ndim))


def log_softmax(input: Tensor, dim: int, dtype: _dtype.dtype | None = None) -> Tensor:
    """``log(softmax(input, dim))``, computed stably (``LogSoftmaxBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.log_softmax(gradviz.tensor([0.0, 0.0]), 0)
        tensor([-0.6931, -0.6931])
    """
    if dtype is not None:
        input = input.to(dtype)
    _floating_kernel("log_softmax", input, "log_softmax_lastdim_kernel_impl")
    return dispatch(_O["log_softmax"], input, dim=_wrap_dim(int(dim), input.ndim))


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True  # noqa: A002
         ) -> Any:
    """The ``k`` largest (``largest=False``: smallest) elements along ``dim``, as the named tuple
    ``(values, indices)`` (``TopkBackward0``: each value's gradient goes to its index; the
    indices carry none). Equal values come in input order; NaN counts as the largest value.
    gradviz returns them sorted also when ``sorted=False`` (PyTorch leaves that order open).

    Example:
        >>> import gradviz
        >>> out = gradviz.tensor([[0.1, 0.7, 0.2], [0.5, 0.3, 0.9]]).topk(2, 1, True, True)
        >>> out.indices
        tensor([[1, 2],
                [2, 0]])
    """
    k = _int_arg("topk", "k", 1, k)
    d = _wrap_dim(dim, input.ndim)
    if input._data.dtype == np.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    values, indices = dispatch(_O["topk"], input, k=k, dim=d, largest=bool(largest),
                               sorted=bool(sorted))
    return _named("topk", values, indices)


_UNSET: Any = object()  # sort(stable=None) is still PyTorch's sort.stable overload


def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: Any = _UNSET
         ) -> Any:
    """Sort along ``dim``: the named tuple ``(values, indices)`` (``SortBackward0``; called with
    ``stable=``, PyTorch's ``sort.stable`` overload, ``SortBackward1``). Equal values keep their
    order (gradviz always sorts stably); NaN sorts as the largest value.

    Example:
        >>> import gradviz
        >>> gradviz.sort(gradviz.tensor([3.0, 1.0, 2.0]), descending=True)
        gradviz.return_types.sort(
        values=tensor([3., 2., 1.]),
        indices=tensor([0, 2, 1]))
    """
    d = _wrap_dim(dim, input.ndim)
    if stable is _UNSET:
        values, indices = dispatch(_O["sort"], input, dim=d, descending=bool(descending))
    else:
        values, indices = dispatch(_O["sort_stable"], input, stable=bool(stable), dim=d,
                                   descending=bool(descending))
    return _named("sort", values, indices)


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False
            ) -> Tensor:
    """The indices that sort ``input`` along ``dim``: :func:`sort`'s ``indices`` (not
    differentiable). Equal values keep their order.

    Example:
        >>> import gradviz
        >>> gradviz.argsort(gradviz.tensor([2, 1, 2, 1]), descending=True)
        tensor([0, 2, 1, 3])
    """
    if stable:
        return sort(input, dim, descending, stable=True).indices
    return sort(input, dim, descending).indices


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """The ``k``-th smallest element along ``dim`` (counting from 1) and its index, as the named
    tuple ``(values, indices)`` (``KthvalueBackward0``: the gradient goes to that index).

    Example:
        >>> import gradviz
        >>> gradviz.kthvalue(gradviz.tensor([4.0, 1.0, 3.0]), 2)
        gradviz.return_types.kthvalue(
        values=tensor(3.),
        indices=tensor(2))
    """
    k = _int_arg("kthvalue", "k", 1, k)
    d = _wrap_dim(dim, input.ndim)
    _no_bool("kthvalue_cpu", input)
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    values, indices = dispatch(_O["kthvalue"], input, k=k, dim=d, keepdim=bool(keepdim))
    return _named("kthvalue", values, indices)


def median(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """The median of all elements (``MedianBackward0``; with an even count the lower of the two
    middle values; NaN if any element is NaN), or along ``dim`` the named tuple
    ``(values, indices)`` (``MedianBackward1``: the gradient goes to the returned index).

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([[1.0, 4.0, 2.0, 3.0], [9.0, 5.0, 7.0, 6.0]])
        >>> gradviz.median(x), gradviz.median(x, 1).values
        (tensor(4.), tensor([2., 6.]))
    """
    return _median("median", input, dim, keepdim)


def _median(name: str, input: Tensor, dim: Any, keepdim: bool) -> Any:
    """:func:`median` or :func:`nanmedian` (``name``): their checks and texts are torch's,
    the same for both."""
    _no_bool("median_cpu", input)
    if dim is None:
        return dispatch(_O[name], input)
    d = _wrap_dim(_int_arg(name, "dim", 2, dim), input.ndim)
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    values, indices = dispatch(_O[f"{name}_dim"], input, dim=d, keepdim=bool(keepdim))
    return _named(name, values, indices)


def nanmedian(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """:func:`median` ignoring NaN: of all elements (``NanmedianBackward0``; NaN only if all are
    NaN), or along ``dim`` the named tuple ``(values, indices)`` (``NanmedianBackward1``).

    Example:
        >>> import gradviz
        >>> nan = float("nan")
        >>> x = gradviz.tensor([[1.0, nan, 3.0, 2.0], [nan, 5.0, 7.0, 6.0]])
        >>> gradviz.nanmedian(x), gradviz.nanmedian(x, 1)
        (tensor(3.), gradviz.return_types.nanmedian(
        values=tensor([2., 6.]),
        indices=tensor([3, 3])))
    """
    return _median("nanmedian", input, dim, keepdim)


def _cum_extreme(name: str, input: Tensor, dim: int) -> Any:
    d = _wrap_dim(dim, input.ndim)
    values, indices = dispatch(_O[name], input, dim=d)
    return _named(name, values, indices)


def cummax(input: Tensor, dim: int) -> Any:
    """The running maximum along ``dim`` and the index each value came from (a later equal
    value takes over), as the named tuple ``(values, indices)`` (``CummaxBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.cummax(gradviz.tensor([1.0, 3.0, 2.0, 3.0]), 0).indices
        tensor([0, 1, 1, 3])
    """
    return _cum_extreme("cummax", input, dim)


def cummin(input: Tensor, dim: int) -> Any:
    """The running minimum along ``dim`` and where it came from (``CumminBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.cummin(gradviz.tensor([2.0, 3.0, 1.0]), 0).values
        tensor([2., 2., 1.])
    """
    return _cum_extreme("cummin", input, dim)


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``out[i] = x[i + 1] - x[i]``, ``n``
    times), ``prepend``/``append`` concatenated first; decomposed as PyTorch does: two
    :func:`narrow` slices and a subtraction per order (``SubBackward0`` over ``SliceBackward0``);
    bool tensors give ``!=`` of neighbours; ``n=0`` a copy of ``input`` (``CopyBackwards``).

    Example:
        >>> import gradviz
        >>> gradviz.diff(gradviz.tensor([1.0, 4.0, 9.0, 16.0]))
        tensor([3., 5., 7.])
    """
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    n = _int_arg("diff", "n", 2, n)
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, input.ndim)
    if n == 0:  # PyTorch copies the input into a new tensor, ignoring prepend and append
        return copy_(empty_like(input), input)
    if prepend is not None or append is not None:
        parts = [p for p in (prepend, input, append) if p is not None]
        input = cat(parts, d)
    for _ in range(n):
        length = input.shape[d]
        if length == 0:
            break
        hi, lo = narrow(input, d, 1, length - 1), narrow(input, d, 0, length - 1)
        input = ne(hi, lo) if input._data.dtype == np.bool_ else sub(hi, lo)
    return input


def msort(input: Tensor) -> Tensor:
    """``sort(input, dim=0).values`` (``SortBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.msort(gradviz.tensor([[3, 1], [2, 4]]))
        tensor([[2, 1],
                [3, 4]])
    """
    return sort(input, 0).values


def _sum_to_size(self: Tensor, *size: Any) -> Tensor:
    """``x.sum_to_size(*size)``: ``x`` summed down to ``size``, the shape it was broadcast from
    (``SumBackward1`` with ``keepdim=True``, then ``ViewBackward0`` to drop the leading dims;
    an empty ``size`` sums everything, ``SumBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.ones(2, 3).sum_to_size(1, 3)
        tensor([[2., 2., 2.]])
    """
    shape = tuple(int_list("sum_to_size", size))
    if not shape:  # PyTorch sums everything into a new tensor (SumBackward0), even a 0-d one
        return sum(self)
    have = tuple(self.shape)
    lead = len(have) - len(shape)
    if lead < 0 or builtins.any(s not in (1, h) for s, h in zip(shape, have[lead:])):
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(have)}}}.")
    if shape == have:
        return self
    dims = list(range(lead)) + [lead + i for i, (s, h) in enumerate(zip(shape, have[lead:]))
                                if s == 1 and h != 1]
    out = sum(self, dims, keepdim=True)
    return view(out, *shape) if lead else out


def _var_mean_args(name: str, input: Tensor, dim: Any, unbiased: Any, keepdim: bool,
                   correction: Any) -> dict:
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    return _var_args(name, input, dim, unbiased, keepdim, correction)


def var_mean(input: Tensor, dim: Any = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: float | None = None) -> tuple[Tensor, Tensor]:
    """``(var, mean)`` over ``dim`` with one node, ``VarMeanBackward0`` (arguments as
    :func:`var`).

    Example:
        >>> import gradviz
        >>> gradviz.var_mean(gradviz.tensor([1.0, 2.0, 3.0]))
        (tensor(1.), tensor(2.))
    """
    return tuple(dispatch(_O["var_mean"], input, **_var_mean_args(
        "var_mean", input, dim, unbiased, keepdim, correction)))


def std_mean(input: Tensor, dim: Any = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: float | None = None) -> tuple[Tensor, Tensor]:
    """``(std, mean)`` over ``dim`` with one node, ``StdMeanBackward0``.

    Example:
        >>> import gradviz
        >>> gradviz.std_mean(gradviz.tensor([1.0, 3.0]))
        (tensor(1.4142), tensor(2.))
    """
    return tuple(dispatch(_O["std_mean"], input, **_var_mean_args(
        "std_mean", input, dim, unbiased, keepdim, correction)))


def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *,
           dtype: _dtype.dtype | None = None) -> Tensor:
    """The sum with NaN counted as zero (``NansumBackward0``: NaN elements get no gradient).

    Example:
        >>> import gradviz
        >>> gradviz.nansum(gradviz.tensor([1.0, float("nan"), 2.0]))
        tensor(3.)
    """
    if dtype is not None:
        input = input.to(dtype)
    dims = None if dim is None or dim == () else _dims(dim, input.ndim)
    return dispatch(_O["nansum"], input, dim=dims, keepdim=bool(keepdim))


def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *,
            dtype: _dtype.dtype | None = None) -> Tensor:
    """The mean of the elements that are not NaN: :func:`nansum` divided by their count, as
    PyTorch computes it (``DivBackward0`` over ``NansumBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.nanmean(gradviz.tensor([1.0, float("nan"), 3.0]))
        tensor(2.)
    """
    if input._data.dtype.kind != "f":
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_dtype_word(input)}")
    # (logical_not and isnan are generated from their rows, after this file is imported)
    count = sum(dispatch(_O["logical_not"], dispatch(_O["isnan"], input)), dim, keepdim=keepdim)
    return div(nansum(input, dim, keepdim, dtype=dtype), count)


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> Any:
    """The minimum and maximum, of all elements or along ``dim``, as the named tuple
    ``(min, max)`` with one node (``AminmaxBackward0``; ties share the gradient evenly).

    Example:
        >>> import gradviz
        >>> gradviz.aminmax(gradviz.tensor([3.0, 1.0, 2.0]))
        gradviz.return_types.aminmax(
        min=tensor(1.),
        max=tensor(3.))
    """
    from gradviz import return_types

    if dim is not None:
        dim = _wrap_dim(_int_arg("aminmax", "dim", 2, dim), input.ndim)
    empty = input.numel() == 0 if dim is None else (input.ndim and input.shape[dim] == 0)
    if empty:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    lo, hi = dispatch(_O["aminmax"], input, dim=dim, keepdim=bool(keepdim))
    return return_types.aminmax(lo, hi)


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and the
    index of its last occurrence, as the named tuple ``(values, indices)``
    (``ModeBackward0``: the gradient goes to that index).

    Example:
        >>> import gradviz
        >>> gradviz.mode(gradviz.tensor([3.0, 1.0, 3.0, 1.0, 2.0]))
        gradviz.return_types.mode(
        values=tensor(1.),
        indices=tensor(3))
    """
    d = _wrap_dim(_int_arg("mode", "dim", 2, dim), input.ndim)
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    values, indices = dispatch(_O["mode"], input, dim=d, keepdim=bool(keepdim))
    return _named("mode", values, indices)


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """How many elements are not zero, in all or along ``dim`` (int64, not differentiable).

    Example:
        >>> import gradviz
        >>> gradviz.count_nonzero(gradviz.tensor([[0, 1], [2, 0]]), 0)
        tensor([1, 1])
    """
    dims = None if dim is None else _dims(dim, input.ndim)
    return dispatch(_O["count_nonzero"], input, dim=dims)


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value ``0 .. max(input)`` occurs in a 1-D tensor of non-negative integers
    (or the sum of the ``weights`` at its positions); at least ``minlength`` bins.

    Example:
        >>> import gradviz
        >>> gradviz.bincount(gradviz.tensor([1, 1, 3]))
        tensor([0, 2, 0, 1])
    """
    from gradviz.ops._kernels import _not_for

    if input._data.dtype.kind not in "iub":
        raise _not_for("bincount_cpu", input._data.dtype)
    if input.ndim != 1 or (input.numel() and input._data.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    return dispatch(_O["bincount"], input, weights=weights, minlength=int(minlength))


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0  # noqa: A002
          ) -> Tensor:
    """A histogram of ``bins`` equal-width bins from ``min`` to ``max`` (the data's range
    when both are 0); elements outside are ignored (not differentiable).

    Example:
        >>> import gradviz
        >>> gradviz.histc(gradviz.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
        tensor([0., 2., 1., 0.])
    """
    from gradviz.ops._kernels import _not_for

    if input._data.dtype.kind != "f":
        raise _not_for("histogram_cpu", input._data.dtype)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    return dispatch(_O["histc"], input, bins=int(bins), min=float(min), max=float(max))


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name: str, input: Tensor, q: Any, dim: int | None, keepdim: bool,
              interpolation: str, ignore_nan: bool) -> Tensor:
    """PyTorch's ``quantile_compute``, step by step, so that the graph is torch's: sort (after
    flattening, or with ``dim`` moved last), view as ``(*, n)``, gather the values below and
    above each rank, ``lerp`` between them, squeeze."""
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        scalar_q, qs = q.ndim == 0, q._data.astype(np.float64).reshape(-1)
    else:
        scalar_q, qs = True, np.array([float(q)])
    for v in qs:
        if not 0 <= v <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {v:g}"
                               if not isinstance(q, Tensor) else
                               f"{name}() q values must be in the range [0, 1]")
    if dim is None:
        sorted_ = sort(flatten(input)).values
        out_shape = [1] * input.ndim if keepdim else []
    else:
        d = _wrap_dim(dim, builtins.max(input.ndim, 1))  # a 0-d input takes dim 0 and -1
        moved = input if d == input.ndim - 1 else transpose(
            dispatch(_O["unsqueeze"], input, dim=input.ndim), d, -1)
        sorted_ = sort(moved).values
        out_shape = list(input.shape)
        if keepdim and input.ndim:
            out_shape[d] = 1
        elif input.ndim:
            del out_shape[d]
    in_shape = out_shape + [sorted_.shape[-1]]
    sorted_ = view(sorted_, *in_shape)
    data = sorted_._data
    last = data.shape[-1] - 1
    if ignore_nan:  # ranks among the values that are not NaN
        ranks = qs * (np.sum(~np.isnan(data), axis=-1, keepdims=True) - 1)
        ranks = np.where(ranks < 0, 0.0, ranks)
    else:  # a NaN anywhere makes the quantile NaN: rank it last, where sort put the NaN
        ranks = np.where(np.isnan(data).any(axis=-1, keepdims=True), float(last), qs * last)
    ranks = {"lower": np.floor, "higher": np.ceil, "nearest": np.round}.get(
        interpolation, lambda r: r)(ranks)
    below = ranks.astype(np.int64)
    out = gather(sorted_, -1, Tensor._make(below))
    if interpolation in ("linear", "midpoint"):
        if interpolation == "midpoint":
            weights = Tensor._make(np.full_like(ranks, 0.5).astype(data.dtype))
        elif isinstance(q, Tensor) and q.requires_grad:  # q's gradient flows through them
            weights = sub(_quantile_ranks(q, data, ignore_nan), Tensor._make(below))
        else:
            weights = Tensor._make((ranks - below).astype(data.dtype))
        above = gather(sorted_, -1, Tensor._make(np.ceil(ranks).astype(np.int64)))
        out = lerp(out, above, weights)
    if not scalar_q:  # the quantiles first: unsqueeze_(0).transpose_(0, -1)
        out = dispatch(_O["unsqueeze_"], out, dim=0)
        out = dispatch(_O["transpose_"], out, dim0=0, dim1=_wrap_dim(-1, out.ndim))
    return dispatch(_O["squeeze_dim_"], out, dim=_wrap_dim(-1, out.ndim))  # (dim -1, as torch)


def _quantile_ranks(q: Tensor, data: np.ndarray, ignore_nan: bool) -> Tensor:
    """The ranks of a ``q`` that requires grad, recorded as torch computes them (linear
    interpolation's weights are ``ranks - floor(ranks)``, so ``q`` gets a gradient): nanquantile
    ``q * (count - 1)`` with negatives filled in place by 0, quantile ``q * last`` broadcast
    against the rows and filled with ``last`` where a row holds a NaN."""
    if ignore_nan:
        count = np.sum(~np.isnan(data), axis=-1, keepdims=True) - 1
        ranks = mul(q, Tensor._make(count))
        return masked_fill_(ranks, ranks < 0, 0)
    last = data.shape[-1] - 1
    ranks = dispatch(_O["mul_scalar"], q, other=last)
    has_nan = np.isnan(data).any(axis=-1, keepdims=True)
    shape = np.broadcast_shapes(tuple(ranks.shape), has_nan.shape)
    if tuple(ranks.shape) != shape:
        ranks = expand(ranks, shape)
    return masked_fill(ranks, Tensor._make(np.broadcast_to(has_nan, shape)), last)


def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The ``q``-th quantiles (``q`` a number or a 1-D tensor in [0, 1]) of all elements or
    along ``dim``, interpolating ``"linear"`` (default), ``"lower"``, ``"higher"``,
    ``"midpoint"`` or ``"nearest"`` between the two closest values; NaN if a NaN is among
    them. Records PyTorch's chain: ``SortBackward0``, ``ViewBackward0``, ``GatherBackward0``,
    ``LerpBackward1``, ``SqueezeBackward4``.

    Example:
        >>> import gradviz
        >>> gradviz.quantile(gradviz.tensor([1.0, 2.0, 3.0, 4.0]), 0.5)
        tensor(2.5000)
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """:func:`quantile` of the values that are not NaN.

    Example:
        >>> import gradviz
        >>> gradviz.nanquantile(gradviz.tensor([1.0, float("nan"), 3.0]), 0.5)
        tensor(2.)
    """
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)
