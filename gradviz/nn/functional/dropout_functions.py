"""Dropout functions: dropout, dropout1d/2d/3d, alpha_dropout and feature_alpha_dropout."""

from __future__ import annotations

import math
import warnings

import numpy as np

from gradviz import _factories
from gradviz.ops import functional as _F
from gradviz.ops import sampling  # dropout's mask
from gradviz.tensor import Tensor

__all__ = [
    "dropout", "dropout2d", "dropout1d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"
]


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
            ) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``, recorded
    as PyTorch records it on the CPU: a multiplication by the scaled random mask
    (``MulBackward0``). Returns ``input`` itself when not ``training`` or ``p == 0``. The mask
    comes from gradviz's generator: :func:`gradviz.manual_seed` makes it repeatable.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> _ = gradviz.manual_seed(0)
        >>> F.dropout(gradviz.ones(4), 0.5)
        tensor([0., 2., 2., 2.])
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input._data.size == 0:
        return input
    # the mask as torch.dropout makes it: its dtype rules and division, one place
    mask = sampling.dropout_noise(input, p)
    return _F.mul_(input, mask) if inplace else _F.mul(input, mask)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels: each (sample, channel) plane with probability ``p``, scaling the
    others by ``1 / (1 - p)``. Recorded as PyTorch records it on the CPU: a multiplication by
    a mask of shape (N, C, 1, 1) (``MulBackward0``); ``input`` itself when not ``training``.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> _ = gradviz.manual_seed(0)
        >>> F.dropout2d(gradviz.ones(1, 2, 1, 2), 0.5)
        tensor([[[[0., 0.]],
        <BLANKLINE>
                 [[2., 2.]]]])
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    nd = input.ndim
    if nd not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if nd == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    if nd < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0 or input._data.size == 0:
        return input
    dt = input._data.dtype
    shape = tuple(input.shape[:2]) + (1,) * (nd - 2)
    if p == 1:
        noise = np.zeros(shape, dt)
    else:
        keep = _factories.rng().random(shape) < 1 - p
        noise = (keep / (1 - p)).astype(dt)
    mask = Tensor._make(noise)
    return _F.mul_(input, mask) if inplace else _F.mul(input, mask)


def _no_int_dropout(input: Tensor, alpha: bool) -> None:
    """PyTorch's error for a dropout of an integer tensor: the float mask cannot be written
    into it (alpha dropout's mask arithmetic turns a bool input into Long first)."""
    if input._data.dtype.kind != "f":
        shown = "Long" if alpha and input._data.dtype == np.bool_ else input.dtype._legacy[:-6]
        raise RuntimeError(f"result type Float can't be cast to the desired output type {shown}")


# SELU's alpha (the negative saturation value), which alpha dropout drops to.
_ALPHA_DROPOUT_ALPHA = 1.7580993408473766


def _dropout_impl(input: Tensor, p: float, train: bool, inplace: bool, feature: bool,
                  alpha: bool) -> Tensor:
    """PyTorch's ``_dropout_impl``: a random keep mask of the input's shape, or, for the
    feature forms, of (N, C, 1, ...); plain dropout scales the kept entries by 1 / (1 - p)
    (one ``mul``); alpha dropout keeps SELU's mean and variance: ``input * a * mask + b``
    (``mul`` then an in-place ``add``), dropped entries at ``-alpha * a + b``."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input._data.size == 0:
        return input
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    dt = input._data.dtype
    if p == 1:
        zero = Tensor._make(np.zeros((), dt))
        return _F.mul_(input, zero) if inplace else _F.mul(input, zero)
    _no_int_dropout(input, alpha)
    shape = (tuple(input.shape[:2]) + (1,) * (input.ndim - 2)) if feature else tuple(
        input.shape)
    keep = (_factories.rng().random(shape) < 1 - p).astype(dt)
    if not alpha:
        mask = Tensor._make((keep / (1 - p)).astype(dt))
        return _F.mul_(input, mask) if inplace else _F.mul(input, mask)
    a = 1.0 / math.sqrt((_ALPHA_DROPOUT_ALPHA ** 2 * p + 1) * (1 - p))
    b = Tensor._make(((keep - 1) * (_ALPHA_DROPOUT_ALPHA * a)
                      + _ALPHA_DROPOUT_ALPHA * a * p).astype(dt))
    noise = Tensor._make((keep * a).astype(dt))
    out = _F.mul_(input, noise) if inplace else _F.mul(input, noise)
    return out.add_(b)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of a (N, C, L) or (C, L) input with probability ``p``, scaling the
    others by ``1 / (1 - p)``: a multiplication by a (N, C, 1) mask (``MulBackward0``), an
    unbatched input unsqueezed first and squeezed after (as PyTorch).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.dropout1d(gradviz.ones(2, 3), training=False)
        tensor([[1., 1., 1.],
                [1., 1., 1.]])
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    nd = input.ndim
    if nd not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. "
                           "Note that dropout1d exists to provide channel-wise dropout on inputs "
                           "with 1 spatial dimension, a channel dimension, and an optional batch "
                           "dimension (i.e. 2D or 3D inputs).")
    batched = nd == 3
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    out = _dropout_impl(input, p, training, inplace, feature=True, alpha=False)
    if not batched:
        out = out.squeeze_(0) if inplace else out.squeeze(0)
    return out


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of a (N, C, D, H, W) or (C, D, H, W) input with probability ``p``,
    scaling the others by ``1 / (1 - p)``: a multiplication by a (N, C, 1, 1, 1) mask
    (``MulBackward0``), an unbatched input unsqueezed first and squeezed after.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.dropout3d(gradviz.ones(1, 2, 1, 1, 1), training=False).flatten()
        tensor([1., 1.])
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    nd = input.ndim
    if nd not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    batched = nd == 5
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    out = _dropout_impl(input, p, training, inplace, feature=True, alpha=False)
    if not batched:
        out = out.squeeze_(0) if inplace else out.squeeze(0)
    return out


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
                  ) -> Tensor:
    """Dropout for SELU networks: dropped entries go to SELU's saturation value and the
    result is rescaled so that mean and variance are kept; recorded as ``input * noise``
    (``MulBackward0``) then ``+ b`` in place (``AddBackward0``). Note ``training`` defaults
    to False here, as in PyTorch.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.alpha_dropout(gradviz.ones(3), 0.5)
        tensor([1., 1., 1.])
    """
    return _dropout_impl(input, p, training, inplace, feature=False, alpha=True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """:func:`alpha_dropout` of whole channels: one random draw per (sample, channel).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.feature_alpha_dropout(gradviz.ones(1, 2, 2), 0.5).shape
        gradviz.Size([1, 2, 2])
    """
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=True)
