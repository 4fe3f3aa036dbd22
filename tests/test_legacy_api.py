"""Names that PyTorch's tutorials and docs use outside the op table: ``is_inference``, layouts,
``set_warn_always``, the ``functional`` module, ``nn.DataParallel``, the ``autograd.gradcheck``
module. Each check takes the library (``gradviz`` here, ``torch`` in
tests/parity/test_legacy_api_parity.py) and asserts what torch 2.13 does."""

from __future__ import annotations

import importlib
import warnings
from types import ModuleType

import pytest

import gradviz


def check_is_inference(lib: ModuleType) -> None:
    with lib.inference_mode():
        made = lib.ones(2)
    assert lib.is_inference(made) is True
    assert lib.is_inference(lib.ones(2)) is False
    with pytest.raises(TypeError, match=r"^is_inference\(\): argument 'input' \(position 1\) "
                                        r"must be Tensor, not int$"):
        lib.is_inference(1)


def check_layout(lib: ModuleType) -> None:
    x = lib.ones(2, 3)
    assert x.layout is lib.strided
    assert x.t().layout is lib.strided  # a view too
    assert isinstance(lib.strided, lib.layout)
    assert repr(lib.strided) == f"{lib.__name__}.strided"
    with pytest.raises(TypeError, match="cannot create"):
        lib.layout()


def check_warn_always(lib: ModuleType) -> None:
    x = lib.ones((), requires_grad=True)
    assert lib.is_warn_always_enabled() is False
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        float(x)  # the once-per-process warning may have fired already
        float(x)
        before = len(seen)
        lib.set_warn_always(True)
        try:
            assert lib.is_warn_always_enabled() is True
            float(x)
            float(x)
        finally:
            lib.set_warn_always(False)
    assert before <= 1
    assert len(seen) == before + 2
    assert "Converting a tensor with requires_grad=True to a scalar" in str(seen[-1].message)
    with pytest.raises(RuntimeError, match="^setWarnOnlyOnce expects a bool, but got int$"):
        lib.set_warn_always(1)
    with pytest.raises(TypeError, match=r"^set_warn_always\(\) got some positional-only "
                                        "arguments passed as keyword arguments: 'b'$"):
        lib.set_warn_always(b=True)


def check_functional_module(lib: ModuleType) -> None:
    names = ("atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "cartesian_prod", "cdist",
             "einsum", "meshgrid", "norm", "split", "tensordot", "unique", "unique_consecutive")
    for name in names:
        assert getattr(lib.functional, name) is getattr(lib, name), name
    a = lib.ones(2, 3, requires_grad=True)
    out = lib.functional.einsum("ij->j", a)
    assert out.grad_fn.name() == "SumBackward1"
    assert [p.shape[1] for p in lib.functional.split(a, [1, 2], dim=1)] == [1, 2]


def check_data_parallel(lib: ModuleType) -> None:
    lib.manual_seed(0)
    inner = lib.nn.Linear(2, 3)
    net = lib.nn.DataParallel(inner, device_ids=[0])
    assert net.module is inner
    assert net.device_ids == []
    assert lib.nn.parallel.DataParallel is lib.nn.DataParallel
    assert list(net.state_dict()) == ["module.weight", "module.bias"]
    assert repr(net).splitlines() == [
        "DataParallel(", "  (module): Linear(in_features=2, out_features=3, bias=True)", ")"]
    x = lib.ones(4, 2)
    out = net(input=x)
    assert out.grad_fn.name() == "AddmmBackward0"
    assert lib.equal(out, inner(x))
    out.sum().backward()
    assert lib.equal(inner.weight.grad, lib.full((3, 2), 4.0))
    net.eval()
    assert inner.training is False


def check_gradcheck_module(lib: ModuleType) -> None:
    x = lib.tensor([0.5, 2.0], dtype=lib.float64, requires_grad=True)
    assert lib.autograd.gradcheck(lib.sin, (x,)) is True
    module = importlib.import_module(f"{lib.__name__}.autograd.gradcheck")
    assert set(module.__all__) >= {"gradcheck", "gradgradcheck", "GradcheckError"}
    assert module.gradcheck(lib.sin, (x,)) is True
    assert module.gradgradcheck(lib.sin, (x,)) is True
    assert issubclass(module.GradcheckError, RuntimeError)
    # a traceback names it where torch's code imports it from
    assert module.GradcheckError.__module__ == f"{lib.__name__}.autograd.gradcheck"
    assert lib.autograd.gradcheck(lib.sin, (x,)) is True  # still callable after the import

    class Twice(lib.autograd.Function):  # a hand-written derivative that is wrong
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    with pytest.raises(module.GradcheckError, match="Jacobian mismatch"):
        module.gradcheck(Twice.apply, (x,))


