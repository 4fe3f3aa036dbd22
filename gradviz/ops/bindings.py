"""What torch's Python binding does before an op's row runs: the argument checks and mappings
that a row's signature cannot say, given to the row as its ``normalize=`` (NOTE [signature rows]
in gradviz/ops/opinfo.py).

PyTorch's ``python_arg_parser`` refuses a number where its schema says ``Tensor`` (``atan2(x,
2.0)``) and some kernels refuse dtypes before they run; the functions here raise the same errors
with the same texts, then return the dispatch point's ``(inputs, keywords)``. This module sits
below the table (the rows import it) and imports nothing of the op layer but the kernels'
dtype names, so the functional forms (gradviz/ops/functional/) share its checks too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradviz.ops._kernels.common import _not_for
from gradviz.tensor import Tensor, _wrap_dim

__all__ = ["tensors_only", "float_only", "int_arg", "tensor_other", "tensors_of",
           "float_tensors_of", "dims", "clone", "unsqueeze", "triangle", "logsumexp",
           "cumulative", "logcumsumexp", "logit", "pow_tensor", "pow_scalar_base", "pow_scalar"]


def tensors_only(fn: str, **operands: Any) -> None:
    """torch's error for a number where only a tensor is taken (``atan2(x, 2.0)``).

    Example:
        >>> import gradviz
        >>> tensors_only("atan2", input=gradviz.ones(1), other=2.0)
        Traceback (most recent call last):
        TypeError: atan2(): argument 'other' (position 2) must be Tensor, not float
    """
    for position, (name, value) in enumerate(operands.items(), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")


def float_only(kernel: str, *tensors: Tensor) -> None:
    """PyTorch's NotImplementedError for an integer or bool tensor where only floats are
    taken (``"logaddexp_cpu" not implemented for 'Long'``)."""
    for t in tensors:
        if t._data.dtype.kind != "f":
            raise _not_for(kernel, t._data.dtype)


def int_arg(fn: str, name: str, pos: int, value: Any) -> int:
    """An int argument, refused with PyTorch's text when it is not one (a float ``k`` ...).

    Example:
        >>> int_arg("tril", "diagonal", 2, 1.5)
        Traceback (most recent call last):
        TypeError: tril(): argument 'diagonal' (position 2) must be int, not float
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be int, not "
                        f"{type(value).__name__}")
    return int(value)


def dims(dim: int | Sequence[int], ndim: int) -> tuple[int, ...]:
    """``dim`` (an int or several) wrapped over ``ndim`` dimensions, each at most once.

    Example:
        >>> dims((-1, 0), 3)
        (2, 0)
    """
    given = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    out = tuple(_wrap_dim(int(d), ndim) for d in given)
    if len(set(out)) != len(out):
        d = next(d for d in out if out.count(d) > 1)
        raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return out


def logsumexp(input: Tensor, dim: Any, keepdim: Any) -> tuple[tuple, dict]:
    """``logsumexp``'s normaliser: ``dim`` an int or several (``()``: all of them)."""
    wrapped = tuple(range(input.ndim)) if dim == () else dims(dim, input.ndim)
    return (input,), {"dim": wrapped, "keepdim": bool(keepdim)}


def cumulative(input: Tensor, dim: Any, dtype: Any) -> tuple[tuple, dict]:
    """``cumsum``'s and ``cumprod``'s normaliser: a wrapped ``dim``; with ``dtype``, the input
    converted first (``ToCopyBackward0``, as torch's kernel converts)."""
    d = _wrap_dim(dim, input.ndim)
    return (input if dtype is None else input.to(dtype),), {"dim": d}


def logcumsumexp(input: Tensor, dim: Any) -> tuple[tuple, dict]:
    """``logcumsumexp``'s normaliser: floating point only, an int ``dim``, wrapped."""
    float_only("logcumsumexp_out_cpu", input)
    return (input,), {"dim": _wrap_dim(int_arg("logcumsumexp", "dim", 2, dim), input.ndim)}


def logit(input: Tensor, eps: Any) -> tuple[tuple, dict]:
    """``logit``'s normaliser: ``eps`` as a float (torch's schema says ``float?``)."""
    return (input,), {"eps": None if eps is None else float(eps)}


def clone(input: Any, memory_format: Any) -> tuple[tuple, dict]:
    """``clone``'s normaliser: every tensor gradviz makes is contiguous, so ``memory_format``
    changes nothing (it is taken, as torch takes it)."""
    return (input,), {}


