"""The tensor API: factories, dtypes, attributes, autograd flags, conversions and ``repr``.

Expected values and error texts were read off torch 2.13.0 (CPU) for the same calls; the
``repr`` strings are torch's output with ``torch.`` replaced by ``gradviz.`` (gradviz lays out
lines exactly as torch would, see NOTE [torch-width layout] in ``gradviz/_format.py``).
"""

from __future__ import annotations

import copy
import pickle
import sys
import warnings

import numpy as np
import pytest

import gradviz


# -- factories -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("data", "dtype"), [
    ([1.0, 2.0], gradviz.float32),
    ([1, 2], gradviz.int64),
    ([True, False], gradviz.bool),
    ([[1, 2.5]], gradviz.float32),
    (3, gradviz.int64),
    (2.5, gradviz.float32),
    (True, gradviz.bool),
    (np.array([1, 2], dtype=np.int32), gradviz.int32),
    (np.array([1.0], dtype=np.float64), gradviz.float64),
    (np.float64(1.5), gradviz.float64),
    (np.float32(1.5), gradviz.float32),
    (np.int32(3), gradviz.int32),
])
def test_tensor_infers_dtype_like_torch(data: object, dtype: gradviz.dtype) -> None:
    assert gradviz.tensor(data).dtype is dtype


def test_tensor_copies_and_takes_options() -> None:
    a = np.array([1.0, 2.0])
    t = gradviz.tensor(a, dtype=gradviz.float32, requires_grad=True, name="w")
    a[0] = 100.0
    assert t.tolist() == [1.0, 2.0]
    assert t.dtype is gradviz.float32 and t.requires_grad and t.is_leaf and t.name == "w"
    u = gradviz.tensor(t)
    assert u is not t and not u.requires_grad and u.tolist() == [1.0, 2.0]
    assert gradviz.tensor([[1, 2], [3, 4]]).shape == (2, 2)


def test_as_tensor_and_from_numpy_share_memory() -> None:
    a = np.zeros(3)
    t = gradviz.as_tensor(a)
    f = gradviz.from_numpy(a)
    a[1] = 7.0
    assert t.tolist() == f.tolist() == [0.0, 7.0, 0.0]
    assert t.dtype is f.dtype is gradviz.float64
    x = gradviz.ones(2)
    assert gradviz.as_tensor(x) is x
    assert gradviz.as_tensor(x, dtype=gradviz.float64).dtype is gradviz.float64
    assert gradviz.as_tensor([1, 2]).dtype is gradviz.int64
    with pytest.raises(TypeError):
        gradviz.from_numpy([1, 2])


def test_shape_factories() -> None:
    for fn, value in ((gradviz.zeros, 0.0), (gradviz.ones, 1.0), (gradviz.empty, None)):
        t = fn(2, 3)
        assert t.shape == (2, 3) and t.dtype is gradviz.float32 and not t.requires_grad
        assert fn((2, 3)).shape == (2, 3)
        assert fn([4]).shape == (4,)
        if value is not None:
            assert np.all(t.numpy() == value)
        assert fn(2, dtype=gradviz.float64).dtype is gradviz.float64
        assert fn(2, requires_grad=True).requires_grad
    assert gradviz.zeros(()).shape == ()
    assert gradviz.ones(0).numel() == 0


def test_full() -> None:
    assert gradviz.full((2,), 7).dtype is gradviz.int64
    assert gradviz.full((2,), True).dtype is gradviz.bool
    assert gradviz.full((2,), 1.5).dtype is gradviz.float32
    t = gradviz.full((2, 2), 1.5, dtype=gradviz.float64, requires_grad=True)
    assert t.dtype is gradviz.float64 and t.requires_grad and t.tolist() == [[1.5, 1.5]] * 2


def test_random_factories() -> None:
    gradviz.manual_seed(0)
    r = gradviz.rand(3, 4)
    assert r.shape == (3, 4) and r.dtype is gradviz.float32
    assert np.all((r.numpy() >= 0) & (r.numpy() < 1))
    n = gradviz.randn(1000, dtype=gradviz.float64)
    assert n.dtype is gradviz.float64 and abs(float(n.mean())) < 0.2
    i = gradviz.randint(2, 5, (50,))
    assert i.dtype is gradviz.int64 and set(i.tolist()) <= {2, 3, 4}
    assert set(gradviz.randint(3, (20,)).tolist()) <= {0, 1, 2}
    assert gradviz.rand(2, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to', but got "
                                           "from=5 >= to=3"):
        gradviz.randint(5, 3, (2,))


