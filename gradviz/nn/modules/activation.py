"""Activation modules: ``ReLU``, ``LeakyReLU``, ``ELU``, ``SiLU``, ``GELU``, ``Softplus``,
``Tanh``, ``Sigmoid``, ``Softmax``, ``LogSoftmax``."""

from __future__ import annotations

from typing import Any

from gradviz import _dtype as _dt
from gradviz import _factories
from gradviz.nn import functional as F
from gradviz.nn import init as _init
from gradviz.nn.modules.module import Module, _factory_dtype, _on_device
from gradviz.nn.parameter import Parameter
from gradviz.ops import functional as _ops
from gradviz.tensor import Tensor

__all__ = ["ReLU", "Hardtanh", "ReLU6", "LeakyReLU", "PReLU", "ELU", "SELU", "CELU", "GELU",
           "SiLU", "Mish", "Softplus", "Tanh", "Tanhshrink", "Softsign", "Sigmoid", "LogSigmoid",
           "Hardswish", "Hardsigmoid", "Softshrink", "Hardshrink", "Threshold", "GLU", "Softmax",
           "Softmin", "Softmax2d", "LogSoftmax"]


def _inplace_repr(inplace: bool) -> str:
    return "inplace=True" if inplace else ""


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


class Hardtanh(Module):
    """Elementwise ``x`` clamped to ``[min_val, max_val]``.

    Example:
        >>> from gradviz import nn
        >>> nn.Hardtanh()
        Hardtanh(min_val=-1.0, max_val=1.0)
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
                 ) -> None:
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return (f"min_val={self.min_val}, max_val={self.max_val}"
                + (", inplace=True" if self.inplace else ""))


class ReLU6(Hardtanh):
    """Elementwise ``min(max(x, 0), 6)``: a :class:`Hardtanh` from 0.0 to 6.0 (so its node
    saves the floats 0.0 and 6.0, where ``F.relu6`` saves the ints, as in PyTorch).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.ReLU6()(gradviz.tensor([-1.0, 8.0]))
        tensor([0., 6.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


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


class PReLU(Module):
    """``x`` for positive ``x``, else ``weight * x``: a learnt slope, one for all channels or
    one per channel (``num_parameters``), initialised to ``init``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> m = nn.PReLU(3)
        >>> m, m.weight.shape
        (PReLU(num_parameters=3), gradviz.Size([3]))
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(_factories.empty(num_parameters,
                                                 dtype=_factory_dtype(device, dtype)))
        _on_device(self, device)  # device="meta": its tensors become meta
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Fill the slopes with ``init`` again."""
        _init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


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


class SELU(Module):
    """Elementwise ``scale * elu(x, alpha)`` with SELU's fixed constants.

    Example:
        >>> from gradviz import nn
        >>> nn.SELU(inplace=True)
        SELU(inplace=True)
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.selu(input, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class CELU(Module):
    """Elementwise ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Example:
        >>> from gradviz import nn
        >>> nn.CELU(0.5)
        CELU(alpha=0.5)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


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


class Mish(Module):
    """Elementwise ``x * tanh(softplus(x))``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.Mish()(gradviz.zeros(2))
        tensor([0., 0.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


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


class Tanhshrink(Module):
    """Elementwise ``x - tanh(x)``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.Tanhshrink()(gradviz.zeros(1))
        tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input)


class Softsign(Module):
    """Elementwise ``x / (1 + |x|)``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.Softsign()(gradviz.tensor([1.0]))
        tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


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


class LogSigmoid(Module):
    """Elementwise ``log(sigmoid(x))``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.LogSigmoid()(gradviz.tensor([0.0]))
        tensor([-0.6931])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class Hardswish(Module):
    """Elementwise ``x * relu6(x + 3) / 6`` (its repr shows no ``inplace``, as PyTorch's).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.Hardswish()(gradviz.tensor([4.0]))
        tensor([4.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardswish(input, self.inplace)


class Hardsigmoid(Module):
    """Elementwise ``relu6(x + 3) / 6`` (its repr shows no ``inplace``, as PyTorch's).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.Hardsigmoid()(gradviz.tensor([0.0]))
        tensor([0.5000])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardsigmoid(input, self.inplace)


class Softshrink(Module):
    """Elementwise shrink towards 0 by ``lambd`` (0 inside ``[-lambd, lambd]``).

    Example:
        >>> from gradviz import nn
        >>> nn.Softshrink()
        Softshrink(0.5)
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Module):
    """Elementwise ``x`` where ``|x| > lambd``, else 0.

    Example:
        >>> from gradviz import nn
        >>> nn.Hardshrink(0.25)
        Hardshrink(0.25)
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Threshold(Module):
    """Elementwise ``x`` where ``x > threshold``, else ``value``.

    Example:
        >>> from gradviz import nn
        >>> nn.Threshold(0.1, 20)
        Threshold(threshold=0.1, value=20)
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return (f"threshold={self.threshold}, value={self.value}"
                + (", inplace=True" if self.inplace else ""))


class GLU(Module):
    """The gated linear unit ``a * sigmoid(b)`` of the two halves of the input along ``dim``.

    Example:
        >>> from gradviz import nn
        >>> nn.GLU()
        GLU(dim=-1)
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


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


class Softmin(Module):
    """Softmin along ``dim``: the softmax of ``-x``.

    Example:
        >>> from gradviz import nn
        >>> nn.Softmin(dim=1)
        Softmin(dim=1)
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels (dimension -3) of each position of a (N, C, H, W) or
    (C, H, W) input (``SoftmaxBackward0``).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.Softmax2d()(gradviz.zeros(2, 1, 1)).flatten()
        tensor([0.5000, 0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)


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
