"""Numeric edge cases as PyTorch 2.13 handles them (issue #33): det's gradient at a singular
matrix, the convolution parameters PyTorch refuses, 0x0 matrices and empty batches in
``linalg``, numbers given as root gradients, and ``gradviz.load``'s ``map_location``.

The expectations are torch's; tests/parity/test_numeric_edges_parity.py derives them again.
"""

from __future__ import annotations

import io
import math
import warnings
from typing import Any

import numpy as np
import pytest

import gradviz
from gradviz.autograd import gradcheck, gradgradcheck

# Singular matrices, and invertible ones beside them in a batch.
S3 = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]
N3 = [[2.0, 1.0, 0.0], [0.5, 3.0, 1.0], [1.0, 1.0, 1.0]]
S2 = [[1.0, 2.0], [2.0, 4.0]]
N2 = [[2.0, 1.0], [0.5, 3.0]]
Z2 = [[0.0, 0.0], [0.0, 0.0]]
D3 = [[2.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 0.0]]


def det_grad(m: Any, rows: list, dtype: str, create_graph: bool = False) -> Any:
    """The gradient of ``det(A).sum()`` (a plain backward, or one that records itself)."""
    A = m.tensor(rows, dtype=getattr(m, dtype), requires_grad=True)
    (g,) = m.autograd.grad(m.linalg.det(A).sum(), A, create_graph=create_graph)
    return g.detach()


def det_grad2(m: Any, rows: list) -> Any:
    """The gradient of ``(g * g).sum()``, g the recorded gradient of ``det(A).sum()``."""
    A = m.tensor(rows, dtype=m.float64, requires_grad=True)
    (g,) = m.autograd.grad(m.linalg.det(A).sum(), A, create_graph=True)
    return m.autograd.grad((g * g).sum(), A)[0]


def grad_of(m: Any, fn: Any, *shapes: tuple, create_graph: bool = False) -> Any:
    """The gradient of ``fn(*leaves).sum()`` for the first of zero-filled leaves of ``shapes``."""
    xs = [m.zeros(*s, requires_grad=True) for s in shapes]
    return m.autograd.grad(fn(*xs).sum(), xs[0], create_graph=create_graph)[0]


def backward_with(m: Any, gradient: Any) -> Any:
    x = m.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward(gradient=gradient)
    return x.grad


def grad_with(m: Any, grad_outputs: Any, **kwargs: Any) -> Any:
    x = m.tensor([1.0, 2.0], requires_grad=True)
    return m.autograd.grad((x * x).sum(), x, grad_outputs=grad_outputs, **kwargs)


def env(m: Any) -> dict[str, Any]:
    def bind(fn: Any) -> Any:
        return lambda *a, **k: fn(m, *a, **k)

    return {"m": m, "F": m.nn.functional, "np": np, "S3": S3, "N3": N3, "S2": S2, "N2": N2,
            "Z2": Z2, "D3": D3, "det_grad": bind(det_grad), "det_grad2": bind(det_grad2),
            "grad_of": bind(grad_of), "backward_with": bind(backward_with),
            "grad_with": bind(grad_with)}


def run(src: str, m: Any = gradviz) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(src, env(m))  # noqa: S307 - sources written in this file


nan = math.nan
_COF3 = [[-3.0, 6.0, -3.0], [6.0, -12.0, 6.0], [-3.0, 6.0, -3.0]]
_ZERO3 = [[0.0] * 3] * 3

