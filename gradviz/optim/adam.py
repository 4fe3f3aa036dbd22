"""``gradviz.optim.Adam`` and ``AdamW``, with PyTorch's update formulas."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz.optim.optimizer import (
    Optimizer,
    ParamsT,
    _check_adam_args,
    _fresh_state,
    _scalar,
)
from gradviz.tensor import Tensor

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    r"""Adam, with PyTorch's update for each parameter ``p`` at step ``t`` (from 1):

    .. code-block:: text

        g = grad (or -grad with maximize)
        AdamW (decoupled decay): p = p * (1 - lr * weight_decay)
        Adam:                    g = g + weight_decay * p
        m = beta1 * m + (1 - beta1) * g        (as m.lerp_(g, 1 - beta1))
        v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v) with amsgrad, and v_max replaces v below
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    Args:
        params: the tensors to optimize (or parameter groups).
        lr: learning rate (default 1e-3).
        betas: decay rates of the first and second moment averages (default (0.9, 0.999)).
        eps: added to the denominator for stability (default 1e-8).
        weight_decay: L2 penalty added to the gradient (default 0).
        amsgrad: use the maximum of the second moments seen so far.
        maximize: maximize the objective instead of minimizing it.
        decoupled_weight_decay: decay the weights directly (this is AdamW).

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> w = gradviz.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = optim.Adam([w], lr=0.1)
        >>> (w * w).sum().backward(); opt.step(); w
        tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        lr = _check_adam_args(lr, eps, betas, weight_decay)
        if differentiable or capturable:
            raise NotImplementedError("gradviz's optimizers are neither differentiable nor "
                                      "capturable")
        # foreach/fused select PyTorch kernels computing the same formula; accepted, unused.
        defaults = {"lr": lr, "betas": (_scalar(betas[0]), _scalar(betas[1])), "eps": eps,
                    "weight_decay": weight_decay, "amsgrad": amsgrad, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:  # the keys torch fills in, in its order
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        lr = _scalar(group["lr"])
        beta1, beta2 = group["betas"]
        eps, weight_decay = group["eps"], group["weight_decay"]
        amsgrad, decoupled = group["amsgrad"], group["decoupled_weight_decay"]
        for p in params:
            x = p._data
            g = p.grad._data
            g = -g if group["maximize"] else g
            state = self.state[p]
            if not state:
                _fresh_state(state, x, "exp_avg", "exp_avg_sq")
                if amsgrad:
                    state["max_exp_avg_sq"] = Tensor._make(np.zeros_like(x))
            step_t = state["step"]
            step_t._data += 1
            if weight_decay != 0:
                if decoupled:
                    x *= 1 - lr * weight_decay
                else:
                    g = g + weight_decay * x
            m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
            # m.lerp_(g, w) with w = 1 - beta1, evaluated as PyTorch's lerp kernel does.
            w = 1 - beta1
            if abs(w) < 0.5:
                m += w * (g - m)
            else:
                m[...] = g - (g - m) * (1 - w)
            v *= beta2
            v += (1 - beta2) * g * g
            step = float(step_t._data)
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            step_size = lr / bias_correction1
            bias_correction2_sqrt = bias_correction2**0.5
            if amsgrad:
                v_max = state["max_exp_avg_sq"]._data
                np.maximum(v_max, v, out=v_max)
                denom = np.sqrt(v_max) / bias_correction2_sqrt + eps
            else:
                denom = np.sqrt(v) / bias_correction2_sqrt + eps
            x += -step_size * (m / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p = p * (1 - lr * weight_decay)`` before the Adam
    step, instead of adding ``weight_decay * p`` to the gradient (default decay 1e-2).

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> w = gradviz.tensor([1.0], requires_grad=True)
        >>> opt = optim.AdamW([w], lr=0.1, weight_decay=0.5)
        >>> (w * 0).sum().backward(); opt.step(); w  # zero gradient: only the decay acts
        tensor([0.9500], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
