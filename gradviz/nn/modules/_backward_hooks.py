"""A module's full backward hooks, as PyTorch runs them.

NOTE [module backward hooks] A module is not a node of the graph, so PyTorch gives it two: the
call's tensor inputs and its tensor outputs each pass through :class:`BackwardHookFunction`, a
custom Function that returns them unchanged (its node is ``BackwardHookFunctionBackward``, and
the graph a learner draws shows both). In the backward pass:

1. the outputs' node is reached first: a pre-hook on it takes the gradients with respect to the
   module's outputs (``grad_output``), runs the module's backward *pre*-hooks (which may replace
   them), and keeps them;
2. the inputs' node runs last: a post hook on it gets the gradients with respect to the module's
   inputs (``grad_input``, None where an argument is not a tensor) and calls each backward hook
   ``hook(module, grad_input, grad_output)``; a tuple a hook returns replaces ``grad_input``.

When no input requires grad there is no inputs' node: the hooks run at step 1, with
``grad_input`` all None, and PyTorch warns. When the output is not used by the backward pass,
nothing runs.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from gradviz.autograd.function import Function
from gradviz.autograd.grad_mode import is_grad_enabled
from gradviz.tensor import Tensor

__all__ = ["BackwardHookFunction", "BackwardHookCall", "warn_non_full_hook"]

_NO_INPUT_GRAD = ("Full backward hook is firing when gradients are computed with respect to "
                  "module outputs since no inputs require gradients. See "
                  "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                  "#torch.nn.Module.register_full_backward_hook for more details.")


class BackwardHookFunction(Function):
    """Its tensors, unchanged: the node a module's backward hooks hang on (see the NOTE)."""

    @staticmethod
    def forward(ctx: Any, *args: Tensor) -> tuple[Tensor, ...]:
        ctx.mark_non_differentiable(*[t for t in args if not t.requires_grad])
        return args

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple[Any, ...]:
        return grads


def _through_node(items: list[Any]) -> Any:
    """``items`` with their tensors passed through one :class:`BackwardHookFunction` node, and
    where they are in ``items``; None when no tensor among them needs a gradient."""
    slots = [k for k, a in enumerate(items) if isinstance(a, Tensor)]
    if not (is_grad_enabled() and any(items[k].requires_grad for k in slots)):
        return None
    wrapped = BackwardHookFunction.apply(*[items[k] for k in slots])
    wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
    node = next(t.grad_fn for t in wrapped if t.grad_fn is not None)
    out = list(items)
    for k, t in zip(slots, wrapped):
        out[k] = t
    return out, slots, node


class BackwardHookCall:
    """One call of a module that has full backward hooks or backward pre-hooks."""

    def __init__(self, module: Any, hooks: list[Callable[..., Any]],
                 pre_hooks: list[Callable[..., Any]]) -> None:
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.n_inputs = 0
        self.input_slots: list[int] | None = None  # where the wrapped tensors are in args
        self.grad_outputs: tuple[Any, ...] | None = None

    # -- forward: put the two nodes in place --------------------------------------------------
    def wrap_inputs(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """``args`` with its tensors passed through the inputs' node (none if none needs a
        gradient)."""
        self.n_inputs = len(args)
        passed = _through_node(list(args))
        if passed is None:
            return args
        out, self.input_slots, node = passed
        node.register_hook(self._inputs_done)
        return tuple(out)

    def wrap_outputs(self, result: Any) -> Any:
        """``result`` with its tensors passed through the outputs' node."""
        single = isinstance(result, Tensor)
        items = [result] if single else list(result) if isinstance(result, tuple) else None
        if items is None:
            return result
        passed = _through_node(items)
        if passed is None:
            return result
        out, _, node = passed
        node.register_prehook(self._outputs_reached)
        return out[0] if single else tuple(out)

    # -- backward: the hooks -------------------------------------------------------------------
    def _outputs_reached(self, grad_outputs: tuple[Any, ...]) -> tuple[Any, ...]:
        grad_outputs = tuple(grad_outputs)
        for hook in self.pre_hooks:
            new = hook(self.module, grad_outputs)
            if new is None:
                continue
            new = new if isinstance(new, tuple) else (new,)
            if len(new) != len(grad_outputs):
                raise RuntimeError("Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(new)}, but expected "
                                   f"{len(grad_outputs)}")
            grad_outputs = new
        self.grad_outputs = grad_outputs
        if self.input_slots is None and self.hooks:
            warnings.warn(_NO_INPUT_GRAD, UserWarning, stacklevel=2)
            nothing = (None,) * self.n_inputs
            for hook in self.hooks:
                out = hook(self.module, nothing, grad_outputs)
                if out is not None and not (isinstance(out, tuple)
                                            and all(g is None for g in out)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return grad_outputs

    def _inputs_done(self, grad_inputs: tuple[Any, ...], _: Any) -> tuple[Any, ...] | None:
        if self.grad_outputs is None or self.input_slots is None:
            return None  # the module's output took no part in this backward pass
        per_arg: list[Any] = [None] * self.n_inputs
        for k, g in zip(self.input_slots, grad_inputs):
            per_arg[k] = g
        result = tuple(per_arg)
        for hook in self.hooks:
            out = hook(self.module, result, self.grad_outputs)
            if out is None:
                continue
            out = out if isinstance(out, tuple) else (out,)
            if len(out) != len(result):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(result)}")
            result = out
        self.grad_outputs = None
        return tuple(result[k] for k in self.input_slots)


def warn_non_full_hook(args: tuple[Any, ...], result: Any, grad_fn: Any) -> None:
    """PyTorch's deprecation warnings for ``register_backward_hook`` (a hook on the output's
    node only sees that node's gradients, which are the module's only for a one-node
    forward of tensor inputs)."""
    if not all(isinstance(a, Tensor) for a in args):
        warnings.warn("Using non-full backward hooks on a Module that does not take as input a "
                      "single Tensor or a tuple of Tensors is deprecated and will be removed in "
                      "future versions. This hook will be missing some of the grad_input. "
                      "Please use register_full_backward_hook to get the documented behavior.",
                      FutureWarning, stacklevel=4)
        return
    if not (isinstance(result, Tensor) or (isinstance(result, tuple)
                                           and all(isinstance(r, Tensor) for r in result))):
        warnings.warn("Using non-full backward hooks on a Module that does not return a single "
                      "Tensor or a tuple of Tensors is deprecated and will be removed in future "
                      "versions. This hook will be missing some of the grad_output. Please use "
                      "register_full_backward_hook to get the documented behavior.",
                      FutureWarning, stacklevel=4)
        return
    nexts = {id(n) for n, _ in grad_fn.next_functions if n is not None}
    inputs = {id(a.grad_fn) for a in args if a.grad_fn is not None}
    if nexts != inputs:
        warnings.warn("Using a non-full backward hook when the forward contains multiple "
                      "autograd Nodes is deprecated and will be removed in future versions. "
                      "This hook will be missing some grad_input. Please use "
                      "register_full_backward_hook to get the documented behavior.",
                      FutureWarning, stacklevel=4)
