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


def check_functional_module(lib: ModuleType) -> None:
    names = ("atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "cartesian_prod", "cdist",
             "einsum", "meshgrid", "norm", "split", "tensordot", "unique")
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


CHECKS = [check_is_inference, check_layout, check_warn_always, check_functional_module,
          check_data_parallel, check_gradcheck_module]


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__ for c in CHECKS])
def test_gradviz_does_what_torch_does(check) -> None:
    check(gradviz)
