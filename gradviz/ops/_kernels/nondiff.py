"""Forwards of the rows that are never differentiable: all/any, bitwise ops, argmax/argmin."""

from __future__ import annotations

import numpy as np

from gradviz.ops._kernels.common import _SCALAR_TYPE


def all_(a, dim=None, keepdim=False):
    # PyTorch keeps a uint8 input's dtype (0 or 1); every other dtype gives bool
    out = np.asarray(np.all(a, axis=dim, keepdims=keepdim))
    return out.astype(np.uint8) if a.dtype == np.uint8 else out


def any_(a, dim=None, keepdim=False):
    out = np.asarray(np.any(a, axis=dim, keepdims=keepdim))
    return out.astype(np.uint8) if a.dtype == np.uint8 else out


def _bitwise(kernel, ufunc, *operands):
    dt = np.result_type(*operands)
    if dt.kind == "f":
        # A Python float operand makes the default float type, as PyTorch's promotion does.
        arrays = [o for o in operands if isinstance(o, np.ndarray) and o.dtype.kind == "f"]
        dt = np.result_type(*arrays) if arrays else np.dtype(np.float32)
    if dt.kind not in "iub":
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{_SCALAR_TYPE.get(dt.name, dt.name)}\'')
    return ufunc(*operands)


def bitwise_and(a, b):
    return _bitwise("bitwise_and_cpu", np.bitwise_and, a, b)


def bitwise_or(a, b):
    return _bitwise("bitwise_or_cpu", np.bitwise_or, a, b)


def bitwise_xor(a, b):
    return _bitwise("bitwise_xor_cpu", np.bitwise_xor, a, b)


def bitwise_not(a):
    return _bitwise("bitwise_not_cpu", np.invert, a)


def argmax(a, dim=None, keepdim=False):
    return np.asarray(np.argmax(a, axis=dim, keepdims=keepdim)).astype(np.int64)


def argmin(a, dim=None, keepdim=False):
    return np.asarray(np.argmin(a, axis=dim, keepdims=keepdim)).astype(np.int64)