def check_module_inplace_functions(lib: ModuleType) -> None:
    x = lib.tensor([0.25, 0.5], requires_grad=True)
    y = x * 1
    assert lib.sin_(y) is y
    assert y.grad_fn.name() == "SinBackward0"
    assert lib.neg_(y) is y and lib.tanh_(y) is y  # tanh_ saves its result: nothing after it
    assert (y.grad_fn.name(), y._version) == ("TanhBackward0", 3)
    y.sum().backward()
    v = lib.tensor([0.25, 0.5])
    assert lib.allclose(x.grad, (1 - (-v.sin()).tanh() ** 2) * -v.cos())
    z = lib.tensor([0.25, 0.5])
    assert lib.xlogy_(z, 2.0) is z and lib.fill_(z, 3) is z and lib.zero_(z) is z
    assert z.tolist() == [0.0, 0.0]
    for name in ("sqrt_", "tanh_", "floor_", "log_", "neg_", "reciprocal_", "nan_to_num_",
                 "detach_", "clamp_", "clip_"):
        assert callable(getattr(lib, name)), name
    with pytest.raises(TypeError, match=r"^sin_\(\): argument 'input' \(position 1\) must be "
                                        r"Tensor, not float$"):
        lib.sin_(1.0)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        lib.exp_(x)


