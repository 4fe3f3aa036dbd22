"""``gradcheck`` / ``gradgradcheck``: each of PyTorch's checks fails where PyTorch's does, with
its text (checked against torch 2.13.0; tests/parity/test_hooks_modes_parity.py runs the same
programs on both)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import gradviz as gv
from gradviz.autograd import GradcheckError, gradcheck, gradgradcheck


def x64(n=3):
    return gv.tensor(np.arange(1.0, n + 1), dtype=gv.float64, requires_grad=True)


class _WrongGrad(gv.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


class _NonDeterministic(gv.autograd.Function):
    calls = itertools.count()

    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return g * (2 + next(_NonDeterministic.calls) * 1e-9)


class _NotTimesGradOutput(gv.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2 + 1e-12  # within tolerance, but not zero for a zero grad_output


class _WrongDouble(gv.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a ** 2

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * 2 * a.detach()  # right once, wrong when differentiated again


class _UndefinedBreaks(gv.autograd.Function):
    """Copes with one output without gradient, not with both."""

    @staticmethod
    def forward(ctx, a):
        ctx.set_materialize_grads(False)  # backward sees None, not zeros
        return a * 2, a * 3

    @staticmethod
    def backward(ctx, g1, g2):
        if g1 is None and g2 is None:
            raise RuntimeError("no gradient at all")
        return (0 if g1 is None else g1 * 2) + (0 if g2 is None else g2 * 3)


def test_a_wrong_gradient_gives_pytorchs_message_with_both_jacobians():
    with pytest.raises(GradcheckError) as info:
        gradcheck(_WrongGrad.apply, (x64(),))
    assert str(info.value) == (
        "Jacobian mismatch for output 0 with respect to input 0,\n"
        "numerical:tensor([[2.0000, 0.0000, 0.0000],\n"
        "        [0.0000, 2.0000, 0.0000],\n"
        "        [0.0000, 0.0000, 2.0000]], dtype=gradviz.float64)\n"
        "analytical:tensor([[3., 0., 0.],\n"
        "        [0., 3., 0.],\n"
        "        [0., 0., 3.]], dtype=gradviz.float64)\n")
    assert gradcheck(_WrongGrad.apply, (x64(),), raise_exception=False) is False


def test_the_input_index_counts_only_inputs_that_require_grad():
    c = gv.tensor([1.0, 2.0, 3.0], dtype=gv.float64)
    with pytest.raises(GradcheckError, match="for output 0 with respect to input 0,"):
        gradcheck(lambda k, a: _WrongGrad.apply(a) * k, (c, x64()))


def test_fast_mode_passes_and_fails_like_slow_mode_and_adds_the_slow_jacobians():
    assert gradcheck(lambda a: (a * a).sum() * a, (x64(),), fast_mode=True)
    with pytest.raises(GradcheckError) as info:
        gradcheck(_WrongGrad.apply, (x64(),), fast_mode=True)
    text = str(info.value)
    assert text.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    assert "computed \nin fast mode. See: https://github.com/pytorch/pytorch/issues/53876" in text
    assert "The max per-element difference (slow mode) is: 1.0000000000" in text
    assert "Fast gradcheck failed but element-wise differences are small" not in text


def test_backward_must_be_reentrant_unless_nondet_tol_allows():
    with pytest.raises(GradcheckError, match="^Backward is not reentrant, i.e., running backward "
                                             "with same input and grad_output multiple times "
                                             "gives different values, although analytical "
                                             "gradient matches numerical gradient.The tolerance "
                                             r"for nondeterminism was 0\.0\."):
        gradcheck(_NonDeterministic.apply, (x64(),))
    with pytest.raises(GradcheckError, match="^Backward is not reentrant"):
        gradcheck(_NonDeterministic.apply, (x64(),), fast_mode=True)
    assert gradcheck(_NonDeterministic.apply, (x64(),), nondet_tol=1e-5)
    assert gradcheck(_NonDeterministic.apply, (x64(),), nondet_tol=1e-5, fast_mode=True)


def test_expanded_inputs_are_refused():
    expanded = gv.tensor([1.0], dtype=gv.float64).expand(3).detach().requires_grad_()
    msg = ("^The 0th input has a dimension with stride 0. gradcheck only supports inputs that are "
           "non-overlapping to be able to compute the numerical gradients correctly. You should "
           r"call \.contiguous on the input before passing it to gradcheck\.$")
    for fast in (False, True):
        with pytest.raises(RuntimeError, match=msg):
            gradcheck(lambda a: a * 2, (expanded,), fast_mode=fast)
    other = gv.tensor([[1.0], [2.0]], dtype=gv.float64).expand(2, 3)  # not checked: fine
    assert gradcheck(lambda a, c: a * c.sum(), (x64(), other))


def test_empty_inputs_are_checked_whatever_their_strides():
    # An empty tensor shares no memory, even expanded (stride 0), as torch's gradcheck agrees.
    empty = gv.zeros(1, 3, dtype=gv.float64).expand(0, 3).detach().requires_grad_()
    for fast in (False, True):
        assert gradcheck(lambda a: a * 2, (empty,), fast_mode=fast)
    matrices = gv.zeros(0, 5, 5, dtype=gv.float64).expand(0, 5, 5).requires_grad_()
    assert gradcheck(gv.logdet, (matrices,)) and gradgradcheck(gv.logdet, (matrices,))


def test_an_output_that_does_not_require_grad_must_not_depend_on_the_inputs():
    for fast in (False, True):
        with pytest.raises(GradcheckError, match="^Numerical gradient for function expected to "
                                                 "be zero$"):
            gradcheck(lambda a: a.detach() * 2, (x64(),), fast_mode=fast)
        assert gradcheck(lambda a: a.detach() * 0, (x64(),), fast_mode=fast)
    # with a differentiable output beside it, it is simply not checked
    assert gradcheck(lambda a: (a * 2, a.detach() * 2), (x64(),))


def test_backward_must_be_multiplied_by_grad_output():
    with pytest.raises(GradcheckError, match="^backward not multiplied by grad_output$"):
        gradcheck(_NotTimesGradOutput.apply, (x64(),))


def test_backward_must_handle_outputs_without_gradient_unless_told_not_to_check():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(GradcheckError, match="^Expected backward function to handle "
                                                 "undefined output grads. Please look at "
                                                 '"Notes about undefined output gradients"'):
            gradcheck(_UndefinedBreaks.apply, (x64(),))
    assert "check_undefined_grad=False" in str(caught[-1].message)
    assert gradcheck(_UndefinedBreaks.apply, (x64(),), check_undefined_grad=False)
    assert gradcheck(lambda a: (a * 2, a.exp()), (x64(),))  # built-in nodes cope


def test_fn_is_called_with_grad_mode_on():
    seen = set()

    def fn(a):
        seen.add(gv.is_grad_enabled())
        return a * 2

    assert gradcheck(fn, (x64(),)) and seen == {True}


def test_inputs_may_be_a_tensor_a_list_or_include_non_tensors():
    assert gradcheck(lambda a: a * 2, x64())
    assert gradcheck(lambda a: a * 2, [x64()])
    assert gradcheck(lambda a, k: a * k, (x64(), 3.0))
    assert gradcheck(lambda a: [a * 2, a * 3], (x64(),))
    assert gradcheck(lambda a: (a * 2, a.long()), (x64(),))  # an integer output is skipped


def test_non_contiguous_inputs_are_perturbed_in_place():
    t = gv.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=gv.float64).t().detach().requires_grad_()
    assert gradcheck(lambda a: a.exp(), (t,))
    with pytest.raises(GradcheckError):
        gradcheck(lambda a: _WrongGrad.apply(a), (t,))


def test_bad_arguments():
    with pytest.raises(ValueError, match="^gradcheck expects at least one input tensor to require "
                                         "gradient, but none of them have requires_grad=True.$"):
        gradcheck(lambda a: a * 2, (x64().detach(),))
    with pytest.raises(AssertionError, match="check_forward_ad or check_backward_ad"):
        gradcheck(lambda a: a * 2, (x64(),), check_backward_ad=False)
    with pytest.raises(NotImplementedError, match="forward-mode AD"):
        gradcheck(lambda a: a * 2, (x64(),), check_forward_ad=True)
    with pytest.raises(NotImplementedError, match="check_batched_grad needs vmap"):
        gradcheck(lambda a: a * 2, (x64(),), check_batched_grad=True)
    with pytest.raises(AttributeError):
        gradcheck(lambda a: (a * 2, 3), (x64(),))  # as in PyTorch: outputs must be tensors


def test_float32_inputs_warn_and_usually_fail():
    x = gv.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert gradcheck(lambda a: a * 2, (x,), raise_exception=False) is False
    assert str(caught[0].message) == (
        "Input #0 requires gradient and is not a double precision floating point or complex. "
        "This check will likely fail if all the inputs are not of double precision floating "
        "point or complex. ")
    assert caught[0].filename == __file__


def test_gradgradcheck_finds_a_backward_that_is_not_differentiable_correctly():
    assert gradgradcheck(lambda a: a ** 3, (x64(),))
    assert gradgradcheck(_WrongGrad.apply, (x64(),))  # linear: its second derivative is 0
    with pytest.raises(GradcheckError, match="^Jacobian mismatch for output 0 with respect to "
                                             "input 0,"):
        gradgradcheck(_WrongDouble.apply, (x64(),))
    with pytest.raises(GradcheckError, match="in fast mode"):
        gradgradcheck(_WrongDouble.apply, (x64(),), fast_mode=True)
    assert gradgradcheck(_WrongDouble.apply, (x64(),), raise_exception=False) is False
    given = (gv.ones(3, dtype=gv.float64),)  # used as given: not differentiated with respect to
    assert gradgradcheck(lambda a: a ** 3, (x64(),), given)
