"""``gradviz.Tensor``: a NumPy array plus the autograd metadata PyTorch keeps on a tensor.

The math lives in :mod:`gradviz.ops` (the derivative table and its one dispatch point); this file
holds what a tensor *is*: its array, ``requires_grad``, ``grad``, ``grad_fn``, ``output_nr``, a
version counter shared with its views, hooks, and the conveniences PyTorch users expect.
"""

from __future__ import annotations

import numbers
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from gradviz import _device, _dtype, _layout
from gradviz._dtype import dtype as _DType
from gradviz._format import tensor_repr
from gradviz._size import Size
from gradviz.autograd import accumulate_grad, hooks, node, saved_variable
from gradviz.autograd.accumulate_grad import AccumulateGrad
from gradviz.autograd.grad_mode import state as _grad_state
from gradviz.autograd.hooks import HookDict, RemovableHandle, add_hook
from gradviz.autograd.node import Node

_MetaArray = _device.MetaArray
# What PyTorch raises where a meta tensor (NOTE [meta device] in _device.py) has no values.
_NO_DATA = _device.NO_DATA
_NO_ITEM = "Tensor.item() cannot be called on meta tensors"

__all__ = ["Tensor"]

_Number = (numbers.Number, np.number, np.bool_)


class _VersionCounter:
    """Shared by a tensor and its views: every in-place write bumps it (``Tensor._version``)."""

    __slots__ = ("version", "last_op")
    inference = False

    def __init__(self) -> None:
        self.version = 0
        self.last_op: str | None = None  # name of the last in-place op's node, for error texts


class _InferenceCounter(_VersionCounter):
    """What an inference tensor (one made in inference mode) and its views share instead of a
    version: PyTorch tracks none for them, so an in-place write, which bumps the version, is
    refused outside inference mode (NOTE [inference mode and grad mode] in grad_mode.py)."""

    __slots__ = ()
    inference = True

    def __init__(self) -> None:
        self.last_op = None

    @property  # type: ignore[override]
    def version(self) -> int:
        return 0

    @version.setter
    def version(self, value: int) -> None:
        if not _grad_state.inference:
            raise RuntimeError(
                "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
                "make a clone to get a normal tensor before doing inplace update.See "
                "https://github.com/pytorch/rfcs/pull/17 for more details.")


class _Extra:
    """Rarely used per-tensor state, kept out of the hot path of tensor creation."""

    __slots__ = ("name", "hooks", "retains_grad", "grad_acc", "post_acc_hooks")

    def __init__(self) -> None:
        self.name: str | None = None
        self.hooks: HookDict | None = None
        self.retains_grad = False
        self.grad_acc: weakref.ref | None = None
        self.post_acc_hooks: HookDict | None = None


# PyTorch's legacy type string, e.g. ``'gradviz.FloatTensor'`` (the name the op layer imports).
_type_name = _dtype.type_name


# Whether float() of a tensor that requires grad has warned yet (once per process, as torch).
_float_warned = False
# torch.set_warn_always(True) makes such once-per-process warnings fire every time.
_warn_always = False


def set_warn_always(b: bool, /) -> None:
    """Make warnings that fire once per process (``float()`` of a tensor that requires grad)
    fire every time, or once again (PyTorch's ``torch.set_warn_always``).

    Example:
        >>> import gradviz
        >>> gradviz.set_warn_always(True); gradviz.is_warn_always_enabled()
        True
        >>> gradviz.set_warn_always(False)
    """
    global _warn_always
    if type(b) is not bool:
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _warn_always = b


def is_warn_always_enabled() -> bool:
    """Whether :func:`set_warn_always` is on (PyTorch's ``torch.is_warn_always_enabled``).

    Example:
        >>> import gradviz
        >>> gradviz.is_warn_always_enabled()
        False
    """
    return _warn_always