def test_random_fills_in_place_as_torch_does() -> None:
    # PyTorch's CrossEntropyLoss example makes its targets with random_(5)
    gradviz.manual_seed(0)
    t = gradviz.empty(200, dtype=gradviz.long)
    assert t.random_(5) is t and t.dtype is gradviz.int64 and set(t.tolist()) == {0, 1, 2, 3, 4}
    assert t._version == 1  # an in-place write
    f = gradviz.empty(200).random_(-2, 1)
    assert f.dtype is gradviz.float32 and set(f.tolist()) == {-2.0, -1.0, 0.0}
    whole = gradviz.empty(50).random_()  # [0, 2**24] for float32
    assert 0 <= min(whole.tolist()) and max(whole.tolist()) <= 2**24
    assert set(gradviz.empty(50, dtype=gradviz.bool).random_().tolist()) == {False, True}
    # torch 2.13's texts
    with pytest.raises(RuntimeError, match="^random_ expects 'from' to be less than 'to', but got "
                                           "from=0 >= to=0$"):
        gradviz.empty(3).random_(0)
    with pytest.raises(RuntimeError, match="^to - 1 is out of bounds for unsigned char$"):
        gradviz.empty(3, dtype=gradviz.uint8).random_(300)
    with pytest.raises(RuntimeError, match="^to - 1 is out of bounds for short int$"):
        gradviz.empty(3, dtype=gradviz.int16).random_(2**20)
    with pytest.warns(UserWarning, match=r"^to - 1 is out of bounds \[-\(2\^24\), 2\^24\]. Due "
                      "to precision limitations float can support"):
        gradviz.empty(3).random_(1, 2**25)
    with pytest.raises(TypeError, match=r"^random_\(\) received an invalid combination of "
                       r"arguments - got \(float\), but expected one of:"):
        gradviz.empty(3).random_(2.5)
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in "
                                           "an in-place operation.$"):
        gradviz.ones(2, requires_grad=True).random_(3)


def test_manual_seed_repeats() -> None:
    def draw() -> list:
        return [gradviz.rand(3).tolist(), gradviz.randn(2, 2).tolist(),
                gradviz.randint(0, 100, (4,)).tolist(),
                gradviz.rand_like(gradviz.zeros(2)).tolist()]

    gradviz.manual_seed(42)
    first = draw()
    gradviz.manual_seed(42)
    assert draw() == first
    assert gradviz.initial_seed() == 42
    gradviz.manual_seed(43)
    assert draw() != first


def test_arange_linspace_eye() -> None:
    assert gradviz.arange(5).dtype is gradviz.int64
    assert gradviz.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert gradviz.arange(5.0).dtype is gradviz.float32
    assert gradviz.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert gradviz.arange(1, 7, 2).tolist() == [1, 3, 5]
    assert gradviz.arange(3, dtype=gradviz.float64).dtype is gradviz.float64
    lin = gradviz.linspace(0, 1, 5)
    assert lin.dtype is gradviz.float32 and lin.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert gradviz.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert gradviz.eye(2, 3).shape == (2, 3)
    assert gradviz.eye(2, dtype=gradviz.int64).dtype is gradviz.int64


def test_like_factories() -> None:
    i = gradviz.tensor([1, 2])
    d = gradviz.tensor([[1.0, 2.0]], dtype=gradviz.float64)
    assert gradviz.zeros_like(i).dtype is gradviz.int64
    assert gradviz.ones_like(d).dtype is gradviz.float64 and gradviz.ones_like(d).shape == (1, 2)
    assert gradviz.full_like(i, 7).tolist() == [7, 7]
    assert gradviz.zeros_like(d, dtype=gradviz.float32).dtype is gradviz.float32
    assert gradviz.ones_like(d, requires_grad=True).requires_grad
    assert gradviz.rand_like(d).dtype is gradviz.float64 and gradviz.rand_like(d).shape == (1, 2)
    assert gradviz.randn_like(gradviz.ones(3)).dtype is gradviz.float32


def test_dtypes() -> None:
    assert repr(gradviz.float32) == "gradviz.float32"
    assert repr(gradviz.float64) == "gradviz.float64"
    assert repr(gradviz.int64) == "gradviz.int64"
    assert repr(gradviz.bool) == "gradviz.bool"
    assert gradviz.float is gradviz.float32 and gradviz.double is gradviz.float64
    assert gradviz.long is gradviz.int64
    assert gradviz.float32.is_floating_point and not gradviz.int64.is_floating_point
    assert not gradviz.bool.is_floating_point
    assert gradviz.float64.itemsize == 8 and gradviz.float32.itemsize == 4
    assert gradviz.get_default_dtype() is gradviz.float32
    assert [gradviz.ones(1, dtype=d).type() for d in (gradviz.float32, gradviz.float64)] == [
        "gradviz.FloatTensor", "gradviz.DoubleTensor"]
    assert gradviz.tensor([1]).type() == "gradviz.LongTensor"
    assert gradviz.tensor([True]).type() == "gradviz.BoolTensor"


