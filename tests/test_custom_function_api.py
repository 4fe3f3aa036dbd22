"""Custom Functions as PyTorch 2.13 has them (issue #14): the ``setup_context`` style, ``vjp``,
``mark_dirty`` validation, views returned from a Function, ``once_differentiable`` under
``create_graph``. Torch comparisons of the same programs are in
tests/parity/test_functions_views_parity.py.
"""

from __future__ import annotations

import warnings

import pytest

import gradviz
from gradviz.autograd import Function
from gradviz.autograd.function import once_differentiable


class Scale(Function):
    @staticmethod
    def forward(x, k=2.0):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1]
        ctx.save_for_backward(inputs[0], output)

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        assert out.grad_fn is ctx  # a saved output comes back connected to the node
        return g * ctx.k, None


def test_setup_context_style_binds_defaults_and_records_the_node():
    a = gradviz.ones(3, requires_grad=True)
    y = Scale.apply(a)
    assert y.grad_fn.name() == "ScaleBackward" and y.tolist() == [2.0, 2.0, 2.0]
    y.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0, 2.0]
    b = gradviz.ones(2, requires_grad=True)
    Scale.apply(b, k=5.0).sum().backward()
    assert b.grad.tolist() == [5.0, 5.0]


def test_setup_context_with_a_forward_taking_ctx_fails_to_bind():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

    with pytest.raises(TypeError, match="missing a required argument: 'x'"):
        Bad.apply(gradviz.ones(1, requires_grad=True))


def test_vjp_is_backward_and_both_are_refused():
    class ByVjp(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def vjp(ctx, g):
            return g * 3

    class Both(ByVjp):
        @staticmethod
        def backward(ctx, g):
            return g * 3

    a = gradviz.ones(2, requires_grad=True)
    ByVjp.apply(a).sum().backward()
    assert a.grad.tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="^Implementing both 'backward' and 'vjp' for a custom "
                       "Function is not allowed. You should only implement one of them.$"):
        Both.apply(a).sum().backward()


class Double(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_mark_dirty_on_a_view_records_copy_slices_on_its_base():
    a = gradviz.ones(2, 2, requires_grad=True)
    b = a * 1
    v = b[0]
    assert Double.apply(v) is v
    assert b.grad_fn.name() == "torch::autograd::CopySlices"
    assert [n.name() for n, _ in b.grad_fn.next_functions] == ["MulBackward0"]
    assert v.grad_fn.name() == "AsStridedBackward0"
    b.sum().backward()
    assert a.grad.tolist() == [[2.0, 2.0], [1.0, 1.0]]


@pytest.mark.parametrize(("make", "text"), [
    (lambda a: a[0], "a view of a leaf Variable that requires grad is being used in an in-place "
                     "operation."),
    (lambda a: (a * 1).unbind(0)[0], "Output 0 of Unbind is a view and is being modified "
                                     "inplace. This view is the output of a function that "
                                     "returns multiple views."),
    (lambda a: a, "a leaf Variable that requires grad has been used in an in-place operation."),
])
def test_mark_dirty_is_validated_as_an_in_place_op(make, text):
    a = gradviz.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="^" + text.replace(".", r"\.")):
        Double.apply(make(a))


