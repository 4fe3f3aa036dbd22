"""Activation modules: ``ReLU``, ``LeakyReLU``, ``ELU``, ``SiLU``, ``GELU``, ``Softplus``,
``Tanh``, ``Sigmoid``, ``Softmax``, ``LogSoftmax``."""

from __future__ import annotations

from gradviz.nn import functional as F
from gradviz.nn.modules.module import Module
from gradviz.ops import functional as _ops
from gradviz.tensor import Tensor

__all__ = ["ReLU", "LeakyReLU", "ELU", "SiLU", "GELU", "Softplus", "Tanh", "Sigmoid", "Softmax",
           "LogSoftmax"]


class ReLU(Module):
    """Elementwise ``max(x, 0)``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.ReLU()(gradviz.tensor([-1.0, 2.0]))
        tensor([0., 2.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """Elementwise ``x`` for positive ``x``, else ``negative_slope * x``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.LeakyReLU(0.1)(gradviz.tensor([-1.0, 2.0]))
        tensor([-0.1000,  2.0000])
    """

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                          else "")


class ELU(Module):
    """Elementwise ``x`` for positive ``x``, else ``alpha * (exp(x) - 1)``.

    Example:
        >>> from gradviz import nn
        >>> nn.ELU()
        ELU(alpha=1.0)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class SiLU(Module):
    """Elementwise ``x * sigmoid(x)`` (also called swish).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.SiLU()(gradviz.zeros(2))
        tensor([0., 0.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Softplus(Module):
    """Elementwise ``log(1 + exp(beta * x)) / beta``, linear above ``threshold``.

    Example:
        >>> from gradviz import nn
        >>> nn.Softplus()
        Softplus(beta=1.0, threshold=20.0)
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Tanh(Module):
    """Elementwise hyperbolic tangent.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.Tanh()(gradviz.zeros(2))
        tensor([0., 0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return _ops.tanh(input)


class Sigmoid(Module):
    """Elementwise logistic function ``1 / (1 + exp(-x))``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.Sigmoid()(gradviz.zeros(2))
        tensor([0.5000, 0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return _ops.sigmoid(input)


class GELU(Module):
    """Gaussian Error Linear Unit, exact (``approximate='none'``) or with the tanh formula
    (``approximate='tanh'``).

    Example:
        >>> from gradviz import nn
        >>> nn.GELU()
        GELU(approximate='none')
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softmax(Module):
    """Softmax along ``dim``: values in ``(0, 1)`` that sum to 1.

    Example:
        >>> from gradviz import nn
        >>> nn.Softmax(dim=1)
        Softmax(dim=1)
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """Logarithm of the softmax along ``dim`` (computed stably).

    Example:
        >>> from gradviz import nn
        >>> nn.LogSoftmax(dim=-1)
        LogSoftmax(dim=-1)
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
