"""The functional forms of the ops (``gradviz.add``, ``gradviz.sum`` ...), as torch spells them.

Each function checks its arguments the way PyTorch does (same error texts), normalises them, and
calls the dispatch point with its table entry. Nothing here computes a gradient.
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradviz import _dtype
from gradviz._device import check_device, meta_array
from gradviz._factories import int_list, invalid_combination
from gradviz.ops import _args
from gradviz.ops.derivatives import OPS
from gradviz.ops.dispatch import (
    broadcast_message,
    dispatch,
    dispatch_inplace,
    dispatch_inplace_view,
    no_meta_kernel,
    out_variant,
)
from gradviz.tensor import Tensor, _AsGiven, _is_number, _wrap_dim

__all__ = [
    "add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide",
    "negative", "pow", "floor_divide", "remainder", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "sum", "mean",
    "reshape", "view", "transpose", "swapaxes", "t", "permute", "expand", "unsqueeze", "squeeze",
    "mm", "matmul", "dot", "mv", "where", "clone", "eq", "ne", "lt", "le", "gt", "ge",
    "logical_not", "logical_and", "logical_or", "zeros_like", "empty_like", "numel",
    "multinomial",
    "is_floating_point", "is_nonzero", "is_inference", "ones_like", "full_like",
]

_O = OPS
_MUL, _ADD = OPS["mul"], OPS["add"]
_PLAIN = (Tensor, float, int)  # operands that need no conversion


def _tensor_arg(x: Any, like: Tensor | None = None) -> Any:
    """Accept tensors and numbers; turn NumPy arrays into constant tensors."""
    t = type(x)
    if t is Tensor or t is float or t is int or isinstance(x, Tensor) or _is_number(x):
        return x
    if isinstance(x, np.ndarray):
        return Tensor._make(x)
    raise TypeError(f"expected a Tensor or a number, got {type(x).__name__}")


# -- arithmetic ----------------------------------------------------------------------------------
def add(input: Any, other: Any, *, alpha: float = 1) -> Tensor:
    """``input + alpha * other``, with broadcasting (written into ``out`` if given).

    Example:
        >>> import gradviz
        >>> gradviz.add(gradviz.tensor([1.0, 2.0]), 1)
        tensor([2., 3.])
    """
    if not _is_number(alpha):
        raise TypeError(f"add(): argument 'alpha' must be Number, not {type(alpha).__name__}")
    if not isinstance(input, Tensor):  # 2 + x records AddBackward0 with x as `other`
        return dispatch(_ADD, _tensor_arg(input), other, alpha=alpha)
    return dispatch(_ADD, input, other if type(other) in _PLAIN else _tensor_arg(other),
                    alpha=alpha)


def sub(input: Any, other: Any, *, alpha: float = 1) -> Tensor:
    """``input - alpha * other``, with broadcasting (written into ``out`` if given).

    Example:
        >>> import gradviz
        >>> gradviz.sub(gradviz.tensor([1.0, 2.0]), 1)
        tensor([0., 1.])
    """
    if not isinstance(input, Tensor):
        return rsub(other, input, alpha=alpha)
    _sub_check(input, other)
    return dispatch(_O["sub"], input, _tensor_arg(other), alpha=alpha)


# torch words a call of add/sub with arguments missing as an overload error (gradviz/ops/_args.py).
add, sub = _args.function(add, "add"), _args.function(sub, "sub")
add, sub = out_variant(add), out_variant(sub)  # torch's out= (NOTE [out=], gradviz/_factories.py)
subtract = sub


def _sub_check(a: Any, b: Any) -> None:
    """PyTorch refuses `-` with a bool operand (a Python bool counts), with these texts."""
    a_bool = isinstance(a, (bool, np.bool_)) or (isinstance(a, Tensor) and a._data.dtype == bool)
    b_bool = isinstance(b, (bool, np.bool_)) or (isinstance(b, Tensor) and b._data.dtype == bool)
    if a_bool and b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if a_bool or b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def rsub(input: Tensor, other: Any, *, alpha: float = 1) -> Tensor:
    """``other - alpha * input``: what ``2 - x`` computes (recorded as ``RsubBackward1``).

    Example:
        >>> import gradviz
        >>> gradviz.rsub(gradviz.tensor([1.0, 2.0]), 3)
        tensor([2., 1.])
    """
    _sub_check(input, other)
    if isinstance(other, Tensor):
        return dispatch(_O["rsub_tensor"], input, other, alpha=alpha)
    return dispatch(_O["rsub"], input, other=other, alpha=alpha)


@out_variant
def mul(input: Any, other: Any) -> Tensor:
    """Elementwise product, with broadcasting (written into ``out`` if given).

    Example:
        >>> import gradviz
        >>> gradviz.mul(gradviz.tensor([1.0, 2.0]), 3)
        tensor([3., 6.])
    """
    # NOTE [perf]: the common operand types skip _tensor_arg's checks.
    if type(input) is not Tensor:
        input = _tensor_arg(input)
    if type(other) not in _PLAIN:
        other = _tensor_arg(other)
    return dispatch(_MUL, input, other)


multiply = mul


# div() without rounding_mode is PyTorch's div.Tensor; with it (None too), div.Tensor_mode
_TRUE_DIV: Any = object()


def _div_mode(rounding_mode: Any) -> None:
    if rounding_mode is not None and rounding_mode not in ("trunc", "floor"):
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")


@out_variant
def div(input: Any, other: Any, *, rounding_mode: str | None = _TRUE_DIV) -> Tensor:
    """True division, with broadcasting; ``number / x`` is ``x.reciprocal() * number`` as in
    PyTorch. ``rounding_mode='trunc'`` rounds the quotient toward zero, ``'floor'`` toward minus
    infinity (``DivBackward2``, whose gradient is zero). Written into ``out`` if given.

    Example:
        >>> import gradviz
        >>> gradviz.div(gradviz.tensor([1.0, 2.0]), 2)
        tensor([0.5000, 1.0000])
        >>> gradviz.div(gradviz.tensor([-7.0, 7.0]), 2, rounding_mode="floor")
        tensor([-4.,  3.])
    """
    if rounding_mode is not _TRUE_DIV:
        _div_mode(rounding_mode)
        return dispatch(_O["div_mode"], _tensor_arg(input), _tensor_arg(other),
                        rounding_mode=rounding_mode)
    if not isinstance(input, Tensor):
        return mul(dispatch(_O["reciprocal"], other), input)
    return dispatch(_O["div"], input, _tensor_arg(other))


divide = div


@out_variant
def true_divide(input: Any, other: Any) -> Tensor:
    """:func:`div` without ``rounding_mode``: torch's ``true_divide`` takes none (``out=``
    as :func:`div`).

    Example:
        >>> import gradviz
        >>> gradviz.true_divide(gradviz.tensor([1, 3]), 2)
        tensor([0.5000, 1.5000])
    """
    return div(input, other)



def negative(input: Tensor) -> Tensor:
    """Alias of :func:`neg` (``NegBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.negative(gradviz.tensor([1.0]))
        tensor([-1.])
    """
    return dispatch(_O["neg"], input)



def pow(input: Any, exponent: Any) -> Tensor:  # noqa: A001 - torch.pow
    """``input ** exponent``: ``PowBackward0`` for a number exponent, ``PowBackward1`` for a
    tensor one, ``PowBackward2`` for a number base.

    Example:
        >>> import gradviz
        >>> gradviz.pow(gradviz.tensor([1.0, 2.0]), 2)
        tensor([1., 4.])
    """
    if not (isinstance(exponent, (Tensor, np.ndarray)) or _is_number(exponent)):
        # torch's text shows the method's arguments (x.pow('a')) or the function's (2, 'a')
        raise invalid_combination("pow", (exponent,) if isinstance(input, Tensor) else
                                  (input, exponent), {})
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


def floor_divide(input: Any, other: Any) -> Tensor:
    """``input // other``, rounded toward minus infinity. Not differentiable: with an input
    that requires grad it records PyTorch's ``NotImplemented`` node, whose backward fails.

    Example:
        >>> import gradviz
        >>> gradviz.floor_divide(gradviz.tensor([-7, 7]), 2)
        tensor([-4,  3])
    """
    if not isinstance(input, Tensor):
        return dispatch(_O["rfloor_divide"], other, other=_number(input))
    if isinstance(other, Tensor) or isinstance(other, np.ndarray):
        return dispatch(_O["floor_divide"], input, _tensor_arg(other))
    return dispatch(_O["floor_divide_scalar"], input, other=_number(other))


def remainder(input: Any, other: Any) -> Tensor:
    """``input % other`` with the sign of ``other``, as Python's ``%``: ``RemainderBackward0``
    for a number ``other``, ``RemainderBackward1`` for a tensor, ``NotImplemented`` for a
    number ``input``.

    Example:
        >>> import gradviz
        >>> gradviz.remainder(gradviz.tensor([-7, 7]), 3)
        tensor([2, 1])
    """
    if not isinstance(input, Tensor):
        return dispatch(_O["rremainder"], other, other=_number(input))
    if isinstance(other, Tensor) or isinstance(other, np.ndarray):
        return dispatch(_O["remainder"], input, _tensor_arg(other))
    return dispatch(_O["remainder_scalar"], input, other=_number(other))


def _number(x: Any) -> Any:
    if not _is_number(x):
        raise TypeError(f"expected a Tensor or a number, got {type(x).__name__}")
    return x


def _bitwise(name: str):
    def fn(input: Any, other: Any) -> Tensor:
        if not isinstance(input, Tensor):  # 2 & x: the tensor's dtype decides, as in PyTorch
            return dispatch(_O[name], _tensor_arg(other), _number(input))
        return dispatch(_O[name], input, _tensor_arg(other))

    def inplace(input: Tensor, other: Any) -> Tensor:
        # torch casts before it looks for a kernel: a float operand into an integer tensor is
        # a cast error, not "bitwise_and_cpu not implemented for 'Float'".
        if input._data.dtype.kind in "biu":
            if isinstance(other, float):
                got = _dtype.get_default_dtype()._legacy[:-6]
            elif isinstance(other, Tensor) and other._data.dtype.kind == "f":
                got = other.dtype._legacy[:-6]
            else:
                got = None
            if got is not None:
                raise RuntimeError(f"result type {got} can't be cast to the desired output "
                                   f"type {input.dtype._legacy[:-6]}")
        return dispatch_inplace(_O[name], input, _tensor_arg(other))

    op, shown = {"bitwise_and": ("&", "[1, 2]"), "bitwise_or": ("|", "[3, 3]"),
                 "bitwise_xor": ("^", "[2, 1]")}[name]
    fn.__name__, inplace.__name__ = name, f"{name}_"
    fn.__doc__ = (f"Elementwise ``input {op} other`` of integer or bool tensors (logical for "
                  "bool); never differentiable.\n\n    Example:\n        >>> import gradviz\n"
                  f"        >>> gradviz.{name}(gradviz.tensor([1, 2]), 3)\n"
                  f"        tensor({shown})\n    ")
    inplace.__doc__ = f"In-place :func:`{name}`."
    return fn, inplace


(bitwise_and, bitwise_and_), (bitwise_or, bitwise_or_), (bitwise_xor, bitwise_xor_) = (
    _bitwise(n) for n in ("bitwise_and", "bitwise_or", "bitwise_xor"))


def bitwise_not(input: Tensor) -> Tensor:
    """Elementwise ``~input`` of an integer or bool tensor (logical not for bool).

    Example:
        >>> import gradviz
        >>> gradviz.bitwise_not(gradviz.tensor([1, -1]))
        tensor([-2,  0])
    """
    return dispatch(_O["bitwise_not"], input)


def bitwise_not_(input: Tensor) -> Tensor:
    """In-place :func:`bitwise_not`."""
    return dispatch_inplace(_O["bitwise_not"], input)







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


# -- shapes --------------------------------------------------------------------------------------
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
    return dispatch(_O["_unsafe_view"], clone(input), size=size)


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


__all__ += ["adjoint"]


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


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a dimension of size 1 at ``dim``.

    Example:
        >>> import gradviz
        >>> gradviz.unsqueeze(gradviz.zeros(3), 0).shape
        gradviz.Size([1, 3])
    """
    return dispatch(_O["unsqueeze"], input, dim=_wrap_dim(dim, input.ndim + 1))


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
        gradviz.Size([2, 4])
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


_C_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half"}


def _same_dtype(name: str, a: Tensor, b: Tensor) -> None:
    if a._data.dtype != b._data.dtype:
        da, db = (_C_TYPE_NAMES.get(t.dtype.name, t.dtype.name) for t in (a, b))
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {da} != {db} "
                           f"({name})")


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """Inner product of two 1-D tensors (``DotBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.dot(gradviz.tensor([1.0, 2.0]), gradviz.tensor([3.0, 4.0]))
        tensor(11.)
    """
    _check_dot(input, tensor)
    return dispatch(_O["dot"], input, tensor)


