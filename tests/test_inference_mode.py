"""``inference_mode`` and inference tensors, as in PyTorch 2.13 (checked against torch; the same
programs run on both in tests/parity/test_hooks_modes_parity.py)."""

from __future__ import annotations

import threading

import pytest

import gradviz as gv

SAVED = "Inference tensors cannot be saved for backward."
INPLACE = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can make "
           "a clone to get a normal tensor before doing inplace update.")


@pytest.fixture(autouse=True)
def _modes_restored():
    yield
    assert not gv.is_inference_mode_enabled() and gv.is_grad_enabled()


def inference_ones(n=2, **kwargs):
    with gv.inference_mode():
        return gv.ones(n, **kwargs)


def test_inference_mode_turns_recording_and_grad_mode_off():
    x = gv.ones(2, requires_grad=True)
    with gv.inference_mode():
        assert gv.is_inference_mode_enabled() and not gv.is_grad_enabled()
        y = x * 2
        z = gv.ones(3)
    assert not gv.is_inference_mode_enabled() and gv.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    assert y.is_inference() and z.is_inference() and not x.is_inference()


def test_enable_grad_inside_inference_mode_switches_grad_mode_but_records_nothing():
    x = gv.ones(2, requires_grad=True)
    with gv.inference_mode():
        with gv.enable_grad():
            assert gv.is_grad_enabled()
            y = x * 2
        assert not gv.is_grad_enabled()
    assert not y.requires_grad and y.is_inference()


def test_mode_false_turns_grad_mode_on_even_inside_inference_mode_or_no_grad():
    x = gv.ones(2, requires_grad=True)
    with gv.no_grad():
        with gv.inference_mode(mode=False):
            assert gv.is_grad_enabled() and not gv.is_inference_mode_enabled()
            y = x * 2
    assert y.requires_grad and not y.is_inference()
    with gv.inference_mode():
        with gv.inference_mode(False):
            assert gv.is_grad_enabled() and not gv.is_inference_mode_enabled()
            assert not gv.ones(2).is_inference()
        assert gv.is_inference_mode_enabled()


def test_inference_mode_as_decorator_with_and_without_parentheses():
    x = gv.ones(2, requires_grad=True)

    @gv.inference_mode()
    def f(a):
        return a * 2, gv.is_inference_mode_enabled()

    @gv.inference_mode
    def g(a):
        """Doc kept."""
        return a * 2

    @gv.inference_mode(False)
    def h(a):
        return a * 2

    out, on = f(x)
    assert on and out.is_inference()
    assert g(x).is_inference() and g.__doc__ == "Doc kept."
    assert not h(x).is_inference() and h(x).requires_grad
    assert gv.autograd.inference_mode is gv.inference_mode


def test_an_inference_tensor_cannot_be_saved_for_backward():
    x = gv.ones(2, requires_grad=True)
    inf = inference_ones()
    with pytest.raises(RuntimeError, match=SAVED):
        x * inf  # MulBackward0 saves `other` for x's gradient
    assert (x + inf).grad_fn.name() == "AddBackward0"  # add saves no tensor: fine
    assert (x.exp() * inf.exp()).requires_grad  # inf.exp() made outside: a normal tensor
    assert not (inf * 2).is_inference()


def test_a_custom_function_cannot_save_an_inference_tensor():
    class Keep(gv.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(b)
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return g, None

    with pytest.raises(RuntimeError, match=SAVED):
        Keep.apply(gv.ones(2, requires_grad=True), inference_ones())


def test_in_place_on_an_inference_tensor_only_inside_inference_mode():
    inf = inference_ones()
    with pytest.raises(RuntimeError, match=INPLACE):
        inf.add_(1)
    with gv.no_grad(), pytest.raises(RuntimeError, match=INPLACE):
        inf.mul_(2)
    with pytest.raises(RuntimeError, match=INPLACE):
        inf[0] = 3.0
    with pytest.raises(RuntimeError, match=INPLACE):
        inf.view(2).zero_()  # a view of an inference tensor is one too
    with gv.inference_mode():
        inf.fill_(5.0)
    assert inf.tolist() == [5.0, 5.0]


def test_in_place_on_a_normal_tensor_inside_inference_mode_counts_its_version():
    n = gv.ones(2)

    @gv.inference_mode()
    def bump():
        n.add_(1)
        v = n.view(2)
        assert not v.is_inference()  # a view of a normal tensor stays normal
        v.add_(1)

    bump()
    assert n._version == 2 and not n.is_inference() and n.tolist() == [3.0, 3.0]


def test_inference_tensors_have_no_version_and_refuse_requires_grad_outside():
    inf = inference_ones()
    with pytest.raises(RuntimeError, match="^Inference tensors do not track version counter.$"):
        _ = inf._version
    msg = "^Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.$"
    with pytest.raises(RuntimeError, match=msg):
        inf.requires_grad_()
    with pytest.raises(RuntimeError, match=msg):
        inf.requires_grad = True
    assert not inf.requires_grad
    inf.requires_grad_(False)  # turning it off is fine


def test_increment_version_leaves_an_inference_tensor_alone_outside_inference_mode():
    # torch 2.13 neither raises nor bumps anything: an inference tensor has no counter.
    inf, normal = inference_ones(), gv.ones(2)
    gv.autograd.graph.increment_version(inf)
    gv.autograd.graph.increment_version([inf, normal])
    assert normal._version == 1
    with gv.inference_mode():
        gv.autograd.graph.increment_version(inf)


def test_what_stays_an_inference_tensor():
    inf = inference_ones()
    assert inf.detach().is_inference() and inf.data.is_inference() and inf.view(2).is_inference()
    assert not inf.clone().is_inference()
    assert repr(inf) == "tensor([1., 1.])"
    assert inf.numpy().tolist() == [1.0, 1.0]


def test_an_inference_leaf_that_requires_grad_can_be_used_where_it_is_not_saved():
    p = inference_ones(requires_grad=True)
    assert p.requires_grad and p.is_leaf and p.is_inference()
    y = (p * 2).sum()  # mul by a number saves only the number
    y.backward()
    assert p.grad.tolist() == [2.0, 2.0]


def test_inference_mode_is_per_thread():
    seen = []
    with gv.inference_mode():
        t = threading.Thread(target=lambda: seen.append(
            (gv.is_inference_mode_enabled(), gv.ones(1).is_inference(), gv.is_grad_enabled())))
        t.start()
        t.join()
    assert seen == [(False, False, True)]


def test_inference_mode_restores_after_an_exception():
    with pytest.raises(ValueError), gv.inference_mode():
        raise ValueError
    assert not gv.is_inference_mode_enabled()
