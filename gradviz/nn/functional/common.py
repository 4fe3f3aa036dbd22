"""What the functions of torch.nn.functional share: PyTorch's argument checks and error texts."""

from __future__ import annotations

import numpy as np

from gradviz.ops import functional as _F
from gradviz.tensor import Tensor

__all__: list[str] = []


# PyTorch's error for a floating-point-only kernel called on an integer tensor.
_no_int = _F._floating_kernel


def _no_grad_arg(fn: str, name: str, t: Tensor | None) -> None:
    if t is not None and t.requires_grad:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument "
                           f"'{name}'. This input cannot have requires_grad True.")


def _size(shape: tuple) -> str:
    return f"gradviz.Size({list(shape)})"


def _no_bool(name: str, input: Tensor, kernel: str) -> None:
    """PyTorch's error for a kernel that takes numbers but not bools."""
    if input._data.dtype == np.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\' ({name}: input of '
                                  f"shape {list(input.shape)}; convert it with .float() first)")