def _check_dot(input: Tensor, other: Tensor) -> None:
    """dot's and vdot's shape checks, with PyTorch's texts: two 1-D tensors of one length."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           "tensors")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
            f"[{other.shape[0]}] to have the same number of elements, but got "
            f"{input.shape[0]} and {other.shape[0]} elements respectively")


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector product (``MvBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.mv(gradviz.ones(2, 3), gradviz.ones(3))
        tensor([3., 3.])
    """
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat "
                           f"({input.shape[0]}x{input.shape[1]}), vec ({vec.shape[0]})")
    return dispatch(_O["mv"], input, vec)


@out_variant
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with PyTorch's rules, decomposed as PyTorch decomposes it: 1-D·1-D is
    ``dot``, 2-D·1-D is ``mv``, 1-D·2-D is ``unsqueeze``/``mm``/``squeeze``, 2-D·2-D is ``mm``
    (written into ``out`` if given).

    Example:
        >>> import gradviz
        >>> (gradviz.ones(2, 3) @ gradviz.ones(3)).shape
        gradviz.Size([2])
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
        # PyTorch squeezes the mm result in place (`squeeze_(0)`): SqueezeBackward4, version 1.
        out = dispatch(_O["squeeze_dim_"], mm(unsqueeze(input, 0), other), dim=0)
        out._version_counter.version += 1
        return out
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
    for v in (input, other):
        if not (isinstance(v, (Tensor, np.ndarray)) or _is_number(v)):
            raise invalid_combination("where", (condition, input, other), {})
    return dispatch(_O["where"], _tensor_arg(input), _tensor_arg(other), condition=cond)


def _compare(name: str):
    def fn(input: Any, other: Any) -> Tensor:
        return dispatch(_O[name], _tensor_arg(input), _tensor_arg(other))

    fn.__name__ = name
    fn.__doc__ = (f"Elementwise ``{name}``; the result is a bool tensor and never requires grad."
                  f"\n\n    Example:\n        >>> import gradviz\n        >>> gradviz.{name}("
                  "gradviz.tensor([1, 2, 3]), 2).dtype\n        gradviz.bool\n    ")
    return fn


eq, ne, lt, le, gt, ge = (_compare(n) for n in ("eq", "ne", "lt", "le", "gt", "ge"))
logical_and, logical_or = _compare("logical_and"), _compare("logical_or")
logical_xor = _compare("logical_xor")
__all__ += ["logical_xor"]


def logical_not(input: Tensor) -> Tensor:
    """Elementwise logical negation, as a bool tensor.

    Example:
        >>> import gradviz
        >>> gradviz.logical_not(gradviz.tensor([True, False]))
        tensor([False,  True])
    """
    return dispatch(_O["logical_not"], input)


def _logical_inplace(name: str):
    def inplace(input: Tensor, *other: Any) -> Tensor:
        # the truth values written as 0/1 (True/False) in input's own dtype, no node: torch's
        return dispatch_inplace(_O[name], input, *(_tensor_arg(o) for o in other))

    inplace.__name__ = f"{name}_"
    inplace.__doc__ = f"In-place :func:`{name}` (``Tensor.{name}_``), keeping ``input``'s dtype."
    return inplace


# Tensor methods only (torch has no torch.logical_not_): gradviz/ops/methods.py installs them.
logical_not_, logical_and_, logical_or_, logical_xor_ = (
    _logical_inplace(n) for n in ("logical_not", "logical_and", "logical_or", "logical_xor"))


# -- *_like factories (ops only in that they take a tensor) --------------------------------------
def zeros_like(input: Tensor, *, dtype: _dtype.dtype | None = None,
               requires_grad: bool = False, device: Any = None) -> Tensor:
    """Zeros with ``input``'s shape and dtype.

    Example:
        >>> import gradviz
        >>> gradviz.zeros_like(gradviz.ones(2))
        tensor([0., 0.])
    """
    return full_like(input, 0, dtype=dtype, requires_grad=requires_grad, device=device)


