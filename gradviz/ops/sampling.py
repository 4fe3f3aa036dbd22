"""Random sampling ops as torch spells them: ``bernoulli``, ``normal``, ``poisson``,
``randint_like``, ``dropout``, and the in-place fills ``bernoulli_``, ``exponential_``,
``geometric_``, ``cauchy_``, ``log_normal_``.

Each draws from gradviz's generator (``generator=``, else the default one that
:func:`gradviz.manual_seed` seeds), so a seeded program is repeatable; the numbers differ from
PyTorch's, whose generator is another. Each records the node PyTorch records
(``BernoulliBackward0``, ``NormalBackward1/2/3``, ``PoissonBackward0``, ``ExponentialBackward0``
...) through its row of the derivative table (NOTE [random rows] in gradviz/ops/opinfo.py):
PyTorch defines their gradients as zero, so a backward through them gives zeros (and through
``bernoulli(x, p)``'s ``NotImplemented`` node, an error).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradviz import _dtype, _factories
from gradviz._device import check_device, meta_array
from gradviz.ops._kernels import _SCALAR_TYPE
from gradviz.ops.derivatives import OPS
from gradviz.ops.dispatch import broadcast_message, dispatch, dispatch_inplace
from gradviz.tensor import Tensor, _is_number

__all__ = ["bernoulli", "normal", "poisson", "randint_like", "dropout", "dropout_"]


def _gen(generator: Any, fn: str) -> dict:
    """``generator=`` for the row's forward, only when one is given (so that a traced op's
    keyword arguments stay those the user wrote), checked as the factories check it."""
    if generator is None:
        return {}
    _factories.rng(generator, fn)  # a wrong type fails here, with PyTorch's text
    return {"generator": generator}


def _bad_generator(generator: Any) -> bool:
    return generator is not None and not isinstance(generator, _factories.Generator)


def _type_names(*args: Any, **kwargs: Any) -> str:
    pos = [type(a).__name__ if not isinstance(a, Tensor) else "Tensor" for a in args]
    kw = [f"{k}={type(v).__name__ if not isinstance(v, Tensor) else 'Tensor'}"
          for k, v in kwargs.items()]
    return ", ".join(pos + kw)


def _float(x: Any) -> bool:
    return _is_number(x) and not isinstance(x, (bool, np.bool_))


_BERNOULLI_SIGNATURES = (
    " * (Tensor input, *, gradviz.Generator generator = None, Tensor out = None)\n"
    " * (Tensor input, float p, *, gradviz.Generator generator = None)\n")


def bernoulli(input: Tensor, p: float | None = None, *, generator: Any = None) -> Tensor:
    """Draw 0 or 1 for each element: 1 with probability ``input`` (``bernoulli(p)``), or with
    probability ``p``, a number, in input's shape and dtype (``bernoulli(x, 0.3)``).

    Recorded as PyTorch records it: ``BernoulliBackward0`` (gradient zero) for the first form,
    the ``NotImplemented`` node (a backward through it fails) for the second.

    Example:
        >>> import gradviz
        >>> g = gradviz.Generator().manual_seed(0)
        >>> gradviz.bernoulli(gradviz.tensor([0.0, 1.0, 1.0]), generator=g)
        tensor([0., 1., 1.])
    """
    if (not isinstance(input, Tensor) or (p is not None and not _float(p))
            or _bad_generator(generator)):
        args = (input,) if p is None else (input, p)
        kw = {} if generator is None else {"generator": generator}
        raise TypeError(f"bernoulli() received an invalid combination of arguments - got "
                        f"({_type_names(*args, **kw)}), but expected one of:\n"
                        + _BERNOULLI_SIGNATURES)
    if p is None:
        return dispatch(OPS["bernoulli"], input, **_gen(generator, "bernoulli"))
    return dispatch(OPS["bernoulli_p"], input, p=float(p), **_gen(generator, "bernoulli"))


def _bernoulli_method(self: Tensor, p: float | None = None, *, generator: Any = None
                      ) -> Tensor:
    """``Tensor.bernoulli(p=None, *, generator=None)``: see :func:`gradviz.bernoulli`."""
    if p is not None and not _float(p):
        raise TypeError(
            f"bernoulli() received an invalid combination of arguments - got ({_type_names(p)})"
            ", but expected one of:\n * (*, gradviz.Generator generator = None)\n"
            " * (float p, *, gradviz.Generator generator = None)\n")
    return bernoulli(self, p, generator=generator)


def _bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """Fill with 0 or 1, in place: 1 with probability ``p`` (a number, or a tensor broadcast
    to this one's shape). Records ``BernoulliBackward2`` (a number) or ``BernoulliBackward1``
    (a tensor), whose gradients are zero.

    Example:
        >>> import gradviz
        >>> gradviz.zeros(3).bernoulli_(1.0)
        tensor([1., 1., 1.])
    """
    if isinstance(p, Tensor):
        return dispatch_inplace(OPS["bernoulli_tensor_"], self, p,
                                **_gen(generator, "bernoulli_"))
    if not _float(p):
        raise TypeError(
            f"bernoulli_() received an invalid combination of arguments - got "
            f"({_type_names(p)}), but expected one of:\n"
            " * (Tensor p, *, gradviz.Generator generator = None)\n"
            " * (float p = 0.5, *, gradviz.Generator generator = None)\n")
    return dispatch_inplace(OPS["bernoulli_"], self, p=float(p), **_gen(generator, "bernoulli_"))


_NORMAL_SIGNATURES = (
    " * (Tensor mean, Tensor std, *, gradviz.Generator generator = None, Tensor out = None)\n"
    " * (Tensor mean, float std = 1, *, gradviz.Generator generator = None, Tensor out = None)\n"
    " * (float mean, Tensor std, *, gradviz.Generator generator = None, Tensor out = None)\n"
    " * (float mean, float std, tuple of ints size, *, gradviz.Generator generator = None, "
    "Tensor out = None, gradviz.dtype dtype = None, gradviz.layout layout = None, "
    "gradviz.device device = None, bool pin_memory = False, bool requires_grad = False)\n")


def normal(mean: Any = None, std: Any = 1.0, size: Sequence[int] | None = None, *,
           generator: Any = None, dtype: _dtype.dtype | None = None,
           requires_grad: bool = False, device: Any = None) -> Tensor:
    """Samples of a normal distribution, in PyTorch's four forms:

    * ``normal(mean, std)``, both tensors (broadcast): ``NormalBackward3``;
    * ``normal(mean, std=1.0)``, a tensor ``mean`` and a number ``std``: ``NormalBackward1``;
    * ``normal(mean, std)``, a number ``mean`` and a tensor ``std``: ``NormalBackward2``;
    * ``normal(mean, std, size)``, numbers: a new tensor (``dtype``, ``requires_grad``).

    The output has the tensor arguments' (broadcast) shape and ``mean``'s dtype (``std``'s if
    ``mean`` is a number). PyTorch defines the gradients of ``mean`` and ``std`` as zero.

    Example:
        >>> import gradviz
        >>> g = gradviz.Generator().manual_seed(0)
        >>> gradviz.normal(gradviz.tensor([0.0, 10.0]), 0.0, generator=g)
        tensor([ 0., 10.])
    """
    if mean is None and size is not None:
        raise TypeError('normal() missing 1 required positional arguments: "mean"')
    tm, ts = isinstance(mean, Tensor), isinstance(std, Tensor)
    if _bad_generator(generator):
        tm = ts = False  # no overload takes it: the error below
    if size is None and tm and ts:
        try:
            np.broadcast_shapes(mean.shape, std.shape)
        except ValueError:
            raise RuntimeError(broadcast_message("normal", [tuple(mean.shape), tuple(std.shape)])
                               ) from None
        return dispatch(OPS["normal_tensor_tensor"], mean, std, **_gen(generator, "normal"))
    if size is None and tm and _float(std):
        return dispatch(OPS["normal_tensor_float"], mean, std=float(std),
                        **_gen(generator, "normal"))
    if size is None and ts and _float(mean):
        return dispatch(OPS["normal_float_tensor"], std, mean=float(mean),
                        **_gen(generator, "normal"))
    if size is not None and _float(mean) and _float(std) and not _bad_generator(generator):
        dev = check_device(device, "normal")
        shape = _factories._size((size,), "normal")
        np_dt = _factories._np_dtype(dtype, fn="normal")
        if not std >= 0.0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std):g}")
        draw = _factories.rng(generator, "normal")
        z = _factories._alloc(lambda sh, dt: draw.standard_normal(sh).astype(dt), shape, np_dt,
                              dev)
        if dev.type != "meta":  # (a meta result: nothing drawn, nothing to scale)
            z = (z * np_dt.type(std) + np_dt.type(mean)).astype(np_dt)
        return _factories._finish(z, requires_grad)
    args = () if mean is None else (mean, std) if size is None else (mean, std, size)
    kw = {"generator": generator} if _bad_generator(generator) else {}
    raise TypeError(f"normal() received an invalid combination of arguments - got "
                    f"({_type_names(*args, **kw)}), but expected one of:\n"
                    + _NORMAL_SIGNATURES)


def poisson(input: Tensor, generator: Any = None) -> Tensor:
    """A Poisson count of rate ``input`` for each element, in input's floating dtype
    (``PoissonBackward0``, whose gradient is zero).

    Example:
        >>> import gradviz
        >>> gradviz.poisson(gradviz.zeros(3))
        tensor([0., 0., 0.])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if _bad_generator(generator):
        raise TypeError(f"poisson(): argument 'generator' (position 2) must be "
                        f"gradviz.Generator, not {type(generator).__name__}")
    return dispatch(OPS["poisson"], input, **_gen(generator, "poisson"))


def randint_like(input: Tensor, low: Any = 0, high: Any = None, *, generator: Any = None,
                 dtype: _dtype.dtype | None = None, requires_grad: bool = False,
                 device: Any = None) -> Tensor:
    """Random integers from ``[low, high)`` with ``input``'s shape and (unless ``dtype``)
    dtype; ``randint_like(x, high)`` starts at 0.

    Example:
        >>> import gradviz
        >>> t = gradviz.randint_like(gradviz.zeros(4, dtype=gradviz.long), 3)
        >>> bool(((t >= 0) & (t < 3)).all()), t.dtype
        (True, gradviz.int64)
    """
    dev = input.device if device is None else check_device(device, "randint_like")
    if high is None:
        low, high = 0, low
    if isinstance(high, Tensor) and high.ndim == 0 and high._data.dtype.kind in "iu":
        high = int(high.item())
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
               for v in (low, high)):
        given = (input, high) if low == 0 else (input, low, high)
        rest = ("gradviz.memory_format memory_format = None, gradviz.dtype dtype = None, "
                "gradviz.layout layout = None, gradviz.device device = None, "
                "bool pin_memory = False, bool requires_grad = False)\n")
        first = ("Tensor input, int low, int high", "Tensor input, Tensor high",
                 "Tensor input, int high")
        raise TypeError(
            f"randint_like() received an invalid combination of arguments - got "
            f"({_type_names(*given)}), but expected one of:\n"
            + "".join(f" * ({a}, *, gradviz.Generator generator, {rest} * ({a}, *, {rest}"
                      for a in first))
    np_dt = _factories._np_dtype(dtype, input._data.dtype, fn="randint_like")
    if dev.type == "meta":  # random_'s checks on one element of a spare generator: no draw
        Tensor._make(np.zeros((), np_dt)).random_(int(low), int(high),
                                                  generator=np.random.default_rng(0))
        return _factories._finish(meta_array(tuple(input.shape), np_dt), requires_grad)
    out = Tensor._make(np.zeros(input.shape, np_dt))
    out.random_(int(low), int(high), generator=generator)  # random_'s checks and texts
    return _factories._finish(out._data, requires_grad)


