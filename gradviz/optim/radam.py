"""``gradviz.optim.RAdam``, with PyTorch's update formula."""

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

__all__ = ["RAdam"]


class RAdam(Optimizer):
    r"""RAdam (rectified Adam), with PyTorch's update for each parameter ``p`` at step ``t``
    (from 1):

    .. code-block:: text

        g = grad (or -grad with maximize)
        RAdamW (decoupled decay): p = p * (1 - lr * weight_decay)
        otherwise:                g = g + weight_decay * p
        m = beta1 * m + (1 - beta1) * g                  (exp_avg)
        v = beta2 * v + (1 - beta2) * g * g              (exp_avg_sq)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2**t / (1 - beta2**t)
        m_hat = m / (1 - beta1**t)
        if rho_t > 5:
            r = sqrt((rho_t - 4) (rho_t - 2) rho_inf / ((rho_inf - 4) (rho_inf - 2) rho_t))
            p = p - lr * m_hat * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r
        else:
            p = p - lr * m_hat         (too few steps to trust the variance estimate)

    Args:
        params: the tensors to optimize (or parameter groups).
        lr: learning rate (default 1e-3).
        betas: decay rates of the first and second moment averages (default (0.9, 0.999)).
        eps: added to the denominator for stability (default 1e-8).
        weight_decay: weight decay (default 0).
        decoupled_weight_decay: decay the weights directly, as AdamW does.
        maximize: maximize the objective instead of minimizing it.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> w = gradviz.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = optim.RAdam([w], lr=0.1)
        >>> (w * w).sum().backward(); opt.step(); w  # step 1: rho_t = 1, a plain momentum step
        tensor([ 0.8000, -1.6000], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        lr = _check_adam_args(lr, eps, betas, weight_decay)
        if differentiable or capturable:
            raise NotImplementedError("gradviz's optimizers are neither differentiable nor "
                                      "capturable")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:  # the keys torch fills in, in its order
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
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
                _fresh_state(state, x, "exp_avg", "exp_avg_sq")
            step_t = state["step"]
            step_t._data += 1
            step = float(step_t._data)
            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    x *= 1 - lr * weight_decay
                else:
                    g = g + weight_decay * x
            m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
            _lerp_(m, g, 1 - beta1)
            v *= beta2
            v += (1 - beta2) * g * g
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            m_hat = m / bias_correction1
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
            if rho_t > 5.0:
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                adaptive_lr = bias_correction2**0.5 / (np.sqrt(v) + eps)
                x -= m_hat * lr * adaptive_lr * rect
            else:
                x -= m_hat * lr