def empty_like(input: Tensor, *, dtype: _dtype.dtype | None = None,
               requires_grad: bool = False, device: Any = None) -> Tensor:
    """A tensor with ``input``'s shape and dtype whose values are not to be relied on (zeros
    here: NumPy would hand out whatever the memory held).

    Example:
        >>> import gradviz
        >>> gradviz.empty_like(gradviz.ones(2, 3)).shape
        gradviz.Size([2, 3])
    """
    return full_like(input, 0, dtype=dtype, requires_grad=requires_grad, device=device)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Any = None) -> Tensor:
    """Indices drawn from the categories of each row of ``input`` (non-negative weights, 1-D or
    2-D), ``num_samples`` per row, with or without replacement (int64; no gradient). Without
    replacement, categories of weight 0 come only once all others are drawn.

    Example:
        >>> import gradviz
        >>> gradviz.multinomial(gradviz.tensor([0.0, 1.0, 0.0]), 2, replacement=True)
        tensor([1, 1])
    """
    from gradviz import _factories

    _tensors_only("multinomial", input=input)
    weights = input._data
    if weights.dtype.kind != "f":
        from gradviz.ops._kernels import _SCALAR_TYPE

        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{_SCALAR_TYPE.get(weights.dtype.name, weights.dtype.name)}")
    if weights.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if input.is_meta:  # indices of the right shape, nothing drawn (NOTE [meta device])
        if not replacement and num_samples > weights.shape[-1]:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                               "replacement")
        return Tensor._make(meta_array(weights.shape[:-1] + (num_samples,), np.int64))
    rows = weights.reshape(-1, weights.shape[-1]).astype(np.float64)
    if not np.isfinite(rows).all() or (rows < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (rows.sum(axis=1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    n = rows.shape[1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    rng = _factories.rng(generator, "multinomial")
    out = np.empty((rows.shape[0], num_samples), np.int64)
    for r, w in enumerate(rows):
        if replacement:
            out[r] = rng.choice(n, size=num_samples, replace=True, p=w / w.sum())
        else:
            # Efraimidis-Spirakis: the largest u ** (1 / w) are a weighted draw without
            # replacement; a weight of 0 gets key 0 and comes after every other category.
            with np.errstate(divide="ignore"):
                keys = rng.random(n) ** (1.0 / w)
            out[r] = np.argsort(-keys, kind="stable")[:num_samples]
    return Tensor._make(out.reshape(weights.shape[:-1] + (num_samples,)))


def numel(input: Tensor) -> int:
    """The number of elements of ``input`` (``input.numel()``).

    Example:
        >>> import gradviz
        >>> gradviz.numel(gradviz.ones(2, 3))
        6
    """
    _tensors_only("numel", input=input)
    return input.numel()


def is_floating_point(input: Tensor) -> bool:
    """Whether ``input``'s dtype is a floating point one.

    Example:
        >>> import gradviz
        >>> gradviz.is_floating_point(gradviz.ones(2)), gradviz.is_floating_point(gradviz.arange(2))
        (True, False)
    """
    _tensors_only("is_floating_point", input=input)
    return input.is_floating_point()


def is_inference(input: Tensor) -> bool:
    """Whether ``input`` was made in inference mode (``input.is_inference()``).

    Example:
        >>> import gradviz
        >>> with gradviz.inference_mode():
        ...     t = gradviz.ones(2)
        >>> gradviz.is_inference(t), gradviz.is_inference(gradviz.ones(2))
        (True, False)
    """
    _tensors_only("is_inference", input=input)
    return input.is_inference()


def is_nonzero(input: Tensor) -> bool:
    """Whether a one-element tensor is not zero (PyTorch's errors for more or fewer elements).

    Example:
        >>> import gradviz
        >>> gradviz.is_nonzero(gradviz.tensor([1.0]))
        True
    """
    _tensors_only("is_nonzero", input=input)
    return bool(input)


def ones_like(input: Tensor, *, dtype: _dtype.dtype | None = None,
              requires_grad: bool = False, device: Any = None) -> Tensor:
    """Ones with ``input``'s shape and dtype.

    Example:
        >>> import gradviz
        >>> gradviz.ones_like(gradviz.zeros(2))
        tensor([1., 1.])
    """
    return full_like(input, 1, dtype=dtype, requires_grad=requires_grad, device=device)


def full_like(input: Tensor, fill_value: Any, *, dtype: _dtype.dtype | None = None,
              requires_grad: bool = False, device: Any = None) -> Tensor:
    """``fill_value`` everywhere, with ``input``'s shape and dtype.

    Example:
        >>> import gradviz
        >>> gradviz.full_like(gradviz.zeros(2), 7)
        tensor([7., 7.])
    """
    dt = input._data.dtype if dtype is None else dtype.np
    # like PyTorch's *_like: on the input's device unless told (a meta input: a meta result)
    dev = input.device if device is None else check_device(device, "full_like")
    arr = (meta_array(input.shape, dt) if dev.type == "meta"
           else np.full(input.shape, fill_value, dtype=dt))
    return Tensor._make(arr).requires_grad_(requires_grad)


# -- in place ----------------------------------------------------------------------------------
def add_(input: Tensor, other: Any, *, alpha: float = 1) -> Tensor:
    return dispatch_inplace(_O["add"], input, _tensor_arg(other), alpha=alpha)


def sub_(input: Tensor, other: Any, *, alpha: float = 1) -> Tensor:
    _sub_check(input, other)
    return dispatch_inplace(_O["sub"], input, _tensor_arg(other), alpha=alpha)


def mul_(input: Tensor, other: Any) -> Tensor:
    return dispatch_inplace(_O["mul"], input, _tensor_arg(other))


def div_(input: Tensor, other: Any, *, rounding_mode: str | None = _TRUE_DIV) -> Tensor:
    if rounding_mode is not _TRUE_DIV:
        _div_mode(rounding_mode)
        return dispatch_inplace(_O["div_mode"], input, _tensor_arg(other),
                                rounding_mode=rounding_mode)
    return dispatch_inplace(_O["div"], input, _tensor_arg(other))


def true_divide_(input: Tensor, other: Any) -> Tensor:
    return div_(input, other)


def zero_(input: Tensor) -> Tensor:
    """Fill ``input`` with zeros, in place (``torch.zero_``, ``x.zero_()``).

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2)
        >>> gradviz.zero_(x) is x, x
        (True, tensor([0., 0.]))
    """
    return dispatch_inplace(_O["zero_"], input)


def fill_(input: Tensor, value: Any) -> Tensor:
    """Fill ``input`` with ``value``, in place (``torch.fill_``, ``x.fill_(value)``).

    Example:
        >>> import gradviz
        >>> x = gradviz.zeros(2)
        >>> gradviz.fill_(x, 3) is x, x
        (True, tensor([3., 3.]))
    """
    if isinstance(value, Tensor):  # fill_.Tensor: FillBackward3, differentiable in `value`
        if value.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.ndim} dimensions.")
        return dispatch_inplace(_O["fill_tensor_"], input, value)
    return dispatch_inplace(_O["fill_"], input, value=value)


def resize_(input: Tensor, *size: Any, memory_format: Any = None) -> Tensor:
    """Give ``input`` the shape ``size`` in place (``x.resize_(2, 3)``), laid out row-major
    over its memory from where it starts; the same shape changes nothing. Memory it lacks is
    added (zeros here, uninitialised in PyTorch); then, unlike PyTorch, its other views keep
    the old memory. Not differentiable: a tensor that requires grad is refused.

    Example:
        >>> import gradviz
        >>> x = gradviz.arange(6.0)
        >>> x.resize_(2, 2) is x, x
        (True, tensor([[0., 1.],
                [2., 3.]]))
    """
    shape = int_list("resize_", size)
    if builtins.any(s < 0 for s in shape):
        raise RuntimeError("numel: integer multiplication overflow")
    if input.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if shape == input._data.shape:
        return input
    arr = input._data
    root = arr
    while isinstance(root.base, np.ndarray):  # the array that owns the memory
        root = root.base
    if root.flags.c_contiguous and root.dtype == arr.dtype:
        storage, offset = root.reshape(-1), input.storage_offset()
    else:  # memory seen through another dtype or order: the tensor's own elements
        storage, offset = arr.reshape(-1), 0
    n = int(np.prod(shape))
    if offset + n > storage.size:
        grown = np.zeros(offset + n, arr.dtype)
        grown[:storage.size] = storage
        storage = grown
    input._data = storage[offset:offset + n].reshape(shape)
    input._version_counter.version += 1
    return input


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """:func:`resize_` to ``the_template``'s shape (``torch.resize_as_``, ``x.resize_as_(y)``).

    Example:
        >>> import gradviz
        >>> x = gradviz.arange(4.0)
        >>> gradviz.resize_as_(x, gradviz.ones(2, 2)).shape
        gradviz.Size([2, 2])
    """
    _tensors_only("resize_as_", input=input, the_template=the_template)
    return resize_(input, tuple(the_template.shape))


def copy_(input: Tensor, src: Any) -> Tensor:
    src = _tensor_arg(src)
    if isinstance(src, Tensor):
        try:
            np.broadcast_shapes(src.shape, input.shape)
        except ValueError:
            raise RuntimeError(
                f"The size of tensor a ({input.shape[-1] if input.ndim else 1}) must match the "
                f"size of tensor b ({src.shape[-1] if src.ndim else 1}) at non-singleton "
                f"dimension {builtins.max(input.ndim - 1, 0)}") from None
    return dispatch_inplace(_O["copy_"], input, src)


# =================================================================================================
# The op library: each function checks its arguments as PyTorch does and calls one table entry
# (or decomposes exactly as PyTorch does). Dims reach the kernels normalized (non-negative), and
# the nodes read them back as written (NOTE [saved as given] in gradviz/tensor.py).
# =================================================================================================
__all__ += [
    "abs", "absolute", "square",
    "clamp", "clip", "clamp_min", "clamp_max", "maximum", "minimum", "max", "min", "amax", "amin",
    "argmax", "argmin", "all", "any", "isnan", "isinf", "isfinite", "allclose", "equal",
    "prod", "var", "std", "logsumexp", "norm", "softmax", "log_softmax", "flatten", "repeat",
    "flip", "cumsum", "contiguous", "split", "split_with_sizes", "chunk", "unsafe_split",
    "unsafe_split_with_sizes", "unsafe_chunk", "cat", "concat",
    "concatenate", "stack", "bmm", "outer", "ger",
    "select", "narrow", "index_select", "gather", "scatter", "scatter_add", "masked_fill",
    "clamp_", "clip_", "index_put", "index_put_",
]


def _floating_kernel(name: str, input: Tensor, kernel: str) -> None:
    """PyTorch's error for a floating-point-only kernel called on an integer tensor."""
    if input._data.dtype.kind != "f":
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{input.dtype._legacy[:-6]}\' ({name}: input of '
            f"shape {list(input.shape)}; convert it with .float() first)")


def abs(input: Tensor) -> Tensor:  # noqa: A001 - torch.abs
    """Elementwise absolute value (``AbsBackward0``; the gradient at 0 is 0).

    Example:
        >>> import gradviz
        >>> gradviz.abs(gradviz.tensor([-1.5, 2.0]))
        tensor([1.5000, 2.0000])
    """
    if input._data.dtype == np.bool_:
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return dispatch(_O["abs"], input)


absolute = abs


def square(input: Tensor) -> Tensor:
    """``input ** 2``, recorded as PyTorch records it (``PowBackward0`` with exponent 2).

    Example:
        >>> import gradviz
        >>> gradviz.square(gradviz.tensor([3.0]))
        tensor([9.])
    """
    if input._data.dtype == np.bool_:
        input = input.to(_dtype.int64)
    return pow(input, 2)


# -- clamp, maximum, minimum -----------------------------------------------------------------------
def _bound(b: Any, like: Tensor) -> Any:
    if b is None or isinstance(b, Tensor):
        return b
    return Tensor._make(np.asarray(b, dtype=np.result_type(like._data, b)))


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Limit values to ``[min, max]`` (either may be None). Number bounds record
    ``ClampBackward1``, tensor bounds ``ClampBackward0``; the gradient passes where
    ``min <= input <= max``.

    Example:
        >>> import gradviz
        >>> gradviz.clamp(gradviz.tensor([-2.0, 0.5, 3.0]), -1, 1)
        tensor([-1.0000,  0.5000,  1.0000])
    """
    for b in (min, max):
        if not (b is None or isinstance(b, Tensor) or _is_number(b)):
            given = {k: v for k, v in (("min", min), ("max", max)) if v is not None}
            raise _args.overload_error("clamp", (input,), given)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return dispatch(_O["clamp_tensor"], input, _bound(min, input), _bound(max, input))
    return dispatch(_O["clamp"], input, min=min, max=max)


clip = clamp


def clamp_min(input: Tensor, min: Any) -> Tensor:  # noqa: A002
    """``max(input, min)`` (``ClampMinBackward0``; ``ClampMinBackward1`` for a tensor ``min``).

    Example:
        >>> import gradviz
        >>> gradviz.clamp_min(gradviz.tensor([-2.0, 3.0]), 0)
        tensor([0., 3.])
    """
    if isinstance(min, Tensor):
        return dispatch(_O["clamp_min_tensor"], input, min)
    return dispatch(_O["clamp_min"], input, min=min)


def clamp_max(input: Tensor, max: Any) -> Tensor:  # noqa: A002
    """``min(input, max)`` (``ClampMaxBackward0``; ``ClampMaxBackward1`` for a tensor ``max``).

    Example:
        >>> import gradviz
        >>> gradviz.clamp_max(gradviz.tensor([-2.0, 3.0]), 0)
        tensor([-2.,  0.])
    """
    if isinstance(max, Tensor):
        return dispatch(_O["clamp_max_tensor"], input, max)
    return dispatch(_O["clamp_max"], input, max=max)


def _tensor_only(name: str, other: Any) -> None:
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")


def maximum(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise maximum with broadcasting (``MaximumBackward0``; ties share the gradient).

    Example:
        >>> import gradviz
        >>> gradviz.maximum(gradviz.tensor([1.0, 5.0]), gradviz.tensor([3.0, 2.0]))
        tensor([3., 5.])
    """
    _tensor_only("maximum", other)
    return dispatch(_O["maximum"], input, other)


def minimum(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise minimum with broadcasting (``MinimumBackward0``; ties share the gradient).

    Example:
        >>> import gradviz
        >>> gradviz.minimum(gradviz.tensor([1.0, 5.0]), gradviz.tensor([3.0, 2.0]))
        tensor([1., 2.])
    """
    _tensor_only("minimum", other)
    return dispatch(_O["minimum"], input, other)


# -- more elementwise functions (opsmath) ----------------------------------------------------------
# floor, ceil, trunc, frac, log2, log10, exp2, sinh, cosh, tan, asin, acos, atan, asinh, acosh and
# atanh are generated from their rows (gradviz/ops/api.py); below, the ones whose arguments need
# PyTorch's handling (several overloads, optional keywords, tensor-only operands) and the aliases.
# (The in-place forms below are Tensor methods, as the generated ``floor_`` ... are.)
__all__ += [
    "round", "fix", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "logit",
    "nan_to_num", "atan2", "arctan2", "hypot", "fmod", "fmax", "fmin", "xlogy", "heaviside",
    "lerp", "addcmul", "addcdiv",
]


def _overloads(fn: str, args: tuple, signatures: tuple[str, ...]) -> TypeError:
    """torch's "invalid combination of arguments" error, with the signatures it lists."""
    got = ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in args)
    listed = "".join(f" * ({s}, *, Tensor out = None)\n" for s in signatures)
    return TypeError(f"{fn}() received an invalid combination of arguments - got ({got}), but "
                     f"expected one of:\n{listed}")


def _tensors_only(fn: str, **operands: Any) -> None:
    """torch's error for a number where only a tensor is taken (``atan2(x, 2.0)``)."""
    for position, (name, value) in enumerate(operands.items(), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")


def _method_form(fn: Any, name: str, params: tuple[str, ...]) -> Any:
    """``fn`` as the Tensor method ``name`` (``x.atan2(y)``): a number where a tensor is
    needed is reported at the method's position, ``self`` not counted, as torch's parser does
    (``atan2(): argument 'other' (position 1) must be Tensor, not float``)."""
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        given = dict(zip(params, args))
        given.update((k, kwargs[k]) for k in params if k in kwargs)
        missing = [k for k in params if k not in given]
        if missing:  # torch's wording (gradviz/ops/_args.py)
            raise TypeError(_args.parser_text(name, f"{name}() missing {len(missing)} required "
                                              "positional arguments: "
                                              + ", ".join(f"'{k}'" for k in missing), True))
        _tensors_only(name, **given)
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    return method


def round(input: Tensor, *, decimals: int | None = None) -> Tensor:  # noqa: A001 - torch.round
    """Round half to even: ``RoundBackward0``, or with ``decimals`` (even 0, as in PyTorch)
    ``RoundBackward1``. Integer tensors come back unchanged; the gradient is 0.

    Example:
        >>> import gradviz
        >>> gradviz.round(gradviz.tensor([0.5, 1.5, 2.567]))
        tensor([0., 2., 3.])
        >>> gradviz.round(gradviz.tensor([2.567]), decimals=2)
        tensor([2.5700])
    """
    if decimals is None:
        return dispatch(_O["round"], input)
    return dispatch(_O["round_decimals"], input, decimals=int(decimals))


def round_(input: Tensor, *, decimals: int | None = None) -> Tensor:
    """In-place :func:`round` (``torch.round_``, ``x.round_()``).

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([0.4, 1.6])
        >>> gradviz.round_(x) is x, x
        (True, tensor([0., 2.]))
    """
    if decimals is None:
        return dispatch_inplace(_O["round"], input)
    return dispatch_inplace(_O["round_decimals"], input, decimals=int(decimals))


def _alias(row: str, name: str) -> Any:
    def fn(input: Tensor) -> Tensor:
        return dispatch(_O[row], input)

    call, shown = _O[row].example.splitlines()
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Alias of :func:`gradviz.{row}` (records ``{_O[row].node}``, as PyTorch's "
                  f"``torch.{name}`` does).\n\n    Example:\n        >>> import gradviz\n"
                  f"        >>> {call.replace(f'gradviz.{row}(', f'gradviz.{name}(', 1)}\n"
                  f"        {shown}\n    ")
    return fn


fix = _alias("trunc", "fix")
arcsin, arccos = _alias("asin", "arcsin"), _alias("acos", "arccos")
arctan, arcsinh = _alias("atan", "arctan"), _alias("asinh", "arcsinh")
arccosh, arctanh = _alias("acosh", "arccosh"), _alias("atanh", "arctanh")


def _failing_inplace(name: str) -> Any:
    def fn(input: Tensor) -> Tensor:
        return dispatch_inplace(_O[name + "_"], input)

    fn.__name__ = fn.__qualname__ = name + "_"
    fn.__doc__ = (f"In-place :func:`gradviz.{name}`. PyTorch records it as "
                  f"``{_O[name + '_'].node}``, which has no derivative: a backward through it "
                  "fails.\n\n    Example:\n        >>> import gradviz\n"
                  "        >>> x = gradviz.tensor([0.5])\n"
                  f"        >>> gradviz.{name}_(x) is x\n        True\n    ")
    return fn


asinh_, acosh_, atanh_ = (_failing_inplace(n) for n in ("asinh", "acosh", "atanh"))


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``log(p / (1 - p))`` (``LogitBackward0``). With ``eps``, ``p`` is first clamped to
    ``[eps, 1 - eps]`` and the gradient is 0 where it was clamped; without, values outside
    ``[0, 1]`` give NaN.

    Example:
        >>> import gradviz
        >>> gradviz.logit(gradviz.tensor([0.5, 0.0]), eps=0.25)
        tensor([ 0.0000, -1.0986])
    """
    return dispatch(_O["logit"], input, eps=None if eps is None else float(eps))


def logit_(input: Tensor, eps: float | None = None) -> Tensor:
    """In-place :func:`logit` (``torch.logit_``, ``x.logit_()``).

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([0.5])
        >>> gradviz.logit_(x) is x, x
        (True, tensor([0.]))
    """
    return dispatch_inplace(_O["logit"], input, eps=None if eps is None else float(eps))


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """Replace NaN with ``nan``, +inf with ``posinf`` and -inf with ``neginf`` (by default the
    dtype's largest and smallest finite values) (``NanToNumBackward0``: the gradient is 0
    where the input was not finite).

    Example:
        >>> import gradviz
        >>> gradviz.nan_to_num(gradviz.tensor([float("nan"), float("inf"), 1.0]), posinf=9.0)
        tensor([0., 9., 1.])
    """
    return dispatch(_O["nan_to_num"], input, nan=nan, posinf=posinf, neginf=neginf)


def nan_to_num_(input: Tensor, nan: float = 0.0, posinf: float | None = None,
                neginf: float | None = None) -> Tensor:
    """In-place :func:`nan_to_num` (``torch.nan_to_num_``, ``x.nan_to_num_()``).

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([float("nan"), 1.0])
        >>> gradviz.nan_to_num_(x) is x, x
        (True, tensor([0., 1.]))
    """
    return dispatch_inplace(_O["nan_to_num"], input, nan=nan, posinf=posinf, neginf=neginf)


def atan2(input: Tensor, other: Tensor) -> Tensor:
    """The angle of the point ``(other, input)`` in ``(-pi, pi]``, with broadcasting
    (``Atan2Backward0``); integer tensors give the default float type.

    Example:
        >>> import gradviz
        >>> gradviz.atan2(gradviz.tensor([1.0, -1.0]), gradviz.tensor([-1.0, -1.0]))
        tensor([ 2.3562, -2.3562])
    """
    _tensors_only("atan2", input=input, other=other)
    return dispatch(_O["atan2"], input, other)


arctan2 = atan2


def atan2_(input: Tensor, other: Tensor) -> Tensor:
    """In-place :func:`atan2`."""
    _tensors_only("atan2_", other=other)
    return dispatch_inplace(_O["atan2"], input, other)


def hypot(input: Tensor, other: Tensor) -> Tensor:
    """``sqrt(input ** 2 + other ** 2)`` with broadcasting (``HypotBackward0``); floating point
    tensors only, as in PyTorch.

    Example:
        >>> import gradviz
        >>> gradviz.hypot(gradviz.tensor([3.0]), gradviz.tensor([4.0]))
        tensor([5.])
    """
    _tensors_only("hypot", input=input, other=other)
    return dispatch(_O["hypot"], input, other)


def hypot_(input: Tensor, other: Tensor) -> Tensor:
    """In-place :func:`hypot`."""
    _tensors_only("hypot_", other=other)
    return dispatch_inplace(_O["hypot"], input, other)


_FMOD_SIGNATURES = ("Tensor input, Tensor other", "Tensor input, Number other")


def fmod(input: Tensor, other: Any) -> Tensor:
    """C's ``fmod``: ``input - trunc(input / other) * other``, with the sign of ``input``
    (``FmodBackward0`` for a number ``other``, ``FmodBackward1`` for a tensor). Compare
    :func:`remainder`, which takes the sign of ``other``.

    Example:
        >>> import gradviz
        >>> gradviz.fmod(gradviz.tensor([-3.0, 3.0]), 2)
        tensor([-1.,  1.])
    """
    if not isinstance(input, Tensor) or not (isinstance(other, Tensor) or _is_number(other)):
        raise _overloads("fmod", (input, other), _FMOD_SIGNATURES)
    if isinstance(other, Tensor):
        return dispatch(_O["fmod"], input, other)
    return dispatch(_O["fmod_scalar"], input, other=other)


def fmod_(input: Tensor, other: Any) -> Tensor:
    """In-place :func:`fmod`."""
    if not (isinstance(other, Tensor) or _is_number(other)):
        raise _overloads("fmod_", (other,), ("Tensor other", "Number other"))
    if isinstance(other, Tensor):
        return dispatch_inplace(_O["fmod"], input, other)
    return dispatch_inplace(_O["fmod_scalar"], input, other=other)


def fmax(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise maximum that ignores NaN: NaN only where both are (``FmaxBackward0``; a tie
    gives ``input`` the whole gradient, unlike :func:`maximum`).

    Example:
        >>> import gradviz
        >>> gradviz.fmax(gradviz.tensor([float("nan"), 1.0]), gradviz.tensor([2.0, 3.0]))
        tensor([2., 3.])
    """
    _tensors_only("fmax", input=input, other=other)
    return dispatch(_O["fmax"], input, other)


def fmin(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise minimum that ignores NaN: NaN only where both are (``FminBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.fmin(gradviz.tensor([float("nan"), 1.0]), gradviz.tensor([2.0, 3.0]))
        tensor([2., 1.])
    """
    _tensors_only("fmin", input=input, other=other)
    return dispatch(_O["fmin"], input, other)


_XLOGY_SIGNATURES = ("Tensor input, Tensor other", "Number self, Tensor other",
                     "Tensor input, Number other")


def xlogy(input: Any, other: Any) -> Tensor:
    """``input * log(other)``, and 0 where ``input`` is 0 (unless ``other`` is NaN):
    ``XlogyBackward0`` for two tensors, ``XlogyBackward1`` for a number ``input``,
    ``XlogyBackward2`` for a number ``other``.

    Example:
        >>> import gradviz
        >>> gradviz.xlogy(gradviz.tensor([0.0, 2.0]), gradviz.tensor([0.0, 1.0]))
        tensor([0., 0.])
    """
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        return dispatch(_O["xlogy"], input, other)
    if isinstance(input, Tensor) and _is_number(other):
        return dispatch(_O["xlogy_scalar_other"], input, other=other)
    if _is_number(input) and isinstance(other, Tensor):
        return dispatch(_O["xlogy_scalar_self"], other, self=input)
    raise _overloads("xlogy", (input, other), _XLOGY_SIGNATURES)


def xlogy_(input: Tensor, other: Any) -> Tensor:
    """In-place :func:`xlogy` (``torch.xlogy_``, ``x.xlogy_(other)``).

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([0.0, 2.0])
        >>> gradviz.xlogy_(x, 1.0) is x, x
        (True, tensor([0., 0.]))
    """
    if isinstance(other, Tensor):
        return dispatch_inplace(_O["xlogy"], input, other)
    if _is_number(other):
        return dispatch_inplace(_O["xlogy_scalar_other"], input, other=other)
    raise _overloads("xlogy_", (other,), ("Tensor other", "Number other"))


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """The step function: 0 where ``input < 0``, ``values`` where it is 0, 1 above; both
    tensors of one dtype. Not differentiable: with an input that requires grad it records
    PyTorch's ``NotImplemented`` node, whose backward fails.

    Example:
        >>> import gradviz
        >>> gradviz.heaviside(gradviz.tensor([-2.0, 0.0, 3.0]), gradviz.tensor([0.5]))
        tensor([0.0000, 0.5000, 1.0000])
    """
    _tensors_only("heaviside", input=input, values=values)
    _heaviside_checks(input, values)
    return dispatch(_O["heaviside"], input, values)


def heaviside_(input: Tensor, values: Tensor) -> Tensor:
    """In-place :func:`heaviside`."""
    _tensors_only("heaviside_", values=values)
    _heaviside_checks(input, values)
    return dispatch_inplace(_O["heaviside_"], input, values)


def _heaviside_checks(input: Tensor, values: Tensor) -> None:
    # Before dispatch: it casts a 0-dim `values` to the input's dtype, which PyTorch refuses.
    from gradviz.ops._kernels import heaviside_checks

    heaviside_checks(input._data, values._data)


_LERP_SIGNATURES = ("Tensor input, Tensor end, Tensor weight",
                    "Tensor input, Tensor end, Number weight")


def _lerp_row(fn: str, input: Any, end: Any, weight: Any) -> tuple[Any, dict]:
    if not (isinstance(input, Tensor) and isinstance(end, Tensor)
            and (isinstance(weight, Tensor) or _is_number(weight))):
        raise _overloads(fn, (input, end, weight), _LERP_SIGNATURES)
    # Before dispatch, which casts 0-dim operands: PyTorch refuses a 0-dim `end` of another
    # dtype (it takes a 0-dim `weight` of any floating dtype).
    from gradviz.ops._kernels import lerp_checks

    if isinstance(weight, Tensor):
        checked = {"end": end._data} | ({"weight": weight._data} if weight.ndim else {})
        lerp_checks("lerp_kernel_tensor", input._data, **checked)
        return _O["lerp_tensor"], {}
    lerp_checks("lerp_kernel_scalar", input._data, end=end._data)
    return _O["lerp"], {"weight": weight}


def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """``input + weight * (end - input)``, with broadcasting: ``LerpBackward0`` for a number
    ``weight``, ``LerpBackward1`` for a tensor one. ``input``, ``end`` (and a tensor
    ``weight``) must share one floating dtype, as in PyTorch.

    Example:
        >>> import gradviz
        >>> gradviz.lerp(gradviz.tensor([0.0, 10.0]), gradviz.tensor([10.0, 20.0]), 0.25)
        tensor([ 2.5000, 12.5000])
    """
    row, kwargs = _lerp_row("lerp", input, end, weight)
    if kwargs:
        return dispatch(row, input, end, **kwargs)
    return dispatch(row, input, end, weight)


def lerp_(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """In-place :func:`lerp`."""
    row, kwargs = _lerp_row("lerp_", input, end, weight)
    if kwargs:
        return dispatch_inplace(row, input, end, **kwargs)
    return dispatch_inplace(row, input, end, weight)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 * tensor2``, with broadcasting (``AddcmulBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.addcmul(gradviz.ones(2), gradviz.tensor([1.0, 2.0]),
        ...                 gradviz.tensor([3.0, 4.0]), value=0.5)
        tensor([2.5000, 5.0000])
    """
    _tensors_only("addcmul", input=input, tensor1=tensor1, tensor2=tensor2)
    return dispatch(_O["addcmul"], input, tensor1, tensor2, value=value)


def addcmul_(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """In-place :func:`addcmul` (what Adam-style optimizers call on their moment buffers)."""
    _tensors_only("addcmul_", tensor1=tensor1, tensor2=tensor2)
    return dispatch_inplace(_O["addcmul"], input, tensor1, tensor2, value=value)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 / tensor2``, with broadcasting (``AddcdivBackward0``);
    integer ``tensor1`` and ``tensor2`` are refused, as PyTorch refuses them.

    Example:
        >>> import gradviz
        >>> gradviz.addcdiv(gradviz.ones(2), gradviz.tensor([1.0, 2.0]),
        ...                 gradviz.tensor([4.0, 4.0]), value=2)
        tensor([1.5000, 2.0000])
    """
    _tensors_only("addcdiv", input=input, tensor1=tensor1, tensor2=tensor2)
    return dispatch(_O["addcdiv"], input, tensor1, tensor2, value=value)


def addcdiv_(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """In-place :func:`addcdiv`."""
    _tensors_only("addcdiv_", tensor1=tensor1, tensor2=tensor2)
    return dispatch_inplace(_O["addcdiv"], input, tensor1, tensor2, value=value)


# The Tensor methods of the tensor-only functions above (gradviz/ops/methods.py installs them).
TENSOR_ONLY_METHODS = {
    name: _method_form(fn, name, params) for name, fn, params in (
        ("atan2", atan2, ("other",)), ("atan2_", atan2_, ("other",)),
        ("arctan2", atan2, ("other",)), ("hypot", hypot, ("other",)),
        ("hypot_", hypot_, ("other",)), ("fmax", fmax, ("other",)), ("fmin", fmin, ("other",)),
        ("heaviside", heaviside, ("values",)), ("heaviside_", heaviside_, ("values",)),
        ("addcmul", addcmul, ("tensor1", "tensor2")),
        ("addcmul_", addcmul_, ("tensor1", "tensor2")),
        ("addcdiv", addcdiv, ("tensor1", "tensor2")),
        ("addcdiv_", addcdiv_, ("tensor1", "tensor2")))}


# -- reductions ----------------------------------------------------------------------------------
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
        return (maximum if name == "max" else minimum)(input, dim)
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


def isnan(input: Tensor) -> Tensor:
    """Elementwise: is the value NaN?

    Example:
        >>> import gradviz
        >>> gradviz.isnan(gradviz.tensor([1.0, float("nan")]))
        tensor([False,  True])
    """
    return dispatch(_O["isnan"], input)


def isinf(input: Tensor) -> Tensor:
    """Elementwise: is the value +inf or -inf?

    Example:
        >>> import gradviz
        >>> gradviz.isinf(gradviz.tensor([1.0, float("-inf")]))
        tensor([False,  True])
    """
    return dispatch(_O["isinf"], input)


def isfinite(input: Tensor) -> Tensor:
    """Elementwise: is the value neither infinite nor NaN?

    Example:
        >>> import gradviz
        >>> gradviz.isfinite(gradviz.tensor([1.0, float("nan")]))
        tensor([ True, False])
    """
    return dispatch(_O["isfinite"], input)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether ``|input - other| <= atol + rtol * |other|`` everywhere (a Python bool).

    Example:
        >>> import gradviz
        >>> gradviz.allclose(gradviz.tensor([1.0]), gradviz.tensor([1.0 + 1e-9]))
        True
    """
    b = _tensor_arg(other)._data if isinstance(other, Tensor) else other
    if input.is_meta or (isinstance(other, Tensor) and other.is_meta):
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")
    try:
        np.broadcast_shapes(input._data.shape, np.shape(b))
    except ValueError:
        raise RuntimeError(broadcast_message("allclose", [input._data.shape, np.shape(b)])
                           ) from None
    return bool(np.allclose(input._data, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def equal(input: Tensor, other: Tensor) -> bool:
    """Whether both tensors have the same shape and the same elements (a Python bool).

    Example:
        >>> import gradviz
        >>> gradviz.equal(gradviz.tensor([1, 2]), gradviz.tensor([1, 2]))
        True
    """
    if input.is_meta or other.is_meta:
        raise NotImplementedError(no_meta_kernel("aten::equal"))
    return input.shape == other.shape and bool(np.array_equal(input._data, other._data))


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


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(input)))`` over ``dim``, computed without overflow
    (``LogsumexpBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.logsumexp(gradviz.tensor([0.0, 0.0]), 0)
        tensor(0.6931)
    """
    dims = tuple(range(input.ndim)) if dim == () else _dims(dim, input.ndim)
    return dispatch(_O["logsumexp"], input, dim=dims, keepdim=bool(keepdim))


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


# -- shapes --------------------------------------------------------------------------------------
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


def cumsum(input: Tensor, dim: int, *, dtype: _dtype.dtype | None = None) -> Tensor:
    """Cumulative sum along ``dim`` (``CumsumBackward0``, whose formula is
    ``grad.flip(dim).cumsum(dim).flip(dim)``). Integer and bool inputs sum in int64.

    Example:
        >>> import gradviz
        >>> gradviz.cumsum(gradviz.tensor([1.0, 2.0, 3.0]), 0)
        tensor([1., 3., 6.])
    """
    d = _wrap_dim(dim, input.ndim)
    if dtype is not None:
        input = input.to(dtype)
    return dispatch(_O["cumsum"], input, dim=d)


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
    return clone(input)


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


# -- linear algebra --------------------------------------------------------------------------------
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product of two 3-D tensors ``(b, n, m) @ (b, m, p)`` (``BmmBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.bmm(gradviz.ones(2, 3, 4), gradviz.ones(2, 4, 5)).shape
        gradviz.Size([2, 3, 5])
    """
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    b, _, m = input.shape
    if mat2.shape[:2] != (b, m):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {m}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    _same_dtype("bmm", input, mat2)
    return dispatch(_O["bmm"], input, mat2)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product of two vectors, recorded as PyTorch decomposes it:
    ``input.reshape(-1, 1) * vec2`` (``MulBackward0`` over ``ViewBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.outer(gradviz.tensor([1.0, 2.0]), gradviz.tensor([1.0, 10.0]))
        tensor([[ 1., 10.],
                [ 2., 20.]])
    """
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return mul(reshape(input, -1, 1), vec2)


ger = outer


# -- indexing --------------------------------------------------------------------------------------
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


def _select_backward(grad: Tensor, input_sizes: tuple, dim: int, index: int) -> Tensor:
    return dispatch(_O["select_backward"], grad, input_sizes=tuple(input_sizes), dim=dim,
                    index=index)


def _slice_backward(grad: Tensor, input_sizes: tuple, dim: int, start: int, end: int,
                    step: int) -> Tensor:
    return dispatch(_O["slice_backward"], grad, input_sizes=tuple(input_sizes), dim=dim,
                    start=start, end=end, step=step)


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


# -- in place --------------------------------------------------------------------------------------
def clamp_(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """In-place :func:`clamp` (``clip_`` is the same function).

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([-2.0, 0.5, 3.0])
        >>> gradviz.clamp_(x, -1, 1); x
        tensor([-1.0000,  0.5000,  1.0000])
        tensor([-1.0000,  0.5000,  1.0000])
    """
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return dispatch_inplace(_O["clamp_tensor"], input, _bound(min, input),
                                _bound(max, input))
    return dispatch_inplace(_O["clamp"], input, min=min, max=max)


clip_ = clamp_

# torch's module-level in-place functions (``torch.sin_(x)`` is ``x.sin_()``), for the in-place
# methods gradviz has; ``clamp_``, ``clip_``, ``index_put_``, ``dropout_``, ``fill_``, ``zero_``,
# ``round_``, ``logit_``, ``nan_to_num_``, ``xlogy_``, ``asinh_``, ``acosh_`` and ``atanh_`` are
# written out where their families are.
_MODULE_INPLACE = (
    "acos_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_",
    "asin_", "atan_", "ceil_", "cos_", "cosh_", "detach_", "erf_", "erfc_",
    "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "log10_", "log1p_", "log2_", "log_",
    "neg_", "reciprocal_", "relu_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_",
    "tan_", "tanh_", "trunc_",
)


def _module_inplace(name: str) -> Any:
    """``gradviz.<name>(input, ...)``: the Tensor method ``input.<name>(...)``, which writes into
    ``input`` and returns it (read at each call: the methods are installed after this module)."""
    def fn(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        _tensors_only(name, input=input)
        return getattr(Tensor, name)(input, *args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"In place ``input.{name}()``, as ``torch.{name}``: writes into ``input`` and "
                  f"returns it.\n\n    Example:\n        >>> import gradviz\n"
                  f"        >>> x = gradviz.tensor([0.25, 0.5])\n"
                  f"        >>> gradviz.{name}(x) is x\n        True\n    ")
    return fn


globals().update({_name: _module_inplace(_name) for _name in _MODULE_INPLACE})
__all__ += ["fill_", "zero_", "resize_as_", "round_", "logit_", "nan_to_num_", "xlogy_", "asinh_",
            "acosh_", "atanh_", *_MODULE_INPLACE]


def masked_fill_(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """In-place :func:`masked_fill`."""
    mask, value = _mask_value(input, mask, value)
    if isinstance(value, Tensor):
        return dispatch_inplace(_O["masked_fill_tensor"], input, value, mask=mask)
    return dispatch_inplace(_O["masked_fill"], input, mask=mask, value=value)


def scatter_(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None
             ) -> Tensor:
    """In-place :func:`scatter`."""
    _index_tensor("scatter_", index)
    if src is None:
        src = value
    d = _wrap_dim(dim, input.ndim)
    _check_gather("scatter_", input, d, index, src)
    if isinstance(src, Tensor):
        return dispatch_inplace(_O["scatter"], input, src, dim=d, index=index)
    return dispatch_inplace(_O["scatter_value"], input, dim=d, index=index, value=src)


def scatter_add_(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """In-place :func:`scatter_add`."""
    _index_tensor("scatter_add_", index)
    d = _wrap_dim(dim, input.ndim)
    _check_gather("scatter_add_", input, d, index, src)
    return dispatch_inplace(_O["scatter_add"], input, src, dim=d, index=index)


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


__all__ += ["unbind"]


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1, alpha: float = 1
          ) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``, ``input`` broadcast to the product's shape
    (``AddmmBackward0``: what ``F.linear`` records for a 2-D input with a bias).

    Example:
        >>> import gradviz
        >>> gradviz.addmm(gradviz.ones(3), gradviz.ones(2, 4), gradviz.ones(4, 3))
        tensor([[5., 5., 5.],
                [5., 5., 5.]])
    """
    shape1, shape2, shape = mat1._data.shape, mat2._data.shape, input._data.shape
    if len(shape1) != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.ndim}-D tensor")
    if len(shape2) != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {mat2.ndim}-D tensor")
    (n, k), (k2, m) = shape1, shape2
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    if shape == (m,) and mat1._data.dtype == mat2._data.dtype:  # F.linear's bias: nothing to check
        return dispatch(_O["addmm"], input, mat1, mat2, beta=beta, alpha=alpha)
    # `input` must broadcast to (n, m) (a bias (m,) is the common case): compared by hand,
    # the last dimension first, numbered in the target's dimensions as torch's expand does.
    if input.ndim > 2:
        raise RuntimeError(f"expand({input.type()}{{{list(input.shape)}}}, size=[{n}, {m}]): the "
                           "number of sizes provided (2) must be greater or equal to the number "
                           f"of dimensions in the tensor ({input.ndim})")
    for j, (size, want) in enumerate(zip(input._data.shape[::-1], (m, n))):
        if size not in (1, want):
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({size})"
                f" at non-singleton dimension {1 - j}.  Target sizes: [{n}, {m}].  Tensor sizes: "
                f"{list(input.shape)} (addmm: the input does not broadcast to the product's "
                "shape)")
    _same_dtype("addmm", mat1, mat2)
    return dispatch(_O["addmm"], input, mat1, mat2, beta=beta, alpha=alpha)


def addmm_(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1, alpha: float = 1
           ) -> Tensor:
    """In-place :func:`addmm` (``Tensor.addmm_``): ``input`` must have the product's shape.

    Example:
        >>> import gradviz
        >>> gradviz.zeros(2, 2).addmm_(gradviz.ones(2, 3), gradviz.ones(3, 2))
        tensor([[3., 3.],
                [3., 3.]])
    """
    for label, mat in (("mat1", mat1), ("mat2", mat2)):
        if mat.ndim != 2:
            raise RuntimeError(f"{label} must be a matrix, got {mat.ndim}-D tensor")
    (n, k), (k2, m) = mat1._data.shape, mat2._data.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    if tuple(input.shape) != (n, m):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(input.shape)} and "
                           f"output tensor size {[n, m]} should match")
    for label, mat in (("mat1", mat1), ("mat2", mat2)):
        if mat._data.dtype != input._data.dtype:
            raise RuntimeError(f"self and {label} must have the same dtype, but got "
                               f"{input.dtype._legacy[:-6]} and {mat.dtype._legacy[:-6]}")
    return dispatch_inplace(_O["addmm"], input, mat1, mat2, beta=beta, alpha=alpha)


__all__ += ["addmm"]


# -- convolution, pooling, batch normalization ---------------------------------------------------
__all__ += ["convolution", "conv1d", "conv2d", "conv_transpose2d", "max_pool1d", "max_pool2d",
            "batch_norm", "constant_pad_nd"]

_TYPE_NAMES = {"float64": "double", "float32": "float", "float16": "c10::Half"}


def _ints(name: str, v: Any, nd: int, what: str = "convolution") -> tuple:
    """An int, or a sequence of one or ``nd`` ints, as ``nd`` ints (PyTorch's expand_param)."""
    t = (int(v),) if _is_number(v) else tuple(int(x) for x in v)
    if len(t) == 1:
        return t * nd
    if len(t) != nd:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} "
                           f"values to match the {what} dimensions, but got {name}={list(t)}")
    return t


def _conv_dtype(input: Tensor, other: Tensor | None, name: str) -> None:
    if other is not None and other._data.dtype != input._data.dtype:
        a, b = (_TYPE_NAMES.get(str(t._data.dtype), str(t._data.dtype)) for t in (input, other))
        raise RuntimeError(f"Input type ({a}) and {name} type ({b}) should be the same")


def _conv_checks(input: Tensor, weight: Tensor, bias: Tensor | None, padding: tuple,
                 dilation: tuple, groups: int, transposed: bool) -> None:
    """PyTorch's shape checks of ``convolution`` (its texts), on a batched input."""
    w = list(weight.shape)
    if weight.shape[0] % groups and not transposed:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size {w} instead")
    want = weight.shape[0] if transposed else weight.shape[1] * groups
    if input.shape[1] != want:
        head = "transposed=1, " if transposed else ""
        raise RuntimeError(f"Given {head}groups={groups}, weight of size {w}, expected "
                           f"input{list(input.shape)} to have {want} channels, but got "
                           f"{input.shape[1]} channels instead")
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias is not None and tuple(bias.shape) != (out_channels,):
        raise RuntimeError(f"Given weight of size {w}, expected bias to be 1-dimensional with "
                           f"{out_channels} elements, but got bias of size {list(bias.shape)} "
                           "instead")
    _conv_dtype(input, weight, "weight")
    _conv_dtype(input, bias, "bias")
    if not transposed:
        padded = [n + 2 * p for n, p in zip(input.shape[2:], padding)]
        kernel = [d * (k - 1) + 1 for k, d in zip(weight.shape[2:], dilation)]
        if builtins.any(k > n for k, n in zip(kernel, padded)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                f"Kernel size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater "
                "than actual input size")


def _conv_param_checks(full: dict[str, tuple], groups: int) -> None:
    """PyTorch's first checks of a convolution's parameters (before any shape check)."""
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if builtins.any(p < 0 for p in full["padding"]):
        raise RuntimeError("negative padding is not supported")
    if builtins.any(p < 0 for p in full["output_padding"]):
        raise RuntimeError("negative output_padding is not supported")
    if builtins.any(s <= 0 for s in full["stride"]):
        raise RuntimeError("non-positive stride is not supported")
    if builtins.any(d < 0 for d in full["dilation"]):
        raise RuntimeError("dilation should be greater than zero")


def _conv_zero_dilation(input: Tensor, weight: Tensor, dilation: tuple, groups: int,
                        transposed: bool) -> None:
    """A dilation of 0, which PyTorch refuses only in the kernel it picks, after the shape checks
    (an empty batch runs no kernel and is accepted).

    NOTE [conv dilation 0]: the text is the kernel's. For float32 PyTorch's CPU build takes
    oneDNN when ``groups > 1``, the batch has more than one sample, both kernel sides exceed 3
    or the input's first four sizes multiply to more than 20480 (its ``use_mkldnn``), and says
    "non-positive dilation is not supported"; otherwise (float64 always) its own kernels say
    "dilation should be greater than zero, but got ..." with the dilation as they see it: a
    1-D convolution is a 2-D one of height 1, a transposed one names height and width. (For a
    float32 transposed convolution oneDNN fails with an internal message; gradviz gives the
    other kernels' text there.)"""
    if builtins.all(d != 0 for d in dilation) or input.shape[0] == 0:
        return
    dims = list(dilation) if len(dilation) != 1 else [1, dilation[0]]
    if transposed:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{dims[0]}, dilation_width: {dims[1]}")
    sizes = list(input.shape[:4]) + [1] * (4 - input.ndim)
    kernel = list(weight.shape[2:]) if weight.ndim > 3 else [1, weight.shape[-1]]
    onednn = input._data.dtype == np.float32 and (
        groups > 1 or sizes[0] > 1 or (kernel[-1] > 3 and kernel[-2] > 3)
        or int(np.prod(sizes)) > 20480)
    if onednn:
        raise RuntimeError("non-positive dilation is not supported")
    raise RuntimeError(f"dilation should be greater than zero, but got {dims}")


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Sequence[int],
                padding: Sequence[int], dilation: Sequence[int], transposed: bool,
                output_padding: Sequence[int], groups: int) -> Tensor:
    """The convolution every ``conv*`` calls (``ConvolutionBackward0``), on a batched input.

    Example:
        >>> import gradviz
        >>> y = gradviz.convolution(gradviz.ones(1, 1, 3, 3), gradviz.ones(1, 1, 2, 2), None,
        ...                         (1, 1), (0, 0), (1, 1), False, (0, 0), 1)
        >>> y
        tensor([[[[4., 4.],
                  [4., 4.]]]])
    """
    nd = input.ndim - 2
    # Checked against the dimensions but saved as given: PyTorch saves 'valid' as (0,).
    full = {n: _ints(n, v, nd) for n, v in (("stride", stride), ("padding", padding),
                                            ("dilation", dilation),
                                            ("output_padding", output_padding))}
    stride, padding, dilation = (tuple(int(x) for x in ((v,) if _is_number(v) else v))
                                 for v in (stride, padding, dilation))
    _conv_param_checks(full, groups)
    _conv_checks(input, weight, bias, full["padding"], full["dilation"], groups, transposed)
    _conv_zero_dilation(input, weight, full["dilation"], groups, transposed)
    return dispatch(_O["convolution"], input, weight, bias, stride=stride, padding=padding,
                    dilation=dilation, transposed=bool(transposed),
                    output_padding=tuple(output_padding), groups=int(groups))


def _conv_nd(name: str, nd: int, input: Tensor, weight: Tensor, bias: Tensor | None,
             stride: Any, padding: Any, dilation: Any, groups: int) -> Tensor:
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    if weight.ndim != nd + 2:
        raise RuntimeError(f"weight should have at least three dimensions ({name} expects a "
                           f"weight of {nd + 2} dimensions (out_channels, in_channels / groups, "
                           f"*kernel), got size {list(weight.shape)})")
    unbatched = input.ndim == nd + 1
    if unbatched:  # PyTorch adds the batch dimension and removes it again
        input = input.unsqueeze(0)
    stride, dilation = _ints("stride", stride, nd), _ints("dilation", dilation, nd)
    output_padding: tuple = (0,) * nd
    if isinstance(padding, str):
        if padding == "valid":
            padding = output_padding = (0,)  # what PyTorch passes on (and saves)
        elif padding == "same":
            if builtins.any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            input, padding = _pad_same(input, weight, dilation)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _ints("padding", padding, nd)
    out = convolution(input, weight, bias, stride, padding, dilation, False, output_padding,
                      groups)
    return out.squeeze(0) if unbatched else out


def _pad_same(input: Tensor, weight: Tensor, dilation: tuple) -> tuple[Tensor, tuple]:
    """'same' padding: ``d * (k - 1)`` in total per dimension, half on each side; an odd total
    puts its extra element on the right, with a ``constant_pad_nd`` first (as PyTorch)."""
    import warnings

    total = [d * (k - 1) for k, d in zip(weight.shape[2:], dilation)]
    left = tuple(t // 2 for t in total)
    extra = [t - 2 * lo for t, lo in zip(total, left)]
    if builtins.any(extra):
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may "
                      "require a zero-padded copy of the input be created", UserWarning,
                      stacklevel=4)
        pad: list[int] = []
        for e in reversed(extra):  # F.pad's order: the last dimension first
            pad += [0, e]
        input = constant_pad_nd(input, pad)
    return input, left


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D cross-correlation of ``input`` (N, C, L) or (C, L) with ``weight``
    (out_channels, C / groups, k); ``padding`` may be an int, a tuple, ``'same'`` or
    ``'valid'``. Records ``ConvolutionBackward0``.

    Example:
        >>> import gradviz
        >>> gradviz.conv1d(gradviz.tensor([[[1.0, 2.0, 3.0]]]), gradviz.ones(1, 1, 2))
        tensor([[[3., 5.]]])
    """
    return _conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D cross-correlation of ``input`` (N, C, H, W) or (C, H, W) with ``weight``
    (out_channels, C / groups, kh, kw); ``padding`` may be an int, a tuple, ``'same'`` or
    ``'valid'``. Records ``ConvolutionBackward0`` (its gradients are convolutions too).

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(1, 1, 3, 3, requires_grad=True)
        >>> y = gradviz.conv2d(x, gradviz.ones(2, 1, 2, 2), stride=1)
        >>> y.shape, y.grad_fn.name(), y.grad_fn._saved_stride
        (gradviz.Size([1, 2, 2, 2]), 'ConvolutionBackward0', (1, 1))
    """
    return _conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """The transpose (adjoint) of :func:`conv2d`: ``weight`` is (in_channels,
    out_channels / groups, kh, kw); each output side is
    ``(n - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``.
    Records ``ConvolutionBackward0`` with ``_saved_transposed == True``.

    Example:
        >>> import gradviz
        >>> gradviz.conv_transpose2d(gradviz.ones(1, 1, 2, 2), gradviz.ones(1, 1, 2, 2))
        tensor([[[[1., 2., 1.],
                  [2., 4., 2.],
                  [1., 2., 1.]]]])
    """
    if input.ndim not in (3, 4):
        raise RuntimeError("Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, "
                           f"but got input of size: {list(input.shape)}")
    unbatched = input.ndim == 3
    if unbatched:
        input = input.unsqueeze(0)
    stride, padding = _ints("stride", stride, 2), _ints("padding", padding, 2)
    output_padding, dilation = (_ints("output_padding", output_padding, 2),
                                _ints("dilation", dilation, 2))
    if builtins.any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding_height: {output_padding[0]} output_padding_width: "
            f"{output_padding[1]} stride_height: {stride[0]} stride_width: {stride[1]} "
            f"dilation_height: {dilation[0]} dilation_width: {dilation[1]}")
    out = convolution(input, weight, bias, stride, padding, dilation, True, output_padding,
                      groups)
    return out.squeeze(0) if unbatched else out


