"""Error types and texts are PyTorch's, word for word (``torch.`` spelled ``gradviz.``).

Each text was copied from torch 2.13.0's actual message for the same program.
"""

from __future__ import annotations

import copy

import pytest

import gradviz as gv

FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


def leaf(values=(1.0, 2.0)):
    return gv.tensor(list(values), requires_grad=True)


def raises(exc_type, fn):
    with pytest.raises(exc_type) as info:
        fn()
    assert type(info.value) is exc_type  # not merely a subclass
    return str(info.value)


# -- backward ------------------------------------------------------------------------------------
def test_backward_twice():
    x = leaf()
    y = (x * x).sum()
    y.backward()
    assert raises(RuntimeError, y.backward) == FREED


def test_implicit_gradient_only_for_scalars():
    x = leaf()
    assert raises(RuntimeError, (x * 2).backward) == (
        "grad can be implicitly created only for scalar outputs")
    assert raises(RuntimeError, lambda: gv.autograd.grad(x * 2, x)) == (
        "grad can be implicitly created only for scalar outputs")


def test_backward_of_tensor_without_grad():
    assert raises(RuntimeError, lambda: gv.tensor([1.0]).sum().backward()) == (
        "element 0 of tensors does not require grad and does not have a grad_fn")
    a = gv.tensor(1.0, requires_grad=True) * 2
    msg = raises(RuntimeError, lambda: gv.autograd.backward(
        [a, gv.tensor(1.0)], [gv.tensor(1.0), gv.tensor(1.0)]))
    assert msg == "element 1 of tensors does not require grad and does not have a grad_fn"


def test_gradient_argument_of_wrong_shape_names_both_shapes():
    x = leaf()
    assert raises(RuntimeError, lambda: (x * 2).backward(gv.ones(3))) == (
        "Mismatch in shape: grad_output[0] has a shape of gradviz.Size([3]) and output[0] has a "
        "shape of gradviz.Size([2]).")
    s = gv.tensor(1.0, requires_grad=True) * 2
    assert raises(RuntimeError, lambda: gv.autograd.grad(s, [], gv.ones(2))) == (
        "`inputs` argument to `grad()` cannot be empty.")
    assert raises(RuntimeError, lambda: gv.autograd.backward([s], [gv.ones(2)])) == (
        "Mismatch in shape: grad_output[0] has a shape of gradviz.Size([2]) and output[0] has a "
        "shape of gradviz.Size([]).")


def test_fewer_gradients_than_outputs():
    a = gv.tensor(1.0, requires_grad=True)
    assert raises(RuntimeError, lambda: gv.autograd.backward([a * 2, a * 3], [gv.tensor(1.0)])) \
        == "got 2 tensors and 1 gradients"
    assert raises(RuntimeError, lambda: gv.autograd.grad([a * 2, a * 3], [a], [gv.tensor(1.0)])) \
        == "got 2 tensors and 1 gradients"


def test_gradient_of_wrong_type():
    x = leaf()
    assert raises(TypeError, lambda: (x * 2).backward("x")) == (
        "gradients can be either Tensors or None, but got str")


def test_empty_inputs():
    x = leaf()
    assert raises(RuntimeError, lambda: (x * 2).sum().backward(inputs=[])) == (
        "`inputs` argument to `backward()` cannot be empty.")
    assert raises(RuntimeError, lambda: gv.autograd.grad((x * 2).sum(), [])) == (
        "`inputs` argument to `grad()` cannot be empty.")


def test_inputs_that_do_not_require_grad():
    x = leaf()
    y = (x * 2).sum()
    # PyTorch calls retain_grad() on every backward input, hence this text.
    assert raises(RuntimeError, lambda: y.backward(inputs=[gv.tensor(1.0)])) == (
        "can't retain_grad on Tensor that has requires_grad=False")
    assert raises(RuntimeError, lambda: gv.autograd.grad(y, gv.tensor(1.0))) == (
        "One of the differentiated Tensors does not require grad")