def test_set_default_dtype() -> None:
    gradviz.set_default_dtype(gradviz.float64)
    try:
        assert gradviz.tensor([1.0]).dtype is gradviz.float64
        assert gradviz.ones(1).dtype is gradviz.float64
        assert repr(gradviz.tensor([1.5])) == "tensor([1.5000])"
        assert repr(gradviz.tensor([1.5], dtype=gradviz.float32)) == (
            "tensor([1.5000], dtype=gradviz.float32)")
    finally:
        gradviz.set_default_dtype(gradviz.float32)
    assert gradviz.tensor([1.0]).dtype is gradviz.float32


# -- attributes ------------------------------------------------------------------------------------
def test_shape_attributes() -> None:
    t = gradviz.zeros(2, 3)
    assert t.shape == (2, 3) and t.size() == (2, 3)
    assert t.size(0) == 2 and t.size(-1) == 3
    assert t.dim() == t.ndim == 2
    assert t.numel() == t.nelement() == 6
    assert len(gradviz.zeros(4, 2)) == 4
    assert t.dtype is gradviz.float32 and t.device == "cpu"
    assert gradviz.tensor(1.0).dim() == 0 and gradviz.tensor(1.0).shape == ()
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(gradviz.tensor(1.0))
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                                         r"\[-2, 1\], but got 2\)"):
        t.size(2)


def test_data() -> None:
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    d = x.data
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    d.mul_(2)  # shares memory, invisible to autograd's version checks
    assert x.tolist() == [2.0, 4.0] and x._version == 0
    x.data = gradviz.tensor([5.0, 6.0])
    assert x.tolist() == [5.0, 6.0] and x.requires_grad


def test_requires_grad_flags() -> None:
    x = gradviz.ones(2)
    assert not x.requires_grad
    x.requires_grad = True
    assert x.requires_grad
    assert x.requires_grad_(False) is x and not x.requires_grad
    assert x.requires_grad_() is x and x.requires_grad
    y = x * 2
    assert y.requires_grad and not y.is_leaf
    assert y.requires_grad_(True) is y  # allowed: it already requires grad
    msg = ("you can only change requires_grad flags of leaf variables. If you want to use a "
           "computed variable in a subgraph that doesn't require differentiation use "
           "var_no_grad = var.detach().")
    with pytest.raises(RuntimeError) as info:
        y.requires_grad = False
    assert str(info.value) == msg
    with pytest.raises(RuntimeError, match="^only Tensors of floating point dtype can require "
                                           "gradients$"):
        gradviz.tensor([1, 2]).requires_grad_()


def test_grad_grad_fn_and_leaves() -> None:
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    assert x.grad is None and x.grad_fn is None and x.is_leaf
    y = (x * x).sum()
    assert y.grad_fn.name() == "SumBackward0" and not y.is_leaf
    assert gradviz.ones(2).is_leaf
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0]
    assert x.grad.dtype is gradviz.float32 and not x.grad.requires_grad
    (x * 3).sum().backward()  # gradients accumulate
    assert x.grad.tolist() == [5.0, 7.0]


def test_retain_grad() -> None:
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert not y.retains_grad and not x.retains_grad
    y.retain_grad()
    assert y.retains_grad
    x.retain_grad()  # a no-op on leaves
    assert not x.retains_grad
    z = y * y
    z.sum().backward()
    assert y.grad.tolist() == [4.0, 8.0]
    assert z.grad is None
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has "
                                           "requires_grad=False"):
        gradviz.ones(2).retain_grad()


def test_register_hook_handle() -> None:
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    h1 = x.register_hook(lambda g: seen.append(g.tolist()))
    h2 = x.register_hook(lambda g: g * 10)
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and x.grad.tolist() == [30.0, 30.0]
    h1.remove()
    h2.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and x.grad.tolist() == [3.0, 3.0]
    y = x * 2  # hooks on non-leaves see the gradient flowing into them
    h = y.register_hook(lambda g: g + 1)
    x.grad = None
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]
    h.remove()
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                           "require gradient"):
        gradviz.ones(2).register_hook(lambda g: g)


def test_detach() -> None:
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    d.add_(1)  # shares storage and version counter
    assert y.tolist() == [3.0, 5.0] and y._version == 1
    dx = x.detach()
    assert dx._version == 0
    y2 = x * 2
    assert y2.detach_() is y2
    assert not y2.requires_grad and y2.grad_fn is None and y2.is_leaf