def _pool_args(name: str, input: Tensor, kernel_size: Any, stride: Any, padding: Any,
               dilation: Any, ceil_mode: bool) -> tuple:
    """kernel, stride (``()`` when not given, as PyTorch saves it), padding and dilation as
    pairs, after PyTorch's checks of a 2-D pooling."""
    k = _ints("kernel_size", kernel_size, 2, "pooling")
    s = () if stride is None or (not _is_number(stride) and len(stride) == 0) else _ints(
        "stride", stride, 2, "pooling")
    p, d = _ints("padding", padding, 2, "pooling"), _ints("dilation", dilation, 2, "pooling")
    if input.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if 0 in input.shape[-3:]:  # only a batch (of a 4-D input) may be empty
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(input.shape)}")
    if builtins.any(v <= 0 for v in k + (s or k) + d):
        raise RuntimeError(f"{name}: kernel_size, stride and dilation must be greater than "
                           f"zero, got kernel_size={list(k)}, stride={list(s or k)}, "
                           f"dilation={list(d)}")
    for pp, kk, dd in zip(p, k, d):
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation={dd}")
    from gradviz.ops._kernels import pool_out_size

    h, w = input.shape[-2:]
    oh, ow = (pool_out_size(n, kk, ss, pp, dd, ceil_mode)
              for n, kk, ss, pp, dd in zip((h, w), k, s or k, p, d))
    if oh < 1 or ow < 1:
        c = input.shape[-3]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{oh}x{ow}). Output size is too small")
    return k, s, p, d


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """The maximum of each (dilated) window of the last two dimensions
    (``MaxPool2DWithIndicesBackward0``, which saves the indices as ``_saved_result1``); with
    ``return_indices`` also the flat position of each maximum in its H*W plane.

    Example:
        >>> import gradviz
        >>> x = gradviz.arange(16.0).view(1, 1, 4, 4)
        >>> gradviz.max_pool2d(x, 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    k, s, p, d = _pool_args("max_pool2d", input, kernel_size, stride, padding, dilation,
                            ceil_mode)
    out, indices = dispatch(_O["max_pool2d_with_indices"], input, kernel_size=k, stride=s,
                            padding=p, dilation=d, ceil_mode=bool(ceil_mode))
    return (out, indices) if return_indices else out


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """:func:`max_pool2d` over the last dimension, recorded as PyTorch records it:
    ``SqueezeBackward1 <- MaxPool2DWithIndicesBackward0 <- UnsqueezeBackward0``.

    Example:
        >>> import gradviz
        >>> gradviz.max_pool1d(gradviz.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
        tensor([[[3., 2.]]])
    """
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    k = (1, _ints("kernel_size", kernel_size, 1, "pooling")[0])
    s = () if stride is None or (not _is_number(stride) and len(stride) == 0) else (
        1, _ints("stride", stride, 1, "pooling")[0])
    p = (0, _ints("padding", padding, 1, "pooling")[0])
    d = (1, _ints("dilation", dilation, 1, "pooling")[0])
    out, indices = max_pool2d(input.unsqueeze(-2), k, s or k, p, d, ceil_mode, True)
    out, indices = out.squeeze(-2), indices.squeeze(-2)
    return (out, indices) if return_indices else out


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
               running_mean: Tensor | None, running_var: Tensor | None, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool = True) -> Tensor:
    """``torch.batch_norm``: normalize each channel (dimension 1) by its batch statistics in
    training (updating ``running_mean``/``running_var`` in place), by the running ones in
    evaluation; then scale and shift. Records ``NativeBatchNormBackward0``; an empty input is
    only copied, scaled by ``weight[0]`` and shifted by ``bias[0]``, as in torch.

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([[1.0], [3.0]])
        >>> gradviz.batch_norm(x, None, None, None, None, True, 0.1, 0.0, False)
        tensor([[-1.],
                [ 1.]])
    """
    if input.numel() == 0:
        # torch checks nothing and computes no statistics (the running ones stay as they
        # are): a copy, kept in the graph, times weight[0] plus bias[0]
        out = clone(input)
        if weight is not None:
            out = mul(out, select(weight, 0, 0))
        if bias is not None:
            out = add(out, select(bias, 0, 0))
        return out
    if input.ndim < 2:
        raise RuntimeError(f"batch_norm: expected an input of at least 2 dimensions (N, C, "
                           f"...), got size {list(input.shape)}")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t._data.size != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t._data.size}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean must be defined in evaluation mode")
    out, _, _ = dispatch(_O["native_batch_norm"], input, weight, bias,
                         running_mean=running_mean, running_var=running_var,
                         training=bool(training), momentum=float(momentum), eps=float(eps))
    return out


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:
    """Pad (or, with negative amounts, crop) the last ``len(pad) // 2`` dimensions with
    ``value``; ``pad`` is ``(left, right, top, bottom, ...)`` from the last dimension
    backwards (``ConstantPadNdBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.constant_pad_nd(gradviz.tensor([1.0, 2.0]), (1, 2))
        tensor([0., 1., 2., 0., 0.])
    """
    pad = tuple(int(v) for v in pad)
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions "
                           f"of the input. Pad length is {len(pad)} while the input has "
                           f"{input.ndim} dimensions.")
    for i in range(len(pad) // 2):
        dim = input.ndim - 1 - i
        new = input.shape[dim] + pad[2 * i] + pad[2 * i + 1]
        if new < 0:
            raise RuntimeError(f"The input size {input.shape[dim]}, plus negative padding "
                               f"{pad[2 * i]} and {pad[2 * i + 1]} resulted in a negative "
                               f"output size, which is invalid. Check dimension {dim} of your "
                               "input.")
    return dispatch(_O["constant_pad_nd"], input, pad=pad, value=value)


# -- more ops (opsselect): sorting, selection, triangles and diagonals, rolls and moves -----------
__all__ += [
    "topk", "sort", "argsort", "kthvalue", "median", "nanmedian", "cumprod", "cummax", "cummin",
    "tril", "triu", "diagonal", "diag", "diag_embed", "roll", "movedim", "moveaxis", "tile",
    "repeat_interleave", "masked_select", "take", "nonzero", "argwhere",
]


def _int_arg(fn: str, name: str, pos: int, value: Any) -> int:
    """An int argument, refused with PyTorch's text when it is not one (a float ``k`` ...)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be int, not "
                        f"{type(value).__name__}")
    return int(value)


def _named(kind: str, values: Tensor, indices: Tensor) -> Any:
    from gradviz import return_types

    return getattr(return_types, kind)(values, indices)


def _no_bool(kernel: str, input: Tensor) -> None:
    if input._data.dtype == np.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


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


def cumprod(input: Tensor, dim: int, *, dtype: _dtype.dtype | None = None) -> Tensor:
    """Cumulative product along ``dim`` (``CumprodBackward0``, exact also where factors are 0).
    Integer and bool inputs multiply in int64.

    Example:
        >>> import gradviz
        >>> gradviz.cumprod(gradviz.tensor([1.0, 2.0, 3.0]), 0)
        tensor([1., 2., 6.])
    """
    d = _wrap_dim(dim, input.ndim)
    if dtype is not None:
        input = input.to(dtype)
    return dispatch(_O["cumprod"], input, dim=d)


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


def _triangle(name: str, input: Tensor, diagonal: Any) -> int:
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return _int_arg(name, "diagonal", 2, diagonal)


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dimensions: elements on and below ``diagonal``, zeros
    above (``TrilBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.tril(gradviz.ones(3, 3))
        tensor([[1., 0., 0.],
                [1., 1., 0.],
                [1., 1., 1.]])
    """
    return dispatch(_O["tril"], input, diagonal=_triangle("tril", input, diagonal))


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dimensions: elements on and above ``diagonal``, zeros
    below (``TriuBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.triu(gradviz.ones(2, 3), 1)
        tensor([[0., 1., 1.],
                [0., 0., 1.]])
    """
    return dispatch(_O["triu"], input, diagonal=_triangle("triu", input, diagonal))


def tril_(input: Tensor, diagonal: int = 0) -> Tensor:
    """In-place :func:`tril` (``Tensor.tril_``; records ``TrilBackward0``)."""
    return dispatch_inplace(_O["tril"], input, diagonal=_triangle("tril", input, diagonal))


def triu_(input: Tensor, diagonal: int = 0) -> Tensor:
    """In-place :func:`triu` (``Tensor.triu_``; records ``TriuBackward0``)."""
    return dispatch_inplace(_O["triu"], input, diagonal=_triangle("triu", input, diagonal))


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
    wide = expand(unsqueeze(input, d + 1), shape[:d + 1] + (r,) + shape[d + 1:])
    return view(clone(wide), shape[:d] + (shape[d] * r,) + shape[d + 1:])


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


__all__ += ["cross", "diff", "kron", "tensordot"]


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product of the 3-vectors along ``dim`` (``LinalgCrossBackward0``; the two
    inputs broadcast). Without ``dim``, PyTorch's deprecated default: the first dimension of
    size 3, with its warning.

    Example:
        >>> import gradviz
        >>> gradviz.cross(gradviz.tensor([1.0, 0.0, 0.0]), gradviz.tensor([0.0, 1.0, 0.0]), dim=0)
        tensor([0., 0., 1.])
    """
    if dim is None:
        import warnings

        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                      "either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
                      "default value of dim will change to agree with that of linalg.cross in "
                      "a future release.", UserWarning, stacklevel=2)
        shape = np.broadcast_shapes(input.shape, other.shape) if input.ndim == other.ndim \
            else input.shape
        dim = next((i for i, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _wrap_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    return dispatch(_O["linalg_cross"], input, other, dim=d)


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


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: every element of ``input`` times the whole of ``other``, laid
    out block by block; decomposed as PyTorch does (``_unsafe_view`` of each input with its
    dimensions interleaved with 1s, a broadcasting :func:`mul`, ``_unsafe_view`` back).

    Example:
        >>> import gradviz
        >>> gradviz.kron(gradviz.tensor([1.0, 10.0]), gradviz.tensor([1.0, 2.0]))
        tensor([ 1.,  2., 10., 20.])
    """
    nd = builtins.max(input.ndim, other.ndim)
    a = (1,) * (nd - input.ndim) + tuple(input.shape)
    b = (1,) * (nd - other.ndim) + tuple(other.shape)
    wide_a = dispatch(_O["_unsafe_view"], input, size=tuple(x for s in a for x in (s, 1)))
    wide_b = dispatch(_O["_unsafe_view"], other, size=tuple(x for s in b for x in (1, s)))
    out = mul(wide_a, wide_b)
    return dispatch(_O["_unsafe_view"], out, size=tuple(x * y for x, y in zip(a, b, strict=True)))


def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """Sum the products over the dimensions ``dims`` of ``a`` and ``b`` (an int: the last
    ``dims`` of ``a`` with the first ``dims`` of ``b``; or two lists), decomposed as PyTorch
    does: each input permuted (contracted dimensions last in ``a``, first in ``b``) and
    reshaped to a matrix, one :func:`mm`, a reshape to the free dimensions.

    Example:
        >>> import gradviz
        >>> gradviz.tensordot(gradviz.ones(2, 3), gradviz.ones(3, 4), dims=1).shape
        gradviz.Size([2, 4])
    """
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(-int(dims), 0)), list(range(int(dims)))
    else:
        da, db = ([int(x) for x in _ints_or_int(v)] for v in dims)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    for x, y in zip(da, db, strict=True):
        sa, sb = a.shape[_wrap_dim(x, a.ndim)], b.shape[_wrap_dim(y, b.ndim)]
        # a contracted dim of size 1 broadcasts: the other side is summed over it first
        if sa == 1 and sb != 1:
            b = sum(b, _wrap_dim(y, b.ndim), keepdim=True)
        elif sb == 1 and sa != 1:
            a = sum(a, _wrap_dim(x, a.ndim), keepdim=True)
        elif sa != sb:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa} "
                               f"in dim {x} and second has size {sb} in dim {y}")
    ca = [_wrap_dim(x, a.ndim) for x in da]
    cb = [_wrap_dim(y, b.ndim) for y in db]
    free_a = [i for i in range(a.ndim) if i not in ca]
    free_b = [i for i in range(b.ndim) if i not in cb]
    size = int(np.prod([a.shape[i] for i in ca], dtype=np.int64))
    rows = int(np.prod([a.shape[i] for i in free_a], dtype=np.int64))
    cols = int(np.prod([b.shape[i] for i in free_b], dtype=np.int64))
    out_shape = tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b)
    # the permutations name the contracted dims as written (negative ones saved as given)
    pa, pb = permute(a, free_a + da), permute(b, db + free_b)
    if rows == 1 and cols == 1:  # one number: PyTorch takes a dot of the flattened operands,
        if pa.is_contiguous() and pb.is_contiguous():
            return view(dot(flatten(pa), flatten(pb)), out_shape)
        # or, where a permutation cannot be flattened as a view, sums their product
        return view(sum(mul(squeeze(pa), squeeze(pb))), out_shape)
    left = reshape(pa, (rows, size))
    right = reshape(pb, (size, cols))
    return reshape(mm(left, right), out_shape)