# (source, dtype, shape, values) as torch 2.13 gives them
VALUES = [
    # det at a singular matrix: a plain backward gives zeros (det is exactly 0), one that records
    # itself the cofactors (from the SVD), batches mixing both kinds included
    ("det_grad(S3, 'float64')", "float64", [3, 3], _ZERO3),
    ("det_grad(S3, 'float32')", "float32", [3, 3], _ZERO3),
    ("det_grad(S3, 'float64', create_graph=True)", "float64", [3, 3], _COF3),
    ("det_grad(S3, 'float32', create_graph=True)", "float32", [3, 3], _COF3),
    ("det_grad(S2, 'float64', create_graph=True)", "float64", [2, 2],
     [[4.0, -2.0], [-2.0, 1.0]]),
    ("det_grad(D3, 'float64', create_graph=True)", "float64", [3, 3],
     [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 6.0]]),
    ("det_grad([S2, N2, Z2], 'float64')", "float64", [3, 2, 2],
     [[[0.0, 0.0], [0.0, 0.0]], [[3.0, -0.5], [-1.0, 2.0]], [[0.0, 0.0], [0.0, 0.0]]]),
    ("det_grad([S2, N2, Z2], 'float64', create_graph=True)", "float64", [3, 2, 2],
     [[[4.0, -2.0], [-2.0, 1.0]], [[3.0, -0.5], [-1.0, 2.0]], [[0.0, 0.0], [0.0, 0.0]]]),
    ("det_grad([S3, N3], 'float64', create_graph=True)", "float64", [2, 3, 3],
     [_COF3, [[2.0, 0.5, -2.5], [-1.0, 2.0, -1.0], [1.0, -2.0, 5.5]]]),
    ("det_grad([[0.0]], 'float64')", "float64", [1, 1], [[1.0]]),
    ("det_grad([[[0.0]], [[3.0]]], 'float32')", "float32", [2, 1, 1], [[[1.0]], [[1.0]]]),
    ("det_grad([[0.0]], 'float64', create_graph=True)", "float64", [1, 1], [[1.0]]),
    ("det_grad2([S2, N2])", "float64", [2, 2, 2],
     [[[2.0, 4.0], [4.0, 8.0]], [[4.0, 2.0], [1.0, 6.0]]]),
    ("det_grad2([S3, N3])", "float64", [2, 3, 3],
     [[[-414.0, -36.0, 342.0], [-108.0, 0.0, 108.0], [198.0, 36.0, -126.0]],
      [[43.0, -3.5, -14.0], [-17.0, 31.0, 7.0], [14.0, -2.5, 21.5]]]),
    ("det_grad2([Z2])", "float64", [1, 2, 2], [[[nan, nan], [nan, nan]]]),
    # 0x0 matrices and empty batches
    ("m.linalg.inv(m.zeros(0, 0))", "float32", [0, 0], []),
    ("m.linalg.inv(m.zeros(2, 0, 0))", "float32", [2, 0, 0], [[], []]),
    ("m.inverse(m.zeros(0, 0))", "float32", [0, 0], []),
    ("m.linalg.inv_ex(m.zeros(0, 0)).info", "int32", [], 0),
    ("m.linalg.inv_ex(m.zeros(3, 0, 0)).info", "int32", [3], [0, 0, 0]),
    ("grad_of(m.linalg.inv, (0, 0))", "float32", [0, 0], []),
    ("grad_of(m.linalg.inv, (2, 0, 0))", "float32", [2, 0, 0], [[], []]),
    ("grad_of(m.linalg.inv, (0, 0), create_graph=True)", "float32", [0, 0], []),
    ("m.linalg.det(m.zeros(0, 0))", "float32", [], 1.0),
    ("m.linalg.det(m.zeros(2, 0, 0))", "float32", [2], [1.0, 1.0]),
    ("grad_of(m.linalg.det, (0, 0))", "float32", [0, 0], []),
    ("grad_of(m.linalg.det, (0, 0), create_graph=True)", "float32", [0, 0], []),
    ("grad_of(m.linalg.det, (0, 3, 3), create_graph=True)", "float32", [0, 3, 3], []),
    ("m.linalg.slogdet(m.zeros(0, 0)).sign", "float32", [], 1.0),
    ("m.linalg.slogdet(m.zeros(0, 0)).logabsdet", "float32", [], 0.0),
    ("grad_of(lambda a: m.linalg.slogdet(a).logabsdet, (0, 0))", "float32", [0, 0], []),
    ("m.logdet(m.zeros(0, 0))", "float32", [], 0.0),
    ("m.linalg.solve(m.zeros(0, 0), m.zeros(0, 2))", "float32", [0, 2], []),
    ("m.linalg.solve(m.zeros(0, 0), m.zeros(0))", "float32", [0], []),
    ("m.linalg.solve_ex(m.zeros(0, 0), m.zeros(0, 2)).info", "int32", [], 0),
    ("grad_of(m.linalg.solve, (0, 0), (0, 2))", "float32", [0, 0], []),
    ("grad_of(lambda b, a: m.linalg.solve(a, b), (0, 2), (0, 0))", "float32", [0, 2], []),
    ("m.linalg.cholesky(m.zeros(0, 0))", "float32", [0, 0], []),
    ("m.linalg.cholesky(m.zeros(2, 0, 0), upper=True)", "float32", [2, 0, 0], [[], []]),
    ("m.linalg.cholesky_ex(m.zeros(0, 0)).info", "int32", [], 0),
    ("m.cholesky(m.zeros(0, 0))", "float32", [0, 0], []),
    ("grad_of(m.linalg.cholesky, (0, 0))", "float32", [0, 0], []),
    ("grad_of(m.cholesky, (0, 0))", "float32", [0, 0], []),
    ("m.linalg.inv(m.zeros(0, 3, 3))", "float32", [0, 3, 3], []),
    ("grad_of(m.linalg.inv, (0, 3, 3))", "float32", [0, 3, 3], []),
    ("m.linalg.det(m.zeros(0, 3, 3))", "float32", [0], []),
    ("grad_of(m.linalg.det, (0, 3, 3))", "float32", [0, 3, 3], []),
    ("m.linalg.slogdet(m.zeros(0, 3, 3)).logabsdet", "float32", [0], []),
    ("m.linalg.solve(m.zeros(0, 3, 3), m.zeros(0, 3, 2))", "float32", [0, 3, 2], []),
    ("grad_of(m.linalg.solve, (0, 3, 3), (0, 3, 2))", "float32", [0, 3, 3], []),
    ("m.linalg.cholesky(m.zeros(0, 3, 3))", "float32", [0, 3, 3], []),
    ("grad_of(m.linalg.cholesky, (0, 3, 3))", "float32", [0, 3, 3], []),
    # an empty batch runs no convolution kernel, so a dilation of 0 passes
    ("F.conv2d(m.ones(0, 3, 8, 8), m.ones(4, 3, 3, 3), dilation=0)", "float32", [0, 4, 8, 8],
     []),
]

