"""Tensor methods and operators, each a thin call into :mod:`gradviz.ops.functional`.

The core layer's ``tensor.py`` knows nothing of ops; importing :mod:`gradviz.ops` calls
:func:`install` (docs/architecture.md). Methods generated from a table row are installed by
:mod:`gradviz.ops.api` instead.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from gradviz import _device, _dtype
from gradviz.ops import _args
from gradviz.tensor import Tensor as _Tensor
from gradviz.tensor import _is_number


def install(Tensor: type) -> None:  # noqa: N803 - the class being extended
    from gradviz.ops import functional as F
    from gradviz.ops.opinfo import OPS

    def _operator(fn, swap: bool = False, arrays: bool = True, tensors: bool = False,
                  row: str | None = None, **row_kwargs: Any):
        fn = _args.raw(fn)  # an operator's arguments are always bound: no wrapper needed
        # NOTE [operator protocol]: an operand of a type the op does not take makes the Python
        # operator return NotImplemented, as torch's do, so that Python raises its own
        # TypeError ("unsupported operand type(s) for +: 'Tensor' and 'str'"), `x == None` is
        # False, and `x * [1, 2]` becomes list repetition (which then asks for an index).
        # A NumPy array is taken on the right only (`x + a`): `a + x` is refused, as torch does.
        # With `row`, a float tensor and a float tensor or number (where `fn` does nothing but
        # call the dispatch point, with `row_kwargs`) go straight to the row's fast path
        # (gradviz/ops/fastpath.py): the same node and event, two calls fewer.
        # (`row_op.fast` is read at each call: it is compiled on first use.)
        row_op = OPS[row] if row is not None and OPS[row].fast is not None else None

        def op(self, other):
            kind = type(other)
            if row_op is not None and type(self) is Tensor and self._data.dtype.kind == "f" and (
                    kind is float or kind is int
                    or (kind is Tensor and other._data.dtype.kind == "f")):
                return row_op.fast(self, other, **row_kwargs)
            # Tensors, floats and ints (the operands of nearly every call) need no test.
            if not (kind is Tensor or (not tensors and (kind is float or kind is int))) and (
                    not _operand(other, arrays and not swap)
                    or (tensors and _is_number(other))):
                return NotImplemented
            return fn(other, self) if swap else fn(self, other)

        op.__name__ = getattr(fn, "__name__", "op")
        return op

    methods: dict[str, Any] = {
        # arithmetic operators, both operand orders
        # `2 + x` and `2 * x` are `x.add(2)` / `x.mul(2)` in PyTorch: x stays `self` (edge 0).
        "__add__": _operator(F.add, row="add", alpha=1),
        "__radd__": _operator(F.add, arrays=False, row="add", alpha=1),
        "__sub__": _operator(F.sub, row="sub", alpha=1),
        "__rsub__": _operator(lambda self, other: F.rsub(self, other), arrays=False),
        "__mul__": _operator(F.mul, row="mul"),
        "__rmul__": _operator(F.mul, arrays=False, row="mul"),
        "__truediv__": _operator(F.div, row="div"), "__rtruediv__": _operator(F.div, swap=True),
        "__floordiv__": _operator(F.floor_divide),
        "__rfloordiv__": _operator(F.floor_divide, swap=True),
        "__mod__": _operator(F.remainder), "__rmod__": _operator(F.remainder, swap=True),
        "__pow__": _operator(F.pow), "__rpow__": _operator(F.pow, swap=True),
        # `x @ 2` is refused by Python, as in torch: matmul takes tensors only.
        "__matmul__": _operator(F.matmul, tensors=True),
        "__rmatmul__": _operator(F.matmul, swap=True, tensors=True),
        "__neg__": F.neg,
        "__pos__": lambda self: self,
        "__abs__": F.abs,
        # comparisons give bool tensors, like PyTorch's
        "__eq__": _operator(F.eq), "__ne__": _operator(F.ne), "__lt__": _operator(F.lt),
        "__le__": _operator(F.le), "__gt__": _operator(F.gt), "__ge__": _operator(F.ge),
        # bitwise, as in PyTorch: logical for bool tensors, an error for floating point ones
        "__and__": _operator(F.bitwise_and), "__rand__": _operator(F.bitwise_and, swap=True),
        "__or__": _operator(F.bitwise_or), "__ror__": _operator(F.bitwise_or, swap=True),
        "__xor__": _operator(F.bitwise_xor), "__rxor__": _operator(F.bitwise_xor, swap=True),
        "__invert__": _invert,
        "__iand__": _operator(F.bitwise_and_), "__ior__": _operator(F.bitwise_or_),
        "__ixor__": _operator(F.bitwise_xor_),
        "__ifloordiv__": _operator(_floor_divide_), "__imod__": _operator(_remainder_),
        "__contains__": _contains, "__reversed__": _reversed,
        "floor_divide": F.floor_divide, "remainder": F.remainder,
        "floor_divide_": _floor_divide_, "remainder_": _remainder_,
        "bitwise_and": F.bitwise_and, "bitwise_or": F.bitwise_or, "bitwise_xor": F.bitwise_xor,
        "bitwise_and_": F.bitwise_and_,
        "bitwise_or_": F.bitwise_or_, "bitwise_xor_": F.bitwise_xor_,
        # in-place operators
        "__iadd__": _operator(F.add_), "__isub__": _operator(F.sub_),
        "__imul__": _operator(F.mul_), "__itruediv__": _operator(F.div_),
        # named methods
        # (methods generated from a table row, such as exp or neg, are installed by
        # gradviz.ops.api.publish)
        "add": F.add, "sub": F.sub, "mul": F.mul, "div": F.div,
        "sum": F.sum, "mean": F.mean, "view": F.view,
        "reshape": F.reshape, "transpose": F.transpose, "swapaxes": F.transpose, "t": F.t,
        "permute": F.permute, "expand": F.expand,
        "squeeze": F.squeeze, "unsqueeze_": F.unsqueeze_, "squeeze_": F.squeeze_,
        "transpose_": F.transpose_, "swapaxes_": F.transpose_, "t_": F.t_,
        "mm": F.mm, "matmul": F.matmul, "dot": F.dot,
        "mv": F.mv, "eq": F.eq, "ne": F.ne, "lt": F.lt, "le": F.le, "gt": F.gt, "ge": F.ge,
        "add_": F.add_, "sub_": F.sub_, "mul_": F.mul_, "div_": F.div_, "zero_": F.zero_,
        "fill_": F.fill_, "copy_": F.copy_, "resize_": F.resize_, "resize_as_": F.resize_as_,
        "uniform_": _uniform_, "normal_": _normal_, "random_": _random_,
        "expand_as": lambda self, other: F.expand(self, other.shape),
        "view_as": lambda self, other: F.view(self, other.shape),
        "reshape_as": lambda self, other: F.reshape(self, other.shape),
        "to": _to, "new": _new, "type_as": lambda self, other: _to(self, other.dtype),
        "float": lambda self: _to(self, _dtype.float32),
        "double": lambda self: _to(self, _dtype.float64),
        "long": lambda self: _to(self, _dtype.int64),
        "int": lambda self: _to(self, _dtype.int32),
        "bool": lambda self: _to(self, _dtype.bool),
        "cpu": lambda self: _to(self, "cpu"),
        "cuda": lambda self, *args, **kwargs: _to(self, "cuda"),  # gradviz's CPU-only error
        "T": property(_T),
        "mT": property(_mT), "mH": property(_mH), "H": property(_H), "adjoint": F.adjoint,
        "addmm": F.addmm, "addmm_": F.addmm_, "trace": F.trace,
        "where": _where,
        "logical_and": F.logical_and, "logical_or": F.logical_or, "logical_xor": F.logical_xor,
        "logical_and_": F.logical_and_, "logical_or_": F.logical_or_,
        "logical_xor_": F.logical_xor_,
    }
    for name, fn in methods.items():
        setattr(Tensor, name, _as_method(fn, name))
    _install_library(Tensor)


def _random_fill(self: _Tensor, row: str, generator: Any = None, **kwargs: Any) -> _Tensor:
    """Overwrite ``self`` with random values in place, from gradviz's generator, through the
    row ``row`` (recorded as PyTorch records it: ``UniformBackward0`` ..., gradient zero; a
    leaf that requires grad is refused as every in-place op refuses it)."""
    from gradviz.ops.derivatives import OPS
    from gradviz.ops.dispatch import dispatch_inplace

    if generator is not None:  # (only when given: a traced op keeps the keywords written)
        kwargs["generator"] = generator
    return dispatch_inplace(OPS[row], self, **kwargs)


def _uniform_(self: _Tensor, from_: float = 0.0, to: float = 1.0, *,
              generator: Any = None) -> _Tensor:
    """Fill with values drawn uniformly from ``[from_, to)``, in place (``Tensor.uniform_``).

    Example:
        >>> import gradviz
        >>> x = gradviz.empty(3).uniform_(-1, 1)
        >>> bool(((x >= -1) & (x < 1)).all())
        True
    """
    return _random_fill(self, "uniform_", generator, from_=float(from_), to=float(to))


def _normal_(self: _Tensor, mean: float = 0.0, std: float = 1.0, *,
             generator: Any = None) -> _Tensor:
    """Fill with values drawn from a normal distribution, in place (``Tensor.normal_``).

    Example:
        >>> import gradviz
        >>> gradviz.zeros(2, 3).normal_(0.0, 0.01).shape
        gradviz.Size([2, 3])
    """
    return _random_fill(self, "normal_", generator, mean=float(mean), std=float(std))


# C type names in random_'s bounds errors, as torch prints them.
_C_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
            "int32": "int", "float16": "c10::Half", "float32": "float", "float64": "double"}


def _random_(self: _Tensor, *args: Any, generator: Any = None) -> _Tensor:
    """Fill with integers drawn uniformly from ``[from, to - 1]``, in place (``Tensor.random_``):
    ``random_(to)``, ``random_(from, to)``, or ``random_()`` for ``[0, 2**mantissa]`` of a
    floating dtype (``[0, max]`` of an integer one).

    Example:
        >>> import gradviz
        >>> t = gradviz.empty(4, dtype=gradviz.long).random_(5)
        >>> bool(((t >= 0) & (t < 5)).all()), t.dtype
        (True, gradviz.int64)
    """
    if len(args) > 2 or not all(type(a) is int for a in args):
        got = ", ".join(type(a).__name__ for a in args)
        raise TypeError(
            f"random_() received an invalid combination of arguments - got ({got}), but "
            "expected one of:\n * (*, gradviz.Generator generator = None)\n"
            " * (int from, int to, *, gradviz.Generator generator = None)\n"
            " * (int to, *, gradviz.Generator generator = None)\n")
    dt = self._data.dtype
    if dt.kind == "f":
        top = 2 ** (np.finfo(dt).nmant + 1)  # every integer up to it is exact in the dtype
    elif dt.kind == "b":
        top = 1
    else:
        top = int(np.iinfo(dt).max)
    low, high = (0, top + 1) if not args else (0, args[0]) if len(args) == 1 else args
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    name = _C_NAMES.get(dt.name, dt.name)
    if args and dt.kind == "f" and high - 1 > top:
        digits = np.finfo(dt).nmant + 1
        warnings.warn(f"to - 1 is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                      f"limitations {name} can support discrete uniform distribution only "
                      "within this range. This warning will become an error in version 1.7 "
                      "release, please fix the code in advance", UserWarning, stacklevel=2)
    elif args and dt.kind != "f" and high - 1 > top:
        raise RuntimeError(f"to - 1 is out of bounds for {name}")
    row = ("random_", "random_to_", "random_from_")[len(args)]
    return _random_fill(self, row, generator, low=low, high=high)


def _as_method(fn: Any, name: str) -> Any:
    """A function of the functional API as a Tensor method whose argument errors read as
    torch's (gradviz/ops/_args.py); operators, properties and lambdas stay as they are."""
    if name.startswith("__") or getattr(fn, "__module__", None) != "gradviz.ops.functional":
        return fn
    return _args.method(_args.raw(fn), name)


