"""``gradviz.nn.parallel``: PyTorch's ``torch.nn.parallel`` on a machine without accelerators.

PyTorch's tutorials wrap a model in ``nn.DataParallel(model)`` "in case there are several GPUs".
On a CPU-only build there is nothing to split the batch across, and PyTorch passes every call
through to the wrapped module: gradviz does the same, so the graph is the module's own.

Example:
    >>> import gradviz as torch
    >>> net = torch.nn.DataParallel(torch.nn.Linear(2, 3))
    >>> net(torch.ones(1, 2)).grad_fn.name(), list(net.state_dict())
    ('AddmmBackward0', ['module.weight', 'module.bias'])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gradviz._device import device
from gradviz.nn.modules.module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Wrap ``module``; calls go straight to it, as PyTorch's ``DataParallel`` does without GPUs.

    The wrapped module is ``.module`` (its parameters are named ``module.<name>`` in
    ``state_dict()``), and ``device_ids`` is empty: there is no accelerator to use.

    Args:
        module: the module to run.
        device_ids: the accelerators to split the batch across (none exist: ignored).
        output_device: where to gather the outputs (ignored, as in PyTorch without GPUs).
        dim: the batch dimension to split (ignored).

    Example:
        >>> import gradviz as torch
        >>> lin = torch.nn.Linear(2, 3)
        >>> net = torch.nn.DataParallel(lin)
        >>> net.module is lin, net.device_ids
        (True, [])
    """

    def __init__(self, module: Module, device_ids: Sequence[int | device] | None = None,
                 output_device: int | device | None = None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list[int | device] = []  # no accelerator: PyTorch keeps none either

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