class Tensor:
    """A multi-dimensional array that can record the operations applied to it.

    Build tensors with factories such as :func:`gradviz.tensor`; ``Tensor(data)`` makes a
    float32 tensor like ``torch.Tensor(data)``.

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        >>> y = (x * x).sum()
        >>> y.backward()
        >>> x.grad
        tensor([2., 4.])
    """

    # PyTorch's Tensor says it is torch.Tensor (<class 'torch.Tensor'>): this one is gradviz's.
    __module__ = "gradviz"

    __slots__ = ("_data", "_requires_grad", "_grad", "_grad_fn", "_output_nr", "_vc", "_base",
                 "_view_meta", "_extra", "__weakref__")

    # NumPy must hand binary operators with a Tensor operand back to us (ndarray * Tensor).
    __array_ufunc__ = None

    def __init__(self, *args: Any, device: Any = None, **kwargs: Any) -> None:
        # PyTorch's legacy constructor, in the default dtype: Tensor() is empty, Tensor(2, 3)
        # and Tensor(Size) uninitialised (zeros here), Tensor(data) a copy of the data.
        if kwargs:  # requires_grad=, dtype= ...: torch's parser refuses them all
            got = ", ".join([type(a).__name__ for a in args]
                            + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
            raise TypeError(f"new() received an invalid combination of arguments - got ({got}), "
                            "but expected one of:\n * (*, gradviz.device device = None)\n"
                            " * (tuple of ints size, *, gradviz.device device = None)\n"
                            " * (object data, *, gradviz.device device = None)")
        if _device.check_device(device, "new") is _device.META:
            raise RuntimeError("legacy constructor expects device type: cpu but device type: "
                               "meta was passed")
        dt = _dtype.get_default_dtype().np
        first = args[0] if args else ()
        if len(args) == 1 and isinstance(first, str):
            raise TypeError("new(): invalid data type 'str'")
        if len(args) == 1 and (isinstance(first, (bool, np.bool_)) or (
                _is_number(first) and not isinstance(first, (int, np.integer)))):
            raise TypeError(f"new(): data must be a sequence (got {type(first).__name__})")
        if args and (isinstance(first, Size) or all(
                isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args)):
            sizes = tuple(int(n) for n in (first if isinstance(first, Size) else args))
            for n in sizes:
                if n < 0:
                    raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                                       f"{list(sizes)}")
            self._init(np.zeros(sizes, dt), False)
            return
        if len(args) > 1:
            pos, bad = next((i, a) for i, a in enumerate(args, 1)
                            if not isinstance(a, (int, np.integer)) or isinstance(a, bool))
            raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {pos} "
                            f"with error \"type must be tuple of ints,but got "
                            f"{type(bad).__name__}\"")
        self._init(np.array(first, dtype=dt), False)

    def _init(self, arr: np.ndarray, requires_grad: bool) -> None:
        self._data = arr
        self._requires_grad = requires_grad
        self._grad: Tensor | None = None
        self._grad_fn: Node | None = None
        self._output_nr = 0
        # Created on first use (see _version_counter), except for an inference tensor.
        self._vc: _VersionCounter | None = _InferenceCounter() if _grad_state.inference else None
        self._base: Tensor | None = None
        self._view_meta: Any = None  # a view's recipe (gradviz.ops.dispatch.ViewMeta)
        self._extra: _Extra | None = None

    @classmethod
    def _make(cls, arr: Any, requires_grad: bool = False) -> Tensor:
        """Wrap an array without copying (internal fast constructor)."""
        t = object.__new__(cls)
        if type(arr) is not np.ndarray and type(arr) is not _MetaArray:
            arr = np.asarray(arr)  # NumPy reductions hand back scalars, not 0-d arrays
        # NOTE [perf]: _init's body, inlined: every op result comes through here.
        t._data = arr
        t._requires_grad = requires_grad
        t._grad = None
        t._grad_fn = None
        t._output_nr = 0
        t._vc = _InferenceCounter() if _grad_state.inference else None
        t._base = None
        t._view_meta = None
        t._extra = None
        return t

    @property
    def _version_counter(self) -> _VersionCounter:
        """The counter shared with this tensor's views (PyTorch's ``VariableVersion``).

        NOTE [perf]: most tensors are never saved, viewed or written in place, so the counter is
        created on first use; until then the version is 0.
        """
        vc = self._vc
        if vc is None:
            vc = self._vc = _VersionCounter()
        return vc

    @_version_counter.setter
    def _version_counter(self, counter: _VersionCounter) -> None:
        self._vc = counter

    def _x(self) -> _Extra:
        extra = self._extra
        if extra is None:
            extra = self._extra = _Extra()
        return extra

    # -- data and metadata ---------------------------------------------------------------------
    @property
    def data(self) -> Tensor:
        """The same values, detached, with a version counter of its own (PyTorch's ``.data``):
        changes made through it are invisible to autograd's in-place checks."""
        out = Tensor._make(self._data)
        if self.is_inference():
            out._vc = _InferenceCounter()  # .data of an inference tensor is one too
        return out

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._data = value._data

    @property
    def shape(self) -> Size:
        """The size of each dimension, a :class:`gradviz.Size` (a tuple, as ``torch.Size``).

        Example:
            >>> import gradviz
            >>> gradviz.zeros(2, 3).shape
            gradviz.Size([2, 3])
        """
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Any:
        """The shape (a :class:`gradviz.Size`), or the size of one dimension (an int).

        Example:
            >>> import gradviz
            >>> gradviz.zeros(2, 3).size(), gradviz.zeros(2, 3).size(-1)
            (gradviz.Size([2, 3]), 3)
        """
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self) -> int:
        """Number of dimensions."""
        return self._data.ndim

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return self._data.ndim

    def numel(self) -> int:
        """Number of elements."""
        return self._data.size

    nelement = numel

    def ndimension(self) -> int:
        """Number of dimensions (PyTorch's older spelling of :meth:`dim`)."""
        return self._data.ndim

    def is_nonzero(self) -> bool:
        """Whether a one-element tensor is not zero."""
        return bool(self)

    # -- memory layout: what PyTorch reports of a tensor's storage, read off its NumPy array ----
    def stride(self, dim: int | None = None) -> Any:
        """The step, in elements, between neighbours along each dimension (one int for ``dim``):
        a transpose swaps them, an expanded dimension has 0.

        Example:
            >>> import gradviz
            >>> x = gradviz.zeros(3, 4)
            >>> x.stride(), x.t().stride(), x.stride(-1)
            ((4, 1), (1, 4), 1)
        """
        size = self._data.itemsize
        if type(self._data) is _MetaArray:  # its 0 strides are gradviz's: report contiguous
            rev, step = [], 1
            for n in reversed(self._data.shape):
                rev.append(step)
                step *= max(n, 1)
            steps = tuple(reversed(rev))
        else:
            steps = tuple(s // size for s in self._data.strides)
        return steps if dim is None else steps[_wrap_dim(dim, self._data.ndim)]

    def element_size(self) -> int:
        """Bytes per element (4 for float32)."""
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        """Bytes per element (4 for float32)."""
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of the tensor's elements (``numel() * element_size()``)."""
        return self._data.nbytes

    def data_ptr(self) -> int:
        """The address of the tensor's first element (0 for a meta tensor, as in PyTorch)."""
        if type(self._data) is _MetaArray:
            return 0
        return self._data.__array_interface__["data"][0]

    def storage_offset(self) -> int:
        """Where the tensor starts in its base tensor's memory, in elements (0 unless a view).

        Example:
            >>> import gradviz
            >>> x = gradviz.arange(12.0).reshape(3, 4)
            >>> x[1:, 1:].storage_offset(), x[2].storage_offset()
            (5, 8)
        """
        root = self._data
        if type(root) is _MetaArray:
            return 0  # (gradviz keeps no offsets for a meta tensor: NOTE [meta device])
        while isinstance(root.base, np.ndarray):  # the array that owns the memory
            root = root.base
        start = root.__array_interface__["data"][0]
        return (self.data_ptr() - start) // self._data.itemsize

    @property
    def dtype(self) -> _DType:
        """The element type, e.g. ``gradviz.float32``."""
        return _dtype.to_dtype(self._data.dtype)

    @property
    def device(self) -> _device.device:
        """The CPU, where gradviz computes with NumPy, or ``meta`` for a tensor without values
        (NOTE [meta device] in gradviz/_device.py).

        Example:
            >>> import gradviz
            >>> gradviz.ones(2).device, gradviz.ones(2, device="meta").device
            (device(type='cpu'), device(type='meta'))
        """
        return _device.META if type(self._data) is _MetaArray else _device.CPU

    @property
    def is_meta(self) -> bool:
        """Whether this is a meta tensor: a shape and a dtype, no values.

        Example:
            >>> import gradviz
            >>> gradviz.empty(2, 3, device="meta").is_meta, gradviz.ones(1).is_meta
            (True, False)
        """
        return type(self._data) is _MetaArray

    @property
    def is_cpu(self) -> bool:
        """Whether the tensor is on the CPU (every tensor but a meta one)."""
        return type(self._data) is not _MetaArray

    @property
    def layout(self) -> _layout.layout:
        """Always ``gradviz.strided``: a NumPy array is dense, with strides.

        Example:
            >>> import gradviz
            >>> gradviz.ones(2).layout
            gradviz.strided
        """
        return _layout.strided

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another (shares its storage and version counter).

        Example:
            >>> import gradviz
            >>> x = gradviz.ones(2, 3)
            >>> x._is_view(), x[0]._is_view()
            (False, True)
        """
        return self._base is not None

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:
        """PyTorch's legacy type string, e.g. ``'gradviz.FloatTensor'``; given a dtype (or such a
        string, or a class such as ``gradviz.DoubleTensor``), the tensor cast to it.

        Example:
            >>> import gradviz
            >>> x = gradviz.ones(2)
            >>> x.type(), x.type(gradviz.int64), x.type("gradviz.DoubleTensor").dtype
            ('gradviz.FloatTensor', tensor([1, 1]), gradviz.float64)
        """
        if dtype is None:
            return _type_name(self._data.dtype)
        if isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), _DType):
            dtype = dtype.dtype  # a legacy constructor class: x.type(gradviz.DoubleTensor)
        if isinstance(dtype, str):
            legacy = dtype.split(".")[-1]
            found = [d for d in _dtype._BY_NUMPY.values() if d._legacy == legacy]
            if not found or dtype.split(".")[0] not in ("torch", "gradviz") or "." not in dtype:
                raise ValueError(f"invalid type: {dtype!r}")
            dtype = found[0]
        if not isinstance(dtype, _DType):
            raise TypeError("dtype must be a type, str, or dtype object")
        return self.to(dtype)

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    @property
    def name(self) -> str | None:
        """An optional name the visualizer shows for this tensor."""
        return None if self._extra is None else self._extra.name

    @name.setter
    def name(self, value: str | None) -> None:
        self._x().name = None if value is None else str(value)

    @property
    def _version(self) -> int:
        """How many times this tensor's storage was modified in place."""
        vc = self._vc
        if vc is not None and vc.inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return 0 if vc is None else vc.version

    def is_inference(self) -> bool:
        """Whether this tensor was made in inference mode (or is a view of such a tensor).

        Example:
            >>> import gradviz
            >>> with gradviz.inference_mode():
            ...     t = gradviz.ones(2)
            >>> t.is_inference(), gradviz.ones(2).is_inference()
            (True, False)
        """
        vc = self._vc
        return vc is not None and vc.inference

    # -- autograd attributes ---------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to this tensor. Settable on leaves only, as in PyTorch.

        A view requires grad when it has a history or its base requires grad, as PyTorch's
        view metadata answers it: read from the fields, without rebasing the view (asking
        never raises, even for a view whose in-place rebase is refused), and true for a view
        taken from a leaf before that leaf was set to require grad.
        """
        if self._view_meta is not None:
            base = self._base
            return (self._requires_grad or self._grad_fn is not None
                    or base._requires_grad or base._grad_fn is not None)
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if not isinstance(value, (bool, np.bool_)):
            raise RuntimeError("requires_grad must be a bool")
        if value and self.grad_fn is None and self._data.dtype.kind not in "fc":
            # The attribute setter's text differs from requires_grad_()'s, as in PyTorch.
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place on a leaf and return ``self``.

        Example:
            >>> import gradviz
            >>> gradviz.zeros(2).requires_grad_().requires_grad
            True
        """
        if not isinstance(requires_grad, (bool, np.bool_)):
            raise TypeError(f"requires_grad_(): argument 'requires_grad' (position 1) must be "
                            f"bool, not {type(requires_grad).__name__}")
        if self.grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if requires_grad and self._data.dtype.kind not in "fc":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and not _grad_state.inference and self.is_inference():
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient of a leaf (or of a non-leaf after :meth:`retain_grad`).

        Reading it on a non-leaf that does not retain its gradient warns, as PyTorch does:
        such a tensor's ``.grad`` is never filled in.
        """
        if self.grad_fn is not None and self._grad is None and not self.retains_grad:
            warnings.warn(_NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype "
                    f"'{_C_TYPE.get(value._data.dtype.name, value._data.dtype.name)}' to a "
                    f"tensor with grad_dtype '{self.dtype._legacy[:-6]}'. The gradient must "
                    "match the tensor's grad_dtype (defaults to the tensor's dtype). You can set "
                    "the tensor's grad_dtype attribute with a specific dtype, or None to allow "
                    "any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor "
                    "and its gradient may break downstream systems that assume they match.")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor "
                    f"of size '{list(self._data.shape)}'. Please ensure that the gradient and "
                    "the tensor are the same size")
        self._grad = value

    @property
    def grad_fn(self) -> Node | None:
        """The node that made this tensor (None for a leaf): its backward function.

        A view whose base (or another view of it) was modified in place since its ``grad_fn``
        was recorded gets it regenerated here, as PyTorch does when it is read
        (NOTE [in-place on views] in :mod:`gradviz.ops.dispatch`).

        Example:
            >>> import gradviz
            >>> b = gradviz.ones(2, 3, requires_grad=True) * 2
            >>> row = b[0]
            >>> row.grad_fn.name()
            'SelectBackward0'
            >>> _ = b.mul_(3)
            >>> row.grad_fn.name()
            'AsStridedBackward0'
        """
        meta = self._view_meta
        if meta is not None and meta.version != self._version:
            return meta.regenerate(self)
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, node: Node | None) -> None:
        self._grad_fn = node

    @property
    def is_leaf(self) -> bool:
        """True for tensors created by the user (no ``grad_fn``): their gradients accumulate in
        ``.grad``."""
        return self.grad_fn is None

    @property
    def output_nr(self) -> int:
        """Which output of ``grad_fn`` this tensor is."""
        return self._output_nr

    def _grad_accumulator(self) -> AccumulateGrad:
        """This leaf's ``AccumulateGrad``: created on first use, shared while a graph holds it."""
        extra = self._x()
        acc = extra.grad_acc() if extra.grad_acc is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            extra.grad_acc = weakref.ref(acc)
        return acc

    @property
    def retains_grad(self) -> bool:
        """True for a non-leaf after :meth:`retain_grad`."""
        return self._extra is not None and self._extra.retains_grad

    def retain_grad(self) -> None:
        """Keep this non-leaf's gradient in ``.grad`` after backward (a no-op on leaves).

        Example:
            >>> import gradviz
            >>> x = gradviz.ones(2, requires_grad=True)
            >>> y = x * 2; y.retain_grad(); y.sum().backward(); y.grad
            tensor([1., 1.])
        """
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None:
            return
        extra = self._x()
        if extra.retains_grad:
            return
        extra.retains_grad = True
        ref = weakref.ref(self)
        self.grad_fn._register_retains_grad(self._output_nr, ref)

    @property
    def _backward_hooks(self) -> HookDict | None:
        return None if self._extra is None else self._extra.hooks

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; a tensor it returns
        replaces the gradient. Returns a handle whose ``remove()`` unregisters it.

        Example:
            >>> import gradviz
            >>> x = gradviz.ones(2, requires_grad=True)
            >>> h = x.register_hook(lambda g: g * 10)
            >>> (x * 2).sum().backward(); x.grad
            tensor([20., 20.])
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._register_tensor_pre_hook(self._output_nr, hook)
        extra = self._x()
        if extra.hooks is None:
            extra.hooks = HookDict()
        return add_hook(extra.hooks, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]
                                           ) -> RemovableHandle:
        """On a leaf: call ``hook(tensor)`` after its ``.grad`` was updated.

        Example:
            >>> import gradviz
            >>> x = gradviz.ones(2, requires_grad=True)
            >>> h = x.register_post_accumulate_grad_hook(lambda t: print(t.grad))
            >>> (x * 3).sum().backward()
            tensor([3., 3.])
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors")
        extra = self._x()
        if extra.post_acc_hooks is None:
            extra.post_acc_hooks = HookDict()
        return add_hook(extra.post_acc_hooks, hook)

    def detach(self) -> Tensor:
        """A new leaf sharing this tensor's data and version counter, cut from the graph."""
        out = Tensor._make(self._data)
        out._version_counter = self._version_counter
        return out

    def detach_(self) -> Tensor:
        """Make this tensor a leaf that does not require grad, in place (not a view: PyTorch
        refuses those).

        Example:
            >>> import gradviz
            >>> y = gradviz.ones(2, requires_grad=True) * 2
            >>> y.detach_().requires_grad, y.is_leaf
            (False, True)
        """
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self._grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        return self

    # new_tensor, new_ones, new_zeros, new_empty, new_full: factories, so they live with the others
    # in gradviz/_factories.py, which installs them on this class (NOTE [no import circle]).

    # -- conversions -----------------------------------------------------------------------------
    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        if type(self._data) is _MetaArray:
            raise RuntimeError(_NO_ITEM)
        return self._data.reshape(()).item()

    def numpy(self) -> np.ndarray:
        """The underlying NumPy array (shared memory, as in PyTorch); refused for a tensor that
        requires grad while grad mode is on."""
        if self._requires_grad and _grad_state.enabled:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if type(self._data) is _MetaArray:
            raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() "
                            "to copy the tensor to host memory first.")
        return self._data

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def tolist(self) -> Any:
        """The values as (nested) Python lists."""
        if type(self._data) is _MetaArray:
            raise NotImplementedError(_NO_DATA)
        return self._data.tolist()

    def _scalar(self) -> Any:
        # Python's number protocols say ValueError where .item() says RuntimeError, as torch.
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if type(self._data) is _MetaArray:
            raise RuntimeError(_NO_ITEM)
        return self._data.reshape(()).item()

    def __float__(self) -> float:
        global _float_warned
        if self._requires_grad and _grad_state.enabled and (_warn_always or not _float_warned):
            # torch warns once per process (TORCH_WARN_ONCE), and only with grad mode on
            _float_warned = True
            warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to "
                          "unexpected behavior.\nConsider using tensor.detach() first.",
                          UserWarning, stacklevel=2)
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def __complex__(self) -> complex:
        return complex(self._scalar())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with "
                               f"{'no values' if not self._data.size else 'more than one value'}"
                               " is ambiguous")
        if type(self._data) is _MetaArray:
            raise RuntimeError(_NO_ITEM)
        return bool(self._data.reshape(()).item())

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __hash__(self) -> int:
        return id(self)  # by identity, as torch: hash(t) == id(t) (== is elementwise)

    def __repr__(self) -> str:
        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if type(self._data) is _MetaArray:  # no value to format: object's TypeError, as torch
            return object.__format__(self, spec) if spec else repr(self)
        if self._data.ndim == 0 and spec:
            return format(self.item(), spec)
        return repr(self)

    def __reduce_ex__(self, protocol: int) -> Any:
        return (_rebuild, (self._data, self._requires_grad))

    def __deepcopy__(self, memo: dict) -> Tensor:
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        data = self._data
        out = type(self)._make(data.copy() if type(data) is not _MetaArray else
                               _device.meta_array(data.shape, data.dtype), self._requires_grad)
        if self.grad is not None:
            out.grad = self.grad.__deepcopy__({})
        memo[id(self)] = out
        return out