def _operand(other: Any, arrays: bool) -> bool:
    """Whether a Python operator takes ``other`` (see NOTE [operator protocol])."""
    return (isinstance(other, _Tensor) or _is_number(other)
            or (arrays and isinstance(other, np.ndarray)))


def _invert(self: Any) -> Any:
    """``~x``: bitwise not of an integer or bool tensor."""
    from gradviz.ops import functional as F

    if self._data.dtype.kind not in "iub":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return F.bitwise_not(self)


def _floor_divide_(self: Any, other: Any) -> Any:
    """In-place :func:`gradviz.floor_divide` (``x //= y``)."""
    from gradviz.ops.derivatives import OPS
    from gradviz.ops.dispatch import dispatch_inplace
    from gradviz.tensor import Tensor

    if isinstance(other, Tensor):
        return dispatch_inplace(OPS["floor_divide"], self, other)
    return dispatch_inplace(OPS["floor_divide_scalar"], self, other=other)


def _remainder_(self: Any, other: Any) -> Any:
    """In-place :func:`gradviz.remainder` (``x %= y``)."""
    from gradviz.ops.derivatives import OPS
    from gradviz.ops.dispatch import dispatch_inplace
    from gradviz.tensor import Tensor

    if isinstance(other, Tensor):
        return dispatch_inplace(OPS["remainder"], self, other)
    return dispatch_inplace(OPS["remainder_scalar"], self, other=other)


