"""Sampling that takes a tensor of weights: multinomial (the samplers of the table's random
rows are gradviz/ops/sampling.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz._device import meta_array
from gradviz.ops.functional.common import _tensors_only
from gradviz.tensor import Tensor

__all__ = [
    "multinomial"
]


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Any = None) -> Tensor:
    """Indices drawn from the categories of each row of ``input`` (non-negative weights, 1-D or
    2-D), ``num_samples`` per row, with or without replacement (int64; no gradient). Without
    replacement, categories of weight 0 come only once all others are drawn.

    Example:
        >>> import gradviz
        >>> gradviz.multinomial(gradviz.tensor([0.0, 1.0, 0.0]), 2, replacement=True)
        tensor([1, 1])
    """
    from gradviz import _factories

    _tensors_only("multinomial", input=input)
    weights = input._data
    if weights.dtype.kind != "f":
        from gradviz.ops._kernels import _SCALAR_TYPE

        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{_SCALAR_TYPE.get(weights.dtype.name, weights.dtype.name)}")
    if weights.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if input.is_meta:  # indices of the right shape, nothing drawn (NOTE [meta device])
        if not replacement and num_samples > weights.shape[-1]:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                               "replacement")
        return Tensor._make(meta_array(weights.shape[:-1] + (num_samples,), np.int64))
    rows = weights.reshape(-1, weights.shape[-1]).astype(np.float64)
    if not np.isfinite(rows).all() or (rows < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (rows.sum(axis=1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    n = rows.shape[1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    rng = _factories.rng(generator, "multinomial")
    out = np.empty((rows.shape[0], num_samples), np.int64)
    for r, w in enumerate(rows):
        if replacement:
            out[r] = rng.choice(n, size=num_samples, replace=True, p=w / w.sum())
        else:
            # Efraimidis-Spirakis: the largest u ** (1 / w) are a weighted draw without
            # replacement; a weight of 0 gets key 0 and comes after every other category.
            with np.errstate(divide="ignore"):
                keys = rng.random(n) ** (1.0 / w)
            out[r] = np.argsort(-keys, kind="stable")[:num_samples]
    return Tensor._make(out.reshape(weights.shape[:-1] + (num_samples,)))