def test_unused_input_in_grad():
    a = gv.tensor(1.0, requires_grad=True)
    b = gv.tensor(2.0, requires_grad=True)
    assert raises(RuntimeError, lambda: gv.autograd.grad(a * 2, [a, b])) == (
        "The differentiated Tensor at index 1 appears to not have been used in the graph. Set "
        "allow_unused=True if this is the desired behavior.")


# -- requires_grad -------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: gv.tensor([1, 2], requires_grad=True),
    lambda: gv.tensor([True], requires_grad=True),
    lambda: gv.zeros(2, dtype=gv.int64, requires_grad=True),
    lambda: gv.ones(2, dtype=gv.int32, requires_grad=True),
    lambda: gv.arange(3, requires_grad=True),
])
def test_factory_with_requires_grad_on_integer_data(make):
    assert raises(RuntimeError, make) == (
        "Only Tensors of floating point and complex dtype can require gradients")


def test_requires_grad_on_integer_tensor():
    t = gv.tensor([1, 2])
    assert raises(RuntimeError, t.requires_grad_) == (
        "only Tensors of floating point dtype can require gradients")
    assert raises(RuntimeError, lambda: setattr(t, "requires_grad", True)) == (
        "only Tensors of floating point and complex dtype can require gradients")
    t.requires_grad_(False)  # turning it off is always allowed
    assert not t.requires_grad


def test_changing_requires_grad_of_a_non_leaf():
    y = leaf() * 2
    text = ("you can only change requires_grad flags of leaf variables. If you want to use a "
            "computed variable in a subgraph that doesn't require differentiation use "
            "var_no_grad = var.detach().")
    assert raises(RuntimeError, lambda: setattr(y, "requires_grad", False)) == text
    assert raises(RuntimeError, lambda: y.requires_grad_(False)) == text
    assert y.requires_grad_(True) is y  # asking for what it already has is fine


