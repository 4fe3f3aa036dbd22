"""``Identity`` and ``Linear``."""

from __future__ import annotations

import math
from typing import Any

from gradviz import _dtype as _dt
from gradviz import _factories
from gradviz.nn import functional as F
from gradviz.nn import init
from gradviz.nn.modules.module import Module, _factory_dtype, _on_device
from gradviz.nn.parameter import Parameter
from gradviz.tensor import Tensor

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    """Returns its input unchanged (arguments to the constructor are ignored).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.Identity(54, unused="x")(gradviz.ones(2))
        tensor([1., 1.])
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x @ weight.T + bias``, with ``weight`` of shape ``(out_features, in_features)``.

    Initialised as PyTorch does: ``weight`` with ``kaiming_uniform_(a=sqrt(5))``, i.e.
    ``U(-1/sqrt(in_features), 1/sqrt(in_features))``, and ``bias`` from the same range.

    Args:
        in_features: size of each input sample.
        out_features: size of each output sample.
        bias: whether to learn an additive bias (default ``True``).
        dtype: dtype of the parameters (default: the default dtype).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> fc = nn.Linear(2, 3); fc
        Linear(in_features=2, out_features=3, bias=True)
        >>> fc(gradviz.ones(4, 2)).shape
        gradviz.Size([4, 3])
    """

    in_features: int
    out_features: int
    weight: Parameter

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: _dt.dtype | None = None) -> None:
        super().__init__()
        dt = _factory_dtype(device, dtype)
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_factories.empty(out_features, in_features, dtype=dt))
        if bias:
            self.bias = Parameter(_factories.empty(out_features, dtype=dt))
        else:
            self.register_parameter("bias", None)
        _on_device(self, device)  # device="meta": its tensors become meta
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw fresh initial values (PyTorch's scheme, gradviz's generator)."""
        # Same as U(-1/sqrt(in_features), 1/sqrt(in_features)); see pytorch/pytorch#57109.
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """``y = x1^T A x2 + b`` per output feature (``F.bilinear``), with ``weight`` of shape
    (out_features, in1_features, in2_features), both it and ``bias`` drawn from
    ``U(-1/sqrt(in1_features), 1/sqrt(in1_features))`` as PyTorch does.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.Bilinear(2, 3, 4); m
        Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)
        >>> m(gradviz.ones(5, 2), gradviz.ones(5, 3)).shape
        gradviz.Size([5, 4])
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: _dt.dtype | None = None) -> None:
        super().__init__()
        dt = _factory_dtype(device, dtype)
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(_factories.empty(out_features, in1_features, in2_features,
                                                 dtype=dt))
        if bias:
            self.bias = Parameter(_factories.empty(out_features, dtype=dt))
        else:
            self.register_parameter("bias", None)
        _on_device(self, device)  # device="meta": its tensors become meta
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """``U(-1/sqrt(in1_features), 1/sqrt(in1_features))`` for the weight and the bias."""
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
