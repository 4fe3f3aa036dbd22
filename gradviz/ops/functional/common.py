"""What the functional forms share: the table (``_O``), argument checks and PyTorch's error
texts for them, and the way a tensor-only function becomes a Tensor method."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradviz.ops import _args
from gradviz.ops.bindings import dims as _dims  # noqa: F401 - the files use it
from gradviz.ops.bindings import float_only as _float_only  # noqa: F401 - the files use it
from gradviz.ops.bindings import int_arg as _int_arg  # noqa: F401 - the files use it
from gradviz.ops.bindings import tensors_only as _tensors_only
from gradviz.ops.derivatives import OPS
from gradviz.tensor import Tensor, _is_number

__all__: list[str] = []


_O = OPS
_MUL, _ADD = OPS["mul"], OPS["add"]
_PLAIN = (Tensor, float, int)  # operands that need no conversion


def _tensor_arg(x: Any, like: Tensor | None = None) -> Any:
    """Accept tensors and numbers; turn NumPy arrays into constant tensors."""
    t = type(x)
    if t is Tensor or t is float or t is int or isinstance(x, Tensor) or _is_number(x):
        return x
    if isinstance(x, np.ndarray):
        return Tensor._make(x)
    raise TypeError(f"expected a Tensor or a number, got {type(x).__name__}")


def _number(x: Any) -> Any:
    if not _is_number(x):
        raise TypeError(f"expected a Tensor or a number, got {type(x).__name__}")
    return x


def _overloads(fn: str, args: tuple, signatures: tuple[str, ...]) -> TypeError:
    """torch's "invalid combination of arguments" error, with the signatures it lists."""
    got = ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in args)
    listed = "".join(f" * ({s}, *, Tensor out = None)\n" for s in signatures)
    return TypeError(f"{fn}() received an invalid combination of arguments - got ({got}), but "
                     f"expected one of:\n{listed}")


def _method_form(fn: Any, name: str, params: tuple[str, ...]) -> Any:
    """``fn`` as the Tensor method ``name`` (``x.atan2(y)``): a number where a tensor is
    needed is reported at the method's position, ``self`` not counted, as torch's parser does
    (``atan2(): argument 'other' (position 1) must be Tensor, not float``)."""
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        given = dict(zip(params, args))
        given.update((k, kwargs[k]) for k in params if k in kwargs)
        missing = [k for k in params if k not in given]
        if missing:  # torch's wording (gradviz/ops/_args.py)
            raise TypeError(_args.parser_text(name, f"{name}() missing {len(missing)} required "
                                              "positional arguments: "
                                              + ", ".join(f"'{k}'" for k in missing), True))
        _tensors_only(name, **given)
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    return method


_TYPE_NAMES = {"float64": "double", "float32": "float", "float16": "c10::Half"}


def _ints(name: str, v: Any, nd: int, what: str = "convolution") -> tuple:
    """An int, or a sequence of one or ``nd`` ints, as ``nd`` ints (PyTorch's expand_param)."""
    t = (int(v),) if _is_number(v) else tuple(int(x) for x in v)
    if len(t) == 1:
        return t * nd
    if len(t) != nd:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} "
                           f"values to match the {what} dimensions, but got {name}={list(t)}")
    return t


def _named(kind: str, values: Tensor, indices: Tensor) -> Any:
    from gradviz import return_types

    return getattr(return_types, kind)(values, indices)


def _no_bool(kernel: str, input: Tensor) -> None:
    if input._data.dtype == np.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _dtype_word(t: Tensor) -> str:
    """PyTorch's scalar type name of a tensor's dtype (``Float``, ``Long`` ...)."""
    from gradviz.ops._kernels import _SCALAR_TYPE

    return _SCALAR_TYPE.get(t._data.dtype.name, t._data.dtype.name)
