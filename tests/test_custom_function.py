"""Custom ``Function``: ctx, saved tensors, dirty/non-differentiable outputs, materialized grads,
PyTorch's error texts, node names, gradcheck and double backward.

Every expected text and value was checked against torch 2.13.0.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import gradviz as gv
from gradviz.autograd import GradcheckError, gradcheck
from gradviz.autograd.function import Function, once_differentiable

FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


def f64(values, requires_grad=True):
    return gv.tensor(values, dtype=gv.float64, requires_grad=requires_grad)


class MulConstant(Function):
    """The seed's example (its backward ignores the constant, as the seed's does)."""

    @staticmethod
    def forward(ctx, tensor, constant):
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None


class Cube(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a ** 3

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return 3 * a ** 2 * g


class ExpF(Function):
    """Saves its own output, like ExpBackward0 does."""

    @staticmethod
    def forward(ctx, a):
        r = a.exp()
        ctx.save_for_backward(r)
        return r

    @staticmethod
    def backward(ctx, g):
        (r,) = ctx.saved_tensors
        return g * r


def test_mul_constant_seed_example():
    a = gv.rand(3, 3, requires_grad=True)
    b = MulConstant.apply(a, 5)
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy() * 5)
    assert "grad_fn=<MulConstantBackward>" in str(b)
    b.backward(gv.ones_like(a))
    assert a.grad.tolist() == [[1.0] * 3] * 3
    assert b.grad_fn.constant == 5  # ctx is the node: its attributes stay readable


def test_node_is_named_after_the_function():
    b = MulConstant.apply(f64([1.0]), 2)
    node = b.grad_fn
    assert node.name() == "MulConstantBackward"
    assert type(node).__name__ == "MulConstantBackward"
    # as torch prints it: <torch.autograd.function.MulConstantBackward object at 0x...>
    assert re.fullmatch(r"<gradviz\.autograd\.function\.MulConstantBackward object at "
                        r"0x[0-9a-f]+>", repr(node))
    assert type(node.next_functions[0][0]).__name__ == "AccumulateGrad"
    assert len(node.next_functions) == 1  # the constant 2 gets no edge, as in PyTorch


def test_save_for_backward_gives_the_inputs_back_until_freed():
    x = f64([1.0, 2.0])
    y = Cube.apply(x)
    (saved,) = y.grad_fn.saved_tensors
    assert saved is x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0])
    with pytest.raises(RuntimeError) as exc:
        _ = y.grad_fn.saved_tensors
    assert str(exc.value) == FREED
    with pytest.raises(RuntimeError) as exc:
        y.sum().backward()
    assert str(exc.value) == FREED


def test_saved_output_is_connected_to_the_functions_node():
    x = f64([0.0, 1.0])
    y = ExpF.apply(x)
    (r,) = y.grad_fn.saved_tensors
    assert r is not y and r.grad_fn is y.grad_fn
    np.testing.assert_allclose(r.detach().numpy(), np.exp([0.0, 1.0]))


def test_save_for_backward_rejects_non_tensors_and_keeps_none():
    class SaveBad(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a, 3)
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return g

    class SaveNone(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a, None)
            return a * 1

        @staticmethod
        def backward(ctx, g):
            SaveNone.seen = ctx.saved_tensors
            return g

    x = f64([1.0])
    with pytest.raises(TypeError) as exc:
        SaveBad.apply(x)
    assert str(exc.value) == ("save_for_backward can only save variables, but argument 1 is of "
                              "type int")
    SaveNone.apply(x).sum().backward()
    assert len(SaveNone.seen) == 2 and SaveNone.seen[0] is x and SaveNone.seen[1] is None


def test_needs_input_grad_in_forward_and_backward():
    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b, k):
            Probe.forward_sees = ctx.needs_input_grad
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            Probe.backward_sees = ctx.needs_input_grad
            return g, None, None

    x = f64([1.0, 2.0])
    Probe.apply(x, f64([1.0, 2.0], False), 3).sum().backward()
    assert Probe.forward_sees == (True, False, False)
    assert Probe.backward_sees == (True, False, False)


def test_forward_runs_without_recording_and_backward_with_the_engines_mode():
    class Probe(Function):
        @staticmethod
        def forward(ctx, a):
            Probe.forward_mode = gv.is_grad_enabled()
            return a.clone()

        @staticmethod
        def backward(ctx, g):
            Probe.backward_mode = gv.is_grad_enabled()
            return g

    x = f64([1.0])
    y = Probe.apply(x)
    assert Probe.forward_mode is False
    assert y.grad_fn.name() == "ProbeBackward"  # only the Function's node is recorded
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"
    y.sum().backward()
    assert Probe.backward_mode is False


def test_apply_under_no_grad_records_nothing():
    with gv.no_grad():
        y = Cube.apply(f64([1.0, 2.0]))
    assert not y.requires_grad and y.grad_fn is None
    assert not Cube.apply(gv.ones(2)).requires_grad  # no input requires grad


def test_returning_an_input_gives_a_new_tensor_with_the_node():
    class Id(Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = f64([1.0, 2.0])
    y = Id.apply(x)
    assert y is not x
    assert y.grad_fn.name() == "IdBackward" and not y.is_leaf and y._version == 0
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_mark_dirty_makes_the_modified_input_the_output():
    class AddOneInplace(Function):
        @staticmethod
        def forward(ctx, a):
            a.add_(1)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 1

    x = f64([1.0, 2.0])
    y = x * 2
    v0 = y._version
    mul_node = y.grad_fn
    z = AddOneInplace.apply(y)
    assert z is y
    assert y._version == v0 + 2  # add_ bumps it, and so does mark_dirty (as in PyTorch)
    assert y.grad_fn.name() == "AddOneInplaceBackward"
    assert y.grad_fn.next_functions == ((mul_node, 0),)
    assert y.tolist() == [3.0, 5.0]
    z.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    # A leaf that requires grad cannot be modified in place: PyTorch's Function text.
    with pytest.raises(RuntimeError) as exc:
        AddOneInplace.apply(x)
    assert str(exc.value) == ("a leaf Variable that requires grad has been used in an in-place "
                              "operation.")


def test_mark_non_differentiable_outputs_get_no_history():
    class WithIndex(Function):
        @staticmethod
        def forward(ctx, a):
            idx = gv.tensor([1.0, 0.0], dtype=gv.float64)
            ctx.mark_non_differentiable(idx)
            return a * 1, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            WithIndex.g_idx = g_idx.tolist()
            return g

    x = f64([1.0, 2.0])
    v, i = WithIndex.apply(x)
    assert v.requires_grad and v.grad_fn.name() == "WithIndexBackward"
    assert not i.requires_grad and i.grad_fn is None and i.is_leaf
    v.sum().backward()
    assert WithIndex.g_idx == [0.0, 0.0]  # materialized as zeros
    assert x.grad.tolist() == [1.0, 1.0]


def _two_outputs(materialize):
    class Two(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(materialize)
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            Two.seen = (None if g1 is None else g1.tolist(), None if g2 is None else g2.tolist())
            return g1 * 2 if g2 is None else g1 * 2 + g2 * 3

    return Two


@pytest.mark.parametrize("materialize, expected", [(True, [0.0, 0.0]), (False, None)])
def test_set_materialize_grads_chooses_zeros_or_none(materialize, expected):
    two = _two_outputs(materialize)
    x = f64([1.0, 2.0])
    p, q = two.apply(x)
    assert q.grad_fn is p.grad_fn and (p.output_nr, q.output_nr) == (0, 1)
    p.sum().backward()
    assert two.seen == ([1.0, 1.0], expected)
    assert x.grad.tolist() == [2.0, 2.0]


def test_wrong_number_of_gradients_error_text():
    class Bad(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    a = gv.ones(2, 3, requires_grad=True)
    b = gv.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError) as exc:
        Bad.apply(a, b).sum().backward()
    assert str(exc.value) == ("function BadBackward returned an incorrect number of gradients "
                              "(expected 2, got 1)")


def test_extra_trailing_none_gradients_are_tolerated():
    class Extra(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g, None, None

    a = f64([1.0])
    Extra.apply(a).sum().backward()
    assert a.grad.tolist() == [1.0]


def test_gradient_for_a_non_tensor_input_error_text():
    class NonNone(Function):
        @staticmethod
        def forward(ctx, a, k):
            return a * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(RuntimeError) as exc:
        NonNone.apply(f64([1.0]), 2.0).sum().backward()
    assert str(exc.value) == ("function NonNoneBackward returned a gradient different than None "
                              "at position 2, but the corresponding forward input was not a "
                              "Variable")


def test_wrong_gradient_shape_error_text():
    class Bad2(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return gv.ones(3)

    a = gv.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError) as exc:
        Bad2.apply(a).sum().backward()
    assert str(exc.value) == ("Function Bad2Backward returned an invalid gradient at index 0 - "
                              "got [3] but expected shape compatible with [2, 3]")


def test_broadcastable_gradient_is_summed_to_the_input_shape():
    class Wide(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return gv.ones(1, 2, 3)

    class Narrow(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return gv.ones(1, 3)

    a = gv.ones(2, 3, requires_grad=True)
    Wide.apply(a).sum().backward()
    assert a.grad.tolist() == [[1.0] * 3] * 2
    # [2, 3] does not expand to [1, 3]: the grad could not be summed back, so it is an error.
    with pytest.raises(RuntimeError, match=re.escape("got [1, 3] but expected shape compatible "
                                                     "with [2, 3]")):
        Narrow.apply(a).sum().backward()


def test_error_raised_inside_backward_propagates_unchanged():
    err = ValueError("boom from backward")

    class Raises(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            raise err

    with pytest.raises(ValueError) as exc:
        Raises.apply(f64([1.0])).sum().backward()
    assert exc.value is err


def test_gradcheck_passes_for_a_correct_function_and_fails_for_a_wrong_one():
    class WrongCube(Cube):
        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a ** 2 * g

    x = f64([1.0, 2.0, -0.5])
    assert gradcheck(Cube.apply, (x,)) is True
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                                             "input 0"):
        gradcheck(WrongCube.apply, (x,))
    assert gradcheck(WrongCube.apply, (x,), raise_exception=False) is False


def test_create_graph_through_a_custom_function():
    x = f64([1.0, 2.0])
    (g,) = gv.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [3.0, 12.0])
    assert g.requires_grad
    (gg,) = gv.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [6.0, 12.0])


def test_create_graph_through_a_saved_output():
    x = f64([0.0, 1.0])
    (g,) = gv.autograd.grad(ExpF.apply(x).sum(), x, create_graph=True)
    assert g.grad_fn is not None and g.grad_fn.name() == "MulBackward0"
    (gg,) = gv.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), np.exp([0.0, 1.0]))


def test_once_differentiable_backward_does_not_record():
    class OD(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a ** 2

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            OD.mode = gv.is_grad_enabled()
            return 2 * a * g

    x = f64([1.0, 2.0])
    (g,) = gv.autograd.grad(OD.apply(x).sum(), x, create_graph=True)
    assert OD.mode is False
    assert not g.requires_grad and g.grad_fn is None
    assert g.tolist() == [2.0, 4.0]


def test_tuple_output_with_a_non_tensor():
    class Mixed(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2, 5

        @staticmethod
        def backward(ctx, g, g_other):
            Mixed.g_other = g_other
            return g

    x = f64([1.0, 2.0])
    out = Mixed.apply(x)
    assert isinstance(out, tuple) and out[1] == 5
    out[0].sum().backward()
    assert Mixed.g_other is None
    assert x.grad.tolist() == [1.0, 1.0]


class Mix(Function):
    """x * k + y with a number k between two tensors: edges for x and y only."""

    @staticmethod
    def forward(ctx, x, k, y):
        ctx.k = k
        return x * k + y

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None, g


def test_non_tensor_arguments_get_no_edge_and_their_gradient_is_dropped():
    # PyTorch: MulConstant.apply(a, 5).grad_fn.next_functions == ((AccumulateGrad, 0),), and
    # backward still returns one gradient per forward input (None for the constant).
    a = f64([1.0, 2.0])
    b = MulConstant.apply(a, 5)
    (edge,) = b.grad_fn.next_functions
    assert edge[0].variable is a and edge[1] == 0
    b.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0]  # this MulConstant returns grad_output as the seed does
    x, y = f64([1.0]), f64([2.0])
    out = Mix.apply(x, 3, y)
    assert [type(n).__name__ for n, _ in out.grad_fn.next_functions] == ["AccumulateGrad"] * 2
    out.backward()
    assert (x.grad.item(), y.grad.item()) == (3.0, 1.0)


def test_instantiating_a_function_warns_as_pytorch_does():
    with pytest.warns(DeprecationWarning, match=r"should not be instantiated\. Methods on autograd "
                                                r"functions are all static"):
        MulConstant()
    assert MulConstant.apply(f64([1.0]), 2).grad_fn.name() == "MulConstantBackward"


def test_calling_a_function_instance_is_torchs_legacy_error():
    with pytest.warns(DeprecationWarning):
        fn = MulConstant()
    with pytest.raises(RuntimeError) as exc:
        fn(f64([1.0]), 2)
    assert str(exc.value) == (
        "Legacy autograd function with non-static forward method is deprecated. Please use "
        "new-style autograd function with static forward method. (Example: "
        "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")


class PassThrough(Function):
    """Returns its inputs as-is (what a module's backward hooks hang on)."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[t for t in args if not t.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


def test_an_input_returned_as_is_and_marked_non_differentiable_has_no_history():
    a = gv.tensor([1.0, 2.0], requires_grad=True)
    b = gv.tensor([3.0, 4.0])
    pa, pb = PassThrough.apply(a, b)
    # torch 2.13: the marked one is a view of b with no grad_fn and no grad
    assert pb._base is b and pb.grad_fn is None and not pb.requires_grad
    assert pa.grad_fn is not None and pa._base is a
    seen = []
    pa.grad_fn.register_hook(lambda gi, go: seen.append((gi, go)))
    (pa * pb).sum().backward()
    (gi, go), = seen
    # the materialized zeros returned for b reach the post hook (nothing is sent on to b)
    assert [g.tolist() for g in gi] == [[3.0, 4.0], [0.0, 0.0]]
    assert go[0].tolist() == [3.0, 4.0] and go[1] is None
    assert a.grad.tolist() == [3.0, 4.0] and b.grad is None
