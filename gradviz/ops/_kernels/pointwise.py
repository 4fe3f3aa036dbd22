"""Forwards of the elementwise rows: erf and the special functions, rounding, logarithms,
trigonometric and hyperbolic functions, clamping, two-argument functions, elementwise tests."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gradviz.ops._kernels.arithmetic import _integer_checked
from gradviz.ops._kernels.common import (
    _float_operands,
    _not_for,
    _out_dtype,
    _torch_result_type,
    as_float,
)

_ERF = np.frompyfunc(math.erf, 1, 1)


def erf(a: np.ndarray) -> np.ndarray:
    """The error function, exact to double precision (``math.erf`` elementwise)."""
    a = np.asarray(a)
    return np.asarray(_ERF(a.astype(np.float64)), dtype=np.float64).astype(_out_dtype(a))


def sign(a: np.ndarray) -> np.ndarray:
    return a.copy() if a.dtype == np.bool_ else np.sign(a)


def clamp(a: np.ndarray, min: Any = None, max: Any = None) -> np.ndarray:  # noqa: A002
    out = a
    if min is not None:
        out = np.maximum(out, min)
    if max is not None:
        out = np.minimum(out, max)
    # PyTorch: a bound that is NaN makes the result NaN.
    return np.asarray(out if out is not a else a.copy())


def _integral_kept(kernel: str, ufunc: Any, a: np.ndarray) -> np.ndarray:
    # floor/ceil/trunc/round of an integer tensor is that tensor (PyTorch copies it); bool has
    # no kernel.
    if a.dtype == np.bool_:
        raise _not_for(kernel, a.dtype)
    return a.copy() if a.dtype.kind in "iu" else ufunc(a)


def floor(a: np.ndarray) -> np.ndarray:
    return _integral_kept("floor_vml_cpu", np.floor, a)


def ceil(a: np.ndarray) -> np.ndarray:
    return _integral_kept("ceil_vml_cpu", np.ceil, a)


def trunc(a: np.ndarray) -> np.ndarray:
    return _integral_kept("trunc_vml_cpu", np.trunc, a)


def round_(a: np.ndarray) -> np.ndarray:
    # np.rint rounds half to even, as PyTorch's nearbyint does.
    return _integral_kept("round_vml_cpu", np.rint, a)


def round_decimals(a: np.ndarray, decimals: int = 0) -> np.ndarray:
    """PyTorch's ``round(decimals=d)``: scale by ``10**d`` in the tensor's dtype, round half to
    even, scale back (so float32 results are float32's, e.g. 12345.678 -> 12345.6796875)."""
    if a.dtype.kind != "f":
        raise _not_for("round_cpu", a.dtype)
    if decimals >= 0:
        p = a.dtype.type(10.0 ** decimals)
        return np.rint(a * p) / p
    p = a.dtype.type(10.0 ** -decimals)
    return np.rint(a / p) * p


def frac(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind != "f":
        raise _not_for("frac_cpu", a.dtype)
    return a - np.trunc(a)


def _in_float64(ufunc: Any, a: np.ndarray) -> np.ndarray:
    """``ufunc`` computed in float64 and rounded to the input's float type: NumPy's float32
    loops can be an ulp off where PyTorch's are exact (``log10(100)`` is 2.0000002)."""
    a = as_float(a)
    if a.dtype.kind == "f" and a.dtype.itemsize < 8:
        return ufunc(a.astype(np.float64)).astype(a.dtype)
    return ufunc(a)


def log2(a: np.ndarray) -> np.ndarray:
    return _in_float64(np.log2, a)


def log10(a: np.ndarray) -> np.ndarray:
    return _in_float64(np.log10, a)


def exp2(a: np.ndarray) -> np.ndarray:
    return _in_float64(np.exp2, a)


def sinh(a: np.ndarray) -> np.ndarray:
    return _in_float64(np.sinh, a)


def cosh(a: np.ndarray) -> np.ndarray:
    return _in_float64(np.cosh, a)


def tan(a: np.ndarray) -> np.ndarray:
    return _in_float64(np.tan, a)


def asin(a: np.ndarray) -> np.ndarray:
    return _in_float64(np.arcsin, a)


def acos(a: np.ndarray) -> np.ndarray:
    return _in_float64(np.arccos, a)


def atan(a: np.ndarray) -> np.ndarray:
    return _in_float64(np.arctan, a)


def asinh(a: np.ndarray) -> np.ndarray:
    return _in_float64(np.arcsinh, a)


def acosh(a: np.ndarray) -> np.ndarray:
    return _in_float64(np.arccosh, a)


def atanh(a: np.ndarray) -> np.ndarray:
    return _in_float64(np.arctanh, a)


def logit(a: np.ndarray, eps: float | None = None) -> np.ndarray:
    """``log(x / (1 - x))``, with ``x`` first clamped to ``[eps, 1 - eps]`` when ``eps`` is
    given (PyTorch ignores a negative ``eps``, as it does None)."""
    x = as_float(a)
    if eps is not None and eps >= 0:
        x = np.clip(x, eps, 1 - eps).astype(x.dtype, copy=False)
    return np.log(x / (1 - x))


def nan_to_num(a: np.ndarray, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> np.ndarray:
    if a.dtype.kind != "f":
        return a.copy()  # integers and bools have nothing to replace
    # NumPy's defaults are PyTorch's: the dtype's largest and smallest finite values.
    return np.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)


def atan2(a: Any, b: Any) -> np.ndarray:
    a, b = _float_operands(a, b)
    if a.dtype.itemsize < 8:  # (as _in_float64: NumPy's float32 loop is an ulp off PyTorch's)
        return np.arctan2(a.astype(np.float64), b.astype(np.float64)).astype(a.dtype)
    return np.arctan2(a, b)


def hypot(a: Any, b: Any) -> np.ndarray:
    dt = _torch_result_type(a, b)
    if dt.kind != "f":
        raise _not_for("hypot_cpu", dt)
    return np.hypot(np.asarray(a, dtype=dt), np.asarray(b, dtype=dt))


def fmod(a: Any, b: Any) -> np.ndarray:
    return _integer_checked("fmod_cpu", np.fmod, a, b)


def fmod_scalar(a: np.ndarray, other: Any) -> np.ndarray:
    return fmod(a, other)


def xlogy(a: Any, b: Any) -> np.ndarray:
    """``a * log(b)``, 0 where ``a == 0`` (unless ``b`` is NaN), as PyTorch defines it."""
    x, y = _float_operands(a, b)
    out = np.asarray(x * np.log(y))
    return np.where((np.asarray(x) == 0) & ~np.isnan(y), 0, out).astype(out.dtype, copy=False)


def xlogy_scalar_self(b: np.ndarray, self: Any) -> np.ndarray:
    return xlogy(self, b)


def xlogy_scalar_other(a: np.ndarray, other: Any) -> np.ndarray:
    return xlogy(a, other)


def heaviside_checks(a: np.ndarray, values: np.ndarray) -> None:
    if a.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


def heaviside(a: np.ndarray, values: np.ndarray) -> np.ndarray:
    heaviside_checks(a, values)
    return np.where(a == 0, values, a > 0).astype(a.dtype, copy=False)


def _lerp(a: Any, end: Any, weight: Any) -> Any:
    # PyTorch's formula: from the nearer end, so that weight 0 gives `a` and 1 gives `end`.
    return np.where(np.abs(weight) < 0.5, a + weight * (end - a), end - (end - a) * (1 - weight))


def lerp_checks(kernel: str, a: np.ndarray, **others: Any) -> None:
    """PyTorch's checks before a lerp: a floating ``a``, and ``others`` of its dtype (the
    functional form checks them too: dispatch casts a 0-dim operand before the kernel)."""
    if a.dtype.kind != "f":
        raise _not_for(kernel, a.dtype)
    for name, t in others.items():
        if t.dtype != a.dtype:
            raise RuntimeError(f"expected dtype {_TORCH_NAME.get(a.dtype.name, a.dtype.name)} "
                               f"for `{name}` but got dtype "
                               f"{_TORCH_NAME.get(t.dtype.name, t.dtype.name)}")


# dtype names as PyTorch's checks print them (c10::toString of a ScalarType's name).
_TORCH_NAME = {"float32": "float", "float64": "double", "float16": "c10::Half"}


def lerp(a: np.ndarray, end: np.ndarray, weight: float = 0.5) -> np.ndarray:
    lerp_checks("lerp_kernel_scalar", a, end=end)
    return np.asarray(_lerp(a, end, weight)).astype(a.dtype, copy=False)


def lerp_tensor(a: np.ndarray, end: np.ndarray, weight: np.ndarray) -> np.ndarray:
    lerp_checks("lerp_kernel_tensor", a, end=end, weight=weight)
    return np.asarray(_lerp(a, end, weight))


def _pointwise_operands(kernel: str, value: Any, *arrays: np.ndarray) -> tuple:
    """addcmul's and addcdiv's operands in their PyTorch result type, and ``value`` as that
    type takes it (an integer result takes it as an integer: PyTorch converts 0.5 to 0)."""
    dt = _torch_result_type(*arrays)
    if dt == np.bool_:
        raise _not_for(kernel, dt)
    return (int(value) if dt.kind in "iu" else value,
            *(a.astype(dt, copy=False) for a in arrays))


def addcmul(a: np.ndarray, tensor1: np.ndarray, tensor2: np.ndarray, value: Any = 1
            ) -> np.ndarray:
    v, a, tensor1, tensor2 = _pointwise_operands("addcmul_cpu_out", value, a, tensor1, tensor2)
    return a + v * tensor1 * tensor2 if v != 1 else a + tensor1 * tensor2


_ADDCDIV_INT = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes.")


def addcdiv(a: np.ndarray, tensor1: np.ndarray, tensor2: np.ndarray, value: Any = 1
            ) -> np.ndarray:
    if tensor1.dtype.kind in "biu" and tensor2.dtype.kind in "biu":
        raise RuntimeError(_ADDCDIV_INT)
    v, a, tensor1, tensor2 = _pointwise_operands("addcdiv_cpu_out", value, a, tensor1, tensor2)
    return a + v * tensor1 / tensor2 if v != 1 else a + tensor1 / tensor2


def sqrt(a):
    return np.sqrt(as_float(a))


def rsqrt(a):
    return 1 / np.sqrt(as_float(a))


def sin(a):
    return np.sin(as_float(a))


def cos(a):
    return np.cos(as_float(a))


def log1p(a):
    return np.log1p(as_float(a))


def expm1(a):
    return np.expm1(as_float(a))


def clamp_min(a, min):
    return np.maximum(a, min)


def clamp_max(a, max):
    return np.minimum(a, max)


def _lgamma1(x: float) -> float:
    try:
        return math.lgamma(x)
    except ValueError:  # a pole (0, -1, -2 ...): PyTorch gives +inf there
        return math.inf


_ERFC = np.frompyfunc(math.erfc, 1, 1)
_LGAMMA = np.frompyfunc(_lgamma1, 1, 1)


def _float64_of(a: np.ndarray, fn: Any) -> np.ndarray:
    """``fn`` (float64 in, float64 out) computed in float64 and returned in the input's float
    type (float64 for integers and bools: ``promotes`` then gives the default float)."""
    a = np.asarray(a)
    out = np.asarray(fn(a.astype(np.float64)), dtype=np.float64)
    return out.astype(_out_dtype(a), copy=False)


def erfc(a: np.ndarray) -> np.ndarray:
    return _float64_of(a, _ERFC)


def lgamma(a: np.ndarray) -> np.ndarray:
    return _float64_of(a, _LGAMMA)


def _erfinv64(y: np.ndarray) -> np.ndarray:
    # A first guess from the log form of Giles' approximation, then Newton steps on
    # erf(x) - y (erf' = 2/sqrt(pi) exp(-x^2)): double precision in four steps.
    with np.errstate(all="ignore"):
        w = -np.log((1.0 - y) * (1.0 + y))
        c = 2 / (math.pi * 0.147) - w / 2
        x = np.sign(y) * np.sqrt(np.sqrt(c * c + w / 0.147) - c)
        inside = np.abs(y) < 1
        x = np.where(inside, x, 0.0)
        for _ in range(4):
            x = x - (np.asarray(_ERF(x), dtype=np.float64) - y) / (
                2 / math.sqrt(math.pi) * np.exp(-x * x))
        x = np.where(np.abs(y) == 1, np.sign(y) * math.inf, x)
        return np.where(inside | (np.abs(y) == 1), x, math.nan)  # NaN outside [-1, 1]


def erfinv(a: np.ndarray) -> np.ndarray:
    return _float64_of(a, _erfinv64)


# Bernoulli numbers B2, B4 ... B12 for the asymptotic series of digamma and polygamma.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730)


def _digamma64(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        zero, pole = x == 0, (x < 0) & (x == np.floor(x))
        # Reflection for x < 0: psi(x) = psi(1 - x) - pi / tan(pi x).
        neg = x < 0
        shift = np.where(neg, math.pi / np.tan(math.pi * x), 0.0)
        x = np.where(neg, 1 - x, x)
        acc = np.zeros_like(x)
        for _ in range(10):  # psi(x) = psi(x + 1) - 1 / x, up to x >= 10
            small = x < 10
            acc = acc - np.where(small, 1 / np.where(small, x, 1.0), 0.0)
            x = np.where(small, x + 1, x)
        x2 = 1 / (x * x)
        series = sum(b / (2 * (j + 1)) * x2 ** (j + 1) for j, b in enumerate(_BERNOULLI))
        out = np.log(x) - 0.5 / x - series + acc - shift
        # PyTorch: -inf at 0, NaN at the other poles (the negative integers).
        return np.where(zero, -math.inf, np.where(pole, math.nan, out))


def digamma(a: np.ndarray) -> np.ndarray:
    return _float64_of(a, _digamma64)


def _polygamma64(n: int, x: np.ndarray) -> np.ndarray:
    """``psi^(n)(x) = (-1)^(n+1) n! sum_k 1 / (x + k)^(n+1)`` for n >= 1: the first terms
    added up to ``x >= 20``, the tail by Euler-Maclaurin."""
    m = n + 1
    with np.errstate(all="ignore"):
        acc = np.zeros_like(x)
        steps = int(max(0.0, 20 - float(np.nanmin(x, initial=20.0))))
        for _ in range(steps + 1):
            small = x < 20
            acc = acc + np.where(small, np.where(small, x, 1.0) ** -m, 0.0)
            x = np.where(small, x + 1, x)
        tail = x ** (1 - m) / (m - 1) + 0.5 * x ** -m
        rising, k = float(m), m  # (m)_(2j-1): m (m+1) ... (m+2j-2)
        for j, b in enumerate(_BERNOULLI, 1):
            tail = tail + b / math.factorial(2 * j) * rising * x ** (-m - 2 * j + 1)
            rising *= (k + 1) * (k + 2)
            k += 2
        return (-1) ** (n + 1) * math.factorial(n) * (acc + tail)


def _trigamma64(x: np.ndarray) -> np.ndarray:
    """PyTorch's trigamma (``polygamma(1, x)``, digamma's derivative), step for step, so that
    gradients through digamma agree with torch's to the last digits (it is good to ~1e-9):
    reflection below 1/2, six steps of the recurrence, then a short asymptotic series."""
    with np.errstate(all="ignore"):
        sign = np.where(x < 0.5, -1.0, 1.0)
        result = np.where(x < 0.5, -(math.pi ** 2) / np.sin(math.pi * x) ** 2, 0.0)
        x = np.where(x < 0.5, 1 - x, x)
        for _ in range(6):
            result = result + 1 / (x * x)
            x = x + 1
        ixx = 1 / (x * x)
        result = result + (1 + 1 / (2 * x) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))) / x
        return sign * result


def polygamma(a: np.ndarray, n: int = 1) -> np.ndarray:
    if n == 0:
        return digamma(a)
    if n == 1:
        return _float64_of(a, _trigamma64)
    return _float64_of(a, lambda x: _polygamma64(n, x))


def sinc(a: np.ndarray) -> np.ndarray:
    def f(x: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            px = math.pi * x
            return np.where(x == 0, 1.0, np.sin(px) / np.where(x == 0, 1.0, px))
    return _float64_of(a, f)


def sgn(a: np.ndarray) -> np.ndarray:
    return a.copy() if a.dtype == np.bool_ else np.sign(a)


def copysign(a: Any, b: Any) -> np.ndarray:
    a, b = _float_operands(a, b)
    return np.copysign(a, b)


def copysign_scalar(a: np.ndarray, other: float = 1.0) -> np.ndarray:
    a = as_float(a)
    return np.copysign(a, a.dtype.type(other))


def logaddexp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.logaddexp(a, b)


def logaddexp2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.logaddexp2(a, b)


def isclose(a: np.ndarray, b: np.ndarray, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> np.ndarray:
    if a.dtype == np.bool_:  # (NumPy's isclose subtracts, which bools refuse)
        a, b = a.astype(np.int64), b.astype(np.int64)
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def isin(a: np.ndarray, b: np.ndarray, invert: bool = False) -> np.ndarray:
    return np.isin(a, b, invert=invert)  # NaN is in nothing, as in PyTorch