def test_mark_dirty_of_a_tensor_not_returned_or_not_an_input():
    class NotReturned(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x * 1

    class NotInput(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.mark_dirty(y)
            return y

    b = gradviz.ones(2, requires_grad=True) * 1
    with pytest.raises(RuntimeError, match="^Some elements marked as dirty during the forward "
                       "method were not returned as output."):
        NotReturned.apply(b)
    with pytest.warns(UserWarning, match=r"ctx.mark_dirty\(\) received a tensor that was not an "
                      "input"):
        NotInput.apply(b)


class DoubleAndTriple(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x, x * 3

    @staticmethod
    def backward(ctx, g0, g1):
        return g0 * 2 + g1 * 6


def test_a_dirty_view_must_be_the_only_output_when_recorded():
    b = gradviz.ones(4, requires_grad=True) * 1
    with pytest.raises(RuntimeError) as exc:
        DoubleAndTriple.apply(b[:2])
    assert str(exc.value).startswith(
        "If your Function modifies inplace an input that is a view of another Tensor, your "
        "Function cannot return more than one Tensor. This is not supported by the current "
        "autograd engine.")
    # Not a view, or nothing recorded: allowed (as in torch 2.13).
    c = gradviz.ones(4, requires_grad=True) * 1
    assert [t.tolist() for t in DoubleAndTriple.apply(c)] == [[2.0] * 4, [6.0] * 4]
    assert DoubleAndTriple.apply(gradviz.ones(4)[:2])[1].tolist() == [6.0, 6.0]


def test_a_dirty_non_input_must_be_returned_and_warns_only_when_recorded():
    class NotInputNotReturned(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x * 2)
            return x * 1

    class NotInput(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.mark_dirty(y)
            return y

    for x in (gradviz.ones(2), gradviz.ones(2, requires_grad=True)):
        with pytest.raises(RuntimeError, match="^Some elements marked as dirty during the "
                           "forward method were not returned as output."):
            NotInputNotReturned.apply(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert NotInput.apply(gradviz.ones(2)).tolist() == [2.0, 2.0]


def test_views_returned_from_a_function_refuse_in_place_changes():
    class Flat(Function):
        @staticmethod
        def forward(ctx, x):
            return x.view(-1)

        @staticmethod
        def backward(ctx, g):
            return g.view(2, 2)

    class Rows(Function):
        @staticmethod
        def forward(ctx, x):
            return x[0], x[1]

        @staticmethod
        def backward(ctx, g0, g1):
            return gradviz.stack([g0, g1])

    b = gradviz.ones(2, 2, requires_grad=True) * 1
    y = Flat.apply(b)
    assert y._is_view() and y.grad_fn.name() == "FlatBackward"
    with pytest.raises(RuntimeError, match="^Output 0 of Flat is a view and is being modified "
                       "inplace. This view was created inside a custom Function"):
        y.mul_(2)
    r0, _ = Rows.apply(b)
    with pytest.raises(RuntimeError, match="^Output 0 of Rows is a view and is being modified "
                       "inplace. This view is the output of a function that returns multiple "
                       "views."):
        r0.add_(1)
    with gradviz.no_grad():
        z = Flat.apply(b)
    assert z.requires_grad and z.grad_fn is None
    with pytest.raises(RuntimeError, match="^A view was created in no_grad mode and is being "
                       "modified inplace with grad mode enabled. This view was created inside "
                       "a custom Function"):
        z.mul_(2)


def test_an_input_returned_as_is_comes_back_as_a_view():
    class Same(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    b = gradviz.ones(2, requires_grad=True) * 1
    y = Same.apply(b)
    assert y is not b and y._base is b and y.grad_fn.name() == "SameBackward"


def test_under_no_grad_an_input_returned_comes_back_detached():
    # torch 2.13: nothing recorded, so an input that requires grad, returned as-is or marked
    # dirty, comes back as a detached alias (sharing data and version), not as itself.
    class Same(Function):
        @staticmethod
        def forward(ctx, x):
            return x

    for fn in (Same, Double):
        b = gradviz.ones(4, requires_grad=True) * 1
        for given in (b, b[:2]):
            with gradviz.no_grad():
                y = fn.apply(given)
            assert y is not given and not y.requires_grad and y.grad_fn is None
            assert y._base is None and y._version == given._version
    plain = gradviz.ones(2)
    with gradviz.no_grad():
        assert Double.apply(plain) is plain and Same.apply(plain)._base is plain


def test_once_differentiable_result_refuses_double_backward():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x

    a = gradviz.tensor([1.0, 2.0], requires_grad=True)
    (g,) = gradviz.autograd.grad(Square.apply(a).sum(), a, create_graph=True)
    assert g.tolist() == [2.0, 4.0] and not g.requires_grad  # the gradients needed none
    b = gradviz.tensor([1.0, 2.0], requires_grad=True)
    (g,) = gradviz.autograd.grad((Square.apply(a) * b).sum(), a, create_graph=True)
    assert g.tolist() == [2.0, 8.0] and g.grad_fn.name() == "torch::autograd::Error"
    assert repr(g) == "tensor([2., 8.], grad_fn=<Error>)"
    assert [n.name() for n, _ in g.grad_fn.next_functions] == ["torch::autograd::AccumulateGrad"]
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was "
                       "marked with @once_differentiable"):
        g.sum().backward()