# -- more (nnmore): torch.conv_transpose1d, torch.pixel_shuffle, torch.pixel_unshuffle ---------
__all__ += ["conv_transpose1d", "conv3d", "pixel_shuffle", "pixel_unshuffle"]


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-D cross-correlation of ``input`` (N, C, D, H, W) or (C, D, H, W) with ``weight``
    (out_channels, C / groups, kd, kh, kw); ``padding`` may be an int, a tuple, ``'same'`` or
    ``'valid'``. Records ``ConvolutionBackward0``.

    Example:
        >>> import gradviz
        >>> gradviz.conv3d(gradviz.ones(1, 1, 2, 2, 2), gradviz.ones(1, 1, 2, 2, 2))
        tensor([[[[[8.]]]]])
    """
    return _conv_nd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """The transpose (adjoint) of :func:`conv1d`: ``weight`` is (in_channels,
    out_channels / groups, k); the output length is
    ``(n - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``. Records
    ``ConvolutionBackward0`` with ``_saved_transposed == True``, as PyTorch.

    Example:
        >>> import gradviz
        >>> gradviz.conv_transpose1d(gradviz.ones(1, 1, 2), gradviz.ones(1, 1, 2))
        tensor([[[1., 2., 1.]]])
    """
    if input.ndim not in (2, 3):
        raise RuntimeError("Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d, "
                           f"but got input of size: {list(input.shape)}")
    unbatched = input.ndim == 2
    if unbatched:
        input = input.unsqueeze(0)
    stride, padding = _ints("stride", stride, 1), _ints("padding", padding, 1)
    output_padding, dilation = (_ints("output_padding", output_padding, 1),
                                _ints("dilation", dilation, 1))
    if output_padding[0] >= stride[0] and output_padding[0] >= dilation[0]:
        # PyTorch checks a 1-D call as a 2-D one of height 1, and says so.
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding_height: 0 output_padding_width: {output_padding[0]} stride_height: "
            f"1 stride_width: {stride[0]} dilation_height: 1 dilation_width: {dilation[0]}")
    out = convolution(input, weight, bias, stride, padding, dilation, True, output_padding,
                      groups)
    return out.squeeze(0) if unbatched else out


def _shuffle_checks(name: str, input: Tensor, factor: int) -> None:
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    if factor <= 0:
        what = "upscale_factor" if name == "pixel_shuffle" else "downscale_factor"
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearrange (*, C * r * r, H, W) into (*, C, H * r, W * r) (``PixelShuffleBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.pixel_shuffle(gradviz.arange(4.0).view(1, 4, 1, 1), 2)
        tensor([[[[0., 1.],
                  [2., 3.]]]])
    """
    r = int(upscale_factor)
    _shuffle_checks("pixel_shuffle", input, r)
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    return dispatch(_O["pixel_shuffle"], input, upscale_factor=r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """Rearrange (*, C, H * r, W * r) into (*, C * r * r, H, W), the inverse of
    :func:`pixel_shuffle` (``PixelUnshuffleBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.pixel_unshuffle(gradviz.arange(4.0).view(1, 1, 2, 2), 2).flatten()
        tensor([0., 1., 2., 3.])
    """
    r = int(downscale_factor)
    _shuffle_checks("pixel_unshuffle", input, r)
    for what, dim in (("height", -2), ("width", -1)):
        if input.shape[dim] % r:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by "
                               f"downscale_factor, but input.size({dim})={input.shape[dim]} is "
                               f"not divisible by {r}")
    return dispatch(_O["pixel_unshuffle"], input, downscale_factor=r)


# -- more (opsmore): PyTorch's tensor functions gradviz lacked -----------------------------------
__all__ += [
    "polygamma", "copysign", "logaddexp", "logaddexp2", "signbit", "isclose", "isin",
    "float_power", "sgn",
]


def _float_only(kernel: str, *tensors: Tensor) -> None:
    """PyTorch's NotImplementedError for an integer or bool tensor where only floats are
    taken (``"logaddexp_cpu" not implemented for 'Long'``)."""
    from gradviz.ops._kernels import _not_for

    for t in tensors:
        if t._data.dtype.kind != "f":
            raise _not_for(kernel, t._data.dtype)


def polygamma(n: int, input: Tensor) -> Tensor:
    """The ``n``-th derivative of :func:`digamma` (``PolygammaBackward0``; ``n = 0`` is
    digamma itself, recorded as ``PolygammaBackward0`` too).

    Example:
        >>> import gradviz
        >>> gradviz.polygamma(1, gradviz.tensor([1.0]))
        tensor([1.6449])
    """
    n = _int_arg("polygamma", "n", 1, n)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return dispatch(_O["polygamma"], input, n=n)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    """``x.polygamma(n)``: :func:`polygamma` with the order first, as torch's method takes it."""
    return polygamma(n, self)


def _polygamma_(self: Tensor, n: int) -> Tensor:
    """In-place :func:`polygamma` (``x.polygamma_(n)``)."""
    n = _int_arg("polygamma_", "n", 1, n)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return dispatch_inplace(_O["polygamma_"], self, n=n)


def sgn(input: Tensor) -> Tensor:
    """The sign of each element, -1, 0 or 1 (``SgnBackward0``; torch's ``sign`` extended to
    complex numbers, which gradviz does not have). Its gradient is zero, as torch's is
    (torch hands back a ZeroTensor, gradviz plain zeros).

    Example:
        >>> import gradviz
        >>> gradviz.sgn(gradviz.tensor([-2.0, 0.0, 3.0]))
        tensor([-1.,  0.,  1.])
    """
    return dispatch(_O["sgn"], input)


def sgn_(input: Tensor) -> Tensor:
    """In-place :func:`sgn`."""
    return dispatch_inplace(_O["sgn"], input)


def copysign(input: Tensor, other: Any) -> Tensor:
    """``|input|`` with the sign of ``other`` (a tensor, ``CopysignBackward0``, or a number,
    ``CopysignBackward1``); integers give the default float type.

    Example:
        >>> import gradviz
        >>> gradviz.copysign(gradviz.tensor([1.0, -2.0]), -1)
        tensor([-1., -2.])
    """
    if isinstance(other, Tensor):
        return dispatch(_O["copysign"], input, other)
    return dispatch(_O["copysign_scalar"], input, other=other)


def copysign_(input: Tensor, other: Any) -> Tensor:
    """In-place :func:`copysign`."""
    if isinstance(other, Tensor):
        return dispatch_inplace(_O["copysign"], input, other)
    return dispatch_inplace(_O["copysign_scalar"], input, other=other)


def _logaddexp(name: str, input: Tensor, other: Tensor) -> Tensor:
    _tensors_only(name, input=input, other=other)
    _float_only(f"{name}_cpu", input, other)
    return dispatch(_O[name], input, other)


def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """``log(exp(input) + exp(other))``, computed without overflow (``LogaddexpBackward0``);
    floating point tensors only, as in PyTorch.

    Example:
        >>> import gradviz
        >>> gradviz.logaddexp(gradviz.tensor([0.0]), gradviz.tensor([0.0]))
        tensor([0.6931])
    """
    return _logaddexp("logaddexp", input, other)


def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    """``log2(2 ** input + 2 ** other)`` (``Logaddexp2Backward0``).

    Example:
        >>> import gradviz
        >>> gradviz.logaddexp2(gradviz.tensor([1.0]), gradviz.tensor([1.0]))
        tensor([2.])
    """
    return _logaddexp("logaddexp2", input, other)


def signbit(input: Tensor) -> Tensor:
    """Whether each element's sign bit is set: True for negatives and for -0.0 (bool, not
    differentiable).

    Example:
        >>> import gradviz
        >>> gradviz.signbit(gradviz.tensor([-0.0, 0.0, -1.0]))
        tensor([ True, False,  True])
    """
    return dispatch(_O["signbit"], input)


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (bool); both tensors of one
    dtype, as PyTorch asks.

    Example:
        >>> import gradviz
        >>> gradviz.isclose(gradviz.tensor([1.0, 2.0]), gradviz.tensor([1.0 + 1e-9, 2.1]))
        tensor([ True, False])
    """
    _tensors_only("isclose", input=input, other=other)
    if input.dtype != other.dtype:
        raise RuntimeError(f"{_dtype_word(input)} did not match {_dtype_word(other)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    return dispatch(_O["isclose"], input, other, rtol=float(rtol), atol=float(atol),
                    equal_nan=bool(equal_nan))


def isin(elements: Any, test_elements: Any, *,
         assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each of ``elements`` is one of ``test_elements`` (bool, ``elements``' shape);
    either may be a number. ``invert`` asks the opposite; ``assume_unique`` is a promise that
    only makes PyTorch faster, and changes nothing here.

    Example:
        >>> import gradviz
        >>> gradviz.isin(gradviz.tensor([1, 2, 3]), gradviz.tensor([2, 5]))
        tensor([False,  True, False])
    """
    first, second = isinstance(elements, Tensor), isinstance(test_elements, Tensor)
    if not (first or _is_number(elements)) or not (second or _is_number(test_elements)) or not (
            first or second):
        got = ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__
                        for a in (elements, test_elements))
        tail = "*, bool assume_unique = False, bool invert = False, Tensor out = None"
        raise TypeError(
            f"isin() received an invalid combination of arguments - got ({got}), but expected "
            f"one of:\n * (Tensor elements, Tensor test_elements, {tail})\n"
            f" * (Number element, Tensor test_elements, {tail})\n"
            f" * (Tensor elements, Number test_element, {tail})\n")
    elements, test_elements = (t if isinstance(t, Tensor) else Tensor._make(np.asarray(t))
                               for t in (elements, test_elements))
    if elements.dtype == _dtype.bool or test_elements.dtype == _dtype.bool:
        raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    return dispatch(_O["isin"], elements, test_elements, invert=bool(invert))