def test_conversions() -> None:
    assert gradviz.tensor([1.5]).item() == 1.5
    assert type(gradviz.tensor([1]).item()) is int
    assert gradviz.tensor(True).item() is True
    assert gradviz.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert gradviz.tensor(2.5).tolist() == 2.5
    assert float(gradviz.tensor(2.5)) == 2.5 and int(gradviz.tensor(3)) == 3
    with pytest.raises(RuntimeError, match="^a Tensor with 2 elements cannot be converted to "
                                           "Scalar$"):
        gradviz.ones(2).item()
    with pytest.raises(RuntimeError, match="^Boolean value of Tensor with more than one value is "
                                           "ambiguous$"):
        bool(gradviz.ones(2))
    t = gradviz.ones(2)
    a = t.numpy()
    a[0] = 5  # numpy() shares memory
    assert t.tolist() == [5.0, 1.0]
    x = gradviz.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        x.numpy()
    assert str(info.value) == ("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
    assert x.detach().numpy().tolist() == [1.0, 1.0]
    assert np.asarray(gradviz.tensor([1, 2])).dtype == np.int64


def test_clone() -> None:
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert c.grad_fn.name() == "CloneBackward0" and c.requires_grad
    c2 = gradviz.tensor([1.0, 2.0]).clone()
    assert c2.grad_fn is None and not c2.requires_grad
    with gradviz.no_grad():
        c.mul_(3)
    assert x.tolist() == [1.0, 2.0]  # a clone owns its storage


def test_version_counter() -> None:
    x = gradviz.ones(3)
    assert x._version == 0
    x.add_(1)
    x.mul_(2)
    x += 1
    assert x._version == 3
    v = x.view(3, 1)
    assert v._version == 3
    v.zero_()
    assert x._version == 4 and x.tolist() == [0.0, 0.0, 0.0]
    y = x + 1  # out of place: a new counter
    assert y._version == 0


def test_inplace_on_leaf_that_requires_grad() -> None:
    x = gradviz.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in "
                                           "an in-place operation.$"):
        x.add_(1)
    with gradviz.no_grad():
        x.add_(1)
    assert x.tolist() == [2.0, 2.0] and x._version == 1


def test_name() -> None:
    t = gradviz.ones(2)
    assert t.name is None
    t.name = "weights"
    assert t.name == "weights"
    t.name = None
    assert t.name is None
    assert gradviz.tensor([1.0], name="b").name == "b"


def test_copy_and_pickle() -> None:
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    c = copy.deepcopy(x)
    assert c is not x and c.tolist() == [1.0, 2.0] and c.requires_grad and c.is_leaf
    p = pickle.loads(pickle.dumps(x))
    assert p.tolist() == [1.0, 2.0] and p.requires_grad
    with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
        copy.deepcopy(x * 2)


