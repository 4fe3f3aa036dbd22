"""Bad-input behaviour implemented for issue #20, with torch 2.13's texts read off torch and
hard-coded (no torch import): Python protocols, ``//`` and ``%``, the bitwise operators,
cumsum/flip, factory argument checks and allocation errors."""

from __future__ import annotations

import numpy as np
import pytest

import gradviz
import gradviz.nn.functional as F


def test_number_protocols_and_containment() -> None:
    x = gradviz.ones(2, 3)
    for conv in (int, float, complex):
        with pytest.raises(ValueError, match="^only one element tensors can be converted to "
                                             "Python scalars$"):
            conv(x)
    with pytest.raises(TypeError, match="^only integer tensors of a single element can be "
                                        "converted to an index$"):
        x.__index__()
    assert int(gradviz.tensor([3])) == 3 and [1, 2, 3][gradviz.tensor(1)] == 2
    assert (x == None) is False and (x != None) is True  # noqa: E711 - the protocol under test
    assert 1.0 in x and 2 not in x and x in x and hash(x) == id(x)
    with pytest.raises(RuntimeError, match="^Tensor.__contains__ only supports Tensor or scalar"):
        "a" in x  # noqa: B015
    assert abs(gradviz.tensor([-1.5])).tolist() == [1.5]
    assert [t.tolist() for t in reversed(gradviz.tensor([[1, 2], [3, 4]]))] == [[3, 4], [1, 2]]
    with pytest.raises(TypeError, match=r"^unsupported operand type\(s\) for @: 'Tensor' and "
                                        "'int'$"):
        x @ 2
    with pytest.raises(TypeError, match=r"^unsupported operand type\(s\) for \+: 'Tensor' and "
                                        "'NoneType'$"):
        x + None
    with pytest.raises(TypeError, match="^Concatenation operation is not implemented for NumPy"):
        np.ones(3) + x
    assert (x + np.ones(3)).shape == (2, 3)


