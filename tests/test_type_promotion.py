"""Type promotion across ranks and bool powers, as PyTorch 2.13 computes them.

A 0-dim tensor ranks below tensors with dimensions: it counts only when its category (bool <
integer < floating) is higher, as a Python number does. The expectations are PyTorch's; the
parity suite (tests/parity/test_torch_parity.py) derives them again from torch.
"""

from __future__ import annotations

import pytest

import gradviz

# (source with ``m`` for the module, dtype name, values) as torch 2.13 gives them
CASES = [
    ("m.ones(2) * m.tensor(2.0, dtype=m.float64)", "float32", [2.0, 2.0]),
    ("m.ones(2, dtype=m.int32) * m.tensor(2.5, dtype=m.float64)", "float64", [2.5, 2.5]),
    ("m.ones(2, dtype=m.int32) * m.tensor(2, dtype=m.int64)", "int32", [2, 2]),
    ("m.ones(2, dtype=m.int32) * m.tensor(2.5)", "float32", [2.5, 2.5]),
    ("m.ones(2, dtype=m.int64) * m.tensor(2.5, dtype=m.float16)", "float16", [2.5, 2.5]),
    ("m.ones(2, dtype=m.bool) + m.tensor(3)", "int64", [4, 4]),
    ("m.ones(2, dtype=m.float16) + m.tensor(1.0)", "float16", [2.0, 2.0]),
    ("m.tensor(2.0, dtype=m.float64) * m.tensor(3.0)", "float64", 6.0),
    ("m.tensor([1.0, 4.0]) / m.tensor(2.0, dtype=m.float64)", "float32", [0.5, 2.0]),
    ("m.tensor([1.0, 2.0]) ** m.tensor(2.0, dtype=m.float64)", "float32", [1.0, 4.0]),
    ("m.tensor([1.0, 2.0]) - m.tensor(1, dtype=m.int64)", "float32", [0.0, 1.0]),
    ("m.tensor([1.0, 2.0]).add_(m.tensor(3.0, dtype=m.float64))", "float32", [4.0, 5.0]),
    ("m.maximum(m.tensor([1.0, 5.0]), m.tensor(3.0, dtype=m.float64))", "float32", [3.0, 5.0]),
    ("m.where(m.tensor([True, False]), m.tensor([1.0, 2.0]), m.tensor(0.0, dtype=m.float64))",
     "float32", [1.0, 0.0]),
    ("m.tensor([True, False]) ** True", "bool", [True, False]),
    ("m.tensor([True, False]) ** False", "bool", [True, True]),
    ("m.tensor([True, False]) ** 2", "int64", [1, 0]),
    ("2 ** m.tensor([True, False])", "int64", [2, 1]),
]

# (source, exception type name, message) as torch 2.13 raises them
ERRORS = [
    ("m.tensor([True, False]) ** m.tensor([True, True])", "NotImplementedError",
     "\"pow\" not implemented for 'Bool'"),
    ("True ** m.tensor([True, False])", "NotImplementedError",
     "\"pow\" not implemented for 'Bool'"),
    ("m.tensor([1, 2]).add_(m.tensor(3.5))", "RuntimeError",
     "result type Float can't be cast to the desired output type Long"),
]


@pytest.mark.parametrize(("src", "dtype", "values"), CASES, ids=[c[0] for c in CASES])
def test_result_dtype_and_values(src: str, dtype: str, values: object) -> None:
    out = eval(src, {"m": gradviz})  # noqa: S307 - sources above
    assert out.dtype.name == dtype
    assert out.tolist() == values


@pytest.mark.parametrize(("src", "error", "message"), ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(src: str, error: str, message: str) -> None:
    with pytest.raises(Exception) as info:
        eval(src, {"m": gradviz})  # noqa: S307 - sources above
    assert type(info.value).__name__ == error and str(info.value) == message


def test_gradients_keep_each_inputs_dtype():
    # The result is float32, but the float64 0-dim tensor's gradient is float64, as in torch.
    x = gradviz.tensor([1.0, 2.0, 3.0], requires_grad=True)
    s = gradviz.tensor(2.0, dtype=gradviz.float64, requires_grad=True)
    y = x * s
    y.sum().backward()
    assert y.dtype is gradviz.float32
    assert x.grad.dtype is gradviz.float32 and x.grad.tolist() == [2.0, 2.0, 2.0]
    assert s.grad.dtype is gradviz.float64 and s.grad.item() == 6.0
