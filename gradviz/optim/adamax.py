"""``gradviz.optim.Adamax``, with PyTorch's update formula."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz.optim.optimizer import (
    Optimizer,
    ParamsT,
    _check_adam_args,
    _fresh_state,
    _lerp_,
    _scalar,
)
from gradviz.tensor import Tensor

__all__ = ["Adamax"]


class Adamax(Optimizer):
    r"""Adamax (Adam with the infinity norm), with PyTorch's update for each parameter ``p`` at
    step ``t`` (from 1):

    .. code-block:: text

        g = grad (or -grad with maximize) + weight_decay * p
        m = beta1 * m + (1 - beta1) * g                      (exp_avg, as m.lerp_(g, 1 - beta1))
        u = max(beta2 * u, |g| + eps)                        (exp_inf)
        p = p - lr / (1 - beta1**t) * m / u

    Args:
        params: the tensors to optimize (or parameter groups).
        lr: learning rate (default 2e-3).
        betas: decay rates of the average and of the infinity norm (default (0.9, 0.999)).
        eps: added to ``|g|`` for stability (default 1e-8).
        weight_decay: L2 penalty added to the gradient (default 0).
        maximize: maximize the objective instead of minimizing it.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> w = gradviz.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = optim.Adamax([w], lr=0.1)
        >>> (w * w).sum().backward(); opt.step()
        >>> sorted(opt.state[w]), w
        (['exp_avg', 'exp_inf', 'step'], tensor([ 0.9000, -1.9000], requires_grad=True))
    """

    def __init__(self, params: ParamsT, lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        lr = _check_adam_args(lr, eps, betas, weight_decay)
        if differentiable or capturable:
            raise NotImplementedError("gradviz's optimizers are neither differentiable nor "
                                      "capturable")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:  # the keys torch fills in, in its order
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        lr = _scalar(group["lr"])
        beta1, beta2 = group["betas"]
        eps, weight_decay = group["eps"], group["weight_decay"]
        for p in params:
            x = p._data
            g = p._grad._data  # a leaf's .grad (see Optimizer.step)
            g = -g if group["maximize"] else g
            state = self.state[p]
            if not state:
                _fresh_state(state, x, "exp_avg", "exp_inf")
            step_t = state["step"]
            step_t._data += 1
            if weight_decay != 0:
                g = g + weight_decay * x
            m, u = state["exp_avg"]._data, state["exp_inf"]._data
            _lerp_(m, g, 1 - beta1)
            u *= beta2
            np.maximum(u, np.abs(g) + eps, out=u)
            clr = lr / (1 - beta1 ** float(step_t._data))
            x += -clr * (m / u)
