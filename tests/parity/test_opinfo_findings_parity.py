"""tests/test_opinfo_findings.py's expectations derived again from a live torch: the gradients,
graphs and method forms where running PyTorch's OpInfo samples found gradviz differing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from _parity import sibling

FOUND = sibling("test_opinfo_findings")
MORE = sibling("test_ops_more")


@pytest.mark.parametrize(("src", "leaf", "grad"), FOUND.GRADS,
                         ids=[c[0] + " d" + c[1] for c in FOUND.GRADS])
def test_hard_coded_gradients_are_torchs(src: str, leaf: str, grad: Any) -> None:
    np.testing.assert_allclose(MORE.leaf_grad(src, leaf, torch), np.asarray(grad, dtype=float),
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("src", FOUND.ZERO_NORMS)
def test_torch_records_a_zero_norm_but_leaves_grad_none(src: str) -> None:
    leaves = MORE.env(torch)
    out = MORE.run(src, torch, leaves)
    assert out.grad_fn.name() == "LinalgVectorNormBackward0"
    assert [type(n).__name__ for n, _ in out.grad_fn.next_functions] == ["AccumulateGrad"]
    out.sum().backward()
    assert leaves["x"].grad is None and leaves["v"].grad is None
