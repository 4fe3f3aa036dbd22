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


@pytest.mark.parametrize(("src", "nodes", "names"), FOUND.GRAPHS, ids=[c[0] for c in FOUND.GRAPHS])
def test_hard_coded_graphs_are_torchs(src: str, nodes: list[str], names: list[str] | None
                                      ) -> None:
    out = MORE.run(src, torch)
    assert MORE.chain(out) == nodes
    assert names is None or MORE.saved(out.grad_fn) == names


@pytest.mark.parametrize(("src", "dtype", "values"), FOUND.VALUES, ids=[c[0] for c in FOUND.VALUES])
def test_hard_coded_values_are_torchs(src: str, dtype: str, values: Any) -> None:
    got_dtype, got = MORE.plain(MORE.run(src, torch))
    assert got_dtype == dtype and MORE.same_values(got, values, dtype), (got, values)


@pytest.mark.parametrize(("src", "error", "message"), FOUND.ERRORS,
                         ids=[c[0] for c in FOUND.ERRORS])
def test_hard_coded_errors_are_torchs(src: str, error: str, message: str) -> None:
    with pytest.raises(Exception) as info:
        MORE.run(src, torch)
    assert type(info.value).__name__ == error and str(info.value) == message


@pytest.mark.parametrize(("src", "attr", "expected"), FOUND.SAVED_VALUES,
                         ids=[c[0] + c[1] for c in FOUND.SAVED_VALUES])
def test_hard_coded_saved_arguments_are_torchs(src: str, attr: str, expected: Any) -> None:
    assert getattr(MORE.run(src, torch).grad_fn, attr) == expected


@pytest.mark.parametrize(("attr", "message"), FOUND.ZERO_D_TRANSPOSES)
def test_torch_returns_a_0d_tensor_as_its_own_transpose_with_a_warning(attr: str, message: str
                                                                       ) -> None:
    s = torch.tensor(0.5)
    with pytest.warns(UserWarning) as caught:
        assert getattr(s, attr) is s
    assert str(caught[0].message).startswith(message + " (Triggered internally")


def test_torch_trace_of_eye_is_3_with_trace_backward() -> None:
    a = torch.eye(3, requires_grad=True)
    out = torch.trace(a)
    assert out.item() == 3.0 and out.grad_fn.name() == "TraceBackward0"
    assert torch.trace(input=a).item() == 3.0


def test_torch_records_no_edge_for_soft_margin_losss_target() -> None:
    out = MORE.run("m.nn.functional.soft_margin_loss(x, m.sign(y.detach()))", torch)
    assert [(type(n).__name__, i) for n, i in out.grad_fn.next_functions] == [
        ("AccumulateGrad", 0)]


def test_torch_makes_new_tensors_of_a_zero_size_sum_and_a_zero_order_diff() -> None:
    s, v = torch.tensor(0.4), torch.tensor([0.25, -0.5])
    assert s.sum_to_size(()) is not s and torch.diff(v, n=0) is not v


@pytest.mark.parametrize("src", FOUND.ZERO_NORMS)
def test_torch_records_a_zero_norm_but_leaves_grad_none(src: str) -> None:
    leaves = MORE.env(torch)
    out = MORE.run(src, torch, leaves)
    assert out.grad_fn.name() == "LinalgVectorNormBackward0"
    assert [type(n).__name__ for n, _ in out.grad_fn.next_functions] == ["AccumulateGrad"]
    out.sum().backward()
    assert leaves["x"].grad is None and leaves["v"].grad is None
