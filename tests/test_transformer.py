"""The Transformer modules: an encoder layer against its definition in NumPy, causal masks,
PyTorch's warnings, errors, structure and initialisation. tests/parity/test_transformer_parity.py
compares whole graphs, values and gradients of every case with torch 2.13."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from _graphs import graph_nodes
from test_multihead_attention import reference as mha_reference

import gradviz
from gradviz import nn


def load(m: Any, lib: Any, seed: int = 1) -> Any:
    """The same parameter values in gradviz and torch (normal, scaled by 0.5)."""
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for _, p in m.named_parameters():
            p.copy_(lib.tensor(rng.normal(size=tuple(p.shape)) * 0.5))
    return m


def env(lib: Any) -> dict[str, Any]:
    rng = np.random.default_rng(5)

    def t(*shape: int) -> Any:
        return lib.tensor(rng.normal(size=shape), requires_grad=True)

    f64 = lib.float64
    return {"nn": lib.nn, "f64": f64, "src": t(2, 5, 8), "tgt": t(2, 3, 8),
            "mask3": lib.nn.Transformer.generate_square_subsequent_mask(3, dtype=f64),
            "mask5": lib.nn.Transformer.generate_square_subsequent_mask(5, dtype=f64),
            "pad": lib.tensor([[False, False, False, True, True],
                               [False, False, False, False, True]])}


# (name, the module, the call on it as m)
CASES = [
    ("encoder layer", "nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True, dtype=f64)",
     "m(src)"),
    ("encoder layer, norm first, gelu",
     "nn.TransformerEncoderLayer(8, 2, 16, 0.0, activation='gelu', batch_first=True, "
     "norm_first=True, dtype=f64)", "m(src)"),
    ("encoder layer, key padding",
     "nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True, dtype=f64)",
     "m(src, src_key_padding_mask=pad)"),
    ("encoder, causal mask",
     "nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True, "
     "dtype=f64), 2, norm=nn.LayerNorm(8, dtype=f64))", "m(src, mask=mask5)"),
    ("decoder layer", "nn.TransformerDecoderLayer(8, 2, 16, 0.0, batch_first=True, dtype=f64)",
     "m(tgt, src, tgt_mask=mask3)"),
    ("transformer", "nn.Transformer(8, 2, 1, 1, 16, 0.0, batch_first=True, dtype=f64)",
     "m(src, tgt, tgt_mask=mask3, src_key_padding_mask=pad)"),
    ("transformer, sequence first", "nn.Transformer(8, 2, 1, 2, 16, 0.0, dtype=f64)",
     "m(src.transpose(0, 1), tgt.transpose(0, 1), tgt_mask=mask3)"),
]
_IDS = [c[0] for c in CASES]


def run(lib: Any, module: str, call: str) -> tuple[Any, Any, dict]:
    e = env(lib)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the nested-tensor note of sequence-first encoders
        m = load(eval(module, e), lib)  # noqa: S307
    out = eval(call, {**e, "m": m})  # noqa: S307
    return m, out, e


def _layer_norm(x: np.ndarray, norm: Any) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return ((x - mean) / np.sqrt(var + norm.eps) * norm.weight.detach().numpy()
            + norm.bias.detach().numpy())


def _encoder_layer(m: Any, x: np.ndarray, padding: Any = None) -> np.ndarray:
    def sa(y: np.ndarray) -> np.ndarray:
        return mha_reference(m.self_attn, y, y, y, padding=padding)[0]

    def ff(y: np.ndarray) -> np.ndarray:
        h = y @ m.linear1.weight.detach().numpy().T + m.linear1.bias.detach().numpy()
        h = np.maximum(h, 0) if m.activation_relu_or_gelu == 1 else (
            0.5 * h * (1 + np.vectorize(math.erf)(h / math.sqrt(2))))
        return h @ m.linear2.weight.detach().numpy().T + m.linear2.bias.detach().numpy()

    if m.norm_first:
        x = x + sa(_layer_norm(x, m.norm1))
        return x + ff(_layer_norm(x, m.norm2))
    x = _layer_norm(x + sa(x), m.norm1)
    return _layer_norm(x + ff(x), m.norm2)


@pytest.mark.parametrize("case", [c for c in CASES if c[0].startswith("encoder layer")],
                         ids=[c[0] for c in CASES if c[0].startswith("encoder layer")])
def test_an_encoder_layer_computes_its_definition(case: tuple) -> None:
    _, module, call = case
    m, out, e = run(gradviz, module, call)
    padding = e["pad"].numpy() if "pad" in call else None
    want = _encoder_layer(m, e["src"].detach().numpy(), padding)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("name", "module", "call"), CASES, ids=_IDS)
def test_every_parameter_and_input_gets_a_gradient(name: str, module: str, call: str) -> None:
    m, out, e = run(gradviz, module, call)
    (out * out).sum().backward()
    for pname, p in m.named_parameters():
        assert p.grad is not None and np.isfinite(p.grad.numpy()).all(), pname
    assert e["src"].grad is not None


def test_the_causal_mask_is_detected_and_attention_masks_itself() -> None:
    # A mask equal to the causal mask lets attention use its own causal masking: the flash
    # node saves is_causal=True and no mask, as in PyTorch.
    m, out, _ = run(gradviz, CASES[3][1], CASES[3][2])
    flash = [n for n in graph_nodes(out)
             if n.name() == "ScaledDotProductFlashAttentionForCpuBackward0"]
    assert len(flash) == 2  # one per layer
    assert all(n._saved_is_causal is True and n._saved_attn_mask is None for n in flash)
    mask = gradviz.zeros(5, 5, dtype=gradviz.float64)  # not causal: passed on as a mask
    out = m(gradviz.randn(2, 5, 8, dtype=gradviz.float64), mask=mask)
    flash = [n for n in graph_nodes(out)
             if n.name() == "ScaledDotProductFlashAttentionForCpuBackward0"]
    assert all(n._saved_is_causal is False and n._saved_attn_mask is not None for n in flash)


def test_generate_square_subsequent_mask() -> None:
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    assert mask.dtype == gradviz.float32
    np.testing.assert_array_equal(mask.numpy(), [[0, -np.inf, -np.inf], [0, 0, -np.inf],
                                                 [0, 0, 0]])


# (the encoder layer's arguments, PyTorch's reason for not using nested tensors, or None)
WARNINGS = [
    ("8, 2, 16", "encoder_layer.self_attn.batch_first was not True(use batch_first for better "
                 "inference performance)"),
    ("8, 2, 16, batch_first=True", None),
    ("8, 2, 16, batch_first=True, norm_first=True", "encoder_layer.norm_first was True"),
    ("8, 1, 16, norm_first=True, bias=False", "encoder_layer.norm_first was True"),
    ("8, 2, 16, batch_first=True, bias=False", "encoder_layer.self_attn was passed bias=False"),
    ("8, 2, 16, batch_first=True, activation=gradviz.tanh",
     "encoder_layer.activation_relu_or_gelu was not True"),
    ("8, 2, 16, batch_first=True, activation='gelu'", None),
    ("8, 1, 16, batch_first=True", "encoder_layer.self_attn.num_heads is odd"),
]


def encoder_warnings(lib: Any, args: str, **kwargs: Any) -> list[str]:
    layer = eval(f"lib.nn.TransformerEncoderLayer({args})",  # noqa: S307
                 {"lib": lib, "gradviz": lib})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.nn.TransformerEncoder(layer, 2, **kwargs)
    return [str(w.message) for w in caught]


@pytest.mark.parametrize(("args", "why"), WARNINGS, ids=[w[0] for w in WARNINGS])
def test_an_encoder_warns_as_pytorch_does_about_nested_tensors(args: str, why: str | None
                                                               ) -> None:
    expected = [] if why is None else [
        f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why}"]
    assert encoder_warnings(gradviz, args) == expected
    assert encoder_warnings(gradviz, args, enable_nested_tensor=False) == []


def test_structure_and_initialisation_are_pytorchs() -> None:
    gradviz.manual_seed(0)
    with pytest.warns(UserWarning, match="enable_nested_tensor is True"):  # as torch's does
        model = nn.Transformer(8, 2, 1, 1, 16)
    names = [n for n, _ in model.named_parameters()]
    assert names[:4] == ["encoder.layers.0.self_attn.in_proj_weight",
                         "encoder.layers.0.self_attn.in_proj_bias",
                         "encoder.layers.0.self_attn.out_proj.weight",
                         "encoder.layers.0.self_attn.out_proj.bias"]
    assert "decoder.layers.0.multihead_attn.in_proj_weight" in names
    assert names[-2:] == ["decoder.norm.weight", "decoder.norm.bias"]
    w = model.encoder.layers[0].linear1.weight.detach().numpy()  # xavier_uniform_, (16, 8)
    assert np.abs(w).max() <= math.sqrt(6 / 24)
    assert repr(nn.TransformerDecoderLayer(8, 2, 16)).splitlines()[:4] == [
        "TransformerDecoderLayer(",
        "  (self_attn): MultiheadAttention(",
        "    (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, "
        "bias=True)",
        "  )"]
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    encoder = nn.TransformerEncoder(layer, 3)
    assert len(encoder.layers) == 3 and encoder.layers[0] is not layer  # deep copies
    assert encoder.layers[0].linear1.weight is not encoder.layers[1].linear1.weight


ERRORS = [
    ("nn.TransformerEncoderLayer(8, 2, activation='tanh')", RuntimeError,
     "activation should be relu/gelu, not tanh"),
    ("nn.Transformer(8, 2, 1, 1, 16)(gradviz.randn(5, 2, 8), gradviz.randn(3, 4, 8))",
     RuntimeError, "the batch number of src and tgt must be equal"),
    ("nn.Transformer(8, 2, 1, 1, 16)(gradviz.randn(5, 2, 8), gradviz.randn(3, 2, 6))",
     RuntimeError, "the feature number of src and tgt must be equal to d_model"),
]


@pytest.mark.parametrize(("src", "kind", "message"), ERRORS, ids=[e[0] for e in ERRORS])
def test_bad_input_gets_pytorchs_error(src: str, kind: type, message: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(kind) as info:
            eval(src, {"nn": nn, "gradviz": gradviz})  # noqa: S307
    assert str(info.value) == message
