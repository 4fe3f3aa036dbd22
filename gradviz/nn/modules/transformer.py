"""The Transformer's layers, as PyTorch's modules hold and run them: ``TransformerEncoderLayer``,
``TransformerEncoder``, ``TransformerDecoderLayer``, ``TransformerDecoder`` and ``Transformer``.

They always take the path a training step takes (PyTorch also has a fused inference path for
some layers in eval mode without gradients, whose values are the same)."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

from gradviz import _dtype as _dt
from gradviz import _factories
from gradviz.nn import functional as F
from gradviz.nn import init
from gradviz.nn._attention import _float_mask
from gradviz.nn.modules.attention import MultiheadAttention
from gradviz.nn.modules.container import ModuleList
from gradviz.nn.modules.dropout import Dropout
from gradviz.nn.modules.linear import Linear
from gradviz.nn.modules.module import Module
from gradviz.nn.modules.normalization import LayerNorm
from gradviz.tensor import Tensor

__all__ = ["TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
           "TransformerDecoder", "Transformer"]

Activation = str | Callable[[Tensor], Tensor]


def generate_square_subsequent_mask(sz: int, device: Any = None,
                                    dtype: _dt.dtype | None = None) -> Tensor:
    """The causal mask for a sequence of ``sz``: 0 on and below the diagonal, ``-inf`` above
    (position i may attend to positions up to i).

    Example:
        >>> generate_square_subsequent_mask(3)
        tensor([[0., -inf, -inf],
                [0., 0., -inf],
                [0., 0., 0.]])
    """
    return _factories.full((sz, sz), float("-inf"), dtype=dtype).triu(diagonal=1)


def _activation(activation: Activation) -> tuple[Callable[[Tensor], Tensor], int]:
    """The activation function and PyTorch's ``activation_relu_or_gelu`` flag (1 relu, 2 gelu,
    0 anything else)."""
    if isinstance(activation, str):
        if activation == "relu":
            return F.relu, 1
        if activation == "gelu":
            return F.gelu, 2
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    from gradviz.nn.modules.activation import GELU, ReLU

    if activation is F.relu or isinstance(activation, ReLU):
        return activation, 1
    if activation is F.gelu or isinstance(activation, GELU):
        return activation, 2
    return activation, 0


def _seq_len(src: Tensor, batch_first: bool) -> int:
    if src.ndim == 2:  # unbatched: (S, E)
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal(mask: Tensor | None, is_causal: bool | None, size: int) -> bool:
    """Whether to run causally: ``is_causal`` when given, else whether ``mask`` is the causal
    mask of its size (so that attention can use its own causal masking)."""
    if is_causal is None and mask is not None:
        causal = generate_square_subsequent_mask(size, dtype=mask.dtype)
        return tuple(mask.shape) == tuple(causal.shape) and bool((mask == causal).all())
    return is_causal is True


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward network, each with dropout, a residual connection and
    layer normalization (after them, or before with ``norm_first=True``).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
        >>> layer(gradviz.randn(2, 3, 8)).shape
        gradviz.Size([2, 3, 8])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Activation = F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation, self.activation_relu_or_gelu = _activation(activation)

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        padding = _float_mask(src_key_padding_mask, "src_key_padding_mask", src._data.dtype)
        mask = _float_mask(src_mask, "src_mask", src._data.dtype)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), mask, padding, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, mask, padding, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Tensor, mask: Tensor | None, padding: Tensor | None,
                  is_causal: bool) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


def _why_not_fast_path(layer: Module) -> str:
    """Why PyTorch's nested-tensor inference path cannot serve ``layer`` ("" if it can), in the
    order PyTorch checks."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return (f"{name}.self_attn.batch_first was not True(use batch_first for better "
                "inference performance)")
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` run in turn, then ``norm`` if given.

    A ``mask`` equal to the causal mask of its size runs the layers causally (``is_causal``
    detected, as PyTorch does when it is not given).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
        >>> encoder = nn.TransformerEncoder(layer, num_layers=2)
        >>> encoder(gradviz.randn(2, 3, 8)).shape
        gradviz.Size([2, 3, 8])
    """

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why = _why_not_fast_path(encoder_layer)
        if enable_nested_tensor and why:
            # gradviz has no nested tensors; PyTorch warns when its layer cannot use them.
            warnings.warn("enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why}", UserWarning, stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        padding = _float_mask(src_key_padding_mask, "src_key_padding_mask", src._data.dtype)
        mask = _float_mask(mask, "mask", src._data.dtype)
        first = self.layers[0]
        batch_first = first.self_attn.batch_first if hasattr(first, "self_attn") else False
        causal = _detect_is_causal(mask, is_causal, _seq_len(src, batch_first))
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=causal,
                           src_key_padding_mask=padding)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention to the encoder's ``memory``, then a
    feed-forward network; each with dropout, a residual connection and layer normalization.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> layer = nn.TransformerDecoderLayer(8, 2, 16, batch_first=True)
        >>> layer(gradviz.randn(2, 3, 8), gradviz.randn(2, 5, 8)).shape
        gradviz.Size([2, 3, 8])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Activation = F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation, _ = _activation(activation)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask,
                                               memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Tensor, mask: Tensor | None, padding: Tensor | None,
                  is_causal: bool) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x: Tensor, memory: Tensor, mask: Tensor | None,
                   padding: Tensor | None, is_causal: bool) -> Tensor:
        x = self.multihead_attn(x, memory, memory, attn_mask=mask, key_padding_mask=padding,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer`` run in turn over the target, each attending
    to ``memory``, then ``norm`` if given.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16), 2)
        >>> decoder(gradviz.randn(3, 2, 8), gradviz.randn(5, 2, 8)).shape
        gradviz.Size([3, 2, 8])
    """

    def __init__(self, decoder_layer: Module, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        first = self.layers[0]
        batch_first = first.self_attn.batch_first if hasattr(first, "self_attn") else False
        causal = _detect_is_causal(tgt_mask, tgt_is_causal, _seq_len(tgt, batch_first))
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask,
                           tgt_is_causal=causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """The encoder-decoder Transformer of "Attention Is All You Need": a
    :class:`TransformerEncoder` over ``src`` and a :class:`TransformerDecoder` over ``tgt``
    attending to the encoder's output, each ending in a LayerNorm. Every parameter with more
    than one dimension is re-initialised with ``xavier_uniform_``, as in PyTorch.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> model = nn.Transformer(8, 2, 1, 1, 16, batch_first=True)
        >>> src, tgt = gradviz.randn(2, 5, 8), gradviz.randn(2, 3, 8)
        >>> mask = nn.Transformer.generate_square_subsequent_mask(3)
        >>> model(src, tgt, tgt_mask=mask).shape
        gradviz.Size([2, 3, 8])
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Activation = F.relu,
                 custom_encoder: Module | None = None, custom_decoder: Module | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
                                            activation, layer_norm_eps, batch_first,
                                            norm_first, bias, **kw)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout,
                                            activation, layer_norm_eps, batch_first,
                                            norm_first, bias, **kw)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        batched = src.ndim == 3
        batch = 0 if self.batch_first else 1
        if batched and src.shape[batch] != tgt.shape[batch]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None,
                                        dtype: _dt.dtype | None = None) -> Tensor:
        """The causal mask for a sequence of ``sz`` (see the module's function)."""
        return generate_square_subsequent_mask(sz, device, dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
