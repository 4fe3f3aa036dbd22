"""Tensor factories mirroring torch's: ``tensor``, ``zeros``, ``rand``, ``arange`` ...

Randomness comes from one NumPy generator that :func:`manual_seed` resets, so seeded programs
are repeatable (the numbers differ from PyTorch's, whose generator is different).
"""

from __future__ import annotations

import builtins
import json
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradviz import _device, _dtype, _layout
from gradviz._device import CPU, META, MetaArray, check_device, meta_array
from gradviz._dtype import dtype as DType
from gradviz.autograd.grad_mode import is_grad_enabled
from gradviz.tensor import Tensor, _is_number, _type_name

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "rand",
           "randn", "randint", "randperm", "arange", "linspace", "eye", "rand_like",
           "randn_like", "manual_seed", "seed", "initial_seed", "default_generator",
           "Generator",
           # Tensor methods (installed on the class below), documented with the factories
           "new_tensor", "new_ones", "new_zeros", "new_empty", "new_full"]


class Generator:
    """A source of random numbers, as ``torch.Generator``: pass it as ``generator=`` to
    ``rand``, ``randn``, ``randint``, ``randperm``, the in-place fills (``uniform_`` ...),
    ``nn.init``, ``DataLoader`` and ``random_split`` to draw from it instead of the default
    generator. It wraps a NumPy generator, so its numbers differ from PyTorch's.

    Example:
        >>> import gradviz
        >>> g = gradviz.Generator().manual_seed(42)
        >>> a = gradviz.rand(2, generator=g)
        >>> bool((gradviz.rand(2, generator=g.manual_seed(42)) == a).all())
        True
    """

    # PyTorch's seed for a Generator nobody has seeded yet.
    DEFAULT_SEED = 67280421310721

    def __init__(self, device: Any = "cpu") -> None:
        if check_device(device, "Generator") is META:
            raise RuntimeError("META device type not an accelerator.")
        self._np = np.random.default_rng(self.DEFAULT_SEED)
        self._seed = self.DEFAULT_SEED

    @property
    def device(self) -> Any:
        return _device.device("cpu")

    def manual_seed(self, seed: int) -> Generator:
        """Seed it (returns it, so ``Generator().manual_seed(0)`` reads as in PyTorch)."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        self._seed = int(seed)
        self._np = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        """Seed it from the operating system's entropy; returns the seed."""
        s = int(np.random.SeedSequence().entropy % (2**63))
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed it was last given."""
        return self._seed

    def get_state(self) -> Tensor:
        """Its state, as a uint8 tensor that :meth:`set_state` takes back."""
        text = json.dumps(self._np.bit_generator.state)
        return Tensor._make(np.frombuffer(text.encode(), dtype=np.uint8).copy())

    def set_state(self, new_state: Tensor) -> Generator:
        """Go back to a state :meth:`get_state` gave."""
        if not isinstance(new_state, Tensor) or new_state._data.dtype != np.uint8:
            raise TypeError("expected a gradviz.ByteTensor, but got "
                            f"{type(new_state).__name__}")
        self._np.bit_generator.state = json.loads(new_state._data.tobytes().decode())
        return self

    def __repr__(self) -> str:
        return f"<gradviz.Generator object at {id(self):#x}>"


# The generator every random function uses when given none (seeded 0 until manual_seed).
default_generator = Generator().manual_seed(0)


def rng(generator: Any = None, fn: str = "rand") -> np.random.Generator:
    """The NumPy generator to draw from: ``generator``'s (a :class:`Generator`, or a NumPy
    one), else the default generator's.

    Example:
        >>> import numpy as np
        >>> isinstance(rng(), np.random.Generator)
        True
    """
    if generator is None:
        return default_generator._np
    if isinstance(generator, Generator):
        return generator._np
    if isinstance(generator, np.random.Generator):
        return generator
    raise TypeError(f"{fn}(): argument 'generator' must be gradviz.Generator, not "
                    f"{type(generator).__name__}")


def manual_seed(seed: int) -> Generator:
    """Seed gradviz's default generator (used by ``rand``, ``randn``, ``randint``, dropout ...)
    and return it, as ``torch.manual_seed`` does.

    Example:
        >>> import gradviz
        >>> _ = gradviz.manual_seed(0); a = gradviz.rand(2)
        >>> _ = gradviz.manual_seed(0); bool((a == gradviz.rand(2)).all())
        True
    """
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seed the default generator from the operating system's entropy and return the seed.

    Example:
        >>> import gradviz
        >>> s = gradviz.seed(); s == gradviz.initial_seed()
        True
        >>> _ = gradviz.manual_seed(0)  # back to a repeatable state
    """
    return default_generator.seed()


