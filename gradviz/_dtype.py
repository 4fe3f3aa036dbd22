"""Data types, spelled as PyTorch spells them (``gradviz.float32`` ...), backed by NumPy dtypes."""

from __future__ import annotations

import numpy as np

__all__ = ["dtype", "float32", "float64", "float16", "int64", "int32", "int16", "int8",
           "uint8", "bool", "float", "double", "half", "long", "int", "to_dtype", "type_name",
           "get_default_dtype", "set_default_dtype"]


class dtype:  # noqa: N801 - PyTorch's spelling
    """A tensor element type: ``gradviz.float32``, ``gradviz.int64``, ...

    Wraps a NumPy dtype and prints the way PyTorch prints its dtypes.

    Example:
        >>> import gradviz
        >>> gradviz.float32, gradviz.float32.is_floating_point
        (gradviz.float32, True)
    """

    __slots__ = ("name", "np", "is_floating_point", "itemsize", "_legacy")

    def __init__(self, name: str, np_dtype: np.dtype, legacy: str) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        self.itemsize = self.np.itemsize
        self._legacy = legacy  # the name `Tensor.type()` reports, e.g. "FloatTensor"

    def __repr__(self) -> str:
        return f"gradviz.{self.name}"

    def __reduce__(self) -> str:
        return self.name


float32 = dtype("float32", np.float32, "FloatTensor")
float64 = dtype("float64", np.float64, "DoubleTensor")
float16 = dtype("float16", np.float16, "HalfTensor")
int64 = dtype("int64", np.int64, "LongTensor")
int32 = dtype("int32", np.int32, "IntTensor")
int16 = dtype("int16", np.int16, "ShortTensor")
int8 = dtype("int8", np.int8, "CharTensor")
uint8 = dtype("uint8", np.uint8, "ByteTensor")
bool = dtype("bool", np.bool_, "BoolTensor")  # noqa: A001 - PyTorch's spelling
# PyTorch's aliases.
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001

_BY_NUMPY = {d.np: d for d in (float32, float64, float16, int64, int32, int16, int8, uint8, bool)}

_default = [float32]


def get_default_dtype() -> dtype:
    """The floating point type that Python floats become (``float32`` unless changed).

    Example:
        >>> import gradviz
        >>> gradviz.get_default_dtype()
        gradviz.float32
    """
    return _default[0]


def set_default_dtype(d: dtype) -> None:
    """Set the floating point type that Python floats and float lists become.

    Example:
        >>> import gradviz
        >>> gradviz.set_default_dtype(gradviz.float64); gradviz.tensor(1.0).dtype
        gradviz.float64
        >>> gradviz.set_default_dtype(gradviz.float32)
    """
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d!r}")
    _default[0] = d


def to_dtype(np_dtype: np.dtype) -> dtype:
    """The gradviz dtype of a NumPy dtype; unsupported kinds raise a ``TypeError``."""
    try:
        return _BY_NUMPY[np_dtype]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).name}. The only supported "
            "types are: float64, float32, float16, int64, int32, int16, int8, uint8, and bool."
        ) from None


def type_name(np_dtype: np.dtype) -> str:
    """PyTorch's legacy type string of a NumPy dtype, as errors and ``Tensor.type()`` spell it.

    Example:
        >>> type_name(np.dtype("float32"))
        'gradviz.FloatTensor'
    """
    return f"gradviz.{to_dtype(np_dtype)._legacy}"
