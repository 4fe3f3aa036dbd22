"""``repr`` of tensors in PyTorch's style: ``tensor([1.0000, 2.5000], requires_grad=True)``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from gradviz import _dtype

if TYPE_CHECKING:
    from gradviz.tensor import Tensor

_PREFIX = "tensor("


def _float_formatter(arr: np.ndarray):
    """Pick PyTorch's float style from the finite non-zero values: integer, fixed or scientific."""
    finite = np.abs(arr[np.isfinite(arr)].astype(np.float64))
    nonzero = finite[finite != 0]
    sci = False
    if nonzero.size:
        lo, hi = nonzero.min(), nonzero.max()
        int_mode = bool(np.all(np.floor(finite) == finite))
        sci = hi > 1e8 if int_mode else (hi / lo > 1000.0 or hi > 1e8 or lo < 1e-4)
    else:
        int_mode = True

    def fmt(v: float) -> str:
        if not np.isfinite(v):
            return str(float(v)).replace("inf", "inf")
        if sci:
            return f"{v:.4e}"
        if int_mode:
            return f"{v:.0f}."
        return f"{v:.4f}"

    return fmt


def _body(arr: np.ndarray) -> str:
    if arr.dtype.kind == "f":
        fmt = _float_formatter(arr)
        # Pad every element to the widest one, as PyTorch aligns columns.
        flat = arr.reshape(-1)
        sample = flat if flat.size <= 1000 else np.concatenate([flat[:3], flat[-3:]])
        width = max(len(fmt(v)) for v in sample) if sample.size else 0
        formatter = {"float_kind": lambda v: fmt(v).rjust(width)}
    elif arr.dtype.kind == "b":
        formatter = {"bool": lambda v: str(bool(v)).rjust(5 if arr.any() and not arr.all()
                                                          else len(str(bool(v))))}
    else:
        formatter = None
    return np.array2string(arr, separator=", ", prefix=_PREFIX, formatter=formatter,
                           threshold=1000, edgeitems=3, max_line_width=80)


def tensor_repr(t: Tensor) -> str:
    """The PyTorch-style text of a tensor (used by ``repr`` and ``str``)."""
    arr = t._data
    parts: list[str] = []
    if arr.size == 0:
        body = "[]"
        if arr.shape != (0,):
            parts.append(f"size={tuple(arr.shape)}")
    else:
        body = _body(arr)
    dt = _dtype.to_dtype(arr.dtype)
    default_shown = (dt is _dtype.get_default_dtype()) or dt is _dtype.int64 or dt is _dtype.bool
    if not default_shown:
        parts.append(f"dtype={dt!r}")
    if t.grad_fn is not None:
        parts.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        parts.append("requires_grad=True")
    suffix = "".join(", " + p for p in parts)
    return f"{_PREFIX}{body}{suffix})"
