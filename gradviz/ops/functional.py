"""The functional forms of the ops (``gradviz.add``, ``gradviz.sum`` ...), as torch spells them.

Each function checks its arguments the way PyTorch does (same error texts), normalises them, and
calls the dispatch point with its table entry. Nothing here computes a gradient.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradviz import _dtype
from gradviz.ops.derivatives import OPS
from gradviz.ops.dispatch import dispatch, dispatch_inplace
from gradviz.tensor import Tensor, _is_number, _wrap_dim

__all__ = [
    "add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide", "neg",
    "negative", "reciprocal", "pow", "exp", "log", "tanh", "sigmoid", "relu", "sum", "mean",
    "reshape", "view", "transpose", "swapaxes", "t", "permute", "expand", "unsqueeze", "squeeze",
    "mm", "matmul", "dot", "mv", "where", "clone", "eq", "ne", "lt", "le", "gt", "ge",
    "logical_not", "logical_and", "logical_or", "zeros_like", "ones_like", "full_like",
]

_O = OPS


def _tensor_arg(x: Any, like: Tensor | None = None) -> Any:
    """Accept tensors and numbers; turn NumPy arrays into constant tensors."""
    if isinstance(x, Tensor) or _is_number(x):
        return x
    if isinstance(x, np.ndarray):
        return Tensor._make(x)
    raise TypeError(f"expected a Tensor or a number, got {type(x).__name__}")


# -- arithmetic ----------------------------------------------------------------------------------
def add(input: Any, other: Any, *, alpha: float = 1) -> Tensor:
    """``input + alpha * other``, with broadcasting.

    Example:
        >>> import gradviz
        >>> gradviz.add(gradviz.tensor([1.0, 2.0]), 1)
        tensor([2., 3.])
    """
    if not isinstance(input, Tensor):  # 2 + x records AddBackward0 with x as `other`
        return dispatch(_O["add"], _tensor_arg(input), other, alpha=alpha)
    return dispatch(_O["add"], input, _tensor_arg(other), alpha=alpha)


def sub(input: Any, other: Any, *, alpha: float = 1) -> Tensor:
    """``input - alpha * other``, with broadcasting.

    Example:
        >>> import gradviz
        >>> gradviz.sub(gradviz.tensor([1.0, 2.0]), 1)
        tensor([0., 1.])
    """
    if not isinstance(input, Tensor):
        return rsub(other, input, alpha=alpha)
    return dispatch(_O["sub"], input, _tensor_arg(other), alpha=alpha)


subtract = sub


def rsub(input: Tensor, other: Any, *, alpha: float = 1) -> Tensor:
    """``other - alpha * input``: what ``2 - x`` computes (recorded as ``RsubBackward1``).

    Example:
        >>> import gradviz
        >>> gradviz.rsub(gradviz.tensor([1.0, 2.0]), 3)
        tensor([2., 1.])
    """
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)
    return dispatch(_O["rsub"], input, other=other, alpha=alpha)


def mul(input: Any, other: Any) -> Tensor:
    """Elementwise product, with broadcasting.

    Example:
        >>> import gradviz
        >>> gradviz.mul(gradviz.tensor([1.0, 2.0]), 3)
        tensor([3., 6.])
    """
    return dispatch(_O["mul"], _tensor_arg(input), _tensor_arg(other))


multiply = mul


def div(input: Any, other: Any) -> Tensor:
    """True division, with broadcasting; ``number / x`` is ``x.reciprocal() * number`` as in
    PyTorch.

    Example:
        >>> import gradviz
        >>> gradviz.div(gradviz.tensor([1.0, 2.0]), 2)
        tensor([0.5000, 1.0000])
    """
    if not isinstance(input, Tensor):
        return mul(reciprocal(other), input)
    return dispatch(_O["div"], input, _tensor_arg(other))


divide = true_divide = div


def neg(input: Tensor) -> Tensor:
    """``-input``.

    Example:
        >>> import gradviz
        >>> gradviz.neg(gradviz.tensor([1.0, -2.0]))
        tensor([-1.,  2.])
    """
    return dispatch(_O["neg"], input)


negative = neg


def reciprocal(input: Tensor) -> Tensor:
    """``1 / input``.

    Example:
        >>> import gradviz
        >>> gradviz.reciprocal(gradviz.tensor([2.0, 4.0]))
        tensor([0.5000, 0.2500])
    """
    return dispatch(_O["reciprocal"], input)


def pow(input: Any, exponent: Any) -> Tensor:  # noqa: A001 - torch.pow
    """``input ** exponent``: ``PowBackward0`` for a number exponent, ``PowBackward1`` for a
    tensor one, ``PowBackward2`` for a number base.

    Example:
        >>> import gradviz
        >>> gradviz.pow(gradviz.tensor([1.0, 2.0]), 2)
        tensor([1., 4.])
    """
    if not isinstance(input, Tensor):
        if isinstance(exponent, Tensor) and _is_number(input):
            return dispatch(_O["pow_scalar_base"], exponent, self=input)
        input = _tensor_arg(input)
    if isinstance(exponent, Tensor):
        return dispatch(_O["pow_tensor"], input, exponent)
    if isinstance(exponent, np.ndarray):
        return dispatch(_O["pow_tensor"], input, Tensor._make(exponent))
    if input._data.dtype.kind in "iu" and isinstance(exponent, int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return dispatch(_O["pow"], input, exponent=exponent)


def exp(input: Tensor) -> Tensor:
    """Elementwise ``e ** input``.

    Example:
        >>> import gradviz
        >>> gradviz.exp(gradviz.tensor([0.0]))
        tensor([1.])
    """
    return dispatch(_O["exp"], input)


def log(input: Tensor) -> Tensor:
    """Elementwise natural logarithm.

    Example:
        >>> import gradviz
        >>> gradviz.log(gradviz.tensor([1.0]))
        tensor([0.])
    """
    with np.errstate(divide="ignore", invalid="ignore"):  # log(0) = -inf, log(-1) = nan
        return dispatch(_O["log"], input)


def tanh(input: Tensor) -> Tensor:
    """Elementwise hyperbolic tangent.

    Example:
        >>> import gradviz
        >>> gradviz.tanh(gradviz.tensor([0.0]))
        tensor([0.])
    """
    return dispatch(_O["tanh"], input)


def sigmoid(input: Tensor) -> Tensor:
    """Elementwise logistic function ``1 / (1 + exp(-input))``.

    Example:
        >>> import gradviz
        >>> gradviz.sigmoid(gradviz.tensor([0.0]))
        tensor([0.5000])
    """
    return dispatch(_O["sigmoid"], input)


def relu(input: Tensor) -> Tensor:
    """Elementwise ``max(input, 0)``.

    Example:
        >>> import gradviz
        >>> gradviz.relu(gradviz.tensor([-1.0, 2.0]))
        tensor([0., 2.])
    """
    return dispatch(_O["relu"], input)


# -- reductions ----------------------------------------------------------------------------------
def _dims(dim: int | Sequence[int], ndim: int) -> tuple[int, ...]:
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    out = tuple(_wrap_dim(int(d), ndim) for d in dims)
    if len(set(out)) != len(out):
        d = next(d for d in out if out.count(d) > 1)
        raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return out


def sum(input: Tensor, dim: int | Sequence[int] | None = None,  # noqa: A001 - torch.sum
        keepdim: bool = False, *, dtype: _dtype.dtype | None = None) -> Tensor:
    """Sum of all elements (``SumBackward0``) or over ``dim`` (``SumBackward1``).

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> gradviz.sum(x), gradviz.sum(x, 0), x.sum(1, keepdim=True).shape
        (tensor(10.), tensor([4., 6.]), (2, 1))
    """
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        return dispatch(_O["sum"], input)
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


# -- shapes --------------------------------------------------------------------------------------
def _shape_arg(shape: tuple) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


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
        (2, 3)
    """
    size = _infer_size(_shape_arg(shape), input._data.size)
    if not _viewable(input._data, size):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return dispatch(_O["view"], input, size=size)