def check_inplace_view_methods(lib: ModuleType) -> None:
    x = lib.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], requires_grad=True)
    for call in ("unsqueeze_(0)", "squeeze_()", "transpose_(0, 1)", "t_()"):
        with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used"
                                               " in an in-place operation.$"):
            eval(f"x.{call}")  # noqa: S307
    y = x * 1
    assert y.unsqueeze_(-1) is y
    assert (tuple(y.shape), y._version, y.grad_fn.name()) == ((2, 3, 1), 1, "UnsqueezeBackward1")
    assert y.grad_fn._saved_dim == 2**64 - 1  # -1, as torch shows it
    assert y.grad_fn.next_functions[0][0].name() == "MulBackward0"
    y.squeeze_(2)
    assert (tuple(y.shape), y.grad_fn.name(), y.grad_fn._saved_dim) == ((2, 3),
                                                                        "SqueezeBackward4", 2)
    y.transpose_(0, 1)
    assert (tuple(y.shape), y.grad_fn.name()) == ((3, 2), "TransposeBackward1")
    assert (y.grad_fn._saved_dim0, y.grad_fn._saved_dim1) == (0, 1)
    y.t_()
    assert (tuple(y.shape), y.grad_fn.name(), y._version) == ((2, 3), "TBackward1", 4)
    y.unsqueeze_(1).squeeze_()
    assert (tuple(y.shape), y.grad_fn.name()) == ((2, 3), "SqueezeBackward3")
    assert y.grad_fn._saved_self_sym_sizes == (2, 1, 3)
    (y * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
    assert x.swapaxes_ is not None and (lib.ones(2, 3).swapaxes_(0, 1).shape) == (3, 2)
    with pytest.raises(RuntimeError, match=r"^t_\(\) expects a tensor with <= 2 dimensions, but "
                                           r"self is 3D$"):
        lib.ones(2, 3, 4).t_()
    with pytest.raises(IndexError, match="Dimension out of range"):
        lib.ones(2, 3).unsqueeze_(3)
    with lib.no_grad():  # a leaf may change shape with grad mode off
        x.unsqueeze_(0)
    assert (tuple(x.shape), x.is_leaf, x.requires_grad) == ((1, 2, 3), True, True)
    # a view keeps its base and shares memory; the base keeps its own grad_fn
    h = lib.ones(2, 3, requires_grad=True) * 1
    v = h[0]
    v.unsqueeze_(0)
    assert (v.grad_fn.name(), h.grad_fn.name(), v._base is h, tuple(v.shape)) == (
        "UnsqueezeBackward1", "MulBackward0", True, (1, 3))
    with lib.no_grad():
        h[0, 1] = 7.0
    assert v[0, 1].item() == 7.0
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        lib.ones(2, 3, requires_grad=True)[0].unsqueeze_(0)


def check_inplace_view_gradients(lib: ModuleType) -> None:
    x = lib.tensor([[0.5, 1.0, 2.0], [3.0, 4.0, 5.0]], dtype=lib.float64, requires_grad=True)
    calls = [lambda t: (t * 1).unsqueeze_(1), lambda t: (t * 1).unsqueeze_(0).squeeze_(),
             lambda t: (t * 1).transpose_(1, 0), lambda t: (t * 1).t_(),
             lambda t: (t[:1] * 1).squeeze_(0) * 2]
    for call in calls:
        assert lib.autograd.gradcheck(call, (x,))
        assert lib.autograd.gradgradcheck(lambda t, call=call: call(t) ** 2, (x,))


def check_split_with_sizes(lib: ModuleType) -> None:
    x = lib.tensor([[0.5, 1.0, 2.0], [3.0, 4.0, 5.0]], dtype=lib.float64, requires_grad=True)
    parts = lib.split_with_sizes(x, [1, 2], dim=-1)
    assert type(parts) is tuple and [tuple(p.shape) for p in parts] == [(2, 1), (2, 2)]
    node = parts[1].grad_fn
    assert node.name() == "SplitWithSizesBackward0" and node is parts[0].grad_fn
    assert (node._saved_split_sizes, node._saved_dim) == ((1, 2), 2**64 - 1)
    assert parts[1]._base is x and parts[1].output_nr == 1
    method = x.split_with_sizes(split_sizes=(2,), dim=0)
    assert method[0].grad_fn.name() == "SplitWithSizesBackward0"
    assert lib.split(x, [1, 2], 1)[0].grad_fn.name() == "SplitWithSizesBackward0"
    assert lib.autograd.gradcheck(lambda t: lib.split_with_sizes(t, [2, 1], 1), (x,))
    with pytest.raises(RuntimeError, match=r"^split_with_sizes expects split_sizes to sum exactly "
                       r"to 3 \(input tensor's size at dimension -1\), but got split_sizes="
                       r"\[1, 1\]$"):
        x.split_with_sizes([1, 1], -1)
    with pytest.raises(RuntimeError, match="^split_with_sizes expects split_sizes have only "
                                           r"non-negative entries, but got split_sizes=\[3, -1\]$"):
        lib.split_with_sizes(x, [3, -1], 1)
    with pytest.raises(TypeError, match=r"^split_with_sizes\(\): argument 'split_sizes' "
                                        r"\(position 2\) must be tuple of ints, not int$"):
        lib.split_with_sizes(x, 2)
    with pytest.raises(TypeError, match=r"^split_with_sizes\(\): argument 'split_sizes' "
                                        r"\(position 1\) must be tuple of ints, not int$"):
        x.split_with_sizes(2)  # the method counts its arguments without the tensor
    with pytest.raises(RuntimeError, match="^split expects at least a 1-dimensional tensor$"):
        lib.split_with_sizes(lib.tensor(1.0), [1])


def check_isin(lib: ModuleType) -> None:
    x = lib.tensor([1, 2, 3])
    assert lib.isin(x, lib.tensor([2, 5])).tolist() == [False, True, False]
    assert lib.isin(x, 2, invert=True).tolist() == [True, False, True]
    assert lib.isin(x, lib.tensor([2.5, 3.0])).tolist() == [False, False, True]
    assert lib.isin(x, x, assume_unique=True).tolist() == [True, True, True]
    assert lib.isin(x, lib.tensor([], dtype=lib.int64)).tolist() == [False, False, False]
    one = lib.isin(2.5, lib.tensor([2.5]))
    assert (one.dtype, one.ndim, one.item()) == (lib.bool, 0, True)
    grid = lib.isin(lib.tensor([[1.0, 2.0], [3.0, 4.0]]), lib.tensor([[4.0]]))
    assert grid.tolist() == [[False, False], [False, True]]
    assert lib.isin(lib.tensor([float("nan")]), lib.tensor([float("nan")])).tolist() == [False]
    w = lib.ones(2, requires_grad=True)
    assert lib.isin(w, w).requires_grad is False
    assert not hasattr(lib.Tensor, "isin")  # a function only, as in torch
    with pytest.raises(TypeError, match=r"^isin\(\) received an invalid combination of "
                                        r"arguments - got \(int, int\), but expected one of:"):
        lib.isin(1, 2)
    with pytest.raises(RuntimeError, match="^Unsupported input type encountered for isin\\(\\): "
                                           "Bool$"):
        lib.isin(x, lib.tensor([True]))


def check_size_keyword(lib: ModuleType) -> None:
    assert tuple(lib.zeros(size=(2, 3)).shape) == (2, 3)
    assert lib.ones(size=[2], dtype=lib.int64).tolist() == [1, 1]
    assert tuple(lib.empty(size=lib.Size([0, 3])).shape) == (0, 3)
    assert tuple(lib.rand(size=(4,)).shape) == (4,)
    r = lib.randn(size=(2, 2), requires_grad=True)
    assert tuple(r.shape) == (2, 2) and r.requires_grad
    assert lib.zeros(size=()).ndim == 0
    lib.manual_seed(3)
    a = lib.randn(size=(3,))
    lib.manual_seed(3)
    assert lib.equal(a, lib.randn(3))
    with pytest.raises(TypeError, match="^zeros\\(\\) got multiple values for argument 'size'$"):
        lib.zeros(2, size=(3,))
    with pytest.raises(TypeError, match=r"^randn\(\) received an invalid combination of "
                                        r"arguments - got \(int, size=tuple\)"):
        lib.randn(2, size=(3,))
    with pytest.raises(TypeError, match=r"^ones\(\): argument 'size' must be tuple of ints, "
                                        "not int$"):
        lib.ones(size=2)
    x = lib.ones(2, dtype=lib.float64)
    assert tuple(x.new_zeros(size=(2, 3)).shape) == (2, 3)
    assert x.new_ones(size=[3]).tolist() == [1.0] * 3 and x.new_ones(size=[3]).dtype is lib.float64
    assert tuple(x.new_empty(size=(1, 2)).shape) == (1, 2)
    assert tuple(lib.randint(high=3, size=(4,)).shape) == (4,)
    assert lib.randint(high=1, size=(3,)).tolist() == [0, 0, 0]
    with pytest.raises(TypeError, match=r"^new_zeros\(\) got multiple values for argument "
                                        r"'size'$"):
        x.new_zeros(2, size=(3,))


def check_factory_layout(lib: ModuleType) -> None:
    # layout=strided (or None) is accepted wherever torch takes it; a non-layout is a type error
    # in the form each factory's overloads give it.
    x = lib.ones(2)
    made = {
        "zeros": lambda layout: lib.zeros(2, layout=layout),
        "ones": lambda layout: lib.ones(size=(2,), layout=layout),
        "empty": lambda layout: lib.empty(2, layout=layout),
        "full": lambda layout: lib.full((2,), 1.0, layout=layout),
        "new_zeros": lambda layout: x.new_zeros(2, layout=layout),
        "new_ones": lambda layout: x.new_ones(2, layout=layout),
        "new_empty": lambda layout: x.new_empty(2, layout=layout),
        "new_full": lambda layout: x.new_full((2,), 1.0, layout=layout),
    }
    overloaded = {
        "rand": (lambda layout: lib.rand(2, layout=layout), "int"),
        "randn": (lambda layout: lib.randn(2, layout=layout), "int"),
        "randint": (lambda layout: lib.randint(3, (2,), layout=layout), "int, tuple"),
        "randperm": (lambda layout: lib.randperm(2, layout=layout), "int"),
        "arange": (lambda layout: lib.arange(2, layout=layout), "int"),
        "linspace": (lambda layout: lib.linspace(0, 1, 2, layout=layout), "int, int, int"),
        "eye": (lambda layout: lib.eye(2, layout=layout), "int"),
        "rand_like": (lambda layout: lib.rand_like(x, layout=layout), "Tensor"),
        "randn_like": (lambda layout: lib.randn_like(x, layout=layout), "Tensor"),
    }
    for name, (call, _) in {**{k: (v, "") for k, v in made.items()}, **overloaded}.items():
        for layout in (lib.strided, None):
            out = call(layout)
            assert out.layout is lib.strided and out.shape[0] == 2, name
    for name, call in made.items():
        with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'layout' must be "
                                            rf"{lib.__name__}\.layout, not int$"):
            call(1)
    for name, (call, got) in overloaded.items():
        with pytest.raises(TypeError, match=rf"^{name}\(\) received an invalid combination of "
                                            rf"arguments - got \({got}, layout=int\), but "
                                            "expected one of:\n"):
            call(1)


