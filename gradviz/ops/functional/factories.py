"""The factories that take a tensor (``*_like``), tensor queries (numel, is_floating_point ...),
logspace and the triangle indices."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz import _dtype
from gradviz._device import check_device, meta_array
from gradviz.ops.functional.common import _tensors_only
from gradviz.tensor import Tensor

__all__ = [
    "zeros_like", "empty_like", "numel", "is_floating_point", "is_nonzero", "is_inference",
    "ones_like", "full_like", "logspace", "tril_indices", "triu_indices"
]


def zeros_like(input: Tensor, *, dtype: _dtype.dtype | None = None,
               requires_grad: bool = False, device: Any = None) -> Tensor:
    """Zeros with ``input``'s shape and dtype.

    Example:
        >>> import gradviz
        >>> gradviz.zeros_like(gradviz.ones(2))
        tensor([0., 0.])
    """
    return full_like(input, 0, dtype=dtype, requires_grad=requires_grad, device=device)


def empty_like(input: Tensor, *, dtype: _dtype.dtype | None = None,
               requires_grad: bool = False, device: Any = None) -> Tensor:
    """A tensor with ``input``'s shape and dtype whose values are not to be relied on (zeros
    here: NumPy would hand out whatever the memory held).

    Example:
        >>> import gradviz
        >>> gradviz.empty_like(gradviz.ones(2, 3)).shape
        gradviz.Size([2, 3])
    """
    return full_like(input, 0, dtype=dtype, requires_grad=requires_grad, device=device)


def numel(input: Tensor) -> int:
    """The number of elements of ``input`` (``input.numel()``).

    Example:
        >>> import gradviz
        >>> gradviz.numel(gradviz.ones(2, 3))
        6
    """
    _tensors_only("numel", input=input)
    return input.numel()


def is_floating_point(input: Tensor) -> bool:
    """Whether ``input``'s dtype is a floating point one.

    Example:
        >>> import gradviz
        >>> gradviz.is_floating_point(gradviz.ones(2)), gradviz.is_floating_point(gradviz.arange(2))
        (True, False)
    """
    _tensors_only("is_floating_point", input=input)
    return input.is_floating_point()


def is_inference(input: Tensor) -> bool:
    """Whether ``input`` was made in inference mode (``input.is_inference()``).

    Example:
        >>> import gradviz
        >>> with gradviz.inference_mode():
        ...     t = gradviz.ones(2)
        >>> gradviz.is_inference(t), gradviz.is_inference(gradviz.ones(2))
        (True, False)
    """
    _tensors_only("is_inference", input=input)
    return input.is_inference()


def is_nonzero(input: Tensor) -> bool:
    """Whether a one-element tensor is not zero (PyTorch's errors for more or fewer elements).

    Example:
        >>> import gradviz
        >>> gradviz.is_nonzero(gradviz.tensor([1.0]))
        True
    """
    _tensors_only("is_nonzero", input=input)
    return bool(input)


def ones_like(input: Tensor, *, dtype: _dtype.dtype | None = None,
              requires_grad: bool = False, device: Any = None) -> Tensor:
    """Ones with ``input``'s shape and dtype.

    Example:
        >>> import gradviz
        >>> gradviz.ones_like(gradviz.zeros(2))
        tensor([1., 1.])
    """
    return full_like(input, 1, dtype=dtype, requires_grad=requires_grad, device=device)


def full_like(input: Tensor, fill_value: Any, *, dtype: _dtype.dtype | None = None,
              requires_grad: bool = False, device: Any = None) -> Tensor:
    """``fill_value`` everywhere, with ``input``'s shape and dtype.

    Example:
        >>> import gradviz
        >>> gradviz.full_like(gradviz.zeros(2), 7)
        tensor([7., 7.])
    """
    dt = input._data.dtype if dtype is None else dtype.np
    # like PyTorch's *_like: on the input's device unless told (a meta input: a meta result)
    dev = input.device if device is None else check_device(device, "full_like")
    arr = (meta_array(input.shape, dt) if dev.type == "meta"
           else np.full(input.shape, fill_value, dtype=dt))
    return Tensor._make(arr).requires_grad_(requires_grad)


def _factory_result(values: np.ndarray, dtype: _dtype.dtype | None, requires_grad: bool,
                    device: Any) -> Tensor:
    values = values.astype(dtype.np if dtype is not None else values.dtype)
    if device.type == "meta":  # the values computed are dropped (NOTE [meta device])
        values = meta_array(values.shape, values.dtype)
    out = Tensor._make(values)
    return out.requires_grad_() if requires_grad else out


def logspace(start: float, end: float, steps: int, base: float = 10.0, *,
             dtype: _dtype.dtype | None = None, requires_grad: bool = False,
             device: Any = None) -> Tensor:
    """``steps`` values ``base ** linspace(start, end, steps)``.

    Example:
        >>> import gradviz
        >>> gradviz.logspace(0, 2, 3)
        tensor([  1.,  10., 100.])
    """
    dev = check_device(device, "logspace")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    values = np.power(float(base), np.linspace(start, end, steps))
    target = dtype or _dtype.get_default_dtype()
    if target.np.kind in "iu":
        # PyTorch truncates the float powers to the integer dtype; the 1e-9 keeps a power
        # that lands a hair under an integer (99.99999...) at that integer.
        values = np.floor(values + 1e-9)
    return _factory_result(values, target, requires_grad, dev)


def _triangle_indices(name: str, row: int, col: int, offset: int, lower: bool,
                      dtype: _dtype.dtype | None, device: Any) -> Tensor:
    for what, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{what} must be non-negative, got{v}")
    r, c = np.indices((row, col)).reshape(2, -1)
    keep = (c - r <= offset) if lower else (c - r >= offset)
    return _factory_result(np.stack([r[keep], c[keep]]), dtype or _dtype.int64, False, device)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: _dtype.dtype | None = None,
                 device: Any = None) -> Tensor:
    """The (row, column) indices of the lower triangle of a ``row`` x ``col`` matrix (on and
    below diagonal ``offset``), as a 2 x N tensor, row by row.

    Example:
        >>> import gradviz
        >>> gradviz.tril_indices(3, 3)
        tensor([[0, 1, 1, 2, 2, 2],
                [0, 0, 1, 0, 1, 2]])
    """
    dev = check_device(device, "tril_indices")
    return _triangle_indices("tril_indices", row, col, offset, True, dtype, dev)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: _dtype.dtype | None = None,
                 device: Any = None) -> Tensor:
    """The (row, column) indices of the upper triangle (on and above diagonal ``offset``).

    Example:
        >>> import gradviz
        >>> gradviz.triu_indices(2, 3, 1)
        tensor([[0, 0, 1],
                [1, 2, 2]])
    """
    dev = check_device(device, "triu_indices")
    return _triangle_indices("triu_indices", row, col, offset, False, dtype, dev)