# -- dropout -------------------------------------------------------------------------------------
def dropout_noise(input: Tensor, p: float, shape: tuple | None = None) -> Tensor:
    """The mask ``dropout`` multiplies by, as PyTorch's CPU kernel makes it: 0 with probability
    ``p``, else ``1 / (1 - p)``, in input's dtype (``shape``: the mask's, for the feature
    dropouts); a 0-d zero when ``p == 1``. Integer inputs are refused as PyTorch refuses them
    (its ``noise.div_(1 - p)`` cannot write a float into them).

    Example:
        >>> import gradviz
        >>> dropout_noise(gradviz.ones(3), 1.0)
        tensor(0.)
    """
    dt = input._data.dtype
    if p == 1:
        return Tensor._make(np.zeros((), dt))
    if dt.kind != "f":
        name = _SCALAR_TYPE.get(dt.name, dt.name)
        raise RuntimeError(f"result type Float can't be cast to the desired output type {name}")
    if input.is_meta:  # a meta mask, nothing drawn (NOTE [meta device] in gradviz/_device.py)
        return Tensor._make(meta_array(tuple(input.shape) if shape is None else shape, dt))
    keep = _factories.rng().random(tuple(input.shape) if shape is None else shape) < 1 - p
    # PyTorch's `noise.bernoulli_(1 - p).div_(1 - p)`: the division in input's dtype.
    return Tensor._make(keep.astype(dt) / dt.type(1 - p))