# -- repr ----------------------------------------------------------------------------------------
# (source, torch's repr with "torch." replaced by "gradviz."), read off torch 2.13.0.
REPR_CASES = [
    ('m.tensor([1., 2.], requires_grad=True)',
     'tensor([1., 2.], requires_grad=True)'),
    ('m.tensor([1., 2., 3.])',
     'tensor([1., 2., 3.])'),
    ('m.tensor([1.5, 2.25, -3.125])',
     'tensor([ 1.5000,  2.2500, -3.1250])'),
    ('m.tensor(2.5)',
     'tensor(2.5000)'),
    ('m.tensor(3.)',
     'tensor(3.)'),
    ('m.tensor(3)',
     'tensor(3)'),
    ('m.tensor(True)',
     'tensor(True)'),
    ('m.tensor(-0.0)',
     'tensor(-0.)'),
    ('m.tensor([-0.0, 1.5])',
     'tensor([-0.0000, 1.5000])'),
    ('m.tensor([[1., 2.5], [3., 4.]])',
     'tensor([[1.0000, 2.5000],\n'
     '        [3.0000, 4.0000]])'),
    ('m.arange(24.).reshape(2, 3, 4)',
     'tensor([[[ 0.,  1.,  2.,  3.],\n'
     '         [ 4.,  5.,  6.,  7.],\n'
     '         [ 8.,  9., 10., 11.]],\n'
     '\n'
     '        [[12., 13., 14., 15.],\n'
     '         [16., 17., 18., 19.],\n'
     '         [20., 21., 22., 23.]]])'),
    ('m.arange(24.).reshape(2, 3, 4) / 7',
     'tensor([[[0.0000, 0.1429, 0.2857, 0.4286],\n'
     '         [0.5714, 0.7143, 0.8571, 1.0000],\n'
     '         [1.1429, 1.2857, 1.4286, 1.5714]],\n'
     '\n'
     '        [[1.7143, 1.8571, 2.0000, 2.1429],\n'
     '         [2.2857, 2.4286, 2.5714, 2.7143],\n'
     '         [2.8571, 3.0000, 3.1429, 3.2857]]])'),
    ('m.tensor([1., 2.], dtype=m.float64)',
     'tensor([1., 2.], dtype=gradviz.float64)'),
    ('m.tensor([[1.5, 2.], [0.1, 3.]], dtype=m.float64, requires_grad=True)',
     'tensor([[1.5000, 2.0000],\n'
     '        [0.1000, 3.0000]], dtype=gradviz.float64, requires_grad=True)'),
    ('m.tensor([1., 2.], requires_grad=True) + 1',
     'tensor([2., 3.], grad_fn=<AddBackward0>)'),
    ('m.tensor([1., 2.], dtype=m.float64, requires_grad=True) * 3',
     'tensor([3., 6.], dtype=gradviz.float64, grad_fn=<MulBackward0>)'),
    ('(m.arange(5.) / 3 - 0.7).requires_grad_().tanh()',
     'tensor([-0.6044, -0.3511, -0.0333,  0.2913,  0.5603], grad_fn=<TanhBackward0>)'),
    ('(m.arange(6.) / 7).double().requires_grad_().exp()',
     'tensor([1.0000, 1.1536, 1.3307, 1.5351, 1.7708, 2.0427], dtype=gradviz.float64,\n'
     '       grad_fn=<ExpBackward0>)'),
    ('m.ones(3, dtype=m.float64, requires_grad=True).mean()',
     'tensor(1., dtype=gradviz.float64, grad_fn=<MeanBackward0>)'),
    ('m.ones(2, requires_grad=True).clone().copy_(m.ones(2))',
     'tensor([1., 1.], grad_fn=<CopyBackwards>)'),
    ('m.tensor([1, -20, 300])',
     'tensor([  1, -20, 300])'),
    ('m.tensor([1, 2], dtype=m.int32)',
     'tensor([1, 2], dtype=gradviz.int32)'),
    ('m.tensor([[1, 2], [30, 4]])',
     'tensor([[ 1,  2],\n'
     '        [30,  4]])'),
    ('m.tensor([-1, 5], dtype=m.int8)',
     'tensor([-1,  5], dtype=gradviz.int8)'),
    ('m.tensor([1, 255], dtype=m.uint8)',
     'tensor([  1, 255], dtype=gradviz.uint8)'),
    ('m.tensor([True, False, True])',
     'tensor([ True, False,  True])'),
    ('m.tensor([True, True])',
     'tensor([True, True])'),
    ('m.tensor([[True, False], [False, False]])',
     'tensor([[ True, False],\n'
     '        [False, False]])'),
    ('m.tensor([])',
     'tensor([])'),
    ('m.tensor([], dtype=m.int64)',
     'tensor([], dtype=gradviz.int64)'),
    ('m.zeros(0, 3)',
     'tensor([], size=(0, 3))'),
    ('m.zeros(2, 0, dtype=m.float64)',
     'tensor([], size=(2, 0), dtype=gradviz.float64)'),
    ('m.zeros(0, requires_grad=True)',
     'tensor([], requires_grad=True)'),
    ('m.tensor([1e-5, 1.0])',
     'tensor([1.0000e-05, 1.0000e+00])'),
    ('m.tensor([1e9, 1.0])',
     'tensor([1.0000e+09, 1.0000e+00])'),
    ('m.tensor([0.001, 2.0])',
     'tensor([1.0000e-03, 2.0000e+00])'),
    ('m.tensor([1e10, 2e10])',
     'tensor([1.0000e+10, 2.0000e+10])'),
    ('m.tensor([-1.5e-7, 2.5e3, 0.])',
     'tensor([-1.5000e-07,  2.5000e+03,  0.0000e+00])'),
    ('m.tensor([1e-10, 1e10], dtype=m.float64)',
     'tensor([1.0000e-10, 1.0000e+10], dtype=gradviz.float64)'),
    ('m.tensor([1e-30])',
     'tensor([1.0000e-30])'),
    ("m.tensor([float('nan'), float('inf'), -float('inf'), 1.5])",
     'tensor([   nan,    inf,   -inf, 1.5000])'),
    ("m.tensor([float('nan'), 2.])",
     'tensor([nan, 2.])'),
    ("m.tensor([float('nan')])",
     'tensor([nan])'),
    ('m.zeros(3)',
     'tensor([0., 0., 0.])'),
    ('m.zeros(2, 2, dtype=m.float64)',
     'tensor([[0., 0.],\n'
     '        [0., 0.]], dtype=gradviz.float64)'),
    ('m.tensor([123456., 1.])',
     'tensor([1.2346e+05, 1.0000e+00])'),
    ('m.tensor([100000000., 1.])',
     'tensor([1.0000e+08, 1.0000e+00])'),
    ('m.tensor([[1., -100.5], [0.25, 10.]])',
     'tensor([[   1.0000, -100.5000],\n'
     '        [   0.2500,   10.0000]])'),
    ('m.tensor([1.5, 2.], dtype=m.float16)',
     'tensor([1.5000, 2.0000], dtype=gradviz.float16)'),
    ('m.arange(30.) / 7',
     'tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n'
     '        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n'
     '        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n'
     '        3.8571, 4.0000, 4.1429])'),
    ('m.arange(40)',
     'tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n'
     '        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n'
     '        36, 37, 38, 39])'),
    ('(m.arange(24.) / 7 - 1).reshape(2, 12).requires_grad_()',
     'tensor([[-1.0000, -0.8571, -0.7143, -0.5714, -0.4286, -0.2857, -0.1429,  0.0000,\n'
     '          0.1429,  0.2857,  0.4286,  0.5714],\n'
     '        [ 0.7143,  0.8571,  1.0000,  1.1429,  1.2857,  1.4286,  1.5714,  1.7143,\n'
     '          1.8571,  2.0000,  2.1429,  2.2857]], requires_grad=True)'),
    ('(m.arange(27.) * 1.37 - 20).reshape(3, 9).double().requires_grad_()',
     'tensor([[-20.0000, -18.6300, -17.2600, -15.8900, -14.5200, -13.1500, -11.7800,\n'
     '         -10.4100,  -9.0400],\n'
     '        [ -7.6700,  -6.3000,  -4.9300,  -3.5600,  -2.1900,  -0.8200,   0.5500,\n'
     '           1.9200,   3.2900],\n'
     '        [  4.6600,   6.0300,   7.4000,   8.7700,  10.1400,  11.5100,  12.8800,\n'
     '          14.2500,  15.6200]], dtype=gradviz.float64, requires_grad=True)'),
    ('((m.arange(27.) * 1.37 - 20).reshape(3, 9).double().requires_grad_() * 2).sum(0)',
     'tensor([-46.0200, -37.8000, -29.5800, -21.3600, -13.1400,  -4.9200,   3.3000,\n'
     '         11.5200,  19.7400], dtype=gradviz.float64, grad_fn=<SumBackward1>)'),
    ('m.arange(2000.)',
     'tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n'
     '        1.9990e+03])'),
    ('m.arange(1001)',
     'tensor([   0,    1,    2,  ...,  998,  999, 1000])'),
    ('m.arange(2000.).reshape(40, 50) / 3',
     'tensor([[0.0000e+00, 3.3333e-01, 6.6667e-01,  ..., 1.5667e+01, 1.6000e+01,\n'
     '         1.6333e+01],\n'
     '        [1.6667e+01, 1.7000e+01, 1.7333e+01,  ..., 3.2333e+01, 3.2667e+01,\n'
     '         3.3000e+01],\n'
     '        [3.3333e+01, 3.3667e+01, 3.4000e+01,  ..., 4.9000e+01, 4.9333e+01,\n'
     '         4.9667e+01],\n'
     '        ...,\n'
     '        [6.1667e+02, 6.1700e+02, 6.1733e+02,  ..., 6.3233e+02, 6.3267e+02,\n'
     '         6.3300e+02],\n'
     '        [6.3333e+02, 6.3367e+02, 6.3400e+02,  ..., 6.4900e+02, 6.4933e+02,\n'
     '         6.4967e+02],\n'
     '        [6.5000e+02, 6.5033e+02, 6.5067e+02,  ..., 6.6567e+02, 6.6600e+02,\n'
     '         6.6633e+02]])'),
    ('m.arange(3000).reshape(10, 10, 30)',
     'tensor([[[   0,    1,    2,  ...,   27,   28,   29],\n'
     '         [  30,   31,   32,  ...,   57,   58,   59],\n'
     '         [  60,   61,   62,  ...,   87,   88,   89],\n'
     '         ...,\n'
     '         [ 210,  211,  212,  ...,  237,  238,  239],\n'
     '         [ 240,  241,  242,  ...,  267,  268,  269],\n'
     '         [ 270,  271,  272,  ...,  297,  298,  299]],\n'
     '\n'
     '        [[ 300,  301,  302,  ...,  327,  328,  329],\n'
     '         [ 330,  331,  332,  ...,  357,  358,  359],\n'
     '         [ 360,  361,  362,  ...,  387,  388,  389],\n'
     '         ...,\n'
     '         [ 510,  511,  512,  ...,  537,  538,  539],\n'
     '         [ 540,  541,  542,  ...,  567,  568,  569],\n'
     '         [ 570,  571,  572,  ...,  597,  598,  599]],\n'
     '\n'
     '        [[ 600,  601,  602,  ...,  627,  628,  629],\n'
     '         [ 630,  631,  632,  ...,  657,  658,  659],\n'
     '         [ 660,  661,  662,  ...,  687,  688,  689],\n'
     '         ...,\n'
     '         [ 810,  811,  812,  ...,  837,  838,  839],\n'
     '         [ 840,  841,  842,  ...,  867,  868,  869],\n'
     '         [ 870,  871,  872,  ...,  897,  898,  899]],\n'
     '\n'
     '        ...,\n'
     '\n'
     '        [[2100, 2101, 2102,  ..., 2127, 2128, 2129],\n'
     '         [2130, 2131, 2132,  ..., 2157, 2158, 2159],\n'
     '         [2160, 2161, 2162,  ..., 2187, 2188, 2189],\n'
     '         ...,\n'
     '         [2310, 2311, 2312,  ..., 2337, 2338, 2339],\n'
     '         [2340, 2341, 2342,  ..., 2367, 2368, 2369],\n'
     '         [2370, 2371, 2372,  ..., 2397, 2398, 2399]],\n'
     '\n'
     '        [[2400, 2401, 2402,  ..., 2427, 2428, 2429],\n'
     '         [2430, 2431, 2432,  ..., 2457, 2458, 2459],\n'
     '         [2460, 2461, 2462,  ..., 2487, 2488, 2489],\n'
     '         ...,\n'
     '         [2610, 2611, 2612,  ..., 2637, 2638, 2639],\n'
     '         [2640, 2641, 2642,  ..., 2667, 2668, 2669],\n'
     '         [2670, 2671, 2672,  ..., 2697, 2698, 2699]],\n'
     '\n'
     '        [[2700, 2701, 2702,  ..., 2727, 2728, 2729],\n'
     '         [2730, 2731, 2732,  ..., 2757, 2758, 2759],\n'
     '         [2760, 2761, 2762,  ..., 2787, 2788, 2789],\n'
     '         ...,\n'
     '         [2910, 2911, 2912,  ..., 2937, 2938, 2939],\n'
     '         [2940, 2941, 2942,  ..., 2967, 2968, 2969],\n'
     '         [2970, 2971, 2972,  ..., 2997, 2998, 2999]]])'),
    ('m.arange(1200).reshape(30, 40) > 600',
     'tensor([[False, False, False,  ..., False, False, False],\n'
     '        [False, False, False,  ..., False, False, False],\n'
     '        [False, False, False,  ..., False, False, False],\n'
     '        ...,\n'
     '        [ True,  True,  True,  ...,  True,  True,  True],\n'
     '        [ True,  True,  True,  ...,  True,  True,  True],\n'
     '        [ True,  True,  True,  ...,  True,  True,  True]])'),
    ('(m.arange(2000.) / 3).double().requires_grad_()',
     'tensor([0.0000e+00, 3.3333e-01, 6.6667e-01,  ..., 6.6567e+02, 6.6600e+02,\n'
     '        6.6633e+02], dtype=gradviz.float64, requires_grad=True)'),
]


