"""Anomaly detection: the forward traceback of a failing node, and NaN checks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradviz as torch
from gradviz.autograd import events

# Every detect_anomaly() says it is on; the tests that check that warning record it themselves.
pytestmark = pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")


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


# -- PyTorch's warnings, word for word (checked against torch 2.13.0) -------------------------
ENABLED = ("Anomaly Detection has been enabled. This mode will increase the runtime and should "
           "only be enabled for debugging.")
NO_INFO = ("No forward pass information available. Enable detect anomaly during forward pass "
           "for more information.")


class _Fails(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, g):
        raise ValueError("boom")


class _FailsWhenDifferentiatedTwice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return _Fails.apply(g * 2 * x)


def _messages(caught):
    return [str(w.message) for w in caught]


def test_detect_anomaly_warns_that_it_is_on_when_made():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mode = torch.autograd.detect_anomaly()
    assert _messages(caught) == [ENABLED] and caught[0].filename == __file__
    assert not torch.autograd.is_anomaly_enabled()  # made, not entered
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.autograd.set_detect_anomaly(True)
        torch.autograd.set_detect_anomaly(False)
    assert caught == []  # set_detect_anomaly does not warn
    with pytest.raises(TypeError):
        mode(lambda: None)  # not a decorator, as in PyTorch 2.13


def test_a_node_recorded_without_anomaly_mode_has_no_forward_information():
    x = torch.ones(2, requires_grad=True)
    y = _Fails.apply(x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly(), pytest.raises(ValueError, match="boom"):
            y.sum().backward()
    assert _messages(caught) == [ENABLED, f"Error detected in _FailsBackward. {NO_INFO}"]


def test_the_warning_shows_the_forward_line_of_the_failing_node():
    x = torch.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly(), pytest.raises(ValueError, match="boom"):
            y = _Fails.apply(x)  # the line the warning shows
            y.sum().backward()
    text = _messages(caught)[1]
    assert text.startswith("Error detected in _FailsBackward. Traceback of forward call that "
                           "caused the error:\n")
    assert text.rstrip().endswith("y = _Fails.apply(x)  # the line the warning shows")


def test_a_nested_backward_names_the_node_that_induced_it():
    a = torch.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            y = _FailsWhenDifferentiatedTwice.apply(a)  # forward of the parent
            (ga,) = torch.autograd.grad(y.sum(), a, create_graph=True)
            assert ga.grad_fn.metadata["parent_"] is y.grad_fn
            with pytest.raises(ValueError, match="boom"):
                ga.sum().backward()
    failed, induced = _messages(caught)[1:]
    assert failed.startswith("Error detected in _FailsBackward. Traceback")
    assert "return _Fails.apply(g * 2 * x)" in failed  # recorded inside the first backward
    assert induced.startswith("\n\nPrevious calculation was induced by "
                              "_FailsWhenDifferentiatedTwiceBackward. Traceback of forward call "
                              "that induced the previous calculation:\n")
    assert induced.rstrip().endswith("y = _FailsWhenDifferentiatedTwice.apply(a)  # forward of "
                                     "the parent")


def test_a_parent_without_forward_information_says_so():
    a = torch.ones(2, requires_grad=True)
    y = _FailsWhenDifferentiatedTwice.apply(a)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            (ga,) = torch.autograd.grad(y.sum(), a, create_graph=True)
            with pytest.raises(ValueError):
                ga.sum().backward()
    assert _messages(caught)[2] == ("Error detected in _FailsWhenDifferentiatedTwiceBackward. "
                                    + NO_INFO)


def test_when_warnings_are_errors_they_are_printed_and_the_error_propagates(capsys):
    x = torch.ones(2, requires_grad=True)
    with torch.autograd.detect_anomaly():
        y = _Fails.apply(x)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(ValueError, match="boom"):
                y.sum().backward()
    err = capsys.readouterr().err
    assert err.startswith("UserWarning: Error detected in _FailsBackward. Traceback of forward "
                          "call that caused the error:\n")


def test_nan_check_with_warnings_as_errors_still_raises_the_nan_error(capsys):
    a = torch.tensor([0.0], requires_grad=True)
    with torch.autograd.detect_anomaly():
        z = (a / a).sum()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(RuntimeError, match=r"^Function 'DivBackward0' returned nan "
                                                   r"values in its 1th output\.$"):
                z.backward()
    assert capsys.readouterr().err.startswith("UserWarning: Error detected in DivBackward0.")


def test_entering_detect_anomaly_with_warnings_as_errors_raises_the_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="Anomaly Detection has been enabled"):
            torch.autograd.detect_anomaly()
    assert not torch.autograd.is_anomaly_enabled()


def test_nan_index_names_the_output_that_is_nan():
    a = torch.tensor([0.0], requires_grad=True)
    b = torch.tensor([1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly():
            (b / a).sum().backward()  # inf and -inf: no NaN, no error
            with pytest.raises(RuntimeError, match="in its 1th output"):
                (a / a).sum().backward()  # d/d(self) is inf, d/d(other) is NaN
    assert np.isinf(b.grad.numpy()).all()


def test_current_node_is_the_running_node_during_backward_only():
    from gradviz.autograd.engine import current_node

    seen = []
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: seen.append(current_node()))
    z = y.sum()
    z.backward()
    assert seen == [y.grad_fn] and current_node() is None  # y's hook runs as y's node starts
