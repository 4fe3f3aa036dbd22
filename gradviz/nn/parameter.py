"""``gradviz.nn.Parameter``: a tensor that a :class:`~gradviz.nn.Module` registers as learnable.

As in PyTorch, assigning a ``Parameter`` to a module attribute registers it (it then shows up in
``parameters()`` and ``state_dict()``); a plain tensor attribute does not.

NOTE [parameter names] gradviz's drawings label a leaf with its tensor's ``.name``. A module
names each parameter it registers after its attribute (``weight``) and, when it is itself
registered as a child, re-prefixes the names (``0.weight``, ``fc1.bias``); ``named_parameters()``
on a root module renames everything from the root. Only names that gradviz set are rewritten:
``_gv_auto_name`` remembers the last name gradviz gave, so a name the user set is never touched.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz import _dtype
from gradviz.tensor import Tensor

__all__ = ["Parameter", "is_auto_named", "set_auto_name"]


class Parameter(Tensor):
    """A tensor that is a module parameter: ``requires_grad=True`` by default, and registered
    by the module it is assigned to.

    ``Parameter(data)`` shares ``data``'s memory (as ``torch.nn.Parameter`` does); without data it
    is an empty float tensor.

    Args:
        data: the initial values (a tensor).
        requires_grad: whether the parameter is trained (default ``True``).

    Example:
        >>> import gradviz
        >>> from gradviz.nn import Parameter
        >>> Parameter(gradviz.ones(2))
        Parameter containing:
        tensor([1., 1.], requires_grad=True)
    """

    # No __slots__: a Parameter, like torch's, accepts arbitrary attributes.

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        if data is None:
            arr = np.empty((0,), dtype=_dtype.get_default_dtype().np)
            self._init(arr, False)
        else:
            if not isinstance(data, Tensor):
                raise TypeError(f"Parameter data must be a Tensor, got {type(data).__name__}")
            self._init(data._data, False)
            self._version_counter = data._version_counter  # shares storage, like detach()
        self._gv_auto_name: str | None = None
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo: dict) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        out = Parameter(Tensor._make(self._data.copy()), self._requires_grad)
        if self.grad is not None:
            out.grad = Tensor._make(self.grad._data.copy())
        out._copy_name_from(self)
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, protocol: int) -> Any:
        return (_rebuild_parameter,
                (self._data, self._requires_grad, self.name, self.__dict__.get("_gv_auto_name")))

    def _copy_name_from(self, other: Parameter) -> None:
        if other.name is not None:
            self.name = other.name
        self._gv_auto_name = other.__dict__.get("_gv_auto_name")


def _rebuild_parameter(arr: np.ndarray, requires_grad: bool, name: str | None,
                       auto_name: str | None) -> Parameter:
    p = Parameter(Tensor._make(arr), requires_grad)
    if name is not None:
        p.name = name
    p._gv_auto_name = auto_name
    return p


def is_auto_named(p: Tensor) -> bool:
    """True when ``p`` has no name, or the name it has was given by gradviz (not by the user)."""
    name = p.name
    if name is None:
        return True
    return isinstance(p, Parameter) and name == p.__dict__.get("_gv_auto_name")


def set_auto_name(p: Tensor, qualified_name: str) -> None:
    """Name ``p`` ``qualified_name`` unless the user named it (see NOTE [parameter names]).

    Example:
        >>> import gradviz
        >>> p = Parameter(gradviz.ones(2)); set_auto_name(p, "fc.weight"); p.name
        'fc.weight'
    """
    if isinstance(p, Parameter) and is_auto_named(p):
        p.name = qualified_name
        p._gv_auto_name = qualified_name
