"""``gradviz.optim.NAdam``, with PyTorch's update formula."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz.optim.optimizer import (
    Optimizer,
    ParamsT,
    _check_adam_args,
    _lerp_,
    _scalar,
    _scalar_step_dtype,
)
from gradviz.tensor import Tensor

__all__ = ["NAdam"]


class NAdam(Optimizer):
    r"""NAdam (Adam with Nesterov momentum), with PyTorch's update for each parameter ``p`` at
    step ``t`` (from 1):

    .. code-block:: text

        g = grad (or -grad with maximize)
        NAdamW (decoupled decay): p = p * (1 - lr * weight_decay)
        otherwise:                g = g + weight_decay * p
        mu_t = beta1 * (1 - 0.5 * 0.96**(t * momentum_decay))
        mu_product = mu_product * mu_t                   (state, starts at 1)
        m = beta1 * m + (1 - beta1) * g                  (exp_avg)
        v = beta2 * v + (1 - beta2) * g * g              (exp_avg_sq)
        d = sqrt(v / (1 - beta2**t)) + eps
        p = p - lr * (1 - mu_t) / (1 - mu_product) * g / d
              - lr * mu_{t+1} / (1 - mu_product * mu_{t+1}) * m / d

    ``mu_product`` is a 0-dim tensor in the dtype of ``step`` (float32 unless the default
    dtype is float64), as in PyTorch, so its rounding is PyTorch's too.

    Args:
        params: the tensors to optimize (or parameter groups).
        lr: learning rate (default 2e-3).
        betas: decay rates of the first and second moment averages (default (0.9, 0.999)).
        eps: added to the denominator for stability (default 1e-8).
        weight_decay: weight decay (default 0).
        momentum_decay: how fast ``mu_t`` approaches ``beta1`` (default 4e-3).
        decoupled_weight_decay: decay the weights directly, as AdamW does.
        maximize: maximize the objective instead of minimizing it.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> w = gradviz.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = optim.NAdam([w], lr=0.1)
        >>> (w * w).sum().backward(); opt.step()
        >>> sorted(opt.state[w]), opt.state[w]["mu_product"]
        (['exp_avg', 'exp_avg_sq', 'mu_product', 'step'], tensor(0.4501))
    """

    def __init__(self, params: ParamsT, lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        lr = _check_adam_args(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        if differentiable or capturable:
            raise NotImplementedError("gradviz's optimizers are neither differentiable nor "
                                      "capturable")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:  # the keys torch fills in, in its order
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        lr = _scalar(group["lr"])
        beta1, beta2 = group["betas"]
        eps, weight_decay = group["eps"], group["weight_decay"]
        momentum_decay = group["momentum_decay"]
        for p in params:
            x = p._data
            g = p._grad._data  # a leaf's .grad (see Optimizer.step)
            g = -g if group["maximize"] else g
            state = self.state[p]
            if not state:
                state["step"] = Tensor._make(np.zeros((), dtype=_scalar_step_dtype()))
                state["mu_product"] = Tensor._make(np.ones((), dtype=_scalar_step_dtype()))
                state["exp_avg"] = Tensor._make(np.zeros_like(x))
                state["exp_avg_sq"] = Tensor._make(np.zeros_like(x))
            step_t, mu_product = state["step"], state["mu_product"]
            step_t._data += 1
            step = float(step_t._data)
            bias_correction2 = 1 - beta2**step
            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    x *= 1 - lr * weight_decay
                else:
                    g = g + weight_decay * x
            mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
            mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
            mu_product._data *= mu  # in the step dtype, as PyTorch's 0-dim tensor
            mu_prod = float(mu_product._data)
            m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
            _lerp_(m, g, 1 - beta1)
            v *= beta2
            v += (1 - beta2) * g * g
            denom = np.sqrt(v / bias_correction2)
            denom += eps
            x += (-lr * (1.0 - mu) / (1.0 - mu_prod)) * (g / denom)
            x += (-lr * mu_next / (1.0 - mu_prod * mu_next)) * (m / denom)