def _contains(self: Any, element: Any) -> bool:
    """``element in x``: whether any element equals it, as torch's ``(element == x).any()``."""
    from gradviz.tensor import Tensor, _is_number

    if not (isinstance(element, Tensor) or _is_number(element)):
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed "
                           f"in a {type(element)}.")
    return bool((element == self).any().item())


def _reversed(self: Any) -> Any:
    """``reversed(x)``: ``x.flip(0)``, and a 0-d tensor itself, as torch does."""
    return self if self.ndim == 0 else self.flip(0)


def _T(self: Any) -> Any:  # noqa: N802 - Tensor.T
    """All dimensions reversed, as PyTorch's ``.T`` (``PermuteBackward0``)."""
    from gradviz.ops import functional as F

    return F.permute(self, tuple(range(self.ndim - 1, -1, -1)))


def _where(self: Any, condition: Any, other: Any) -> Any:
    """``self.where(condition, other)``: ``gradviz.where(condition, self, other)``."""
    from gradviz.ops import functional as F

    return F.where(condition, self, other)


def _mT(self: Any) -> Any:  # noqa: N802 - Tensor.mT
    """The last two dimensions swapped, a view (``x.transpose(-2, -1)``, ``TransposeBackward0``).
    """
    from gradviz.ops import functional as F

    return F._matrix_transpose(self, "tensor.mT", "Tensor.mT")


