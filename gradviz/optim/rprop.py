"""``gradviz.optim.Rprop``: resilient backpropagation, with PyTorch's update formula."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz.optim.optimizer import Optimizer, ParamsT, _scalar, _scalar_step_dtype
from gradviz.tensor import Tensor

__all__ = ["Rprop"]


class Rprop(Optimizer):
    r"""Rprop: each entry of each parameter has its own step size, which grows while the
    gradient keeps its sign and shrinks when it flips; only the gradient's *sign* moves the
    parameter. PyTorch's update for each parameter ``p``:

    .. code-block:: text

        g = grad (or -grad with maximize)
        where g * prev > 0:  step_size = min(step_size * etaplus,  step_size_max)
        where g * prev < 0:  step_size = max(step_size * etaminus, step_size_min);  g = 0
        (elsewhere the step size stays)
        p = p - sign(g) * step_size
        prev = g

    ``lr`` is only the starting step size of every entry (``step_size`` in the state); a
    scheduler changing ``group["lr"]`` later does not reach the sizes already in the state.

    Args:
        params: the tensors to optimize (or parameter groups).
        lr: the initial step size (default 1e-2).
        etas: ``(etaminus, etaplus)``, the factors shrinking and growing the step sizes
            (default (0.5, 1.2)); ``0 < etaminus < 1 < etaplus``.
        step_sizes: ``(step_size_min, step_size_max)``, the bounds of the step sizes
            (default (1e-6, 50)).
        maximize: maximize the objective instead of minimizing it.

    Example:
        >>> import gradviz
        >>> from gradviz import optim
        >>> w = gradviz.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = optim.Rprop([w], lr=0.1)
        >>> for _ in range(2):
        ...     opt.zero_grad(); (w * w).sum().backward(); opt.step()
        >>> w  # 0.1, then 0.1 * 1.2 towards 0
        tensor([ 0.7800, -1.7800], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        lr = _scalar(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        if differentiable or capturable:
            raise NotImplementedError("gradviz's optimizers are neither differentiable nor "
                                      "capturable")
        # foreach selects PyTorch kernels computing the same formula; accepted, unused.
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
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
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        for p in params:
            x = p._data
            g = p._grad._data  # a leaf's .grad (see Optimizer.step)
            g = -g if group["maximize"] else g
            state = self.state[p]
            if not state:
                state["step"] = Tensor._make(np.zeros((), dtype=_scalar_step_dtype()))
                state["prev"] = Tensor._make(np.zeros_like(x))
                state["step_size"] = Tensor._make(np.full_like(x, _scalar(group["lr"])))
            state["step"]._data += 1
            prev, step_size = state["prev"]._data, state["step_size"]._data
            # The factor per entry, as PyTorch builds it: sign(g * prev) with +1 -> etaplus,
            # -1 -> etaminus, 0 (a zero gradient, or the first step) -> 1.
            factor = np.sign(g * prev)
            flipped = factor < 0
            factor[factor > 0] = etaplus
            factor[flipped] = etaminus
            factor[factor == 0] = 1
            step_size *= factor
            np.clip(step_size, step_size_min, step_size_max, out=step_size)
            # After a sign flip the entry pauses for one step (and the next step does not
            # count it as a flip again): its gradient is taken as 0.
            g = g.copy()
            g[flipped] = 0
            x -= np.sign(g) * step_size
            prev[...] = g
