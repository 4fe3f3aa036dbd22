"""tests/test_ops_oracle_edges.py's hard-coded expectations derived again from torch: each
program run with torch gives the same node, values, gradients and errors."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch
from _parity import sibling

EDGES = sibling("test_ops_oracle_edges")


@pytest.mark.parametrize(("src", "node", "values", "grads"), [g[1:] for g in EDGES.GRADS],
                         ids=[g[0] for g in EDGES.GRADS])
def test_hard_coded_outcomes_are_torchs(src: str, node: str | None, values: Any,
                                        grads: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.qr's deprecation
        got_node, got_values, got_grads = EDGES.outcome(src, torch)
    assert got_node == node
    np.testing.assert_allclose(np.asarray(got_values, float), np.asarray(values, float),
                               rtol=1e-9, atol=1e-11)
    assert sorted(got_grads) == sorted(grads)
    for leaf, grad in grads.items():
        np.testing.assert_allclose(np.asarray(got_grads[leaf], float), np.asarray(grad, float),
                                   rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize(("src", "values"), [v[1:] for v in EDGES.VALUES],
                         ids=[v[0] for v in EDGES.VALUES])
def test_hard_coded_values_are_torchs(src: str, values: Any) -> None:
    assert EDGES.plain(EDGES.run(src, torch)["out"]) == values


@pytest.mark.parametrize(("src", "attr", "value"), [v[1:] for v in EDGES.SAVED],
                         ids=[v[0] for v in EDGES.SAVED])
def test_hard_coded_saved_values_are_torchs(src: str, attr: str, value: Any) -> None:
    assert getattr(EDGES.run(src, torch)["out"].grad_fn, attr) == value


@pytest.mark.parametrize(("src", "error", "message"), [e[1:] for e in EDGES.ERRORS],
                         ids=[e[0] for e in EDGES.ERRORS])
def test_hard_coded_errors_are_torchs(src: str, error: str, message: str) -> None:
    with pytest.raises(Exception) as info:
        EDGES.run(src, torch)
    assert type(info.value).__name__ == error and str(info.value) == message
