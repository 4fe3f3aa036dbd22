"""The arithmetic functions: add, sub, mul, div, floor_divide, remainder and their aliases.

(``pow`` is generated from its three rows, torch's overloads: NOTE [overloaded rows] in
gradviz/ops/api.py.)"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz.ops import _args
from gradviz.ops.dispatch import (
    dispatch,
    out_variant,
)
from gradviz.ops.functional.common import _ADD, _MUL, _O, _PLAIN, _number, _tensor_arg
from gradviz.tensor import Tensor, _is_number

__all__ = [
    "add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide",
    "negative", "floor_divide", "remainder"
]


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
