"""The elementwise functions that need more than their row: abs and square, clamp and its
relatives (clamp_min and clamp_max are generated from their
overloads' rows), rounding, the trigonometric aliases, nan_to_num, atan2, hypot,
fmax/fmin, xlogy_, heaviside, lerp, addcmul/addcdiv, polygamma, float_power.

The unary functions (exp, floor, tan ...), maximum, minimum, sgn, logit, logaddexp and
logaddexp2 are generated from their rows' signatures (gradviz/ops/api.py), fmod, copysign,
xlogy and round from their overloads' rows (NOTE [overloaded rows]). Why each one here is
not (yet): several rows behind one name (torch's overloads not migrated yet: clamp, lerp,
float_power), a composite (square is pow, the aliases, abs's bool check before its
row), a module-level in-place function the Tensor method cannot stand for (nan_to_num_,
asinh_ ...; gradviz/ops/functional/inplace.py makes the others from the Tensor methods), or a
method whose tensor-only errors count positions without ``self`` (TENSOR_ONLY_METHODS: atan2,
hypot, fmax, fmin, heaviside, addcmul, addcdiv).
(Their in-place forms are Tensor methods, as the generated ``floor_`` ... are.)"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from gradviz import _dtype
from gradviz.ops import _args
from gradviz.ops.dispatch import (
    dispatch,
    dispatch_inplace,
)
from gradviz.ops.functional.common import (
    _O,
    _dtype_word,
    _int_arg,
    _method_form,
    _overloads,
    _tensors_only,
)
from gradviz.tensor import Tensor, _is_number

__all__ = [
    "abs", "absolute", "square", "clamp", "clip",
    "fix", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh",
    "nan_to_num", "atan2", "arctan2", "hypot", "fmax", "fmin", "heaviside",
    "lerp", "addcmul", "addcdiv", "round_", "nan_to_num_", "xlogy_", "asinh_", "acosh_",
    "atanh_", "polygamma", "float_power"
]


def _floating_kernel(name: str, input: Tensor, kernel: str) -> None:
    """PyTorch's error for a floating-point-only kernel called on an integer tensor."""
    if input._data.dtype.kind != "f":
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{input.dtype._legacy[:-6]}\' ({name}: input of '
            f"shape {list(input.shape)}; convert it with .float() first)")


def abs(input: Tensor) -> Tensor:  # noqa: A001 - torch.abs
    """Elementwise absolute value (``AbsBackward0``; the gradient at 0 is 0).

    Example:
        >>> import gradviz
        >>> gradviz.abs(gradviz.tensor([-1.5, 2.0]))
        tensor([1.5000, 2.0000])
    """
    if input._data.dtype == np.bool_:
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return dispatch(_O["abs"], input)


absolute = abs


def square(input: Tensor) -> Tensor:
    """``input ** 2``, recorded as PyTorch records it (``PowBackward0`` with exponent 2).

    Example:
        >>> import gradviz
        >>> gradviz.square(gradviz.tensor([3.0]))
        tensor([9.])
    """
    if input._data.dtype == np.bool_:
        input = input.to(_dtype.int64)
    return dispatch(_O["pow"], input, exponent=2)  # at::pow.Tensor_Scalar, as torch's C++


