"""Hook handles, and what the engine checks of a value a hook returned.

Every ``register_*hook`` of a tensor, a node or a module keeps its hooks in a :class:`HookDict`
(in registration order) and returns a :class:`RemovableHandle` (PyTorch's
``torch.utils.hooks.RemovableHandle``). When the engine calls a hook that returns a value in
place of a gradient, :func:`checked_hook_result` checks it as PyTorch's ``python_hook.cpp`` does.
The hooks that concern a whole backward pass (``register_multi_grad_hook``) are in
``multi_grad_hook.py``; hooks on saved tensors in ``saved_tensors_hooks.py``.
"""

from __future__ import annotations

import itertools
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from gradviz._dtype import type_name

__all__ = ["RemovableHandle", "HookDict", "add_hook", "hook_name", "hook_type_name",
           "checked_hook_result", "checked_hook_results"]

# The Tensor class, handed over by gradviz/tensor.py once it exists (NOTE [no import circle]).
Tensor: type = None  # type: ignore[assignment]


class RemovableHandle:
    """Returned by every ``register_*hook``; ``handle.remove()`` unregisters the hook.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 2)
        >>> h.remove()
    """

    __slots__ = ("_dict_ref", "id")
    _next_id = itertools.count()

    def __init__(self, hooks_dict: HookDict) -> None:
        # Weak, so that a forgotten handle does not keep a dead graph's hooks alive.
        self._dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._next_id)

    def remove(self) -> None:
        hooks = self._dict_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class HookDict(OrderedDict):
    """An ordered dict that can be weakly referenced (plain dicts cannot)."""


def add_hook(hooks: HookDict, fn: Callable) -> RemovableHandle:
    """Keep ``fn`` in ``hooks`` (after those already there); its handle removes it again."""
    if not callable(fn):
        raise TypeError(f"hook must be callable, got {type(fn).__name__}")
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


def hook_name(fn: Callable) -> str:
    """How PyTorch names a hook in its errors: its ``__name__``, else its ``repr``."""
    return getattr(fn, "__name__", None) or repr(fn)


def hook_type_name(arr: np.ndarray) -> str:
    """How PyTorch's hook check names the type of a value: a CPU tensor's legacy name where
    its dtype has one (``torch.FloatTensor``), else backend, scalar type and ``Type``
    (``CPUBoolType``, ``MetaFloatType``), as torch 2.13 writes them.

    Example:
        >>> hook_type_name(np.zeros(2, np.float32)), hook_type_name(np.zeros(2, bool))
        ('gradviz.FloatTensor', 'CPUBoolType')
    """
    meta = getattr(arr, "is_meta", False)
    if not meta and arr.dtype.kind != "b":
        return type_name(arr.dtype)
    scalar = type_name(arr.dtype).removeprefix("gradviz.").removesuffix("Tensor")
    return f"{'Meta' if meta else 'CPU'}{scalar}Type"


def checked_hook_result(fn: Callable, result: Any, value: Any, create_graph: bool) -> Any:
    """A gradient that hook ``fn`` returned (not None) in place of ``value``, checked as PyTorch
    checks it (``check_single_result`` in ``python_hook.cpp``): no gradient where there was
    None, a tensor, of the same type and size. Returned as the engine carries it (an array, or
    under ``create_graph`` a tensor)."""
    if value is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    # Under create_graph the engine carries tensors: compare NumPy dtypes, not gradviz's.
    old = value._data if isinstance(value, Tensor) else value
    if not isinstance(old, np.ndarray):
        old = np.asarray(old)
    new = result._data
    # PyTorch's "type" is the dtype and the backend: a meta tensor for a CPU one is a change.
    if new.dtype != old.dtype or getattr(new, "is_meta", False) != getattr(old, "is_meta", False):
        raise RuntimeError(f"hook '{hook_name(fn)}' has changed the type of value (was "
                           f"{hook_type_name(old)} got {hook_type_name(new)})")
    if result.shape != np.shape(value):
        # PyTorch's text; the shapes are gradviz's addition.
        raise RuntimeError(f"hook '{hook_name(fn)}' has changed the size of value (expected "
                           f"{list(np.shape(value))}, got {list(result.shape)})")
    return result if create_graph else result._data


def checked_hook_results(fn: Callable, result: Any, values: Any, create_graph: bool) -> list:
    """What a node pre-hook or post-hook returned (not None) in place of the tuple ``values``:
    a tuple of the same length, each entry None or passing :func:`checked_hook_result`."""
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != len(values):
        raise RuntimeError(f"hook '{hook_name(fn)}' has returned an incorrect number of values "
                           f"(got {len(result)}, but expected {len(values)})")
    return [None if r is None else checked_hook_result(fn, r, v, create_graph)
            for r, v in zip(result, values)]

