"""``gradviz.optim.Adadelta``, with PyTorch's update formula."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz.optim.optimizer import (
    Optimizer,
    ParamsT,
    _fresh_state,
    _scalar,
)
from gradviz.tensor import Tensor

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Adadelta, with PyTorch's update for each parameter ``p``:

    .. code-block:: text

        g = grad (or -grad with maximize) + weight_decay * p
        v = rho * v + (1 - rho) * g * g                       (square_avg)
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta               (acc_delta)
        p = p - lr * delta

    Args:
        params: the tensors to optimize (or parameter groups).
        lr: scales the step (default 1.0).
        rho: decay rate of both running averages (default 0.9).
        eps: added inside both square roots (default 1e-6).
        weight_decay: L2 penalty added to the gradient (default 0).
        maximize: maximize the objective instead of minimizing it.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> w = gradviz.tensor([1.0, -2.0], dtype=gradviz.float64, requires_grad=True)
        >>> opt = optim.Adadelta([w])
        >>> (w * w).sum().backward(); opt.step()
        >>> sorted(opt.state[w])
        ['acc_delta', 'square_avg', 'step']
        >>> w
        tensor([ 0.9968, -1.9968], dtype=gradviz.float64, requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        lr = _scalar(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if differentiable or capturable:
            raise NotImplementedError("gradviz's optimizers are neither differentiable nor "
                                      "capturable")
        # foreach selects a PyTorch kernel computing the same formula; accepted, unused.
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:  # the keys torch fills in, in its order
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        lr, rho = _scalar(group["lr"]), group["rho"]
        eps, weight_decay = group["eps"], group["weight_decay"]
        for p in params:
            x = p._data
            g = p._grad._data  # a leaf's .grad (see Optimizer.step)
            state = self.state[p]
            if not state:
                _fresh_state(state, x, "square_avg", "acc_delta")
            state["step"]._data += 1
            g = -g if group["maximize"] else g
            if weight_decay != 0:
                g = g + weight_decay * x
            v, u = state["square_avg"]._data, state["acc_delta"]._data
            v *= rho
            v += (1 - rho) * g * g
            std = np.sqrt(v + eps)
            delta = np.sqrt(u + eps)
            delta /= std
            delta *= g
            u *= rho
            u += (1 - rho) * delta * delta
            x += -lr * delta
