"""Grad modes: context managers, decorators, plain calls, nesting and thread-locality, as PyTorch.

Every expectation was checked against torch 2.13.0.
"""

from __future__ import annotations

import threading

import pytest

import gradviz as gv


@pytest.fixture(autouse=True)
def _grad_mode_restored():
    # A failing test must not leave recording off for the rest of the suite.
    gv.set_grad_enabled(True)
    yield
    gv.set_grad_enabled(True)


def leaf():
    return gv.tensor([1.0, 2.0], requires_grad=True)


def test_no_grad_context_stops_recording():
    x = leaf()
    with gv.no_grad():
        assert not gv.is_grad_enabled()
        y = x * 2
    assert gv.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf


def test_no_grad_restores_mode_after_an_exception():
    with pytest.raises(ValueError):
        with gv.no_grad():
            raise ValueError
    assert gv.is_grad_enabled()


def test_enable_grad_inside_no_grad_records():
    x = leaf()
    with gv.no_grad():
        z = x * 1
        with gv.enable_grad():
            assert gv.is_grad_enabled()
            w = x * 3
        assert not gv.is_grad_enabled()
    assert not z.requires_grad
    assert w.requires_grad and w.grad_fn.name() == "MulBackward0"


def test_no_grad_as_decorator_with_and_without_parentheses():
    x = leaf()

    @gv.no_grad()
    def with_parens():
        return gv.is_grad_enabled(), (x * 2).requires_grad

    @gv.no_grad
    def bare():
        """Doc kept."""
        return gv.is_grad_enabled(), (x * 2).requires_grad

    assert with_parens() == (False, False)
    assert bare() == (False, False)
    assert bare.__name__ == "bare" and bare.__doc__ == "Doc kept."
    assert gv.is_grad_enabled()


def test_no_grad_decorates_methods():
    class Model:
        @gv.no_grad()
        def forward(self, a):
            return (a * 2).requires_grad

    assert Model().forward(leaf()) is False


def test_enable_grad_as_decorator_inside_no_grad():
    @gv.enable_grad
    def bare():
        return gv.is_grad_enabled()

    @gv.enable_grad()
    def with_parens():
        return gv.is_grad_enabled()

    with gv.no_grad():
        assert bare() is True
        assert with_parens() is True
        assert not gv.is_grad_enabled()


def test_set_grad_enabled_as_plain_call_switches_immediately():
    gv.set_grad_enabled(False)
    assert not gv.is_grad_enabled()
    assert not (leaf() * 2).requires_grad
    gv.set_grad_enabled(True)
    assert gv.is_grad_enabled()


def test_set_grad_enabled_as_context_manager_restores_previous_mode():
    with gv.set_grad_enabled(False):
        assert not gv.is_grad_enabled()
    assert gv.is_grad_enabled()
    with gv.no_grad():
        with gv.set_grad_enabled(True):
            assert gv.is_grad_enabled()
        assert not gv.is_grad_enabled()


def test_set_grad_enabled_as_decorator_switches_only_during_calls():
    @gv.set_grad_enabled(False)
    def f():
        return gv.is_grad_enabled()

    assert gv.is_grad_enabled()  # building the decorator did not leave the mode switched
    assert f() is False
    assert gv.is_grad_enabled()


def test_nested_modes_unwind_in_order():
    states = []
    with gv.no_grad():
        states.append(gv.is_grad_enabled())
        with gv.enable_grad():
            states.append(gv.is_grad_enabled())
            with gv.set_grad_enabled(False):
                states.append(gv.is_grad_enabled())
            states.append(gv.is_grad_enabled())
        states.append(gv.is_grad_enabled())
    states.append(gv.is_grad_enabled())
    assert states == [False, True, False, True, False, True]


def test_grad_mode_is_thread_local():
    x = leaf()
    seen = {}

    def worker():
        seen["enabled"] = gv.is_grad_enabled()
        seen["records"] = (x * 2).requires_grad

    with gv.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        seen["main"] = gv.is_grad_enabled()
    assert seen == {"enabled": True, "records": True, "main": False}


def test_disabling_grad_in_a_thread_leaves_main_thread_recording():
    seen = {}

    def worker():
        gv.set_grad_enabled(False)
        seen["thread"] = gv.is_grad_enabled()

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen["thread"] is False
    assert gv.is_grad_enabled()


def test_backward_runs_with_grad_disabled_unless_create_graph():
    seen = []
    x = leaf()
    y = x * 2
    y.register_hook(lambda g: seen.append(gv.is_grad_enabled()))
    y.sum().backward(retain_graph=True)
    with pytest.warns(UserWarning, match="create_graph=True"):
        y.sum().backward(create_graph=True)
    assert seen == [False, True]
    assert gv.is_grad_enabled()


def test_requires_grad_leaf_in_no_grad_stays_leaf_requiring_grad():
    with gv.no_grad():
        x = leaf()
        x.mul_(2)  # in-place on a leaf is allowed when nothing records
    assert x.requires_grad and x.is_leaf and x.grad_fn is None
    assert x.tolist() == [2.0, 4.0]
