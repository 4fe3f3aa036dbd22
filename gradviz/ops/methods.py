"""Tensor methods and operators, each a thin call into :mod:`gradviz.ops.functional`.

Kept apart from ``tensor.py`` because the functional layer needs the ``Tensor`` class first;
``tensor.py`` calls :func:`install` once the class exists.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz import _dtype


def install(Tensor: type) -> None:  # noqa: N803 - the class being extended
    from gradviz.ops import functional as F

    def _swap(fn):
        return lambda self, other: fn(other, self)

    methods: dict[str, Any] = {
        # arithmetic operators, both operand orders
        # `2 + x` and `2 * x` are `x.add(2)` / `x.mul(2)` in PyTorch: x stays `self` (edge 0).
        "__add__": F.add, "__radd__": F.add,
        "__sub__": F.sub, "__rsub__": lambda self, other: F.rsub(self, other),
        "__mul__": F.mul, "__rmul__": F.mul,
        "__truediv__": F.div, "__rtruediv__": _swap(F.div),
        "__pow__": F.pow, "__rpow__": _swap(F.pow),
        "__matmul__": F.matmul, "__rmatmul__": _swap(F.matmul),
        "__neg__": F.neg,
        "__pos__": lambda self: self,
        # comparisons give bool tensors, like PyTorch's
        "__eq__": F.eq, "__ne__": F.ne, "__lt__": F.lt, "__le__": F.le, "__gt__": F.gt,
        "__ge__": F.ge,
        "__and__": F.logical_and, "__or__": F.logical_or, "__invert__": F.logical_not,
        # in-place operators
        "__iadd__": F.add_, "__isub__": F.sub_, "__imul__": F.mul_, "__itruediv__": F.div_,
        # named methods
        # (methods generated from a table row, such as exp or neg, are installed by
        # gradviz.ops.api.publish)
        "add": F.add, "sub": F.sub, "mul": F.mul, "div": F.div, "pow": F.pow,
        "sum": F.sum, "mean": F.mean, "view": F.view,
        "reshape": F.reshape, "transpose": F.transpose, "swapaxes": F.transpose, "t": F.t,
        "permute": F.permute, "expand": F.expand, "unsqueeze": F.unsqueeze,
        "squeeze": F.squeeze, "clone": F.clone, "mm": F.mm, "matmul": F.matmul, "dot": F.dot,
        "mv": F.mv, "eq": F.eq, "ne": F.ne, "lt": F.lt, "le": F.le, "gt": F.gt, "ge": F.ge,
        "add_": F.add_, "sub_": F.sub_, "mul_": F.mul_, "div_": F.div_, "zero_": F.zero_,
        "fill_": F.fill_, "copy_": F.copy_,
        "expand_as": lambda self, other: F.expand(self, other.shape),
        "view_as": lambda self, other: F.view(self, other.shape),
        "reshape_as": lambda self, other: F.reshape(self, other.shape),
        "to": _to, "type_as": lambda self, other: _to(self, other.dtype),
        "float": lambda self: _to(self, _dtype.float32),
        "double": lambda self: _to(self, _dtype.float64),
        "long": lambda self: _to(self, _dtype.int64),
        "int": lambda self: _to(self, _dtype.int32),
        "bool": lambda self: _to(self, _dtype.bool),
        "cpu": lambda self: self,
        "T": property(_T),
    }
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
    _install_library(Tensor)


def _T(self: Any) -> Any:  # noqa: N802 - Tensor.T
    """All dimensions reversed, as PyTorch's ``.T`` (``PermuteBackward0``)."""
    from gradviz.ops import functional as F

    return F.permute(self, tuple(range(self.ndim - 1, -1, -1)))


def _to(self: Any, *args: Any, **kwargs: Any) -> Any:
    """``to(dtype)`` (a differentiable cast, ``ToCopyBackward0``) or ``to('cpu')`` (itself)."""
    from gradviz.ops.derivatives import OPS
    from gradviz.ops.dispatch import dispatch

    target = kwargs.get("dtype")
    for a in args:
        if isinstance(a, (_dtype.dtype, np.dtype)):
            target = a
        elif isinstance(a, str) and a != "cpu":
            raise RuntimeError(f"gradviz computes on the CPU only; cannot move a tensor to {a!r}")
    if target is None:
        return self
    np_dt = target.np if isinstance(target, _dtype.dtype) else np.dtype(target)
    if np_dt == self._data.dtype:
        return self
    return dispatch(OPS["to_copy"], self, dtype=np_dt)


def _install_library(Tensor: type) -> None:  # noqa: N803
    """The op library's methods (gradviz/ops/functional.py, "The op library") and indexing."""
    from gradviz.ops import _indexing
    from gradviz.ops import functional as F

    names = ("abs", "absolute", "square", "clamp", "clip", "clamp_min", "clamp_max", "maximum",
             "minimum", "max", "min",
             "amax", "amin", "argmax", "argmin", "all", "any", "isnan", "isinf", "isfinite",
             "allclose", "equal", "prod", "var", "std", "logsumexp", "norm",
             "softmax", "log_softmax",
             "flatten", "repeat", "contiguous", "split", "chunk", "unbind", "bmm", "outer", "ger",
             "select", "narrow", "index_select", "gather", "scatter", "scatter_add",
             "masked_fill", "clamp_", "clip_", "masked_fill_", "scatter_", "scatter_add_",
             "index_put", "index_put_")
    for name in names:
        setattr(Tensor, name, getattr(F, name))
    Tensor.is_contiguous = lambda self: bool(self._data.flags.c_contiguous)
    Tensor.__getitem__ = _indexing.getitem
    Tensor.__setitem__ = _indexing.setitem
    Tensor.__iter__ = _iter


def _iter(self: Any) -> Any:
    """Iterate over the first dimension: ``unbind(0)``, as PyTorch does (``UnbindBackward0``)."""
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(self.unbind(0))
