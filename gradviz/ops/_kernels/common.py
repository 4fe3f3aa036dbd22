"""What every kernel file uses: unwrapping a tensor's array, float promotion, dtype names,
PyTorch's error texts for unsupported dtypes."""

from __future__ import annotations

from typing import Any

import numpy as np

INT64_MAX = 2**63 - 1  # what PyTorch saves as a slice's end when it was left open


def arr(x: Any) -> Any:
    """A tensor's array (anything else unchanged)."""
    return getattr(x, "_data", x)


def as_float(a: Any) -> Any:
    """Integer and bool arrays as float64, so that a float function of them does not come out
    as NumPy's float16 (for bool/int8) but as float64, which dispatch turns into PyTorch's
    default float type (``promotes``)."""
    return a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind in "biu" else a


def _out_dtype(a: np.ndarray) -> np.dtype:
    return a.dtype if a.dtype.kind == "f" else np.dtype(np.float64)


def _not_for(kernel: str, dt: np.dtype) -> NotImplementedError:
    """PyTorch's error for a dtype a kernel has no loop for."""
    return NotImplementedError(
        f'"{kernel}" not implemented for \'{_SCALAR_TYPE.get(dt.name, dt.name)}\'')


def _torch_result_type(*operands: Any) -> np.dtype:
    """PyTorch's result type of tensors (arrays) and numbers: the highest category (bool <
    integer < floating) decides, and within it the widest type, so ``int64`` with ``float32``
    is ``float32`` (NumPy says float64); numbers count only with a higher category (NumPy's
    weak scalars already do that)."""
    floats = [o for o in operands if isinstance(o, np.ndarray) and o.dtype.kind == "f"]
    if floats:
        numbers = [o for o in operands if not isinstance(o, np.ndarray)]
        return np.result_type(*floats, *numbers)
    return np.result_type(*operands)


def _float_operands(a: Any, b: Any) -> tuple:
    """Both operands of a floating-point binary function as arrays of one float type: their
    result type, or float64 for integers and bools (``promotes`` then gives PyTorch's default
    float type)."""
    dt = _torch_result_type(a, b)
    dt = dt if dt.kind == "f" else np.dtype(np.float64)
    return np.asarray(a, dtype=dt), np.asarray(b, dtype=dt)


# The C type names PyTorch's "<kernel>" not implemented for '<type>' errors print.
_SCALAR_TYPE = {"float16": "Half", "float32": "Float", "float64": "Double", "bool": "Bool",
                "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                "uint8": "Byte"}
