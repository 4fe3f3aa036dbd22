"""Sample inputs for a row of the derivative table: what its gradcheck and node tests run on.

A row's ``samples`` are :class:`Sample` objects; each lists input *specs* (not tensors) so that
every test builds fresh inputs from a fixed seed. The specs:

* :class:`R` ``(*shape)``: uniform in [-1, 1], requires grad;
* :class:`P` ``(*shape)``: uniform in [0.5, 2], requires grad (for log, pow, division ...);
* :class:`A` ``(*shape)``: away from 0 (|x| in [0.2, 1], random sign), requires grad (relu);
* :class:`C` ``(value)``: a constant float64 tensor (no grad); :class:`W` the same, requiring grad;
* :class:`B` ``(*shape)``: a random bool tensor;
* anything else (Python numbers) is passed through unchanged.

Example:
    >>> import numpy as np
    >>> s = Sample(P(2, 3), exponent=2.0)
    >>> args, kwargs = s.build(np.random.default_rng(0))
    >>> args[0].shape, args[0].requires_grad, kwargs
    (gradviz.Size([2, 3]), True, {'exponent': 2.0})
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradviz.tensor import Tensor

__all__ = ["Sample", "R", "P", "A", "B", "C", "W"]


def _float64(values: Any, requires_grad: bool = False) -> Tensor:
    return Tensor._make(np.asarray(values, dtype=np.float64), requires_grad)


class R:
    """Uniform in [-1, 1], float64, requires grad."""

    low, high = -1.0, 1.0

    def __init__(self, *shape: int) -> None:
        self.shape = shape

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self.shape}"

    def make(self, rng: np.random.Generator) -> Tensor:
        return _float64(rng.uniform(self.low, self.high, self.shape), True)


class P(R):
    """Uniform in [0.5, 2]: positive and away from 0 (log, sqrt, division)."""

    low, high = 0.5, 2.0


class A(R):
    """Away from 0 on both sides (|x| in [0.2, 1]): where a kink at 0 must be avoided."""

    def make(self, rng: np.random.Generator) -> Tensor:
        mag = rng.uniform(0.2, 1, self.shape)
        sign = np.where(rng.random(self.shape) < 0.5, -1.0, 1.0)
        return _float64(mag * sign, True)


class B(R):
    """A random bool tensor (a mask)."""

    def make(self, rng: np.random.Generator) -> Tensor:
        return Tensor._make(rng.random(self.shape) < 0.5)


@dataclass(frozen=True)
class C:
    """A constant float64 tensor that does not require grad."""

    value: Any

    def make(self, rng: np.random.Generator) -> Tensor:
        return _float64(self.value)


class W(C):
    """A given float64 tensor that requires grad."""

    def make(self, rng: np.random.Generator) -> Tensor:
        return _float64(self.value, True)


@dataclass(init=False)
class Sample:
    """One call of an op: positional input specs and keyword arguments.

    ``gg`` is None when gradgradcheck applies, else the reason it does not (as PyTorch marks ops
    without a double backward). ``fd`` is None when finite differences check the gradient,
    else the reason they cannot: a random row whose seeded sample moves with its input although
    PyTorch defines its gradient as zero (NOTE [random rows] in gradviz/ops/opinfo.py).
    """

    specs: tuple
    kwargs: dict = field(default_factory=dict)
    gg: str | None = None
    fd: str | None = None

    # (`self` positional-only: a row's keyword argument may be named `self`, as xlogy's is)
    def __init__(self, /, *specs: Any, gg: str | None = None, fd: str | None = None,
                 **kwargs: Any) -> None:
        self.specs, self.kwargs, self.gg, self.fd = specs, kwargs, gg, fd

    def build(self, rng: np.random.Generator) -> tuple[tuple, dict]:
        """Fresh inputs: ``(args, kwargs)``, tensors made from the specs with ``rng``."""
        args = tuple(s.make(rng) if hasattr(s, "make") else s for s in self.specs)
        return args, dict(self.kwargs)