def _dtype_word(t: Tensor) -> str:
    """PyTorch's scalar type name of a tensor's dtype (``Float``, ``Long`` ...)."""
    from gradviz.ops._kernels import _SCALAR_TYPE

    return _SCALAR_TYPE.get(t._data.dtype.name, t._data.dtype.name)


def float_power(input: Any, exponent: Any) -> Tensor:
    """``input ** exponent`` in float64, whatever the operands' dtypes: PyTorch converts both to
    double first (``ToCopyBackward0`` for a float32 tensor that requires grad), then records
    ``pow`` (``PowBackward0``/``1``/``2``).

    Example:
        >>> import gradviz
        >>> gradviz.float_power(gradviz.tensor([2, 3]), 2)
        tensor([4., 9.], dtype=gradviz.float64)
    """
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise _overloads("float_power", (input, exponent), (
            "Tensor input, Tensor exponent", "Number self, Tensor exponent",
            "Tensor input, Number exponent"))
    if isinstance(input, Tensor) and input.dtype != _dtype.float64:
        input = input.to(_dtype.float64)
    if isinstance(exponent, Tensor) and exponent.dtype != _dtype.float64:
        exponent = exponent.to(_dtype.float64)
    if not isinstance(input, Tensor):
        input = builtins.float(input)
    if not isinstance(exponent, Tensor):
        exponent = builtins.float(exponent)
    return pow(input, exponent)