def _dropout(input: Tensor, p: float, train: bool, inplace: bool) -> Tensor:
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")
    if not train or p == 0 or input._data.size == 0:
        return input
    from gradviz.ops import functional as F

    noise = dropout_noise(input, p)
    return F.mul_(input, noise) if inplace else F.mul(input, noise)


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.dropout``: zero each element with probability ``p`` and scale the others by
    ``1 / (1 - p)`` when ``train``; ``input`` itself otherwise (or when ``p == 0``). Recorded as
    PyTorch records it on the CPU: a multiplication by the mask (``MulBackward0``).
    (``nn.functional.dropout`` is the same, with a ``ValueError`` for a bad ``p``.)

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(4, requires_grad=True)
        >>> gradviz.dropout(x, 0.5, True).grad_fn
        <MulBackward0 object at ...>
        >>> gradviz.dropout(x, 0.5, False) is x
        True
    """
    return _dropout(input, p, train, False)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.dropout_``: :func:`dropout` in place (``MulBackward0`` of ``mul_``).

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(4)
        >>> gradviz.dropout_(x, 1.0, True) is x, x
        (True, tensor([0., 0., 0., 0.]))
    """
    return _dropout(input, p, train, True)


# -- the random in-place fills -------------------------------------------------------------------
def _exponential_(self: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with samples of density ``lambd * exp(-lambd * x)``, in place
    (``ExponentialBackward0`` when recorded: its gradient is zero).

    Example:
        >>> import gradviz
        >>> bool((gradviz.empty(5).exponential_(2.0) >= 0).all())
        True
    """
    return dispatch_inplace(OPS["exponential_"], self, lambd=float(lambd),
                            **_gen(generator, "exponential_"))


def _geometric_(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    """Fill with the number of Bernoulli(``p``) trials up to the first success (1, 2, ...),
    in place (``GeometricBackward0``); integer tensors too.

    Example:
        >>> import gradviz
        >>> bool((gradviz.empty(5).geometric_(0.5) >= 1).all())
        True
    """
    return dispatch_inplace(OPS["geometric_"], self, p=float(p), **_gen(generator, "geometric_"))


def _cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *,
             generator: Any = None) -> Tensor:
    """Fill with Cauchy samples of that ``median`` and scale ``sigma``, in place
    (``CauchyBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.empty(2, 3).cauchy_(0.0, 2.0).shape
        gradviz.Size([2, 3])
    """
    return dispatch_inplace(OPS["cauchy_"], self, median=float(median), sigma=float(sigma),
                            **_gen(generator, "cauchy_"))


def _log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *,
                 generator: Any = None) -> Tensor:
    """Fill with ``exp`` of normal samples of that ``mean`` and ``std``, in place
    (``LogNormalBackward0``).

    Example:
        >>> import gradviz
        >>> bool((gradviz.empty(5).log_normal_() > 0).all())
        True
    """
    return dispatch_inplace(OPS["log_normal_"], self, mean=float(mean), std=float(std),
                            **_gen(generator, "log_normal_"))


def install(Tensor: type) -> None:  # noqa: N803 - the class being extended
    """Add this module's ``Tensor`` methods (called by gradviz/ops/methods.py)."""
    Tensor.bernoulli = _bernoulli_method
    Tensor.bernoulli_ = _bernoulli_
    Tensor.exponential_ = _exponential_
    Tensor.geometric_ = _geometric_
    Tensor.cauchy_ = _cauchy_
    Tensor.log_normal_ = _log_normal_
