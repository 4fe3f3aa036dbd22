"""NumPy forward kernels of the op library (the ``forward`` of table entries too long for a
lambda), and the NumPy halves of a few dual-mode formula helpers.

Everything here takes and returns NumPy arrays; nothing records a graph. Tensor arguments that
are not inputs of an op (an index, a mask, a target) arrive as tensors and are unwrapped with
:func:`arr`.
"""

from __future__ import annotations

import functools
import math
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

INT64_MAX = 2**63 - 1  # what PyTorch saves as a slice's end when it was left open


def arr(x: Any) -> Any:
    """A tensor's array (anything else unchanged)."""
    return getattr(x, "_data", x)


def as_float(a: Any) -> Any:
    """Integer and bool arrays as float64, so that a float function of them does not come out
    as NumPy's float16 (for bool/int8) but as float64, which dispatch turns into PyTorch's
    default float type (``promotes``)."""
    return a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind in "biu" else a


def _out_dtype(a: np.ndarray) -> np.dtype:
    return a.dtype if a.dtype.kind == "f" else np.dtype(np.float64)


# -- elementwise ---------------------------------------------------------------------------------
_ERF = np.frompyfunc(math.erf, 1, 1)


def erf(a: np.ndarray) -> np.ndarray:
    """The error function, exact to double precision (``math.erf`` elementwise)."""
    a = np.asarray(a)
    return np.asarray(_ERF(a.astype(np.float64)), dtype=np.float64).astype(_out_dtype(a))


def sigmoid(a: np.ndarray) -> np.ndarray:
    return 0.5 * (np.tanh(0.5 * a) + 1)  # overflow-free logistic


def sign(a: np.ndarray) -> np.ndarray:
    return a.copy() if a.dtype == np.bool_ else np.sign(a)


_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


def gelu(a: np.ndarray, approximate: str = "none") -> np.ndarray:
    if approximate == "tanh":
        return 0.5 * a * (1 + np.tanh(_SQRT_2_OVER_PI * (a + 0.044715 * a ** 3)))
    return 0.5 * a * (1 + erf(a / math.sqrt(2)))


def softplus(a: np.ndarray, beta: float = 1, threshold: float = 20) -> np.ndarray:
    z = a * beta
    return np.where(z > threshold, a, np.logaddexp(0, z) / beta).astype(a.dtype, copy=False)


def elu(a: np.ndarray, alpha: float = 1.0, scale: float = 1, input_scale: float = 1
        ) -> np.ndarray:
    neg = alpha * np.expm1(np.minimum(a, 0) * input_scale)
    return (scale * np.where(a > 0, a, neg)).astype(a.dtype, copy=False)


def leaky_relu(a: np.ndarray, negative_slope: float = 0.01) -> np.ndarray:
    return np.where(a > 0, a, a * negative_slope).astype(a.dtype, copy=False)


def clamp(a: np.ndarray, min: Any = None, max: Any = None) -> np.ndarray:  # noqa: A002
    out = a
    if min is not None:
        out = np.maximum(out, min)
    if max is not None:
        out = np.minimum(out, max)
    # PyTorch: a bound that is NaN makes the result NaN.
    return np.asarray(out if out is not a else a.copy())


# -- more elementwise functions (opsmath) --------------------------------------------------------
def _not_for(kernel: str, dt: np.dtype) -> NotImplementedError:
    """PyTorch's error for a dtype a kernel has no loop for."""
    return NotImplementedError(
        f'"{kernel}" not implemented for \'{_SCALAR_TYPE.get(dt.name, dt.name)}\'')


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


def _torch_result_type(*operands: Any) -> np.dtype:
    """PyTorch's result type of tensors (arrays) and numbers: the highest category (bool <
    integer < floating) decides, and within it the widest type, so ``int64`` with ``float32``
    is ``float32`` (NumPy says float64); numbers count only with a higher category (NumPy's
    weak scalars already do that)."""
    floats = [o for o in operands if isinstance(o, np.ndarray) and o.dtype.kind == "f"]
    if floats:
        numbers = [o for o in operands if not isinstance(o, np.ndarray)]
        return np.result_type(*floats, *numbers)
    return np.result_type(*operands)


def _float_operands(a: Any, b: Any) -> tuple:
    """Both operands of a floating-point binary function as arrays of one float type: their
    result type, or float64 for integers and bools (``promotes`` then gives PyTorch's default
    float type)."""
    dt = _torch_result_type(a, b)
    dt = dt if dt.kind == "f" else np.dtype(np.float64)
    return np.asarray(a, dtype=dt), np.asarray(b, dtype=dt)


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


# -- reductions ----------------------------------------------------------------------------------
def _axis(dim: Any, a: np.ndarray) -> Any:
    """NumPy's ``axis`` for PyTorch's ``dim``: None for all dims, and for a 0-d tensor, whose
    dim 0 (or -1) PyTorch accepts and reduces over nothing."""
    return None if dim is None or dim == () or a.ndim == 0 else dim


def amax(a: np.ndarray, dim: tuple = (), keepdim: bool = False) -> np.ndarray:
    return np.asarray(np.amax(a, axis=_axis(dim, a), keepdims=keepdim))


def amin(a: np.ndarray, dim: tuple = (), keepdim: bool = False) -> np.ndarray:
    return np.asarray(np.amin(a, axis=_axis(dim, a), keepdims=keepdim))


def max_dim(a: np.ndarray, dim: int, keepdim: bool = False) -> tuple[np.ndarray, np.ndarray]:
    return _select_dim(a, dim, keepdim, np.argmax)


def min_dim(a: np.ndarray, dim: int, keepdim: bool = False) -> tuple[np.ndarray, np.ndarray]:
    return _select_dim(a, dim, keepdim, np.argmin)


def _select_dim(a: np.ndarray, dim: int, keepdim: bool, arg: Any) -> tuple:
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    idx = np.expand_dims(arg(a, axis=dim), dim)
    values = np.take_along_axis(a, idx, axis=dim)
    if not keepdim:
        values, idx = np.squeeze(values, dim), np.squeeze(idx, dim)
    return values, idx.astype(np.int64)


def prod(a: np.ndarray, dim: int | None = None, keepdim: bool = False) -> np.ndarray:
    out = np.prod(a, axis=_axis(dim, a), keepdims=keepdim)
    if a.dtype.kind in "biu":
        out = out.astype(np.int64)  # PyTorch: integer and bool products are int64
    return np.asarray(out)


