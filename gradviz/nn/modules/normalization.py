"""``LayerNorm``."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

from gradviz import _dtype as _dt
from gradviz import _factories
from gradviz.nn import functional as F
from gradviz.nn import init
from gradviz.nn.modules.module import Module, _factory_dtype, _on_device
from gradviz.nn.parameter import Parameter
from gradviz.tensor import Tensor

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm"]


def _affine_parameters(module: Module, shape: Any, affine: bool, bias: bool,
                       dt: _dt.dtype) -> None:
    """``module.weight`` and ``module.bias`` of ``shape`` (uninitialised; ``bias=False``: no
    bias), or both registered as None without ``affine``: LayerNorm's and GroupNorm's."""
    if affine:
        module.weight = Parameter(_factories.empty(shape, dtype=dt))
        if bias:
            module.bias = Parameter(_factories.empty(shape, dtype=dt))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(module: Module, affine: bool) -> None:
    """``weight`` to ones, ``bias`` (if any) to zeros."""
    if affine:
        init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)


class LayerNorm(Module):
    """Normalise over the last ``len(normalized_shape)`` dimensions to zero mean and unit
    variance (biased), then scale by ``weight`` (ones) and shift by ``bias`` (zeros).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> ln = nn.LayerNorm(4); ln
        LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
        >>> ln(gradviz.rand(2, 4)).shape
        gradviz.Size([2, 4])
    """

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        super().__init__()
        dt = _factory_dtype(device, dtype)
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (int(normalized_shape),)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, dt)
        _on_device(self, device)  # device="meta": its tensors become meta
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """``weight`` to ones, ``bias`` to zeros."""
        _reset_affine(self, self.elementwise_affine)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalise each sample's channels in ``num_groups`` groups (``F.group_norm``), then
    scale by ``weight`` (ones) and shift by ``bias`` (zeros) per channel when ``affine``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> gn = nn.GroupNorm(2, 4); gn
        GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
        >>> gn(gradviz.rand(3, 4, 5)).shape
        gradviz.Size([3, 4, 5])
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        dt = _factory_dtype(device, dtype)
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        _affine_parameters(self, (num_channels,), affine, bias, dt)
        _on_device(self, device)  # device="meta": its tensors become meta
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """``weight`` to ones, ``bias`` to zeros."""
        _reset_affine(self, self.affine)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """Divide by the root mean square over the last ``len(normalized_shape)`` dimensions
    (``F.rms_norm``; ``eps=None``: the dtype's machine epsilon), then scale by ``weight``
    (ones) when ``elementwise_affine``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> rms = nn.RMSNorm(4); rms
        RMSNorm((4,), eps=None, elementwise_affine=True)
        >>> rms(gradviz.rand(2, 4)).shape
        gradviz.Size([2, 4])
    """

    def __init__(self, normalized_shape: int | Sequence[int], eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        super().__init__()
        dt = _factory_dtype(device, dtype)
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (int(normalized_shape),)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_factories.empty(self.normalized_shape, dtype=dt))
        else:
            self.register_parameter("weight", None)
        _on_device(self, device)  # device="meta": its tensors become meta
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """``weight`` to ones."""
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """``F.local_response_norm``: each element divided by a power of its neighbouring
    channels' mean square.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> lrn = nn.LocalResponseNorm(2); lrn
        LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
        >>> lrn(gradviz.ones(1, 3, 2, 2)).shape
        gradviz.Size([1, 3, 2, 2])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
                 ) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
