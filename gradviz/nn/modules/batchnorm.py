"""``BatchNorm1d`` and ``BatchNorm2d``."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz import _dtype as _dt
from gradviz import _factories
from gradviz.nn import functional as F
from gradviz.nn import init
from gradviz.nn.modules.module import Module, _factory_dtype, _on_device
from gradviz.nn.parameter import Parameter
from gradviz.tensor import Tensor

__all__ = ["BatchNorm1d", "BatchNorm2d"]


class _BatchNorm(Module):
    """PyTorch's ``_BatchNorm``: ``weight`` (ones) and ``bias`` (zeros) when ``affine``; the
    buffers ``running_mean`` (zeros), ``running_var`` (ones) and ``num_batches_tracked`` when
    ``track_running_stats``. Training normalizes by the batch and updates the buffers
    (``momentum=None``: a cumulative average); evaluation normalizes by the buffers.
    ``bias=False`` (keyword-only, PyTorch 2.13) keeps the weight but drops the shift."""

    _dims: tuple[int, ...] = ()  # the input dimensions a subclass takes
    _dims_text = ""  # ... as PyTorch's error names them

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: _dt.dtype | None = None, *, bias: bool = True) -> None:
        super().__init__()
        dt = _factory_dtype(device, dtype)
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(_factories.empty(num_features, dtype=dt))
            if bias:
                self.bias = Parameter(_factories.empty(num_features, dtype=dt))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _factories.zeros(num_features, dtype=dt))
            self.register_buffer("running_var", _factories.ones(num_features, dtype=dt))
            self.register_buffer("num_batches_tracked", Tensor._make(np.array(0, np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        _on_device(self, device)  # device="meta": its tensors become meta
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean to zeros, running variance to ones, the batch count to 0."""
        if self.track_running_stats and not self.running_mean.is_meta:  # meta: no values
            self.running_mean._data[...] = 0
            self.running_var._data[...] = 1
            self.num_batches_tracked._data[...] = 0

    def reset_parameters(self) -> None:
        """Reset the running statistics; ``weight`` to ones, ``bias`` to zeros."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in self._dims:
            raise ValueError(f"expected {self._dims_text} input (got {input.ndim}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = (1.0 / float(self.num_batches_tracked.item()) if self.momentum is None
                      else self.momentum)
        # Evaluation without running statistics normalizes by the batch, as PyTorch does.
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_stats else None,
                            self.running_var if use_stats else None, self.weight, self.bias,
                            bn_training, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization over (N, C) or (N, C, L) inputs, per channel C.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> bn = nn.BatchNorm1d(3); bn
        BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
        >>> list(bn.state_dict())
        ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
    """

    _dims, _dims_text = (2, 3), "2D or 3D"


class BatchNorm2d(_BatchNorm):
    """Batch normalization over (N, C, H, W) inputs, per channel C.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> bn = nn.BatchNorm2d(2)
        >>> y = bn(gradviz.randn(4, 2, 3, 3)); bn.num_batches_tracked
        tensor(1)
    """

    _dims, _dims_text = (4,), "4D"