def test_numpy_on_tensor_requiring_grad():
    x = leaf()
    assert raises(RuntimeError, x.numpy) == (
        "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
    assert x.detach().numpy().tolist() == [1.0, 2.0]


def test_retain_grad_on_tensor_without_grad():
    assert raises(RuntimeError, gv.ones(2).retain_grad) == (
        "can't retain_grad on Tensor that has requires_grad=False")


def test_deepcopy_of_a_non_leaf():
    y = leaf() * 2
    assert raises(RuntimeError, lambda: copy.deepcopy(y)) == (
        "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol "
        "at the moment.  If you were attempting to deepcopy a module, this may be because of a "
        "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")


# -- shapes and dims ---------------------------------------------------------------------------
def test_broadcasting_mismatch_starts_with_pytorchs_text():
    msg = raises(RuntimeError, lambda: gv.ones(2, 3) + gv.ones(4))
    # PyTorch's sentence first; gradviz may add an explanation after it.
    assert msg.startswith("The size of tensor a (3) must match the size of tensor b (4) at "
                          "non-singleton dimension 1")
    msg = raises(RuntimeError, lambda: gv.ones(5, 2) * gv.ones(3, 1, 3))
    assert msg.startswith("The size of tensor a (2) must match the size of tensor b (3) at "
                          "non-singleton dimension 2")


def test_mm_shape_mismatch():
    assert raises(RuntimeError, lambda: gv.ones(2, 3).mm(gv.ones(2, 3))) == (
        "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)")
    assert raises(RuntimeError, lambda: gv.ones(2, 3) @ gv.ones(4, 5)) == (
        "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)")
    assert raises(RuntimeError, lambda: gv.mm(gv.ones(2), gv.ones(2, 2))) == (
        "self must be a matrix")


def test_view_of_non_contiguous_tensor():
    assert raises(RuntimeError, lambda: gv.ones(2, 3).t().view(6)) == (
        "view size is not compatible with input tensor's size and stride (at least one dimension "
        "spans across two contiguous subspaces). Use .reshape(...) instead.")
    assert gv.ones(2, 3).t().reshape(6).shape == (6,)


def test_view_of_wrong_size():
    assert raises(RuntimeError, lambda: gv.ones(2, 3).view(4)) == (
        "shape '[4]' is invalid for input of size 6")
    assert raises(RuntimeError, lambda: gv.ones(2, 3).view(-1, -1)) == (
        "only one dimension can be inferred")


@pytest.mark.parametrize("fn, text", [
    (lambda: gv.ones(2, 3).sum(2), "expected to be in range of [-2, 1], but got 2"),
    (lambda: gv.ones(2, 3).sum(-3), "expected to be in range of [-2, 1], but got -3"),
    (lambda: gv.ones(2, 3).transpose(0, 5), "expected to be in range of [-2, 1], but got 5"),
    (lambda: gv.ones(2, 3).unsqueeze(4), "expected to be in range of [-3, 2], but got 4"),
    (lambda: gv.ones(2, 3).squeeze(-3), "expected to be in range of [-2, 1], but got -3"),
    (lambda: gv.tensor(1.0).sum(1), "expected to be in range of [-1, 0], but got 1"),
    (lambda: gv.ones(2, 3).size(2), "expected to be in range of [-2, 1], but got 2"),
])
def test_dim_out_of_range_is_an_index_error(fn, text):
    assert raises(IndexError, fn) == f"Dimension out of range ({text})"


def test_other_shape_texts():
    assert raises(RuntimeError, lambda: gv.ones(2, 2, 2).t()) == (
        "t() expects a tensor with <= 2 dimensions, but self is 3D")
    assert raises(RuntimeError, lambda: gv.ones(3).expand(2, 4)) == (
        "The expanded size of the tensor (4) must match the existing size (3) at non-singleton "
        "dimension 1.  Target sizes: [2, 4].  Tensor sizes: [3]")
    assert raises(RuntimeError, lambda: gv.ones(2, 3).permute(0, 0)) == (
        "permute(): duplicate dims are not allowed.")
    assert raises(RuntimeError, lambda: gv.ones(2, 3).sum((0, 0))) == (
        "dim 0 appears multiple times in the list of dims")
    assert raises(RuntimeError, lambda: gv.ones(3).add_(gv.ones(2, 3))) == (
        "output with shape [3] doesn't match the broadcast shape [2, 3]")


# -- conversions -------------------------------------------------------------------------------
def test_conversion_texts():
    assert raises(RuntimeError, lambda: gv.ones(2).item()) == (
        "a Tensor with 2 elements cannot be converted to Scalar")
    assert raises(RuntimeError, lambda: bool(gv.ones(2))) == (
        "Boolean value of Tensor with more than one value is ambiguous")
    assert raises(TypeError, lambda: len(gv.tensor(1.0))) == "len() of a 0-d tensor"
    assert raises(TypeError, lambda: [1, 2][gv.tensor(1.0)]) == (
        "only integer tensors of a single element can be converted to an index")


def test_dtype_texts():
    assert raises(RuntimeError, lambda: gv.tensor([1, 2]).mean()) == (
        "mean(): could not infer output dtype. Input dtype must be either a floating point or "
        "complex dtype. Got: Long")
    assert raises(RuntimeError, lambda: gv.tensor([2]) ** -1) == (
        "Integers to negative integer powers are not allowed.")
    assert raises(RuntimeError, lambda: gv.ones(3, dtype=gv.int64).add_(1.5)) == (
        "result type Float can't be cast to the desired output type Long")
    assert raises(RuntimeError, lambda: gv.where(gv.ones(2), gv.ones(2), gv.ones(2))) == (
        "where expected condition to be a boolean tensor, but got a tensor with dtype Float")
