"""Forwards of the normalization rows: layer norm, batch norm, group norm."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz.ops._kernels.common import arr


def layer_norm(a: np.ndarray, weight: Any, bias: Any, normalized_shape: tuple = (),
               eps: float = 1e-5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    axes = tuple(range(a.ndim - len(normalized_shape), a.ndim))
    mean = np.mean(a, axis=axes, keepdims=True)
    rstd = 1 / np.sqrt(np.mean((a - mean) ** 2, axis=axes, keepdims=True) + eps)
    out = (a - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out.astype(a.dtype, copy=False), mean, rstd


def native_batch_norm(input: np.ndarray, weight: Any, bias: Any, running_mean: Any = None,
                      running_var: Any = None, training: bool = False, momentum: float = 0.1,
                      eps: float = 1e-5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(y, save_mean, save_invstd)``; in training the running statistics are updated in place
    (as PyTorch's kernel does, without bumping their version); in evaluation the saved
    statistics are empty and the running ones normalize."""
    axes = (0,) + tuple(range(2, input.ndim))
    shape = (1, -1) + (1,) * (input.ndim - 2)
    rm, rv = arr(running_mean), arr(running_var)
    if training:
        mean = input.mean(axis=axes)
        var = ((input - mean.reshape(shape)) ** 2).mean(axis=axes)
        invstd = 1 / np.sqrt(var + eps)
        n = input.size // input.shape[1]
        if rm is not None:
            rm[...] = (1 - momentum) * rm + momentum * mean
        if rv is not None:
            rv[...] = (1 - momentum) * rv + momentum * var * (n / (n - 1))
        out = (input - mean.reshape(shape)) * invstd.reshape(shape)
        save_mean, save_invstd = mean.astype(input.dtype), invstd.astype(input.dtype)
    else:
        out = (input - rm.reshape(shape)) / np.sqrt(rv.reshape(shape) + eps)
        save_mean = save_invstd = np.zeros(0, input.dtype)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out.astype(input.dtype, copy=False), save_mean, save_invstd


def native_group_norm(input: np.ndarray, weight: Any, bias: Any, N: int = 0, C: int = 0,
                      HxW: int = 0, group: int = 1, eps: float = 1e-5
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(y, mean, rstd)``, the statistics of shape (N, group), each over a group's
    ``C / group * HxW`` elements (the variance biased)."""
    x = input.reshape(N, group, C // group * HxW)  # not -1: an empty batch has N = 0
    mean = x.mean(axis=2)
    centred = x - mean[..., None]
    rstd = 1 / np.sqrt((centred * centred).mean(axis=2) + eps)
    out = (centred * rstd[..., None]).reshape(input.shape)
    shape = (1, C) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    dt = input.dtype
    return out.astype(dt, copy=False), mean.astype(dt), rstd.astype(dt)
