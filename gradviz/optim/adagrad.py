"""``gradviz.optim.Adagrad``, with PyTorch's update formula."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz.optim.optimizer import Optimizer, ParamsT, _scalar, _scalar_step_dtype
from gradviz.tensor import Tensor

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Adagrad, with PyTorch's update for each parameter ``p`` at step ``t`` (from 1):

    .. code-block:: text

        g = grad (or -grad with maximize) + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        sum = sum + g * g                      (sum starts at initial_accumulator_value)
        p = p - clr * g / (sqrt(sum) + eps)

    Unlike the other optimizers, Adagrad creates its state (``step`` and ``sum``) for every
    parameter when it is constructed, as PyTorch does, so ``state_dict()`` lists them before the
    first step.

    Args:
        params: the tensors to optimize (or parameter groups).
        lr: learning rate (default 1e-2).
        lr_decay: learning rate decay per step (default 0).
        weight_decay: L2 penalty added to the gradient (default 0).
        initial_accumulator_value: the starting value of the sum of squared gradients
            (default 0).
        eps: added to the denominator for stability (default 1e-10).
        maximize: maximize the objective instead of minimizing it.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> w = gradviz.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = optim.Adagrad([w], lr=0.5)
        >>> sorted(opt.state[w])
        ['step', 'sum']
        >>> (w * w).sum().backward(); opt.step(); w
        tensor([ 0.5000, -1.5000], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        lr = _scalar(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if differentiable:
            raise NotImplementedError("gradviz's optimizers are not differentiable")
        # foreach/fused select PyTorch kernels computing the same formula; accepted, unused.
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p)

    def _init_state(self, p: Tensor) -> None:
        # PyTorch fills every sum with the *constructor's* value (self.defaults), even for a
        # group that gives its own initial_accumulator_value.
        state = self.state[p]
        state["step"] = Tensor._make(np.zeros((), dtype=_scalar_step_dtype()))
        state["sum"] = Tensor._make(
            np.full_like(p._data, self.defaults["initial_accumulator_value"]))

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:  # the keys torch fills in, in its order
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        lr, lr_decay = _scalar(group["lr"]), group["lr_decay"]
        eps, weight_decay = group["eps"], group["weight_decay"]
        for p in params:
            x = p._data
            g = p._grad._data  # a leaf's .grad (see Optimizer.step)
            if not self.state[p]:  # a parameter of a group added after construction
                self._init_state(p)
            state = self.state[p]
            step_t = state["step"]
            step_t._data += 1
            step = float(step_t._data)
            g = -g if group["maximize"] else g
            if weight_decay != 0:
                g = g + weight_decay * x
            clr = lr / (1 + (step - 1) * lr_decay)
            s = state["sum"]._data
            s += g * g
            std = np.sqrt(s)
            std += eps
            x += -clr * (g / std)
