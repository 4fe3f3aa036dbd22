"""``InstanceNorm1d`` and ``InstanceNorm2d`` (as in ``torch/nn/modules/instancenorm.py``)."""

from __future__ import annotations

import warnings

from gradviz.nn import functional as F
from gradviz.nn.modules.batchnorm import _BatchNorm
from gradviz.tensor import Tensor

__all__ = ["InstanceNorm1d", "InstanceNorm2d"]


class _InstanceNorm(_BatchNorm):
    """PyTorch's ``_InstanceNorm``: the parameters and buffers of batch norm (``affine`` and
    ``track_running_stats`` off by default), each (sample, channel) normalized by its own
    statistics (``F.instance_norm``) unless evaluating with running statistics; an input
    without the batch dimension is unsqueezed, normalized and squeezed."""

    _no_batch_dim = 0  # the input's dimensions without the batch one

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in self._dims:
            raise ValueError(f"expected {self._dims_text} input (got {input.ndim}D input)")

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                               self.bias, self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.ndim - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          "can silence this warning by not passing in num_features, which is "
                          "not used because affine=False", stacklevel=2)
        if input.ndim == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization over (N, C, L) or (C, L) inputs.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.InstanceNorm1d(3)
        >>> m.affine, m.track_running_stats, m.weight, m.running_mean
        (False, False, None, None)
        >>> m(gradviz.rand(2, 3, 5)).shape
        gradviz.Size([2, 3, 5])
    """

    _dims, _dims_text, _no_batch_dim = (2, 3), "2D or 3D", 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization over (N, C, H, W) or (C, H, W) inputs.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.InstanceNorm2d(2, affine=True)
        >>> m(gradviz.rand(1, 2, 3, 3)).shape
        gradviz.Size([1, 2, 3, 3])
    """

    _dims, _dims_text, _no_batch_dim = (3, 4), "3D or 4D", 3
