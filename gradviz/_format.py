"""``repr`` of tensors exactly as PyTorch prints them: ``tensor([1., 2.], requires_grad=True)``.

A port of ``torch/_tensor_str.py`` (default print options) to NumPy arrays: the same choice of
integer / fixed / scientific style from the finite non-zero values, the same column width, line
wrapping at 80 characters, summarisation with ``...`` above 1000 elements, and the same suffixes
(``dtype=``, ``size=``, ``grad_fn=``, ``requires_grad=True``).

NOTE [torch-width layout]: PyTorch decides where a suffix wraps from its own text, where the dtype
reads ``torch.float64``. gradviz measures suffixes as if they said ``torch.`` too, so that its
output breaks lines at exactly the same places: ``repr(gradviz_tensor)`` equals
``repr(torch_tensor).replace("torch.", "gradviz.")``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from gradviz import _dtype

if TYPE_CHECKING:
    from gradviz.tensor import Tensor

# torch.set_printoptions(profile="default")
PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80

_PREFIX = "tensor("


class _Formatter:
    """Picks the style and width of every element (``torch._tensor_str._Formatter``)."""

    def __init__(self, arr: np.ndarray) -> None:
        self.floating = arr.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = arr.reshape(-1)
        if not self.floating:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(f"{value}"))
            return
        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:
            return
        absd = np.abs(vals).astype(np.float64)
        lo, hi = absd.min(), absd.max()
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        self.sci_mode = bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
        values = vals.tolist()
        if self.sci_mode:
            width = max(len(f"{v:.{PRECISION}e}") for v in values)
        elif self.int_mode:
            width = max(len(f"{v:.0f}") + 1 for v in values)
        else:
            width = max(len(f"{v:.{PRECISION}f}") for v in values)
        self.max_width = max(self.max_width, width)

    def format(self, value: Any) -> str:
        if self.floating:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{PRECISION}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{PRECISION}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _summarized(arr: np.ndarray) -> np.ndarray:
    """The elements that stay visible when a large tensor is summarised (for the widths): along
    every dimension longer than ``2 * EDGEITEMS``, its first and last ``EDGEITEMS``."""
    if arr.ndim == 0:
        return arr
    keep = [np.r_[0:EDGEITEMS, n - EDGEITEMS:n] if n > 2 * EDGEITEMS else np.arange(n)
            for n in arr.shape]
    return arr[np.ix_(*keep)]


def _vector_str(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    element_length = fmt.max_width + 2
    per_line = max(1, math.floor((LINEWIDTH - indent) / element_length))
    if summarize and arr.shape[0] > 2 * EDGEITEMS:
        data = ([fmt.format(v) for v in arr[:EDGEITEMS].tolist()] + [" ..."]
                + [fmt.format(v) for v in arr[-EDGEITEMS:].tolist()])
    else:
        data = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    """The bracketed text of ``arr``: its vectors (``_vector_str``) joined dimension by
    dimension, with a stack of the sub-arrays still being written (each with the texts of its
    rows so far)."""
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, fmt)

    def shown(a: np.ndarray) -> list[int | None]:  # the rows written; None: the "..."
        n = a.shape[0]
        if summarize and n > 2 * EDGEITEMS:
            return [*range(EDGEITEMS), None, *range(n - EDGEITEMS, n)]
        return list(range(n))

    # Each entry: [array, its indent, the rows to write, how many are written, their texts].
    stack: list[list[Any]] = [[arr, indent, shown(arr), 0, []]]
    while True:
        a, ind, rows, done, texts = frame = stack[-1]
        if done == len(rows):
            text = "[" + ("," + "\n" * (a.ndim - 1) + " " * (ind + 1)).join(texts) + "]"
            stack.pop()
            if not stack:
                return text
            stack[-1][4].append(text)
            continue
        frame[3] += 1
        row = rows[done]
        if row is None:
            texts.append("...")
        elif a.ndim == 2:
            texts.append(_vector_str(a[row], ind + 1, summarize, fmt))
        else:
            stack.append([a[row], ind + 1, shown(a[row]), 0, []])


def _torch_len(s: str) -> int:
    """Length of ``s`` as PyTorch would spell it (see NOTE [torch-width layout])."""
    return len(s.replace("gradviz.", "torch."))


def _add_suffixes(tensor_str: str, suffixes: list[str], indent: int) -> str:
    parts = [tensor_str]
    # PyTorch's arithmetic, off-by-two included: without a newline, rfind gives -1.
    last_line_len = _torch_len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        suffix_len = _torch_len(suffix)
        if last_line_len + suffix_len + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + suffix_len
        else:
            parts.append(", " + suffix)
            last_line_len += suffix_len + 2
    parts.append(")")
    return "".join(parts)


def array_str(arr: np.ndarray, indent: int = len(_PREFIX)) -> str:
    """The bracketed values of ``arr`` as PyTorch lays them out after a prefix of ``indent``."""
    if arr.size == 0:
        return "[]"
    summarize = arr.size > THRESHOLD
    fmt = _Formatter(_summarized(arr) if summarize else arr)
    return _tensor_str(arr, indent, summarize, fmt)


def tensor_repr(t: Tensor) -> str:
    """The PyTorch-style text of a tensor (used by ``repr`` and ``str``).

    Example:
        >>> import gradviz
        >>> gradviz.tensor([1.0, 2.5], requires_grad=True)
        tensor([1.0000, 2.5000], requires_grad=True)
    """
    arr = t._data
    dt = _dtype.to_dtype(arr.dtype)
    default = _dtype.get_default_dtype()
    suffixes: list[str] = []
    meta = t.is_meta  # no values: torch prints `...`, the device, the size, a dtype not default
    if meta:
        suffixes += ["device='meta'", f"size={tuple(arr.shape)}"]
        if dt is not default:
            suffixes.append(f"dtype={dt!r}")
    elif arr.size == 0:
        if arr.ndim != 1:  # the shape is shown unless it is (0,), as NumPy does
            suffixes.append(f"size={tuple(arr.shape)}")
        if dt is not default:  # no element to tell an int64 from a float, so always say
            suffixes.append(f"dtype={dt!r}")
    elif dt is not default and dt is not _dtype.int64 and dt is not _dtype.bool:
        suffixes.append(f"dtype={dt!r}")
    try:
        grad_fn = t.grad_fn
    except RuntimeError:  # a view that may not be rebased after its base changed (as torch)
        suffixes.append("grad_fn=<Invalid>")
    else:
        if grad_fn is not None:
            # The class name, as torch prints it (`CopyBackwards`, not its qualified name()).
            suffixes.append(f"grad_fn=<{type(grad_fn).__name__}>")
        elif t._requires_grad:
            suffixes.append("requires_grad=True")
    return _add_suffixes(_PREFIX + ("..." if meta else array_str(arr)), suffixes, len(_PREFIX))