def _mH(self: Any) -> Any:  # noqa: N802 - Tensor.mH
    """The conjugate transpose of the last two dimensions: ``.mT`` for gradviz's real tensors."""
    from gradviz.ops import functional as F

    return F._matrix_transpose(self, "tensor.mH", "Tensor.mH")


def _H(self: Any) -> Any:  # noqa: N802 - Tensor.H
    """The conjugate transpose of a matrix (2-D only; ``.mH`` takes batches)."""
    from gradviz.ops import functional as F

    if self.ndim > 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.ndim}-D tensor. For batches of matrices, consider using "
                           "tensor.mH")
    if self.ndim == 1:
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got 1-D tensor.")
    return F._matrix_transpose(self, "tensor.H", "Tensor.H")


def _to(self: Any, *args: Any, **kwargs: Any) -> Any:
    """``to(dtype)`` (a differentiable cast, ``ToCopyBackward0``), ``to('cpu')`` (itself, or
    PyTorch's error for a meta tensor: it has no values to copy) or ``to('meta')`` (a copy
    without values, ``ToCopyBackward0`` too; NOTE [meta device] in gradviz/_device.py)."""
    from gradviz.ops.derivatives import OPS
    from gradviz.ops.dispatch import dispatch

    target = kwargs.get("dtype")
    dev = None
    for a in (*args, kwargs.get("device")):
        if isinstance(a, _device.device):
            a = str(a)  # then as the device's string, below
        elif isinstance(a, _Tensor):  # x.to(other): other's dtype and device
            a, dev = a.dtype, a.device
        if isinstance(a, (_dtype.dtype, np.dtype)):
            target = a
        elif isinstance(a, str) and a.split(":")[0] in ("cpu", "meta"):
            dev = _device.device(a)
        elif isinstance(a, str):
            if a.split(":")[0] not in _DEVICE_TYPES:
                raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at "
                                   f"start of device string: {a}")
            raise RuntimeError(f"gradviz computes on the CPU only; cannot move a tensor to {a!r}")
        elif isinstance(a, int) and not isinstance(a, bool):  # a device index: an accelerator
            raise RuntimeError("Cannot access accelerator device when none is available. "
                               "(gradviz computes on the CPU only)")
    np_dt = self._data.dtype if target is None else (
        target.np if isinstance(target, _dtype.dtype) else np.dtype(target))
    if dev is not None and dev.type != self.device.type:
        if dev.type == "cpu":
            raise NotImplementedError(_device.NO_DATA)
        out = dispatch(OPS["to_copy"], self, dtype=np_dt)  # the CPU copy, then its values go
        out._data = _device.meta_array(out._data.shape, out._data.dtype)
        return out
    if np_dt == self._data.dtype:
        return self
    return dispatch(OPS["to_copy"], self, dtype=np_dt)