def initial_seed() -> int:
    """The seed last given to :func:`manual_seed`.

    Example:
        >>> import gradviz
        >>> _ = gradviz.manual_seed(7); gradviz.initial_seed()
        7
    """
    return default_generator.initial_seed()


def _np_dtype(dtype: DType | None, fallback: np.dtype | None = None, fn: str = "tensor"
              ) -> np.dtype:
    if dtype is not None:
        if not isinstance(dtype, DType):
            raise TypeError(f"{fn}(): argument 'dtype' must be gradviz.dtype, not "
                            f"{type(dtype).__name__}")
        return dtype.np
    return fallback if fallback is not None else _dtype.get_default_dtype().np


def check_bool(fn: str, requires_grad: Any, position: int | None = None) -> None:
    """PyTorch's argument check: ``requires_grad`` must be a bool (not 1, not 'yes')."""
    if not isinstance(requires_grad, (bool, np.bool_)):
        where = "" if position is None else f" (position {position})"
        raise TypeError(f"{fn}(): argument 'requires_grad'{where} must be bool, not "
                        f"{type(requires_grad).__name__}")


def invalid_combination(fn: str, args: tuple, kwargs: dict) -> TypeError:
    """The first line of PyTorch's overload-resolution error, e.g.
    ``rand() received an invalid combination of arguments - got (int, requires_grad=str), ...``.
    """
    pos = ", ".join(type(a).__name__ if not isinstance(a, Tensor) else "Tensor" for a in args)
    kw = ", ".join(f"{k}={type(v).__name__}" for k, v in kwargs.items())
    got = f"{pos}, {kw}" if pos and kw else (f"{kw}, " if kw else pos)
    return TypeError(f"{fn}() received an invalid combination of arguments - got ({got}), but "
                     f"expected one of:\n * the signatures help(gradviz.{fn}) shows")


def _check_bool_overload(fn: str, args: tuple, requires_grad: Any) -> None:
    # Factories with several overloads (rand, arange ...) say so in another form than ones().
    if not isinstance(requires_grad, (bool, np.bool_)):
        raise invalid_combination(fn, args, {"requires_grad": requires_grad})


def check_layout(fn: str, layout: Any, overload_args: tuple | None = None) -> None:
    """PyTorch's ``layout=`` argument: None or ``gradviz.strided``, the only layout gradviz has
    (``torch.zeros(2, layout=torch.strided)`` runs unchanged). Anything else is not a layout
    here: PyTorch's type error, in the form of a factory with several overloads
    (``overload_args``: the positional arguments it names) or of one with a single signature.
    """
    if layout is None or layout is _layout.strided:
        return
    if overload_args is not None:
        raise invalid_combination(fn, overload_args, {"layout": layout})
    raise TypeError(f"{fn}(): argument 'layout' must be gradviz.layout, not "
                    f"{type(layout).__name__}")


def _alloc(make: Any, shape: tuple[int, ...], np_dt: np.dtype, dev: Any = CPU) -> np.ndarray:
    """``make(shape, np_dt)`` with PyTorch's errors for sizes that overflow or do not fit
    (NumPy's MemoryError and ValueError never reach the user); on ``dev`` meta, a meta array
    made without calling ``make`` (no memory, no random draw: NOTE [meta device])."""
    numel = 1
    for n in shape:
        numel *= n
    if numel * np_dt.itemsize > 2**63 - 1:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    if dev is META:
        return meta_array(shape, np_dt)
    try:
        return make(shape, np_dt)
    except (MemoryError, ValueError):
        raise RuntimeError(
            "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
            f"memory: you tried to allocate {numel * np_dt.itemsize} bytes. Error code 12 "
            "(Cannot allocate memory)") from None


def _finish(arr: np.ndarray, requires_grad: bool, dev: Any = CPU) -> Tensor:
    if dev is META and type(arr) is not MetaArray:  # values computed anyway (arange): dropped
        arr = meta_array(arr.shape, arr.dtype)
    t = Tensor._make(arr)
    if requires_grad:
        if arr.dtype.kind not in "fc":  # PyTorch's factory text: capitalised, unlike requires_grad_
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t.requires_grad_(True)
    return t


