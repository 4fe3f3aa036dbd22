"""Forwards of the loss rows of torch.nn.functional."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz.ops._kernels.common import arr
from gradviz.ops._kernels.reductions import vector_norm


def nll_weights(target: np.ndarray, weight: Any, n_classes: int, ignore_index: int,
                dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """``(safe_target, w)``: targets with ignored entries replaced by 0, and each entry's class
    weight (0 where ignored)."""
    valid = target != ignore_index
    if weight is None:
        # NOTE [perf]: unit weights; with nothing ignored (the usual case) the targets as they are
        if valid.all():
            return target, np.ones(target.shape, dtype)
        return np.where(valid, target, 0), valid.astype(dtype)
    safe = np.where(valid, target, 0)
    w = arr(weight).astype(dtype, copy=False)
    return safe, (w[safe] * valid).astype(dtype, copy=False)


def pick_targets(a: np.ndarray, safe: np.ndarray) -> np.ndarray:
    """Each row's entry at its target class: ``a[i, safe[i]]`` (``a[safe]`` for one row)."""
    if a.ndim == 1:
        return a[safe]
    return a[np.arange(a.shape[0]), safe]


_ANY, _SUM = np.logical_or.reduce, np.add.reduce


def nll_loss(a: np.ndarray, target: Any, weight: Any = None, reduction: int = 1,
             ignore_index: int = -100) -> tuple[np.ndarray, np.ndarray]:
    t = arr(target)
    if weight is None and reduction == 1 and t.size and not _ANY(t == ignore_index, None):
        # NOTE [perf]: the usual call (unit weights, the mean, nothing ignored): the mean of the
        # picked entries, without a weight per entry (the same numbers: -sum / count); the
        # ufuncs' reduce, as ndarray.any/sum do it without their Python wrappers
        n = t.size
        return np.asarray(-_SUM(pick_targets(a, t), None) / n, a.dtype), np.asarray(n, a.dtype)
    safe, w = nll_weights(t, weight, a.shape[-1], ignore_index, a.dtype)
    losses = -w * pick_targets(a, safe)
    total = np.asarray(w.sum(), a.dtype)
    if reduction == 0:
        return losses.astype(a.dtype, copy=False), np.zeros((), a.dtype)
    if reduction == 2:
        return np.asarray(losses.sum(), a.dtype), total
    if total == 0:  # every target ignored: 0/0 is nan, as in PyTorch, without a warning
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(losses.sum() / total, a.dtype), total
    return np.asarray(losses.sum() / total, a.dtype), total


def reduce(losses: np.ndarray, reduction: int) -> np.ndarray:
    if reduction == 1:
        return np.asarray(losses.mean(), losses.dtype)
    if reduction == 2:
        return np.asarray(losses.sum(), losses.dtype)
    return losses


def mse_loss(a: np.ndarray, target: np.ndarray, reduction: int = 1) -> np.ndarray:
    return reduce((a - target) ** 2, reduction)


def binary_cross_entropy(a: np.ndarray, target: np.ndarray, weight: Any = None,
                         reduction: int = 1) -> np.ndarray:
    with np.errstate(divide="ignore"):
        log_x = np.maximum(np.log(a), -100)
        log_1mx = np.maximum(np.log1p(-a), -100)
    losses = -(target * log_x + (1 - target) * log_1mx)
    if weight is not None:
        losses = losses * arr(weight)
    return reduce(np.asarray(losses, a.dtype), reduction)


def binary_cross_entropy_with_logits(a: np.ndarray, target: np.ndarray, weight: Any = None,
                                     pos_weight: Any = None, reduction: int = 1) -> np.ndarray:
    sp = np.logaddexp(0, -a)  # softplus(-x) = -log(sigmoid(x)), without overflow
    if pos_weight is not None:
        losses = (1 - target) * a + ((arr(pos_weight) - 1) * target + 1) * sp
    else:
        losses = (1 - target) * a + sp
    if weight is not None:
        losses = losses * arr(weight)
    return reduce(np.asarray(losses, a.dtype), reduction)


def smooth_l1_loss(a: np.ndarray, target: np.ndarray, reduction: int = 1, beta: float = 1.0
                   ) -> np.ndarray:
    z = np.abs(a - target)
    return reduce(np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta).astype(a.dtype),
                  reduction)


def huber_loss(a: np.ndarray, target: np.ndarray, reduction: int = 1, delta: float = 1.0
               ) -> np.ndarray:
    z = np.abs(a - target)
    return reduce(np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)).astype(a.dtype),
                  reduction)


def soft_margin_loss(a: np.ndarray, target: Any, reduction: int = 1) -> np.ndarray:
    return reduce(np.logaddexp(0, -arr(target) * a).astype(a.dtype), reduction)


def norm_dim(a: np.ndarray, p: float = 2.0, dim: tuple = (), keepdim: bool = False
             ) -> np.ndarray:
    """``at::norm(self, p, dim, keepdim)``, the vector norm that ``pairwise_distance`` calls."""
    return vector_norm(a, p, dim, keepdim)


def sub_scalar(a: np.ndarray, other: float, alpha: float = 1) -> np.ndarray:
    return a - alpha * other