_DEVICE_TYPES = _device.DEVICE_TYPES

# The C++ names PyTorch's TensorOptions show for dtypes, in new()'s dtype mismatch error.
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
              "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool"}


def _new(self: Any, *args: Any, device: Any = None, **kwargs: Any) -> Any:
    """``x.new(...)``, PyTorch's legacy constructor with ``x``'s dtype (what ``FloatTensor(...)``
    calls): ``new()`` is empty, ``new(2, 3)`` or ``new(Size)`` uninitialised (zeros here),
    ``new(data)`` a copy of the data, ``new(tensor)`` an alias of a tensor of that dtype
    (``AliasBackward0``). Never requires grad otherwise.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, dtype=gradviz.float64)
        >>> x.new([1, 2]), x.new(2, 3).shape
        (tensor([1., 2.], dtype=gradviz.float64), gradviz.Size([2, 3]))
    """
    from gradviz import _factories

    if kwargs:
        raise _factories.invalid_combination("new", args, kwargs)
    dev = _device.check_device(device, "new") if device is not None else self.device
    if dev.type != self.device.type:
        raise RuntimeError(f"legacy constructor expects device type: {self.device.type} but "
                           f"device type: {dev.type} was passed")
    out = _new_values(self, args)
    if dev.type == "meta" and not out.is_meta:  # (an alias of a meta tensor is meta already)
        out._data = _device.meta_array(out._data.shape, out._data.dtype)
    return out


def _new_values(self: Any, args: tuple) -> Any:
    """What ``x.new(*args)`` holds, made on the CPU (``_new`` drops the values for meta)."""
    from gradviz import _factories, _size
    from gradviz.ops.derivatives import OPS
    from gradviz.ops.dispatch import dispatch

    dtype = self.dtype
    if not args:
        return _factories.empty(0, dtype=dtype)
    first = args[0]
    if len(args) == 1 and isinstance(first, _Tensor):
        if first.dtype != dtype:
            def options(d: Any) -> str:
                return (f"TensorOptions(dtype={_CPP_NAMES[d.name]}, device=cpu, layout=Strided, "
                        "requires_grad=false (default), pinned_memory=false (default), "
                        "memory_format=(nullopt))")
            raise TypeError(f"expected {options(dtype)} (got {options(first.dtype)})")
        return dispatch(OPS["alias"], first)
    if len(args) == 1 and isinstance(first, str):
        raise TypeError("new(): invalid data type 'str'")
    if len(args) == 1 and (isinstance(first, (bool, np.bool_)) or (
            _is_number(first) and not isinstance(first, (int, np.integer)))):
        raise TypeError(f"new(): data must be a sequence (got {type(first).__name__})")
    if isinstance(first, (int, np.integer, _size.Size)):
        sizes = _factories.int_list("new", args)  # new(2, 3) or new(Size([2, 3]))
        for n in sizes:
            if n < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                                   f"{list(sizes)}")
        return _factories.empty(sizes, dtype=dtype)
    return _factories.tensor(first, dtype=dtype)


