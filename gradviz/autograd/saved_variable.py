"""Saved variables: what a node keeps for its backward, and the version check when it reads it
back (PyTorch's ``torch/csrc/autograd/saved_variable.h``).

A tensor saved for backward remembers the version of its data when it was saved; reading it in
backward after an in-place write raises PyTorch's "modified by an inplace operation" error.
Under saved-tensor hooks (``saved_tensors_hooks.py``) only what the pack hook returned is kept.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from gradviz._dtype import type_name
from gradviz.autograd import events
from gradviz.autograd.accumulate_grad import AccumulateGrad
from gradviz.autograd.saved_tensors_hooks import _SAVED_HOOKS, HOOKED_SAVES, ON_FIRST_PACK

if TYPE_CHECKING:
    from gradviz.autograd.node import Node

__all__ = ["SavedVariable", "SavedVariableList", "SavedTensor", "save_value", "increment_version",
           "FREED_MESSAGE", "DETACHED_MESSAGE"]

# The Tensor class, handed over by gradviz/tensor.py once it exists (NOTE [no import circle]).
Tensor: type = None  # type: ignore[assignment]

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)

DETACHED_MESSAGE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is "
    "not supported, please use out-of-place `.detach()` instead")


_PACK_MODIFIED = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
    "pack hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the input "
    "to a pack hook.")
_REGISTER_FREED = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values "
    "of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you need "
    "to access saved variables after calling backward.")


class SavedVariable:
    """A tensor saved for backward, with the version it had when saved (PyTorch's SavedVariable).

    Unpacking checks the version: a tensor modified in place since it was saved raises PyTorch's
    error. An op's *output* is saved as its array only (a reference to the tensor would make a
    cycle through ``grad_fn``); under ``create_graph`` it is rebuilt with the owning node as
    ``grad_fn``. Under saved-tensor hooks only what the pack hook returned is kept (NOTE [saved
    tensor hooks]): ``data`` is then None and ``hooks`` holds ``(packed, unpack_hook)`` (it is
    set only then).
    """

    __slots__ = ("data", "version", "_counter", "_tensor", "_requires_grad", "_output_nr",
                 "_was_non_leaf", "hooks", "_edge", "_meta")

    def __init__(self, tensor: Tensor, is_output: bool = False) -> None:
        self.data = tensor._data
        self._counter = tensor._version_counter
        if self._counter.inference:
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. Please do not use Tensors "
                "created in inference mode in computation tracked by autograd. To work around "
                "this, you can make a clone to get a normal tensor and use it in autograd, or use "
                "`gradviz.no_grad()` instead of `gradviz.inference_mode()`.")
        self.version = self._counter.version
        self._requires_grad = tensor._requires_grad or tensor.grad_fn is not None
        self._output_nr = tensor._output_nr
        self._tensor = None if is_output else tensor
        # An input with a history: detach_() on it later is an error at unpack (as PyTorch).
        self._was_non_leaf = not is_output and tensor._grad_fn is not None
        # `hooks` is set only when packed (then `data` is None): nothing more to pay here.
        if _SAVED_HOOKS:  # the one check the common case pays
            self.set_hooks(*_SAVED_HOOKS[-1], tensor)

    def set_hooks(self, pack_hook: Callable, unpack_hook: Callable, tensor: Tensor,
                  owner: Node | None = None) -> None:
        """Pack ``tensor`` with ``pack_hook`` and keep only its result (and ``unpack_hook``);
        ``owner``: the node, when known (``register_hooks`` on a node's saved value)."""
        version = tensor._version
        packed = pack_hook(tensor)
        if tensor._version != version:
            raise RuntimeError(_PACK_MODIFIED)
        t = self._tensor
        if t is not None:
            # An input: remember where its gradient goes rather than the tensor itself.
            self._edge = ((t.grad_fn, t._output_nr) if t.grad_fn is not None
                          else (t._grad_accumulator(), 0) if t._requires_grad else None)
        else:
            self._edge = None
        self._meta = (self.data.shape, self.data.dtype)
        self.hooks = (packed, unpack_hook)
        self.data = None
        if not HOOKED_SAVES[0]:
            HOOKED_SAVES[0] = True
            for fn in ON_FIRST_PACK:
                fn()
        self._tensor = None
        self._was_non_leaf = False  # the tensor is no longer held: nothing left to check
        if events.watchers:
            events.observer().saved_tensor_pack(self, tensor, packed, pack_hook, owner)

    def check_version(self, owner: Node | None = None) -> None:
        counter = self._counter
        if self.data is not None and counter.version != self.version:
            raise RuntimeError(self._modified_message(owner))
        if self._was_non_leaf and self._tensor._grad_fn is None:
            raise RuntimeError(DETACHED_MESSAGE)

    def _modified_message(self, owner: Node | None = None) -> str:
        shape = list(self.data.shape)
        where = ""
        t = self._tensor
        node_name = t.grad_fn.name() if t is not None and t.grad_fn is not None else None
        if t is None:
            # A saved output names the node that saved it (as PyTorch does), not the in-place op.
            node_name = owner.name() if owner is not None else self._counter.last_op
        if node_name:
            # PyTorch's short form: ExpBackward0 -> Exp, FillBackward2 -> Fill2, FooBackward -> Foo.
            m = re.search(r"Backward(\d*)$", node_name)
            short = node_name if m is None else node_name[: m.start()] + m.group(1).lstrip("0")
            where = f", which is output {self._output_nr} of {short},"
        return (
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{type_name(self.data.dtype)} {shape}]{where} is at version "
            f"{self._counter.version}; expected version {self.version} instead. Hint: enable "
            "anomaly detection to find the operation that failed to compute its gradient, with "
            "gradviz.autograd.set_detect_anomaly(True, check_nan=False)."
        )

    def _call_unpack_hook(self, owner: Node | None) -> Tensor:
        packed, unpack_hook = self.hooks
        value = unpack_hook(packed)
        if not isinstance(value, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(value).__name__}")
        if events.watchers:
            events.observer().saved_tensor_unpack(self, owner, packed, value, unpack_hook)
        return value

    def unpack_data(self, owner: Node | None = None) -> Any:
        """The saved value as the engine's array (a plain backward), after the version check
        or through the unpack hook."""
        if self.data is None:  # packed by a hook
            return self._call_unpack_hook(owner)._data
        self.check_version(owner)
        return self.data

    def unpack(self, owner: Node | None = None) -> Tensor:
        """The saved value as a tensor (graph-connected), after the version check."""
        if self.data is None:  # packed by a hook
            return self._unpack_hooked(owner)
        self.check_version(owner)
        if self._tensor is not None:
            return self._tensor
        out = Tensor._make(self.data)
        if self._requires_grad and owner is not None:
            out.grad_fn = owner
            out._requires_grad = True  # else ops on it under create_graph would not record
            out._output_nr = self._output_nr
            out._version_counter = self._counter
        return out

    def _unpack_hooked(self, owner: Node | None) -> Tensor:
        # What the unpack hook returned, given the saved tensor's place in the graph again.
        value = self._call_unpack_hook(owner)
        edge = self._edge if self._edge is not None or owner is None or not self._requires_grad \
            else (owner, self._output_nr)
        if edge is None:
            return value
        out = type(value)._make(value._data)
        out._vc = value._vc
        out._requires_grad = True
        if isinstance(edge[0], AccumulateGrad):
            out._x().grad_acc = weakref.ref(edge[0])  # a leaf: its gradient goes to the original
        else:
            out.grad_fn, out._output_nr = edge
        return out