def check_factory_without_a_size(lib: ModuleType) -> None:
    # torch.zeros() is no 0-d tensor (that is zeros(())): the size is required.
    for name in ("zeros", "ones", "empty"):
        with pytest.raises(TypeError, match=rf'^{name}\(\) missing 1 required positional '
                                            r'arguments: "size"$'):
            getattr(lib, name)()
        assert getattr(lib, name)(()).shape == ()
    for name in ("rand", "randn"):
        with pytest.raises(TypeError, match=rf"^{name}\(\) received an invalid combination of "
                                            r"arguments - got \(\), but expected one of:\n"):
            getattr(lib, name)()


def check_typed_constructors(lib: ModuleType) -> None:
    expected = {"FloatTensor": lib.float32, "DoubleTensor": lib.float64, "HalfTensor": lib.float16,
                "LongTensor": lib.int64, "IntTensor": lib.int32, "ShortTensor": lib.int16,
                "CharTensor": lib.int8, "ByteTensor": lib.uint8, "BoolTensor": lib.bool}
    for name, dtype in expected.items():
        cls = getattr(lib, name)
        assert type(cls).__name__ == "tensortype" and cls.__name__ == name
        assert cls.dtype is dtype and not issubclass(cls, lib.Tensor)
        made = cls([1, 0])
        assert type(made) is lib.Tensor and made.dtype is dtype and not made.requires_grad
        assert isinstance(made, cls) and isinstance(made, lib.Tensor)
        assert tuple(cls(2, 3).shape) == (2, 3) and tuple(cls().shape) == (0,)
    assert repr(lib.LongTensor) == f"<class '{lib.__name__}.LongTensor'>"
    assert lib.LongTensor([1, 2]).tolist() == [1, 2]
    assert lib.FloatTensor((2, 3)).tolist() == [2.0, 3.0]  # a tuple is data, not a size
    assert tuple(lib.FloatTensor(lib.Size([2, 1])).shape) == (2, 1)
    assert lib.BoolTensor([1, 0]).tolist() == [True, False]
    assert not isinstance(lib.ones(2, dtype=lib.int64), lib.FloatTensor)
    assert isinstance(lib.nn.Parameter(lib.ones(1)), lib.FloatTensor)
    x = lib.ones(2)
    assert lib.FloatTensor(x) is not x and lib.FloatTensor(x).data_ptr() == x.data_ptr()
    assert x.type(lib.DoubleTensor).dtype is lib.float64
    assert x.type(lib.LongTensor).tolist() == [1, 1]
    assert x.type() == f"{lib.__name__}.FloatTensor"
    with pytest.raises(TypeError, match=r"^new\(\) received an invalid combination of arguments "
                                        r"- got \(list, requires_grad=bool\)"):
        lib.FloatTensor([1.0], requires_grad=True)
    with pytest.raises(TypeError, match=r"^expected TensorOptions\(dtype=long int, device=cpu, "
                                        r"layout=Strided, .*\(got TensorOptions\(dtype=float, "):
        lib.LongTensor(x)
    with pytest.raises(TypeError, match=r"^new\(\): data must be a sequence \(got float\)$"):
        lib.FloatTensor(2.5)
    with pytest.raises(TypeError, match=r"^new\(\): invalid data type 'str'$"):
        lib.FloatTensor("a")
    with pytest.raises(RuntimeError, match=r"^Trying to create tensor with negative dimension -1: "
                                           r"\[-1\]$"):
        lib.FloatTensor(-1)


