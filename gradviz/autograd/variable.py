"""``torch.autograd.Variable``, kept for old code: since PyTorch 0.4 every tensor is one.

``Variable(t, requires_grad=True)`` returns a tensor that shares ``t``'s data, as a new leaf;
``isinstance(x, Variable)`` is True for every tensor.
"""

from __future__ import annotations

from typing import Any

from gradviz.autograd import engine
from gradviz.tensor import Tensor

__all__ = ["Variable"]


class _ImperativeEngine:
    """``Variable._execution_engine``: the engine as PyTorch's Python code reaches it, for
    :meth:`queue_callback` (what runs when a backward pass ends)."""

    @staticmethod
    def queue_callback(callback: Any) -> None:
        """Run ``callback()`` when the backward pass running now has finished
        (:func:`gradviz.autograd.engine.queue_callback`)."""
        engine.queue_callback(callback)


class _VariableMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """The deprecated wrapper: a tensor, sharing ``data``'s storage, that requires grad if asked.

    Example:
        >>> import gradviz
        >>> v = Variable(gradviz.ones(2), requires_grad=True)
        >>> v.requires_grad, v.is_leaf, isinstance(v, Variable)
        (True, True, True)
    """

    _execution_engine = _ImperativeEngine()

    def __new__(cls, data: Any, requires_grad: bool = False, volatile: bool = False) -> Any:
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        out.requires_grad_(requires_grad)
        return out