def float_power_(input: Tensor, exponent: Any) -> Tensor:
    """In-place :func:`float_power`: ``input`` must already be float64."""
    if input.dtype != _dtype.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {_dtype_word(input)} but "
                           "the operation's result requires dtype Double")
    if isinstance(exponent, Tensor) and exponent.dtype != _dtype.float64:
        exponent = exponent.to(_dtype.float64)
    if isinstance(exponent, Tensor):
        return dispatch_inplace(_O["pow_tensor"], input, exponent)
    return dispatch_inplace(_O["pow"], input, exponent=builtins.float(exponent))


# -- more (opsmore): stacking, splitting and reshaping -------------------------------------------
__all__ += [
    "atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "row_stack", "dstack",
    "column_stack", "tensor_split", "hsplit", "vsplit", "dsplit", "unflatten", "swapdims",
    "rot90", "block_diag", "cartesian_prod", "meshgrid", "msort", "detach",
]


def _atleast(input: Tensor, nd: int) -> Tensor:
    """PyTorch's ``atleast_<nd>d`` of one tensor: a 0-d tensor reshaped (``ViewBackward0``),
    a 1-D one unsqueezed in front (and for 3-D also behind), a 2-D one behind for 3-D."""
    if input.ndim >= nd:
        return input
    if input.ndim == 0:
        return reshape(input, *([1] * nd))
    if nd == 2 or input.ndim == 2:  # (n) -> (1, n); (m, n) -> (m, n, 1)
        out = unsqueeze(input, 0) if input.ndim == 1 else input
        return out if nd == 2 else unsqueeze(out, -1)
    return unsqueeze(unsqueeze(input, 0), -1)  # (n) -> (1, n, 1)


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