def check_legacy_tensor_constructor(lib: ModuleType) -> None:
    assert tuple(lib.Tensor(2, 3).shape) == (2, 3) and lib.Tensor(2, 3).dtype is lib.float32
    assert tuple(lib.Tensor(lib.Size([2])).shape) == (2,) and tuple(lib.Tensor(4).shape) == (4,)
    assert lib.Tensor([1, 2]).tolist() == [1.0, 2.0] and lib.Tensor((2, 3)).tolist() == [2.0, 3.0]
    assert tuple(lib.Tensor().shape) == (0,) and not lib.Tensor(2).requires_grad
    assert tuple(lib.Tensor(2, device="cpu").shape) == (2,)
    with pytest.raises(TypeError, match=r"^new\(\): data must be a sequence \(got float\)$"):
        lib.Tensor(2.5)
    with pytest.raises(TypeError, match=r"^new\(\): invalid data type 'str'$"):
        lib.Tensor("a")
    with pytest.raises(RuntimeError, match=r"^Trying to create tensor with negative dimension -1: "
                                           r"\[-1\]$"):
        lib.Tensor(-1)
    with pytest.raises(TypeError, match=r"^new\(\) received an invalid combination of arguments "
                                        r"- got \(list, requires_grad=bool\)"):
        lib.Tensor([1.0], requires_grad=True)
    with pytest.raises(TypeError, match=r"^new\(\): argument 'size' failed to unpack the object "
                                        r"at pos 2 with error \"type must be tuple of ints,but "
                                        r"got list\"$"):
        lib.Tensor(2, [3])


def check_tensor_new(lib: ModuleType) -> None:
    x = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
    assert x.new(2).dtype is lib.float64 and not x.new(2).requires_grad
    assert x.new([1, 2]).tolist() == [1.0, 2.0]
    assert tuple(x.new().shape) == (0,) and tuple(x.new(lib.Size([1, 2])).shape) == (1, 2)
    alias = x.new(x)  # an alias: shares the data and the graph
    assert alias is not x and alias.data_ptr() == x.data_ptr()
    assert alias.requires_grad and alias.grad_fn.name() == "AliasBackward0"
    (alias * 2).sum().backward()
    assert x.grad.tolist() == [[2.0] * 3] * 2
    assert lib.ones(2, dtype=lib.int64).new([1.7]).tolist() == [1]
    with pytest.raises(TypeError, match=r"^new\(\): data must be a sequence \(got bool\)$"):
        x.new(True)
    with pytest.raises(TypeError, match=r"^new\(\): argument 'size' failed to unpack the object "
                                        r"at pos 2 with error"):
        x.new(2, [3])


def check_nanmedian(lib: ModuleType) -> None:
    nan = float("nan")
    x = lib.tensor([[1.0, nan, 3.0, 2.0], [nan] * 4, [4.0, 1.0, 1.0, 2.0]], requires_grad=True)
    whole = lib.nanmedian(x)
    assert whole.item() == 2.0 and whole.grad_fn.name() == "NanmedianBackward0"
    whole.backward()  # ties share the gradient
    assert x.grad.tolist() == [[0.0, 0.0, 0.0, 0.5], [0.0] * 4, [0.0, 0.0, 0.0, 0.5]]
    x.grad = None
    values, indices = lib.nanmedian(x, 1)
    assert values.grad_fn.name() == "NanmedianBackward1"
    assert (values.grad_fn._saved_dim, values.grad_fn._saved_keepdim) == (1, False)
    assert values[[0, 2]].tolist() == [2.0, 1.0] and values[1].isnan().item()
    assert indices[[0, 2]].tolist() == [3, 2]  # torch's index for an all-NaN row is arbitrary
    values.nan_to_num().sum().backward()
    assert x.grad[[0, 2]].tolist() == [[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0]]
    kept = x.nanmedian(dim=0, keepdim=True)
    assert type(kept).__name__ == "nanmedian" and kept.values.tolist() == [[1.0, 1.0, 1.0, 2.0]]
    assert kept.indices.tolist() == [[0, 2, 2, 0]]
    assert lib.nanmedian(lib.tensor([1, 5, 2, 4])).item() == 2
    assert lib.nanmedian(lib.tensor([])).isnan().item()
    assert lib.nanmedian(lib.tensor([[2.0, nan, 1.0, nan, 1.0, 2.0]]), -1).indices.tolist() == [4]
    y = lib.tensor([nan, nan], requires_grad=True)
    lib.nanmedian(y).backward()
    assert y.grad.tolist() == [0.5, 0.5]
    with pytest.raises(NotImplementedError, match="\"median_cpu\" not implemented for 'Bool'"):
        lib.nanmedian(lib.tensor([True]))
    with pytest.raises(IndexError, match="^median\\(\\): Expected reduction dim 1 to have "
                                         "non-zero size.$"):
        lib.nanmedian(lib.ones(2, 0), 1)
    w = lib.tensor([[0.5, nan, 3.0, 2.0], [1.5, 4.0, nan, -1.0]], dtype=lib.float64,
                   requires_grad=True)
    assert lib.autograd.gradcheck(lambda t: lib.nanmedian(t, 1).values, (w,))
    assert lib.autograd.gradcheck(lambda t: lib.nanmedian(t, 0, keepdim=True).values, (w,))
    assert lib.autograd.gradcheck(lib.nanmedian, (w,))


