"""``gradviz.optim.RMSprop``, with PyTorch's update formula."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz.optim.optimizer import Optimizer, ParamsT, _scalar, _scalar_step_dtype
from gradviz.tensor import Tensor

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""RMSprop, with PyTorch's update for each parameter ``p``:

    .. code-block:: text

        g = grad (or -grad with maximize) + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        if centered:  a = alpha * a + (1 - alpha) * g;  d = sqrt(v - a * a) + eps
        else:         d = sqrt(v) + eps
        if momentum:  b = momentum * b + g / d;  p = p - lr * b
        else:         p = p - lr * g / d

    Args:
        params: the tensors to optimize (or parameter groups).
        lr: learning rate (default 1e-2).
        alpha: smoothing constant of the squared-gradient average (default 0.99).
        eps: added to the denominator (default 1e-8).
        weight_decay: L2 penalty (default 0).
        momentum: momentum factor (default 0).
        centered: divide by the gradient's estimated variance instead of its mean square.
        maximize: maximize the objective instead of minimizing it.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> w = gradviz.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = optim.RMSprop([w], lr=0.01)
        >>> opt.zero_grad(); (w * w).sum().backward(); opt.step()
        >>> w
        tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        lr = _scalar(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        if differentiable or capturable:
            raise NotImplementedError("gradviz's optimizers are neither differentiable nor "
                                      "capturable")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:  # the keys torch fills in, in its order
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        lr, alpha, eps = _scalar(group["lr"]), group["alpha"], group["eps"]
        momentum, weight_decay = group["momentum"], group["weight_decay"]
        for p in params:
            x = p._data
            g = p.grad._data
            g = -g if group["maximize"] else g
            state = self.state[p]
            if not state:
                state["step"] = Tensor._make(np.zeros((), dtype=_scalar_step_dtype()))
                state["square_avg"] = Tensor._make(np.zeros_like(x))
                if momentum > 0:
                    state["momentum_buffer"] = Tensor._make(np.zeros_like(x))
                if group["centered"]:
                    state["grad_avg"] = Tensor._make(np.zeros_like(x))
            state["step"]._data += 1
            if weight_decay != 0:
                g = g + weight_decay * x
            v = state["square_avg"]._data
            v *= alpha
            v += (1 - alpha) * g * g
            if group["centered"]:
                a = state["grad_avg"]._data
                a += (1 - alpha) * (g - a)  # lerp towards g
                avg = np.sqrt(v - a * a)
            else:
                avg = np.sqrt(v)
            avg += eps
            if momentum > 0:
                b = state["momentum_buffer"]._data
                b *= momentum
                b += g / avg
                x -= lr * b
            else:
                x -= lr * (g / avg)