def reshape(input: Tensor, *shape: Any) -> Tensor:
    """Like :func:`view` when the data allows it; otherwise a copy, recorded as PyTorch records
    it (``UnsafeViewBackward0`` over ``CloneBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.reshape(gradviz.arange(6.0), (3, 2)).shape
        (3, 2)
    """
    size = _infer_size(_shape_arg(shape), input._data.size)
    if _viewable(input._data, size):
        return dispatch(_O["view"], input, size=size)
    return dispatch(_O["_unsafe_view"], clone(input), size=size)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions (a view).

    Example:
        >>> import gradviz
        >>> gradviz.transpose(gradviz.zeros(2, 3), 0, 1).shape
        (3, 2)
    """
    nd = input.ndim
    return dispatch(_O["transpose"], input, dim0=_wrap_dim(dim0, nd), dim1=_wrap_dim(dim1, nd))


swapaxes = transpose


def t(input: Tensor) -> Tensor:
    """Transpose a tensor of at most 2 dimensions (``TBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.t(gradviz.zeros(2, 3)).shape
        (3, 2)
    """
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D")
    return dispatch(_O["t"], input)


def permute(input: Tensor, *dims: Any) -> Tensor:
    """Reorder dimensions (a view).

    Example:
        >>> import gradviz
        >>> gradviz.permute(gradviz.zeros(2, 3, 4), (2, 0, 1)).shape
        (4, 2, 3)
    """
    nd = input.ndim
    d = tuple(_wrap_dim(x, nd) for x in _shape_arg(dims))
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
        (2, 3)
    """
    size = _shape_arg(sizes)
    shape = input.shape
    if len(size) < len(shape):
        raise RuntimeError(
            f"expand({input.type()}{{{list(shape)}}}, size={list(size)}): the number of sizes "
            f"provided ({len(size)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({len(shape)})")
    lead = len(size) - len(shape)
    final = list(size)
    for i, n in enumerate(shape):
        want = size[lead + i]
        if want == -1:
            final[lead + i] = n
        elif n != 1 and n != want:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({n}) at "
                f"non-singleton dimension {lead + i}.  Target sizes: {list(size)}.  Tensor "
                f"sizes: {list(shape)}")
    return dispatch(_O["expand"], input, size=tuple(final))


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a dimension of size 1 at ``dim``.

    Example:
        >>> import gradviz
        >>> gradviz.unsqueeze(gradviz.zeros(3), 0).shape
        (1, 3)
    """
    return dispatch(_O["unsqueeze"], input, dim=_wrap_dim(dim, input.ndim + 1))


def squeeze(input: Tensor, dim: int | None = None) -> Tensor:
    """Remove dimensions of size 1 (all, or the one at ``dim`` if it has size 1).

    Example:
        >>> import gradviz
        >>> gradviz.squeeze(gradviz.zeros(1, 3, 1)).shape
        (3,)
    """
    if dim is None:
        return dispatch(_O["squeeze"], input)
    return dispatch(_O["squeeze_dim"], input, dim=_wrap_dim(dim, input.ndim))


def clone(input: Tensor) -> Tensor:
    """A copy with its own storage (``CloneBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.clone(gradviz.ones(2))
        tensor([1., 1.])
    """
    return dispatch(_O["clone"], input)


# -- linear algebra --------------------------------------------------------------------------------
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Matrix product of two 2-D tensors (``MmBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.mm(gradviz.ones(2, 3), gradviz.ones(3, 4)).shape
        (2, 4)
    """
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    (n, k), (k2, m) = input.shape, mat2.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    _same_dtype("mm", input, mat2)
    return dispatch(_O["mm"], input, mat2)


def _same_dtype(name: str, a: Tensor, b: Tensor) -> None:
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype.name} != {b.dtype.name} ({name})".replace(
                               "float32", "float").replace("float64", "double"))


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """Inner product of two 1-D tensors (``DotBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.dot(gradviz.tensor([1.0, 2.0]), gradviz.tensor([3.0, 4.0]))
        tensor(11.)
    """
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D "
                           "tensors")
    if input.shape[0] != tensor.shape[0]:
        raise RuntimeError(
            "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number "
            "of elements, but got {} and {} elements respectively".format(
                input.shape[0], tensor.shape[0], input.shape[0], tensor.shape[0]))
    return dispatch(_O["dot"], input, tensor)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector product (``MvBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.mv(gradviz.ones(2, 3), gradviz.ones(3))
        tensor([3., 3.])
    """
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {vec.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat "
                           f"({input.shape[0]}x{input.shape[1]}), vec ({vec.shape[0]})")
    return dispatch(_O["mv"], input, vec)


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with PyTorch's rules, decomposed as PyTorch decomposes it: 1-D·1-D is
    ``dot``, 2-D·1-D is ``mv``, 1-D·2-D is ``unsqueeze``/``mm``/``squeeze``, 2-D·2-D is ``mm``.

    Example:
        >>> import gradviz
        >>> (gradviz.ones(2, 3) @ gradviz.ones(3)).shape
        (2,)
    """
    input, other = _tensor_arg(input), _tensor_arg(other)
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are 0D "
                           "and 0D")
    a, b = input.ndim, other.ndim
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a}D and {b}D")
    if a == 1 and b == 1:
        return dot(input, other)
    if a == 2 and b == 1:
        return mv(input, other)
    if a == 1 and b == 2:
        if input.shape[0] != other.shape[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied (1x{input.shape[0]} "
                               f"and {other.shape[0]}x{other.shape[1]})")
        return squeeze(mm(unsqueeze(input, 0), other), 0)
    if a == 2 and b == 2:
        return mm(input, other)
    from gradviz.ops import _batched

    return _batched.matmul(input, other)


# -- selection and comparison ------------------------------------------------------------------
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
    return dispatch(_O["where"], cond, _tensor_arg(input), _tensor_arg(other))


def _compare(name: str):
    def fn(input: Any, other: Any) -> Tensor:
        return dispatch(_O[name], _tensor_arg(input), _tensor_arg(other))

    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` comparison; the result is a bool tensor, never grad."
    return fn


eq, ne, lt, le, gt, ge = (_compare(n) for n in ("eq", "ne", "lt", "le", "gt", "ge"))
logical_and, logical_or = _compare("logical_and"), _compare("logical_or")


def logical_not(input: Tensor) -> Tensor:
    """Elementwise logical negation, as a bool tensor."""
    return dispatch(_O["logical_not"], input)


# -- *_like factories (ops only in that they take a tensor) --------------------------------------
def zeros_like(input: Tensor, *, dtype: _dtype.dtype | None = None,
               requires_grad: bool = False) -> Tensor:
    """Zeros with ``input``'s shape and dtype.

    Example:
        >>> import gradviz
        >>> gradviz.zeros_like(gradviz.ones(2))
        tensor([0., 0.])
    """
    return full_like(input, 0, dtype=dtype, requires_grad=requires_grad)


def ones_like(input: Tensor, *, dtype: _dtype.dtype | None = None,
              requires_grad: bool = False) -> Tensor:
    """Ones with ``input``'s shape and dtype.

    Example:
        >>> import gradviz
        >>> gradviz.ones_like(gradviz.zeros(2))
        tensor([1., 1.])
    """
    return full_like(input, 1, dtype=dtype, requires_grad=requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: _dtype.dtype | None = None,
              requires_grad: bool = False) -> Tensor:
    """``fill_value`` everywhere, with ``input``'s shape and dtype.

    Example:
        >>> import gradviz
        >>> gradviz.full_like(gradviz.zeros(2), 7)
        tensor([7., 7.])
    """
    dt = input._data.dtype if dtype is None else dtype.np
    return Tensor._make(np.full(input.shape, fill_value, dtype=dt)).requires_grad_(requires_grad)


# -- in place ----------------------------------------------------------------------------------
def add_(input: Tensor, other: Any, *, alpha: float = 1) -> Tensor:
    return dispatch_inplace(_O["add"], input, _tensor_arg(other), alpha=alpha)


def sub_(input: Tensor, other: Any, *, alpha: float = 1) -> Tensor:
    return dispatch_inplace(_O["sub"], input, _tensor_arg(other), alpha=alpha)


def mul_(input: Tensor, other: Any) -> Tensor:
    return dispatch_inplace(_O["mul"], input, _tensor_arg(other))


def div_(input: Tensor, other: Any) -> Tensor:
    return dispatch_inplace(_O["div"], input, _tensor_arg(other))


def zero_(input: Tensor) -> Tensor:
    return dispatch_inplace(_O["zero_"], input)


def fill_(input: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        value = value.item()
    return dispatch_inplace(_O["fill_"], input, value=value)


def copy_(input: Tensor, src: Any) -> Tensor:
    src = _tensor_arg(src)
    if isinstance(src, Tensor):
        try:
            np.broadcast_shapes(src.shape, input.shape)
        except ValueError:
            raise RuntimeError(
                f"The size of tensor a ({input.shape[-1] if input.ndim else 1}) must match the "
                f"size of tensor b ({src.shape[-1] if src.ndim else 1}) at non-singleton "
                f"dimension {max(input.ndim - 1, 0)}") from None
    return dispatch_inplace(_O["copy_"], input, src)
