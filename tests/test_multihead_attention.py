"""``nn.MultiheadAttention`` and ``F.multi_head_attention_forward``: values and gradients
against the definition written in NumPy, the graph's landmarks, masks, shapes, parameters and
errors. tests/parity/test_multihead_attention_parity.py compares every case's whole graph,
values and gradients with torch 2.13."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from _graphs import graph_nodes

import gradviz
from gradviz import nn


def load(m: Any, lib: Any, seed: int = 1) -> Any:
    """Give ``m``'s parameters the same normal values in gradviz and torch."""
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for _, p in m.named_parameters():
            p.copy_(lib.tensor(rng.normal(size=tuple(p.shape))))
    return m


def inputs(lib: Any) -> dict[str, Any]:
    rng = np.random.default_rng(5)

    def t(*shape: int) -> Any:
        return lib.tensor(rng.normal(size=shape), requires_grad=True)

    x, y = t(2, 3, 8), t(2, 4, 8)
    return {"x": x, "y": y, "y2": t(2, 4, 8), "k5": t(2, 4, 5), "v6": t(2, 4, 6),
            "bool_mask": lib.tensor(np.triu(np.ones((3, 3), bool), 1)),
            "float_mask": lib.tensor(rng.normal(size=(3, 4))),
            "padding": lib.tensor([[False, False, True, False], [False, True, False, True]])}


# (name, constructor keywords, the call on the module m with the inputs)
CASES = [
    ("self-attention, batch first", {"batch_first": True}, "m(x, x, x)"),
    ("self-attention, no weights", {"batch_first": True}, "m(x, x, x, need_weights=False)"),
    ("key is value", {"batch_first": True}, "m(x, y, y)"),
    ("three inputs", {"batch_first": True}, "m(x, y, y2)"),
    ("sequence first, weights per head", {}, "m(x, x, x, average_attn_weights=False)"),
    ("unbatched", {}, "m(x[0], x[0], x[0])"),
    ("kdim and vdim", {"kdim": 5, "vdim": 6, "batch_first": True}, "m(x, k5, v6)"),
    ("no bias", {"bias": False, "batch_first": True}, "m(x, x, x, need_weights=False)"),
    ("bool attn_mask", {"batch_first": True}, "m(x, x, x, attn_mask=bool_mask)"),
    ("bool attn_mask, no weights", {"batch_first": True},
     "m(x, x, x, attn_mask=bool_mask, need_weights=False)"),
    ("float attn_mask", {"batch_first": True}, "m(x, y, y, attn_mask=float_mask)"),
    ("key_padding_mask", {"batch_first": True}, "m(x, y, y, key_padding_mask=padding)"),
    ("key_padding_mask, no weights", {"batch_first": True},
     "m(x, y, y, key_padding_mask=padding, need_weights=False)"),
    ("add_bias_kv, add_zero_attn", {"batch_first": True, "add_bias_kv": True,
                                   "add_zero_attn": True}, "m(x, y, y)"),
]
_IDS = [c[0] for c in CASES]