_F32 = "m.ones(2, 3, 8, 8), m.ones(4, 3, 3, 3)"  # a float32 batch of two: oneDNN's conv2d
_F64 = "m.ones(2, 3, 8, 8, dtype=m.float64), m.ones(4, 3, 3, 3, dtype=m.float64)"
_F32_3D = "m.ones(1, 3, 6, 6, 6), m.ones(4, 3, 3, 3, 3)"  # one sample: PyTorch's own kernel
_NOT_ITERABLE = "'float' object is not iterable"

# (source, error type, message) as torch 2.13 raises them
ERRORS = [
    # convolution parameters, checked before any shape (and in this order)
    (f"F.conv2d({_F32}, stride=0)", "RuntimeError", "non-positive stride is not supported"),
    (f"F.conv2d({_F32}, stride=(1, 0))", "RuntimeError", "non-positive stride is not supported"),
    (f"F.conv2d({_F32}, stride=-1)", "RuntimeError", "non-positive stride is not supported"),
    ("F.conv1d(m.ones(2, 3, 8), m.ones(4, 3, 3), stride=0)", "RuntimeError",
     "non-positive stride is not supported"),
    (f"F.conv3d({_F32_3D}, stride=0)", "RuntimeError", "non-positive stride is not supported"),
    ("F.conv2d(m.ones(3, 8, 8), m.ones(4, 3, 3, 3), stride=0)", "RuntimeError",
     "non-positive stride is not supported"),
    ("m.convolution(m.ones(2, 3, 8, 8), m.ones(4, 3, 3, 3), None, (0, 0), (0, 0), (1, 1), False, "
     "(0, 0), 1)", "RuntimeError", "non-positive stride is not supported"),
    (f"F.conv2d({_F32}, padding=-1)", "RuntimeError", "negative padding is not supported"),
    ("F.conv1d(m.ones(2, 3, 8), m.ones(4, 3, 3), padding=-1)", "RuntimeError",
     "negative padding is not supported"),
    (f"F.conv3d({_F32_3D}, padding=-1)", "RuntimeError", "negative padding is not supported"),
    (f"F.conv2d({_F32}, stride=0, padding=-1)", "RuntimeError",
     "negative padding is not supported"),
    (f"F.conv2d({_F32}, stride=0, dilation=-1)", "RuntimeError",
     "non-positive stride is not supported"),
    (f"F.conv2d({_F32}, dilation=-1)", "RuntimeError", "dilation should be greater than zero"),
    (f"F.conv2d({_F32}, groups=0, stride=0)", "RuntimeError",
     "non-positive groups is not supported"),
    ("F.conv2d(m.ones(2, 5, 8, 8), m.ones(4, 3, 3, 3), stride=0)", "RuntimeError",
     "non-positive stride is not supported"),
    ("F.conv2d(m.ones(2, 3, 8, 8), m.ones(4, 3, 3, 3), m.ones(3), padding=-1)", "RuntimeError",
     "negative padding is not supported"),
    ("F.conv_transpose2d(m.ones(2, 3, 8, 8), m.ones(3, 4, 3, 3), stride=0)", "RuntimeError",
     "non-positive stride is not supported"),
    ("F.conv_transpose2d(m.ones(2, 3, 8, 8), m.ones(3, 4, 3, 3), padding=-1)", "RuntimeError",
     "negative padding is not supported"),
    ("F.conv_transpose2d(m.ones(2, 3, 8, 8), m.ones(3, 4, 3, 3), output_padding=-1)",
     "RuntimeError", "negative output_padding is not supported"),
    ("F.conv_transpose1d(m.ones(2, 3, 8), m.ones(3, 4, 3), stride=0)", "RuntimeError",
     "non-positive stride is not supported"),
    # dilation 0: refused by the kernel PyTorch picks, with its text (NOTE [conv dilation 0])
    (f"F.conv2d({_F32}, dilation=0)", "RuntimeError", "non-positive dilation is not supported"),
    (f"F.conv2d({_F32}, dilation=(1, 0))", "RuntimeError",
     "non-positive dilation is not supported"),
    ("F.conv2d(m.ones(2, 3, 2, 2), m.ones(4, 3, 3, 3), dilation=0)", "RuntimeError",
     "non-positive dilation is not supported"),
    ("F.conv2d(m.ones(1, 3, 6, 6), m.ones(3, 1, 3, 3), dilation=0, groups=3)", "RuntimeError",
     "non-positive dilation is not supported"),
    (f"F.conv2d({_F32}, padding='same', dilation=0)", "RuntimeError",
     "non-positive dilation is not supported"),
    (f"F.conv2d({_F64}, dilation=0)", "RuntimeError",
     "dilation should be greater than zero, but got [0, 0]"),
    ("F.conv1d(m.ones(2, 3, 8, dtype=m.float64), m.ones(4, 3, 3, dtype=m.float64), "
     "dilation=0)", "RuntimeError", "dilation should be greater than zero, but got [1, 0]"),
    ("F.conv1d(m.ones(2, 3, 8), m.ones(4, 3, 3), dilation=0)", "RuntimeError",
     "non-positive dilation is not supported"),
    (f"F.conv3d({_F32_3D}, dilation=0)", "RuntimeError",
     "dilation should be greater than zero, but got [0, 0, 0]"),
    (f"F.conv3d({_F32_3D}, dilation=(1, 0, 1))", "RuntimeError",
     "dilation should be greater than zero, but got [1, 0, 1]"),
    ("F.conv3d(m.ones(1, 3, 6, 6, 6), m.ones(3, 1, 3, 3, 3), dilation=0, groups=3)",
     "RuntimeError", "non-positive dilation is not supported"),
    ("F.conv_transpose2d(m.ones(2, 3, 8, 8, dtype=m.float64), m.ones(3, 4, 3, 3, "
     "dtype=m.float64), dilation=0)", "RuntimeError",
     "dilation should be greater than zero, but got dilation_height: 0, dilation_width: 0"),
    ("F.conv_transpose1d(m.ones(2, 3, 8, dtype=m.float64), m.ones(3, 4, 3, dtype=m.float64), "
     "dilation=0)", "RuntimeError",
     "dilation should be greater than zero, but got dilation_height: 1, dilation_width: 0"),
    # the modules call the functions
    ("m.nn.Conv1d(3, 4, 3, stride=0)(m.ones(2, 3, 8))", "RuntimeError",
     "non-positive stride is not supported"),
    ("m.nn.Conv2d(3, 4, 3, padding=-1)(m.ones(2, 3, 8, 8))", "RuntimeError",
     "negative padding is not supported"),
    ("m.nn.Conv2d(3, 4, 3, dilation=0)(m.ones(2, 3, 8, 8))", "RuntimeError",
     "non-positive dilation is not supported"),
    ("m.nn.Conv3d(3, 4, 3, stride=0)(m.ones(1, 3, 6, 6, 6))", "RuntimeError",
     "non-positive stride is not supported"),
    ("m.nn.Conv3d(3, 4, 3, dilation=0)(m.ones(1, 3, 6, 6, 6))", "RuntimeError",
     "dilation should be greater than zero, but got [0, 0, 0]"),
    # a number where a root gradient goes: PyTorch makes no tensor of it
    ("grad_with([1.0])", "TypeError", "gradients can be either Tensors or None, but got float"),
    ("grad_with((1.0,))", "TypeError", "gradients can be either Tensors or None, but got float"),
    ("grad_with([1])", "TypeError", "gradients can be either Tensors or None, but got int"),
    ("grad_with([True])", "TypeError", "gradients can be either Tensors or None, but got bool"),
    ("grad_with([np.float64(1.0)])", "TypeError",
     "gradients can be either Tensors or None, but got float64"),
    ("grad_with([1.0], is_grads_batched=True)", "TypeError",
     "gradients can be either Tensors or None, but got float"),
    ("grad_with(1.0)", "TypeError", _NOT_ITERABLE),
    ("backward_with([1.0])", "TypeError",
     "gradients can be either Tensors or None, but got float"),
    ("backward_with(1.0)", "TypeError", _NOT_ITERABLE),
    ("m.autograd.backward((m.ones(2, requires_grad=True) * 2).sum(), grad_tensors=[2.0])",
     "TypeError", "gradients can be either Tensors or None, but got float"),
]


