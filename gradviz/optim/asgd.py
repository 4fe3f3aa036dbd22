"""``gradviz.optim.ASGD``: averaged stochastic gradient descent, with PyTorch's update formula."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz.optim.optimizer import Optimizer, ParamsT, _scalar, _scalar_step_dtype
from gradviz.tensor import Tensor

__all__ = ["ASGD"]


class ASGD(Optimizer):
    r"""Averaged SGD (Polyak and Juditsky): plain SGD steps with a decaying rate, and beside
    them ``ax``, a running average of the parameter from step ``t0`` on (read it to evaluate
    the averaged model). PyTorch's update for each parameter ``p`` at step ``t`` (from 1):

    .. code-block:: text

        g = grad (or -grad with maximize) + weight_decay * p
        p = p * (1 - lambd * eta)
        p = p - eta * g
        ax = p                  while mu == 1 (up to step t0 + 1)
        ax = ax + (p - ax) * mu  afterwards
        eta = lr / (1 + lambd * lr * t) ** alpha
        mu = 1 / max(1, t - t0)

    ``eta`` and ``mu`` are 0-dim tensors of the state with ``step``'s dtype (float32 unless the
    default dtype is float64), so their values are rounded to it, as in PyTorch.

    Args:
        params: the tensors to optimize (or parameter groups).
        lr: learning rate (default 1e-2).
        lambd: decay term (default 1e-4).
        alpha: power of the rate's decay (default 0.75).
        t0: the step from which averaging starts (default 1e6).
        weight_decay: L2 penalty added to the gradient (default 0).
        maximize: maximize the objective instead of minimizing it.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> w = gradviz.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = optim.ASGD([w], lr=0.1, lambd=0.0, t0=1)
        >>> for _ in range(4):
        ...     opt.zero_grad(); (w * w).sum().backward(); opt.step()
        >>> w, opt.state[w]["ax"]  # ax: the average of p after steps 3 and 4
        (tensor([ 0.4096, -0.8192], requires_grad=True), tensor([ 0.4608, -0.9216]))
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        lr = _scalar(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if differentiable or capturable:
            raise NotImplementedError("gradviz's optimizers are neither differentiable nor "
                                      "capturable")
        # foreach selects PyTorch kernels computing the same formula; accepted, unused.
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:  # the keys torch fills in, in its order
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        lr, lambd, alpha = _scalar(group["lr"]), group["lambd"], group["alpha"]
        t0, weight_decay = group["t0"], group["weight_decay"]
        scalar = _scalar_step_dtype()
        for p in params:
            x = p._data
            g = p._grad._data  # a leaf's .grad (see Optimizer.step)
            g = -g if group["maximize"] else g
            state = self.state[p]
            if not state:
                state["step"] = Tensor._make(np.zeros((), dtype=scalar))
                state["eta"] = Tensor._make(np.array(lr, dtype=scalar))
                state["mu"] = Tensor._make(np.ones((), dtype=scalar))
                state["ax"] = Tensor._make(np.zeros_like(x))
            step_t, eta_t, mu_t = state["step"]._data, state["eta"]._data, state["mu"]._data
            step_t += 1
            if weight_decay != 0:
                g = g + weight_decay * x
            eta = float(eta_t)  # the rounded value the state holds
            x *= 1 - lambd * eta
            x += -eta * g
            ax = state["ax"]._data
            mu = float(mu_t)
            if mu != 1:
                ax += (x - ax) * mu
            else:
                ax[...] = x  # before averaging starts, ax just follows p
            step = float(step_t)
            # rounded to the scalar dtype even where a loaded state holds them in the
            # parameter's dtype (PyTorch makes each a new tensor of the default dtype first)
            eta_t[...] = np.array(lr / ((1 + lambd * lr * step) ** alpha), dtype=scalar)
            mu_t[...] = np.array(1 / max(1, step - t0), dtype=scalar)