def var(a: np.ndarray, dim: tuple | None = None, correction: float | None = None,
        keepdim: bool = False, _name: str = "var") -> np.ndarray:
    ddof = 1 if correction is None else correction
    dim = _axis(dim, a)
    n = a.size if dim is None else int(np.prod([a.shape[d] for d in dim]))
    if n - ddof <= 0:  # PyTorch's warning instead of NumPy's
        warnings.warn(f"{_name}(): degrees of freedom is <= 0. Correction should be strictly "
                      "less than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(np.var(a, axis=dim, ddof=ddof, keepdims=keepdim))


def std(a: np.ndarray, dim: tuple | None = None, correction: float | None = None,
        keepdim: bool = False) -> np.ndarray:
    return np.sqrt(var(a, dim, correction, keepdim, "std"))


def logsumexp(a: np.ndarray, dim: tuple, keepdim: bool = False) -> np.ndarray:
    a = a if a.dtype.kind == "f" else a.astype(np.float64)
    if a.ndim == 0:
        return a.copy()
    if a.size == 0:
        return np.asarray(np.log(np.sum(np.exp(a), axis=dim, keepdims=keepdim)))
    m = np.amax(a, axis=dim, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    out = np.log(np.sum(np.exp(a - m), axis=dim, keepdims=True)) + m
    return np.asarray(out if keepdim else np.squeeze(out, dim))


def vector_norm(a: np.ndarray, ord: float = 2, dim: tuple | None = None,  # noqa: A002
                keepdim: bool = False) -> np.ndarray:
    x = np.abs(a)
    dim = _axis(dim, a)
    if ord in (math.inf, -math.inf):  # max and min have no identity: nothing to reduce raises
        text = f"linalg.vector_norm cannot compute the {ord} norm on "
        if dim is None and not x.size:
            raise RuntimeError(text + "an empty tensor because the operation does not have an "
                               "identity")
        for d in () if dim is None else np.atleast_1d(dim):
            if not x.shape[d]:
                raise RuntimeError(text + f"the dimension {d}because this dimension is "
                                   "empty and the operation does not have an identity")
    if ord == math.inf:
        out = np.amax(x, axis=dim, keepdims=keepdim)
    elif ord == -math.inf:
        out = np.amin(x, axis=dim, keepdims=keepdim)
    elif ord == 0:
        out = np.sum(x != 0, axis=dim, keepdims=keepdim).astype(a.dtype)
    elif ord == 1:
        out = np.sum(x, axis=dim, keepdims=keepdim)
    elif ord == 2:
        out = np.sqrt(np.sum(x * x, axis=dim, keepdims=keepdim))
    else:
        out = np.sum(x ** ord, axis=dim, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(out, dtype=a.dtype)


# NOTE [perf]: softmax and log_softmax call the ufuncs' reduce (np.amax / np.sum add ~1.3 us of
# Python wrapper each; the same loops, so the same numbers) and finish in the fresh array they
# made (one temporary less). A training step calls them once per loss.
_MAX_R = np.maximum.reduce


def softmax(a: np.ndarray, dim: int) -> np.ndarray:
    if not a.size:
        return a.copy()
    e = np.exp(a - _MAX_R(a, axis=dim, keepdims=True))
    total = np.add.reduce(e, axis=dim, keepdims=True)
    return np.divide(e, total, out=e) if a.ndim else e / total  # (0-d: NumPy scalars)


def log_softmax(a: np.ndarray, dim: int) -> np.ndarray:
    if not a.size:
        return a.copy()
    s = a - _MAX_R(a, axis=dim, keepdims=True)
    lse = np.log(np.add.reduce(np.exp(s), axis=dim, keepdims=True))
    return np.subtract(s, lse, out=s) if a.ndim else s - lse


# -- attention -------------------------------------------------------------------------------------
def safe_softmax(a: np.ndarray, dim: int) -> np.ndarray:
    """:func:`softmax`, except that a slice whose entries are all ``-inf`` (a query that may
    attend to nothing) gives zeros instead of NaN: PyTorch's ``_safe_softmax``."""
    if not a.size:
        return a.copy()
    top = _MAX_R(a, axis=dim, keepdims=True)
    nothing = top == -np.inf
    e = np.exp(a - np.where(nothing, 0, top))  # exp(-inf) = 0 on those slices
    total = np.add.reduce(e, axis=dim, keepdims=True)
    return np.divide(e, np.where(nothing, 1, total), out=e) if a.ndim else e / total


def _causal_scores(scores: np.ndarray) -> np.ndarray:
    """``scores`` (..., L, S) with every key after its query's position set to ``-inf``: the
    top-left triangle of ``is_causal=True``."""
    length, source = scores.shape[-2:]
    allowed = np.tril(np.ones((length, source), dtype=bool))
    return np.where(allowed, scores, -np.inf).astype(scores.dtype, copy=False)


def _kv_heads(query: np.ndarray, kv: np.ndarray) -> np.ndarray:
    """A key or value with as many heads (dimension 1) as ``query``: grouped-query attention
    lets each of its Hkv heads serve Hq / Hkv consecutive query heads."""
    group = query.shape[1] // kv.shape[1]
    return kv if group == 1 else np.repeat(kv, group, axis=1)


def _flash_scale(query: np.ndarray, scale: float | None) -> Any:
    """The scores' factor in the query's dtype: ``scale``, or ``1 / sqrt(features)``."""
    return query.dtype.type(1.0 / math.sqrt(query.shape[-1]) if scale is None else scale)


def _flash_scores(query: np.ndarray, key: np.ndarray, attn_mask: Any, is_causal: bool,
                  scale: float | None) -> np.ndarray:
    """The attention scores ``query @ key^T * scale`` (+ the mask, causal) of the CPU flash
    kernel, in the inputs' dtype (``key`` with as many heads as ``query``)."""
    scores = np.matmul(query, np.swapaxes(key, -1, -2)) * _flash_scale(query, scale)
    if attn_mask is not None:
        scores = scores + arr(attn_mask).astype(scores.dtype, copy=False)
    if is_causal:
        scores = _causal_scores(scores)
    return scores


def sdpa_flash_cpu(query: np.ndarray, key: np.ndarray, value: np.ndarray,
                   dropout_p: float = 0.0, is_causal: bool = False, attn_mask: Any = None,
                   scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(output, logsumexp)`` of ``softmax(query @ key^T * scale + mask) @ value`` over 4-d
    (batch, heads, length, features) inputs, as PyTorch's CPU flash-attention kernel returns
    them: ``logsumexp`` (batch, heads, length) is what backward needs to rebuild the softmax
    (0 for a query that may attend to nothing, whose output is 0)."""
    scores = _flash_scores(query, _kv_heads(query, key), attn_mask, is_causal, scale)
    top = np.maximum.reduce(scores, axis=-1, keepdims=True)
    nothing = top == -np.inf
    top = np.where(nothing, 0, top)
    e = np.exp(scores - top)
    total = np.add.reduce(e, axis=-1, keepdims=True)
    # The output is laid out in memory as the query is (PyTorch's kernel allocates it so):
    # multi-head attention's permute(2, 0, 1, 3) of it is then contiguous, and its reshape a view.
    output = np.empty_like(query)
    output[...] = np.matmul(e / np.where(nothing, 1, total), _kv_heads(query, value))
    with np.errstate(divide="ignore"):
        lse = np.where(nothing, 0, top + np.log(total))[..., 0]
    return output, lse.astype(query.dtype, copy=False)


def sdpa_flash_cpu_backward(grad_out: np.ndarray, query: np.ndarray, key: np.ndarray,
                            value: np.ndarray, output: np.ndarray, logsumexp: np.ndarray,
                            dropout_p: float = 0.0, is_causal: bool = False,
                            attn_mask: Any = None, scale: float | None = None
                            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The gradients of :func:`sdpa_flash_cpu` for (query, key, value), from the saved output
    and logsumexp: the softmax ``P`` is rebuilt as ``exp(scores - logsumexp)``; then
    ``dV = P^T dO``, ``dS = P * (dO V^T - rowsum(dO * O))``, ``dQ = dS K * scale`` and
    ``dK = dS^T Q * scale``."""
    s = _flash_scale(query, scale)
    k, v = _kv_heads(query, key), _kv_heads(query, value)
    scores = _flash_scores(query, k, attn_mask, is_causal, scale)
    p = np.exp(scores - logsumexp[..., None]).astype(query.dtype, copy=False)  # 0 where masked
    grad_value = np.matmul(np.swapaxes(p, -1, -2), grad_out)
    dp = np.matmul(grad_out, np.swapaxes(v, -1, -2))
    ds = p * (dp - np.add.reduce(grad_out * output, axis=-1, keepdims=True))
    grad_query = np.matmul(ds, k) * s
    grad_key = np.matmul(np.swapaxes(ds, -1, -2), query) * s
    if key.shape[1] != query.shape[1]:  # a shared key/value head sums its query heads' parts
        n, h = key.shape[:2]
        grad_key = grad_key.reshape(n, h, -1, *grad_key.shape[2:]).sum(axis=2)
        grad_value = grad_value.reshape(n, h, -1, *grad_value.shape[2:]).sum(axis=2)
    return grad_query, grad_key, grad_value


# -- shapes and indexing ---------------------------------------------------------------------------
def select(a: np.ndarray, dim: int, index: int) -> np.ndarray:
    # The trailing Ellipsis keeps a 0-d result a view (a[0] of a 1-d array is a scalar copy).
    return a[(slice(None),) * dim + (index, Ellipsis)]


def slice_dim(a: np.ndarray, dim: int, start: int = 0, end: int = INT64_MAX, step: int = 1
              ) -> np.ndarray:
    return a[(slice(None),) * dim + (slice(start, end, step),)]


def select_backward(g: np.ndarray, input_sizes: tuple, dim: int, index: int) -> np.ndarray:
    out = np.zeros(input_sizes, g.dtype)
    select(out, dim, index)[...] = g
    return out


def slice_backward(g: np.ndarray, input_sizes: tuple, dim: int, start: int, end: int,
                   step: int) -> np.ndarray:
    out = np.zeros(input_sizes, g.dtype)
    slice_dim(out, dim, start, end, step)[...] = g
    return out


def np_index(indices: tuple) -> tuple:
    """A PyTorch index list (tensors or None per leading dimension) as a NumPy index."""
    return tuple(slice(None) if i is None else arr(i) for i in indices)


def _int_index(indices: tuple) -> tuple:
    """Like :func:`np_index`, with boolean masks turned into their nonzero positions (what
    ``np.add.at`` needs)."""
    out: list[Any] = []
    for i in indices:
        a = None if i is None else arr(i)
        if a is not None and a.dtype == np.bool_:
            out.extend(np.nonzero(a))
        else:
            out.append(slice(None) if a is None else a)
    return tuple(out)


def index(a: np.ndarray, indices: tuple) -> np.ndarray:
    return np.asarray(a[np_index(indices)])


def index_put(a: np.ndarray, values: Any, indices: tuple, accumulate: bool = False
              ) -> np.ndarray:
    out = a.copy()
    if accumulate:
        idx = _int_index(indices)
        np.add.at(out, idx, np.broadcast_to(values, out[idx].shape))
    else:
        out[np_index(indices)] = values
    return out


def _grid(index: np.ndarray, dim: int) -> tuple:
    index = index.reshape(index.shape or (1,))  # a 0-d index: one position along dim
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


def gather(a: np.ndarray, dim: int, index: Any, sparse_grad: bool = False) -> np.ndarray:
    idx = arr(index)
    if idx.size == 0:
        return np.zeros(idx.shape, a.dtype)
    if a.ndim == 0:  # a 0-d tensor has one element, at index 0 of its (only) dim
        return np.full(idx.shape, a, a.dtype)
    return np.asarray(a[_grid(idx, dim)]).reshape(idx.shape)


def scatter(a: np.ndarray, src: Any, dim: int, index: Any) -> np.ndarray:
    idx = arr(index)
    if a.ndim == 0:  # one element, at index 0 of its (only) dim: src's first, if indexed
        return np.asarray(np.reshape(src, -1)[0] if idx.size else a, dtype=a.dtype)
    out = a.copy()
    if idx.size == 0:
        return out
    if np.ndim(src):
        src = np.reshape(src, np.shape(src) or (1,))[tuple(slice(0, n) for n in idx.shape or (1,))]
    out[_grid(idx, dim)] = src
    return out


def scatter_value(a: np.ndarray, dim: int, index: Any, value: Any) -> np.ndarray:
    return scatter(a, value, dim, index)


def scatter_add(a: np.ndarray, src: np.ndarray, dim: int, index: Any) -> np.ndarray:
    idx = arr(index)
    if a.ndim == 0:  # every index is 0: the first idx.size values of src add up there
        return np.asarray(a + np.sum(np.reshape(src, -1)[:idx.size]), dtype=a.dtype)
    out = a.copy()
    if idx.size == 0:
        return out
    src = np.reshape(src, np.shape(src) or (1,))
    np.add.at(out, _grid(idx, dim), src[tuple(slice(0, n) for n in idx.shape or (1,))])
    return out


def index_select(a: np.ndarray, dim: int, index: Any) -> np.ndarray:
    if not a.ndim:  # a 0-d input stays 0-d (its one index is 0: checked before)
        return a.copy()
    return np.take(a, arr(index).reshape(-1), axis=dim)


def masked_fill(a: np.ndarray, mask: Any, value: Any) -> np.ndarray:
    return np.where(arr(mask), value, a).astype(a.dtype, copy=False)


def masked_fill_tensor(a: np.ndarray, value: np.ndarray, mask: Any) -> np.ndarray:
    return masked_fill(a, mask, value)


def repeat(a: np.ndarray, repeats: tuple) -> np.ndarray:
    return np.tile(a, repeats)


def split(a: np.ndarray, split_size: int, dim: int) -> tuple:
    n = a.shape[dim]
    cuts = list(range(split_size, n, split_size)) if split_size else []
    return tuple(np.split(a, cuts, axis=dim)) if n else (a[...],)


def split_with_sizes(a: np.ndarray, split_sizes: tuple, dim: int) -> tuple:
    return tuple(np.split(a, np.cumsum(split_sizes)[:-1].tolist(), axis=dim))


def cat(*arrays: np.ndarray, dim: int = 0) -> np.ndarray:
    # 1-D arrays of size 0 are left out (torch's legacy rule), but still count for the dtype
    kept = [a for a in arrays if a.shape != (0,)]
    if not kept:
        return np.zeros((0,), np.result_type(*arrays))
    return np.concatenate(kept, axis=dim, dtype=np.result_type(*arrays))


def stack(*arrays: np.ndarray, dim: int = 0) -> np.ndarray:
    return np.stack(arrays, axis=dim)


# -- losses and layers -----------------------------------------------------------------------------
def nll_weights(target: np.ndarray, weight: Any, n_classes: int, ignore_index: int,
                dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """``(safe_target, w)``: targets with ignored entries replaced by 0, and each entry's class
    weight (0 where ignored)."""
    valid = target != ignore_index
    if weight is None:
        # NOTE [perf]: unit weights; with nothing ignored (the usual case) the targets as they are
        if valid.all():
            return target, np.ones(target.shape, dtype)
        return np.where(valid, target, 0), valid.astype(dtype)
    safe = np.where(valid, target, 0)
    w = arr(weight).astype(dtype, copy=False)
    return safe, (w[safe] * valid).astype(dtype, copy=False)


def pick_targets(a: np.ndarray, safe: np.ndarray) -> np.ndarray:
    """Each row's entry at its target class: ``a[i, safe[i]]`` (``a[safe]`` for one row)."""
    if a.ndim == 1:
        return a[safe]
    return a[np.arange(a.shape[0]), safe]


_ANY, _SUM = np.logical_or.reduce, np.add.reduce


def nll_loss(a: np.ndarray, target: Any, weight: Any = None, reduction: int = 1,
             ignore_index: int = -100) -> tuple[np.ndarray, np.ndarray]:
    t = arr(target)
    if weight is None and reduction == 1 and t.size and not _ANY(t == ignore_index, None):
        # NOTE [perf]: the usual call (unit weights, the mean, nothing ignored): the mean of the
        # picked entries, without a weight per entry (the same numbers: -sum / count); the
        # ufuncs' reduce, as ndarray.any/sum do it without their Python wrappers
        n = t.size
        return np.asarray(-_SUM(pick_targets(a, t), None) / n, a.dtype), np.asarray(n, a.dtype)
    safe, w = nll_weights(t, weight, a.shape[-1], ignore_index, a.dtype)
    losses = -w * pick_targets(a, safe)
    total = np.asarray(w.sum(), a.dtype)
    if reduction == 0:
        return losses.astype(a.dtype, copy=False), np.zeros((), a.dtype)
    if reduction == 2:
        return np.asarray(losses.sum(), a.dtype), total
    if total == 0:  # every target ignored: 0/0 is nan, as in PyTorch, without a warning
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(losses.sum() / total, a.dtype), total
    return np.asarray(losses.sum() / total, a.dtype), total


def reduce(losses: np.ndarray, reduction: int) -> np.ndarray:
    if reduction == 1:
        return np.asarray(losses.mean(), losses.dtype)
    if reduction == 2:
        return np.asarray(losses.sum(), losses.dtype)
    return losses


def mse_loss(a: np.ndarray, target: np.ndarray, reduction: int = 1) -> np.ndarray:
    return reduce((a - target) ** 2, reduction)


def binary_cross_entropy(a: np.ndarray, target: np.ndarray, weight: Any = None,
                         reduction: int = 1) -> np.ndarray:
    with np.errstate(divide="ignore"):
        log_x = np.maximum(np.log(a), -100)
        log_1mx = np.maximum(np.log1p(-a), -100)
    losses = -(target * log_x + (1 - target) * log_1mx)
    if weight is not None:
        losses = losses * arr(weight)
    return reduce(np.asarray(losses, a.dtype), reduction)


def binary_cross_entropy_with_logits(a: np.ndarray, target: np.ndarray, weight: Any = None,
                                     pos_weight: Any = None, reduction: int = 1) -> np.ndarray:
    sp = np.logaddexp(0, -a)  # softplus(-x) = -log(sigmoid(x)), without overflow
    if pos_weight is not None:
        losses = (1 - target) * a + ((arr(pos_weight) - 1) * target + 1) * sp
    else:
        losses = (1 - target) * a + sp
    if weight is not None:
        losses = losses * arr(weight)
    return reduce(np.asarray(losses, a.dtype), reduction)


def layer_norm(a: np.ndarray, weight: Any, bias: Any, normalized_shape: tuple = (),
               eps: float = 1e-5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    axes = tuple(range(a.ndim - len(normalized_shape), a.ndim))
    mean = np.mean(a, axis=axes, keepdims=True)
    rstd = 1 / np.sqrt(np.mean((a - mean) ** 2, axis=axes, keepdims=True) + eps)
    out = (a - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out.astype(a.dtype, copy=False), mean, rstd


def embedding(weight: np.ndarray, indices: Any, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> np.ndarray:
    return weight[arr(indices)]


# -- the forwards of the derivative table's rows ------------------------------------------
# (one function per row whose forward is not a NumPy function or a kernel above)


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


# The C type names PyTorch's "<kernel>" not implemented for '<type>' errors print.
_SCALAR_TYPE = {"float16": "Half", "float32": "Float", "float64": "Double", "bool": "Bool",
                "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                "uint8": "Byte"}


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


def relu(a):
    return np.maximum(a, 0).astype(a.dtype, copy=False)


def sum_all(a):
    return sum_dim(a)


def sum_dim(a, dim=None, keepdim=False):
    return np.asarray(np.sum(a, axis=_axis(dim, a), keepdims=keepdim))


def mean_all(a):
    return mean_dim(a)


def mean_dim(a, dim=None, keepdim=False):
    return np.asarray(np.mean(a, axis=_axis(dim, a), keepdims=keepdim))


def view(a, size):
    return a.reshape(size)


def unsafe_view(a, size):
    return a.reshape(size)


def clone(a):
    return a.copy()


def transpose(a, dim0, dim1):
    return np.swapaxes(a, dim0, dim1) if a.ndim else a.view()


def t(a):
    return a.T


def permute(a, dims):
    return np.transpose(a, dims)


def expand(a, size):
    out = np.broadcast_to(a, size)
    if a.flags.writeable:
        # Writable, as PyTorch's expanded tensors are: writing one element writes the memory
        # its copies share (in-place ops that would write one location twice are refused in
        # dispatch_inplace, as PyTorch refuses them).
        out = np.lib.stride_tricks.as_strided(a, out.shape, out.strides, writeable=True)
    return out


def unsqueeze(a, dim):
    return np.expand_dims(a, dim)


def squeeze(a):
    return np.squeeze(a)


def squeeze_dim(a, dim):
    return np.squeeze(a, dim) if a.ndim and a.shape[dim] == 1 else a


def squeeze_dims(a, dim):
    # squeeze(dim=(...)): the listed dims of size 1 go, the others stay
    return np.squeeze(a, tuple(d for d in dim if a.ndim and a.shape[d] == 1))


def to_copy(a, dtype):
    return a.astype(dtype)


def where(a, b, condition):
    return np.where(arr(condition), a, b)


def zero(a):
    return np.zeros_like(a)


def fill(a, value):
    return np.full_like(a, value)


def copy(a, src):
    return np.broadcast_to(src, a.shape)


def all_(a, dim=None, keepdim=False):
    # PyTorch keeps a uint8 input's dtype (0 or 1); every other dtype gives bool
    out = np.asarray(np.all(a, axis=dim, keepdims=keepdim))
    return out.astype(np.uint8) if a.dtype == np.uint8 else out


def any_(a, dim=None, keepdim=False):
    out = np.asarray(np.any(a, axis=dim, keepdims=keepdim))
    return out.astype(np.uint8) if a.dtype == np.uint8 else out


def _bitwise(kernel, ufunc, *operands):
    dt = np.result_type(*operands)
    if dt.kind == "f":
        # A Python float operand makes the default float type, as PyTorch's promotion does.
        arrays = [o for o in operands if isinstance(o, np.ndarray) and o.dtype.kind == "f"]
        dt = np.result_type(*arrays) if arrays else np.dtype(np.float32)
    if dt.kind not in "iub":
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{_SCALAR_TYPE.get(dt.name, dt.name)}\'')
    return ufunc(*operands)


def bitwise_and(a, b):
    return _bitwise("bitwise_and_cpu", np.bitwise_and, a, b)


def bitwise_or(a, b):
    return _bitwise("bitwise_or_cpu", np.bitwise_or, a, b)


def bitwise_xor(a, b):
    return _bitwise("bitwise_xor_cpu", np.bitwise_xor, a, b)


def bitwise_not(a):
    return _bitwise("bitwise_not_cpu", np.invert, a)


def cumsum(a, dim):
    if a.ndim == 0:
        return a.astype(np.int64) if a.dtype.kind in "iub" else a.copy()
    out = np.cumsum(a, axis=dim)
    return out.astype(np.int64) if a.dtype.kind in "iub" else out


def flip(a, dims):
    return np.flip(a, dims).copy() if a.ndim else a.copy()


def argmax(a, dim=None, keepdim=False):
    return np.asarray(np.argmax(a, axis=dim, keepdims=keepdim)).astype(np.int64)


def argmin(a, dim=None, keepdim=False):
    return np.asarray(np.argmin(a, axis=dim, keepdims=keepdim)).astype(np.int64)


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


def mul_scalar(a, other):
    return a * other


def add_scalar(a, other, alpha=1):
    return a + alpha * other


def div_scalar(a, other):
    return np.true_divide(a, other)


def silu(a):
    return a * sigmoid(a)


def max_all(a):
    return amax(a)


def min_all(a):
    return amin(a)


def prod_all(a):
    return prod(a)


def reshape_alias(a, size):
    return a.reshape(size)


def alias(a):
    return a[...]


def addmm(a, m1, m2, beta=1, alpha=1):
    return (a if beta == 1 else beta * a) + (m1 @ m2 if alpha == 1 else alpha * (m1 @ m2))


def fill_tensor(a, v):
    return np.full_like(a, v)


def unbind(a, dim):
    return tuple(select(a, dim, i) for i in range(a.shape[dim]))


# -- convolution, pooling, batch normalization ----------------------------------------------------
# NOTE [im2col]: a convolution is one matrix product. ``_im2col`` copies the input values under
# every kernel position into one contiguous matrix per sample, of shape
# (C * prod(kernel), prod(n_out)): row (c, k) holds channel c at kernel offset k, column p the
# output position p. The weight seen as (O, C * prod(kernel)) times it is the output
# (O, prod(n_out)) in the (N, O, *n_out) layout already: one ``np.matmul`` over the batch (groups
# are one more batch dimension), BLAS doing the arithmetic. The copy is one ``take`` with a flat
# index that depends only on the geometry (cached), not a reshape of a strided window view:
# NumPy copies a 6-d view of 3-wide windows several times slower.
# The weight's gradient gathers the same entries with the positions first,
# (N * prod(n_out), C * prod(kernel)), and multiplies the output gradient, seen as
# (O, N * prod(n_out)), by it: one matmul sums over the batch and the positions.
# A transposed convolution (and so the input's gradient) is the product the other way round: the
# weight's transpose times the input gives, per input position, what it adds at each kernel
# offset; col2im then sums those into the output, again as one ``take`` (each output position
# reads the prod(kernel) entries that land on it; an entry that lands nowhere reads an appended
# zero) and a sum over the kernel offsets.
# Pooling gathers its windows with the same index, laid out (kernel offset, output position,
# plane) instead (``_pool_windows``): a window's reduction is then a few passes over contiguous
# (output position, plane) slabs.

# How many bytes of im2col / col2im / pooling indices are kept per kind, the geometries used
# last first: an index has one entry per element of a sample's im2col matrix (3.6 MB for 64
# channels, 3x3, 28x28; 58 MB for 256 channels, 3x3, 56x56) and rebuilding one costs a few ms,
# against tens of ms for the convolution that needs it. A bound by count would let a sweep over
# large shapes keep gigabytes.
_INDEX_CACHE_BYTES = 64 * 2**20


def _nbytes(value: Any) -> int:
    items = value if isinstance(value, tuple) else (value,)
    return sum(a.nbytes for a in items if isinstance(a, np.ndarray))


def _index_cache(build: Callable[..., Any]) -> Callable[..., Any]:
    """``build`` with its results kept by argument, least recently used dropped first once they
    hold more than ``_INDEX_CACHE_BYTES`` (the newest is always kept, however large)."""
    kept: OrderedDict[tuple, Any] = OrderedDict()
    size = [0]
    lock = threading.Lock()

    @functools.wraps(build)
    def cached(*key: Any) -> Any:
        with lock:
            hit = kept.get(key)
            if hit is not None:
                kept.move_to_end(key)
                return hit
        value = build(*key)
        with lock:
            if key not in kept:
                kept[key] = value
                size[0] += _nbytes(value)
                while size[0] > _INDEX_CACHE_BYTES and len(kept) > 1:
                    size[0] -= _nbytes(kept.popitem(last=False)[1])
        return value

    cached.cache_bytes = lambda: size[0]  # type: ignore[attr-defined]
    cached.cache_len = lambda: len(kept)  # type: ignore[attr-defined]
    return cached


def _per_dim(v: Any, nd: int) -> tuple:
    """An int or a 1-tuple stands for every spatial dimension (PyTorch saves 'valid' as (0,))."""
    v = tuple(v) if isinstance(v, (tuple, list)) else (int(v),)
    return v * nd if len(v) == 1 else v


def _pad_or_crop(a: np.ndarray, lo: tuple, hi: tuple, value: float = 0.0) -> np.ndarray:
    """Pad the last ``len(lo)`` dimensions by ``lo``/``hi`` with ``value``; negative amounts crop.
    (A filled array and one slice assignment: ``np.pad`` costs tens of µs more per call.)"""
    lead = a.ndim - len(lo)
    if any(x < 0 for x in lo + hi):
        a = a[(slice(None),) * lead + tuple(
            slice(max(-x, 0), n - max(-y, 0)) for x, y, n in zip(lo, hi, a.shape[lead:]))]
    if any(x > 0 for x in lo + hi):
        lo, hi = tuple(max(x, 0) for x in lo), tuple(max(y, 0) for y in hi)
        out = np.full(a.shape[:lead] + tuple(n + x + y for n, x, y in zip(a.shape[lead:], lo, hi)),
                      value, a.dtype)
        out[(slice(None),) * lead + tuple(slice(x, x + n) for x, n in zip(lo, a.shape[lead:]))] = a
        a = out
    return a


def _along(values: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """``values`` as an ``ndim``-d array that varies along ``axis`` only (for broadcasting)."""
    return values.reshape(tuple(-1 if i == axis else 1 for i in range(ndim)))


@_index_cache
def _im2col_index(channels: int, spatial: tuple, kernel: tuple, stride: tuple, dilation: tuple,
                  n_out: tuple, positions_first: bool = False) -> np.ndarray:
    """For a (channels, *spatial) block flattened: the position of each im2col entry, in
    (channel, *kernel offset, *output position) order (NOTE [im2col]), or with
    ``positions_first`` in (*output position, channel, *kernel offset) order."""
    nd = len(kernel)
    dims = 1 + 2 * nd
    idx = _along(np.arange(channels) * math.prod(spatial), 0, dims)
    step = math.prod(spatial)
    for i in range(nd):
        step //= spatial[i]  # elements between neighbours along spatial dimension i
        idx = (idx + _along(np.arange(kernel[i]) * (dilation[i] * step), 1 + i, dims)
               + _along(np.arange(n_out[i]) * (stride[i] * step), 1 + nd + i, dims))
    if positions_first:
        idx = idx.transpose(tuple(range(1 + nd, dims)) + tuple(range(1 + nd)))
    idx = idx.ravel()
    idx.flags.writeable = False
    return idx


def _im2col(a: np.ndarray, kernel: tuple, stride: tuple, dilation: tuple, n_out: tuple,
            positions_first: bool = False) -> np.ndarray:
    """``(N, C * prod(kernel), prod(n_out))``: each output position's input window as a column,
    for an already padded ``a`` of shape (N, C, *spatial); with ``positions_first`` as a row,
    ``(N, prod(n_out), C * prod(kernel))``."""
    n, c = a.shape[:2]
    idx = _im2col_index(c, a.shape[2:], kernel, stride, dilation, n_out, positions_first)
    flat = a.reshape(n, math.prod(a.shape[1:]))  # sizes spelled out: N may be 0
    shape = (c * math.prod(kernel), math.prod(n_out))
    return flat.take(idx, axis=1).reshape((n,) + (shape[::-1] if positions_first else shape))


def _conv(x: np.ndarray, w: np.ndarray, stride: tuple, padding: tuple, dilation: tuple,
          groups: int) -> np.ndarray:
    """Cross-correlation of ``x`` (N, C, *spatial) with ``w`` (O, C/groups, *kernel)."""
    kernel = w.shape[2:]
    x = _pad_or_crop(x, padding, padding)
    n_out = tuple((n - d * (k - 1) - 1) // s + 1
                  for n, k, s, d in zip(x.shape[2:], kernel, stride, dilation))
    n, o, g = x.shape[0], w.shape[0], groups
    rows = x.shape[1] // g * math.prod(kernel)  # one group's im2col rows
    cols = _im2col(x, kernel, stride, dilation, n_out).reshape(n, g, rows, math.prod(n_out))
    out = np.matmul(w.reshape(g, o // g, rows), cols)  # (N, G, O/G, prod(n_out))
    return out.reshape((n, o) + n_out)


@_index_cache
def _col2im_index(channels: int, n_in: tuple, kernel: tuple, stride: tuple, padding: tuple,
                  dilation: tuple, n_out: tuple) -> np.ndarray:
    """For contributions laid out (channels, *kernel, *n_in), flattened, with a zero appended:
    the entry that each (kernel offset, channel, *output position) reads, in that order (NOTE
    [im2col]). Input position p at offset k lands on ``p * stride + k * dilation - padding``;
    where no input position lands at some offset, the output position reads the zero."""
    nd = len(kernel)
    dims = 2 + nd  # (flat kernel offset, channel, *output position)
    k_all, p_all = math.prod(kernel), math.prod(n_in)
    offsets = np.unravel_index(np.arange(k_all), kernel)  # each flat offset's index per dimension
    src, ok = 0, True
    for i in range(nd):
        num = (_along(np.arange(n_out[i]) + padding[i], 2 + i, dims)
               - _along(offsets[i] * dilation[i], 0, dims))
        pos = num // stride[i]
        ok = ok & (num % stride[i] == 0) & (pos >= 0) & (pos < n_in[i])
        src = src * n_in[i] + pos
    chan = _along(np.arange(channels), 1, dims)
    src = (chan * k_all + _along(np.arange(k_all), 0, dims)) * p_all + src
    idx = np.where(ok, src, channels * k_all * p_all).ravel()
    idx.flags.writeable = False
    return idx


def _conv_transpose(x: np.ndarray, w: np.ndarray, stride: tuple, padding: tuple,
                    output_padding: tuple, dilation: tuple, groups: int) -> np.ndarray:
    """The adjoint of :func:`_conv` (``w`` is (C, O/groups, *kernel)): matmul, then col2im."""
    n, c, g = x.shape[0], x.shape[1], groups
    og, kernel = w.shape[1], w.shape[2:]
    k_all = math.prod(kernel)
    wt = w.reshape(g, c // g, og * k_all).swapaxes(1, 2)  # (G, O/G * prod(kernel), C/G)
    p_in = math.prod(x.shape[2:])
    # Per sample: what each input position adds at each kernel offset, and a zero after it.
    flat = np.empty((n, g * og * k_all * p_in + 1), np.result_type(w, x))
    flat[:, -1] = 0
    np.matmul(wt, x.reshape(n, g, c // g, p_in), out=flat[:, :-1].reshape(n, g, og * k_all, p_in))
    n_out = tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1 for i, k, s, p, d, op in zip(
        x.shape[2:], kernel, stride, padding, dilation, output_padding))
    idx = _col2im_index(g * og, x.shape[2:], kernel, stride, padding, dilation, n_out)
    out = flat.take(idx, axis=1).reshape(n, k_all, g * og * math.prod(n_out)).sum(axis=1)
    return out.reshape((n, g * og) + n_out)


def convolution_weight(input: np.ndarray, grad: np.ndarray, kernel: tuple, stride: tuple,
                       padding: tuple, dilation: tuple, groups: int) -> np.ndarray:
    """The gradient of :func:`_conv`'s weight, ``(O, C/groups, *kernel)``: for each group, the
    output gradient as (O/G, N * prod(n_out)) times ``input``'s im2col matrix with its rows as
    output positions, (N * prod(n_out), C/G * prod(kernel)): one matmul, summing over the batch
    and the positions at once (NOTE [im2col])."""
    n, c, o, g = input.shape[0], input.shape[1], grad.shape[1], groups
    n_out = grad.shape[2:]
    rows = n * math.prod(n_out)
    cols = _im2col(_pad_or_crop(input, padding, padding), kernel, stride, dilation, n_out,
                   positions_first=True).reshape(rows, g, c // g * math.prod(kernel))
    gy = grad.reshape(n, g, o // g, math.prod(n_out)).transpose(1, 2, 0, 3).reshape(
        g, o // g, rows)
    return np.matmul(gy, cols.transpose(1, 0, 2)).reshape((o, c // g) + tuple(kernel))


def convolution(input: np.ndarray, weight: np.ndarray, bias: Any = None, stride: Any = (1,),
                padding: Any = (0,), dilation: Any = (1,), transposed: bool = False,
                output_padding: Any = (0,), groups: int = 1) -> np.ndarray:
    nd = input.ndim - 2
    stride, padding, dilation = (_per_dim(v, nd) for v in (stride, padding, dilation))
    if transposed:
        out = _conv_transpose(input, weight, stride, padding, _per_dim(output_padding, nd),
                              dilation, groups)
    else:
        out = _conv(input, weight, stride, padding, dilation, groups)
    if bias is not None:
        out += bias.reshape((1, -1) + (1,) * nd)  # ``out`` is a fresh array
    return out.astype(input.dtype, copy=False)


def pool_out_size(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's ``pooling_output_shape``: with ``ceil_mode`` a last window may start in the
    right padding, but not beyond it."""
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool_geometry(a: np.ndarray, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                   ceil_mode: bool) -> tuple:
    k = _per_dim(kernel_size, 2)
    st = tuple(stride) if isinstance(stride, (tuple, list)) else (stride,)
    s = _per_dim(st, 2) if st and st[0] is not None else k  # () or None: the kernel size
    p, d = _per_dim(padding, 2), _per_dim(dilation, 2)
    n_out = tuple(pool_out_size(n, *args, ceil_mode) for n, *args in zip(a.shape[-2:], k, s, p, d))
    # Right padding so that the last (ceil_mode) window fits.
    hi = tuple(max((o - 1) * st + dd * (kk - 1) + 1 - n - pp, 0)
               for o, st, dd, kk, n, pp in zip(n_out, s, d, k, a.shape[-2:], p))
    return k, s, p, d, n_out, hi


@_index_cache
def _pool_positions(size: tuple, k: tuple, s: tuple, p: tuple, d: tuple, n_out: tuple, hi: tuple
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """For 2-d pooling windows over a (h, w) plane padded by ``p`` and ``hi``: the im2col index
    into the padded plane, in (kernel offset, output position) order; in the unpadded plane
    (flat positions), where each window starts and where each kernel offset is from the start;
    shape (kh * kw, n_out, 1): whether an entry is inside the plane (None: no padding)."""
    h, w = size
    idx = _im2col_index(1, (h + p[0] + hi[0], w + p[1] + hi[1]), k, s, d, n_out)
    start = ((np.arange(n_out[0])[:, None] * s[0] - p[0]) * w
             + np.arange(n_out[1]) * s[1] - p[1]).ravel()
    offset = (np.arange(k[0])[:, None] * (d[0] * w) + np.arange(k[1]) * d[1]).ravel()
    inside = None
    if any(p) or any(hi):
        rows = np.arange(k[0])[:, None, None, None] * d[0] + _along(
            np.arange(n_out[0]) * s[0] - p[0], 2, 4)
        cols = np.arange(k[1])[None, :, None, None] * d[1] + np.arange(n_out[1]) * s[1] - p[1]
        inside = ((rows >= 0) & (rows < h) & (cols >= 0) & (cols < w)).reshape(
            k[0] * k[1], -1, 1)
    start, offset = start.astype(np.int64), offset.astype(np.int64)
    for table in (start, offset, inside):
        if table is not None:
            table.flags.writeable = False
    return idx, start, offset, inside


def _pool_windows(padded: np.ndarray, idx: np.ndarray, n_k: int, n_pos: int) -> np.ndarray:
    """``(kh * kw, n_out positions, planes)``: every window's elements (NOTE [im2col])."""
    planes = math.prod(padded.shape[:-2])
    by_position = padded.reshape(planes, padded.shape[-2] * padded.shape[-1]).T
    return by_position.take(idx, axis=0).reshape(n_k, n_pos, planes)


def _planes_first(a: np.ndarray, lead: tuple, n_out: tuple) -> np.ndarray:
    """A pooled (output position, plane) array in the input's layout, (*lead, *n_out)."""
    return np.ascontiguousarray(a.T).reshape(lead + n_out)


def max_pool2d_with_indices(a: np.ndarray, kernel_size: Any, stride: Any = (), padding: Any = 0,
                            dilation: Any = 1, ceil_mode: bool = False
                            ) -> tuple[np.ndarray, np.ndarray]:
    """Each window's maximum and the position of its first maximum in the input's H*W plane
    (when a window holds NaN: NaN and its last NaN, as PyTorch's kernel); padding is never
    picked. The windows are gathered as in NOTE [im2col] but laid out (kernel offset, output
    position, plane), so that every step below is a whole-array pass over contiguous memory:
    NumPy's ``argmax`` along a short axis or a masked assignment costs several times more."""
    k, s, p, d, n_out, hi = _pool_geometry(a, kernel_size, stride, padding, dilation, ceil_mode)
    low = -np.inf if a.dtype.kind == "f" else np.iinfo(a.dtype).min
    padded = _pad_or_crop(a, p, hi, low)
    lead, (h, w) = a.shape[:-2], a.shape[-2:]
    n_k, n_pos = k[0] * k[1], n_out[0] * n_out[1]
    idx, start, offset, inside = _pool_positions((h, w), k, s, p, d, n_out, hi)
    win = _pool_windows(padded, idx, n_k, n_pos)
    values = win.max(axis=0)  # NaN wins, as in PyTorch
    # The first offset holding the maximum: n_k minus the largest score (n_k - offset number)
    # among the offsets whose element equals it (small unsigned integers: cheap passes).
    score = np.min_scalar_type(n_k).type
    best, hit = np.zeros(values.shape, score), np.empty(values.shape, bool)
    for kk in range(n_k):
        np.equal(win[kk], values, out=hit)
        if inside is not None:
            hit &= inside[kk]
        np.maximum(best, hit.view(np.uint8) * score(n_k - kk), out=best)
    first = score(n_k) - best
    if a.dtype.kind == "f" and np.isnan(values).any():  # the last NaN: score = offset number + 1
        last = np.zeros(values.shape, score)
        for kk in range(n_k):
            np.maximum(last, np.isnan(win[kk]).view(np.uint8) * score(kk + 1), out=last)
        first = np.where(last > 0, last - score(1), first)
    index = offset.take(first.T) + start  # transposed as uint8, the cheapest to move
    return _planes_first(values, lead, n_out), index.reshape(lead + n_out)


def max_pool2d_with_indices_backward(grad_output: np.ndarray, self: np.ndarray, indices: Any
                                     ) -> np.ndarray:
    """Each output gradient added at its maximum's position (a flat index into H*W)."""
    idx = arr(indices)
    hw = self.shape[-2] * self.shape[-1]
    planes = math.prod(self.shape[:-2])
    flat = (np.arange(planes)[:, None] * hw + idx.reshape(planes, idx.size // max(planes, 1))
            ).ravel()
    out = np.zeros(planes * hw, grad_output.dtype)
    np.add.at(out, flat, grad_output.ravel())  # overlapping windows may share a maximum
    return out.reshape(self.shape)


def max_pool3d_with_indices(a: np.ndarray, kernel_size: tuple = (), stride: tuple = (),
                            padding: tuple = (0, 0, 0), dilation: tuple = (1, 1, 1),
                            ceil_mode: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Each window's maximum over the last three dimensions and its flat position in the
    input's D*H*W volume, as PyTorch's CPU kernel scans a window: the first maximum, or the
    last NaN when there is one; padding is never picked. ``stride`` () is the kernel size.
    The windows are gathered whole, (*lead, *n_out, kd * kh * kw): plain, not fast."""
    st = tuple(stride) or tuple(kernel_size)
    sizes = a.shape[-3:]
    coords, valid, starts = [], [], []
    for i, (n, k, s, p, d) in enumerate(zip(sizes, kernel_size, st, padding, dilation)):
        n_out = pool_out_size(n, k, s, p, d, ceil_mode)
        c = (np.arange(n_out) * s - p)[:, None] + np.arange(k) * d  # (n_out, k) positions
        shape = [1] * 6
        shape[i], shape[3 + i] = n_out, k
        coords.append(c.reshape(shape))
        valid.append(((c >= 0) & (c < n)).reshape(shape))
        # the first position not in the left padding: PyTorch's index for a window that
        # holds no input at all (a dilated window over padding only)
        first_in = np.where(c[:, 0] < 0, c[:, 0] + -(c[:, 0] // d) * d, c[:, 0])
        starts.append(first_in.reshape([n_out if j == i else 1 for j in range(3)]))
    inside = valid[0] & valid[1] & valid[2]
    clipped = [np.clip(c, 0, n - 1) for c, n in zip(coords, sizes)]
    lead = a.shape[:-3]
    win = a[(Ellipsis, *clipped)]  # (*lead, od, oh, ow, kd, kh, kw)
    n_out, n_k = win.shape[len(lead):len(lead) + 3], math.prod(kernel_size)
    win = win.reshape(lead + n_out + (n_k,))
    inside = np.broadcast_to(inside, n_out + tuple(kernel_size)).reshape(n_out + (n_k,))
    low = -np.inf if a.dtype.kind == "f" else np.iinfo(a.dtype).min
    win = np.where(inside, win, np.asarray(low, a.dtype))
    values = win.max(axis=-1)  # NaN wins
    first = np.argmax((win == values[..., None]) & inside, axis=-1)
    if a.dtype.kind == "f":
        nan = np.isnan(win)
        last_nan = win.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
        first = np.where(nan.any(-1), last_nan, first)
    h, w = sizes[1], sizes[2]
    flat = np.broadcast_to((clipped[0] * h + clipped[1]) * w + clipped[2],
                           n_out + tuple(kernel_size)).reshape(n_out + (n_k,))
    index = np.take_along_axis(np.broadcast_to(flat, win.shape), first[..., None], -1)[..., 0]
    empty = ~inside.any(-1)
    if empty.any():
        index = np.where(empty, (starts[0] * h + starts[1]) * w + starts[2], index)
    return np.ascontiguousarray(values), np.ascontiguousarray(index.astype(np.int64))


def max_pool3d_with_indices_backward(grad_output: np.ndarray, self: np.ndarray, indices: Any
                                     ) -> np.ndarray:
    """Each output gradient added at its maximum's position (a flat index into D*H*W)."""
    idx = arr(indices)
    volume = math.prod(self.shape[-3:])
    planes = math.prod(self.shape[:-3])
    idx = idx.reshape(planes, idx.size // max(planes, 1))
    # a window over padding only points past its volume (PyTorch's kernel then writes out of
    # bounds): its gradient is dropped
    kept = (idx < volume).ravel()
    flat = (np.arange(planes)[:, None] * volume + idx).ravel()
    out = np.zeros(planes * volume, grad_output.dtype)
    np.add.at(out, flat[kept], grad_output.ravel()[kept])  # overlapping windows may share one
    return out.reshape(self.shape)


def _avg_divisor(a: np.ndarray, k: tuple, s: tuple, p: tuple, n_out: tuple,
                 count_include_pad: bool, divisor_override: Any) -> Any:
    """Per output position, what its window's sum is divided by (PyTorch's avg_pool2d)."""
    if divisor_override:
        return divisor_override
    sizes = []
    for n, kk, st, pp, o in zip(a.shape[-2:], k, s, p, n_out):
        start = np.arange(o) * st - pp
        end = np.minimum(start + kk, n + pp)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, n)
        sizes.append(end - start)
    return (sizes[0][:, None] * sizes[1][None, :]).astype(a.dtype)


def avg_pool2d(a: np.ndarray, kernel_size: Any, stride: Any = (), padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: Any = None) -> np.ndarray:
    k, s, p, d, n_out, hi = _pool_geometry(a, kernel_size, stride, padding, 1, ceil_mode)
    idx = _pool_positions(a.shape[-2:], k, s, p, d, n_out, hi)[0]
    sums = _pool_windows(_pad_or_crop(a, p, hi), idx, k[0] * k[1], n_out[0] * n_out[1]).sum(0)
    out = _planes_first(sums, a.shape[:-2], n_out) / _avg_divisor(
        a, k, s, p, n_out, count_include_pad, divisor_override)
    return out.astype(a.dtype, copy=False)


def avg_pool2d_backward(grad_output: np.ndarray, self: np.ndarray, kernel_size: Any,
                        stride: Any = (), padding: Any = 0, ceil_mode: bool = False,
                        count_include_pad: bool = True, divisor_override: Any = None
                        ) -> np.ndarray:
    """Each output gradient, divided like its window's sum, spread over the window: one strided
    add per kernel offset (kh * kw of them), never a loop over pixels."""
    k, s, p, d, n_out, hi = _pool_geometry(self, kernel_size, stride, padding, 1, ceil_mode)
    g = grad_output / _avg_divisor(self, k, s, p, n_out, count_include_pad, divisor_override)
    h, w = self.shape[-2:]
    out = np.zeros(self.shape[:-2] + (h + p[0] + hi[0], w + p[1] + hi[1]), grad_output.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            out[..., i:i + (n_out[0] - 1) * s[0] + 1:s[0],
                j:j + (n_out[1] - 1) * s[1] + 1:s[1]] += g
    return np.ascontiguousarray(out[..., p[0]:p[0] + h, p[1]:p[1] + w])


def _adaptive_matrix(n_in: int, n_out: int, dt: np.dtype) -> np.ndarray:
    """(n_out, n_in): row i averages PyTorch's adaptive window [floor(i*n/o), ceil((i+1)*n/o))."""
    i = np.arange(n_out)
    start, end = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
    cols = np.arange(n_in)
    inside = (cols >= start[:, None]) & (cols < end[:, None])
    return (inside / (end - start)[:, None]).astype(dt)


def adaptive_avg_pool2d(a: np.ndarray, output_size: tuple) -> np.ndarray:
    # A window's mean is a mean of row means: the pooling is separable, two small matmuls.
    mh = _adaptive_matrix(a.shape[-2], output_size[0], a.dtype)
    mw = _adaptive_matrix(a.shape[-1], output_size[1], a.dtype)
    return np.einsum("...hw,ih,jw->...ij", a, mh, mw, optimize=True)


def adaptive_avg_pool2d_backward(grad_output: np.ndarray, self: np.ndarray) -> np.ndarray:
    mh = _adaptive_matrix(self.shape[-2], grad_output.shape[-2], grad_output.dtype)
    mw = _adaptive_matrix(self.shape[-1], grad_output.shape[-1], grad_output.dtype)
    return np.einsum("...ij,ih,jw->...hw", grad_output, mh, mw, optimize=True)


def native_batch_norm(input: np.ndarray, weight: Any, bias: Any, running_mean: Any = None,
                      running_var: Any = None, training: bool = False, momentum: float = 0.1,
                      eps: float = 1e-5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(y, save_mean, save_invstd)``; in training the running statistics are updated in place
    (as PyTorch's kernel does, without bumping their version); in evaluation the saved
    statistics are empty and the running ones normalize."""
    axes = (0,) + tuple(range(2, input.ndim))
    shape = (1, -1) + (1,) * (input.ndim - 2)
    rm, rv = arr(running_mean), arr(running_var)
    if training:
        mean = input.mean(axis=axes)
        var = ((input - mean.reshape(shape)) ** 2).mean(axis=axes)
        invstd = 1 / np.sqrt(var + eps)
        n = input.size // input.shape[1]
        if rm is not None:
            rm[...] = (1 - momentum) * rm + momentum * mean
        if rv is not None:
            rv[...] = (1 - momentum) * rv + momentum * var * (n / (n - 1))
        out = (input - mean.reshape(shape)) * invstd.reshape(shape)
        save_mean, save_invstd = mean.astype(input.dtype), invstd.astype(input.dtype)
    else:
        out = (input - rm.reshape(shape)) / np.sqrt(rv.reshape(shape) + eps)
        save_mean = save_invstd = np.zeros(0, input.dtype)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out.astype(input.dtype, copy=False), save_mean, save_invstd


def constant_pad_nd(a: np.ndarray, pad: tuple, value: float = 0) -> np.ndarray:
    """``pad`` lists (before, after) pairs from the last dimension backwards; negative crops."""
    pairs = [(pad[i], pad[i + 1]) for i in range(0, len(pad), 2)][::-1]
    lo, hi = tuple(x for x, _ in pairs), tuple(y for _, y in pairs)
    return np.ascontiguousarray(_pad_or_crop(a, lo, hi, value))


# -- more ops (opsselect) --------------------------------------------------------------------------
# Sorting and selection order as PyTorch's CPU kernels: NaN counts as the largest value (last in
# ascending order, first in descending order), and equal values keep their input order.
def _order(a: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """Indices that sort ``a`` along ``dim``, stably, NaN largest."""
    if not descending:
        return np.argsort(a, axis=dim, kind="stable")
    # Descending and still stable: sort the reversed array ascending and read it backwards.
    n = a.shape[dim]
    rev = np.flip(np.argsort(np.flip(a, dim), axis=dim, kind="stable"), dim)
    return (n - 1) - rev


def sort(a: np.ndarray, dim: int = -1, descending: bool = False) -> tuple:
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    idx = _order(a, dim, descending)
    return np.take_along_axis(a, idx, axis=dim), idx.astype(np.int64)


def sort_stable(a: np.ndarray, stable: Any = None, dim: int = -1, descending: bool = False
                ) -> tuple:
    return sort(a, dim, descending)  # gradviz's sort is always stable


def topk(a: np.ndarray, k: int, dim: int = -1, largest: bool = True, sorted: bool = True  # noqa: A002
         ) -> tuple:
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    idx = _order(a, dim, largest)
    idx = slice_dim(idx, dim, 0, k)
    return np.take_along_axis(a, idx, axis=dim), idx.astype(np.int64)


def kthvalue(a: np.ndarray, k: int, dim: int = -1, keepdim: bool = False) -> tuple:
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    idx = slice_dim(_order(a, dim, False), dim, k - 1, k)
    values = np.take_along_axis(a, idx, axis=dim)
    if not keepdim:
        values, idx = np.squeeze(values, dim), np.squeeze(idx, dim)
    return values, idx.astype(np.int64)


def median(a: np.ndarray) -> np.ndarray:
    """The lower of the two middle values; NaN if any element is NaN (or there are none)."""
    flat = a.reshape(-1)
    if flat.size == 0:
        # PyTorch's NaN, cast to an integer dtype as x86 casts it: the type's minimum.
        return np.asarray(np.nan if a.dtype.kind == "f" else np.iinfo(a.dtype).min, a.dtype)
    if a.dtype.kind == "f" and np.isnan(flat).any():
        return np.asarray(np.nan, a.dtype)
    return np.asarray(np.sort(flat, kind="stable")[(flat.size - 1) // 2])


def median_dim(a: np.ndarray, dim: int, keepdim: bool = False) -> tuple:
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    n = a.shape[dim]
    idx = _order(a, dim, False)
    pos = np.full(np.delete(a.shape, dim), (n - 1) // 2)
    if a.dtype.kind == "f":
        # A slice with NaN has median NaN, at its first NaN (NaNs sort last, in input order).
        nans = np.isnan(a).sum(axis=dim)
        pos = np.where(nans > 0, n - nans, pos)
    idx = np.take_along_axis(idx, np.expand_dims(pos, dim), axis=dim)
    values = np.take_along_axis(a, idx, axis=dim)
    if not keepdim:
        values, idx = np.squeeze(values, dim), np.squeeze(idx, dim)
    return values, idx.astype(np.int64)


def nanmedian(a: np.ndarray) -> np.ndarray:
    """The lower of the two middle values of the elements that are not NaN (NaN if none)."""
    if a.dtype.kind != "f":
        return median(a)  # no NaN to skip
    flat = a.reshape(-1)
    flat = flat[~np.isnan(flat)]
    if flat.size == 0:
        return np.asarray(np.nan, a.dtype)
    return np.asarray(np.sort(flat, kind="stable")[(flat.size - 1) // 2])


def nanmedian_dim(a: np.ndarray, dim: int, keepdim: bool = False) -> tuple:
    """``median_dim`` skipping NaN: the lower middle of each slice's numbers, at its index (a
    slice of NaN only gives NaN at its first index; PyTorch's index there is whatever its
    selection algorithm leaves, not a documented choice)."""
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    idx = _order(a, dim, False)  # NaNs sort last
    numbers = a.shape[dim] - (np.isnan(a).sum(axis=dim) if a.dtype.kind == "f" else 0)
    pos = np.maximum(numbers - 1, 0) // 2
    idx = np.take_along_axis(idx, np.expand_dims(pos, dim), axis=dim)
    values = np.take_along_axis(a, idx, axis=dim)
    if not keepdim:
        values, idx = np.squeeze(values, dim), np.squeeze(idx, dim)
    return values, idx.astype(np.int64)


def cumprod(a, dim):
    if a.ndim == 0:
        return a.astype(np.int64) if a.dtype.kind in "iub" else a.copy()
    out = np.cumprod(a, axis=dim)
    return out.astype(np.int64) if a.dtype.kind in "iub" else out


def _cum_extreme(a: np.ndarray, dim: int, better: Any) -> tuple:
    """Running max/min along ``dim`` with the index it came from: a later equal value takes the
    index over, and NaN, once met, stays (as PyTorch's cummax/cummin)."""
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    x = np.moveaxis(a, dim, 0)
    values, idx = np.empty_like(x), np.zeros(x.shape, np.int64)
    for i in range(x.shape[0]):
        if i == 0:
            values[0], idx[0] = x[0], 0
            continue
        cur, new = values[i - 1], x[i]
        if x.dtype.kind == "f":
            take = np.isnan(new) | (~np.isnan(cur) & better(new, cur))
        else:
            take = better(new, cur)
        values[i] = np.where(take, new, cur)
        idx[i] = np.where(take, i, idx[i - 1])
    return np.moveaxis(values, 0, dim), np.moveaxis(idx, 0, dim)


def cummax(a: np.ndarray, dim: int) -> tuple:
    return _cum_extreme(a, dim, np.greater_equal)


def cummin(a: np.ndarray, dim: int) -> tuple:
    return _cum_extreme(a, dim, np.less_equal)


def tril(a, diagonal=0):
    return np.tril(a, diagonal)


def triu(a, diagonal=0):
    return np.triu(a, diagonal)


def diagonal(a: np.ndarray, offset: int = 0, dim1: int = 0, dim2: int = 1) -> np.ndarray:
    """The diagonal as a writable view (NumPy's own ``diagonal`` is read-only), its entries on
    the last dimension."""
    d = np.diagonal(a, offset, dim1, dim2)
    if not a.flags.writeable:
        return d
    # Start at the diagonal's first element, then walk it with NumPy's own strides.
    start = [slice(None)] * a.ndim
    if d.shape[-1]:
        start[dim1 if offset < 0 else dim2] = slice(abs(offset), None)
    base = a[tuple(start)]
    return np.lib.stride_tricks.as_strided(base, d.shape, d.strides, writeable=True)


def diagonal_copy(a: np.ndarray, offset: int = 0, dim1: int = 0, dim2: int = 1) -> np.ndarray:
    return np.diagonal(a, offset, dim1, dim2).copy()


def diagonal_backward(g: np.ndarray, input_sizes: tuple, offset: int, dim1: int, dim2: int
                      ) -> np.ndarray:
    out = np.zeros(input_sizes, g.dtype)
    diagonal(out, offset, dim1, dim2)[...] = g
    return out


def diag_embed(a: np.ndarray, offset: int = 0, dim1: int = -2, dim2: int = -1) -> np.ndarray:
    """Zeros with ``a``'s last dimension written on the diagonal of output dims ``dim1, dim2``
    (both already non-negative, in the output's numbering)."""
    n = a.shape[-1] + abs(offset)
    lead = list(a.shape[:-1])
    shape = []
    for d in range(len(lead) + 2):
        shape.append(n if d in (dim1, dim2) else lead.pop(0))
    out = np.zeros(shape, a.dtype)
    diagonal(out, offset, dim1, dim2)[...] = a
    return out


def roll(a, shifts, dims):
    if a.ndim == 0 or a.size == 0:
        return a.copy()
    return np.roll(a, shifts, axis=dims if dims else None)


def take(a: np.ndarray, index: Any) -> np.ndarray:
    return np.take(a.reshape(-1), arr(index))


def masked_select(a: np.ndarray, mask: Any) -> np.ndarray:
    a_b, m_b = np.broadcast_arrays(a, arr(mask))
    return a_b[m_b]


def nonzero(a: np.ndarray) -> np.ndarray:
    return np.argwhere(a).astype(np.int64)


def linalg_cross(a, b, dim=-1):
    return np.cross(a, b, axis=dim)


# -- more (nnact) ------------------------------------------------------------------------------
# The forwards of the activation and loss rows torch.nn.functional added last (hardtanh ...
# soft_margin_loss). Each keeps its input's dtype, as PyTorch's kernels do.
def hardtanh(a: np.ndarray, min_val: float = -1.0, max_val: float = 1.0) -> np.ndarray:
    return np.clip(a, min_val, max_val).astype(a.dtype, copy=False)


def mish(a: np.ndarray) -> np.ndarray:
    return (a * np.tanh(np.logaddexp(0, a))).astype(a.dtype, copy=False)


def prelu(a: np.ndarray, weight: np.ndarray) -> np.ndarray:
    return np.where(a > 0, a, weight * a).astype(a.dtype, copy=False)


def glu(a: np.ndarray, dim: int = -1) -> np.ndarray:
    first, second = np.split(a, 2, axis=_glu_dim(dim))
    return (first * sigmoid(second)).astype(a.dtype, copy=False)


def _glu_dim(dim: int) -> int:
    """PyTorch's GluBackward0 shows its int64 ``dim`` read as unsigned (-1 is 2**64 - 1): the
    row keeps that number; this is the signed dimension back."""
    return dim - 2**64 if dim >= 2**63 else dim


def hardswish(a: np.ndarray) -> np.ndarray:
    return (a * np.clip(a + 3, 0, 6) / 6).astype(a.dtype, copy=False)


def hardsigmoid(a: np.ndarray) -> np.ndarray:
    return (np.clip(a + 3, 0, 6) / 6).astype(a.dtype, copy=False)


def log_sigmoid(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(log(sigmoid(a)), buffer)``: PyTorch's CPU kernel keeps ``exp(-|a|)`` as ``buffer``
    and computes ``min(a, 0) - log1p(buffer)``, which never overflows."""
    buffer = np.exp(-np.abs(a))
    return (np.minimum(a, 0) - np.log1p(buffer)).astype(a.dtype, copy=False), buffer


def softshrink(a: np.ndarray, lambd: float = 0.5) -> np.ndarray:
    out = np.where(a > lambd, a - lambd, np.where(a < -lambd, a + lambd, 0))
    return out.astype(a.dtype, copy=False)


def hardshrink(a: np.ndarray, lambd: float = 0.5) -> np.ndarray:
    return np.where((a >= -lambd) & (a <= lambd), 0, a).astype(a.dtype, copy=False)


def threshold(a: np.ndarray, threshold: float, value: float) -> np.ndarray:
    return np.where(a > threshold, a, value).astype(a.dtype, copy=False)


def threshold_backward(g: np.ndarray, a: np.ndarray, threshold: float) -> np.ndarray:
    """``g`` where ``a`` is above ``threshold``, else 0 (threshold's and relu's gradient)."""
    return np.where(a <= threshold, 0, g).astype(g.dtype, copy=False)


def smooth_l1_loss(a: np.ndarray, target: np.ndarray, reduction: int = 1, beta: float = 1.0
                   ) -> np.ndarray:
    z = np.abs(a - target)
    return reduce(np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta).astype(a.dtype),
                  reduction)


def huber_loss(a: np.ndarray, target: np.ndarray, reduction: int = 1, delta: float = 1.0
               ) -> np.ndarray:
    z = np.abs(a - target)
    return reduce(np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)).astype(a.dtype),
                  reduction)


def soft_margin_loss(a: np.ndarray, target: Any, reduction: int = 1) -> np.ndarray:
    return reduce(np.logaddexp(0, -arr(target) * a).astype(a.dtype), reduction)


def celu(a: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """``max(0, a) + min(0, alpha * (exp(a / alpha) - 1))``: PyTorch runs elu's kernel with
    ``input_scale = 1 / alpha``."""
    return elu(a, alpha, 1, 1 / alpha)


def norm_dim(a: np.ndarray, p: float = 2.0, dim: tuple = (), keepdim: bool = False
             ) -> np.ndarray:
    """``at::norm(self, p, dim, keepdim)``, the vector norm that ``pairwise_distance`` calls."""
    return vector_norm(a, p, dim, keepdim)


def sub_scalar(a: np.ndarray, other: float, alpha: float = 1) -> np.ndarray:
    return a - alpha * other


# -- more (nnmore) ---------------------------------------------------------------------------------
# The forwards of group norm, the reflection/replication pads, upsampling, pixel (un)shuffle,
# im2col/col2im, adaptive max pooling and _trilinear (nn.Bilinear). Index maps along one axis
# (a pad, a nearest or linear resampling) are applied as (n_out, n_in) matrices: the backward
# is the same product with the matrix transposed, so each op is one table and two directions.
def native_group_norm(input: np.ndarray, weight: Any, bias: Any, N: int = 0, C: int = 0,
                      HxW: int = 0, group: int = 1, eps: float = 1e-5
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(y, mean, rstd)``, the statistics of shape (N, group), each over a group's
    ``C / group * HxW`` elements (the variance biased)."""
    x = input.reshape(N, group, C // group * HxW)  # not -1: an empty batch has N = 0
    mean = x.mean(axis=2)
    centred = x - mean[..., None]
    rstd = 1 / np.sqrt((centred * centred).mean(axis=2) + eps)
    out = (centred * rstd[..., None]).reshape(input.shape)
    shape = (1, C) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    dt = input.dtype
    return out.astype(dt, copy=False), mean.astype(dt), rstd.astype(dt)


def _along_axes(a: np.ndarray, mats: tuple, transpose: bool = False) -> np.ndarray:
    """``a`` with the matrix ``mats[i]`` (n_out, n_in) applied along its ``i``-th of the last
    ``len(mats)`` axes (``transpose``: the matrices' transposes, the backward direction)."""
    nd = len(mats)
    for i, m in enumerate(mats):
        ax = a.ndim - nd + i
        m = m.astype(a.dtype, copy=False)
        a = np.moveaxis(np.moveaxis(a, ax, -1) @ (m if transpose else m.T), -1, ax)
    return np.ascontiguousarray(a)


def _index_matrix(index: np.ndarray, n_in: int) -> np.ndarray:
    """(len(index), n_in): row o is one-hot at ``index[o]`` (a gather as a matrix)."""
    m = np.zeros((len(index), n_in))
    m[np.arange(len(index)), index] = 1.0
    return m


def _pad_index(n: int, lo: int, hi: int, mode: str) -> np.ndarray:
    """Where each padded position reads from: mirrored without the edge (``reflect``) or the
    nearest edge (``replicate``); negative amounts crop."""
    i = np.arange(-lo, n + hi)
    if mode == "reflect":
        period = 2 * (n - 1)
        i = np.abs(i) % period if period else np.zeros_like(i)
        return np.where(i >= n, period - i, i)
    return np.clip(i, 0, n - 1)


def _pad_maps(shape: tuple, padding: tuple, mode: str) -> list[np.ndarray]:
    """One index map per padded dimension, first dimension first (``padding`` is PyTorch's
    order: the last dimension's (left, right) first)."""
    k = len(padding) // 2
    return [_pad_index(shape[len(shape) - k + i], padding[2 * (k - 1 - i)],
                       padding[2 * (k - 1 - i) + 1], mode) for i in range(k)]


def _pad_nd(a: np.ndarray, padding: tuple, mode: str) -> np.ndarray:
    maps = _pad_maps(a.shape, padding, mode)
    return np.ascontiguousarray(a[(Ellipsis,) + np.ix_(*maps)])


def _pad_nd_backward(grad: np.ndarray, self: np.ndarray, padding: tuple, mode: str
                     ) -> np.ndarray:
    maps = _pad_maps(self.shape, padding, mode)
    mats = tuple(_index_matrix(m, n) for m, n in zip(maps, self.shape[self.ndim - len(maps):]))
    return _along_axes(grad, mats, transpose=True)


def reflection_pad(a: np.ndarray, padding: tuple = ()) -> np.ndarray:
    return _pad_nd(a, padding, "reflect")


def reflection_pad_backward(grad_output: np.ndarray, self: np.ndarray, padding: tuple = ()
                            ) -> np.ndarray:
    return _pad_nd_backward(grad_output, self, padding, "reflect")


def replication_pad(a: np.ndarray, padding: tuple = ()) -> np.ndarray:
    return _pad_nd(a, padding, "replicate")


def replication_pad_backward(grad_output: np.ndarray, self: np.ndarray, padding: tuple = ()
                             ) -> np.ndarray:
    return _pad_nd_backward(grad_output, self, padding, "replicate")


def _nearest_index(n_in: int, n_out: int, scale: Any) -> np.ndarray:
    """PyTorch's ``nearest_idx``: ``floor(o * s)`` in float32 with ``s = 1 / scale`` (or
    ``n_in / n_out``), clamped to the last input position."""
    if n_out == n_in:
        return np.arange(n_out)
    if n_out == 2 * n_in:
        return np.arange(n_out) >> 1
    s = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
    return np.minimum(np.floor(np.arange(n_out, dtype=np.float32) * s).astype(np.int64),
                      n_in - 1)


def _nearest_exact_index(n_in: int, n_out: int, scale: Any) -> np.ndarray:
    """PyTorch's ``nearest_neighbor_exact_compute_source_index``: ``floor((o + 0.5) * s)`` in
    float32 with ``s = 1 / scale`` (or ``n_in / n_out``), clamped to the last input position:
    each output reads the input whose cell holds its centre."""
    s = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
    src = ((np.arange(n_out) + 0.5) * np.float64(s)).astype(np.float32)
    return np.minimum(np.floor(src).astype(np.int64), n_in - 1)


_CUBIC_A = -0.75  # PyTorch's (and OpenCV's) cubic convolution coefficient


def _cubic_matrix(n_in: int, n_out: int, align_corners: bool, scale: Any, dt: np.dtype
                  ) -> np.ndarray:
    """(n_out, n_in) weights of PyTorch's bicubic interpolation: Keys' cubic convolution with
    ``A = -0.75`` over the four inputs around the source position (``s * o`` with
    align_corners, else ``s * (o + 0.5) - 0.5``, not clamped), the indices clamped to the
    border (so a border input takes the weights of the positions beyond it)."""
    ft = np.float32 if dt == np.float32 else np.float64
    if align_corners:
        s = ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
        src = np.arange(n_out, dtype=ft) * s
    else:
        s = ft(1.0 / scale) if scale else ft(n_in) / ft(n_out)
        src = s * (np.arange(n_out, dtype=ft) + ft(0.5)) - ft(0.5)
    i0 = np.floor(src).astype(np.int64)
    t = src - i0.astype(ft)
    a = ft(_CUBIC_A)

    def near(x: np.ndarray) -> np.ndarray:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    m = np.zeros((n_out, n_in), ft)
    rows = np.arange(n_out)
    for k, w in enumerate((far(t + 1), near(t), near(1 - t), far(2 - t))):
        np.add.at(m, (rows, np.clip(i0 - 1 + k, 0, n_in - 1)), w)
    return m


def _linear_matrix(n_in: int, n_out: int, align_corners: bool, scale: Any, dt: np.dtype
                   ) -> np.ndarray:
    """(n_out, n_in) weights of PyTorch's linear interpolation (``area_pixel_compute_*``): the
    source position ``s * o`` (align_corners) or ``max(s * (o + 0.5) - 0.5, 0)``, computed in
    the input's float type, split between its two neighbours."""
    ft = np.float32 if dt == np.float32 else np.float64
    if n_out == n_in:  # PyTorch copies, whatever the scale says
        return np.eye(n_in, dtype=ft)
    if align_corners:
        s = ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
        src = np.arange(n_out, dtype=ft) * s
    else:
        s = ft(1.0 / scale) if scale else ft(n_in) / ft(n_out)
        src = np.maximum(s * (np.arange(n_out, dtype=ft) + ft(0.5)) - ft(0.5), ft(0))
    i0 = src.astype(np.int64)
    i1 = i0 + (i0 < n_in - 1)
    l1 = src - i0.astype(ft)
    m = np.zeros((n_out, n_in), ft)
    rows = np.arange(n_out)
    np.add.at(m, (rows, i0), ft(1) - l1)
    np.add.at(m, (rows, i1), l1)
    return m


def _upsample_mats(in_sizes: tuple, output_size: tuple, scales: tuple, mode: str,
                   align_corners: bool, dt: np.dtype) -> tuple:
    if mode in ("nearest", "nearest-exact"):
        index = _nearest_index if mode == "nearest" else _nearest_exact_index
        return tuple(_index_matrix(index(n, o, s), n)
                     for n, o, s in zip(in_sizes, output_size, scales))
    weights = _cubic_matrix if mode == "cubic" else _linear_matrix
    return tuple(weights(n, o, align_corners, s, dt)
                 for n, o, s in zip(in_sizes, output_size, scales))


def upsample_nearest(a: np.ndarray, output_size: tuple = (), scales: tuple = (),
                     mode: str = "nearest") -> np.ndarray:
    """Nearest-neighbour resampling of the last ``len(output_size)`` dimensions (a gather);
    ``mode='nearest-exact'`` rounds to the nearest centre."""
    nd = len(output_size)
    index = _nearest_index if mode == "nearest" else _nearest_exact_index
    maps = [index(n, o, s) for n, o, s in zip(a.shape[a.ndim - nd:], output_size, scales)]
    return np.ascontiguousarray(a[(Ellipsis,) + np.ix_(*maps)])


def upsample_nearest_backward(grad_output: np.ndarray, output_size: tuple = (),
                              input_size: tuple = (), scales: tuple = (),
                              mode: str = "nearest") -> np.ndarray:
    nd = len(output_size)
    mats = _upsample_mats(tuple(input_size[-nd:]), output_size, scales, mode, False,
                          grad_output.dtype)
    return _along_axes(grad_output, mats, transpose=True)


def upsample_linear(a: np.ndarray, output_size: tuple = (), align_corners: bool = False,
                    scales: tuple = (), mode: str = "linear") -> np.ndarray:
    """(Bi/tri)linear resampling of the last ``len(output_size)`` dimensions, separable;
    ``mode='cubic'`` the bicubic one."""
    nd = len(output_size)
    mats = _upsample_mats(a.shape[a.ndim - nd:], output_size, scales, mode, align_corners,
                          a.dtype)
    return _along_axes(a, mats).astype(a.dtype, copy=False)


def upsample_linear_backward(grad_output: np.ndarray, output_size: tuple = (),
                             input_size: tuple = (), align_corners: bool = False,
                             scales: tuple = (), mode: str = "linear") -> np.ndarray:
    nd = len(output_size)
    mats = _upsample_mats(tuple(input_size[-nd:]), output_size, scales, mode,
                          align_corners, grad_output.dtype)
    return _along_axes(grad_output, mats, transpose=True).astype(grad_output.dtype, copy=False)


def pixel_shuffle(a: np.ndarray, upscale_factor: int = 1) -> np.ndarray:
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r)."""
    r = upscale_factor
    *lead, c, h, w = a.shape
    x = a.reshape(tuple(lead) + (c // (r * r), r, r, h, w))
    n = len(lead)
    x = x.transpose(tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return np.ascontiguousarray(x).reshape(tuple(lead) + (c // (r * r), h * r, w * r))


def pixel_unshuffle(a: np.ndarray, downscale_factor: int = 1) -> np.ndarray:
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W), the inverse of :func:`pixel_shuffle`."""
    r = downscale_factor
    *lead, c, h, w = a.shape
    x = a.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    n = len(lead)
    x = x.transpose(tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return np.ascontiguousarray(x).reshape(tuple(lead) + (c * r * r, h // r, w // r))


def _unfold_out(size: tuple, kernel: tuple, dilation: tuple, padding: tuple, stride: tuple
                ) -> tuple:
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                 for n, k, d, p, s in zip(size, kernel, dilation, padding, stride))


def im2col(a: np.ndarray, kernel_size: tuple = (), dilation: tuple = (), padding: tuple = (),
           stride: tuple = ()) -> np.ndarray:
    """(N, C, H, W) -> (N, C * kh * kw, L): every window as a column (NOTE [im2col])."""
    batched = a.ndim == 4
    x = a if batched else a[None]
    n_out = _unfold_out(x.shape[2:], kernel_size, dilation, padding, stride)
    cols = _im2col(_pad_or_crop(x, padding, padding), kernel_size, stride, dilation, n_out)
    return np.ascontiguousarray(cols if batched else cols[0])


def col2im(a: np.ndarray, output_size: tuple = (), kernel_size: tuple = (),
           dilation: tuple = (), padding: tuple = (), stride: tuple = ()) -> np.ndarray:
    """(N, C * kh * kw, L) -> (N, C, H, W): each column added back at its window (overlaps
    sum), one strided add per kernel offset."""
    batched = a.ndim == 3
    x = a if batched else a[None]
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    oh, ow = _unfold_out(output_size, kernel_size, dilation, padding, stride)
    n, c = x.shape[0], x.shape[1] // (kh * kw)
    cols = x.reshape(n, c, kh, kw, oh, ow)
    h, w = output_size
    out = np.zeros((n, c, h + 2 * ph, w + 2 * pw), a.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, i * dh:i * dh + (oh - 1) * sh + 1:sh,
                j * dw:j * dw + (ow - 1) * sw + 1:sw] += cols[:, :, i, j]
    out = np.ascontiguousarray(out[:, :, ph:ph + h, pw:pw + w])
    return out if batched else out[0]


def adaptive_max_pool2d(a: np.ndarray, output_size: tuple = ()) -> tuple[np.ndarray, np.ndarray]:
    """Each adaptive window's maximum (windows as in :func:`adaptive_avg_pool2d`) and its
    first position in the H*W plane (a NaN wins)."""
    (h, w), (oh, ow) = a.shape[-2:], output_size
    lead = a.shape[:-2]
    values = np.empty(lead + (oh, ow), a.dtype)
    index = np.empty(lead + (oh, ow), np.int64)
    for i in range(oh):
        r0, r1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        for j in range(ow):
            c0, c1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            win = a[..., r0:r1, c0:c1].reshape(lead + (-1,))
            nan = np.isnan(win) if a.dtype.kind == "f" else np.zeros(win.shape, bool)
            k = np.where(nan.any(-1), nan.argmax(-1), win.argmax(-1))
            values[..., i, j] = np.take_along_axis(win, k[..., None], -1)[..., 0]
            index[..., i, j] = (r0 + k // (c1 - c0)) * w + c0 + k % (c1 - c0)
    return values, index


def trilinear(i1: np.ndarray, i2: np.ndarray, i3: np.ndarray, expand1: tuple = (),
              expand2: tuple = (), expand3: tuple = (), sumdim: tuple = (),
              unroll_dim: int = 1) -> np.ndarray:
    """``at::_trilinear``: each input unsqueezed at its ``expand`` dims, the three multiplied
    (broadcasting) and summed over ``sumdim``."""
    prod = (np.expand_dims(i1, expand1) * np.expand_dims(i2, expand2)
            * np.expand_dims(i3, expand3))
    return np.ascontiguousarray(prod.sum(axis=tuple(sumdim)))


# The upsampling rows' forwards, with PyTorch's argument names (its nodes save them by name).
def upsample_nearest1d(a: np.ndarray, output_size: tuple = (), scales: Any = None
                       ) -> np.ndarray:
    return upsample_nearest(a, output_size, (scales,))


def upsample_nearest1d_backward(grad_output: np.ndarray, output_size: tuple = (),
                                input_size: tuple = (), scales: Any = None) -> np.ndarray:
    return upsample_nearest_backward(grad_output, output_size, input_size, (scales,))


def upsample_nearest2d(a: np.ndarray, output_size: tuple = (), scales_h: Any = None,
                       scales_w: Any = None) -> np.ndarray:
    return upsample_nearest(a, output_size, (scales_h, scales_w))


def upsample_nearest2d_backward(grad_output: np.ndarray, output_size: tuple = (),
                                input_size: tuple = (), scales_h: Any = None,
                                scales_w: Any = None) -> np.ndarray:
    return upsample_nearest_backward(grad_output, output_size, input_size, (scales_h, scales_w))


def upsample_linear1d(a: np.ndarray, output_size: tuple = (), align_corners: bool = False,
                      scales: Any = None) -> np.ndarray:
    return upsample_linear(a, output_size, align_corners, (scales,))


def upsample_linear1d_backward(grad_output: np.ndarray, output_size: tuple = (),
                               input_size: tuple = (), align_corners: bool = False,
                               scales: Any = None) -> np.ndarray:
    return upsample_linear_backward(grad_output, output_size, input_size, align_corners,
                                    (scales,))


def upsample_bilinear2d(a: np.ndarray, output_size: tuple = (), align_corners: bool = False,
                        scales_h: Any = None, scales_w: Any = None) -> np.ndarray:
    return upsample_linear(a, output_size, align_corners, (scales_h, scales_w))


def upsample_bilinear2d_backward(grad_output: np.ndarray, output_size: tuple = (),
                                 input_size: tuple = (), align_corners: bool = False,
                                 scales_h: Any = None, scales_w: Any = None) -> np.ndarray:
    return upsample_linear_backward(grad_output, output_size, input_size, align_corners,
                                    (scales_h, scales_w))


def upsample_nearest_exact1d(a: np.ndarray, output_size: tuple = (), scales: Any = None
                             ) -> np.ndarray:
    return upsample_nearest(a, output_size, (scales,), "nearest-exact")


def upsample_nearest_exact1d_backward(grad_output: np.ndarray, output_size: tuple = (),
                                      input_size: tuple = (), scales: Any = None
                                      ) -> np.ndarray:
    return upsample_nearest_backward(grad_output, output_size, input_size, (scales,),
                                     "nearest-exact")


def upsample_nearest_exact2d(a: np.ndarray, output_size: tuple = (), scales_h: Any = None,
                             scales_w: Any = None) -> np.ndarray:
    return upsample_nearest(a, output_size, (scales_h, scales_w), "nearest-exact")


def upsample_nearest_exact2d_backward(grad_output: np.ndarray, output_size: tuple = (),
                                      input_size: tuple = (), scales_h: Any = None,
                                      scales_w: Any = None) -> np.ndarray:
    return upsample_nearest_backward(grad_output, output_size, input_size, (scales_h, scales_w),
                                     "nearest-exact")


def upsample_nearest_exact3d(a: np.ndarray, output_size: tuple = (), scales_d: Any = None,
                             scales_h: Any = None, scales_w: Any = None) -> np.ndarray:
    return upsample_nearest(a, output_size, (scales_d, scales_h, scales_w), "nearest-exact")


def upsample_nearest_exact3d_backward(grad_output: np.ndarray, output_size: tuple = (),
                                      input_size: tuple = (), scales_d: Any = None,
                                      scales_h: Any = None, scales_w: Any = None
                                      ) -> np.ndarray:
    return upsample_nearest_backward(grad_output, output_size, input_size,
                                     (scales_d, scales_h, scales_w), "nearest-exact")


def upsample_bicubic2d(a: np.ndarray, output_size: tuple = (), align_corners: bool = False,
                       scales_h: Any = None, scales_w: Any = None) -> np.ndarray:
    return upsample_linear(a, output_size, align_corners, (scales_h, scales_w), "cubic")


def upsample_bicubic2d_backward(grad_output: np.ndarray, output_size: tuple = (),
                                input_size: tuple = (), align_corners: bool = False,
                                scales_h: Any = None, scales_w: Any = None) -> np.ndarray:
    return upsample_linear_backward(grad_output, output_size, input_size, align_corners,
                                    (scales_h, scales_w), "cubic")


def upsample_trilinear3d(a: np.ndarray, output_size: tuple = (), align_corners: bool = False,
                         scales_d: Any = None, scales_h: Any = None, scales_w: Any = None
                         ) -> np.ndarray:
    return upsample_linear(a, output_size, align_corners, (scales_d, scales_h, scales_w))


def upsample_trilinear3d_backward(grad_output: np.ndarray, output_size: tuple = (),
                                  input_size: tuple = (), align_corners: bool = False,
                                  scales_d: Any = None, scales_h: Any = None,
                                  scales_w: Any = None) -> np.ndarray:
    return upsample_linear_backward(grad_output, output_size, input_size, align_corners,
                                    (scales_d, scales_h, scales_w))


def _avg_pool3d_geometry(shape: tuple, kernel_size: Any, stride: Any, padding: Any,
                         ceil_mode: bool, count_include_pad: bool, divisor_override: Any
                         ) -> tuple:
    """3-D average pooling's kernel, stride, padding, output size, right padding (for a last
    ceil_mode window) and, per output position, its divisor (as :func:`_avg_divisor`)."""
    k = _per_dim(kernel_size, 3)
    st = tuple(stride) if isinstance(stride, (tuple, list)) else (stride,)
    s = _per_dim(st, 3) if st and st[0] is not None else k
    p = _per_dim(padding, 3)
    n_out = tuple(pool_out_size(n, kk, ss, pp, 1, ceil_mode)
                  for n, kk, ss, pp in zip(shape, k, s, p))
    hi = tuple(max((o - 1) * ss + kk - n - pp, 0) for o, ss, kk, n, pp in zip(n_out, s, k, shape,
                                                                             p))
    if divisor_override:
        return k, s, p, n_out, hi, divisor_override
    sizes = []
    for n, kk, ss, pp, o in zip(shape, k, s, p, n_out):
        start = np.arange(o) * ss - pp
        end = np.minimum(start + kk, n + pp)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, n)
        sizes.append(end - start)
    divisor = sizes[0][:, None, None] * sizes[1][None, :, None] * sizes[2][None, None, :]
    return k, s, p, n_out, hi, divisor


def _window_slices(offset: tuple, n_out: tuple, stride: tuple) -> tuple:
    """The positions kernel offset ``offset`` reads for every output position: strided."""
    return (Ellipsis,) + tuple(slice(o, o + (n - 1) * s + 1, s)
                               for o, n, s in zip(offset, n_out, stride))


def avg_pool3d(a: np.ndarray, kernel_size: Any, stride: Any = (), padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: Any = None) -> np.ndarray:
    """The mean of each window of the last three dimensions: one strided add per kernel
    offset."""
    k, s, p, n_out, hi, divisor = _avg_pool3d_geometry(
        a.shape[-3:], kernel_size, stride, padding, ceil_mode, count_include_pad,
        divisor_override)
    padded = _pad_or_crop(a, p, hi)
    out = np.zeros(a.shape[:-3] + n_out, np.result_type(a.dtype, np.float32))
    for offset in np.ndindex(*k):
        out += padded[_window_slices(offset, n_out, s)]
    return (out / divisor).astype(a.dtype, copy=False)


def avg_pool3d_backward(grad_output: np.ndarray, self: np.ndarray, kernel_size: Any,
                        stride: Any = (), padding: Any = 0, ceil_mode: bool = False,
                        count_include_pad: bool = True, divisor_override: Any = None
                        ) -> np.ndarray:
    """Each output gradient, divided like its window's sum, spread over the window."""
    k, s, p, n_out, hi, divisor = _avg_pool3d_geometry(
        self.shape[-3:], kernel_size, stride, padding, ceil_mode, count_include_pad,
        divisor_override)
    g = grad_output / divisor
    d, h, w = self.shape[-3:]
    out = np.zeros(self.shape[:-3] + (d + p[0] + hi[0], h + p[1] + hi[1], w + p[2] + hi[2]),
                   grad_output.dtype)
    for offset in np.ndindex(*k):
        out[_window_slices(offset, n_out, s)] += g
    return np.ascontiguousarray(out[..., p[0]:p[0] + d, p[1]:p[1] + h, p[2]:p[2] + w])


# -- more (opsmore) -------------------------------------------------------------------------------
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


def rot90(a: np.ndarray, k: int = 1, dims: tuple = (0, 1)) -> np.ndarray:
    return np.rot90(a, k, axes=dims).copy()


def block_diag(*arrays: np.ndarray) -> np.ndarray:
    """The tensors (0-d as 1x1, 1-D as one row) on the diagonal of a matrix of zeros."""
    mats = [a.reshape(1, -1) if a.ndim < 2 else a for a in arrays]
    mats = [m.reshape(1, 1) if a.ndim == 0 else m for a, m in zip(arrays, mats, strict=True)]
    rows, cols = sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)
    out = np.zeros((rows, cols), _torch_result_type(*arrays))  # (float32 with int64: float32)
    r = c = 0
    for m in mats:
        out[r:r + m.shape[0], c:c + m.shape[1]] = m
        r, c = r + m.shape[0], c + m.shape[1]
    return out


def unfold(a: np.ndarray, dimension: int = 0, size: int = 1, step: int = 1) -> np.ndarray:
    """Every window of ``size`` along ``dimension``, ``step`` apart: that dimension becomes the
    window count and the window is a new last dimension (a copy; PyTorch's is a view)."""
    if a.ndim == 0:
        return a.reshape(1)[:size].copy()
    win = np.lib.stride_tricks.sliding_window_view(a, size, axis=dimension)
    idx = [slice(None)] * win.ndim
    idx[dimension] = slice(None, None, step)
    return win[tuple(idx)].copy()


def var_mean(a: np.ndarray, dim: tuple | None = None, correction: float | None = None,
             keepdim: bool = False) -> tuple:
    return (var(a, dim, correction, keepdim, "var_mean"),
            np.asarray(np.mean(a, axis=_axis(dim, a), keepdims=keepdim)))


def std_mean(a: np.ndarray, dim: tuple | None = None, correction: float | None = None,
             keepdim: bool = False) -> tuple:
    v, m = var_mean(a, dim, correction, keepdim)
    return np.sqrt(v), m


def logcumsumexp(a: np.ndarray, dim: int = 0) -> np.ndarray:
    if a.ndim == 0:
        return a.copy()
    # A running log-sum-exp, shifted by the running maximum so that nothing overflows.
    out = np.empty_like(a)
    src, dst = np.moveaxis(a, dim, 0), np.moveaxis(out, dim, 0)
    acc = src[0].copy()
    dst[0] = acc
    with np.errstate(invalid="ignore", over="ignore"):
        for i in range(1, src.shape[0]):
            hi, lo = np.maximum(acc, src[i]), np.minimum(acc, src[i])
            # exp(lo - hi) is NaN only when both are -inf (or inf): then the sum is hi
            acc = np.where(np.isneginf(hi) | (hi == lo) & np.isinf(hi), hi,
                           hi + np.log1p(np.exp(lo - hi)))
            dst[i] = acc
    return out


def nansum(a: np.ndarray, dim: tuple | None = None, keepdim: bool = False) -> np.ndarray:
    out = np.nansum(a, axis=_axis(dim, a), keepdims=keepdim)
    return np.asarray(out).astype(np.int64 if a.dtype.kind in "biu" else a.dtype, copy=False)


def aminmax(a: np.ndarray, dim: int | None = None, keepdim: bool = False) -> tuple:
    axis = None if dim is None or a.ndim == 0 else dim
    if dim is None and keepdim and a.ndim:  # all dims kept as 1s
        return (np.amin(a, axis=None, keepdims=True), np.amax(a, axis=None, keepdims=True))
    return (np.asarray(np.amin(a, axis=axis, keepdims=keepdim)),
            np.asarray(np.amax(a, axis=axis, keepdims=keepdim)))


def mode(a: np.ndarray, dim: int = -1, keepdim: bool = False) -> tuple:
    """The most frequent value along ``dim`` (the smallest of equally frequent ones, as
    PyTorch's sort-based kernel gives) and the index of its last occurrence."""
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    moved = np.moveaxis(a, dim, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    values = np.empty(flat.shape[0], a.dtype)
    indices = np.empty(flat.shape[0], np.int64)
    for r, row in enumerate(flat):
        uniq, counts = np.unique(row, return_counts=True)
        v = uniq[np.argmax(counts)]  # np.unique sorts: argmax takes the smallest of ties
        values[r] = v
        indices[r] = np.flatnonzero(row == v)[-1]
    shape = moved.shape[:-1]
    values, indices = values.reshape(shape), indices.reshape(shape)
    if keepdim:
        values, indices = np.expand_dims(values, dim), np.expand_dims(indices, dim)
    return values, indices


def count_nonzero(a: np.ndarray, dim: tuple | None = None) -> np.ndarray:
    return np.asarray(np.count_nonzero(a, axis=_axis(dim, a))).astype(np.int64)


def bincount(a: np.ndarray, weights: Any = None, minlength: int = 0) -> np.ndarray:
    w = None if weights is None else arr(weights)
    out = np.bincount(a, weights=w, minlength=minlength)
    if w is None:
        return out.astype(np.int64)
    # PyTorch: float weights keep their type; anything else counts in float64
    return out.astype(w.dtype if w.dtype.kind == "f" else np.float64)


def histc(a: np.ndarray, bins: int = 100, min: float = 0, max: float = 0  # noqa: A002
          ) -> np.ndarray:
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:  # PyTorch widens an empty range by 1 on each side
        lo, hi = lo - 1, hi + 1
    inside = a[(a >= lo) & (a <= hi)].astype(np.float64)
    # bin i holds [lo + i w, lo + (i+1) w); the top edge belongs to the last bin
    idx = np.minimum(((inside - lo) * bins / (hi - lo)).astype(np.int64), bins - 1)
    return np.bincount(idx, minlength=bins).astype(a.dtype)


def _dim_first(a: np.ndarray, dim: int) -> np.ndarray:
    """``a`` with ``dim`` moved first (a view; a 0-d tensor as one element)."""
    return a.reshape(1) if a.ndim == 0 else np.moveaxis(a, dim, 0)


def index_add(a: np.ndarray, source: np.ndarray, dim: int = 0, index: Any = None,
              alpha: Any = 1, source_dim: int = 0) -> np.ndarray:
    out = a.copy()
    src = _dim_first(np.asarray(source), dim) if np.ndim(source) else np.reshape(source, 1)
    np.add.at(_dim_first(out, dim), arr(index).reshape(-1), (src * alpha).astype(a.dtype))
    return out


def index_copy(a: np.ndarray, source: np.ndarray, dim: int = 0, index: Any = None,
               source_dim: int = 0) -> np.ndarray:
    out = a.copy()
    src = _dim_first(np.asarray(source), dim) if np.ndim(source) else np.reshape(source, 1)
    _dim_first(out, dim)[arr(index).reshape(-1)] = src  # a repeated index: the last copy wins
    return out


def index_fill(a: np.ndarray, dim: int = 0, index: Any = None, value: Any = 0) -> np.ndarray:
    out = a.copy()
    _dim_first(out, dim)[arr(index).reshape(-1)] = value
    return out


def index_fill_tensor(a: np.ndarray, value: np.ndarray, dim: int = 0, index: Any = None
                      ) -> np.ndarray:
    return index_fill(a, dim, index, value)


def _scatter_count(shape: tuple, dim: int, idx: np.ndarray) -> np.ndarray:
    """How many elements of ``src`` scatter_reduce sends to each position of the result."""
    # a 0-d result is counted as a 1-D tensor of one, as scatter_reduce runs it
    count = np.zeros(shape or (1,), np.int64)
    np.add.at(count, _grid(idx if shape else idx.reshape(1), dim), 1)
    return count.reshape(shape)


def scatter_reduce(a: np.ndarray, src: np.ndarray, dim: int = 0, index: Any = None,
                   reduce: str = "sum", include_self: bool = True) -> np.ndarray:
    idx = arr(index)
    shape = a.shape
    if a.ndim == 0:  # one element: as a 1-D tensor of one, reshaped back at the end
        a, src, idx = a.reshape(1), np.reshape(src, 1), idx.reshape(1)
    grid = _grid(idx, dim)
    part = src[tuple(slice(0, n) for n in idx.shape)]
    out = a.copy()
    if reduce in ("sum", "mean"):
        if not include_self:
            out[grid] = 0
        np.add.at(out, grid, part)
        if reduce == "mean":
            n = _scatter_count(a.shape, dim, idx) + (1 if include_self else 0)
            n = np.maximum(n, 1)
            out = (out // n if out.dtype.kind in "iu" else out / n).astype(a.dtype)
            out = np.where(_scatter_count(a.shape, dim, idx) > 0, out, a)
        return out.reshape(shape)
    ufunc = {"prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[reduce]
    if not include_self:  # start from the reduction's identity where anything arrives
        if reduce == "prod":
            out[grid] = 1
        else:
            big = np.inf if a.dtype.kind == "f" else np.iinfo(a.dtype).max
            out[grid] = -big if reduce == "amax" else big
    ufunc.at(out, grid, part)
    return out.reshape(shape)


def put(a: np.ndarray, source: np.ndarray, index: Any = None, accumulate: bool = False
        ) -> np.ndarray:
    flat = a.reshape(-1).copy()
    idx = arr(index).reshape(-1)
    values = np.asarray(source).reshape(-1)
    if accumulate:
        np.add.at(flat, idx, values)
    else:
        flat[idx] = values
    return flat.reshape(a.shape)


def searchsorted(sorted_sequence: np.ndarray, values: Any, right: bool = False,
                 out_int32: bool = False, sorter: Any = None) -> np.ndarray:
    """PyTorch's searchsorted: a 1-D ``sorted_sequence`` for all values, or one row per leading
    index (rows searched separately)."""
    side = "right" if right else "left"
    seq, vals = np.asarray(sorted_sequence), np.asarray(values)
    order = None if sorter is None else arr(sorter)
    if seq.ndim == 1:
        out = np.searchsorted(seq, vals, side=side, sorter=order)
    else:
        # The row count spelled out, not -1: an empty sequence has rows of length 0.
        n = math.prod(seq.shape[:-1])
        rows_s = seq.reshape(n, seq.shape[-1])
        rows_v = vals.reshape(n, vals.shape[-1])
        rows_o = None if order is None else order.reshape(n, order.shape[-1])
        out = np.zeros(rows_v.shape, dtype=np.int64)
        for i, (s, v) in enumerate(zip(rows_s, rows_v, strict=True)):
            out[i] = np.searchsorted(s, v, side=side, sorter=None if rows_o is None else rows_o[i])
        out = out.reshape(vals.shape)
    return np.asarray(out).astype(np.int32 if out_int32 else np.int64)


def bucketize(a: np.ndarray, boundaries: Any, out_int32: bool = False, right: bool = False
              ) -> np.ndarray:
    return searchsorted(arr(boundaries), a, right, out_int32)


def unique(a: np.ndarray, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> tuple:
    """``(values, inverse, counts)``, always sorted (as PyTorch's CPU kernel gives them)."""
    if dim is None:
        values, inverse, counts = np.unique(a.reshape(-1), return_inverse=True,
                                            return_counts=True)
        inverse = inverse.reshape(a.shape)
    else:
        values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True,
                                            axis=dim)
        inverse = inverse.reshape(-1)
    return values, inverse.astype(np.int64), counts.astype(np.int64)


def unique_consecutive(a: np.ndarray, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> tuple:
    """``(values, inverse, counts)``: each run of equal elements (or, with ``dim``, of equal
    slices along ``dim``) kept once, in order; NaN equals nothing, so each NaN is a run."""
    x = a.reshape(-1) if dim is None else np.moveaxis(a, dim, 0)
    n = x.shape[0]
    if dim is not None and n and 0 in x.shape:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    rows = x.reshape(n, int(np.prod(x.shape[1:])))
    starts = np.ones(n, bool)
    starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)  # a run starts where a slice changes
    values = x[starts] if dim is None else np.moveaxis(x[starts], 0, dim)
    inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), n))
    return (values, inverse.reshape(a.shape if dim is None else (n,)).astype(np.int64),
            counts.astype(np.int64))
# -- more (opsrand) -----------------------------------------------------------------------------
# The forwards of the random sampling rows (NOTE [random rows] in gradviz/ops/opinfo.py): each
# draws from gradviz's generator (`generator=`, else the default one) and checks its arguments
# with PyTorch's texts. Numbers in those texts print as C++ streams print a double (`{:g}`).

def _draw(generator: Any, fn: str) -> np.random.Generator:
    from gradviz import _factories  # the core layer's generator (the ops layer sits above it)

    return _factories.rng(generator, fn)


_P_IN_RANGE = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
               "message be improved?  If so, please report an enhancement request to PyTorch.)")


def _floating_only(kernel: str, a: np.ndarray) -> None:
    if a.dtype.kind != "f":
        raise _not_for(kernel, a.dtype)


def bernoulli(p: np.ndarray, generator: Any = None) -> np.ndarray:
    """``torch.bernoulli(p)``: 1 with probability ``p`` (each element), else 0, in p's dtype."""
    _floating_only("bernoulli_tensor_cpu_p_", p)
    if not np.all((p >= 0) & (p <= 1)):  # NaN fails too
        raise RuntimeError(_P_IN_RANGE)
    return (_draw(generator, "bernoulli").random(p.shape) < p).astype(p.dtype)


def bernoulli_p(a: np.ndarray, p: float = 0.5, generator: Any = None) -> np.ndarray:
    """``torch.bernoulli(input, p)`` and ``input.bernoulli_(p)``: 1 with probability ``p``
    (a number), else 0, in input's shape and dtype (any dtype, bool too)."""
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    return (_draw(generator, "bernoulli_").random(a.shape) < p).astype(a.dtype)


def bernoulli_tensor_(a: np.ndarray, p: np.ndarray, generator: Any = None) -> np.ndarray:
    """``input.bernoulli_(p)`` with a tensor ``p`` broadcast to input's shape."""
    _floating_only("bernoulli_tensor_cpu_p_", p)
    if p.ndim > a.ndim:
        raise RuntimeError(
            f"expand(gradviz.{_SCALAR_TYPE.get(p.dtype.name, p.dtype.name)}Tensor{{{list(p.shape)}"
            f"}}, size={list(a.shape)}): the number of sizes provided ({a.ndim}) must be greater "
            f"or equal to the number of dimensions in the tensor ({p.ndim})")
    lead = (1,) * (a.ndim - p.ndim) + p.shape
    for i, (n, m) in enumerate(zip(a.shape, lead)):
        if m not in (1, n):
            raise RuntimeError(
                f"The expanded size of the tensor ({n}) must match the existing size ({m}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(a.shape)}.  Tensor sizes: "
                f"{list(p.shape)}")
    if not np.all((p >= 0) & (p <= 1)):
        raise RuntimeError(_P_IN_RANGE)
    return (_draw(generator, "bernoulli_").random(a.shape) < p).astype(a.dtype)


def _standard_normal(shape: tuple, dt: np.dtype, generator: Any, fn: str) -> np.ndarray:
    return _draw(generator, fn).standard_normal(shape).astype(dt)


def normal_tensor_float(mean: np.ndarray, std: float = 1.0, generator: Any = None
                        ) -> np.ndarray:
    """``torch.normal(mean, std)`` with a number ``std``: ``mean + std * z``."""
    _floating_only("normal_kernel_cpu", mean)
    if not std >= 0.0:  # NaN fails too
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    z = _standard_normal(mean.shape, mean.dtype, generator, "normal")
    return (z * mean.dtype.type(std) + mean).astype(mean.dtype)


def normal_float_tensor(std: np.ndarray, mean: float = 0.0, generator: Any = None
                        ) -> np.ndarray:
    """``torch.normal(mean, std)`` with a number ``mean``: ``mean + std * z``."""
    _floating_only("normal_kernel_cpu", std)
    if not np.all(std >= 0.0):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    z = _standard_normal(std.shape, std.dtype, generator, "normal")
    return (z * std + std.dtype.type(mean)).astype(std.dtype)


def normal_tensor_tensor(mean: np.ndarray, std: np.ndarray, generator: Any = None
                         ) -> np.ndarray:
    """``torch.normal(mean, std)``, both tensors (broadcast): ``z * std + mean`` in mean's
    dtype, as PyTorch's ``normal_out_impl`` computes it."""
    _floating_only("normal_kernel_cpu", mean)
    _floating_only("normal_kernel_cpu", std)
    if not np.all(std >= 0.0):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    shape = np.broadcast_shapes(mean.shape, std.shape)
    z = _standard_normal(shape, mean.dtype, generator, "normal")
    return (z * std.astype(mean.dtype) + mean).astype(mean.dtype)


def poisson(rates: np.ndarray, generator: Any = None) -> np.ndarray:
    """``torch.poisson(rates)``: a Poisson count per element, in the rates' (float) dtype."""
    _floating_only("poisson_cpu", rates)
    if not np.all(rates >= 0):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    # NumPy refuses rates above ~9.2e18 (and inf), where PyTorch's sampler overflows to
    # INT64_MIN.
    big = ~np.isfinite(rates) | (rates >= 9.2e18)
    out = np.full(rates.shape, float(-2**63))
    out[~big] = _draw(generator, "poisson").poisson(rates[~big])
    return out.astype(rates.dtype)


def _continuous(name: str, a: np.ndarray, c_names: bool = False) -> None:
    if a.dtype.kind != "f":
        kind = (_C_TYPE.get(a.dtype.name, a.dtype.name) if c_names
                else _SCALAR_TYPE.get(a.dtype.name, a.dtype.name))
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {kind}")


# The C++ type names some of PyTorch's dtype errors print (cauchy_'s).
_C_TYPE = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
           "int32": "int", "int64": "long int", "float16": "c10::Half", "float32": "float",
           "float64": "double"}


def exponential(a: np.ndarray, lambd: float = 1.0, generator: Any = None) -> np.ndarray:
    """``input.exponential_(lambd)``: samples of density ``lambd * exp(-lambd * x)``."""
    _continuous("Exponential", a)
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _draw(generator, "exponential_").exponential(1.0 / lambd, a.shape).astype(a.dtype)


def geometric(a: np.ndarray, p: float, generator: Any = None) -> np.ndarray:
    """``input.geometric_(p)``: the number of Bernoulli(p) trials up to the first success
    (1, 2, ...); integer tensors too."""
    if a.dtype == np.bool_:
        raise _not_for("geometric_cpu", a.dtype)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    return _draw(generator, "geometric_").geometric(p, a.shape).astype(a.dtype)


def cauchy(a: np.ndarray, median: float = 0.0, sigma: float = 1.0, generator: Any = None
           ) -> np.ndarray:
    """``input.cauchy_(median, sigma)``: Cauchy (Lorentz) samples."""
    _continuous("Cauchy", a, c_names=True)
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    z = _draw(generator, "cauchy_").standard_cauchy(a.shape)
    return (median + sigma * z).astype(a.dtype)


def log_normal(a: np.ndarray, mean: float = 1.0, std: float = 2.0, generator: Any = None
               ) -> np.ndarray:
    """``input.log_normal_(mean, std)``: ``exp`` of normal samples of that mean and std."""
    _floating_only("log_normal_cpu", a)
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    return _draw(generator, "log_normal_").lognormal(mean, std, a.shape).astype(a.dtype)


def uniform(a: np.ndarray, from_: float = 0.0, to: float = 1.0, generator: Any = None
            ) -> np.ndarray:
    """``input.uniform_(from_, to)``: uniform samples from ``[from_, to)``."""
    _floating_only("check_uniform_bounds", a)
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_:g} > to={to:g}")
    return _draw(generator, "uniform_").uniform(from_, to, a.shape).astype(a.dtype)


def normal_fill(a: np.ndarray, mean: float = 0.0, std: float = 1.0, generator: Any = None
                ) -> np.ndarray:
    """``input.normal_(mean, std)``: normal samples."""
    _floating_only("normal_kernel_cpu", a)
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    return (_draw(generator, "normal_").standard_normal(a.shape) * std + mean).astype(a.dtype)


def random_fill(a: np.ndarray, low: int = 0, high: int = 1, generator: Any = None
                ) -> np.ndarray:
    """``input.random_(...)``: integers drawn uniformly from ``[low, high)`` (bounds checked by
    the method, gradviz/ops/methods.py)."""
    return _draw(generator, "random_").integers(low, high, a.shape).astype(a.dtype)


# -- more (einlin): linear algebra. NumPy's LAPACK does the factorizations; what PyTorch returns
# beside them (LU and pivots, info) is computed here in PyTorch's layout.
def lapack_layout(x: np.ndarray) -> np.ndarray:
    """``x`` with each matrix stored column by column (Fortran order), the batch outermost: the
    layout PyTorch's LAPACK-backed results have (``inv(A).stride()`` is ``(1, n)``), so that
    ``view`` and ``reshape`` of them behave (and record) as in PyTorch."""
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)


def lu_factor(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(LU, pivots)`` of ``a`` (``..., n, n``) by partial pivoting, as LAPACK's getrf packs
    them: the unit lower factor below the diagonal, the upper factor on and above it, and
    ``pivots`` (int32, 1-based): row ``k`` was swapped with row ``pivots[k] - 1``."""
    n = a.shape[-1]
    batch = int(np.prod(a.shape[:-2], dtype=np.int64))
    lu = np.array(a, dtype=a.dtype, copy=True).reshape(batch, n, n)
    piv = np.zeros((lu.shape[0], n), np.int32)
    rows = np.arange(lu.shape[0])
    for k in range(n):  # one column at a time, over the whole batch at once
        p = k + np.argmax(np.abs(lu[:, k:, k]), axis=1)
        piv[:, k] = p + 1
        top = lu[rows, k].copy()
        lu[rows, k] = lu[rows, p]
        lu[rows, p] = top
        pivot = lu[:, k, k]
        scale = np.where(pivot == 0, 0.0, 1.0 / np.where(pivot == 0, 1.0, pivot))
        lu[:, k + 1:, k] *= scale[:, None]
        lu[:, k + 1:, k + 1:] -= lu[:, k + 1:, k:k + 1] * lu[:, k:k + 1, k + 1:]
    return lu.reshape(a.shape), piv.reshape(a.shape[:-1])


def det_grad_lu(d: np.ndarray, lu: np.ndarray, piv: np.ndarray) -> np.ndarray:
    """The gradient of ``det`` in a plain backward, as PyTorch computes it from the forward's
    factorization: the solution X of ``Aᵀ X = d I`` (``d = grad * det`` per matrix), with each
    zero on U's diagonal replaced by the dtype's epsilon (det is C¹, so a singular A is taken
    through a nearby invertible one; there ``d`` is 0 and so is X). ``A = P L U`` is solved as
    LAPACK's getrs does for ``Aᵀ``: ``Uᵀ Z = d I``, then ``Lᵀ Y = Z``, then ``X = P Y``."""
    n = lu.shape[-1]
    diag = np.diagonal(lu, axis1=-2, axis2=-1)
    u = np.triu(lu) + (np.where(diag == 0, np.finfo(lu.dtype).eps, 0)[..., None]
                       * np.eye(n, dtype=lu.dtype))
    x = np.broadcast_to(np.asarray(d, lu.dtype)[..., None, None] * np.eye(n, dtype=lu.dtype),
                        lu.shape).copy()
    for i in range(n):  # Uᵀ is lower triangular: forward substitution
        x[..., i, :] = (x[..., i, :] - np.einsum("...k,...kj->...j", u[..., :i, i],
                                                 x[..., :i, :])) / u[..., i, i, None]
    for i in range(n - 1, -1, -1):  # Lᵀ is unit upper triangular: back substitution
        x[..., i, :] -= np.einsum("...k,...kj->...j", lu[..., i + 1:, i], x[..., i + 1:, :])
    for k in range(n - 1, -1, -1):  # undo the row swaps, the last one first
        p = piv[..., k] - 1
        rows = np.take_along_axis(x, p[..., None, None], axis=-2).copy()
        np.put_along_axis(x, p[..., None, None], x[..., k:k + 1, :], axis=-2)
        x[..., k, :] = rows[..., 0, :]
    return x


def _first_zero_pivot(lu: np.ndarray) -> np.ndarray:
    """LAPACK's ``info`` of a factorization: 1 + the index of the first zero on the diagonal,
    0 where there is none (int32, one per matrix)."""
    zero = np.diagonal(lu, axis1=-2, axis2=-1) == 0
    if zero.shape[-1] == 0:  # 0x0 matrices have no pivot to be zero
        return np.zeros(zero.shape[:-1], np.int32)
    return np.where(zero.any(-1), zero.argmax(-1) + 1, 0).astype(np.int32)


def linalg_inv_ex(a: np.ndarray, check_errors: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(inverse, info)``; a singular matrix gives ``info > 0`` and infinities, as LAPACK's."""
    lu, _ = lu_factor(a)
    info = _first_zero_pivot(lu)
    if not info.any():
        return lapack_layout(np.linalg.inv(a)), info
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.stack([np.linalg.inv(m) if i == 0 else _inv_singular(m)
                        for m, i in zip(a.reshape(-1, *a.shape[-2:]), info.reshape(-1),
                                        strict=True)])
    return lapack_layout(out.reshape(a.shape)), info


def _inv_singular(m: np.ndarray) -> np.ndarray:
    # Gauss-Jordan without the LinAlgError: the zero pivot turns into infinities and NaNs.
    lu, piv = lu_factor(m)
    n = m.shape[-1]
    perm = np.arange(n)
    for k, p in enumerate(piv - 1):
        perm[[k, p]] = perm[[p, k]]
    lower = np.tril(lu, -1) + np.eye(n, dtype=m.dtype)
    upper = np.triu(lu)
    y = np.linalg.solve(lower, np.eye(n, dtype=m.dtype)[perm])
    x = np.zeros_like(y)
    for i in range(n - 1, -1, -1):
        x[i] = (y[i] - upper[i, i + 1:] @ x[i + 1:]) / upper[i, i]
    return x


def linalg_det(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(det, LU, pivots)``: PyTorch's ``_linalg_det`` keeps the factorization for backward."""
    lu, piv = lu_factor(a)
    return np.asarray(np.linalg.det(a), a.dtype), lu, piv


def linalg_slogdet(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(sign, logabsdet, LU, pivots)`` (PyTorch's ``_linalg_slogdet``)."""
    lu, piv = lu_factor(a)
    with np.errstate(divide="ignore"):
        sign, logabs = np.linalg.slogdet(a)
    return np.asarray(sign, a.dtype), np.asarray(logabs, a.dtype), lu, piv


def linalg_solve_ex(a: np.ndarray, b: np.ndarray, left: bool = True
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(result, LU, pivots, info)`` of ``A X = B`` (``X A = B`` when not ``left``); ``B`` is a
    batch of vectors when it has one dimension less than ``A`` (PyTorch's rule)."""
    lu, piv = lu_factor(a)
    info = _first_zero_pivot(lu)
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    if info.any():  # what LAPACK leaves is not specified: NaNs say "no solution"
        shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-1 if vector else -2])
        x = np.full(shape + b.shape[-1 if vector else -2:], np.nan, a.dtype)
        return x, lu, piv, info
    if not left:  # X A = B is A^T X^T = B^T
        x = np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    elif vector:
        x = np.linalg.solve(a, b[..., None])[..., 0]
    else:
        x = lapack_layout(np.linalg.solve(a, b))
    return x.astype(a.dtype, copy=False), lu, piv, info


def linalg_cholesky_ex(a: np.ndarray, upper: bool = False, check_errors: bool = False
                       ) -> tuple[np.ndarray, np.ndarray]:
    """``(L, info)``: the lower (or upper) factor of a symmetric positive definite matrix, read
    from its lower triangle; ``info`` is the order of the first leading minor that is not
    positive definite (0 when all are)."""
    n = a.shape[-1]
    sym = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    flat = sym.reshape(int(np.prod(a.shape[:-2], dtype=np.int64)), n, n)  # (-1 fails for 0x0)
    out = np.zeros_like(flat)
    info = np.zeros(flat.shape[0], np.int32)
    for i, m in enumerate(flat):
        try:
            out[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            info[i] = next(k for k in range(1, n + 1)
                           if np.linalg.eigvalsh(m[:k, :k]).min() <= 0)
    out = out.reshape(a.shape)
    if upper:
        out = np.swapaxes(out, -1, -2)
    return lapack_layout(out), info.reshape(a.shape[:-2])


def linalg_qr(a: np.ndarray, mode: str = "reduced") -> tuple[np.ndarray, np.ndarray]:
    """``(Q, R)``; ``mode='r'`` gives an empty Q, as PyTorch."""
    if mode == "r":
        return np.zeros((0,), a.dtype), np.linalg.qr(a, mode="r").astype(a.dtype, copy=False)
    q, r = np.linalg.qr(a, mode=mode)
    return lapack_layout(q.astype(a.dtype, copy=False)), lapack_layout(r.astype(a.dtype,
                                                                               copy=False))


def linalg_eigh(a: np.ndarray, UPLO: str = "L") -> tuple[np.ndarray, np.ndarray]:  # noqa: N803
    """``(eigenvalues, eigenvectors)`` in ascending order, read from one triangle."""
    w, v = np.linalg.eigh(a, UPLO=UPLO)
    return w.astype(a.dtype, copy=False), lapack_layout(v.astype(a.dtype, copy=False))


def linalg_svd(a: np.ndarray, full_matrices: bool = True
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(U, S, Vh)``, singular values in descending order."""
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return (lapack_layout(u.astype(a.dtype, copy=False)), s.astype(a.dtype, copy=False),
            lapack_layout(vh.astype(a.dtype, copy=False)))


def linalg_pinv(a: np.ndarray, atol: float | None = None, rtol: float | None = None,
                hermitian: bool = False) -> np.ndarray:
    """The pseudo-inverse, singular values below ``max(atol, rtol * largest)`` treated as zero
    (PyTorch's default: ``rtol = eps * max(m, n)`` when neither is given)."""
    if atol is None and rtol is None:
        rtol = np.finfo(a.dtype).eps * max(a.shape[-2:])
    if hermitian:  # eigh of the lower triangle, as torch (the upper one is never read):
        # A = V diag(w) Vᵀ, the singular values |w|, and the pseudo-inverse V diag(1/w) Vᵀ
        w, v = np.linalg.eigh(a, UPLO="L")
        s, u, vh = np.abs(w), v * np.where(w < 0, -1.0, 1.0)[..., None, :], np.swapaxes(v, -1, -2)
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
    largest = s.max(-1, keepdims=True) if s.shape[-1] else s
    # numbers, or arrays of one tolerance per matrix (broadcast over the batch dims)
    atol, rtol = (0.0 if t is None else np.asarray(t, s.dtype)[..., None] for t in (atol, rtol))
    cut = np.maximum(atol, rtol * largest)
    inv_s = np.where(s > cut, 1 / np.where(s > cut, s, 1), 0)
    out = np.swapaxes(vh, -1, -2) @ (inv_s[..., :, None] * np.swapaxes(u, -1, -2))
    return out.astype(a.dtype, copy=False)


def dist(a: np.ndarray, b: np.ndarray, p: float = 2) -> np.ndarray:
    return vector_norm(a - b, p)


def vdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(np.vdot(a, b), np.result_type(a, b))


def trace(a: np.ndarray) -> np.ndarray:
    """The sum of a matrix's main diagonal; an integer one sums to int64, as PyTorch's does."""
    dt = np.dtype(np.int64) if a.dtype.kind in "iu" else a.dtype
    return np.asarray(np.trace(a, dtype=dt), dt)


def baddbmm(a: np.ndarray, batch1: np.ndarray, batch2: np.ndarray, beta: float = 1,
            alpha: float = 1) -> np.ndarray:
    prod = np.matmul(batch1, batch2)
    out = prod if alpha == 1 else alpha * prod
    if beta == 0:  # beta=0 ignores self, NaNs included (PyTorch's rule)
        return np.broadcast_to(out, np.broadcast_shapes(a.shape, out.shape)).astype(
            batch1.dtype, copy=True)
    return (out + (a if beta == 1 else beta * a)).astype(batch1.dtype, copy=False)


def addbmm(a: np.ndarray, batch1: np.ndarray, batch2: np.ndarray, beta: float = 1,
           alpha: float = 1) -> np.ndarray:
    return baddbmm(a, batch1.transpose(1, 0, 2).reshape(batch1.shape[1], -1),
                   batch2.reshape(-1, batch2.shape[2]), beta, alpha)


def cdist(x1: np.ndarray, x2: np.ndarray, p: float = 2.0) -> np.ndarray:
    """The p-norm distance between each row of ``x1`` and each row of ``x2`` (batched)."""
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    if not diff.shape[-1]:  # rows of no features are all at distance 0, for every p
        return np.zeros(diff.shape[:-1], x1.dtype)
    return vector_norm(diff, p, (-1,))


def euclidean_dist(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """``cdist`` with p=2 for many rows: PyTorch's ``_euclidean_dist`` (it computes it through
    a matrix product; the distances are the same)."""
    return cdist(x1, x2, 2.0)
