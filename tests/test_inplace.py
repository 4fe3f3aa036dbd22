"""In-place operations: version counters, the nodes they record, PyTorch's error texts, and
correct gradients afterwards.

Node names, next_functions and error texts were checked against torch 2.13.0; gradviz prints
``gradviz.FloatTensor`` where torch prints ``torch.FloatTensor``.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradviz as gv
from gradviz.autograd import gradcheck

ACC = "torch::autograd::AccumulateGrad"
HINT = ("Hint: enable anomaly detection to find the operation that failed to compute its "
        "gradient, with gradviz.autograd.set_detect_anomaly(True, check_nan=False).")


def modified_message(type_name, shape, where, version, expected):
    """PyTorch's text for a saved tensor modified in place (``torch.`` spelled ``gradviz.``)."""
    which = f", which is output 0 of {where}," if where else ""
    return ("one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [gradviz.{type_name} {shape}]{which} is at version {version}; "
            f"expected version {expected} instead. {HINT}")


def leaf(values=(1.0, 2.0)):
    return gv.tensor(list(values), requires_grad=True)


def edges(node):
    return [(None if n is None else n.name(), nr) for n, nr in node.next_functions]


INPLACE = [
    ("add_", lambda y, x: y.add_(1), "AddBackward0", [("MulBackward0", 0), (None, 0)],
     [1.0, 1.0]),
    ("add_tensor", lambda y, x: y.add_(x), "AddBackward0", [("MulBackward0", 0), (ACC, 0)],
     [2.0, 2.0]),
    ("sub_", lambda y, x: y.sub_(1), "SubBackward0", [("MulBackward0", 0), (None, 0)],
     [1.0, 1.0]),
    ("mul_", lambda y, x: y.mul_(2), "MulBackward0", [("MulBackward0", 0), (None, 0)],
     [2.0, 2.0]),
    ("mul_tensor", lambda y, x: y.mul_(x), "MulBackward0", [("MulBackward0", 0), (ACC, 0)],
     [2.0, 4.0]),
    ("div_", lambda y, x: y.div_(2), "DivBackward0", [("MulBackward0", 0), (None, 0)],
     [0.5, 0.5]),
    ("zero_", lambda y, x: y.zero_(), "ZeroBackward0", [("MulBackward0", 0)], [0.0, 0.0]),
    ("fill_", lambda y, x: y.fill_(3), "FillBackward2", [("MulBackward0", 0)], [0.0, 0.0]),
    ("copy_", lambda y, x: y.copy_(x), "CopyBackwards", [("MulBackward0", 0), (ACC, 0)],
     [1.0, 1.0]),
    ("copy_constant", lambda y, x: y.copy_(gv.tensor([5.0, 6.0])), "CopyBackwards",
     [("MulBackward0", 0), (None, 0)], [0.0, 0.0]),
]


@pytest.mark.parametrize("op, node_name, expected_edges, grad", [c[1:] for c in INPLACE],
                         ids=[c[0] for c in INPLACE])
def test_inplace_on_non_leaf_bumps_version_and_records_node(op, node_name, expected_edges, grad):
    x = leaf()
    y = x * 1
    old = y.grad_fn
    v0 = y._version
    assert op(y, x) is y
    assert y._version == v0 + 1
    assert type(y.grad_fn).__name__ == node_name
    assert edges(y.grad_fn) == expected_edges
    assert y.grad_fn.next_functions[0][0] is old  # the old history is the first edge
    y.sum().backward()
    assert x.grad.tolist() == grad


@pytest.mark.parametrize("op, node_name, grad", [
    ("+=", "AddBackward0", [1.0, 1.0]),
    ("-=", "SubBackward0", [1.0, 1.0]),
    ("*=", "MulBackward0", [2.0, 2.0]),
    ("/=", "DivBackward0", [0.5, 0.5]),
])
def test_augmented_assignment_is_in_place(op, node_name, grad):
    x = leaf()
    y = x * 1
    same = y
    if op == "+=":
        y += 1
    elif op == "-=":
        y -= 1
    elif op == "*=":
        y *= 2
    else:
        y /= 2
    assert y is same and y._version == 1
    assert y.grad_fn.name() == node_name
    y.sum().backward()
    assert x.grad.tolist() == grad


