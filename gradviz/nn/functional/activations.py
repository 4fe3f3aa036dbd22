"""Non-linear activation functions: relu and its relatives, gelu, silu, elu and selu, softplus,
softmax, log_softmax and softmin, hardtanh, mish, prelu, glu, the shrinks, threshold."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from gradviz import _dtype
from gradviz.nn.functional.common import _no_int
from gradviz.ops import functional as _F
from gradviz.ops.derivatives import OPS
from gradviz.ops.dispatch import dispatch, dispatch_inplace, general_dispatch
from gradviz.tensor import Tensor, _is_number, _wrap_dim

__all__ = [
    "relu", "relu_", "sigmoid", "tanh", "gelu", "silu", "leaky_relu", "elu", "softplus", "softmax",
    "log_softmax", "hardtanh", "hardtanh_", "relu6", "selu", "selu_", "celu", "celu_", "mish",
    "prelu", "glu", "hardswish", "hardsigmoid", "logsigmoid", "softsign", "softshrink",
    "hardshrink", "tanhshrink", "threshold", "threshold_", "softmin"
]


sigmoid = _F.sigmoid
tanh = _F.tanh


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)`` (``ReluBackward0``), in place with ``inplace=True``.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.relu(gradviz.tensor([-1.0, 2.0]))
        tensor([0., 2.])
    """
    if inplace:
        return dispatch_inplace(OPS["relu"], input)
    return _F.relu(input)


