"""``F.scaled_dot_product_attention``: the graph PyTorch 2.13 records on the CPU for each of its
two implementations, its values and gradients against the definition, the flash node's saved
values, double backward and errors. Expectations are torch's, hard-coded
(tests/parity/test_attention_parity.py derives them again from torch)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from _graphs import sig

import gradviz
import gradviz.nn.functional as F

U = 2**64


def env(lib: Any) -> dict[str, Any]:
    """``t(*shape, rg=True, dt="float64")``: normal random inputs, the same for gradviz and
    torch, drawn in the order a case calls it."""
    rng = np.random.default_rng(0)

    def t(*shape: int, rg: bool = True, dt: str = "float64") -> Any:
        return lib.tensor(rng.normal(size=shape).astype(dt), requires_grad=rg)

    return {"t": t, "F": lib.nn.functional, "lib": lib}


# The graphs, built from their parts. The flash kernel: one node over q, k, v.
FLASH = "ScaledDotProductFlashAttentionForCpuBackward0({}, {}, {})"
# The math path: q * sqrt(scale) @ (k^T * sqrt(scale)) through matmul's batched path, the mask
# added, _safe_softmax, dropout, @ v.
SCORES = ("UnsafeViewBackward0(BmmBackward0(ViewBackward0(ExpandBackward0(MulBackward1(Acc))), "
          "ReshapeAliasBackward0(ExpandBackward0(MulBackward1(TransposeBackward0(Acc))))))")


def math_graph(weights: str, value: str = "ViewBackward0(ExpandBackward0(Acc))") -> str:
    return f"UnsafeViewBackward0(BmmBackward0(ViewBackward0(ExpandBackward0({weights})), {value}))"


SOFTMAX = f"SafeSoftmaxBackward0({SCORES})"
SDPA = "F.scaled_dot_product_attention"
GRAPHS = [
    (f"{SDPA}(t(1, 2, 3, 4), t(1, 2, 5, 4), t(1, 2, 5, 4))", FLASH.format("Acc", "Acc", "Acc")),
    (f"{SDPA}(t(2, 1, 4, 3), t(2, 1, 4, 3), t(2, 1, 4, 3), is_causal=True, scale=0.7)",
     FLASH.format("Acc", "Acc", "Acc")),
    (f"{SDPA}(t(1, 1, 2, 3), t(1, 1, 4, 3), t(1, 1, 4, 3), "
     "attn_mask=lib.tensor([[True, False, True, True], [False, False, False, False]]))",
     FLASH.format("Acc", "Acc", "Acc")),
    (f"{SDPA}(t(1, 1, 3, 3), t(1, 1, 4, 3), t(1, 1, 4, 3), attn_mask=t(3, 4, rg=False), "
     "is_causal=True)", FLASH.format("Acc", "Acc", "Acc")),
    (f"{SDPA}(t(1, 2, 3, 4), t(1, 2, 5, 4, rg=False), t(1, 2, 5, 4, rg=False))",
     FLASH.format("Acc", "None", "None")),
    (f"{SDPA}(t(1, 4, 3, 8), t(1, 2, 5, 8), t(1, 2, 5, 8), enable_gqa=True)",
     FLASH.format("Acc", "Acc", "Acc")),
    (f"{SDPA}(t(1, 2, 3, 4), t(1, 2, 5, 4), t(1, 2, 5, 4), attn_mask=t(1, 2, 3, 5, rg=False))",
     FLASH.format("Acc", "Acc", "Acc")),
    # Not the flash kernel: 3-d, 2-d or 5-d inputs, a value of other features, fewer key heads
    # without enable_gqa, a mask that needs a gradient, dropout.
    (f"{SDPA}(t(2, 4, 8), t(2, 5, 8), t(2, 5, 6))", math_graph(SOFTMAX)),
    (f"{SDPA}(t(2, 4, 8), t(2, 5, 8), t(2, 5, 6), attn_mask=t(4, 5))",
     math_graph(f"SafeSoftmaxBackward0(AddBackward0({SCORES}, Acc))")),
    (f"{SDPA}(t(2, 4, 8), t(2, 5, 8), t(2, 5, 6), is_causal=True)",
     math_graph(f"SafeSoftmaxBackward0(AddBackward0({SCORES}, None))")),
    (f"{SDPA}(t(2, 4, 8), t(2, 5, 8), t(2, 5, 6), "
     "attn_mask=lib.tensor([[True] * 5] * 3 + [[False] * 5]))",
     math_graph(f"SafeSoftmaxBackward0(AddBackward0({SCORES}, None))")),
    (f"{SDPA}(t(4, 8), t(5, 8), t(5, 8))",
     "MmBackward0(SafeSoftmaxBackward0(MmBackward0(MulBackward1(Acc), "
     "MulBackward1(TransposeBackward0(Acc)))), Acc)"),
    (f"{SDPA}(t(1, 2, 4, 8), t(1, 2, 5, 8), t(1, 2, 5, 6))", math_graph(SOFTMAX)),
    (f"{SDPA}(t(1, 2, 3, 4), t(1, 1, 5, 4), t(1, 1, 5, 4))",
     math_graph(SOFTMAX, "ReshapeAliasBackward0(ExpandBackward0(Acc))")),
    (f"{SDPA}(t(1, 2, 3, 4), t(1, 2, 5, 4), t(1, 2, 5, 4), attn_mask=t(3, 5))",
     math_graph(f"SafeSoftmaxBackward0(AddBackward0({SCORES}, Acc))")),
    (f"{SDPA}(t(2, 1, 2, 3, 4), t(2, 1, 2, 5, 4), t(2, 1, 2, 5, 4))", math_graph(SOFTMAX)),
    (f"{SDPA}(t(2, 4, 8), t(2, 5, 8), t(2, 5, 6), dropout_p=0.3)",
     math_graph(f"MulBackward0({SOFTMAX}, None)")),
    (f"{SDPA}(t(1, 2, 3, 4), t(1, 2, 5, 4), t(1, 2, 5, 4), dropout_p=0.3)",
     math_graph(f"MulBackward0({SOFTMAX}, None)")),
]
# The cases without dropout: their values and gradients are deterministic.
DETERMINISTIC = [src for src, _ in GRAPHS if "dropout_p" not in src]


@pytest.mark.parametrize(("src", "expected"), GRAPHS, ids=[c[0][len(SDPA):] for c in GRAPHS])
def test_the_graph_is_the_one_pytorch_records(src: str, expected: str) -> None:
    assert sig(eval(src, env(gradviz))) == expected  # noqa: S307


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: Any = None,
              is_causal: bool = False, scale: float | None = None,
              enable_gqa: bool = False) -> np.ndarray:
    """The definition, in NumPy: softmax(q k^T * scale + mask) v, 0 for a query that may attend
    to nothing."""
    if enable_gqa and k.shape[-3] != q.shape[-3]:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if mask is not None:
        s = s + (np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask)
    if is_causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    top = s.max(-1, keepdims=True)
    e = np.exp(s - np.where(np.isneginf(top), 0, top))
    total = e.sum(-1, keepdims=True)
    return (e / np.where(total == 0, 1, total)) @ v


def _call(src: str, lib: Any) -> tuple[Any, list[Any], dict[str, Any]]:
    """The case's output, its tensor arguments and its keywords (read back by re-running the
    call with a recording F)."""
    seen: dict[str, Any] = {}

    class Recorder:
        def scaled_dot_product_attention(self, *args: Any, **kwargs: Any) -> Any:
            seen["args"], seen["kwargs"] = args, kwargs
            return lib.nn.functional.scaled_dot_product_attention(*args, **kwargs)

    e = env(lib)
    e["F"] = Recorder()
    out = eval(src, e)  # noqa: S307
    return out, list(seen["args"]), seen["kwargs"]


@pytest.mark.parametrize("src", DETERMINISTIC, ids=[s[len(SDPA):] for s in DETERMINISTIC])
def test_values_and_gradients_are_the_definitions(src: str) -> None:
    out, args, kwargs = _call(src, gradviz)
    mask = kwargs.get("attn_mask")
    arrays = [a.detach().numpy() for a in args]
    mask = None if mask is None else mask.detach().numpy()
    ref = reference(*arrays, mask=mask,
                    is_causal=kwargs.get("is_causal", False), scale=kwargs.get("scale"),
                    enable_gqa=kwargs.get("enable_gqa", False))
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-12, atol=1e-14)
    # Gradients against central differences of the definition (float64).
    w = np.random.default_rng(1).normal(size=ref.shape)
    (out * gradviz.tensor(w)).sum().backward()

    def f(xs: list[np.ndarray]) -> float:
        return (reference(*xs, mask=mask, is_causal=kwargs.get("is_causal", False),
                          scale=kwargs.get("scale"),
                          enable_gqa=kwargs.get("enable_gqa", False)) * w).sum()

    for i, a in enumerate(args):
        if not a.requires_grad:
            assert a.grad is None
            continue
        numeric = np.zeros_like(arrays[i])
        for idx in np.ndindex(arrays[i].shape):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[i][idx] += 1e-6
            minus[i][idx] -= 1e-6
            numeric[idx] = (f(plus) - f(minus)) / 2e-6
        np.testing.assert_allclose(a.grad.numpy(), numeric, rtol=1e-6, atol=1e-8)


def test_the_flash_node_saves_what_pytorch_saves() -> None:
    e = env(gradviz)
    q, k, v = e["t"](1, 1, 2, 3), e["t"](1, 1, 4, 3), e["t"](1, 1, 4, 3)
    mask = gradviz.tensor([[True, False, True, True], [False, False, False, False]])
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.5)
    node = out.grad_fn
    assert sorted(a for a in dir(node) if a.startswith("_saved_")) == [
        "_saved_attn_mask", "_saved_dropout_p", "_saved_is_causal", "_saved_key",
        "_saved_logsumexp", "_saved_output", "_saved_query", "_saved_scale", "_saved_value"]
    assert node._saved_dropout_p == 0.0 and node._saved_is_causal is False
    assert node._saved_scale == 0.5
    # The bool mask is saved as the float mask it stands for.
    assert node._saved_attn_mask.dtype == gradviz.float64
    np.testing.assert_array_equal(node._saved_attn_mask.numpy(),
                                  [[0, -np.inf, 0, 0], [-np.inf, -np.inf, -np.inf, -np.inf]])
    assert node._saved_query.equal(q) and node._saved_value.equal(v)
    assert node._saved_output.equal(out)
    # logsumexp of each query's scores; 0 for the query masked from every key (output 0).
    s = (q.detach().numpy() @ np.swapaxes(k.detach().numpy(), -1, -2) * 0.5)[0, 0, 0]
    keep = s[[0, 2, 3]]
    lse = node._saved_logsumexp.numpy()
    assert lse.shape == (1, 1, 2)
    np.testing.assert_allclose(lse[0, 0, 0], np.log(np.exp(keep).sum()), rtol=1e-14)
    assert lse[0, 0, 1] == 0.0
    np.testing.assert_array_equal(out.detach().numpy()[0, 0, 1], [0.0, 0.0, 0.0])
    default = F.scaled_dot_product_attention(q, k, v, is_causal=True).grad_fn
    assert default._saved_scale is None and default._saved_attn_mask is None
    assert default._saved_is_causal is True


def test_the_flash_kernels_backward_cannot_be_differentiated_again() -> None:
    e = env(gradviz)
    q, k, v = e["t"](1, 2, 3, 4), e["t"](1, 2, 5, 4), e["t"](1, 2, 5, 4)
    out = F.scaled_dot_product_attention(q, k, v)
    gq, gk, gv = gradviz.autograd.grad(out.sum(), (q, k, v), create_graph=True)
    # (PyTorch records one such node with three outputs; gradviz's formulas run per input, so
    # each gradient has its own: docs/ops.md, "Where gradviz differs".)
    assert {g.grad_fn.name() for g in (gq, gk, gv)} == {"torch::autograd::NotImplemented"}
    with pytest.raises(RuntimeError, match=r"^derivative for aten::_scaled_dot_product_flash_"
                                           r"attention_for_cpu_backward is not implemented$"):
        gq.sum().backward()
    # The math path's second derivative exists (its ops are all twice differentiable).
    q3, k3, v3 = e["t"](2, 3, 4), e["t"](2, 5, 4), e["t"](2, 5, 4)
    g3, = gradviz.autograd.grad((F.scaled_dot_product_attention(q3, k3, v3) ** 2).sum(), q3,
                                create_graph=True)
    g3.sum().backward()
    assert np.isfinite(k3.grad.numpy()).all() and np.abs(k3.grad.numpy()).sum() > 0


def test_dropout_multiplies_the_weights_by_a_scaled_mask() -> None:
    e = env(gradviz)
    q, k, v = e["t"](2, 4, 8), e["t"](2, 5, 8), e["t"](2, 5, 6)
    gradviz.manual_seed(3)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.25)
    mul = out.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0] \
        .next_functions[0][0]
    assert mul.name() == "MulBackward0"
    noise = mul._saved_other.numpy()
    assert set(np.unique(noise)) <= {0.0, 1 / 0.75} and 0 < (noise == 0).sum() < noise.size
    weights = reference(q.detach().numpy(), k.detach().numpy(), np.eye(5)[None].repeat(2, 0))
    np.testing.assert_allclose(out.detach().numpy(), (weights * noise) @ v.detach().numpy(),
                               rtol=1e-12)
    gradviz.manual_seed(3)
    again = F.scaled_dot_product_attention(q, k, v, dropout_p=0.25)
    assert again.equal(out)  # the seed fixes the mask
    zero = F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    assert not zero.detach().numpy().any()


def test_without_gradients_no_node_is_recorded() -> None:
    e = env(gradviz)
    with gradviz.no_grad():
        out = F.scaled_dot_product_attention(e["t"](1, 1, 2, 3), e["t"](1, 1, 4, 3),
                                             e["t"](1, 1, 4, 3))
    assert out.grad_fn is None and out.shape == (1, 1, 2, 3)


def test_float32_stays_float32() -> None:
    e = env(gradviz)
    for shape in ((1, 2, 3, 4), (2, 3, 4)):
        args = [e["t"](*shape, dt="float32") for _ in range(3)]
        out = F.scaled_dot_product_attention(*args)
        assert out.dtype == gradviz.float32
        out.sum().backward()
        assert all(a.grad.dtype == gradviz.float32 for a in args)


ERRORS = [
    (f"{SDPA}(t(8), t(5, 8), t(5, 8))",
     "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: 1 "
     "key.dim: 2 and value.dim: 2 instead."),
    (f"{SDPA}(t(2, 4, 8), t(2, 5, 8, dt='float32'), t(2, 5, 8, dt='float32'))",
     "Expected query, key, and value to have the same dtype, but got query.dtype: double "
     "key.dtype: float and value.dtype: float instead."),
    (f"{SDPA}(t(2, 4, 8, dt='float32'), t(2, 5, 8, dt='float32'), t(2, 5, 8, dt='float32'), "
     "attn_mask=t(4, 5))",
     "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
     "attn_mask.dtype: double and  query.dtype: float instead."),
    (f"{SDPA}(t(2, 4, 8), t(2, 5, 8), t(2, 5, 8), attn_mask=t(4, 5), is_causal=True)",
     "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True"),
    (f"{SDPA}(t(2, 4, 8), t(2, 5, 7), t(2, 5, 8))",
     "Expected size for first two dimensions of batch2 tensor to be: [2, 8] but got: [2, 7]."),
    (f"{SDPA}(lib.ones(2, 4, 8, dtype=lib.int32), lib.ones(2, 5, 8, dtype=lib.int32), "
     "lib.ones(2, 5, 8, dtype=lib.int32))", "expected scalar type Float but found Int"),
]


@pytest.mark.parametrize(("src", "message"), ERRORS, ids=[c[0][len(SDPA):] for c in ERRORS])
def test_bad_input_gets_pytorchs_error(src: str, message: str) -> None:
    with pytest.raises(RuntimeError) as info:
        eval(src, env(gradviz))  # noqa: S307
    assert str(info.value) == message or str(info.value).startswith(message + " (")


def test_a_trace_shows_the_attention_node() -> None:
    e = env(gradviz)
    q, k, v = e["t"](1, 2, 3, 4), e["t"](1, 2, 5, 4), e["t"](1, 2, 5, 4)
    with gradviz.trace() as tr:
        F.scaled_dot_product_attention(q, k, v).sum().backward()
    names = [n.name for n in tr.nodes.values()]
    assert "ScaledDotProductFlashAttentionForCpuBackward0" in names
    op = next(o for o in tr.ops if o.name == "_scaled_dot_product_flash_attention_for_cpu")
    assert len(op.outputs) == 2  # output and logsumexp
    assert q.grad is not None and k.grad is not None and v.grad is not None