# -- out= -----------------------------------------------------------------------------------------
# NOTE [out=]: PyTorch's `out=` variants write the result into a tensor the caller gives and
# return that very tensor. They record no graph, so with grad mode on they refuse any argument
# (`out` included) that requires grad; `out` is resized to the result's shape (an op warns when
# `out` held elements, a factory does not), the values are cast to its dtype where PyTorch allows
# the cast, and its version is bumped as by any in-place write.
def check_out(fn: str, out: Any, *inputs: Any, factory: bool = False) -> None:
    """Refuse ``out=`` as PyTorch does: not a tensor, or (grad mode on) it or an input requires
    grad. Inputs may be tensors, numbers or lists of tensors.

    Example:
        >>> import gradviz
        >>> check_out("add", gradviz.empty(2), gradviz.ones(2))  # nothing to refuse
    """
    if not isinstance(out, Tensor):
        raise TypeError(f"{fn}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if not is_grad_enabled():
        return
    flat = [t for a in inputs for t in (a if isinstance(a, (list, tuple)) else (a,))]
    if out.requires_grad or any(isinstance(t, Tensor) and t.requires_grad for t in flat):
        raise RuntimeError(f"{'aten::' if factory else ''}{fn}(): functions with out=... "
                           "arguments don't support automatic differentiation, but one of the "
                           "arguments requires grad.")


def write_out(out: Tensor, arr: np.ndarray, warn: bool = True) -> Tensor:
    """Write ``arr`` into ``out`` (NOTE [out=]) and return ``out``.

    Example:
        >>> import gradviz, numpy as np
        >>> out = gradviz.empty(2)
        >>> write_out(out, np.array([1, 2])) is out, out
        (True, tensor([1., 2.]))
    """
    if not np.can_cast(arr.dtype, out._data.dtype, casting="same_kind"):
        raise RuntimeError(f"result type {_type_name(arr.dtype)[8:-6]} can't be cast to the "
                           f"desired output type {_type_name(out._data.dtype)[8:-6]}")
    if arr.shape != out._data.shape:
        if warn and out._data.size:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out._data.shape)}, which does not match the required output shape "
                f"{list(arr.shape)}. This behavior is deprecated, and in a future PyTorch release "
                "outputs will not be resized unless they have zero elements. You can explicitly "
                "reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0).", UserWarning, stacklevel=4)
        out._data = np.empty(arr.shape, out._data.dtype)
    np.copyto(out._data, arr, casting="unsafe")
    out._version_counter.version += 1
    return out


def _factory_out(fn: str, out: Any, dtype: DType | None, requires_grad: bool, make: Any,
                 floating: str | None = None) -> Tensor:
    """A factory's ``out=``: ``make(np_dtype)`` in ``out``'s dtype, written into ``out``;
    ``floating`` names the kernel that refuses other dtypes (``rand``'s, ``randn``'s)."""
    check_out(fn, out, factory=True)
    np_dt = out._data.dtype
    if dtype is not None and _np_dtype(dtype, fn=fn) != np_dt:
        raise RuntimeError(f"dtype {_type_name(_np_dtype(dtype))[8:-6]} does not match dtype of "
                           f"out parameter ({_type_name(np_dt)[8:-6]})")
    if floating is not None:
        _floating_kernel(floating, np_dt)
    write_out(out, make(np_dt), warn=False)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _floating_kernel(kernel: str, np_dt: np.dtype) -> None:
    if np_dt.kind != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_type_name(np_dt)[8:-6]}'")


def int_list(fn: str, size: tuple, arg: str = "size") -> tuple[int, ...]:
    """A size given as ints or one tuple/list of ints, checked with PyTorch's texts.

    Example:
        >>> int_list("ones", (2, 3)), int_list("ones", ([2, 3],))
        ((2, 3), (2, 3))
    """
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    elif len(size) == 1 and not isinstance(size[0], (int, np.integer, Tensor)):
        raise TypeError(f"{fn}(): argument '{arg}' (position 1) must be tuple of ints, not "
                        f"{type(size[0]).__name__}")
    out = []
    for pos, s in enumerate(size, 1):
        if isinstance(s, Tensor) and s.ndim == 0 and s._data.dtype.kind in "iu":
            s = int(s.item())
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"{fn}(): argument '{arg}' failed to unpack the object at pos {pos} "
                            f"with error \"type must be tuple of ints,but got "
                            f"{type(s).__name__}\"")
        if not -2**63 <= s < 2**63:
            raise TypeError(f"{fn}(): argument '{arg}' failed to unpack the object at pos {pos} "
                            "with error \"Overflow when unpacking long long\"")
        out.append(int(s))
    return tuple(out)