def test_copy_node_name_is_qualified_like_pytorch():
    x = leaf()
    c = gv.zeros(2).copy_(x)
    assert type(c.grad_fn).__name__ == "CopyBackwards"
    assert c.grad_fn.name() == "torch::autograd::CopyBackwards"
    assert "grad_fn=<CopyBackwards>" in repr(c)
    assert edges(c.grad_fn) == [(None, 0), (ACC, 0)]


def test_inplace_with_a_grad_input_gives_a_plain_tensor_history():
    x = leaf()
    c = gv.zeros(2)
    c.add_(x)
    assert c.requires_grad and not c.is_leaf
    assert edges(c.grad_fn) == [(None, 0), (ACC, 0)]
    d = gv.zeros(2)
    d.mul_(x)
    assert d.grad_fn._saved_self.tolist() == [0.0, 0.0]  # self as it was before the write
    assert d.grad_fn._saved_other is None  # not needed: self needs no gradient


def test_chained_inplace_ops_count_versions():
    x = leaf()
    h = x * 1
    h.add_(1).mul_(2)
    assert h._version == 2
    assert h.grad_fn.name() == "MulBackward0"
    assert h.grad_fn.next_functions[0][0].name() == "AddBackward0"
    h.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("op", [
    lambda x: x.add_(1), lambda x: x.mul_(2), lambda x: x.zero_(), lambda x: x.fill_(1.0),
    lambda x: x.copy_(gv.ones(2)), lambda x: x.sub_(1), lambda x: x.div_(2),
])
def test_inplace_on_leaf_requiring_grad_is_an_error(op):
    x = leaf()
    with pytest.raises(RuntimeError) as exc:
        op(x)
    assert str(exc.value) == ("a leaf Variable that requires grad is being used in an in-place "
                              "operation.")
    assert x._version == 0 and x.tolist() == [1.0, 2.0]  # nothing was written


def test_augmented_assignment_on_leaf_requiring_grad_is_an_error():
    x = leaf()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        x += 1


def test_inplace_on_leaf_is_allowed_under_no_grad():
    x = leaf()
    with gv.no_grad():
        x.mul_(2)
        x += 1
    assert x.tolist() == [3.0, 5.0]
    assert x._version == 2 and x.requires_grad and x.is_leaf and x.grad_fn is None
    (x * x).sum().backward()
    assert x.grad.tolist() == [6.0, 10.0]


def test_inplace_on_tensor_not_requiring_grad_records_nothing():
    c = gv.ones(2)
    c.mul_(3)
    assert c._version == 1 and c.grad_fn is None and not c.requires_grad


def test_views_share_the_version_counter():
    b = gv.ones(2, 2)
    v = b.view(4)
    t = b.t()
    b.add_(1)
    assert (b._version, v._version, t._version) == (1, 1, 1)
    v.mul_(2)
    assert (b._version, v._version, t._version) == (2, 2, 2)
    assert b.tolist() == [[4.0, 4.0], [4.0, 4.0]]


def test_detach_shares_the_version_counter_but_data_does_not():
    b = gv.ones(2)
    d = b.detach()
    d.add_(1)
    assert b._version == 1 and d._version == 1
    assert b.tolist() == [2.0, 2.0]
    assert b.data._version == 0


def test_modified_saved_leaf_error_text():
    a = leaf()
    c = gv.tensor([3.0, 4.0])
    y = a * c
    c.add_(1)
    with pytest.raises(RuntimeError) as exc:
        y.sum().backward()
    # A leaf has no grad_fn: no ", which is output 0 of ...," part.
    assert str(exc.value) == modified_message("FloatTensor", "[2]", None, 1, 0)


def test_modified_saved_output_error_names_the_node_that_saved_it():
    a = leaf()
    y = a.exp()
    y.add_(1)  # y is now output 0 of AddBackward0, but ExpBackward0 saved it
    with pytest.raises(RuntimeError) as exc:
        y.sum().backward()
    assert str(exc.value) == modified_message("FloatTensor", "[2]", "Exp", 1, 0)