@pytest.mark.parametrize(("src", "expected"), REPR_CASES, ids=[s for s, _ in REPR_CASES])
def test_repr_matches_torch(src: str, expected: str) -> None:
    t = eval(src, {"m": gradviz})  # noqa: S307 - sources written in this file
    assert repr(t) == expected
    assert str(t) == expected


def test_repr_of_leaf_grad_and_format() -> None:
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    assert repr(x.grad) == "tensor([2., 2.])"
    assert f"{gradviz.tensor(2.5):.2f}" == "2.50"
    assert f"{gradviz.tensor([1.0])}" == "tensor([1.])"


def test_reading_grad_of_a_non_leaf_warns_like_pytorch() -> None:
    import warnings

    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match=r"^The \.grad attribute of a Tensor that is not a leaf "
                                         r"Tensor is being accessed"):
        assert y.grad is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # leaves and retained non-leaves are read silently
        assert x.grad.tolist() == [2.0, 2.0]
        w = x * 3
        w.retain_grad()
        w.sum().backward()
        assert w.grad.tolist() == [1.0, 1.0]


def test_assigning_grad_checks_shape_and_dtype() -> None:
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    x.grad = gradviz.tensor([0.5, 0.5])
    assert x.grad.tolist() == [0.5, 0.5]
    # torch 2.13's texts
    with pytest.raises(RuntimeError, match=r"^attempting to assign a gradient of size '\[1\]' to "
                       r"a tensor of size '\[2\]'. Please ensure"):
        x.grad = gradviz.tensor([1.0])
    with pytest.raises(RuntimeError, match="^attempting to assign a gradient with dtype 'double' "
                       "to a tensor with grad_dtype 'Float'"):
        x.grad = gradviz.tensor([1.0, 2.0], dtype=gradviz.float64)
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None"):
        x.grad = [1.0, 2.0]
    x.grad = None
    assert x.grad is None


