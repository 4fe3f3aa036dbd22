"""Devices, as PyTorch spells them: ``gradviz.device``, ``gradviz.cuda``, ``gradviz.accelerator``.

gradviz computes with NumPy, on the CPU. Code written for PyTorch names devices anyway
(``device = "cuda" if torch.cuda.is_available() else "cpu"``, ``x.to(device)``,
``torch.ones(2, device=device)``), so the names exist and answer as a machine without an
accelerator does: ``cuda.is_available()`` is False, a ``device("cuda")`` can be made (as in
PyTorch) but putting a tensor there is an error that says gradviz runs on the CPU.

One other device holds tensors: PyTorch's ``meta``, whose tensors have a shape and a dtype and
no values (NOTE [meta device] below).

Example:
    >>> import gradviz
    >>> dev = gradviz.device("cuda" if gradviz.cuda.is_available() else "cpu")
    >>> dev, gradviz.ones(2, device=dev).device
    (device(type='cpu'), device(type='cpu'))
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

__all__ = ["device", "check_device", "cuda", "accelerator", "set_default_device",
           "get_default_device", "DEVICE_TYPES", "CPU", "META", "MetaArray", "meta_array",
           "META_SEEN"]

# The device types PyTorch's device strings may start with, in its order.
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")


class device:  # noqa: N801 - torch.device
    """A device: ``device("cpu")``, ``device("cuda:0")``, ``device("cuda", 0)``. ``cpu`` and
    ``meta`` (shape and dtype, no values) can hold tensors in gradviz.

    Example:
        >>> device("cpu") == "cpu", device("cuda:1").index, str(device("cpu"))
        (True, 1, 'cpu')
    """

    __slots__ = ("type", "index")

    def __init__(self, type: Any = "cpu", index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        elif isinstance(type, int) and not isinstance(type, bool):  # a bare index: accelerator
            raise RuntimeError("Cannot access accelerator device when none is available. "
                               "(gradviz computes on the CPU only)")
        elif not isinstance(type, str):
            raise TypeError(f"device(): argument 'type' must be str, not {_name(type)}")
        else:
            name, _, nr = type.partition(":")
            if name not in DEVICE_TYPES:
                raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at "
                                   f"start of device string: {type}")
            if nr:
                if not nr.isdigit():
                    raise RuntimeError(f"Invalid device string: '{type}'")
                if index is not None:
                    raise RuntimeError("type (string) must not include an index because index "
                                       f"was passed explicitly: {type}")
                index = int(nr)
            type = name
        self.type: str = type
        self.index: int | None = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except RuntimeError:
                return False
        if not isinstance(other, device):
            return NotImplemented
        return (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


def _name(x: Any) -> str:
    return type(x).__name__


CPU = device("cpu")
META = device("meta")
# What PyTorch raises (NotImplementedError) where a meta tensor's values are asked for.
NO_DATA = "Cannot copy out of meta tensor; no data!"


# NOTE [meta device]
# PyTorch's `meta` device holds tensors that have a shape, a dtype and a graph but no values:
# a learner sizes a model without memory (`nn.Linear(4096, 4096, device="meta")`), reads a
# checkpoint's shapes (`load(f, map_location="meta")`), or builds a module and gives it memory
# later (`module.to_empty(device="cpu")`). In gradviz a meta tensor is an ordinary Tensor whose
# `_data` is a MetaArray: a read-only NumPy array of the tensor's shape and dtype whose strides
# are all 0 over one zero (np.broadcast_to), so it costs one element whatever its shape. The
# device lives in the array's type, as PyTorch's lives in the storage: `Tensor.device` is
# `type(_data) is MetaArray`, and nothing else marks a tensor. Ops run on such tensors through
# the ordinary dispatch and kernels (one test there, NOTE [meta device: ops] in
# gradviz/ops/dispatch.py), so shapes, dtypes and grad_fn names are what the CPU would give. The
# few places that write or read values directly learn it the same way: a node recorded on meta
# tensors sends meta gradients (Node.run), an optimizer steps meta parameters on stand-in zeros
# (Optimizer._update_on_meta), the tracer shows no values. What needs values (`item`, `tolist`,
# `numpy`, `.cpu()`) raises PyTorch's errors instead.
class MetaArray(np.ndarray):
    """The array a meta tensor holds: its shape and dtype over a single zero (NOTE [meta
    device]). Never written, never shown (``is_meta`` tells readers such as the tracer)."""

    is_meta = True


def meta_array(shape: tuple[int, ...], dtype: Any) -> MetaArray:
    """A :class:`MetaArray` of ``shape`` and ``dtype``: one element of memory, all strides 0.

    Example:
        >>> a = meta_array((2, 3), np.float32)
        >>> a.shape, a.strides, a.flags.writeable
        ((2, 3), (0, 0), False)
    """
    META_SEEN[0] = True
    zero = np.zeros((), dtype).view(MetaArray)
    return np.broadcast_to(zero, shape, subok=True)


# [True] once a meta array was made: until then the op dispatch and the optimizers do not look
# for meta tensors (the CPU path pays one truth test).
META_SEEN = [False]


def check_device(spec: Any, where: str) -> device:
    """``spec`` (None, a string, a device) as the device a tensor goes to: the CPU or ``meta``,
    or PyTorch's error for an unknown device, or gradviz's for a device it does not have.

    Example:
        >>> check_device("cpu", "ones"), check_device("meta", "ones")
        (device(type='cpu'), device(type='meta'))
    """
    if spec is None:
        return CPU
    dev = spec if isinstance(spec, device) else device(spec)
    if dev.type == "meta":
        return META
    if dev.type != "cpu":
        raise RuntimeError(f"{where}(): gradviz computes on the CPU only (with NumPy); device "
                           f"'{dev}' is not available. Use device='cpu' (or 'meta') or leave it "
                           "out.")
    return CPU


def set_default_device(spec: Any) -> None:
    """PyTorch's ``torch.set_default_device``: gradviz's default is the CPU, and stays it.

    Example:
        >>> set_default_device("cpu"); get_default_device()
        device(type='cpu')
    """
    if check_device(spec, "set_default_device") is META:
        raise RuntimeError("set_default_device(): gradviz's default device is the CPU; make "
                           "meta tensors with device='meta' or .to('meta').")


def get_default_device() -> device:
    """The device new tensors go to: always the CPU.

    Example:
        >>> get_default_device().type
        'cpu'
    """
    return CPU


# `torch.cuda` and `torch.accelerator`, as a machine without an accelerator answers.
cuda = SimpleNamespace(is_available=lambda: False, device_count=lambda: 0,
                       is_bf16_supported=lambda: False)
accelerator = SimpleNamespace(is_available=lambda: False, device_count=lambda: 0,
                              current_accelerator=lambda: None)