def _install_library(Tensor: type) -> None:  # noqa: N803
    """The op library's methods (gradviz/ops/functional/, "The op library") and indexing."""
    from gradviz.ops import _indexing
    from gradviz.ops import functional as F

    # By category, as gradviz/ops/functional/ is split.
    elementwise = ("abs", "absolute", "square", "clamp", "clip", "float_power", "float_power_")
    comparison = ("allclose", "equal", "isclose")
    reductions = ("max", "min", "amax", "amin", "argmax", "argmin", "all", "any", "prod", "var",
                  "std", "norm", "softmax", "log_softmax", "topk", "sort",
                  "argsort", "kthvalue", "median", "nanmedian", "cummax", "cummin",
                  "diff", "msort", "nansum", "nanmean", "aminmax", "mode",
                  "count_nonzero", "bincount", "histc", "quantile", "nanquantile")
    shape = ("flatten", "repeat", "contiguous", "split", "chunk", "unbind", "unsafe_split",
             "unsafe_chunk", "diagonal", "diag", "diag_embed",
             "roll", "movedim", "moveaxis", "tile", "repeat_interleave", "unflatten", "swapdims",
             "rot90", "tensor_split", "hsplit", "vsplit", "dsplit")
    linalg = ("bmm", "outer", "ger", "cross", "kron")
    indexing = ("select", "narrow", "index_select", "gather", "scatter", "scatter_add",
                "masked_fill", "index_put", "masked_select", "take", "nonzero", "argwhere",
                "index_add", "index_copy", "index_fill", "scatter_reduce", "put", "unique",
                "unique_consecutive")
    inplace = ("clamp_", "clip_", "masked_fill_", "scatter_", "scatter_add_", "index_put_",
               "index_add_", "index_copy_", "index_fill_", "scatter_reduce_", "put_")
    for name in (*elementwise, *comparison, *reductions, *shape, *linalg, *indexing, *inplace,
                 "multinomial"):
        setattr(Tensor, name, _as_method(getattr(F, name), name))
    Tensor.split_with_sizes = _as_method(F._split_with_sizes_method, "split_with_sizes")
    Tensor.unsafe_split_with_sizes = _as_method(F.unsafe_split_with_sizes,
                                                 "unsafe_split_with_sizes")
    # (a meta tensor's zero strides are gradviz's own: it is contiguous, NOTE [meta device])
    Tensor.is_contiguous = lambda self: (bool(self._data.flags.c_contiguous)
                                         or type(self._data) is _device.MetaArray)
    Tensor.__getitem__ = _indexing.getitem
    Tensor.__setitem__ = _indexing.setitem
    Tensor.__iter__ = _iter
    # The hand-written elementwise functions with PyTorch's argument handling (the rest are
    # generated from their rows); the tensor-only ones through their method forms.
    for name in ("fix", "arcsin", "arccos", "arctan", "arcsinh", "arccosh",
                 "arctanh", "nan_to_num", "nan_to_num_", "atan2", "atan2_",
                 "arctan2", "hypot", "hypot_", "fmax", "fmin", "heaviside", "heaviside_", "lerp",
                 "lerp_", "addcmul", "addcmul_",
                 "addcdiv", "addcdiv_", "asinh_", "acosh_", "atanh_"):
        fn = F.TENSOR_ONLY_METHODS.get(name) or getattr(F, name)
        setattr(Tensor, name, _as_method(fn, name))
    for alias, row in (("fix_", "trunc_"), ("arcsin_", "asin_"), ("arccos_", "acos_"),
                       ("arctan_", "atan_"), ("arcsinh_", "asinh_"), ("arccosh_", "acosh_"),
                       ("arctanh_", "atanh_"), ("arctan2_", "atan2_")):
        setattr(Tensor, alias, getattr(Tensor, row))
    Tensor.unfold, Tensor.sum_to_size = F._unfold_method, F._sum_to_size
    Tensor.polygamma = F._polygamma_method
    Tensor.flip = _args.method(F._flip_method, "flip")
    Tensor.polygamma_ = F._polygamma_
    Tensor.true_divide, Tensor.true_divide_ = F.true_divide, F.true_divide_
    for name, dt in (("half", _dtype.float16), ("byte", _dtype.uint8), ("char", _dtype.int8),
                     ("short", _dtype.int16)):
        setattr(Tensor, name, _cast_method(name, dt))
    # random sampling: bernoulli, bernoulli_ and the random in-place fills (exponential_ ...)
    from gradviz.ops import sampling

    sampling.install(Tensor)
    # torch's linear algebra (gradviz/ops/_linalg.py, installed in functional)
    for name in ("inverse", "det", "logdet", "slogdet", "cholesky", "matrix_power", "dist",
                 "inner", "vdot", "baddbmm", "addbmm", "svd", "pinverse", "qr"):
        setattr(Tensor, name, _as_method(getattr(F, name), name))
    from gradviz.ops import _linalg

    Tensor.baddbmm_ = _as_method(_linalg.baddbmm_, "baddbmm_")
    Tensor.addbmm_ = _as_method(_linalg.addbmm_, "addbmm_")


def _cast_method(name: str, dt: Any) -> Any:
    """``x.half()``, ``x.byte()`` ...: ``x.to(dtype)`` (``ToCopyBackward0`` where it converts)."""
    def cast(self: Any) -> Any:
        return self.to(dt)

    cast.__name__ = cast.__qualname__ = name
    cast.__doc__ = f"``self.to(gradviz.{dt.name})``."
    return cast


def _iter(self: Any) -> Any:
    """Iterate over the first dimension: ``unbind(0)``, as PyTorch does (``UnbindBackward0``)."""
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(self.unbind(0))
