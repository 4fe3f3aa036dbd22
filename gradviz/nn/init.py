"""``gradviz.nn.init``: fill tensors in place with PyTorch's initialisation schemes.

Every function writes into the tensor's storage without recording a graph (PyTorch runs them
under ``no_grad``), bumps its version, and returns it. Random numbers come from gradviz's
generator (:func:`gradviz.manual_seed` makes them repeatable) or from the NumPy ``generator``
passed in. The formulas (gains, fans, bounds) are PyTorch's; the numbers differ from PyTorch's
because the generators differ.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Literal

import numpy as np

from gradviz import _factories
from gradviz.tensor import Tensor

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "orthogonal_", "sparse_", "xavier_uniform_",
           "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"]

_FanMode = Literal["fan_in", "fan_out"]


def _rng(generator: Any) -> np.random.Generator:
    # A gradviz.Generator, a NumPy one, or None for the default generator.
    return _factories.rng(generator, "init")


def _fill(tensor: Tensor, values: np.ndarray | float) -> Tensor:
    """Write ``values`` into ``tensor`` in place (no graph) and bump its version."""
    if tensor.is_meta:  # no values to write (a layer made on device="meta")
        return tensor
    arr = tensor._data
    arr[...] = values  # casts to the tensor's dtype
    tensor._version_counter.version += 1
    return tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity: 1 for linear/sigmoid, 5/3 for tanh, sqrt(2) for
    relu, sqrt(2 / (1 + slope**2)) for leaky_relu, 3/4 for selu.

    Example:
        >>> from gradviz.nn import init
        >>> init.calculate_gain("tanh"), round(init.calculate_gain("leaky_relu", 0.2), 4)
        (1.6666666666666667, 1.3868)
    """
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0,
             generator: np.random.Generator | None = None) -> Tensor:
    """Fill with samples from the uniform distribution on ``[a, b)``.

    Example:
        >>> import gradviz
        >>> from gradviz.nn import init
        >>> w = init.uniform_(gradviz.empty(2, 3), -1.0, 1.0)
        >>> bool(w.numpy().min() >= -1.0 and w.numpy().max() < 1.0)
        True
    """
    if tensor.is_meta:  # nothing drawn, as PyTorch draws nothing for a meta tensor
        return tensor
    return _fill(tensor, _rng(generator).uniform(a, b, tensor.shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: np.random.Generator | None = None) -> Tensor:
    """Fill with samples from the normal distribution ``N(mean, std**2)``.

    Example:
        >>> import gradviz
        >>> from gradviz.nn import init
        >>> init.normal_(gradviz.empty(3), 0.0, 0.01).shape
        gradviz.Size([3])
    """
    if tensor.is_meta:  # nothing drawn, as PyTorch draws nothing for a meta tensor
        return tensor
    return _fill(tensor, _rng(generator).normal(mean, std, tensor.shape))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: np.random.Generator | None = None) -> Tensor:
    """Fill with samples from ``N(mean, std**2)`` redrawn until they lie in ``[a, b]``.

    Example:
        >>> import gradviz
        >>> from gradviz.nn import init
        >>> w = init.trunc_normal_(gradviz.empty(100), std=1.0, a=-0.5, b=0.5)
        >>> bool(abs(w.numpy()).max() <= 0.5)
        True
    """
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    rng = _rng(generator)
    values = rng.normal(mean, std, tensor.shape)
    bad = (values < a) | (values > b)
    while bad.any():  # rejection sampling
        values[bad] = rng.normal(mean, std, int(bad.sum()))
        bad = (values < a) | (values > b)
    return _fill(tensor, values)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``.

    Example:
        >>> import gradviz
        >>> from gradviz.nn import init
        >>> init.constant_(gradviz.empty(2), 0.5)
        tensor([0.5000, 0.5000])
    """
    return _fill(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones.

    Example:
        >>> import gradviz
        >>> from gradviz.nn import init
        >>> init.ones_(gradviz.empty(2))
        tensor([1., 1.])
    """
    return _fill(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros.

    Example:
        >>> import gradviz
        >>> from gradviz.nn import init
        >>> init.zeros_(gradviz.ones(2))
        tensor([0., 0.])
    """
    return _fill(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix.

    Example:
        >>> import gradviz
        >>> from gradviz.nn import init
        >>> init.eye_(gradviz.empty(2, 3))
        tensor([[1., 0., 0.],
                [0., 1., 0.]])
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight so that the convolution passes its input through
    (a 1 at the kernel's centre from each input channel to the output channel of the same
    number, in each of ``groups``).

    Example:
        >>> import gradviz
        >>> from gradviz.nn import init
        >>> init.dirac_(gradviz.empty(2, 2, 3))
        tensor([[[0., 1., 0.],
                 [0., 0., 0.]],
        <BLANKLINE>
                [[0., 0., 0.],
                 [0., 1., 0.]]])
    """
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    shape = tensor.shape
    if shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = shape[0] // groups
    values = np.zeros(shape)
    centre = tuple(k // 2 for k in shape[2:])
    for g in range(groups):
        for d in range(min(per_group, shape[1])):
            values[(g * per_group + d, d, *centre)] = 1
    return _fill(tensor, values)


def orthogonal_(tensor: Tensor, gain: float = 1.0,
                generator: np.random.Generator | None = None) -> Tensor:
    """Fill ``tensor`` (2 or more dimensions, taken as ``size(0)`` rows) with a random
    orthogonal matrix times ``gain``: the Q of the QR decomposition of a normal matrix, its
    signs fixed by R's diagonal so that it is uniformly distributed.

    Example:
        >>> import gradviz
        >>> from gradviz.nn import init
        >>> w = init.orthogonal_(gradviz.empty(3, 5))
        >>> bool(((w @ w.T) - gradviz.eye(3)).abs().max() < 1e-5)
        True
    """
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _rng(generator).standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T  # QR of the tall side: orthonormal rows come out as Q's columns
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q.reshape(tensor.shape))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01,
            generator: np.random.Generator | None = None) -> Tensor:
    """Fill a 2-D tensor with normal values (``std``) and then zero ``ceil(sparsity * rows)``
    randomly chosen entries of every column.

    Example:
        >>> import gradviz
        >>> from gradviz.nn import init
        >>> w = init.sparse_(gradviz.empty(10, 4), sparsity=0.3)
        >>> (w == 0).sum(0).tolist()
        [3, 3, 3, 3]
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros_per_column = int(math.ceil(sparsity * rows))
    rng = _rng(generator)
    values = rng.normal(0.0, std, (rows, cols))
    for c in range(cols):
        values[rng.permutation(rows)[:zeros_per_column], c] = 0
    return _fill(tensor, values)


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)``: input and output feature maps times the receptive field size.

    Example:
        >>> import gradviz
        >>> from gradviz.nn import init
        >>> init._calculate_fan_in_and_fan_out(gradviz.empty(3, 2))  # a Linear(2, 3) weight
        (2, 3)
    """
    if tensor.ndim < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return tensor.shape[1] * receptive_field_size, tensor.shape[0] * receptive_field_size


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0,
                    generator: np.random.Generator | None = None) -> Tensor:
    """Glorot uniform: ``U(-a, a)`` with ``a = gain * sqrt(6 / (fan_in + fan_out))``.

    Example:
        >>> import gradviz
        >>> from gradviz.nn import init
        >>> w = init.xavier_uniform_(gradviz.empty(3, 5))
        >>> bool(abs(w.numpy()).max() <= (6 / 8) ** 0.5)
        True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0,
                   generator: np.random.Generator | None = None) -> Tensor:
    """Glorot normal: ``N(0, std**2)`` with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    Example:
        >>> import gradviz
        >>> from gradviz.nn import init
        >>> init.xavier_normal_(gradviz.empty(3, 5)).shape
        gradviz.Size([3, 5])
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: _FanMode = "fan_in",
                     nonlinearity: str = "leaky_relu",
                     generator: np.random.Generator | None = None) -> Tensor:
    """He uniform: ``U(-bound, bound)`` with ``bound = gain * sqrt(3 / fan)``; ``a`` is the
    leaky_relu slope used for the gain. ``nn.Linear`` uses ``a=sqrt(5)``.

    Example:
        >>> import gradviz
        >>> from gradviz.nn import init
        >>> init.kaiming_uniform_(gradviz.empty(3, 5), mode="fan_in", nonlinearity="relu").shape
        gradviz.Size([3, 5])
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: _FanMode = "fan_in",
                    nonlinearity: str = "leaky_relu",
                    generator: np.random.Generator | None = None) -> Tensor:
    """He normal: ``N(0, std**2)`` with ``std = gain / sqrt(fan)``.

    Example:
        >>> import gradviz
        >>> from gradviz.nn import init
        >>> init.kaiming_normal_(gradviz.empty(3, 5), nonlinearity="relu").shape
        gradviz.Size([3, 5])
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)