def run(lib: Any, kwargs: dict, call: str) -> tuple[Any, Any, Any, dict]:
    m = load(lib.nn.MultiheadAttention(8, 2, dtype=lib.float64, **kwargs), lib)
    env = {"m": m, **inputs(lib)}
    out, weights = eval(call, env)  # noqa: S307
    return m, out, weights, env


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def reference(m: Any, q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: Any = None,
              padding: Any = None, batch_first: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head attention by its definition (batched inputs): (output, per-head weights)."""
    if not batch_first:
        q, k, v = (np.swapaxes(a, 0, 1) for a in (q, k, v))
    e, h = m.embed_dim, m.num_heads

    def p(name: str) -> np.ndarray | None:
        t = getattr(m, name)
        return None if t is None else t.detach().numpy()

    w = p("in_proj_weight")
    ws = np.split(w, 3) if w is not None else [p("q_proj_weight"), p("k_proj_weight"),
                                               p("v_proj_weight")]
    b = p("in_proj_bias")
    bs = np.split(b, 3) if b is not None else [0.0, 0.0, 0.0]
    qp, kp, vp = (a @ wi.T + bi for a, wi, bi in zip((q, k, v), ws, bs, strict=True))
    if m.bias_k is not None:
        n = q.shape[0]
        kp = np.concatenate([kp, np.repeat(p("bias_k").reshape(1, 1, e), n, 0)], 1)
        vp = np.concatenate([vp, np.repeat(p("bias_v").reshape(1, 1, e), n, 0)], 1)
    if m.add_zero_attn:
        kp = np.concatenate([kp, np.zeros((kp.shape[0], 1, e))], 1)
        vp = np.concatenate([vp, np.zeros((vp.shape[0], 1, e))], 1)

    def heads(a: np.ndarray) -> np.ndarray:  # (N, L, E) -> (N, H, L, E/H)
        return a.reshape(a.shape[0], a.shape[1], h, e // h).transpose(0, 2, 1, 3)

    s = heads(qp) @ np.swapaxes(heads(kp), -1, -2) / math.sqrt(e // h)
    extra = s.shape[-1] - k.shape[1]
    if mask is not None:
        add = np.where(mask, -np.inf, 0.0) if mask.dtype == bool else mask
        s = s + np.pad(add, [(0, 0), (0, extra)])
    if padding is not None:
        s = s + np.pad(np.where(padding, -np.inf, 0.0), [(0, 0), (0, extra)])[:, None, None]
    attn = _softmax(s)
    out = (attn @ heads(vp)).transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[1], e)
    out = out @ m.out_proj.weight.detach().numpy().T
    if m.out_proj.bias is not None:
        out = out + m.out_proj.bias.detach().numpy()
    if not batch_first:
        out = np.swapaxes(out, 0, 1)
    return out, attn


@pytest.mark.parametrize(("name", "kwargs", "call"), CASES, ids=_IDS)
def test_values_are_the_definitions(name: str, kwargs: dict, call: str) -> None:
    m, out, weights, env = run(gradviz, kwargs, call)
    names = [a.strip() for a in call[2:-1].split(",")[:3]]
    q, k, v = (eval(a, env).detach().numpy() for a in names)  # noqa: S307
    batched = q.ndim == 3
    if not batched:  # as a batch of one, sequence first
        q, k, v = q[:, None], k[:, None], v[:, None]
    mask = env["bool_mask"].numpy() if "bool_mask" in call else (
        env["float_mask"].numpy() if "float_mask" in call else None)
    padding = env["padding"].numpy() if "key_padding_mask=" in call else None
    first = kwargs.get("batch_first", False)
    ref, attn = reference(m, q, k, v, mask, padding, first)
    got = out.detach().numpy()
    np.testing.assert_allclose(got if batched else got[:, None], ref, rtol=1e-10, atol=1e-12)
    if weights is None:
        assert "need_weights=False" in call
        return
    want = attn if "average_attn_weights=False" in call else attn.mean(1)
    got = weights.detach().numpy()
    np.testing.assert_allclose(got if batched else got[None], want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("name", "kwargs", "call"), CASES, ids=_IDS)
def test_gradients_reach_every_parameter_and_input(name: str, kwargs: dict, call: str) -> None:
    m, out, weights, env = run(gradviz, kwargs, call)
    loss = (out * out).sum() + (0 if weights is None else (weights * weights).sum())
    loss.backward()
    for pname, p in m.named_parameters():
        assert p.grad is not None and np.isfinite(p.grad.numpy()).all(), pname
    assert env["x"].grad is not None and np.abs(env["x"].grad.numpy()).sum() > 0


def test_the_graph_shows_which_path_ran() -> None:
    _, out, weights, _ = run(gradviz, {"batch_first": True}, "m(x, x, x)")
    names = {n.name() for n in graph_nodes(out)}
    assert {"BmmBackward0", "SoftmaxBackward0", "AddmmBackward0", "SelectBackward0"} <= names
    assert out.grad_fn.name() == "TransposeBackward0"  # batch_first's transpose back
    assert weights.grad_fn.name() == "MeanBackward1"  # averaged over heads
    _, out, weights, _ = run(gradviz, {"batch_first": True}, "m(x, x, x, need_weights=False)")
    names = {n.name() for n in graph_nodes(out)}
    assert "ScaledDotProductFlashAttentionForCpuBackward0" in names and weights is None
    assert "SoftmaxBackward0" not in names
    # Self-attention projects once: one AddBackward0 of the packed linear.
    assert sum(n.name() == "MmBackward0" for n in graph_nodes(out)) == 1
    _, out, _, _ = run(gradviz, {"batch_first": True}, "m(x, y, y)")
    assert "SplitWithSizesBackward0" in {n.name() for n in graph_nodes(out)}  # (E, 2E) rows
    _, out, _, _ = run(gradviz, {"batch_first": True}, "m(x, y, y2)")
    assert "SplitBackward0" in {n.name() for n in graph_nodes(out)}  # chunk(3)


def test_module_parameters_and_repr_are_pytorchs() -> None:
    gradviz.manual_seed(0)
    m = nn.MultiheadAttention(8, 2)
    assert [n for n, _ in m.named_parameters()] == [
        "in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    assert repr(m) == ("MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear("
                       "in_features=8, out_features=8, bias=True)\n)")
    assert not m.in_proj_bias.detach().numpy().any() and not m.out_proj.bias.detach().numpy().any()
    bound = math.sqrt(6 / (8 + 24))  # xavier_uniform_ of the (3E, E) packed weight
    assert np.abs(m.in_proj_weight.detach().numpy()).max() <= bound
    m2 = nn.MultiheadAttention(8, 2, kdim=5, vdim=6, add_bias_kv=True, bias=False)
    assert [n for n, _ in m2.named_parameters()] == [
        "q_proj_weight", "k_proj_weight", "v_proj_weight", "bias_k", "bias_v",
        "out_proj.weight"]
    assert m2.in_proj_weight is None and m2.in_proj_bias is None


def test_dropout_only_while_training() -> None:
    m, out, _, env = run(gradviz, {"batch_first": True, "dropout": 0.5}, "m(x, x, x)")
    names = {n.name() for n in graph_nodes(out)}
    assert "MulBackward0" in names  # the weights' dropout mask
    m.eval()
    out_eval, weights = m(env["x"], env["x"], env["x"])
    ref, attn = reference(m, *(env["x"].detach().numpy(),) * 3)
    np.testing.assert_allclose(out_eval.detach().numpy(), ref, rtol=1e-10)


ERRORS = [
    ("nn.MultiheadAttention(8, 3)", AssertionError, "embed_dim must be divisible by num_heads"),
    ("nn.MultiheadAttention(0, 2)", ValueError,
     "embed_dim and num_heads must be greater than 0, got embed_dim=0 and num_heads=2 instead"),
    ("nn.MultiheadAttention(8, 2)(x, x, x, attn_mask=gradviz.zeros(2, 2))", RuntimeError,
     "The shape of the 2D attn_mask is torch.Size([2, 2]), but should be (3, 3)."),
    ("nn.MultiheadAttention(8, 2)(x, x, x, attn_mask=gradviz.zeros(5, 3, 3))", RuntimeError,
     "The shape of the 3D attn_mask is torch.Size([5, 3, 3]), but should be (4, 3, 3)."),
    ("nn.MultiheadAttention(8, 2)(x, x, x, is_causal=True)", RuntimeError,
     "Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
     "method `generate_square_subsequent_mask` to create this mask."),
]


@pytest.mark.parametrize(("src", "kind", "message"), ERRORS, ids=[e[0] for e in ERRORS])
def test_bad_input_gets_pytorchs_error(src: str, kind: type, message: str) -> None:
    x = gradviz.randn(3, 2, 8)
    with pytest.raises(kind) as info:
        eval(src, {"nn": nn, "x": x, "gradviz": gradviz})  # noqa: S307
    assert str(info.value) == message