# The C++ type names PyTorch's gradient-assignment errors print.
_C_TYPE = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
           "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
           "bool": "bool"}

_NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If "
    "you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. "
    "See github.com/pytorch/pytorch/pull/30531 for more information.")


def _rebuild(arr: np.ndarray, requires_grad: bool) -> Tensor:
    return Tensor._make(arr, requires_grad)


class _AsGiven(int):
    """A dimension or index made non-negative for the kernels and formulas, that remembers the
    negative value the caller wrote (``given``).

    NOTE [saved as given] PyTorch's nodes save ``dim=-1``, ``x[-3:]``'s start or ``select``'s
    index as the caller wrote them, and its ``_saved_*`` attributes show a negative integer as
    the unsigned 64-bit number it is stored as (``-1`` reads ``18446744073709551615``). gradviz
    normalizes such values once, where the call is parsed, so that every kernel and formula
    sees a plain non-negative int; this int is that value, and the node's ``_saved_*`` reads
    ``given`` (see gradviz/ops/dispatch.py, ``_as_pytorch_shows``). Only a negative value is
    wrapped: a non-negative one is saved as the plain int it already is.

    Example:
        >>> d = _wrap_dim(-1, 3)
        >>> d, d.given, d + 1
        (2, -1, 3)
    """

    def __new__(cls, value: int, given: int) -> _AsGiven:
        self = super().__new__(cls, value)
        self.given = given
        return self

    def __reduce__(self) -> tuple:
        return (_AsGiven, (int(self), self.given))