def _bound(b: Any, like: Tensor) -> Any:
    if b is None or isinstance(b, Tensor):
        return b
    return Tensor._make(np.asarray(b, dtype=np.result_type(like._data, b)))


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Limit values to ``[min, max]`` (either may be None). Number bounds record
    ``ClampBackward1``, tensor bounds ``ClampBackward0``; the gradient passes where
    ``min <= input <= max``.

    Example:
        >>> import gradviz
        >>> gradviz.clamp(gradviz.tensor([-2.0, 0.5, 3.0]), -1, 1)
        tensor([-1.0000,  0.5000,  1.0000])
    """
    for b in (min, max):
        if not (b is None or isinstance(b, Tensor) or _is_number(b)):
            given = {k: v for k, v in (("min", min), ("max", max)) if v is not None}
            raise _args.overload_error("clamp", (input,), given)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return dispatch(_O["clamp_tensor"], input, _bound(min, input), _bound(max, input))
    return dispatch(_O["clamp"], input, min=min, max=max)


clip = clamp


def _tensor_only(name: str, other: Any) -> None:
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")


def round_(input: Tensor, *, decimals: int | None = None) -> Tensor:
    """In-place :func:`round` (``torch.round_``, ``x.round_()``).

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([0.4, 1.6])
        >>> gradviz.round_(x) is x, x
        (True, tensor([0., 2.]))
    """
    if decimals is None:
        return dispatch_inplace(_O["round"], input)
    return dispatch_inplace(_O["round_decimals"], input, decimals=int(decimals))


def _alias(row: str, name: str) -> Any:
    def fn(input: Tensor) -> Tensor:
        return dispatch(_O[row], input)

    call, shown = _O[row].example.splitlines()
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Alias of :func:`gradviz.{row}` (records ``{_O[row].node}``, as PyTorch's "
                  f"``torch.{name}`` does).\n\n    Example:\n        >>> import gradviz\n"
                  f"        >>> {call.replace(f'gradviz.{row}(', f'gradviz.{name}(', 1)}\n"
                  f"        {shown}\n    ")
    return fn


fix = _alias("trunc", "fix")
arcsin, arccos = _alias("asin", "arcsin"), _alias("acos", "arccos")
arctan, arcsinh = _alias("atan", "arctan"), _alias("asinh", "arcsinh")
arccosh, arctanh = _alias("acosh", "arccosh"), _alias("atanh", "arctanh")


def _failing_inplace(name: str) -> Any:
    def fn(input: Tensor) -> Tensor:
        return dispatch_inplace(_O[name + "_"], input)

    fn.__name__ = fn.__qualname__ = name + "_"
    fn.__doc__ = (f"In-place :func:`gradviz.{name}`. PyTorch records it as "
                  f"``{_O[name + '_'].node}``, which has no derivative: a backward through it "
                  "fails.\n\n    Example:\n        >>> import gradviz\n"
                  "        >>> x = gradviz.tensor([0.5])\n"
                  f"        >>> gradviz.{name}_(x) is x\n        True\n    ")
    return fn


asinh_, acosh_, atanh_ = (_failing_inplace(n) for n in ("asinh", "acosh", "atanh"))


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """Replace NaN with ``nan``, +inf with ``posinf`` and -inf with ``neginf`` (by default the
    dtype's largest and smallest finite values) (``NanToNumBackward0``: the gradient is 0
    where the input was not finite).

    Example:
        >>> import gradviz
        >>> gradviz.nan_to_num(gradviz.tensor([float("nan"), float("inf"), 1.0]), posinf=9.0)
        tensor([0., 9., 1.])
    """
    return dispatch(_O["nan_to_num"], input, nan=nan, posinf=posinf, neginf=neginf)


def nan_to_num_(input: Tensor, nan: float = 0.0, posinf: float | None = None,
                neginf: float | None = None) -> Tensor:
    """In-place :func:`nan_to_num` (``torch.nan_to_num_``, ``x.nan_to_num_()``).

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([float("nan"), 1.0])
        >>> gradviz.nan_to_num_(x) is x, x
        (True, tensor([0., 1.]))
    """
    return dispatch_inplace(_O["nan_to_num"], input, nan=nan, posinf=posinf, neginf=neginf)


def atan2(input: Tensor, other: Tensor) -> Tensor:
    """The angle of the point ``(other, input)`` in ``(-pi, pi]``, with broadcasting
    (``Atan2Backward0``); integer tensors give the default float type.

    Example:
        >>> import gradviz
        >>> gradviz.atan2(gradviz.tensor([1.0, -1.0]), gradviz.tensor([-1.0, -1.0]))
        tensor([ 2.3562, -2.3562])
    """
    _tensors_only("atan2", input=input, other=other)
    return dispatch(_O["atan2"], input, other)


arctan2 = atan2


def atan2_(input: Tensor, other: Tensor) -> Tensor:
    """In-place :func:`atan2`."""
    _tensors_only("atan2_", other=other)
    return dispatch_inplace(_O["atan2"], input, other)


def hypot(input: Tensor, other: Tensor) -> Tensor:
    """``sqrt(input ** 2 + other ** 2)`` with broadcasting (``HypotBackward0``); floating point
    tensors only, as in PyTorch.

    Example:
        >>> import gradviz
        >>> gradviz.hypot(gradviz.tensor([3.0]), gradviz.tensor([4.0]))
        tensor([5.])
    """
    _tensors_only("hypot", input=input, other=other)
    return dispatch(_O["hypot"], input, other)


def hypot_(input: Tensor, other: Tensor) -> Tensor:
    """In-place :func:`hypot`."""
    _tensors_only("hypot_", other=other)
    return dispatch_inplace(_O["hypot"], input, other)



def fmax(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise maximum that ignores NaN: NaN only where both are (``FmaxBackward0``; a tie
    gives ``input`` the whole gradient, unlike :func:`maximum`).

    Example:
        >>> import gradviz
        >>> gradviz.fmax(gradviz.tensor([float("nan"), 1.0]), gradviz.tensor([2.0, 3.0]))
        tensor([2., 3.])
    """
    _tensors_only("fmax", input=input, other=other)
    return dispatch(_O["fmax"], input, other)


