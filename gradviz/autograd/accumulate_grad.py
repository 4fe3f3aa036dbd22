"""``AccumulateGrad``: the node at a leaf, where a gradient becomes ``.grad`` (PyTorch's
``torch/csrc/autograd/functions/accumulate_grad.h``).

It adds each gradient that reaches a leaf into ``variable.grad``: the first one is taken as it
is when nobody else holds it (the steal rule, :func:`_can_steal`), else copied; later ones are
added. :func:`retain_grad` keeps the gradient of a non-leaf whose ``retain_grad()`` was called
(a copy, then sums).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from gradviz._device import NO_DATA, MetaArray, meta_array
from gradviz.autograd import events
from gradviz.autograd.node import _NO_HOOKS, Node, NodeHooks

if TYPE_CHECKING:
    from gradviz.autograd.events import Observer

__all__ = ["AccumulateGrad", "retain_grad", "copied_grad"]

# The Tensor class, handed over by gradviz/tensor.py once it exists (NOTE [no import circle]).
Tensor: type = None  # type: ignore[assignment]

# PyTorch reports AccumulateGrad's sequence number as UINT64_MAX: it runs first once ready.
_MAX_SEQUENCE_NR = 2**64 - 1


class AccumulateGrad(Node):
    """The node at a leaf tensor: running it adds the incoming gradient into ``variable.grad``.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> acc = (x * 2).grad_fn.next_functions[0][0]
        >>> type(acc).__name__, acc.variable is x
        ('AccumulateGrad', True)
    """

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        # PyTorch builds it with an explicit UINT64_MAX: making a leaf's AccumulateGrad does not
        # use up a sequence number, so the op nodes around it are numbered 0, 1, 2 ... as in torch.
        super().__init__((), ((variable._data.shape, variable._data.dtype),), _MAX_SEQUENCE_NR)
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"  # what PyTorch's AccumulateGrad.name() returns

    def _tensor_hooks(self) -> list[tuple[int, Callable]]:
        # Hooks on a leaf live on the tensor (so they outlive this node), as in PyTorch 2.x.
        hooks = self.variable._backward_hooks
        if not hooks:
            return []
        return [(0, fn) for fn in hooks.values()]

    def _hooks(self) -> NodeHooks:
        hooks = Node._hooks(self)
        if hooks is _NO_HOOKS and self.variable._backward_hooks:
            hooks = NodeHooks(self._tensor_hooks(), [], [], [])
        return hooks

    def run(self, grad_outputs: list, create_graph: bool, observer: Observer) -> tuple:
        # Reported before .grad changes, so that a watcher sees the node run, then write.
        observer.execute(self, grad_outputs, ())
        self.accumulate(grad_outputs, create_graph, observer)
        return ()

    def apply(self, grad_outputs: list, create_graph: bool) -> tuple:
        """Add ``grad_outputs[0]`` into ``variable.grad`` (see :meth:`accumulate`); no outputs."""
        self.accumulate(grad_outputs, create_graph, events.observer())
        return ()

    def accumulate(self, grad_outputs: list, create_graph: bool, observer: Observer) -> None:
        """PyTorch's ``AccumulateGrad::apply``: the gradient becomes or joins ``.grad``.

        The gradient is moved out of ``grad_outputs`` (PyTorch's ``std::move(grads[0])``).
        The first one becomes ``.grad`` as it is when nobody else holds it (see
        :func:`_can_steal`), else as a copy; later ones are added in place, or out of place
        under ``create_graph`` so that ``.grad`` stays differentiable. Then the variable's
        post-accumulate-grad hooks run (also when no gradient arrived).

        Example:
            >>> import gradviz
            >>> x = gradviz.zeros(2, requires_grad=True)
            >>> acc = (x * 1).grad_fn.next_functions[0][0]
            >>> _ = acc(gradviz.ones(2)); _ = acc(gradviz.ones(2)); x.grad
            tensor([2., 2.])
        """
        new_grad = grad_outputs[0]
        grad_outputs[0] = None  # the list no longer refers to it: see _can_steal
        if new_grad is None:
            self._call_post_accumulate_grad_hooks(observer)
            return
        var = self.variable
        before = var._grad  # a leaf's: the property's non-leaf warning never applies
        shown_before = observer.keep(before)  # the value before an in-place add changes it
        if type(var._data) is MetaArray:  # a meta leaf's .grad is meta: nothing to add up
            if before is None:  # (NOTE [meta device] in gradviz/_device.py)
                var._grad = Tensor._make(meta_array(var._data.shape, var._data.dtype))
        elif type(new_grad) is MetaArray:  # from a meta tensor made with .to("meta")
            raise NotImplementedError(NO_DATA)
        elif create_graph:
            # PyTorch copies into a fresh tensor (clone_obey_contract): .grad shows CopyBackwards.
            var.grad = (Tensor._make(np.empty_like(new_grad._data)).copy_(new_grad)
                        if before is None else before + new_grad)
        elif before is None:
            # Held by this variable, and by the engine's inputs if it copied them for the
            # post-hooks. (Counted in a statement of its own: a pending call's arguments count.)
            only_engine_holds_it = _use_count(new_grad) <= 1 + bool(self._hooks().post)
            if _can_steal(new_grad, only_engine_holds_it, var._data):
                # NOTE [perf]: straight into ._grad: _can_steal checked what the setter checks
                # (a tensor of the variable's dtype and shape)
                var._grad = Tensor._make(new_grad)
            else:
                var.grad = Tensor._make(np.array(new_grad, dtype=var._data.dtype))
        elif before.requires_grad:
            var.grad = Tensor._make(before._data + new_grad)
        else:
            np.add(before._data, new_grad, out=before._data, casting="unsafe")
            before._version_counter.version += 1
        observer.leaf_grad(self, var, shown_before, var._grad)
        self._call_post_accumulate_grad_hooks(observer)

    def _call_post_accumulate_grad_hooks(self, observer: Observer) -> None:
        # They run even when no gradient arrived (.grad unchanged), as in PyTorch.
        var = self.variable
        extra = var._extra
        if extra is not None and extra.post_acc_hooks:
            for fn in list(extra.post_acc_hooks.values()):
                if fn(var) is not None:
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")
                observer.hook("post_accumulate_grad", self, fn=fn)


def retain_grad(tensor: Tensor, grad: Any, create_graph: bool) -> None:
    """What ``retain_grad`` does when the gradient of a non-leaf arrives: the first is copied
    into ``tensor.grad``, later ones are added."""
    if create_graph:
        tensor.grad = grad.clone() if tensor.grad is None else tensor.grad + grad
    else:
        tensor.grad = Tensor._make(
            copied_grad(grad) if tensor.grad is None else tensor.grad._data + grad)


def copied_grad(grad: Any) -> np.ndarray:
    """A gradient array as a tensor gets it: a copy, or a meta one as it is (it has no values
    to share, NOTE [meta device] in gradviz/_device.py).

    Example:
        >>> copied_grad(np.ones(2))
        array([1., 1.])
    """
    return grad if type(grad) is MetaArray else np.array(grad)


def _use_count(obj: Any) -> int:
    """PyTorch's ``use_count``: how many references hold ``obj``, the caller's variable among
    them (``sys.getrefcount`` also counts those of this call, measured below)."""
    return sys.getrefcount(obj) - _CALL_REFS


def _call_refs() -> int:
    probe = np.empty(1)  # held by this one variable
    return _use_count(probe) - 1


_CALL_REFS = 0
_CALL_REFS = _call_refs()  # differs between Python versions


def _can_steal(new_grad: Any, only_engine_holds_it: bool, like: np.ndarray) -> bool:
    """Whether a first gradient may become ``.grad`` without a copy (PyTorch's rule in
    ``AccumulateGrad::accumulateGrad``): only the engine refers to it, and its layout (type,
    dtype, shape, contiguity, writability) matches the variable's. A gradient that a hook, a
    user's tensor, another branch or a tracer still holds is copied, so that ``.grad`` shares
    memory with nothing. A view counts when its base is held by the view alone and is no
    larger (a transpose, a reshape), or ``.grad`` would pin more memory.
    """
    if (not only_engine_holds_it or type(new_grad) is not np.ndarray
            or new_grad.dtype != like.dtype or new_grad.shape != like.shape
            or not new_grad.flags.writeable
            or new_grad.flags.c_contiguous != like.flags.c_contiguous):
        return False
    base = new_grad.base
    return base is None or (type(base) is np.ndarray and base.base is None
                            and base.size == new_grad.size and _use_count(base) <= 2)

