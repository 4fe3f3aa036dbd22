"""PyTorch's legacy typed constructors: ``gradviz.FloatTensor``, ``LongTensor`` ... one per dtype.

Old tutorials write ``torch.LongTensor([1, 2])``, ``torch.FloatTensor(2, 3)`` (uninitialised;
zeros here) and ``isinstance(x, torch.FloatTensor)``. As in PyTorch, each is a class of its own
(not a subclass of ``Tensor``) whose call makes a plain ``Tensor`` of its dtype through
``Tensor.new``, and whose ``isinstance`` check asks for that dtype.

Example:
    >>> import gradviz as torch
    >>> torch.LongTensor([1, 2]), torch.FloatTensor(2, 3).shape
    (tensor([1, 2]), gradviz.Size([2, 3]))
    >>> isinstance(torch.ones(2), torch.FloatTensor), isinstance(torch.ones(2), torch.LongTensor)
    (True, False)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz import _dtype, _layout
from gradviz.tensor import Tensor

__all__ = ["tensortype", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor",
           "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


class tensortype(type):  # noqa: N801 - torch.tensortype
    """The type of the typed constructors: calling one makes a tensor of its ``dtype``, and
    ``isinstance(x, FloatTensor)`` is ``x.dtype == FloatTensor.dtype``.

    Example:
        >>> import gradviz
        >>> type(gradviz.FloatTensor).__name__, gradviz.FloatTensor.dtype
        ('tensortype', gradviz.float32)
    """

    dtype: _dtype.dtype

    def __call__(cls, *args: Any, **kwargs: Any) -> Tensor:
        # PyTorch's typed constructors are Tensor.new on an empty tensor of their dtype.
        return Tensor.new(Tensor._make(np.empty(0, cls.dtype.np)), *args, **kwargs)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype

    def __repr__(cls) -> str:
        return f"<class 'gradviz.{cls.__name__}'>"


def _typed(d: _dtype.dtype) -> tensortype:
    """The constructor named by ``d``'s legacy name (``FloatTensor`` for ``float32``)."""
    return tensortype(d._legacy, (), {
        "dtype": d, "is_cuda": False, "is_sparse": False, "layout": _layout.strided,
        "__module__": "gradviz", "__qualname__": d._legacy,
        "__doc__": f"The legacy constructor of ``{d!r}`` tensors (``Tensor.new``)."})


FloatTensor = _typed(_dtype.float32)
DoubleTensor = _typed(_dtype.float64)
HalfTensor = _typed(_dtype.float16)
LongTensor = _typed(_dtype.int64)
IntTensor = _typed(_dtype.int32)
ShortTensor = _typed(_dtype.int16)
CharTensor = _typed(_dtype.int8)
ByteTensor = _typed(_dtype.uint8)
BoolTensor = _typed(_dtype.bool)
