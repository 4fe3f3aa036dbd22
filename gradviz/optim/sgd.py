"""``gradviz.optim.SGD``: stochastic gradient descent with momentum, as ``torch.optim.SGD``."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz.optim.optimizer import Optimizer, ParamsT, _scalar
from gradviz.tensor import Tensor

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent, with PyTorch's update for each parameter ``p``:

    .. code-block:: text

        g = grad (or -grad with maximize) + weight_decay * p
        if momentum:  b = g on the first step, else b = momentum * b + (1 - dampening) * g
                      g = g + momentum * b  if nesterov  else  b
        p = p - lr * g

    Args:
        params: the tensors to optimize (or parameter groups).
        lr: learning rate (default 1e-3).
        momentum: momentum factor (default 0).
        dampening: dampening of the momentum (default 0).
        weight_decay: L2 penalty (default 0).
        nesterov: Nesterov momentum (needs ``momentum > 0`` and ``dampening == 0``).
        maximize: maximize the objective instead of minimizing it.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> w = gradviz.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = optim.SGD([w], lr=0.1, momentum=0.9)
        >>> for _ in range(2):
        ...     opt.zero_grad(); (w * w).sum().backward(); opt.step()
        >>> w
        tensor([ 0.4600, -0.9200], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        lr = _scalar(lr)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if differentiable:
            raise NotImplementedError("gradviz's optimizers are not differentiable")
        # foreach/fused select PyTorch kernels computing the same formula; accepted, unused.
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:  # the keys torch fills in, in its order
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        lr = _scalar(group["lr"])
        momentum, dampening = group["momentum"], group["dampening"]
        weight_decay, nesterov = group["weight_decay"], group["nesterov"]
        maximize = group["maximize"]
        for p in params:
            x = p._data
            g = p._grad._data  # a leaf's .grad (see Optimizer.step)
            g = -g if maximize else g
            if weight_decay != 0:
                g = g + weight_decay * x
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = Tensor._make(np.array(g, dtype=x.dtype))
                else:
                    b = buf._data
                    b *= momentum
                    b += (1 - dampening) * g
                g = g + momentum * buf._data if nesterov else buf._data
            x += -lr * g
