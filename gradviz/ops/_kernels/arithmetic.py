"""Forwards of the arithmetic rows: ``+ - * / ** // %`` with PyTorch's dtype checks."""

from __future__ import annotations

import numpy as np

from gradviz.ops._kernels.common import _not_for


def add(a, b, alpha=1):
    return a + b if alpha == 1 else a + alpha * b


def sub(a, b, alpha=1):
    return a - b if alpha == 1 else a - alpha * b


def rsub(a, other, alpha=1):
    return other - a if alpha == 1 else other - alpha * a


def rsub_tensor(a, b, alpha=1):
    return b - a if alpha == 1 else b - alpha * a


def div(a, b):
    # True division; PyTorch promotes integer operands to the default float type (see promotes).
    return np.true_divide(a, b)


def div_mode(a, b, rounding_mode=None):
    """``a / b`` rounded as ``rounding_mode`` says: None (true division), ``'trunc'`` (toward
    zero) or ``'floor'`` (toward minus infinity, as Python's ``//``); integer operands stay
    integers when rounded, as in PyTorch."""
    if rounding_mode is None:
        return div(a, b)
    if rounding_mode == "floor":
        return _integer_checked("div_floor_cpu", np.floor_divide, a, b)
    if np.result_type(a, b).kind not in "iub":
        return np.trunc(np.true_divide(a, b))
    q = _integer_checked("div_trunc_cpu", np.floor_divide, a, b)
    # floor and trunc differ by one where the division is inexact and the signs differ
    return q + ((np.remainder(a, b) != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0)))


def reciprocal(a):
    return np.reciprocal(a.astype(np.result_type(a, 1.0)) if a.dtype.kind in "iub" else a)


def pow_scalar(a, exponent):
    if a.dtype == np.bool_ and type(exponent) is bool:
        # PyTorch keeps a bool tensor raised to a bool a bool: x ** True is x, x ** False is all
        # True (NumPy would compute it in int8).
        return a.copy() if exponent else np.ones_like(a)
    return np.power(a, exponent)


def power(a, b):
    # PyTorch's integer pow takes negative exponents (0, or +-1 for a base of +-1) where NumPy
    # raises "Integers to negative integer powers are not allowed".
    dt = np.result_type(a, b)  # before wrapping: a Python int operand stays weakly typed
    if dt == np.bool_:  # a bool tensor (or number) to a bool tensor's power: no kernel
        raise _not_for("pow", dt)
    if dt.kind in "iu" and np.any(np.asarray(b) < 0):
        a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        out = np.power(a, np.where(b < 0, 0, b))
        small = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
        return np.where(b < 0, small, out).astype(dt)
    return np.power(a, b)


def pow_scalar_base(e, self):
    return power(self, e)


def _check_int_divisor(b):
    # Integer division by zero has no value: PyTorch raises where NumPy would warn and give 0.
    if np.result_type(b).kind in "iub" and not np.all(b):
        raise RuntimeError("ZeroDivisionError")


def _no_bool_division(kernel, a, b):
    if np.result_type(a, b) == np.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _integer_checked(kernel, ufunc, a, b):
    # PyTorch's checks before an integer division: no bools, no division by an integer zero.
    _no_bool_division(kernel, a, b)
    if np.result_type(a, b).kind in "iu":
        _check_int_divisor(b)
    return ufunc(a, b)


def floor_divide(a, b):
    return _integer_checked("div_floor_cpu", np.floor_divide, a, b)


def floor_divide_scalar(a, other):
    return floor_divide(a, other)


def rfloor_divide(a, other):
    return floor_divide(other, a)


def remainder(a, b):
    return _integer_checked("remainder_cpu", np.remainder, a, b)


def remainder_scalar(a, other):
    return remainder(a, other)


def rremainder(a, other):
    return remainder(other, a)


def neg(a):
    if a.dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you "
                           "are trying to invert a mask, use the `~` or `logical_not()` operator "
                           "instead.")
    return np.negative(a)


def mul_scalar(a, other):
    return a * other


def add_scalar(a, other, alpha=1):
    return a + alpha * other


def div_scalar(a, other):
    return np.true_divide(a, other)