def test_floor_divide_and_remainder() -> None:
    assert (gradviz.tensor([-7, 7]) // 2).tolist() == [-4, 3]
    assert (gradviz.tensor([-7, 7]) % -3).tolist() == [-1, -2]
    assert (gradviz.tensor([-7.5, 7.5]) % -3).tolist() == [-1.5, -1.5]
    assert (2.5 // gradviz.tensor([2])).tolist() == [1.0]
    for expr in (lambda: gradviz.tensor([5]) // 0, lambda: gradviz.tensor([5]) % 0):
        with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
            expr()
    assert np.isinf((gradviz.ones(2) // 0).numpy()).all()
    g = gradviz.ones(2, 3, requires_grad=True)
    for y, name in ((g // 2, "torch::autograd::NotImplemented"), (g % 2, "RemainderBackward0"),
                    (g % g, "RemainderBackward1"), (2 % g, "torch::autograd::NotImplemented")):
        assert y.grad_fn.name() == name
    assert type((g // g).grad_fn).__name__ == "NotImplemented"
    assert len((2 // g).grad_fn.next_functions) == 1
    with pytest.raises(RuntimeError, match="^derivative for aten::floor_divide is not "
                                           "implemented$"):
        (g // 2).sum().backward()
    with pytest.raises(RuntimeError, match="^derivative for aten::remainder is not implemented$"):
        (2 % g).sum().backward()
    w = gradviz.tensor([5.3, -1.2], requires_grad=True)
    d = gradviz.tensor([2.0, -3.0], requires_grad=True)
    (w % d).sum().backward()
    assert w.grad.tolist() == [1.0, 1.0] and d.grad.tolist() == [-2.0, -0.0]


def test_bitwise_operators() -> None:
    i, b = gradviz.tensor([1, 2]), gradviz.tensor([True, False])
    assert (i & 3).tolist() == [1, 2] and (2 | i).tolist() == [3, 2] and (i ^ i).tolist() == [0, 0]
    assert (~i).tolist() == [-2, -3] and (~b).tolist() == [False, True]
    assert (b & i).tolist() == [1, 0] and (b ^ b).dtype == gradviz.bool
    x = gradviz.ones(2)
    for op, kernel in ((lambda: x & x, "bitwise_and_cpu"), (lambda: x | x, "bitwise_or_cpu"),
                       (lambda: x ^ x, "bitwise_xor_cpu"), (lambda: i & 1.5, "bitwise_and_cpu"),
                       (lambda: gradviz.bitwise_not(x), "bitwise_not_cpu")):
        with pytest.raises(NotImplementedError, match=f'^"{kernel}" not implemented for '
                                                      "'Float'$"):
            op()
    with pytest.raises(TypeError, match=r"^~ \(operator.invert\) is only implemented on integer "
                                        "and Boolean-type tensors$"):
        ~x  # noqa: B018
    with pytest.raises(RuntimeError, match="^Negation, the `-` operator, on a bool tensor is not "
                                           "supported. If you are trying to invert a mask"):
        -b  # noqa: B018
    j = gradviz.tensor([6, 3])
    j &= 2
    assert j.tolist() == [2, 2]


def test_cumsum_and_flip() -> None:
    g = gradviz.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    y = g.cumsum(1)
    assert y.tolist() == [[1.0, 3.0, 6.0]] and y.grad_fn.name() == "CumsumBackward0"
    assert y.grad_fn._saved_dim == 1
    y.backward(gradviz.tensor([[1.0, 10.0, 100.0]]))
    assert g.grad.tolist() == [[111.0, 110.0, 100.0]]
    f = g.flip(1)
    assert f.grad_fn.name() == "FlipBackward0" and f.grad_fn._saved_dims == (1,)
    assert gradviz.tensor([True, True]).cumsum(0).tolist() == [1, 2]
    assert gradviz.tensor(1.5).cumsum(0).item() == 1.5
    with pytest.raises(RuntimeError, match="^dim 0 appears multiple times in the list of dims$"):
        g.flip(0, 0)


@pytest.mark.parametrize(("call", "fn"), [
    (lambda: gradviz.ones(2, requires_grad="yes"), "ones"),
    (lambda: gradviz.zeros(2, requires_grad=1), "zeros"),
    (lambda: gradviz.full((2,), 1.0, requires_grad="a"), "full"),
    (lambda: gradviz.tensor([1.0], requires_grad="a"), "tensor"),
    (lambda: gradviz.empty(2, requires_grad="a"), "empty"),
    (lambda: gradviz.ones(2).new_ones(3, requires_grad="a"), "new_ones"),
])
def test_requires_grad_must_be_a_bool(call, fn) -> None:
    with pytest.raises(TypeError, match=f"^{fn}\\(\\): argument 'requires_grad' must be bool, "
                                        "not (str|int)$"):
        call()


def test_factory_arguments() -> None:
    cases = [
        (lambda: gradviz.ones(2).requires_grad_("a"), TypeError,
         "requires_grad_(): argument 'requires_grad' (position 1) must be bool, not str"),
        (lambda: gradviz.rand(2, requires_grad="a"), TypeError,
         "rand() received an invalid combination of arguments - got (int, requires_grad=str), "
         "but expected one of:"),
        (lambda: gradviz.ones(2, 3.0), TypeError,
         "ones(): argument 'size' failed to unpack the object at pos 2 with error \"type must be "
         "tuple of ints,but got float\""),
        (lambda: gradviz.ones(2, 3).view(2, 3.0), TypeError,
         "view(): argument 'size' failed to unpack the object at pos 2"),
        (lambda: gradviz.ones("a"), TypeError,
         "ones(): argument 'size' (position 1) must be tuple of ints, not str"),
        (lambda: gradviz.tensor(None), RuntimeError, "Could not infer dtype of NoneType"),
        (lambda: gradviz.tensor([[1], [1, 2]]), ValueError,
         "expected sequence of length 1 at dim 1 (got 2)"),
        (lambda: gradviz.tensor("abc"), TypeError, "new(): invalid data type 'str'"),
        (lambda: gradviz.eye(-1), RuntimeError, "n must be greater or equal to 0, got -1"),
        (lambda: gradviz.full((2,), "a"), TypeError,
         "full(): argument 'fill_value' (position 2) must be Number, not str"),
        (lambda: gradviz.randint(0, 5, 3), TypeError,
         "randint() received an invalid combination of arguments - got (int, int, int)"),
        (lambda: gradviz.arange(10, 0), RuntimeError,
         "upper bound and lower bound inconsistent with step sign"),
        (lambda: gradviz.zeros(-1), RuntimeError, "zeros: Dimension size must be non-negative."),
        (lambda: gradviz.ones(-1), RuntimeError,
         "Trying to create tensor with negative dimension -1: [-1]"),
    ]
    for call, exc, text in cases:
        with pytest.raises(exc) as info:
            call()
        assert str(info.value).startswith(text), (text, str(info.value))


def test_allocation_errors_are_torchs() -> None:
    with pytest.raises(RuntimeError) as info:
        gradviz.ones(10**12)
    assert str(info.value) == (
        "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
        "memory: you tried to allocate 4000000000000 bytes. Error code 12 (Cannot allocate "
        "memory)")
    with pytest.raises(RuntimeError, match=r"^Storage size calculation overflowed with "
                                           r"sizes=\[10000000000, 10000000000\]$"):
        gradviz.zeros(10**10, 10**10)
    with pytest.raises(TypeError, match="^ones\\(\\): argument 'size' failed to unpack the object "
                                        "at pos 1 with error \"Overflow when unpacking long long"):
        gradviz.ones(2**63)


def test_new_factories_and_type() -> None:
    i = gradviz.tensor([1, 2])
    assert i.new_zeros(2).dtype == gradviz.int64 and i.new_full((2,), 1.5).tolist() == [1, 1]
    assert i.new_tensor([1.5]).tolist() == [1]
    assert gradviz.ones(2).new_ones(3).dtype == gradviz.float32
    x = gradviz.ones(2)
    assert x.type() == "gradviz.FloatTensor" and x.type(gradviz.int64).dtype == gradviz.int64
    with pytest.raises(ValueError, match="^invalid type: 'a'$"):
        x.type("a")
    with pytest.raises(RuntimeError, match="^Cannot access accelerator device when none is "
                                           "available."):
        x.to(5)


def test_argument_and_shape_errors() -> None:
    x, s = gradviz.ones(2, 3), gradviz.tensor(1.5)
    cases = [
        (lambda: x.clamp(min="a"), TypeError, "clamp() received an invalid combination of "
         "arguments - got (min=str, ), but expected one of:"),
        (lambda: x.add(1, alpha="a"), TypeError, "add(): argument 'alpha' must be Number, not str"),
        (lambda: F.leaky_relu(x, "a"), TypeError,
         "leaky_relu(): argument 'negative_slope' (position 2) must be Number, not str"),
        (lambda: F.layer_norm(x, 3), TypeError,
         "layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int"),
        (lambda: x.expand(4, 2), RuntimeError, "The expanded size of the tensor (2) must match "
         "the existing size (3) at non-singleton dimension 1"),
        (lambda: x.narrow(0, 5, 1), IndexError,
         "start out of range (expected to be in range of [-2, 2], but got 5)"),
        (lambda: s.narrow(0, 0, 1), RuntimeError, "narrow() cannot be applied to a 0-dim tensor."),
        (lambda: s.split(1), RuntimeError, "split expects at least a 1-dimensional tensor"),
        (lambda: s.chunk(1), RuntimeError, "chunk expects at least a 1-dimensional tensor"),
        (lambda: gradviz.cat([s, s]), RuntimeError,
         "zero-dimensional tensor (at position 0) cannot be concatenated"),
        (lambda: gradviz.mv(x, x), RuntimeError, "vector + matrix @ vector expected, got 1, 2, 2"),
        (lambda: F.binary_cross_entropy(x * 0.5, x * 2), RuntimeError,
         "all elements of target should be between 0 and 1"),
        (lambda: s[0], IndexError, "invalid index of a 0-dim tensor. Use `tensor.item()`"),
        (lambda: x["a"], TypeError, "new(): invalid data type 'str'"),
    ]
    for call, exc, text in cases:
        with pytest.raises(exc) as info:
            call()
        assert str(info.value).startswith(text), (text, str(info.value))
    assert x[..., ...].shape == (2, 3) and x[..., 0, ...].shape == (2,)


def test_node_call_and_grad_assignment() -> None:
    g = gradviz.ones(2, 3, requires_grad=True)
    with pytest.raises(TypeError, match="^expected 1 arguments, got 0 instead$"):
        g.sum().grad_fn.next_functions[0][0]()
    with pytest.raises(TypeError, match="^expected 1 arguments, got 2 instead$"):
        g.sum().grad_fn(gradviz.ones(()), gradviz.ones(()))
    with pytest.raises(RuntimeError, match="^requires_grad must be a bool$"):
        g.requires_grad = "a"


# -- the gaps closed for issue #20 (texts read off torch 2.13) ------------------------------------
@pytest.mark.parametrize("call, message", [
    (lambda x: x.transpose(0), 'transpose() missing 1 required positional arguments: "dim1"'),
    (lambda x: x.transpose(), 'transpose() missing 2 required positional argument: "dim0", '
                              '"dim1"'),
    (lambda x: x.softmax(), 'softmax() missing 1 required positional arguments: "dim"'),
    (lambda x: x.softmax(0, None, 3),
     "softmax() takes from 1 to 2 positional arguments but 3 were given"),
    (lambda x: x.add(x, x), "add() takes 1 positional argument but 2 were given"),
    (lambda x: x.add(), "add() received an invalid combination of arguments - got (), but "
                        "expected (Tensor other, *, Number alpha = 1)"),
    (lambda x: gradviz.add(x), "add() received an invalid combination of arguments - got "
                               "(Tensor), but expected (Tensor input, Tensor other, *, Number "
                               "alpha = 1, Tensor out = None)"),
    (lambda x: gradviz.add(), "add() received an invalid combination of arguments - got (), "
                              "but expected (Tensor input, Tensor other, *, Number alpha = 1, "
                              "Tensor out = None)"),
    (lambda x: gradviz.sub(x), "sub() received an invalid combination of arguments - got "
                               "(Tensor), but expected (Tensor input, Tensor other, *, Number "
                               "alpha = 1, Tensor out = None)"),
    (lambda x: x.mul(), 'mul() missing 1 required positional arguments: "other"'),
    (lambda x: x.mul(x, x), "mul() takes 1 positional argument but 2 were given"),
    (lambda x: x.cumsum(), 'cumsum() missing 1 required positional arguments: "dim"'),
    (lambda x: x.cumsum(0, 1), "cumsum() takes 1 positional argument but 2 were given"),
    (lambda x: x.select(0), 'select() missing 1 required positional arguments: "index"'),
])
def test_argument_errors_read_as_torchs_parser(call, message: str) -> None:
    with pytest.raises(TypeError) as info:
        call(gradviz.ones(2, 3))
    assert str(info.value) == message


def test_overload_errors_name_self_only_in_the_function_form() -> None:
    x, idx = gradviz.ones(2, 3), gradviz.tensor([[0]])
    head = "received an invalid combination of arguments - got "
    for call, got in [
        (lambda: gradviz.clamp(x, max="a"), "clamp() " + head + "(Tensor, max=str), "),
        (lambda: x.clamp(max="a"), "clamp() " + head + "(max=str, ), "),
        (lambda: x.scatter(1, idx, "a"), "scatter() " + head + "(int, Tensor, str), "),
        (lambda: gradviz.scatter(x, 1, idx, "a"), "scatter() " + head +
         "(Tensor, int, Tensor, str), "),
        (lambda: x.scatter(1, idx, value="a"), "scatter() " + head + "(int, Tensor, value=str), "),
    ]:
        with pytest.raises(TypeError) as info:
            call()
        assert str(info.value).startswith(got + "but expected one of:"), str(info.value)


def test_view_as_another_dtype() -> None:
    x = gradviz.ones(2, 3, requires_grad=True)
    bits = x.view(gradviz.int32)
    assert bits.dtype == gradviz.int32 and bits.tolist()[0] == [1065353216] * 3
    assert not bits.requires_grad and bits.grad_fn is None  # view.dtype is not differentiable
    assert x.detach().view(gradviz.float16).shape == (2, 6)
    assert gradviz.ones(2, 4).view(gradviz.float64).shape == (2, 2)
    y = gradviz.zeros(2)
    y.view(gradviz.int32).add_(1)  # shares storage and the version counter
    assert y._version == 1 and y.tolist()[0] != 0.0
    for call, message in [
        (lambda: gradviz.ones(2, 3).view(gradviz.float64),
         "self.size(-1) must be divisible by 2 to view Float as Double (different element "
         "sizes), but got 3"),
        (lambda: gradviz.tensor(1.0).view(gradviz.float64),
         "self.dim() cannot be 0 to view Float as Double (different element sizes)"),
        (lambda: gradviz.ones(2, 3).t().view(gradviz.float16),
         "self.stride(-1) must be 1 to view Float as Half (different element sizes), but got 3"),
    ]:
        with pytest.raises(RuntimeError) as info:
            call()
        assert str(info.value) == message


def test_broadcast_and_expand_texts() -> None:
    x = gradviz.ones(2, 3)
    torch_text = ("The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
                  "dimension 1")
    for call in (lambda: x.eq(gradviz.ones(4)), lambda: x.allclose(gradviz.ones(4)),
                 lambda: x < gradviz.ones(4)):
        with pytest.raises(RuntimeError) as info:
            call()
        assert str(info.value).startswith(torch_text), str(info.value)
    for call, text in [
        (lambda: gradviz.addmm(gradviz.ones(2), x, gradviz.ones(3, 4)),
         "The expanded size of the tensor (4) must match the existing size (2) at non-singleton "
         "dimension 1.  Target sizes: [2, 4].  Tensor sizes: [2]"),
        (lambda: gradviz.addmm(gradviz.ones(3, 4), x, gradviz.ones(3, 4)),
         "The expanded size of the tensor (2) must match the existing size (3) at non-singleton "
         "dimension 0.  Target sizes: [2, 4].  Tensor sizes: [3, 4]"),
        (lambda: F.linear(x, gradviz.ones(2, 3), gradviz.ones(4)),
         "The expanded size of the tensor (2) must match the existing size (4) at non-singleton "
         "dimension 1.  Target sizes: [2, 2].  Tensor sizes: [4]"),
    ]:
        with pytest.raises(RuntimeError) as info:
            call()
        assert str(info.value).startswith(text), str(info.value)


@pytest.mark.parametrize("call, message", [
    (lambda x: x.index_put((gradviz.tensor([5]),), gradviz.ones(3)),
     "index 5 is out of bounds for dimension 0 with size 2"),
    (lambda x: x.index_put((gradviz.tensor([-3]),), gradviz.ones(3)),
     "index -3 is out of bounds for dimension 0 with size 2"),
    (lambda x: x.index_put_((gradviz.tensor([0]), gradviz.tensor([7])), gradviz.ones(1)),
     "index 7 is out of bounds for dimension 1 with size 3"),
    (lambda x: x.index_put((gradviz.tensor([0]),) * 3, gradviz.ones(1)),
     "too many indices for tensor of dimension 2 (got 3)"),
    (lambda x: x[gradviz.tensor(5)], "index 5 is out of bounds for dimension 0 with size 2"),
    (lambda x: x[:, gradviz.tensor(3)], "index 3 is out of bounds for dimension 1 with size 3"),
])
def test_index_errors_say_dimension(call, message: str) -> None:
    with pytest.raises(IndexError) as info:
        call(gradviz.ones(2, 3))
    assert str(info.value) == message


def test_cross_entropy_float_target_and_bitwise_inplace_casts() -> None:
    x = gradviz.ones(2, 3)
    with pytest.raises(RuntimeError, match="^expected target dtype to be Long or Byte, but got "
                                           "Float$"):
        F.cross_entropy(x, gradviz.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"^Expected input batch_size \(2\) to match target "
                                         r"batch_size \(3\)\.$"):
        F.cross_entropy(x, gradviz.tensor([0.0, 1.0, 2.0]))
    assert F.cross_entropy(x, gradviz.full((2, 3), 1 / 3)).item() == pytest.approx(np.log(3))
    i = gradviz.tensor([1, 2])
    for call in (lambda: i.bitwise_and_(1.5), lambda: i.bitwise_or_(1.5),
                 lambda: i.bitwise_xor_(gradviz.tensor([1.0, 2.0]))):
        with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired "
                                               "output type Long$"):
            call()
    with pytest.raises(NotImplementedError, match="^\"bitwise_and_cpu\" not implemented for "
                                                  "'Float'$"):
        i.bitwise_and(1.5)
    assert i.tolist() == [1, 2]
