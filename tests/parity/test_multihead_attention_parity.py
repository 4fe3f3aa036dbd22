"""tests/test_multihead_attention.py against a live torch: each case records torch's whole
graph, with torch's values and gradients (parameters and inputs), and the errors are torch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from _graphs import sig
from _parity import sibling

import gradviz

MHA = sibling("test_multihead_attention")


def _run(lib: Any, kwargs: dict, call: str) -> tuple[str, str | None, list, dict]:
    m, out, weights, env = MHA.run(lib, kwargs, call)
    graphs = (sig(out), None if weights is None else sig(weights))
    loss = (out * out).sum() + (0 if weights is None else (weights * weights).sum())
    loss.backward()
    values = [out.detach().numpy(), None if weights is None else weights.detach().numpy()]
    grads = {n: p.grad.numpy() for n, p in m.named_parameters()}
    grads.update({k: v.grad.numpy() for k, v in env.items()
                  if isinstance(v, (gradviz.Tensor, torch.Tensor)) and v.grad is not None})
    return graphs, values, grads


@pytest.mark.parametrize(("name", "kwargs", "call"), MHA.CASES, ids=MHA._IDS)
def test_graph_values_and_gradients_are_torchs(name: str, kwargs: dict, call: str) -> None:
    ours, theirs = _run(gradviz, kwargs, call), _run(torch, kwargs, call)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1], theirs[1], strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert ours[2].keys() == theirs[2].keys()
    for key in ours[2]:
        np.testing.assert_allclose(ours[2][key], theirs[2][key], rtol=1e-9, atol=1e-11,
                                   err_msg=key)


def test_module_repr_and_parameter_names_are_torchs() -> None:
    for kwargs in ({}, {"kdim": 5, "vdim": 6, "add_bias_kv": True, "bias": False}):
        ours, theirs = gradviz.nn.MultiheadAttention(8, 2, **kwargs), \
            torch.nn.MultiheadAttention(8, 2, **kwargs)
        assert repr(ours) == repr(theirs)
        assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]


@pytest.mark.parametrize(("src", "kind", "message"), MHA.ERRORS, ids=[e[0] for e in MHA.ERRORS])
def test_hard_coded_errors_are_torchs(src: str, kind: type, message: str) -> None:
    x = torch.randn(3, 2, 8)
    with pytest.raises(kind) as info:
        eval(src, {"nn": torch.nn, "x": x, "gradviz": torch})  # noqa: S307
    assert str(info.value) == message