def check_unique_consecutive(lib: ModuleType) -> None:
    x = lib.tensor([1.0, 1.0, 2.0, 2.0, 3.0, 1.0, 1.0, 2.0], requires_grad=True)
    values = lib.unique_consecutive(x)
    assert values.tolist() == [1.0, 2.0, 3.0, 1.0, 2.0]
    assert values.grad_fn.name() == "UniqueConsecutiveBackward0"
    with pytest.raises(NotImplementedError, match="^the derivative for 'unique_consecutive' is "
                                                  "not implemented.$"):
        values.sum().backward()
    values, inverse, counts = x.unique_consecutive(return_inverse=True, return_counts=True)
    assert inverse.tolist() == [0, 0, 1, 1, 2, 3, 3, 4] and counts.tolist() == [2, 2, 1, 2, 1]
    assert [t.tolist() for t in x.unique_consecutive(return_counts=True)] == [
        [1.0, 2.0, 3.0, 1.0, 2.0], [2, 2, 1, 2, 1]]
    m = lib.tensor([[1, 1], [1, 1], [2, 3], [1, 1]])
    rows, inverse, counts = lib.unique_consecutive(m, dim=0, return_inverse=True,
                                                   return_counts=True)
    assert rows.tolist() == [[1, 1], [2, 3], [1, 1]]
    assert (inverse.tolist(), counts.tolist()) == ([0, 0, 1, 2], [2, 1, 1])
    columns, counts = lib.unique_consecutive(m, dim=1, return_counts=True)
    assert (columns.tolist(), counts.tolist()) == (m.tolist(), [1, 1])
    columns, counts = lib.unique_consecutive(lib.ones(3, 2), dim=-1, return_counts=True)
    assert (columns.tolist(), counts.tolist()) == ([[1.0], [1.0], [1.0]], [2])
    flat, inverse = lib.unique_consecutive(m, return_inverse=True)
    assert flat.tolist() == [1, 2, 3, 1] and inverse.tolist() == [[0, 0], [0, 0], [1, 2], [3, 3]]
    nan = float("nan")
    assert len(lib.unique_consecutive(lib.tensor([nan, nan, 1.0]))) == 3  # NaN equals nothing
    assert lib.unique_consecutive(lib.tensor([True, True, False])).tolist() == [True, False]
    one, inverse, counts = lib.unique_consecutive(lib.tensor(5.0), return_inverse=True,
                                                  return_counts=True)
    assert (one.tolist(), inverse.ndim, inverse.item(), counts.tolist()) == ([5.0], 0, 0, [1])
    empty = lib.unique_consecutive(lib.ones(0, 2), dim=0, return_inverse=True, return_counts=True)
    assert [tuple(t.shape) for t in empty] == [(0, 2), (0,), (0,)]
    assert empty[1].dtype is lib.int64
    with pytest.raises(RuntimeError, match="^There are 0 sized dimensions, and they aren't "
                                           "selected, so unique cannot be applied$"):
        lib.unique_consecutive(lib.ones(2, 0), dim=0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        lib.unique_consecutive(m, dim=2)


def check_out_arguments(lib: ModuleType) -> None:
    a, b = lib.tensor([1.0, 2.0]), lib.tensor([4.0, 8.0])
    for fn, expected in ((lib.add, [5.0, 10.0]), (lib.sub, [-3.0, -6.0]), (lib.mul, [4.0, 16.0]),
                         (lib.div, [0.25, 0.25])):
        out = lib.empty(2)
        assert fn(a, b, out=out) is out and out.tolist() == expected and out._version == 1
    out = lib.empty(2)
    assert lib.sub(a, b, alpha=2, out=out).tolist() == [-7.0, -14.0]
    m = lib.empty(2, 2)
    assert lib.matmul(lib.ones(2, 3), lib.ones(3, 2), out=m) is m and m.tolist() == [[3.0] * 2] * 2
    base = lib.zeros(4)
    lib.add(a, b, out=base[:2])  # a view: the base sees the write
    assert base.tolist() == [5.0, 10.0, 0.0, 0.0]
    wide = lib.empty(3)
    with pytest.warns(UserWarning, match=r"^An output with one or more elements was resized since "
                                         r"it had shape \[3\], which does not match the required "
                                         r"output shape \[2\]"):
        lib.mul(a, b, out=wide)
    assert tuple(wide.shape) == (2,)
    empty = lib.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no element lost: resized silently
        lib.mul(a, b, out=empty)
    assert empty.tolist() == [4.0, 16.0]
    wider = lib.empty(2, dtype=lib.float64)
    assert lib.add(a, b, out=wider).dtype is lib.float64
    assert lib.add(lib.tensor([1, 2]), 1, out=lib.empty(2)).tolist() == [2.0, 3.0]
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output "
                                           "type Long$"):
        lib.add(a, b, out=lib.empty(2, dtype=lib.int64))
    w = lib.ones(2, requires_grad=True)
    message = ("^add\\(\\): functions with out=... arguments don't support automatic "
               "differentiation, but one of the arguments requires grad.$")
    with pytest.raises(RuntimeError, match=message):
        lib.add(w, b, out=lib.empty(2))
    with pytest.raises(RuntimeError, match=message):
        lib.add(a, b, out=lib.empty(2, requires_grad=True))
    with lib.no_grad():
        held = lib.empty(2, requires_grad=True)
        assert lib.add(w, b, out=held) is held
    assert held.requires_grad and held.grad_fn is None
    with pytest.raises(TypeError, match="^add\\(\\): argument 'out' must be Tensor, not list$"):
        lib.add(a, 1, out=[1])


