"""Saved-tensor hooks: a program decides how the tensors a node saves for backward are stored
(PyTorch's ``torch.autograd.graph.saved_tensors_hooks``, ``save_on_cpu`` and
``disable_saved_tensors_hooks``). Packing and unpacking happen in ``saved_variable.py``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gradviz.tensor import Tensor

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "HOOKED_SAVES",
           "ON_FIRST_PACK"]

# NOTE [saved tensor hooks]
# PyTorch lets a program decide how a tensor saved for backward is stored: inside
# `saved_tensors_hooks(pack, unpack)`, every tensor a node saves is handed to `pack` and only what
# `pack` returns is kept; when backward (or `_saved_<name>`) needs the tensor, `unpack` gets that
# back and must return a tensor. `grad_fn._raw_saved_<name>.register_hooks(pack, unpack)` does
# the same for one value after the fact. Packing happens in one place, `SavedVariable.__init__`
# (saved_variable.py), which every node's saving goes through (table ops, fast paths, custom
# Functions); with no hooks active it costs one truthiness test of `_SAVED_HOOKS`. A packed
# value is not version-checked (PyTorch cannot see through the hooks either). Both steps are told
# to listeners as `saved_tensor_pack` and `saved_tensor_unpack` events, so that the tracer can
# show them.

# The active saved_tensors_hooks, innermost last; `[message]` of disable_saved_tensors_hooks.
_SAVED_HOOKS: list[tuple[Callable, Callable]] = []
_HOOKS_DISABLED: list[str] = []
# [True] once any value was packed by a hook (op nodes test it in OpNode.run: their unpack-once
# step costs nothing before hooks are first used); ON_FIRST_PACK's callables are called then.
HOOKED_SAVES = [False]
ON_FIRST_PACK: list[Callable[[], None]] = []


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Inside this context, every tensor a node saves for backward is ``pack_hook(tensor)``;
    backward reads it back as ``unpack_hook(packed)``, which must return a tensor (PyTorch's
    ``torch.autograd.graph.saved_tensors_hooks``; NOTE [saved tensor hooks]). Contexts nest:
    the innermost one packs.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> def pack(t):
        ...     print("pack", t.shape)
        ...     return t
        >>> def unpack(t):
        ...     print("unpack")
        ...     return t
        >>> with saved_tensors_hooks(pack, unpack):
        ...     y = x.pow(2)
        pack gradviz.Size([2])
        >>> y.sum().backward()
        unpack
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        if _HOOKS_DISABLED:
            raise RuntimeError(_HOOKS_DISABLED[-1])
        _SAVED_HOOKS.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc: object) -> None:
        _SAVED_HOOKS.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """Saved tensors are kept on the CPU and moved back when backward needs them (PyTorch's
    ``torch.autograd.graph.save_on_cpu``). gradviz only has the CPU, so packing is a copy of
    the values: what the node keeps no longer shares memory with the tensor it saved.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> with save_on_cpu():
        ...     y = (x * x).sum()
        >>> y.backward(); x.grad
        tensor([2., 2.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor) -> tuple:
            return (tensor.device, type(tensor)._make(tensor._data.copy()))

        def unpack_from_cpu(packed: tuple) -> Tensor:
            _, copy = packed
            return copy

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Forbid saved-tensor hooks inside: entering :class:`saved_tensors_hooks` raises
    ``RuntimeError(error_message)``, and so does entering this context while hooks are active
    (PyTorch's ``torch.autograd.graph.disable_saved_tensors_hooks``).

    Example:
        >>> with disable_saved_tensors_hooks("no hooks in this block"):
        ...     with saved_tensors_hooks(lambda t: t, lambda t: t):
        ...         pass
        Traceback (most recent call last):
        RuntimeError: no hooks in this block
    """

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        if _SAVED_HOOKS:
            raise RuntimeError(self.error_message)
        _HOOKS_DISABLED.append(self.error_message)

    def __exit__(self, *exc: object) -> None:
        _HOOKS_DISABLED.pop()

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapper

