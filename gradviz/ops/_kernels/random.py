"""Forwards of the random sampling rows and the in-place random fills."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz.ops._kernels.common import _SCALAR_TYPE, _not_for

# The forwards of the random sampling rows (NOTE [random rows] in gradviz/ops/opinfo.py): each
# draws from gradviz's generator (`generator=`, else the default one) and checks its arguments
# with PyTorch's texts. Numbers in those texts print as C++ streams print a double (`{:g}`).

def _draw(generator: Any, fn: str) -> np.random.Generator:
    from gradviz import _factories  # the core layer's generator (the ops layer sits above it)

    return _factories.rng(generator, fn)


_P_IN_RANGE = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
               "message be improved?  If so, please report an enhancement request to PyTorch.)")


def _floating_only(kernel: str, a: np.ndarray) -> None:
    if a.dtype.kind != "f":
        raise _not_for(kernel, a.dtype)


def bernoulli(p: np.ndarray, generator: Any = None) -> np.ndarray:
    """``torch.bernoulli(p)``: 1 with probability ``p`` (each element), else 0, in p's dtype."""
    _floating_only("bernoulli_tensor_cpu_p_", p)
    if not np.all((p >= 0) & (p <= 1)):  # NaN fails too
        raise RuntimeError(_P_IN_RANGE)
    return (_draw(generator, "bernoulli").random(p.shape) < p).astype(p.dtype)


def bernoulli_p(a: np.ndarray, p: float = 0.5, generator: Any = None) -> np.ndarray:
    """``torch.bernoulli(input, p)`` and ``input.bernoulli_(p)``: 1 with probability ``p``
    (a number), else 0, in input's shape and dtype (any dtype, bool too)."""
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    return (_draw(generator, "bernoulli_").random(a.shape) < p).astype(a.dtype)


def bernoulli_tensor_(a: np.ndarray, p: np.ndarray, generator: Any = None) -> np.ndarray:
    """``input.bernoulli_(p)`` with a tensor ``p`` broadcast to input's shape."""
    _floating_only("bernoulli_tensor_cpu_p_", p)
    if p.ndim > a.ndim:
        raise RuntimeError(
            f"expand(gradviz.{_SCALAR_TYPE.get(p.dtype.name, p.dtype.name)}Tensor{{{list(p.shape)}"
            f"}}, size={list(a.shape)}): the number of sizes provided ({a.ndim}) must be greater "
            f"or equal to the number of dimensions in the tensor ({p.ndim})")
    lead = (1,) * (a.ndim - p.ndim) + p.shape
    for i, (n, m) in enumerate(zip(a.shape, lead)):
        if m not in (1, n):
            raise RuntimeError(
                f"The expanded size of the tensor ({n}) must match the existing size ({m}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(a.shape)}.  Tensor sizes: "
                f"{list(p.shape)}")
    if not np.all((p >= 0) & (p <= 1)):
        raise RuntimeError(_P_IN_RANGE)
    return (_draw(generator, "bernoulli_").random(a.shape) < p).astype(a.dtype)


def _standard_normal(shape: tuple, dt: np.dtype, generator: Any, fn: str) -> np.ndarray:
    return _draw(generator, fn).standard_normal(shape).astype(dt)


def normal_tensor_float(mean: np.ndarray, std: float = 1.0, generator: Any = None
                        ) -> np.ndarray:
    """``torch.normal(mean, std)`` with a number ``std``: ``mean + std * z``."""
    _floating_only("normal_kernel_cpu", mean)
    if not std >= 0.0:  # NaN fails too
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    z = _standard_normal(mean.shape, mean.dtype, generator, "normal")
    return (z * mean.dtype.type(std) + mean).astype(mean.dtype)


def normal_float_tensor(std: np.ndarray, mean: float = 0.0, generator: Any = None
                        ) -> np.ndarray:
    """``torch.normal(mean, std)`` with a number ``mean``: ``mean + std * z``."""
    _floating_only("normal_kernel_cpu", std)
    if not np.all(std >= 0.0):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    z = _standard_normal(std.shape, std.dtype, generator, "normal")
    return (z * std + std.dtype.type(mean)).astype(std.dtype)


def normal_tensor_tensor(mean: np.ndarray, std: np.ndarray, generator: Any = None
                         ) -> np.ndarray:
    """``torch.normal(mean, std)``, both tensors (broadcast): ``z * std + mean`` in mean's
    dtype, as PyTorch's ``normal_out_impl`` computes it."""
    _floating_only("normal_kernel_cpu", mean)
    _floating_only("normal_kernel_cpu", std)
    if not np.all(std >= 0.0):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    shape = np.broadcast_shapes(mean.shape, std.shape)
    z = _standard_normal(shape, mean.dtype, generator, "normal")
    return (z * std.astype(mean.dtype) + mean).astype(mean.dtype)


def poisson(rates: np.ndarray, generator: Any = None) -> np.ndarray:
    """``torch.poisson(rates)``: a Poisson count per element, in the rates' (float) dtype."""
    _floating_only("poisson_cpu", rates)
    if not np.all(rates >= 0):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    # NumPy refuses rates above ~9.2e18 (and inf), where PyTorch's sampler overflows to
    # INT64_MIN.
    big = ~np.isfinite(rates) | (rates >= 9.2e18)
    out = np.full(rates.shape, float(-2**63))
    out[~big] = _draw(generator, "poisson").poisson(rates[~big])
    return out.astype(rates.dtype)


def _continuous(name: str, a: np.ndarray, c_names: bool = False) -> None:
    if a.dtype.kind != "f":
        kind = (_C_TYPE.get(a.dtype.name, a.dtype.name) if c_names
                else _SCALAR_TYPE.get(a.dtype.name, a.dtype.name))
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {kind}")


# The C++ type names some of PyTorch's dtype errors print (cauchy_'s).
_C_TYPE = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
           "int32": "int", "int64": "long int", "float16": "c10::Half", "float32": "float",
           "float64": "double"}


def exponential(a: np.ndarray, lambd: float = 1.0, generator: Any = None) -> np.ndarray:
    """``input.exponential_(lambd)``: samples of density ``lambd * exp(-lambd * x)``."""
    _continuous("Exponential", a)
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _draw(generator, "exponential_").exponential(1.0 / lambd, a.shape).astype(a.dtype)


def geometric(a: np.ndarray, p: float, generator: Any = None) -> np.ndarray:
    """``input.geometric_(p)``: the number of Bernoulli(p) trials up to the first success
    (1, 2, ...); integer tensors too."""
    if a.dtype == np.bool_:
        raise _not_for("geometric_cpu", a.dtype)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    return _draw(generator, "geometric_").geometric(p, a.shape).astype(a.dtype)


def cauchy(a: np.ndarray, median: float = 0.0, sigma: float = 1.0, generator: Any = None
           ) -> np.ndarray:
    """``input.cauchy_(median, sigma)``: Cauchy (Lorentz) samples."""
    _continuous("Cauchy", a, c_names=True)
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    z = _draw(generator, "cauchy_").standard_cauchy(a.shape)
    return (median + sigma * z).astype(a.dtype)


def log_normal(a: np.ndarray, mean: float = 1.0, std: float = 2.0, generator: Any = None
               ) -> np.ndarray:
    """``input.log_normal_(mean, std)``: ``exp`` of normal samples of that mean and std."""
    _floating_only("log_normal_cpu", a)
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    return _draw(generator, "log_normal_").lognormal(mean, std, a.shape).astype(a.dtype)


def uniform(a: np.ndarray, from_: float = 0.0, to: float = 1.0, generator: Any = None
            ) -> np.ndarray:
    """``input.uniform_(from_, to)``: uniform samples from ``[from_, to)``."""
    _floating_only("check_uniform_bounds", a)
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_:g} > to={to:g}")
    return _draw(generator, "uniform_").uniform(from_, to, a.shape).astype(a.dtype)


def normal_fill(a: np.ndarray, mean: float = 0.0, std: float = 1.0, generator: Any = None
                ) -> np.ndarray:
    """``input.normal_(mean, std)``: normal samples."""
    _floating_only("normal_kernel_cpu", a)
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    return (_draw(generator, "normal_").standard_normal(a.shape) * std + mean).astype(a.dtype)


def random_fill(a: np.ndarray, low: int = 0, high: int = 1, generator: Any = None
                ) -> np.ndarray:
    """``input.random_(...)``: integers drawn uniformly from ``[low, high)`` (bounds checked by
    the method, gradviz/ops/methods.py)."""
    return _draw(generator, "random_").integers(low, high, a.shape).astype(a.dtype)
