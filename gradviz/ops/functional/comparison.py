"""Comparisons, logical and bitwise ops, and the elementwise tests (isnan, isclose, isin ...):
never differentiable."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz import _dtype
from gradviz.ops.dispatch import (
    broadcast_message,
    dispatch,
    dispatch_inplace,
    no_meta_kernel,
)
from gradviz.ops.functional.common import _O, _dtype_word, _number, _tensor_arg, _tensors_only
from gradviz.tensor import Tensor, _is_number

__all__ = [
    "bitwise_and", "bitwise_or", "bitwise_xor", "eq", "ne", "lt", "le", "gt", "ge",
    "logical_and", "logical_or", "logical_xor", "allclose", "equal", "isclose", "isin"
]


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


def _logical_inplace(name: str):
    def inplace(input: Tensor, *other: Any) -> Tensor:
        # the truth values written as 0/1 (True/False) in input's own dtype, no node: torch's
        return dispatch_inplace(_O[name], input, *(_tensor_arg(o) for o in other))

    inplace.__name__ = f"{name}_"
    inplace.__doc__ = f"In-place :func:`{name}` (``Tensor.{name}_``), keeping ``input``'s dtype."
    return inplace


# Tensor methods only (torch has no torch.logical_and_): gradviz/ops/methods.py installs them.
# (logical_not_ is generated from its row's signature.)
logical_and_, logical_or_, logical_xor_ = (
    _logical_inplace(n) for n in ("logical_and", "logical_or", "logical_xor"))


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