def test_reading_a_non_leaf_grad_warns_with_torchs_text() -> None:
    y = gradviz.ones(2, requires_grad=True) * 2
    with pytest.warns(UserWarning) as caught:
        assert y.grad is None
    assert str(caught[0].message) == (  # torch 2.13's text, before "(Triggered internally ...)"
        "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
        "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
        "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
        "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
        "instead. See github.com/pytorch/pytorch/pull/30531 for more information.")


def test_float_of_a_tensor_that_requires_grad_warns_once_as_torch(monkeypatch) -> None:
    module = sys.modules["gradviz.tensor"]  # gradviz.tensor is the factory
    monkeypatch.setattr(module, "_float_warned", False)
    c = gradviz.tensor(2.5, requires_grad=True)
    with pytest.warns(UserWarning) as caught:
        assert float(c) == 2.5
    assert [str(w.message) for w in caught] == [  # torch 2.13's text
        "Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
        "behavior.\nConsider using tensor.detach() first."]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(c) == 2.5  # once per process, as torch's TORCH_WARN_ONCE
        assert int(c) == 2 and c.item() == 2.5  # neither warns in torch
        monkeypatch.setattr(module, "_float_warned", False)
        assert float(c.detach()) == 2.5
        with gradviz.no_grad():  # torch warns only with grad mode on
            assert float(c) == 2.5
    with pytest.warns(UserWarning):  # ... and the warning is still to come
        float(c)