def _size(size: tuple, fn: str = "empty") -> tuple[int, ...]:
    size = int_list(fn, size)
    for s in size:
        if s < 0:
            if fn == "zeros":  # torch's zeros checks before it allocates, with its own text
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
    return size


def _given_size(fn: str, args: tuple, size: Any) -> tuple:
    """The size as given: positionally (``zeros(2, 3)``, ``zeros((2, 3))``) or as the keyword
    ``size=`` (``zeros(size=(2, 3))``), not both; in the form :func:`_size` takes."""
    if size is None:
        if not args:  # torch.zeros() is no 0-d tensor: the size is required
            if fn in ("rand", "randn"):
                raise invalid_combination(fn, (), {})
            raise TypeError(f'{fn}() missing 1 required positional arguments: "size"')
        return args
    if args:
        if fn in ("rand", "randn"):  # several overloads: torch says so in its other form
            raise invalid_combination(fn, args, {"size": size})
        raise TypeError(f"{fn}() got multiple values for argument 'size'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{fn}(): argument 'size' must be tuple of ints, not "
                        f"{type(size).__name__}")
    return (size,)


def _infer_np(data: Any) -> np.ndarray:
    """Convert Python data as torch.tensor does: floats -> default dtype, ints -> int64."""
    if isinstance(data, Tensor):
        return data._data.copy()
    if isinstance(data, np.generic):  # a NumPy scalar keeps its dtype, as torch.tensor does
        data = np.asarray(data)
    if isinstance(data, np.ndarray):
        if data.dtype.kind not in "biuf":
            raise TypeError(f"can't convert np.ndarray of type numpy.{data.dtype.name}.")
        return data.copy()
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        data = [x.item() if isinstance(x, Tensor) and x.numel() == 1 else
                (x.tolist() if isinstance(x, Tensor) else x) for x in data]
    try:
        arr = np.array(data)
    except ValueError:  # ragged nested lists
        _check_data(data)
        raise
    kind = arr.dtype.kind
    if kind == "f":
        return arr.astype(_dtype.get_default_dtype().np)
    if kind in "iu":
        return arr.astype(np.int64)
    if kind == "b":
        return arr
    if kind == "O" or kind in "USV":
        _check_data(data)
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    raise TypeError(f"tensor(): unsupported data of type {arr.dtype}")


def _check_data(data: Any) -> None:
    """Raise PyTorch's error for data it cannot make a tensor of: ragged nesting (the sizes are
    read off the first element at each depth), ``None``, strings."""
    sizes = []
    probe = data
    while isinstance(probe, (list, tuple)):
        sizes.append(len(probe))
        probe = probe[0] if probe else None
    stack = [(data, 0)]
    while stack:
        item, dim = stack.pop()
        if isinstance(item, str):
            raise TypeError("new(): invalid data type 'str'")
        if item is None:
            raise RuntimeError("Could not infer dtype of NoneType")
        if isinstance(item, (list, tuple)):
            if dim >= len(sizes):
                raise TypeError(f"'{type(item).__name__}' object cannot be interpreted as an "
                                "integer")
            if len(item) != sizes[dim]:
                raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} "
                                 f"(got {len(item)})")
            stack.extend((x, dim + 1) for x in reversed(item))
        elif dim < len(sizes):
            raise TypeError(f"not a sequence (tensor(): expected a sequence at dim {dim}, got "
                            f"{type(item).__name__})")