def relu_(input: Tensor) -> Tensor:
    """In-place :func:`relu`."""
    return dispatch_inplace(OPS["relu"], input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``x * Φ(x)`` with the normal CDF Φ, or its ``tanh`` approximation (``GeluBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.gelu(gradviz.tensor([0.0, 1.0]))
        tensor([0.0000, 0.8413])
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _no_int("gelu", input, "GeluKernelImpl")
    return dispatch(OPS["gelu"], input, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (``SiluBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.silu(gradviz.tensor([0.0]))
        tensor([0.])
    """
    _no_int("silu", input, "silu_cpu")
    if inplace:
        return dispatch_inplace(OPS["silu"], input)
    return dispatch(OPS["silu"], input)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` for positive ``x``, else ``negative_slope * x`` (``LeakyReluBackward0``; in place,
    ``LeakyReluBackward1``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.leaky_relu(gradviz.tensor([-1.0, 2.0]), 0.1)
        tensor([-0.1000,  2.0000])
    """
    if not _is_number(negative_slope):
        raise TypeError("leaky_relu(): argument 'negative_slope' (position 2) must be Number, not "
                        f"{type(negative_slope).__name__}")
    _no_int("leaky_relu", input, "leaky_relu_cpu")
    if inplace:
        return dispatch_inplace(OPS["leaky_relu_"], input, negative_slope=negative_slope)
    return dispatch(OPS["leaky_relu"], input, negative_slope=negative_slope)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` for positive ``x``, else ``alpha * (exp(x) - 1)`` (``EluBackward0``; in place,
    ``EluBackward1``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.elu(gradviz.tensor([0.0, 2.0]))
        tensor([0., 2.])
    """
    _no_int("elu", input, "elu_cpu")
    op = OPS["elu_" if inplace else "elu"]
    run = dispatch_inplace if inplace else dispatch
    return run(op, input, alpha=alpha, scale=1, input_scale=1)


def softplus(input: Tensor, beta: float = 1, threshold: float = 20) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold`` (``SoftplusBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.softplus(gradviz.tensor([0.0]))
        tensor([0.6931])
    """
    _no_int("softplus", input, "softplus_cpu")
    return dispatch(OPS["softplus"], input, beta=beta, threshold=threshold)


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: _dtype.dtype | None = None) -> Tensor:
    """Softmax along ``dim`` (``SoftmaxBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.softmax(gradviz.tensor([[0.0, 0.0]]), dim=1)
        tensor([[0.5000, 0.5000]])
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim, _stacklevel)
    return _F.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: _dtype.dtype | None = None) -> Tensor:
    """Log-softmax along ``dim`` (``LogSoftmaxBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.log_softmax(gradviz.tensor([[0.0, 0.0]]), dim=1)
        tensor([[-0.6931, -0.6931]])
    """
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim, _stacklevel)
    return _F.log_softmax(input, dim, dtype=dtype)


# SELU's constants (Klambauer et al. 2017), as PyTorch writes them into its elu call.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _run(op_name: str, input: Tensor, inplace: bool, **kwargs: Any) -> Tensor:
    """The row ``op_name`` on ``input``, written into it with ``inplace=True``."""
    if inplace:
        return dispatch_inplace(OPS[op_name], input, **kwargs)
    return dispatch(OPS[op_name], input, **kwargs)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
             ) -> Tensor:
    """``input`` clamped to ``[min_val, max_val]`` (``HardtanhBackward0``: the gradient passes
    strictly inside the interval).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.hardtanh(gradviz.tensor([-2.0, 0.5, 3.0]))
        tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _run("hardtanh", input, inplace, min_val=min_val, max_val=max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place :func:`hardtanh`."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(input, 0), 6)``: PyTorch records it as ``hardtanh(input, 0, 6)``
    (``HardtanhBackward0`` with ``min_val=0``, ``max_val=6``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.relu6(gradviz.tensor([-1.0, 3.0, 8.0]))
        tensor([0., 3., 6.])
    """
    return _run("hardtanh", input, inplace, min_val=0, max_val=6)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(input, alpha)`` with SELU's fixed constants, recorded as PyTorch records
    it: ``EluBackward0`` (in place ``EluBackward1``) with ``alpha``, ``scale`` and
    ``input_scale=1`` saved.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.selu(gradviz.tensor([0.0, 1.0]))
        tensor([0.0000, 1.0507])
    """
    _no_int("selu", input, "elu_cpu")
    return _run("elu_" if inplace else "elu", input, inplace, alpha=_SELU_ALPHA,
                scale=_SELU_SCALE, input_scale=1)


def selu_(input: Tensor) -> Tensor:
    """In-place :func:`selu`."""
    return selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (``CeluBackward0``; in place,
    ``CeluBackward1``, which saves the result).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.celu(gradviz.tensor([-1.0, 2.0]), alpha=0.5)
        tensor([-0.4323,  2.0000])
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _no_int("celu", input, "elu_cpu")
    return _run("celu_" if inplace else "celu", input, inplace, alpha=alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`celu`."""
    return celu(input, alpha, inplace=True)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))`` (``MishBackward0``, in place too).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.mish(gradviz.tensor([0.0, 1.0]))
        tensor([0.0000, 0.8651])
    """
    _no_int("mish", input, "mish_cpu")
    return _run("mish", input, inplace)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` for positive ``x``, else ``weight * x`` with a learnt ``weight``: one value, or
    one per channel (dimension 1). As PyTorch: a 1-D ``weight`` is viewed to broadcast
    (``ViewBackward0``), then ``PreluKernelBackward0`` saves ``self`` and the viewed weight.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.prelu(gradviz.tensor([[-2.0, 3.0]]), gradviz.tensor([0.25]))
        tensor([[-0.5000,  3.0000]])
    """
    if weight.ndim > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    n_weights = int(weight._data.size)
    channels = input.shape[1] if input.ndim >= 2 else 1
    if n_weights != 1 and n_weights != channels:
        raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {n_weights} and channel size = {channels}.")
    _no_int("prelu", input, "prelu_cpu")
    if input.ndim != weight.ndim:
        shape = [1] * input.ndim
        if input.ndim >= 2:
            shape[1] = n_weights
        weight = _F.view(weight, tuple(shape))
    return dispatch(OPS["_prelu_kernel"], input, weight)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """The gated linear unit: ``a * sigmoid(b)`` where ``a`` and ``b`` are the two halves of
    ``input`` along ``dim`` (``GluBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.glu(gradviz.tensor([[1.0, 2.0, 0.0, 100.0]]))
        tensor([[0.5000, 2.0000]])
    """
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    _no_int("glu", input, "glu_cpu")
    # PyTorch keeps dim as given and shows it read as an unsigned 64-bit number.
    return dispatch(OPS["glu"], input, dim=dim % 2**64)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6`` (``HardswishBackward0``, in place too).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.hardswish(gradviz.tensor([-1.0, 1.0, 4.0]))
        tensor([-0.3333,  0.6667,  4.0000])
    """
    _no_int("hardswish", input, "hardswish_cpu")
    return _run("hardswish", input, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6`` (``HardsigmoidBackward0``, in place too).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.hardsigmoid(gradviz.tensor([-4.0, 0.0, 4.0]))
        tensor([0.0000, 0.5000, 1.0000])
    """
    _no_int("hardsigmoid", input, "hardsigmoid_cpu")
    return _run("hardsigmoid", input, inplace)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed stably (``LogSigmoidBackward0``, which saves ``self`` and
    the kernel's ``buffer``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.logsigmoid(gradviz.tensor([0.0, -200.0]))
        tensor([  -0.6931, -200.0000])
    """
    _no_int("logsigmoid", input, "log_sigmoid_cpu")
    output, _ = general_dispatch(OPS["log_sigmoid_forward"], input)
    return output


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``, recorded as PyTorch's Python writes it: ``input / (input.abs() + 1)``
    (``DivBackward0``, ``AddBackward0``, ``AbsBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.softsign(gradviz.tensor([-1.0, 3.0]))
        tensor([-0.5000,  0.7500])
    """
    return _F.div(input, _F.add(_F.abs(input), 1))


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0
    (``SoftshrinkBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.softshrink(gradviz.tensor([-1.0, 0.2, 2.0]))
        tensor([-0.5000,  0.0000,  1.5000])
    """
    _no_int("softshrink", input, "softshrink_check")
    if lambd < 0:
        dt = input._data.dtype
        raise RuntimeError(f"lambda must be in range [0, {float(np.finfo(dt).max):g}] for input "
                           f"dtype {input.dtype._legacy[:-6]}, but found {lambd:g}")
    return dispatch(OPS["softshrink"], input, lambd=lambd)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0 (``HardshrinkBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.hardshrink(gradviz.tensor([-1.0, 0.2, 2.0]))
        tensor([-1.,  0.,  2.])
    """
    _no_int("hardshrink", input, "hardshrink_cpu")
    return dispatch(OPS["hardshrink"], input, lambd=lambd)


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``, recorded as written (``SubBackward0`` over ``TanhBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.tanhshrink(gradviz.tensor([0.0, 1.0]))
        tensor([0.0000, 0.2384])
    """
    return _F.sub(input, _F.tanh(input))


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, else ``value`` (``ThresholdBackward0``; in place,
    ``ThresholdBackward1``; both save the input as it was).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.threshold(gradviz.tensor([0.5, 2.0]), 1.0, 20.0)
        tensor([20.,  2.])
    """
    return _run("threshold_" if inplace else "threshold", input, inplace, threshold=threshold,
                value=value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place :func:`threshold`."""
    return dispatch_inplace(OPS["threshold_"], input, threshold=threshold, value=value)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: _dtype.dtype | None = None) -> Tensor:
    """``softmax(-input, dim)``, recorded so (``SoftmaxBackward0`` over ``NegBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.softmin(gradviz.tensor([[0.0, 0.0]]), dim=1)
        tensor([[0.5000, 0.5000]])
    """
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim, _stacklevel)
    return _F.softmax(_F.neg(input), dim, dtype=dtype)
