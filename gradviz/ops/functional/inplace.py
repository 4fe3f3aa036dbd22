"""The in-place functions: add_, sub_, mul_, div_, fill_, zero_, copy_, resize_, clamp_,
masked_fill_, scatter_, and torch's module-level in-place functions (``gradviz.sin_``)."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from gradviz._factories import int_list
from gradviz.ops.dispatch import (
    dispatch_inplace,
)
from gradviz.ops.functional.arithmetic import _TRUE_DIV, _div_mode, _sub_check
from gradviz.ops.functional.common import _O, _tensor_arg, _tensors_only
from gradviz.ops.functional.indexing import _check_gather, _index_tensor, _mask_value
from gradviz.ops.functional.pointwise import _bound
from gradviz.tensor import Tensor, _wrap_dim

__all__ = ["clamp_", "clip_", "fill_", "zero_", "resize_as_"]


def add_(input: Tensor, other: Any, *, alpha: float = 1) -> Tensor:
    return dispatch_inplace(_O["add"], input, _tensor_arg(other), alpha=alpha)


def sub_(input: Tensor, other: Any, *, alpha: float = 1) -> Tensor:
    _sub_check(input, other)
    return dispatch_inplace(_O["sub"], input, _tensor_arg(other), alpha=alpha)


def mul_(input: Tensor, other: Any) -> Tensor:
    return dispatch_inplace(_O["mul"], input, _tensor_arg(other))


def div_(input: Tensor, other: Any, *, rounding_mode: str | None = _TRUE_DIV) -> Tensor:
    if rounding_mode is not _TRUE_DIV:
        _div_mode(rounding_mode)
        return dispatch_inplace(_O["div_mode"], input, _tensor_arg(other),
                                rounding_mode=rounding_mode)
    return dispatch_inplace(_O["div"], input, _tensor_arg(other))


def true_divide_(input: Tensor, other: Any) -> Tensor:
    return div_(input, other)


def zero_(input: Tensor) -> Tensor:
    """Fill ``input`` with zeros, in place (``torch.zero_``, ``x.zero_()``).

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2)
        >>> gradviz.zero_(x) is x, x
        (True, tensor([0., 0.]))
    """
    return dispatch_inplace(_O["zero_"], input)


def fill_(input: Tensor, value: Any) -> Tensor:
    """Fill ``input`` with ``value``, in place (``torch.fill_``, ``x.fill_(value)``).

    Example:
        >>> import gradviz
        >>> x = gradviz.zeros(2)
        >>> gradviz.fill_(x, 3) is x, x
        (True, tensor([3., 3.]))
    """
    if isinstance(value, Tensor):  # fill_.Tensor: FillBackward3, differentiable in `value`
        if value.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.ndim} dimensions.")
        return dispatch_inplace(_O["fill_tensor_"], input, value)
    return dispatch_inplace(_O["fill_"], input, value=value)


def resize_(input: Tensor, *size: Any, memory_format: Any = None) -> Tensor:
    """Give ``input`` the shape ``size`` in place (``x.resize_(2, 3)``), laid out row-major
    over its memory from where it starts; the same shape changes nothing. Memory it lacks is
    added (zeros here, uninitialised in PyTorch); then, unlike PyTorch, its other views keep
    the old memory. Not differentiable: a tensor that requires grad is refused.

    Example:
        >>> import gradviz
        >>> x = gradviz.arange(6.0)
        >>> x.resize_(2, 2) is x, x
        (True, tensor([[0., 1.],
                [2., 3.]]))
    """
    shape = int_list("resize_", size)
    if builtins.any(s < 0 for s in shape):
        raise RuntimeError("numel: integer multiplication overflow")
    if input.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if shape == input._data.shape:
        return input
    arr = input._data
    root = arr
    while isinstance(root.base, np.ndarray):  # the array that owns the memory
        root = root.base
    if root.flags.c_contiguous and root.dtype == arr.dtype:
        storage, offset = root.reshape(-1), input.storage_offset()
    else:  # memory seen through another dtype or order: the tensor's own elements
        storage, offset = arr.reshape(-1), 0
    n = int(np.prod(shape))
    if offset + n > storage.size:
        grown = np.zeros(offset + n, arr.dtype)
        grown[:storage.size] = storage
        storage = grown
    input._data = storage[offset:offset + n].reshape(shape)
    input._version_counter.version += 1
    return input


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """:func:`resize_` to ``the_template``'s shape (``torch.resize_as_``, ``x.resize_as_(y)``).

    Example:
        >>> import gradviz
        >>> x = gradviz.arange(4.0)
        >>> gradviz.resize_as_(x, gradviz.ones(2, 2)).shape
        gradviz.Size([2, 2])
    """
    _tensors_only("resize_as_", input=input, the_template=the_template)
    return resize_(input, tuple(the_template.shape))


def copy_(input: Tensor, src: Any) -> Tensor:
    src = _tensor_arg(src)
    if isinstance(src, Tensor):
        try:
            np.broadcast_shapes(src.shape, input.shape)
        except ValueError:
            raise RuntimeError(
                f"The size of tensor a ({input.shape[-1] if input.ndim else 1}) must match the "
                f"size of tensor b ({src.shape[-1] if src.ndim else 1}) at non-singleton "
                f"dimension {builtins.max(input.ndim - 1, 0)}") from None
    return dispatch_inplace(_O["copy_"], input, src)


def clamp_(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """In-place :func:`clamp` (``clip_`` is the same function).

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([-2.0, 0.5, 3.0])
        >>> gradviz.clamp_(x, -1, 1); x
        tensor([-1.0000,  0.5000,  1.0000])
        tensor([-1.0000,  0.5000,  1.0000])
    """
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return dispatch_inplace(_O["clamp_tensor"], input, _bound(min, input),
                                _bound(max, input))
    return dispatch_inplace(_O["clamp"], input, min=min, max=max)


clip_ = clamp_

# torch's module-level in-place functions (``torch.sin_(x)`` is ``x.sin_()``), for the in-place
# methods gradviz has; ``clamp_``, ``clip_``, ``index_put_``, ``dropout_``, ``fill_``, ``zero_``,
# ``round_``, ``nan_to_num_``, ``xlogy_``, ``asinh_``, ``acosh_`` and ``atanh_`` are
# written out where their families are.
_MODULE_INPLACE = (
    "acos_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_",
    "asin_", "atan_", "ceil_", "cos_", "cosh_", "detach_", "erf_", "erfc_",
    "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "log10_", "log1p_", "log2_", "log_",
    "logit_",
    "neg_", "reciprocal_", "relu_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_",
    "tan_", "tanh_", "trunc_",
)


def _module_inplace(name: str) -> Any:
    """``gradviz.<name>(input, ...)``: the Tensor method ``input.<name>(...)``, which writes into
    ``input`` and returns it (read at each call: the methods are installed after this module)."""
    def fn(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        _tensors_only(name, input=input)
        return getattr(Tensor, name)(input, *args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"In place ``input.{name}()``, as ``torch.{name}``: writes into ``input`` and "
                  f"returns it.\n\n    Example:\n        >>> import gradviz\n"
                  f"        >>> x = gradviz.tensor([0.25, 0.5])\n"
                  f"        >>> gradviz.{name}(x) is x\n        True\n    ")
    return fn


globals().update({_name: _module_inplace(_name) for _name in _MODULE_INPLACE})
__all__ += _MODULE_INPLACE


def clamp_min_(input: Tensor, min: Any) -> Tensor:  # noqa: A002 - torch's name
    """In place ``input.clamp_min_(min)``, as ``torch.clamp_min_``.

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([-1.0, 2.0])
        >>> gradviz.clamp_min_(x, 0) is x, x
        (True, tensor([0., 2.]))
    """
    _tensors_only("clamp_min_", input=input)
    return Tensor.clamp_min_(input, min)  # type: ignore[attr-defined]


def clamp_max_(input: Tensor, max: Any) -> Tensor:  # noqa: A002 - torch's name
    """In place ``input.clamp_max_(max)``, as ``torch.clamp_max_``.

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([-1.0, 2.0])
        >>> gradviz.clamp_max_(x, 0) is x, x
        (True, tensor([-1.,  0.]))
    """
    _tensors_only("clamp_max_", input=input)
    return Tensor.clamp_max_(input, max)  # type: ignore[attr-defined]


__all__ += ["clamp_min_", "clamp_max_"]


def masked_fill_(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """In-place :func:`masked_fill`."""
    mask, value = _mask_value(input, mask, value)
    if isinstance(value, Tensor):
        return dispatch_inplace(_O["masked_fill_tensor"], input, value, mask=mask)
    return dispatch_inplace(_O["masked_fill"], input, mask=mask, value=value)


def scatter_(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None
             ) -> Tensor:
    """In-place :func:`scatter`."""
    _index_tensor("scatter_", index)
    if src is None:
        src = value
    d = _wrap_dim(dim, input.ndim)
    _check_gather("scatter_", input, d, index, src)
    if isinstance(src, Tensor):
        return dispatch_inplace(_O["scatter"], input, src, dim=d, index=index)
    return dispatch_inplace(_O["scatter_value"], input, dim=d, index=index, value=src)


def scatter_add_(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """In-place :func:`scatter_add`."""
    _index_tensor("scatter_add_", index)
    d = _wrap_dim(dim, input.ndim)
    _check_gather("scatter_add_", input, d, index, src)
    return dispatch_inplace(_O["scatter_add"], input, src, dim=d, index=index)