def tensor(data: Any, *, dtype: DType | None = None, requires_grad: bool = False,
           device: Any = None,
           name: str | None = None) -> Tensor:
    """A new tensor copying ``data`` (numbers, nested lists, NumPy arrays).

    Python floats become float32 (the default dtype), ints int64, bools bool; NumPy arrays keep
    their dtype. ``name`` labels the tensor in gradviz's drawings.

    Example:
        >>> import gradviz
        >>> gradviz.tensor([[1.0, 2.0]], requires_grad=True, name="w")
        tensor([[1., 2.]], requires_grad=True)
    """
    dev = check_device(device, "tensor")
    check_bool("tensor", requires_grad)
    arr = _infer_np(data)
    if dtype is not None:
        if arr.dtype.kind == "f" and isinstance(data, (float, list, tuple)):
            # Convert Python floats directly: not through float32 (0.3 must stay 0.3 in float64).
            try:
                arr = np.array(data, dtype=np.float64)
            except Exception:  # noqa: BLE001 - nested tensors etc.: keep the inferred array
                pass
        arr = arr.astype(_np_dtype(dtype))
    t = _finish(arr, requires_grad, dev)
    if name is not None:
        t.name = name
    return t


def as_tensor(data: Any, dtype: DType | None = None) -> Tensor:
    """Like :func:`tensor`, but returns ``data`` itself when it already is a tensor of that dtype
    and shares memory with a NumPy array when it can.

    Example:
        >>> import gradviz, numpy as np
        >>> a = np.zeros(2); t = gradviz.as_tensor(a); a[0] = 5; t
        tensor([5., 0.], dtype=gradviz.float64)
    """
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype is dtype else data.to(dtype)
    if isinstance(data, np.ndarray):
        arr = data if dtype is None else data.astype(dtype.np, copy=False)
        _dtype.to_dtype(arr.dtype)  # rejects unsupported dtypes with PyTorch's message
        return Tensor._make(arr)
    return tensor(data, dtype=dtype)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray`` (same dtype).

    Example:
        >>> import gradviz, numpy as np
        >>> gradviz.from_numpy(np.arange(3)).dtype
        gradviz.int64
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.to_dtype(ndarray.dtype)
    return Tensor._make(ndarray)


