"""tests/test_top_level_functional.py against a live torch: each torch.* name gives torch's
graph, values and gradients, and is the same function as torch.nn.functional's in torch too."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from _graphs import sig
from _parity import sibling

import gradviz

TOP = sibling("test_top_level_functional")


def _run(lib: Any, src: str) -> tuple[str, np.ndarray, dict[str, np.ndarray]]:
    e = TOP.env(lib)
    out = eval(src, e)  # noqa: S307
    graph = sig(out)
    (out * out).sum().backward()
    grads = {k: v.grad.numpy() for k, v in e.items()
             if hasattr(v, "grad") and getattr(v, "grad", None) is not None}
    return graph, out.detach().numpy(), grads


@pytest.mark.parametrize(("src", "graph"), TOP.CASES, ids=[c[0] for c in TOP.CASES])
def test_graph_values_and_gradients_are_torchs(src: str, graph: str) -> None:
    ours, theirs = _run(gradviz, src), _run(torch, src)
    assert ours[0] == theirs[0] == graph
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10, atol=1e-12)
    assert ours[2].keys() == theirs[2].keys()
    # torch's CPU celu backward is ~3e-8 off the exact exp(x / alpha) even in float64; gradviz's
    # is exact, so celu's gradients are compared to float32 precision.
    rtol = 1e-7 if "celu" in src else 1e-9
    for k in ours[2]:
        np.testing.assert_allclose(ours[2][k], theirs[2][k], rtol=rtol, atol=1e-11, err_msg=k)


@pytest.mark.parametrize("name", TOP.gradviz._SAME_AS_F)
def test_torch_has_the_name_at_the_top_level_too(name: str) -> None:
    assert callable(getattr(torch, name)) and callable(getattr(torch.nn.functional, name))
