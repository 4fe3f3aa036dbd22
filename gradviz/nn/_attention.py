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
from typing import Any

import numpy as np

from gradviz.ops import _kernels as K
from gradviz.ops import functional as _F
from gradviz.ops.derivatives import OPS
from gradviz.ops.dispatch import dispatch
from gradviz.tensor import _C_TYPE, Tensor, _wrap_dim

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

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
    if dropout_p > 0.0:
        attn = _F.dropout(attn, dropout_p, True)  # torch.dropout: a MulBackward0 by its mask
    return _F.matmul(attn, value)


# -- multi-head attention ----------------------------------------------------------------------
def _linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    from gradviz.nn import functional as NF  # (functional imports this module)

    return NF.linear(x, weight, bias)


def _split_heads_packed(proj: Tensor, parts: int, embed: int) -> list[Tensor]:
    """A packed projection (..., parts * E) as ``parts`` tensors (..., E): the view, unsqueeze,
    transpose, squeeze and copy PyTorch records (``unflatten``, ``unsqueeze(0)``,
    ``transpose(0, -2)``, ``squeeze(-2)``, ``contiguous()``), then a ``select`` per part."""
    proj = proj.view(*proj.shape[:-1], parts, embed)
    proj = proj.unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
    return [proj[i] for i in range(parts)]


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor,
                          b: Tensor | None) -> list[Tensor]:
    """q, k, v projected by one packed (3E, E) weight: one linear for self-attention, two when
    key is value, else three over the weight's thirds."""
    embed = q.shape[-1]
    if k is v:
        if q is k:
            return _split_heads_packed(_linear(q, w, b), 3, embed)
        w_q, w_kv = w.split([embed, embed * 2])
        b_q, b_kv = (None, None) if b is None else b.split([embed, embed * 2])
        return [_linear(q, w_q, b_q), *_split_heads_packed(_linear(k, w_kv, b_kv), 2, embed)]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return [_linear(q, w_q, b_q), _linear(k, w_k, b_k), _linear(v, w_v, b_v)]


def _float_mask(mask: Tensor | None, name: str, dtype: Any) -> Tensor | None:
    """A bool mask (True: may NOT attend, multi-head attention's convention) as the float mask
    it stands for, -inf where True."""
    if mask is None:
        return None
    if mask._data.dtype == np.bool_:
        return Tensor._make(np.where(mask._data, -np.inf, 0.0).astype(dtype))
    if mask._data.dtype.kind != "f":
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
        out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention over (L, N, E) inputs (or unbatched (L, E)), op by op as PyTorch's
    ``F.multi_head_attention_forward`` records them: the projections (one packed linear for
    self-attention), heads split by ``view`` and ``transpose``, then either the weights written
    out (``bmm``/``baddbmm``, ``softmax``, ``bmm``: ``need_weights=True``, the default) or
    :func:`scaled_dot_product_attention`, and the output projection.

    Returns ``(output, weights)``: weights (N, L, S) averaged over heads, (N, H, L, S) with
    ``average_attn_weights=False``, None with ``need_weights=False``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> _ = gradviz.manual_seed(0)
        >>> mha = nn.MultiheadAttention(4, 2)
        >>> x = gradviz.randn(3, 1, 4)
        >>> out, w = mha(x, x, x)
        >>> tuple(out.shape), tuple(w.shape)
        ((3, 1, 4), (1, 3, 3))
    """
    batched = query.ndim == 3
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    dtype = query._data.dtype
    key_padding_mask = _float_mask(key_padding_mask, "key_padding_mask", dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the attention's own causal masking takes the mask's place
    else:
        attn_mask = _float_mask(attn_mask, "attn_mask", dtype)
        is_causal = False
    if not use_separate_proj_weight:
        assert in_proj_weight is not None
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q = _linear(query, q_proj_weight, b_q)
        k = _linear(key, k_proj_weight, b_k)
        v = _linear(value, v_proj_weight, b_v)
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is torch.Size("
                                   f"{list(attn_mask.shape)}), but should be "
                                   f"{(tgt_len, src_len)}.")  # torch's text, word for word
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is torch.Size("
                                   f"{list(attn_mask.shape)}), but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
    if bias_k is not None and bias_v is not None:
        k = _F.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _F.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else _pad_last(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad_last(key_padding_mask)
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_k is None
         else static_k)
    v = (v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_v is None
         else static_v)
    if add_zero_attn:
        zeros = (bsz * num_heads, 1, head_dim)
        k = _F.cat([k, Tensor._make(np.zeros(zeros, dtype))], dim=1)
        v = _F.cat([v, Tensor._make(np.zeros(zeros, dtype))], dim=1)
        attn_mask = None if attn_mask is None else _pad_last(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad_last(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but "
                                 f"got {tuple(key_padding_mask.shape)}")
        key_padding_mask = (key_padding_mask.view(bsz, 1, 1, src_len)
                            .expand(-1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
        if attn_mask is not None:
            weights = _F.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = _F.bmm(q_scaled, k.transpose(-2, -1))
        weights = _F.softmax(weights, dim=-1)
        if dropout_p > 0.0:
            from gradviz.nn import functional as NF

            weights = NF.dropout(weights, p=dropout_p)
        out = _F.bmm(weights, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = _linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.shape[1])
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.ndim == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = _linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.shape[1])
    if not batched:
        out = out.squeeze(1)
    return out, None


def _pad_last(mask: Tensor) -> Tensor:
    """``mask`` with one more key at the end, unmasked (for bias_k/bias_v and add_zero_attn)."""
    from gradviz.nn import functional as NF

    return NF.pad(mask, (0, 1))