def zeros(*args: Any, size: Any = None, out: Tensor | None = None, dtype: DType | None = None,
          layout: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A tensor of zeros (written into ``out`` if given, NOTE [out=]).

    Example:
        >>> import gradviz
        >>> gradviz.zeros(2, 3).shape
        gradviz.Size([2, 3])
    """
    size = _given_size("zeros", args, size)
    dev = check_device(device, "zeros")
    check_layout("zeros", layout)
    check_bool("zeros", requires_grad)
    if out is not None:
        shape = _size(size, "zeros")
        return _factory_out("zeros", out, dtype, requires_grad, lambda dt: np.zeros(shape, dt))
    arr = _alloc(np.zeros, _size(size, "zeros"), _np_dtype(dtype, fn="zeros"), dev)
    return _finish(arr, requires_grad)


def ones(*args: Any, size: Any = None, out: Tensor | None = None, dtype: DType | None = None,
         layout: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A tensor of ones (written into ``out`` if given, NOTE [out=]).

    Example:
        >>> import gradviz
        >>> gradviz.ones(2)
        tensor([1., 1.])
    """
    size = _given_size("ones", args, size)
    dev = check_device(device, "ones")
    check_layout("ones", layout)
    check_bool("ones", requires_grad)
    if out is not None:
        shape = _size(size, "ones")
        return _factory_out("ones", out, dtype, requires_grad, lambda dt: np.ones(shape, dt))
    return _finish(_alloc(np.ones, _size(size, "ones"), _np_dtype(dtype, fn="ones"), dev),
                   requires_grad)


def full(size: Sequence[int], fill_value: Any, *, dtype: DType | None = None,
         layout: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A tensor filled with ``fill_value`` (its dtype inferred from the value, as in PyTorch).

    Example:
        >>> import gradviz
        >>> gradviz.full((2,), 7)
        tensor([7, 7])
    """
    dev = check_device(device, "full")
    check_layout("full", layout)
    check_bool("full", requires_grad)
    if not _is_number(fill_value):
        raise TypeError("full(): argument 'fill_value' (position 2) must be Number, not "
                        f"{type(fill_value).__name__}")
    if dtype is None:
        fallback = (np.dtype(np.bool_) if isinstance(fill_value, bool) else
                    np.dtype(np.int64) if isinstance(fill_value, int) else None)
        np_dt = _np_dtype(None, fallback)
    else:
        np_dt = _np_dtype(dtype, fn="full")
    shape = _size((size,), "full")
    return _finish(_alloc(lambda sh, dt: np.full(sh, fill_value, dt), shape, np_dt, dev),
                   requires_grad)


def empty(*args: Any, size: Any = None, dtype: DType | None = None, layout: Any = None,
          requires_grad: bool = False, device: Any = None) -> Tensor:
    """An uninitialised tensor (here: zeros, so that runs are repeatable).

    Example:
        >>> import gradviz
        >>> gradviz.empty(2).shape
        gradviz.Size([2])
    """
    size = _given_size("empty", args, size)
    dev = check_device(device, "empty")
    check_layout("empty", layout)
    check_bool("empty", requires_grad)
    arr = _alloc(np.zeros, _size(size, "empty"), _np_dtype(dtype, fn="empty"), dev)
    return _finish(arr, requires_grad)


def rand(*args: Any, size: Any = None, generator: Generator | None = None,
         out: Tensor | None = None, dtype: DType | None = None, layout: Any = None,
         requires_grad: bool = False, device: Any = None) -> Tensor:
    """Uniform samples from ``[0, 1)`` (written into ``out`` if given, NOTE [out=]).

    Example:
        >>> import gradviz
        >>> gradviz.rand(2, 2).shape
        gradviz.Size([2, 2])
    """
    size = _given_size("rand", args, size)
    dev = check_device(device, "rand")
    check_layout("rand", layout, size)
    _check_bool_overload("rand", size, requires_grad)
    shape = _size(size, "rand")
    if out is not None:
        return _factory_out("rand", out, dtype, requires_grad,
                            lambda dt: rng(generator, "rand").random(shape).astype(dt),
                            floating="check_uniform_bounds")
    np_dt = _np_dtype(dtype)
    _floating_kernel("check_uniform_bounds", np_dt)
    draw = rng(generator, "rand")
    return _finish(_alloc(lambda sh, dt: draw.random(sh).astype(dt), shape, np_dt, dev),
                   requires_grad)


def randn(*args: Any, size: Any = None, generator: Generator | None = None,
          out: Tensor | None = None, dtype: DType | None = None, layout: Any = None,
          requires_grad: bool = False, device: Any = None) -> Tensor:
    """Standard normal samples; the size as ints, one tuple, or ``size=`` (written into ``out``
    if given, NOTE [out=]).

    Example:
        >>> import gradviz
        >>> gradviz.randn(3).shape, gradviz.randn(size=(2, 3)).shape
        (gradviz.Size([3]), gradviz.Size([2, 3]))
    """
    size = _given_size("randn", args, size)
    dev = check_device(device, "randn")
    check_layout("randn", layout, size)
    _check_bool_overload("randn", size, requires_grad)
    shape = _size(size, "randn")
    if out is not None:
        return _factory_out("randn", out, dtype, requires_grad,
                            lambda dt: rng(generator, "randn").standard_normal(shape).astype(dt),
                            floating="normal_kernel_cpu")
    np_dt = _np_dtype(dtype)
    _floating_kernel("normal_kernel_cpu", np_dt)
    draw = rng(generator, "randn")
    return _finish(_alloc(lambda sh, dt: draw.standard_normal(sh).astype(dt), shape, np_dt, dev),
                   requires_grad)


def randint(low: int | None = None, high: int | None = None, size: Sequence[int] = (), *,
            generator: Generator | None = None, dtype: DType | None = None,
            layout: Any = None, device: Any = None) -> Tensor:
    """Random integers from ``[low, high)`` (``randint(high, size)`` starts at 0).

    Example:
        >>> import gradviz
        >>> gradviz.randint(0, 10, (3,)).dtype
        gradviz.int64
    """
    dev = check_device(device, "randint")
    check_layout("randint", layout, tuple(a for a in (low, high, size) if a not in (None, ())))
    if low is None:  # randint(high=h, size=s): randint(h, s) with keywords
        if high is None:
            raise invalid_combination("randint", (), {"size": size})
        low = 0
    if isinstance(size, (int, np.integer)) or (high is not None and not isinstance(
            high, (int, np.integer, tuple, list))):
        raise invalid_combination("randint", (low, high, size), {})
    if isinstance(high, (tuple, list)):  # randint(high, size), as torch allows
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    np_dt = _np_dtype(dtype, np.dtype(np.int64))
    draw = rng(generator, "randint")
    shape = _size((size,), "randint")
    return _finish(_alloc(lambda sh, dt: draw.integers(low, high, sh).astype(dt), shape, np_dt,
                          dev), False)


def randperm(n: int, *, generator: Generator | None = None, dtype: DType | None = None,
             layout: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A random permutation of ``0 .. n - 1`` (int64).

    Example:
        >>> import gradviz
        >>> sorted(gradviz.randperm(4).tolist())
        [0, 1, 2, 3]
    """
    dev = check_device(device, "randperm")
    check_layout("randperm", layout, (n,))
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    np_dt = _np_dtype(dtype, np.dtype(np.int64))
    return _finish(rng(generator, "randperm").permutation(n).astype(np_dt), requires_grad, dev)


def arange(start: float, end: float | None = None, step: float = 1, *,
           dtype: DType | None = None, layout: Any = None, requires_grad: bool = False,
           device: Any = None) -> Tensor:
    """Evenly spaced values in ``[start, end)``; int64 when all arguments are ints.

    Example:
        >>> import gradviz
        >>> gradviz.arange(3), gradviz.arange(0, 1, 0.5)
        (tensor([0, 1, 2]), tensor([0.0000, 0.5000]))
    """
    dev = check_device(device, "arange")
    check_layout("arange", layout, (start,) if end is None else (start, end))
    _check_bool_overload("arange", (start,) if end is None else (start, end), requires_grad)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    all_int = builtins.all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    fallback = np.dtype(np.int64) if all_int else None
    np_dt = _np_dtype(dtype, fallback)
    return _finish(np.arange(start, end, step).astype(np_dt), requires_grad, dev)


def linspace(start: float, end: float, steps: int, *, dtype: DType | None = None,
             layout: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    Example:
        >>> import gradviz
        >>> gradviz.linspace(0, 1, 3)
        tensor([0.0000, 0.5000, 1.0000])
    """
    dev = check_device(device, "linspace")
    check_layout("linspace", layout, (start, end, steps))
    _check_bool_overload("linspace", (start, end, steps), requires_grad)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    # A 0-d tensor end point is read as a number: numpy would step in a float32 tensor's
    # precision, torch steps in double and rounds to ``dtype`` once.
    start, end = (v.item() if hasattr(v, "item") else v for v in (start, end))
    return _finish(np.linspace(start, end, steps).astype(_np_dtype(dtype)), requires_grad, dev)


def eye(n: int, m: int | None = None, *, dtype: DType | None = None, layout: Any = None,
        requires_grad: bool = False, device: Any = None) -> Tensor:
    """The identity matrix (``n`` x ``m``).

    Example:
        >>> import gradviz
        >>> gradviz.eye(2)
        tensor([[1., 0.],
                [0., 1.]])
    """
    dev = check_device(device, "eye")
    check_layout("eye", layout, (n,) if m is None else (n, m))
    _check_bool_overload("eye", (n,) if m is None else (n, m), requires_grad)
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    shape = (n, n if m is None else m)
    return _finish(_alloc(lambda sh, dt: np.eye(*sh, dtype=dt), shape, _np_dtype(dtype), dev),
                   requires_grad)


def rand_like(input: Tensor, *, generator: Generator | None = None,
              dtype: DType | None = None, layout: Any = None, requires_grad: bool = False,
              device: Any = None) -> Tensor:
    """Uniform samples with ``input``'s shape and dtype.

    Example:
        >>> import gradviz
        >>> gradviz.rand_like(gradviz.zeros(2)).shape
        gradviz.Size([2])
    """
    dev = input.device if device is None else check_device(device, "rand_like")
    check_layout("rand_like", layout, (input,))
    _check_bool_overload("rand_like", (input,), requires_grad)
    np_dt = _np_dtype(dtype, input._data.dtype)
    draw = rng(generator, "rand_like")
    return _finish(_alloc(lambda sh, dt: draw.random(sh).astype(dt), tuple(input.shape), np_dt,
                          dev), requires_grad)


def randn_like(input: Tensor, *, generator: Generator | None = None,
               dtype: DType | None = None, layout: Any = None, requires_grad: bool = False,
               device: Any = None) -> Tensor:
    """Standard normal samples with ``input``'s shape and dtype.

    Example:
        >>> import gradviz
        >>> gradviz.randn_like(gradviz.zeros(2)).shape
        gradviz.Size([2])
    """
    dev = input.device if device is None else check_device(device, "randn_like")
    check_layout("randn_like", layout, (input,))
    _check_bool_overload("randn_like", (input,), requires_grad)
    np_dt = _np_dtype(dtype, input._data.dtype)
    draw = rng(generator, "randn_like")
    return _finish(_alloc(lambda sh, dt: draw.standard_normal(sh).astype(dt), tuple(input.shape),
                          np_dt, dev), requires_grad)


# -- Tensor.new_tensor, new_ones ...: factories that take their dtype and device from a tensor --
# Installed on the class at the end of this section: gradviz/tensor.py sits below this module
# (NOTE [no import circle] there), as it sits below the op layer that installs its math.
def new_tensor(self: Tensor, data: Any, *, dtype: DType | None = None,
               requires_grad: bool = False, device: Any = None) -> Tensor:
    """A new tensor of ``data`` with this tensor's dtype (or ``dtype``).

    Example:
        >>> import gradviz
        >>> gradviz.tensor([1, 2]).new_tensor([1.5])
        tensor([1])
    """
    check_bool("new_tensor", requires_grad)
    return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad,
                  device=self.device if device is None else device)


def _new_size(fn: str, args: tuple, size: Any) -> tuple:
    """A size given positionally (``x.new_zeros(2, 3)``) or as ``size=``, not both."""
    if size is None:
        return args
    if args:
        raise TypeError(f"{fn}() got multiple values for argument 'size'")
    return (size,)


def _new_like(self: Tensor, fn: str, size: tuple, fill: Any, dtype: DType | None,
              requires_grad: Any, device: Any, layout: Any = None) -> Tensor:
    # on this tensor's device unless told, as in PyTorch (a meta tensor's: meta)
    dev = self.device if device is None else check_device(device, fn)
    check_layout(fn, layout)
    check_bool(fn, requires_grad)
    np_dt = self._data.dtype if dtype is None else _np_dtype(dtype, fn=fn)
    arr = _alloc(lambda sh, dt: np.full(sh, fill, dt), _size(size, fn), np_dt, dev)
    return _finish(arr, requires_grad)


def new_ones(self: Tensor, *args: Any, size: Any = None, dtype: DType | None = None,
             layout: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """Ones of ``size`` with this tensor's dtype (or ``dtype``).

    Example:
        >>> import gradviz
        >>> gradviz.tensor([1, 2]).new_ones(3)
        tensor([1, 1, 1])
    """
    return _new_like(self, "new_ones", _new_size("new_ones", args, size), 1, dtype,
                     requires_grad, device, layout)


def new_zeros(self: Tensor, *args: Any, size: Any = None, dtype: DType | None = None,
              layout: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """Zeros of ``size`` with this tensor's dtype (or ``dtype``).

    Example:
        >>> import gradviz
        >>> gradviz.ones(1).new_zeros(2, 2).shape
        gradviz.Size([2, 2])
    """
    return _new_like(self, "new_zeros", _new_size("new_zeros", args, size), 0, dtype,
                     requires_grad, device, layout)


def new_empty(self: Tensor, *args: Any, size: Any = None, dtype: DType | None = None,
              layout: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """An uninitialised tensor of ``size`` (here zeros) with this tensor's dtype.

    Example:
        >>> import gradviz
        >>> gradviz.ones(1).new_empty(3).shape
        gradviz.Size([3])
    """
    return _new_like(self, "new_empty", _new_size("new_empty", args, size), 0, dtype,
                     requires_grad, device, layout)


def new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: DType | None = None,
             layout: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """``fill_value`` in every element of ``size``, with this tensor's dtype.

    Example:
        >>> import gradviz
        >>> gradviz.tensor([1, 2]).new_full((2,), 1.5)
        tensor([1, 1])
    """
    if not _is_number(fill_value):
        raise TypeError("new_full(): argument 'fill_value' (position 2) must be Number, not "
                        f"{type(fill_value).__name__}")
    return _new_like(self, "new_full", (size,), fill_value, dtype, requires_grad, device,
                     layout)


for _method in (new_tensor, new_ones, new_zeros, new_empty, new_full):
    _method.__qualname__ = f"Tensor.{_method.__name__}"
    setattr(Tensor, _method.__name__, _method)
del _method
