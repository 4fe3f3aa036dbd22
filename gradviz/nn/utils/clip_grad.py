"""Gradient clipping (``torch.nn.utils.clip_grad_norm_``, ``clip_grad_value_``): what a
training loop calls between ``backward()`` and ``optimizer.step()`` to keep one large gradient
from throwing the parameters far away (RNNs, above all)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from gradviz.autograd.grad_mode import no_grad
from gradviz.ops import _kernels as K
from gradviz.tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def _params(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float | str = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scale the gradients of ``parameters`` in place so that their norm, taken together as one
    vector, is at most ``max_norm``; returns that total norm before clipping.

    Every gradient is multiplied by ``min(1, max_norm / (total_norm + 1e-6))``, as PyTorch does.
    ``norm_type`` may be ``inf`` (or ``"inf"``): the largest magnitude. ``foreach`` is accepted
    for PyTorch's signature (there is one way here).

    Example:
        >>> import gradviz
        >>> w = gradviz.nn.Parameter(gradviz.ones(4))
        >>> w.grad = gradviz.full((4,), 2.0)
        >>> clip_grad_norm_([w], 1.0), w.grad
        (tensor(4.), tensor([0.5000, 0.5000, 0.5000, 0.5000]))
    """
    grads = [p.grad for p in _params(parameters) if p.grad is not None]
    p = float(norm_type)
    if not grads:
        return Tensor._make(np.zeros((), np.float32))
    dtype = np.result_type(*[g._data.dtype for g in grads])
    norms = np.array([K.vector_norm(g._data, p) for g in grads], dtype=dtype)
    total = K.vector_norm(norms, p)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"The total norm of order {p} for gradients from `parameters` is "
                           "non-finite, so it cannot be clipped. To disable this error and scale "
                           "the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    coef = Tensor._make(np.minimum(max_norm / (total + 1e-6), 1.0).astype(dtype))
    with no_grad():
        for g in grads:
            g.mul_(coef)
    return Tensor._make(np.asarray(total, dtype))


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient of ``parameters`` to ``[-clip_value, clip_value]``, in place.

    Example:
        >>> import gradviz
        >>> w = gradviz.nn.Parameter(gradviz.zeros(3))
        >>> w.grad = gradviz.tensor([1.0, -5.0, 3.0])
        >>> clip_grad_value_(w, 2.0); w.grad
        tensor([ 1., -2.,  2.])
    """
    clip_value = float(clip_value)
    with no_grad():
        for p in _params(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