def check_factory_out_arguments(lib: ModuleType) -> None:
    out = lib.empty(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # factories resize without a word
        assert lib.zeros(2, 2, out=out) is out
    assert out.tolist() == [[0.0, 0.0], [0.0, 0.0]] and out._version == 1
    longs = lib.empty(4, dtype=lib.int64)
    assert lib.ones(size=(2,), out=longs).tolist() == [1, 1] and longs.dtype is lib.int64
    assert lib.zeros(2, out=longs, dtype=lib.int64) is longs
    lib.manual_seed(0)
    drawn = lib.rand(2, 2, out=lib.empty(2, 2))
    lib.manual_seed(0)
    assert lib.equal(drawn, lib.rand(2, 2))
    lib.manual_seed(1)
    drawn = lib.randn(3, out=lib.empty(3, dtype=lib.float64))
    lib.manual_seed(1)
    assert lib.equal(drawn, lib.randn(3, dtype=lib.float64))
    made = lib.zeros(2, out=lib.empty(2), requires_grad=True)
    assert made.requires_grad and made.is_leaf
    with pytest.raises(RuntimeError, match="^aten::zeros\\(\\): functions with out=... arguments "
                                           "don't support automatic differentiation"):
        lib.zeros(2, out=lib.empty(2, requires_grad=True))
    with pytest.raises(RuntimeError, match="^dtype Double does not match dtype of out parameter "
                                           "\\(Float\\)$"):
        lib.ones(2, out=lib.empty(2), dtype=lib.float64)
    with pytest.raises(NotImplementedError, match="^\"check_uniform_bounds\" not implemented for "
                                                  "'Long'$"):
        lib.rand(2, out=lib.empty(2, dtype=lib.int64))
    with pytest.raises(NotImplementedError, match="^\"normal_kernel_cpu\" not implemented for "
                                                  "'Bool'$"):
        lib.randn(2, out=lib.empty(2, dtype=lib.bool))
    with pytest.raises(NotImplementedError, match="^\"check_uniform_bounds\" not implemented for "
                                                  "'Long'$"):
        lib.rand(2, dtype=lib.int64)


def check_resize(lib: ModuleType) -> None:
    x = lib.arange(6.0)
    assert x.resize_(2, 3) is x and x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert x._version == 1
    x.resize_(2, 3)  # the same shape: nothing changes, not even the version
    assert x._version == 1
    x = lib.arange(6.0)
    whole = x[:]
    x.resize_((2,))
    assert x.tolist() == [0.0, 1.0] and x.data_ptr() == whole.data_ptr()
    x.resize_(lib.Size([6]))  # the memory is still there
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    x.resize_(3, 3)  # grown: the first six elements stay
    assert tuple(x.shape) == (3, 3) and x.flatten()[:6].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    t = lib.arange(6.0).reshape(2, 3).t()
    t.resize_(3, 2)  # same shape: the strides stay
    assert t.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    t.resize_(6)  # row-major over the memory
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    tail = lib.arange(4.0)[2:]
    tail.resize_(1)
    assert tail.tolist() == [2.0] and tail.storage_offset() == 2
    expanded = lib.arange(2.0).expand(3, 2)
    assert expanded.resize_(2).tolist() == [0.0, 1.0]
    assert lib.ones(2).resize_(()).ndim == 0
    a = lib.arange(4.0)
    assert lib.resize_as_(a, lib.ones(2, 2)) is a and a.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    b = lib.arange(4.0)
    assert b.resize_as_(lib.ones(2, dtype=lib.int64)).tolist() == [0.0, 1.0]
    assert b.dtype is lib.float32
    with pytest.raises(RuntimeError, match="^cannot resize variables that require grad$"):
        lib.ones(2, requires_grad=True).resize_(1)
    with pytest.raises(RuntimeError, match="^cannot resize variables that require grad$"):
        (lib.ones(2, requires_grad=True) * 1).resize_(3)
    with pytest.raises(RuntimeError, match="^numel: integer multiplication overflow$"):
        lib.ones(2).resize_(-1)
    with pytest.raises(TypeError, match="^resize_\\(\\): argument 'size' \\(position 1\\) must be "
                                        "tuple of ints, not float$"):
        lib.ones(2).resize_(2.5)
    with pytest.raises(TypeError, match="^resize_as_\\(\\): argument 'the_template' \\(position "
                                        "2\\) must be Tensor, not int$"):
        lib.resize_as_(lib.ones(2), 3)


# The param_group keys torch 2.13 writes in state_dict() after the constructor's own
# hyperparameters (those are checked in tests/test_optim*.py), in its order and with its defaults.
GROUP_TAILS = {
    "ASGD": {"foreach": None, "maximize": False, "differentiable": False, "capturable": False},
    "Adadelta": {"maximize": False, "capturable": False, "foreach": None,
                 "differentiable": False},
    "Adagrad": {"foreach": None, "maximize": False, "differentiable": False, "fused": None},
    "Adam": {"amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
             "differentiable": False, "fused": None, "decoupled_weight_decay": False},
    "AdamW": {"amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
              "differentiable": False, "fused": None, "decoupled_weight_decay": True},
    "Adamax": {"foreach": None, "maximize": False, "differentiable": False, "capturable": False},
    "NAdam": {"decoupled_weight_decay": False, "maximize": False, "foreach": None,
              "capturable": False, "differentiable": False},
    "RAdam": {"maximize": False, "foreach": None, "capturable": False,
              "decoupled_weight_decay": False, "differentiable": False},
    "RMSprop": {"centered": False, "weight_decay": 0, "capturable": False, "foreach": None,
                "maximize": False, "differentiable": False},
    "Rprop": {"foreach": None, "maximize": False, "differentiable": False, "capturable": False},
    "SGD": {"nesterov": False, "maximize": False, "foreach": None, "differentiable": False,
            "fused": None},
}
# What load_state_dict fills in for a group saved without them (SGD's fused is False there).
REFILLED = {
    "SGD": [("nesterov", False), ("maximize", False), ("foreach", None),
            ("differentiable", False), ("fused", False)],
    "Adam": [("amsgrad", False), ("maximize", False), ("foreach", None), ("capturable", False),
             ("differentiable", False), ("decoupled_weight_decay", False), ("fused", None)],
    "RMSprop": [("centered", False), ("foreach", None), ("maximize", False),
                ("differentiable", False), ("capturable", False)],
}


def check_optimizer_param_group_keys(lib: ModuleType) -> None:
    for name, tail in GROUP_TAILS.items():
        w = lib.ones(2, requires_grad=True)
        group = getattr(lib.optim, name)([w]).state_dict()["param_groups"][0]
        keys = [k for k in group if k != "params"]
        assert keys[-len(tail):] == list(tail), name
        assert {k: group[k] for k in tail} == tail, name
    w = lib.ones(2, requires_grad=True)
    group = lib.optim.SGD([w], lr=0.1, foreach=True, maximize=True).state_dict()["param_groups"]
    assert (group[0]["foreach"], group[0]["maximize"], group[0]["fused"]) == (True, True, None)
    for name, refilled in REFILLED.items():
        opt = getattr(lib.optim, name)([w])
        saved = opt.state_dict()
        for key, _ in refilled:
            del saved["param_groups"][0][key]
        fresh = getattr(lib.optim, name)([w], lr=0.5)
        fresh.load_state_dict(saved)
        group = fresh.param_groups[0]
        assert [(k, group[k]) for k in group if k in dict(refilled)] == refilled, name


CHECKS = [check_is_inference, check_layout, check_warn_always, check_functional_module,
          check_data_parallel, check_gradcheck_module, check_module_inplace_functions,
          check_inplace_view_methods, check_inplace_view_gradients, check_split_with_sizes,
          check_isin, check_size_keyword, check_factory_layout,
          check_factory_without_a_size, check_typed_constructors, check_tensor_new,
          check_legacy_tensor_constructor,
          check_optimizer_param_group_keys, check_nanmedian, check_unique_consecutive,
          check_out_arguments, check_factory_out_arguments, check_resize]


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__ for c in CHECKS])
def test_gradviz_does_what_torch_does(check) -> None:
    check(gradviz)
