"""Grad-mode decorators on generator functions and on classes, and ``set_grad_enabled``'s
argument, as in PyTorch 2.13 (checked against torch; also run on both in
tests/parity/test_hooks_modes_parity.py)."""

from __future__ import annotations

import warnings

import pytest

import gradviz as gv

CLASS_WARNING = ("Decorating classes is deprecated and will be disabled in future versions. You "
                 "should only decorate functions or methods. To preserve the current behavior of "
                 "class decoration, you can directly decorate the `__init__` method and nothing "
                 "else.")

DECORATORS = {
    "no_grad": (lambda: gv.no_grad(), (False, False)),
    "enable_grad": (lambda: gv.enable_grad(), (True, False)),
    "set_grad_enabled(False)": (lambda: gv.set_grad_enabled(False), (False, False)),
    "inference_mode": (lambda: gv.inference_mode(), (False, True)),
}


@pytest.fixture(autouse=True)
def _modes_restored():
    gv.set_grad_enabled(True)
    yield
    assert gv.is_grad_enabled() and not gv.is_inference_mode_enabled()


def modes():
    return gv.is_grad_enabled(), gv.is_inference_mode_enabled()


@pytest.mark.parametrize("name", DECORATORS)
def test_the_mode_holds_while_the_generator_runs_not_between_yields(name):
    make, inside = DECORATORS[name]

    @make()
    def gen(n):
        for _ in range(n):
            sent = yield modes()
            if sent is not None:
                yield ("sent", sent, modes())

    with gv.no_grad():
        g = gen(2)  # made under no_grad; the mode is the decorator's when it runs
    seen = [(value, modes()) for value in g]
    assert seen == [(inside, (True, False))] * 2
    g = gen(3)
    assert next(g) == inside and modes() == (True, False)
    assert g.send(5) == ("sent", 5, inside) and modes() == (True, False)
    with pytest.raises(ValueError, match="thrown"):
        g.throw(ValueError("thrown"))
    assert modes() == (True, False)


def test_a_decorated_generator_sees_throw_and_close_in_its_mode():
    seen = []

    @gv.no_grad()
    def gen():
        try:
            yield 1
        except KeyError:
            seen.append(("caught", gv.is_grad_enabled()))
            yield 2
        finally:
            seen.append(("finally", gv.is_grad_enabled()))

    g = gen()
    next(g)
    assert g.throw(KeyError) == 2
    g.close()
    assert seen == [("caught", False), ("finally", False)] and gv.is_grad_enabled()


def test_a_decorated_generator_returns_its_value():
    @gv.enable_grad()
    def gen():
        yield 1
        return "done"

    g = gen()
    next(g)
    with pytest.raises(StopIteration) as stop:
        next(g)
    assert stop.value.value == "done"


def test_a_decorated_generator_function_is_still_a_generator_function():
    import inspect

    @gv.no_grad()
    def gen():
        yield 1

    assert inspect.isgeneratorfunction(gen) and gen.__name__ == "gen"


@pytest.mark.parametrize("decorate", [
    lambda cls: gv.no_grad()(cls),
    lambda cls: gv.no_grad(cls),
    lambda cls: gv.set_grad_enabled(False)(cls),
    lambda cls: gv.inference_mode()(cls),
])
def test_decorating_a_class_warns_and_builds_instances_in_the_mode(decorate):
    class A:
        def __init__(self):
            self.mode = modes()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        made = decorate(A)
    assert [(w.category, str(w.message)) for w in caught] == [(FutureWarning, CLASS_WARNING)]
    assert caught[0].filename == __file__  # points at the decorating line
    assert not isinstance(made, type)  # a function, as PyTorch returns
    obj = made()
    assert isinstance(obj, A) and obj.mode != (True, False)


def test_set_grad_enabled_as_a_function_a_context_manager_and_its_argument():
    gv.set_grad_enabled(False)
    assert not gv.is_grad_enabled()
    gv.set_grad_enabled(True)
    with gv.set_grad_enabled(False):
        assert not gv.is_grad_enabled()
    assert gv.is_grad_enabled()
    for bad, kind in [(1, "int"), ("yes", "str"), (None, "NoneType")]:
        with pytest.raises(TypeError, match=r"^set_grad_enabled\(\): argument 'enabled' "
                                            rf"\(position 1\) must be bool, not {kind}$"):
            gv.set_grad_enabled(bad)
    assert gv.is_grad_enabled()


def test_a_decorated_function_can_call_itself():
    @gv.no_grad()
    def count(n):
        return [gv.is_grad_enabled()] + (count(n - 1) if n else [])

    assert count(2) == [False, False, False] and gv.is_grad_enabled()


def test_backward_with_a_non_bool_create_graph():
    x = gv.tensor([1.0, 2.0], requires_grad=True)
    (g,) = gv.autograd.grad((x ** 2).sum(), x, create_graph=1)
    assert g.requires_grad
