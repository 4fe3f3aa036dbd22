"""``MultiheadAttention``, as PyTorch's module holds and runs it."""

from __future__ import annotations

from typing import Any

from gradviz import _dtype as _dt
from gradviz import _factories
from gradviz.nn import init
from gradviz.nn._attention import multi_head_attention_forward
from gradviz.nn.modules.linear import Linear
from gradviz.nn.modules.module import Module, _factory_dtype, _on_device
from gradviz.nn.parameter import Parameter
from gradviz.tensor import Tensor

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]


class NonDynamicallyQuantizableLinear(Linear):
    """A :class:`Linear` by another name: PyTorch's class for ``MultiheadAttention.out_proj``
    (its quantization tools leave it alone), kept so the module prints as PyTorch's does."""


class MultiheadAttention(Module):
    """Attention from a query sequence to a key/value sequence with ``num_heads`` heads, as in
    "Attention Is All You Need": ``softmax(Q K^T / sqrt(d)) V`` per head over projections of the
    inputs, the heads concatenated and projected again (``out_proj``).

    Parameters, as PyTorch names and initialises them: ``in_proj_weight`` (3E, E) and
    ``in_proj_bias`` (3E) packing the query, key and value projections (``q_proj_weight``,
    ``k_proj_weight``, ``v_proj_weight`` instead when ``kdim``/``vdim`` differ from E),
    ``out_proj`` a linear layer; ``bias_k``/``bias_v`` with ``add_bias_kv``.

    Args:
        embed_dim: E, the features of the query (and of the output).
        num_heads: heads; E must be divisible by it.
        dropout: dropout on the attention weights while training.
        bias: biases in the projections.
        add_bias_kv: append a learned key and value to the sequences.
        add_zero_attn: append a zero key and value.
        kdim, vdim: the features of key and value (default E).
        batch_first: inputs and outputs are (N, L, E) instead of (L, N, E).

    ``forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False)`` returns ``(output, weights)``; bool masks
    mark with True what may NOT be attended to.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> mha = nn.MultiheadAttention(8, 2, batch_first=True)
        >>> x = gradviz.randn(2, 3, 8, requires_grad=True)
        >>> out, weights = mha(x, x, x)
        >>> tuple(out.shape), tuple(weights.shape), out.grad_fn.name()
        ((2, 3, 8), (2, 3, 3), 'TransposeBackward0')
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device: Any = None, dtype: _dt.dtype | None = None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        dt = _factory_dtype(device, dtype)
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_factories.empty(embed_dim, embed_dim, dtype=dt))
            self.k_proj_weight = Parameter(_factories.empty(embed_dim, self.kdim, dtype=dt))
            self.v_proj_weight = Parameter(_factories.empty(embed_dim, self.vdim, dtype=dt))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_factories.empty(3 * embed_dim, embed_dim, dtype=dt))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_factories.empty(3 * embed_dim, dtype=dt))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dt)
        if add_bias_kv:
            self.bias_k = Parameter(_factories.empty(1, 1, embed_dim, dtype=dt))
            self.bias_v = Parameter(_factories.empty(1, 1, embed_dim, dtype=dt))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        _on_device(self, device)  # device="meta": its tensors become meta
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        batched = query.ndim == 3
        if self.batch_first and batched:
            # One transpose for self-attention, so that the projection sees one tensor.
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = query.transpose(1, 0), key.transpose(1, 0)
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and batched:
            return out.transpose(1, 0), weights
        return out, weights