@pytest.mark.parametrize("make, where", [
    (lambda a: a.tanh(), "Tanh"),
    (lambda a: a.sigmoid(), "Sigmoid"),
    (lambda a: a ** a, "Pow1"),
    (lambda a: 2 ** a, "Pow2"),
])
def test_modified_saved_output_short_names(make, where):
    a = leaf()
    y = make(a)
    y.mul_(2)
    with pytest.raises(RuntimeError) as exc:
        y.sum().backward()
    assert str(exc.value) == modified_message("FloatTensor", "[2]", where, 1, 0)


@pytest.mark.parametrize("modify, where", [
    (lambda h: h.add_(1), "Add"),
    (lambda h: h.mul_(3), "Mul"),
    (lambda h: h.fill_(2), "Fill2"),
    (lambda h: h.zero_(), "Zero"),
    (lambda h: h.copy_(gv.tensor([3.0, 4.0])), "torch::autograd::CopyBackwards"),
])
def test_modified_saved_input_error_names_its_current_grad_fn(modify, where):
    a = leaf()
    h = a * 1
    y = h.log()
    modify(h)
    with pytest.raises(RuntimeError) as exc:
        y.sum().backward()
    assert str(exc.value) == modified_message("FloatTensor", "[2]", where, 1, 0)


def test_modified_message_reports_dtype_shape_and_versions():
    a = gv.tensor([[1.0, 2.0]], dtype=gv.float64, requires_grad=True)
    y = a.exp()
    y.add_(1)
    y.add_(1)
    with pytest.raises(RuntimeError) as exc:
        y.sum().backward()
    assert str(exc.value) == modified_message("DoubleTensor", "[1, 2]", "Exp", 2, 0)
    s = a.sum()
    z = s.log()
    s.add_(1)
    with pytest.raises(RuntimeError) as exc:
        z.backward()
    assert str(exc.value) == modified_message("DoubleTensor", "[]", "Add", 1, 0)


def test_reading_a_modified_saved_tensor_raises_the_same_error():
    a = leaf()
    h = a + 1
    y = h.log()
    h.mul_(3)
    with pytest.raises(RuntimeError) as exc:
        _ = y.grad_fn._saved_self
    assert str(exc.value) == modified_message("FloatTensor", "[2]", "Mul", 1, 0)


def test_modifying_a_tensor_saved_by_a_custom_function_is_detected():
    from gradviz.autograd.function import Function

    class Square(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g

    x = leaf()
    w = x * 1
    y = Square.apply(w)
    w.mul_(2)
    with pytest.raises(RuntimeError) as exc:
        y.sum().backward()
    assert str(exc.value) == modified_message("FloatTensor", "[2]", "Mul", 1, 0)


def test_inplace_ops_that_do_not_disturb_saved_values_keep_gradients_right():
    a = leaf()
    h = a * 3
    h.mul_(a)
    h.add_(a, alpha=2)
    h.sum().backward()
    assert a.grad.tolist() == [8.0, 14.0]  # d(3a^2 + 2a) = 6a + 2

    a = leaf()
    h = a * a
    h.div_(a)
    h.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0]

    a = leaf()
    h = a * a
    h.sub_(a, alpha=3)
    h.sum().backward()
    assert a.grad.tolist() == [-1.0, 1.0]  # 2a - 3


@pytest.mark.parametrize("fn", [
    lambda a: (a * 3).mul_(a).add_(a, alpha=2),
    lambda a: (a * a).div_(a + 2).sub_(a, alpha=0.5),
    lambda a: (a * 1).copy_(a.exp()).mul_(a),
    lambda a: (a + 0).mul_(2).add_(a.tanh()),
])
def test_gradients_after_inplace_match_finite_differences(fn):
    a = gv.tensor([0.3, -1.2, 2.0], dtype=gv.float64, requires_grad=True)
    assert gradcheck(fn, (a,))


def test_in_place_on_a_tensor_used_elsewhere_keeps_other_gradients_right():
    # y feeds z = y * 2 (which saves only the constant) before y is modified.
    x = leaf()
    y = x * 1
    z = y * 2
    y.add_(10)
    (z.sum() + y.sum()).backward()
    assert x.grad.tolist() == [3.0, 3.0]
    np.testing.assert_allclose(z.detach().numpy(), [2.0, 4.0])