def same_values(a: Any, b: Any, dtype: str) -> bool:
    """Equal within what the two libraries' float arithmetic leaves (NaN equal to NaN)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return False
    tol = 1e-5 if dtype == "float32" else 1e-9
    return bool(np.all((np.isnan(a) & np.isnan(b)) | (np.abs(a - b) <= tol * (1 + np.abs(b)))))


@pytest.mark.parametrize(("src", "dtype", "shape", "values"), VALUES,
                         ids=[c[0] for c in VALUES])
def test_values(src: str, dtype: str, shape: list, values: Any) -> None:
    out = run(src)
    assert out.dtype.name == dtype
    assert list(out.shape) == shape
    assert same_values(out.tolist(), values, dtype), out.tolist()


@pytest.mark.parametrize(("src", "error", "message"), ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(src: str, error: str, message: str) -> None:
    with pytest.raises(Exception) as info:
        run(src)
    assert type(info.value).__name__ == error and str(info.value) == message


def test_det_singular_gradient_is_recorded() -> None:
    """Under create_graph the cofactors come from recorded ops, so they have a grad_fn."""
    A = gradviz.tensor(S2, dtype=gradviz.float64, requires_grad=True)
    (g,) = gradviz.autograd.grad(gradviz.linalg.det(A), A, create_graph=True)
    assert g.grad_fn is not None


@pytest.mark.parametrize(("name", "fn", "shapes"), [
    ("det", lambda x: gradviz.linalg.det(x), [(3, 3)]),
    ("det batched", lambda x: gradviz.linalg.det(x), [(3, 2, 2)]),
    ("svd square full", lambda x: gradviz.linalg.svd(x, full_matrices=True), [(3, 3)]),
    ("svd tall", lambda x: gradviz.linalg.svd(x, full_matrices=False), [(4, 3)]),
    ("svd wide", lambda x: gradviz.linalg.svd(x, full_matrices=False), [(2, 3)]),
    ("conv2d", lambda x, w: gradviz.nn.functional.conv2d(x, w, stride=2, padding=1),
     [(1, 2, 5, 5), (2, 2, 3, 3)]),
])
def test_gradients_stay_gradchecked(name: str, fn: Any, shapes: list[tuple]) -> None:
    rng = np.random.default_rng(3)
    xs = [gradviz.tensor(rng.uniform(-1, 1, s), requires_grad=True) for s in shapes]
    assert gradcheck(fn, xs)
    assert gradgradcheck(fn, xs)


# -- gradviz.load's map_location --------------------------------------------------------------
# The file saves {"w": w, "tied": w, "b": zeros(3)}: two stored tensors, both at "cpu".
SAVED_LOCATIONS = ["cpu", "cpu"]


def _saved(lib: Any = gradviz) -> io.BytesIO:
    """That file, written by ``lib`` (gradviz, or torch in the parity file)."""
    w = lib.ones(2)
    buf = io.BytesIO()
    lib.save({"w": w, "tied": w, "b": lib.zeros(3)}, buf)
    buf.seek(0)
    return buf


def test_map_location_callable_is_called_once_per_stored_tensor() -> None:
    calls: list = []

    def where(tensor: gradviz.Tensor, location: str) -> None:
        calls.append((tuple(tensor.shape), location))

    out = gradviz.load(_saved(), map_location=where)
    assert sorted(calls) == [((2,), "cpu"), ((3,), "cpu")]
    assert [loc for _, loc in calls] == SAVED_LOCATIONS
    assert out["w"].tolist() == [1.0, 1.0] and out["w"] is out["tied"]


def test_map_location_callable_result_is_used() -> None:
    out = gradviz.load(_saved(), map_location=lambda storage, loc: storage)
    assert out["b"].tolist() == [0.0, 0.0, 0.0]
    out = gradviz.load(_saved(), map_location=lambda t, loc: t * 2 + 1)
    assert out["w"].tolist() == [3.0, 3.0] and out["w"] is out["tied"]
    assert out["w"].grad_fn is None


def test_map_location_callable_must_return_a_like_tensor() -> None:
    with pytest.raises(TypeError, match=r"must return None or a tensor .* got int"):
        gradviz.load(_saved(), map_location=lambda t, loc: 3)
    with pytest.raises(TypeError, match=r"dtype gradviz.float64"):
        gradviz.load(_saved(), map_location=lambda t, loc: t.double())
    with pytest.raises(RuntimeError, match="CPU only"):
        gradviz.load(_saved(), map_location=lambda t, loc: t.cuda())


@pytest.mark.parametrize("where", ["meta", gradviz.device("meta"), {"cpu": "meta"}])
def test_map_location_meta_gives_tensors_without_values(where: Any) -> None:
    out = gradviz.load(_saved(), map_location=where)
    assert out["w"].is_meta and out["w"].device == gradviz.device("meta")
    assert out["w"].shape == (2,) and out["b"].shape == (3,) and out["w"] is out["tied"]
    with pytest.raises(NotImplementedError, match="^Cannot copy out of meta tensor; no data!$"):
        out["b"].tolist()


def test_map_location_dict_applies_its_cpu_entry_only() -> None:
    assert gradviz.load(_saved(), map_location={"cuda:0": "cuda:1"})["w"].tolist() == [1.0, 1.0]
    assert gradviz.load(_saved(), map_location={"cpu": "cpu"})["b"].tolist() == [0.0] * 3
    with pytest.raises(RuntimeError, match="CPU only"):
        gradviz.load(_saved(), map_location={"cpu": "cuda"})
