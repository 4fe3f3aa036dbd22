"""tests/test_saved_as_given.py against a live torch: every saved argument it hard-codes reads
back the same from torch 2.13, and the gradients it compares are torch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from _parity import sibling

import gradviz

GIVEN = sibling("test_saved_as_given")


@pytest.mark.parametrize(("src", "attr", "expected"), GIVEN.CASES,
                         ids=[f"{c[0]} {c[1]}" for c in GIVEN.CASES])
def test_hard_coded_saved_arguments_are_torchs(src: str, attr: str, expected: Any) -> None:
    got = GIVEN.saved(torch, src, attr)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(("src", "positive"), GIVEN.SAME, ids=[c[0] for c in GIVEN.SAME])
def test_gradients_with_negative_arguments_are_torchs(src: str, positive: str) -> None:
    grads = []
    for lib in (gradviz, torch):
        e = GIVEN.env(lib)
        x = lib.tensor(np.random.default_rng(0).normal(size=(4, 5, 6)), requires_grad=True)
        e["x"] = x
        out = eval(src, e)  # noqa: S307
        w = np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape))
        (out * lib.tensor(w)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-14)  # softmax: ulps