def msort(input: Tensor) -> Tensor:
    """``sort(input, dim=0).values`` (``SortBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.msort(gradviz.tensor([[3, 1], [2, 4]]))
        tensor([[2, 1],
                [3, 4]])
    """
    return sort(input, 0).values


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


# -- more (opsmore): reductions and statistics ---------------------------------------------------
__all__ += [
    "var_mean", "std_mean", "logcumsumexp", "nansum", "nanmean", "aminmax", "mode",
    "count_nonzero", "bincount", "histc",
]


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


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input), dim))`` computed without overflow (``LogcumsumexpBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.logcumsumexp(gradviz.tensor([0.0, 0.0]), 0)
        tensor([0.0000, 0.6931])
    """
    _float_only("logcumsumexp_out_cpu", input)
    return dispatch(_O["logcumsumexp"], input, dim=_wrap_dim(_int_arg(
        "logcumsumexp", "dim", 2, dim), input.ndim))


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
    count = sum(logical_not(isnan(input)), dim, keepdim=keepdim)
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


# -- more (opsmore): indexing ---------------------------------------------------------------------
__all__ += [
    "index_add", "index_copy", "index_fill", "scatter_reduce", "put", "searchsorted",
    "bucketize", "unique", "unique_consecutive",
]


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


# -- more (opsmore): factories --------------------------------------------------------------------
__all__ += ["logspace", "tril_indices", "triu_indices"]


def _factory_result(values: np.ndarray, dtype: _dtype.dtype | None, requires_grad: bool,
                    device: Any) -> Tensor:
    values = values.astype(dtype.np if dtype is not None else values.dtype)
    if device.type == "meta":  # the values computed are dropped (NOTE [meta device])
        values = meta_array(values.shape, values.dtype)
    out = Tensor._make(values)
    return out.requires_grad_() if requires_grad else out


def logspace(start: float, end: float, steps: int, base: float = 10.0, *,
             dtype: _dtype.dtype | None = None, requires_grad: bool = False,
             device: Any = None) -> Tensor:
    """``steps`` values ``base ** linspace(start, end, steps)``.

    Example:
        >>> import gradviz
        >>> gradviz.logspace(0, 2, 3)
        tensor([  1.,  10., 100.])
    """
    dev = check_device(device, "logspace")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    values = np.power(float(base), np.linspace(start, end, steps))
    target = dtype or _dtype.get_default_dtype()
    if target.np.kind in "iu":
        # PyTorch truncates the float powers to the integer dtype; the 1e-9 keeps a power
        # that lands a hair under an integer (99.99999...) at that integer.
        values = np.floor(values + 1e-9)
    return _factory_result(values, target, requires_grad, dev)


def _triangle_indices(name: str, row: int, col: int, offset: int, lower: bool,
                      dtype: _dtype.dtype | None, device: Any) -> Tensor:
    for what, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{what} must be non-negative, got{v}")
    r, c = np.indices((row, col)).reshape(2, -1)
    keep = (c - r <= offset) if lower else (c - r >= offset)
    return _factory_result(np.stack([r[keep], c[keep]]), dtype or _dtype.int64, False, device)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: _dtype.dtype | None = None,
                 device: Any = None) -> Tensor:
    """The (row, column) indices of the lower triangle of a ``row`` x ``col`` matrix (on and
    below diagonal ``offset``), as a 2 x N tensor, row by row.

    Example:
        >>> import gradviz
        >>> gradviz.tril_indices(3, 3)
        tensor([[0, 1, 1, 2, 2, 2],
                [0, 0, 1, 0, 1, 2]])
    """
    dev = check_device(device, "tril_indices")
    return _triangle_indices("tril_indices", row, col, offset, True, dtype, dev)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: _dtype.dtype | None = None,
                 device: Any = None) -> Tensor:
    """The (row, column) indices of the upper triangle (on and above diagonal ``offset``).

    Example:
        >>> import gradviz
        >>> gradviz.triu_indices(2, 3, 1)
        tensor([[0, 0, 1],
                [1, 2, 2]])
    """
    dev = check_device(device, "triu_indices")
    return _triangle_indices("triu_indices", row, col, offset, False, dtype, dev)


# -- more (opsmore): quantiles --------------------------------------------------------------------
__all__ += ["quantile", "nanquantile"]

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
        moved = input if d == input.ndim - 1 else transpose(unsqueeze(input, -1), d, -1)
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
# -- more (opsrand): random sampling (gradviz/ops/sampling.py; NOTE [random rows])
from gradviz.ops.sampling import (  # noqa: E402 - after the functions sampling.py calls back
    bernoulli,
    dropout,
    dropout_,
    normal,
    poisson,
    randint_like,
)

__all__ += ["bernoulli", "normal", "poisson", "randint_like", "dropout", "dropout_"]


# -- more (einlin): einsum (gradviz/ops/_einsum.py) and linear algebra (gradviz/ops/_linalg.py) ---
# Those modules build on this one, so these entry points import them when first called.
__all__ += ["einsum"]


def einsum(*args: Any) -> Tensor:
    """Sum of products over the labels an equation contracts (``'ij,jk->ik'``,
    ``'bhqd,bhkd->bhqk'``, ``'ii->'``): :func:`gradviz.ops._einsum.einsum`, recorded as
    PyTorch decomposes it (views, permutes, ``bmm``, ``mul``, ``sum``).

    Example:
        >>> import gradviz
        >>> gradviz.einsum('i,j->ij', gradviz.ones(2), gradviz.ones(3)).shape
        gradviz.Size([2, 3])
    """
    from gradviz.ops import _einsum

    return _einsum.einsum(*args)