def _wrap_dim(dim: int, ndim: int) -> int:
    """Normalise a possibly negative dimension, with PyTorch's IndexError when out of range
    (a negative one as an :class:`_AsGiven`, NOTE [saved as given])."""
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not lo <= dim <= hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but "
                         f"got {dim})")
    if dim < 0:
        return _AsGiven(dim + ndim if ndim else 0, int(dim))
    return 0 if ndim == 0 else dim


def wrap_grad(g: Any) -> Tensor:
    """A gradient as a Tensor (engine values are arrays in a plain backward).

    Example:
        >>> wrap_grad(np.ones(2, np.float32))
        tensor([1., 1.])
    """
    return g if isinstance(g, Tensor) else Tensor._make(g)


def unwrap_grad(g: Any) -> Any:
    """A Tensor gradient as the engine's array.

    Example:
        >>> unwrap_grad(Tensor._make(np.ones(2)))
        array([1., 1.])
    """
    return g._data if isinstance(g, Tensor) else g


_wrap_grad, _unwrap_grad = wrap_grad, unwrap_grad  # their old names


def _is_number(x: object) -> bool:
    kind = type(x)
    if kind is float or kind is int:  # most calls; the ABC check below is slow
        return True
    return isinstance(x, _Number) and not isinstance(x, Tensor)


def is_tensor(obj: object) -> bool:
    """Whether ``obj`` is a gradviz tensor (PyTorch's ``torch.is_tensor``).

    Example:
        >>> import gradviz
        >>> is_tensor(gradviz.ones(2)), is_tensor([1.0])
        (True, False)
    """
    return isinstance(obj, Tensor)


# NOTE [no import circle]
# The graph's modules (gradviz/autograd/node.py, accumulate_grad.py, saved_variable.py, hooks.py)
# sit below this one: a tensor holds its grad_fn, its leaf's AccumulateGrad and its hooks, so
# this module imports them. A few of their functions make or recognise tensors all the same
# (AccumulateGrad writes .grad, collect_next_edges asks which arguments are tensors). They are
# handed the class here, once it exists, instead of importing this module back, which made a
# circle held open by imports inside functions. Each keeps it in its module-level `Tensor`, read
# as fast as an imported name; any import of gradviz runs this module, so the class is there
# before any of their functions is called. Likewise gradviz/_factories.py installs the new_*
# methods (they are factories, which make Tensors).
for _module in (hooks, node, accumulate_grad, saved_variable):
    _module.Tensor = Tensor
del _module
