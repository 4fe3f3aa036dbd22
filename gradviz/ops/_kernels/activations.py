"""Forwards of the activation rows of torch.nn.functional, softmax, and the CPU flash attention
kernel of scaled_dot_product_attention."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gradviz.ops._kernels.common import arr
from gradviz.ops._kernels.pointwise import erf


def sigmoid(a: np.ndarray) -> np.ndarray:
    return 0.5 * (np.tanh(0.5 * a) + 1)  # overflow-free logistic


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


def relu(a):
    return np.maximum(a, 0).astype(a.dtype, copy=False)


def silu(a):
    return a * sigmoid(a)


# The forwards of the activations torch.nn.functional added last (hardtanh ... celu).
# Each keeps its input's dtype, as PyTorch's kernels do.
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


def celu(a: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """``max(0, a) + min(0, alpha * (exp(a / alpha) - 1))``: PyTorch runs elu's kernel with
    ``input_scale = 1 / alpha``."""
    return elu(a, alpha, 1, 1 / alpha)
