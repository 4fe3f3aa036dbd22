"""Anomaly detection: the forward traceback of a failing node, and NaN checks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradviz as torch
from gradviz.autograd import events


def test_nan_gradient_is_reported_with_the_node_name():
    x = torch.tensor([0.0], requires_grad=True)
    with torch.autograd.detect_anomaly():
        y = x / x
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="Function 'DivBackward0' returned nan values"):
                y.sum().backward()
    forward_line = "y = x / x"
    messages = [str(w.message) for w in caught]
    assert any("Error detected in DivBackward0" in m and forward_line in m for m in messages)
    assert all(w.filename == __file__ for w in caught)


def test_check_nan_false_lets_nan_through():
    x = torch.tensor([0.0], requires_grad=True)
    with torch.autograd.detect_anomaly(check_nan=False):
        (x / x).sum().backward()
    assert np.isnan(x.grad.numpy()).all()


def test_forward_traceback_is_kept_on_nodes_only_while_enabled():
    x = torch.ones(2, requires_grad=True)
    with torch.autograd.detect_anomaly():
        y = x * 2
    z = x * 3
    assert any("y = x * 2" in line for line in y.grad_fn.metadata["traceback_"])
    assert "traceback_" not in z.grad_fn.metadata


def test_set_detect_anomaly_switches_and_restores():
    before = events.listeners()
    assert not torch.autograd.is_anomaly_enabled()
    with torch.autograd.set_detect_anomaly(True):
        assert torch.autograd.is_anomaly_enabled()
    assert not torch.autograd.is_anomaly_enabled()
    torch.autograd.set_detect_anomaly(True, check_nan=False)
    assert torch.autograd.is_anomaly_enabled()
    assert not torch.autograd.is_anomaly_check_nan_enabled()
    torch.autograd.set_detect_anomaly(False)
    assert events.listeners() == before


def test_inplace_error_hint_names_gradviz_anomaly_mode():
    a = torch.rand(3, requires_grad=True)
    b = a * 1
    c = b * b
    b.mul_(2)
    with pytest.raises(RuntimeError, match=r"gradviz\.autograd\.set_detect_anomaly\(True"):
        c.sum().backward()