def fmin(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise minimum that ignores NaN: NaN only where both are (``FminBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.fmin(gradviz.tensor([float("nan"), 1.0]), gradviz.tensor([2.0, 3.0]))
        tensor([2., 1.])
    """
    _tensors_only("fmin", input=input, other=other)
    return dispatch(_O["fmin"], input, other)


def xlogy_(input: Tensor, other: Any) -> Tensor:
    """In-place :func:`xlogy` (``torch.xlogy_``, ``x.xlogy_(other)``).

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([0.0, 2.0])
        >>> gradviz.xlogy_(x, 1.0) is x, x
        (True, tensor([0., 0.]))
    """
    if isinstance(other, Tensor):
        return dispatch_inplace(_O["xlogy"], input, other)
    if _is_number(other):
        return dispatch_inplace(_O["xlogy_scalar_other"], input, other=other)
    raise _overloads("xlogy_", (other,), ("Tensor other", "Number other"))


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """The step function: 0 where ``input < 0``, ``values`` where it is 0, 1 above; both
    tensors of one dtype. Not differentiable: with an input that requires grad it records
    PyTorch's ``NotImplemented`` node, whose backward fails.

    Example:
        >>> import gradviz
        >>> gradviz.heaviside(gradviz.tensor([-2.0, 0.0, 3.0]), gradviz.tensor([0.5]))
        tensor([0.0000, 0.5000, 1.0000])
    """
    _tensors_only("heaviside", input=input, values=values)
    _heaviside_checks(input, values)
    return dispatch(_O["heaviside"], input, values)


def heaviside_(input: Tensor, values: Tensor) -> Tensor:
    """In-place :func:`heaviside`."""
    _tensors_only("heaviside_", values=values)
    _heaviside_checks(input, values)
    return dispatch_inplace(_O["heaviside_"], input, values)


def _heaviside_checks(input: Tensor, values: Tensor) -> None:
    # Before dispatch: it casts a 0-dim `values` to the input's dtype, which PyTorch refuses.
    from gradviz.ops._kernels import heaviside_checks

    heaviside_checks(input._data, values._data)


_LERP_SIGNATURES = ("Tensor input, Tensor end, Tensor weight",
                    "Tensor input, Tensor end, Number weight")


def _lerp_row(fn: str, input: Any, end: Any, weight: Any) -> tuple[Any, dict]:
    if not (isinstance(input, Tensor) and isinstance(end, Tensor)
            and (isinstance(weight, Tensor) or _is_number(weight))):
        raise _overloads(fn, (input, end, weight), _LERP_SIGNATURES)
    # Before dispatch, which casts 0-dim operands: PyTorch refuses a 0-dim `end` of another
    # dtype (it takes a 0-dim `weight` of any floating dtype).
    from gradviz.ops._kernels import lerp_checks

    if isinstance(weight, Tensor):
        checked = {"end": end._data} | ({"weight": weight._data} if weight.ndim else {})
        lerp_checks("lerp_kernel_tensor", input._data, **checked)
        return _O["lerp_tensor"], {}
    lerp_checks("lerp_kernel_scalar", input._data, end=end._data)
    return _O["lerp"], {"weight": weight}


def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """``input + weight * (end - input)``, with broadcasting: ``LerpBackward0`` for a number
    ``weight``, ``LerpBackward1`` for a tensor one. ``input``, ``end`` (and a tensor
    ``weight``) must share one floating dtype, as in PyTorch.

    Example:
        >>> import gradviz
        >>> gradviz.lerp(gradviz.tensor([0.0, 10.0]), gradviz.tensor([10.0, 20.0]), 0.25)
        tensor([ 2.5000, 12.5000])
    """
    row, kwargs = _lerp_row("lerp", input, end, weight)
    if kwargs:
        return dispatch(row, input, end, **kwargs)
    return dispatch(row, input, end, weight)


def lerp_(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """In-place :func:`lerp`."""
    row, kwargs = _lerp_row("lerp_", input, end, weight)
    if kwargs:
        return dispatch_inplace(row, input, end, **kwargs)
    return dispatch_inplace(row, input, end, weight)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 * tensor2``, with broadcasting (``AddcmulBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.addcmul(gradviz.ones(2), gradviz.tensor([1.0, 2.0]),
        ...                 gradviz.tensor([3.0, 4.0]), value=0.5)
        tensor([2.5000, 5.0000])
    """
    _tensors_only("addcmul", input=input, tensor1=tensor1, tensor2=tensor2)
    return dispatch(_O["addcmul"], input, tensor1, tensor2, value=value)


def addcmul_(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """In-place :func:`addcmul` (what Adam-style optimizers call on their moment buffers)."""
    _tensors_only("addcmul_", tensor1=tensor1, tensor2=tensor2)
    return dispatch_inplace(_O["addcmul"], input, tensor1, tensor2, value=value)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 / tensor2``, with broadcasting (``AddcdivBackward0``);
    integer ``tensor1`` and ``tensor2`` are refused, as PyTorch refuses them.

    Example:
        >>> import gradviz
        >>> gradviz.addcdiv(gradviz.ones(2), gradviz.tensor([1.0, 2.0]),
        ...                 gradviz.tensor([4.0, 4.0]), value=2)
        tensor([1.5000, 2.0000])
    """
    _tensors_only("addcdiv", input=input, tensor1=tensor1, tensor2=tensor2)
    return dispatch(_O["addcdiv"], input, tensor1, tensor2, value=value)


def addcdiv_(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """In-place :func:`addcdiv`."""
    _tensors_only("addcdiv_", tensor1=tensor1, tensor2=tensor2)
    return dispatch_inplace(_O["addcdiv"], input, tensor1, tensor2, value=value)


# The Tensor methods of the tensor-only functions above (gradviz/ops/methods.py installs them).
TENSOR_ONLY_METHODS = {
    name: _method_form(fn, name, params) for name, fn, params in (
        ("atan2", atan2, ("other",)), ("atan2_", atan2_, ("other",)),
        ("arctan2", atan2, ("other",)), ("hypot", hypot, ("other",)),
        ("hypot_", hypot_, ("other",)), ("fmax", fmax, ("other",)), ("fmin", fmin, ("other",)),
        ("heaviside", heaviside, ("values",)), ("heaviside_", heaviside_, ("values",)),
        ("addcmul", addcmul, ("tensor1", "tensor2")),
        ("addcmul_", addcmul_, ("tensor1", "tensor2")),
        ("addcdiv", addcdiv, ("tensor1", "tensor2")),
        ("addcdiv_", addcdiv_, ("tensor1", "tensor2")))}


def polygamma(n: int, input: Tensor) -> Tensor:
    """The ``n``-th derivative of :func:`digamma` (``PolygammaBackward0``; ``n = 0`` is
    digamma itself, recorded as ``PolygammaBackward0`` too).

    Example:
        >>> import gradviz
        >>> gradviz.polygamma(1, gradviz.tensor([1.0]))
        tensor([1.6449])
    """
    n = _int_arg("polygamma", "n", 1, n)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return dispatch(_O["polygamma"], input, n=n)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    """``x.polygamma(n)``: :func:`polygamma` with the order first, as torch's method takes it."""
    return polygamma(n, self)


def _polygamma_(self: Tensor, n: int) -> Tensor:
    """In-place :func:`polygamma` (``x.polygamma_(n)``)."""
    n = _int_arg("polygamma_", "n", 1, n)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return dispatch_inplace(_O["polygamma_"], self, n=n)


def float_power(input: Any, exponent: Any) -> Tensor:
    """``input ** exponent`` in float64, whatever the operands' dtypes: PyTorch converts both to
    double first (``ToCopyBackward0`` for a float32 tensor that requires grad), then records
    ``pow`` (``PowBackward0``/``1``/``2``).

    Example:
        >>> import gradviz
        >>> gradviz.float_power(gradviz.tensor([2, 3]), 2)
        tensor([4., 9.], dtype=gradviz.float64)
    """
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise _overloads("float_power", (input, exponent), (
            "Tensor input, Tensor exponent", "Number self, Tensor exponent",
            "Tensor input, Number exponent"))
    if isinstance(input, Tensor) and input.dtype != _dtype.float64:
        input = input.to(_dtype.float64)
    if isinstance(exponent, Tensor) and exponent.dtype != _dtype.float64:
        exponent = exponent.to(_dtype.float64)
    if not isinstance(input, Tensor):
        input = builtins.float(input)
    if not isinstance(exponent, Tensor):
        exponent = builtins.float(exponent)
    # the overload of pow the operands' kinds pick (as torch's C++ calls at::pow)
    if not isinstance(input, Tensor):
        return dispatch(_O["pow_scalar_base"], exponent, self=input)
    if isinstance(exponent, Tensor):
        return dispatch(_O["pow_tensor"], input, exponent)
    return dispatch(_O["pow"], input, exponent=exponent)


def float_power_(input: Tensor, exponent: Any) -> Tensor:
    """In-place :func:`float_power`: ``input`` must already be float64."""
    if input.dtype != _dtype.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {_dtype_word(input)} but "
                           "the operation's result requires dtype Double")
    if isinstance(exponent, Tensor) and exponent.dtype != _dtype.float64:
        exponent = exponent.to(_dtype.float64)
    if isinstance(exponent, Tensor):
        return dispatch_inplace(_O["pow_tensor"], input, exponent)
    return dispatch_inplace(_O["pow"], input, exponent=builtins.float(exponent))