# (expression with ``m`` the library, its value in torch 2.13)
LAYOUT_CASES = [
    ("m.arange(12.0).reshape(3, 4).stride()", (4, 1)),
    ("m.arange(12.0).reshape(3, 4).stride(-1)", 1),
    ("m.arange(12.0).reshape(3, 4).t().stride()", (1, 4)),
    ("m.arange(12.0).reshape(3, 4).expand(2, 3, 4).stride()", (0, 4, 1)),
    ("m.arange(12.0).reshape(3, 4)[:, ::2].stride()", (4, 2)),
    ("m.tensor(3.0).stride()", ()),
    ("m.arange(12.0).reshape(3, 4)[1:, 1:].storage_offset()", 5),
    ("m.arange(12.0).reshape(3, 4)[2].storage_offset()", 8),
    ("m.arange(12.0).reshape(3, 4).storage_offset()", 0),
    ("(m.arange(12.0).nbytes, m.arange(12.0).itemsize, m.arange(12.0).element_size())",
     (48, 4, 4)),
    ("(m.float64.itemsize, m.bool.itemsize, m.int32.itemsize)", (8, 1, 4)),
    ("m.arange(12.0).reshape(3, 4)[range(3), [0, 1, 2]].tolist()", [0.0, 5.0, 10.0]),
    ("m.arange(12.0).reshape(3, 4)[:, range(1, 3)].tolist()", [[1.0, 2.0], [5.0, 6.0],
                                                              [9.0, 10.0]]),
    ("m.arange(12.0).reshape(3, 4)[range(0)].shape", (0, 4)),
    ("(m.numel(m.ones(2, 3)), m.ones(2, 3).ndimension(), m.empty_like(m.ones(2, 3)).shape)",
     (6, 2, (2, 3))),
    ("(m.is_floating_point(m.ones(1)), m.is_floating_point(m.arange(2)))", (True, False)),
    ("(m.is_nonzero(m.tensor([1.0])), m.tensor([0]).is_nonzero())", (True, False)),
]


# (expression, torch 2.13's error type and text)
ERROR_CASES = [
    ("m.is_nonzero(m.tensor([1.0, 2.0]))",
     "RuntimeError: Boolean value of Tensor with more than one value is ambiguous"),
    ("bool(m.tensor([]))", "RuntimeError: Boolean value of Tensor with no values is ambiguous"),
    ("m.numel([1, 2])", "TypeError: numel(): argument 'input' (position 1) must be Tensor, not "
                        "list"),
    ("m.is_floating_point(3.0)", "TypeError: is_floating_point(): argument 'input' (position 1) "
                                 "must be Tensor, not float"),
]


def error_of(src: str, m: object) -> str:
    try:
        eval(src, {"m": m})  # noqa: S307 - sources above
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return f"{type(e).__name__}: {e}"
    return "no error"


@pytest.mark.parametrize(("src", "expected"), ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_as_torch(src: str, expected: str) -> None:
    assert error_of(src, gradviz) == expected


@pytest.mark.parametrize(("src", "expected"), LAYOUT_CASES, ids=[c[0] for c in LAYOUT_CASES])
def test_memory_layout_and_range_indices_as_torch(src: str, expected: object) -> None:
    assert eval(src, {"m": gradviz}) == expected  # noqa: S307 - sources above


def test_a_view_shares_its_bases_memory_and_stride_checks_the_dimension() -> None:
    x = gradviz.arange(12.0).reshape(3, 4)
    v = x[1:, 1:]
    assert v.data_ptr() == x.data_ptr() + 5 * x.element_size()
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of "
                                         r"\[-2, 1\], but got 2\)$"):
        x.stride(2)
    y = x.clone()
    y[range(2)] = 0  # a range as an index also writes
    assert y[:2].sum().item() == 0 and y[2].tolist() == [8.0, 9.0, 10.0, 11.0]
