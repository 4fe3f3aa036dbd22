"""tests/test_attention.py against a live torch: every graph it hard-codes is the one torch 2.13
records, every case without dropout gives torch's values and gradients, the flash node saves
what torch's saves, and the error texts are torch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from _graphs import sig
from _parity import sibling

import gradviz

ATT = sibling("test_attention")
_IDS = [c[0][len(ATT.SDPA):] for c in ATT.GRAPHS]


@pytest.mark.parametrize(("src", "expected"), ATT.GRAPHS, ids=_IDS)
def test_hard_coded_graphs_are_torchs(src: str, expected: str) -> None:
    assert sig(eval(src, ATT.env(torch))) == expected  # noqa: S307


def _run(lib: Any, src: str) -> tuple[np.ndarray, list[np.ndarray | None], Any]:
    out, args, _ = ATT._call(src, lib)
    w = np.random.default_rng(1).normal(size=tuple(out.shape)).astype(str(out.dtype)[6:]
                                                                      if lib is torch else
                                                                      out.dtype.name)
    (out * lib.tensor(w)).sum().backward(retain_graph=True)  # the saved values are compared
    return (out.detach().numpy(), [None if a.grad is None else a.grad.numpy() for a in args],
            out.grad_fn)


@pytest.mark.parametrize("src", ATT.DETERMINISTIC, ids=[s[len(ATT.SDPA):] for s in
                                                       ATT.DETERMINISTIC])
def test_values_gradients_and_saved_values_are_torchs(src: str) -> None:
    ours, theirs = _run(gradviz, src), _run(torch, src)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12, atol=1e-14)
    for g, t in zip(ours[1], theirs[1], strict=True):
        assert (g is None) == (t is None)
        if g is not None:
            np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12)
    node, tnode = ours[2], theirs[2]
    if tnode.name() != "ScaledDotProductFlashAttentionForCpuBackward0":
        return
    for attr in sorted(a for a in dir(tnode) if a.startswith("_saved_")):
        mine, want = getattr(node, attr), getattr(tnode, attr)
        if isinstance(want, torch.Tensor):
            assert mine.dtype.name == str(want.dtype)[6:], attr
            np.testing.assert_allclose(mine.detach().numpy(), want.detach().numpy(),
                                       rtol=1e-12, atol=1e-14,
                                       err_msg=attr)
        else:
            assert mine == want and type(mine) is type(want), attr


def test_float32_values_are_torchs_to_float32_precision() -> None:
    src = f"{ATT.SDPA}(t(1, 2, 3, 4, dt='float32'), t(1, 2, 5, 4, dt='float32'), " \
          "t(1, 2, 5, 4, dt='float32'), is_causal=True)"
    ours, theirs = _run(gradviz, src), _run(torch, src)
    assert ours[0].dtype == theirs[0].dtype == np.float32
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    for g, t in zip(ours[1], theirs[1], strict=True):
        np.testing.assert_allclose(g, t, rtol=1e-4, atol=1e-5)


def test_double_backward_fails_as_torchs_does() -> None:
    for lib in (gradviz, torch):
        e = ATT.env(lib)
        q, k, v = e["t"](1, 2, 3, 4), e["t"](1, 2, 5, 4), e["t"](1, 2, 5, 4)
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v)
        gq, = lib.autograd.grad(out.sum(), q, create_graph=True)
        assert gq.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::_scaled_dot_product_flash_"
                                               "attention_for_cpu_backward is not implemented"):
            gq.sum().backward()


@pytest.mark.parametrize(("src", "message"), ATT.ERRORS, ids=[c[0][len(ATT.SDPA):]
                                                             for c in ATT.ERRORS])
def test_hard_coded_errors_are_torchs(src: str, message: str) -> None:
    with pytest.raises(RuntimeError) as info:
        eval(src, ATT.env(torch))  # noqa: S307
    assert str(info.value) == message