def unsqueeze(input: Tensor, dim: Any) -> tuple[tuple, dict]:
    """``unsqueeze``'s normaliser: ``dim`` wrapped over the result's dimensions (``-1`` is
    the new last one)."""
    return (input,), {"dim": _wrap_dim(dim, input.ndim + 1)}


def triangle(fn: str) -> Any:
    """The normaliser of ``tril``/``triu``: at least 2 dimensions, an int ``diagonal``.

    Example:
        >>> import gradviz
        >>> gradviz.tril(gradviz.ones(3))
        Traceback (most recent call last):
        RuntimeError: tril: input tensor must have at least 2 dimensions
    """
    def normalize(input: Tensor, diagonal: Any) -> tuple[tuple, dict]:
        if input.ndim < 2:
            raise RuntimeError(f"{fn}: input tensor must have at least 2 dimensions")
        return (input,), {"diagonal": int_arg(fn, "diagonal", 2, diagonal)}

    normalize.__qualname__ = f"triangle({fn!r})"
    return normalize


def tensor_other(fn: str) -> Any:
    """The normaliser of ``fn(Tensor self, Tensor other)`` whose ``other`` must be a tensor
    (``maximum``: torch's parser refuses a number there; ``input`` is not checked, as torch's
    method form has it as ``self``).

    Example:
        >>> import gradviz
        >>> gradviz.maximum(gradviz.ones(1), 2)
        Traceback (most recent call last):
        TypeError: maximum(): argument 'other' (position 2) must be Tensor, not int
    """
    def normalize(input: Any, other: Any) -> tuple[tuple, dict]:
        if not isinstance(other, Tensor):
            raise TypeError(f"{fn}(): argument 'other' (position 2) must be Tensor, not "
                            f"{type(other).__name__}")
        return (input, other), {}

    normalize.__qualname__ = f"tensor_other({fn!r})"
    return normalize


def tensors_of(fn: str, *names: str) -> Any:
    """The normaliser of ``fn`` whose arguments ``names`` (all of them inputs) must be tensors.

    Example:
        >>> import gradviz
        >>> tensors_of("fmax", "input", "other")(gradviz.ones(1), 2.0)
        Traceback (most recent call last):
        TypeError: fmax(): argument 'other' (position 2) must be Tensor, not float
    """
    def normalize(*args: Any) -> tuple[tuple, dict]:
        tensors_only(fn, **dict(zip(names, args)))
        return args, {}

    normalize.__qualname__ = f"tensors_of({fn!r})"
    return normalize


def float_tensors_of(fn: str, kernel: str, *names: str) -> Any:
    """:func:`tensors_of`, then the floating-point-only kernel's dtype check (``logaddexp``).

    Example:
        >>> import gradviz
        >>> gradviz.logaddexp(gradviz.ones(1, dtype=gradviz.long), gradviz.ones(1))
        Traceback (most recent call last):
        NotImplementedError: "logaddexp_cpu" not implemented for 'Long'
    """
    def normalize(*args: Any) -> tuple[tuple, dict]:
        tensors_only(fn, **dict(zip(names, args)))
        float_only(kernel, *args)
        return args, {}

    normalize.__qualname__ = f"float_tensors_of({fn!r})"
    return normalize


def _as_tensor(x: Any) -> Any:
    # A NumPy array where the schema says Tensor is a constant tensor (as in the operators).
    return Tensor._make(x) if isinstance(x, np.ndarray) else x


def pow_tensor(input: Any, exponent: Any) -> tuple[tuple, dict]:
    """``pow.Tensor_Tensor``: both operands tensors."""
    return (_as_tensor(input), _as_tensor(exponent)), {}


def pow_scalar_base(input: Any, exponent: Any) -> tuple[tuple, dict]:
    """``pow.Scalar``: the number base is the row's keyword ``self``, the exponent its input."""
    return (_as_tensor(exponent),), {"self": input}


def pow_scalar(input: Any, exponent: Any) -> tuple[tuple, dict]:
    """``pow.Tensor_Scalar``, refusing an integer tensor to a negative integer power as torch's
    kernel does.

    Example:
        >>> import gradviz
        >>> pow_scalar(gradviz.tensor([2]), -1)
        Traceback (most recent call last):
        RuntimeError: Integers to negative integer powers are not allowed.
    """
    input = _as_tensor(input)
    if input._data.dtype.kind in "iu" and isinstance(exponent, int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return (input,), {"exponent": exponent}
