"""A 0-d tensor takes dim 0 and -1 as PyTorch does: reductions reduce over nothing, views are
the tensor itself, and backward goes through. Node names, saved dims and gradients below were
read off torch 2.13.0 for the same programs."""

from __future__ import annotations

import math
import warnings

import pytest

import gradviz

# program -> (value, node, saved dim (None: not saved), gradient of s)
CASES = {
    "s.sum(0)": (1.5, "SumBackward1", (0,), 1.0),
    # A dim saved as written, -1 read back as uint64 (NOTE [saved as given] in gradviz/tensor.py)
    "s.sum(-1)": (1.5, "SumBackward1", (2**64 - 1,), 1.0),
    "s.sum((0,))": (1.5, "SumBackward1", (0,), 1.0),
    "s.mean(0)": (1.5, "MeanBackward1", (0,), 1.0),
    "s.amax(0)": (1.5, "AmaxBackward0", (0,), 1.0),
    "s.amin(-1)": (1.5, "AminBackward0", (2**64 - 1,), 1.0),
    "s.squeeze(0)": (1.5, "SqueezeBackward1", 0, 1.0),
    "s.var(0)": (math.nan, "VarBackward0", (0,), math.nan),
    "s.std(0)": (math.nan, "StdBackward0", (0,), math.nan),
    "s.prod(0)": (1.5, "ProdBackward1", 0, 1.0),
    "s.logsumexp(0)": (1.5, "LogsumexpBackward0", (0,), 1.0),
    "s.norm(dim=0)": (1.5, "LinalgVectorNormBackward0", (0,), 1.0),
    "s.transpose(0, -1)": (1.5, "TransposeBackward0", None, 1.0),
    "s.softmax(0)": (1.0, "SoftmaxBackward0", 0, 0.0),
    "s.log_softmax(-1)": (0.0, "LogSoftmaxBackward0", 2**64 - 1, 0.0),
    "gradviz.gather(s, 0, gradviz.tensor(0))": (1.5, "GatherBackward0", 0, 1.0),
}


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b)


@pytest.mark.parametrize("src", sorted(CASES))
def test_zero_dim_tensor_takes_dim_zero(src: str) -> None:
    value, node, dim, grad = CASES[src]
    s = gradviz.tensor(1.5, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # var/std of one element warn, as in PyTorch
        y = eval(src, {"s": s, "gradviz": gradviz})  # noqa: S307 - this file's programs
        assert y.shape == () and _same(y.item(), value)
        assert y.grad_fn.name() == node
        if dim is not None:
            assert y.grad_fn._saved_dim == dim
        y.backward()
    assert _same(s.grad.item(), grad)


@pytest.mark.parametrize(("src", "text"), [
    ("s.sum(1)", "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    ("s.mean(-2)", "Dimension out of range (expected to be in range of [-1, 0], but got -2)"),
])
def test_zero_dim_tensor_refuses_other_dims(src: str, text: str) -> None:
    with pytest.raises(IndexError) as info:
        eval(src, {"s": gradviz.tensor(1.5)})  # noqa: S307
    assert str(info.value) == text