class SavedTensor:
    """What ``grad_fn._raw_saved_<name>`` returns (PyTorch's ``torch._C._autograd.SavedTensor``):
    a handle on one saved tensor, to give it its own pack and unpack hooks.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> y = x * x
        >>> y.grad_fn._raw_saved_self.register_hooks(lambda t: t * 10, lambda p: p / 10)
        >>> y.sum().backward(); x.grad
        tensor([2., 2.])
    """

    __slots__ = ("_saved", "_owner")

    def __init__(self, saved: SavedVariable | None | object, owner: Node | None) -> None:
        self._saved = saved  # a SavedVariable; None: nothing saved; a number; else: freed
        self._owner = owner

    def register_hooks(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        """Pack the saved tensor now with ``pack_hook``; backward reads ``unpack_hook(packed)``."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks(): incompatible function arguments. The following "
                            "argument types are supported:\n    1. (self: SavedTensor, arg0: "
                            "collections.abc.Callable, arg1: collections.abc.Callable) -> None")
        saved = self._saved
        if saved is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                               "forbidden")
        if isinstance(saved, (int, float, complex, np.number)):
            raise RuntimeError(f"{self._owner.name()} keeps this operand as the number it was "
                               f"given ({saved!r}), not as a saved tensor: gradviz cannot "
                               "give it hooks")
        if type(saved) is not SavedVariable:
            raise RuntimeError(_REGISTER_FREED)
        if saved.data is None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have "
                               "already been set. Hint: only one pair of hooks is allowed at a "
                               "time.")
        # The hook gets the values without their history, as PyTorch passes ``data.detach()``.
        tensor = saved._tensor if saved._tensor is not None else saved.unpack(self._owner)
        saved.set_hooks(pack_hook, unpack_hook, tensor.detach(), self._owner)

    def __repr__(self) -> str:
        # Python's own form at the class's public path, as torch prints its
        # <torch._C._autograd.SavedTensor object at ...>
        return f"<gradviz.autograd.graph.SavedTensor object at {id(self):#x}>"


class SavedVariableList(tuple):
    """Tensors saved for backward as one list argument (PyTorch's ``std::vector<SavedVariable>``,
    as ``IndexBackward0._saved_indices``): ``None`` entries stay ``None``; freed like any saved
    tensor after backward."""

    __slots__ = ()

    def unpack(self, owner: Node | None = None) -> tuple:
        """The tensors, each version-checked."""
        return tuple(None if s is None else s.unpack(owner) for s in self)

    def tensors(self) -> tuple:
        """The tensors as saved, unchecked (for inspection)."""
        return tuple(None if s is None else (s._tensor if s._tensor is not None else s.data)
                     for s in self)


def save_value(v: Any) -> Any:
    """How a non-input value is kept for backward: a tensor (or a list holding tensors) as
    saved variables, anything else as it is.

    Example:
        >>> import gradviz
        >>> type(save_value((gradviz.tensor([1]), None))).__name__, save_value(3)
        ('SavedVariableList', 3)
    """
    tensor_type = Tensor  # a local: read once per call
    if isinstance(v, tensor_type):
        return SavedVariable(v)
    if type(v) in (tuple, list) and any(isinstance(x, tensor_type) for x in v):
        return SavedVariableList(None if x is None else SavedVariable(x) for x in v)
    return v


def increment_version(tensor: Tensor | Any) -> None:
    """Bump the version counter of ``tensor`` (or of each tensor in an iterable), as an in-place
    write would: backward then refuses values saved before (PyTorch's
    ``torch.autograd.graph.increment_version``, for code that writes tensors behind autograd's
    back).

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2)
        >>> increment_version(x); x._version
        1
    """
    try:
        tensors = (tensor,) if isinstance(tensor, Tensor) else iter(tensor)
    except TypeError:
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input") from None
    for t in tensors:  # PyTorch's order: the tensors before a non-tensor are bumped already
        if not isinstance(t, Tensor):
            raise RuntimeError("increment_version expects each element of the iterable to be a "
                               "tensor")
        if t.is_inference():
            continue  # an inference tensor has no version counter: nothing to bump, as torch
        t._version_counter.version += 1

