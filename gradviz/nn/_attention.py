"""``F.scaled_dot_product_attention``, recorded as PyTorch 2.13 records it on the CPU.

PyTorch picks one of two implementations, and the graph shows which:

* **the CPU flash kernel** for 4-d (batch, heads, length, features) inputs of equal batch, heads
  and features, without dropout and with a mask that needs no gradient: one node,
  ``ScaledDotProductFlashAttentionForCpuBackward0``, saving the inputs, the output and the
  softmax's ``logsumexp``, from which its backward rebuilds the attention weights;
* **the math path** otherwise (3-d inputs, dropout, a mask that needs a gradient, grouped-query
  attention ...): the formula written out in ops, ``q * sqrt(scale)`` and
  ``k^T * sqrt(scale)`` (``MulBackward1``: the scale split between them keeps the scores'
  magnitude down), ``matmul`` (its ``Expand``/``View``/``Bmm``/``UnsafeView`` nodes), the mask
  added (``AddBackward0``), ``_safe_softmax`` (``SafeSoftmaxBackward0``: 0, not NaN, for a query
  masked from every key), dropout (``MulBackward0``), ``matmul`` with ``v``.
"""

from __future__ import annotations

import math

import numpy as np

from gradviz import _factories
from gradviz.ops import _kernels as K
from gradviz.ops import functional as _F
from gradviz.ops.derivatives import OPS
from gradviz.ops.dispatch import dispatch
from gradviz.tensor import _C_TYPE, Tensor, _wrap_dim

__all__ = ["scaled_dot_product_attention"]

_FLOATS = (np.float32, np.float64)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key^T * scale + attn_mask) @ value`` over the last two dimensions
    (length, features), with PyTorch's arguments:

    Args:
        query: (..., L, E); key: (..., S, E); value: (..., S, Ev).
        attn_mask: a bool mask (True: may attend) or a float mask added to the scores,
            broadcastable to (..., L, S).
        dropout_p: the probability of dropping an attention weight (applied whenever > 0, as
            in PyTorch: pass 0.0 when not training).
        is_causal: mask every key after its query's position (the top-left triangle).
        scale: the scores' factor, ``1 / sqrt(E)`` by default.
        enable_gqa: let ``query`` have more heads (dimension -3) than ``key`` and ``value``,
            each key/value head serving ``Hq / Hkv`` query heads.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> q = k = v = gradviz.ones(1, 1, 2, 4, requires_grad=True)
        >>> F.scaled_dot_product_attention(q, k, v).grad_fn.name()
        'ScaledDotProductFlashAttentionForCpuBackward0'
        >>> F.scaled_dot_product_attention(q[0], k[0], v[0]).grad_fn.name()
        'UnsafeViewBackward0'
    """
    _check(query, key, value, attn_mask)
    mask = attn_mask
    if mask is not None and mask._data.dtype == np.bool_:
        # A bool mask becomes the float mask it stands for: 0 where allowed, -inf elsewhere.
        mask = Tensor._make(np.where(mask._data, 0.0, -np.inf).astype(query._data.dtype))
    if _flash_applies(query, key, value, mask, dropout_p, enable_gqa):
        out, _ = dispatch(OPS["_scaled_dot_product_flash_attention_for_cpu"], query, key, value,
                          dropout_p=float(dropout_p), is_causal=bool(is_causal), attn_mask=mask,
                          scale=None if scale is None else float(scale))
        return out
    return _math(query, key, value, mask, dropout_p, is_causal, scale, enable_gqa)


def _check(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None) -> None:
    dims = (query.ndim, key.ndim, value.ndim)
    if min(dims) < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, "
                           f"but got query.dim: {dims[0]} key.dim: {dims[1]} and value.dim: "
                           f"{dims[2]} instead.")
    dts = [_type_name(t) for t in (query, key, value)]
    if len(set(dts)) != 1:
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {dts[0]} key.dtype: {dts[1]} and value.dtype: "
                           f"{dts[2]} instead.")
    if query._data.dtype.type not in _FLOATS:
        raise RuntimeError(f"expected scalar type Float but found {_scalar_name(query)}")
    if attn_mask is not None:
        mdt = attn_mask._data.dtype
        if mdt != np.bool_ and mdt != query._data.dtype:
            raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query "
                               f"dtype, but got attn_mask.dtype: {_type_name(attn_mask)} and  "
                               f"query.dtype: {dts[0]} instead.")


def _type_name(t: Tensor) -> str:
    """The C++ type name PyTorch's attention checks print (``double``, ``float``)."""
    return _C_TYPE.get(t._data.dtype.name, t._data.dtype.name)


def _scalar_name(t: Tensor) -> str:
    return K._SCALAR_TYPE.get(t._data.dtype.name, t._data.dtype.name)


def _flash_applies(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None,
                   dropout_p: float, enable_gqa: bool) -> bool:
    """Whether PyTorch's CPU dispatch picks the flash kernel for these inputs."""
    if not (query.ndim == key.ndim == value.ndim == 4) or dropout_p > 0.0:
        return False
    q, k, v = query.shape, key.shape, value.shape
    if not (q[0] == k[0] == v[0] and k[1] == v[1] and q[3] == k[3] == v[3] and k[2] == v[2]):
        return False
    if q[1] != k[1] and not (enable_gqa and k[1] and q[1] % k[1] == 0):
        return False  # grouped-query attention: the kernel shares each key/value head
    return mask is None or not mask.requires_grad


def _math(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None, dropout_p: float,
          is_causal: bool, scale: float | None, enable_gqa: bool) -> Tensor:
    """PyTorch's ``_scaled_dot_product_attention_math``, op by op."""
    if is_causal and mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    length, source = query.shape[-2], key.shape[-2]
    if is_causal:
        allowed = np.tril(np.ones((length, source), dtype=bool))
        mask = Tensor._make(np.where(allowed, 0.0, -np.inf).astype(query._data.dtype))
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        repeat = query.shape[-3] // key.shape[-3]
        key = key.repeat_interleave(repeat, -3)
        value = value.repeat_interleave(repeat, -3)
    factor = math.sqrt(1.0 / math.sqrt(query.shape[-1]) if scale is None else scale)
    q = dispatch(OPS["mul_scalar"], query, other=factor)
    k = dispatch(OPS["mul_scalar"], key.transpose(-2, -1), other=factor)
    attn = _F.matmul(q, k)
    if mask is not None:
        attn = attn + mask
    attn = dispatch(OPS["_safe_softmax"], attn, dim=_wrap_dim(-1, attn.ndim))
    if dropout_p > 0.0:  # F.dropout's mask, drawn the same way
        if dropout_p >= 1.0:
            noise = np.zeros(attn.shape, attn._data.dtype)
        else:
            keep = _factories.rng().random(attn.shape) < 1.0 - dropout_p
            noise = (keep / (1.0 - dropout_p)).astype(attn._data.dtype)
        attn = attn * Tensor._make(noise)
    return _F.matmul(attn, value)
