"""Linear algebra: matrix products (mm, bmm, matmul, addmm ...), cross, kron, tensordot, and
the entry points of einsum (gradviz/ops/_einsum.py)."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from gradviz.ops.dispatch import (
    dispatch,
    dispatch_inplace,
    out_variant,
)
from gradviz.ops.functional.arithmetic import mul
from gradviz.ops.functional.common import _O, _tensor_arg
from gradviz.ops.functional.reductions import sum
from gradviz.ops.functional.shape import (
    _ints_or_int,
    flatten,
    permute,
    reshape,
    squeeze,
    view,
)
from gradviz.tensor import Tensor, _wrap_dim

__all__ = [
    "mm", "matmul", "dot", "mv", "bmm", "outer", "ger", "addmm", "cross", "kron", "tensordot",
    "einsum"
]


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Matrix product of two 2-D tensors (``MmBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.mm(gradviz.ones(2, 3), gradviz.ones(3, 4)).shape
        gradviz.Size([2, 4])
    """
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    (n, k), (k2, m) = input.shape, mat2.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    _same_dtype("mm", input, mat2)
    return dispatch(_O["mm"], input, mat2)


_C_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half"}


def _same_dtype(name: str, a: Tensor, b: Tensor) -> None:
    if a._data.dtype != b._data.dtype:
        da, db = (_C_TYPE_NAMES.get(t.dtype.name, t.dtype.name) for t in (a, b))
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {da} != {db} "
                           f"({name})")


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """Inner product of two 1-D tensors (``DotBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.dot(gradviz.tensor([1.0, 2.0]), gradviz.tensor([3.0, 4.0]))
        tensor(11.)
    """
    _check_dot(input, tensor)
    return dispatch(_O["dot"], input, tensor)


def _check_dot(input: Tensor, other: Tensor) -> None:
    """dot's and vdot's shape checks, with PyTorch's texts: two 1-D tensors of one length."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           "tensors")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
            f"[{other.shape[0]}] to have the same number of elements, but got "
            f"{input.shape[0]} and {other.shape[0]} elements respectively")


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector product (``MvBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.mv(gradviz.ones(2, 3), gradviz.ones(3))
        tensor([3., 3.])
    """
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat "
                           f"({input.shape[0]}x{input.shape[1]}), vec ({vec.shape[0]})")
    return dispatch(_O["mv"], input, vec)


@out_variant
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with PyTorch's rules, decomposed as PyTorch decomposes it: 1-D·1-D is
    ``dot``, 2-D·1-D is ``mv``, 1-D·2-D is ``unsqueeze``/``mm``/``squeeze``, 2-D·2-D is ``mm``
    (written into ``out`` if given).

    Example:
        >>> import gradviz
        >>> (gradviz.ones(2, 3) @ gradviz.ones(3)).shape
        gradviz.Size([2])
    """
    input, other = _tensor_arg(input), _tensor_arg(other)
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are 0D "
                           "and 0D")
    a, b = input.ndim, other.ndim
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a}D and {b}D")
    if a == 1 and b == 1:
        return dot(input, other)
    if a == 2 and b == 1:
        return mv(input, other)
    if a == 1 and b == 2:
        if input.shape[0] != other.shape[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied (1x{input.shape[0]} "
                               f"and {other.shape[0]}x{other.shape[1]})")
        # PyTorch squeezes the mm result in place (`squeeze_(0)`): SqueezeBackward4, version 1.
        out = dispatch(_O["squeeze_dim_"], mm(dispatch(_O["unsqueeze"], input, dim=0), other),
                       dim=0)
        out._version_counter.version += 1
        return out
    if a == 2 and b == 2:
        return mm(input, other)
    from gradviz.ops import _batched

    return _batched.matmul(input, other)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product of two 3-D tensors ``(b, n, m) @ (b, m, p)`` (``BmmBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.bmm(gradviz.ones(2, 3, 4), gradviz.ones(2, 4, 5)).shape
        gradviz.Size([2, 3, 5])
    """
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    b, _, m = input.shape
    if mat2.shape[:2] != (b, m):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {m}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    _same_dtype("bmm", input, mat2)
    return dispatch(_O["bmm"], input, mat2)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product of two vectors, recorded as PyTorch decomposes it:
    ``input.reshape(-1, 1) * vec2`` (``MulBackward0`` over ``ViewBackward0``).

    Example:
        >>> import gradviz
        >>> gradviz.outer(gradviz.tensor([1.0, 2.0]), gradviz.tensor([1.0, 10.0]))
        tensor([[ 1., 10.],
                [ 2., 20.]])
    """
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return mul(reshape(input, -1, 1), vec2)


ger = outer


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1, alpha: float = 1
          ) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``, ``input`` broadcast to the product's shape
    (``AddmmBackward0``: what ``F.linear`` records for a 2-D input with a bias).

    Example:
        >>> import gradviz
        >>> gradviz.addmm(gradviz.ones(3), gradviz.ones(2, 4), gradviz.ones(4, 3))
        tensor([[5., 5., 5.],
                [5., 5., 5.]])
    """
    shape1, shape2, shape = mat1._data.shape, mat2._data.shape, input._data.shape
    if len(shape1) != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.ndim}-D tensor")
    if len(shape2) != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {mat2.ndim}-D tensor")
    (n, k), (k2, m) = shape1, shape2
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    if shape == (m,) and mat1._data.dtype == mat2._data.dtype:  # F.linear's bias: nothing to check
        return dispatch(_O["addmm"], input, mat1, mat2, beta=beta, alpha=alpha)
    # `input` must broadcast to (n, m) (a bias (m,) is the common case): compared by hand,
    # the last dimension first, numbered in the target's dimensions as torch's expand does.
    if input.ndim > 2:
        raise RuntimeError(f"expand({input.type()}{{{list(input.shape)}}}, size=[{n}, {m}]): the "
                           "number of sizes provided (2) must be greater or equal to the number "
                           f"of dimensions in the tensor ({input.ndim})")
    for j, (size, want) in enumerate(zip(input._data.shape[::-1], (m, n))):
        if size not in (1, want):
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({size})"
                f" at non-singleton dimension {1 - j}.  Target sizes: [{n}, {m}].  Tensor sizes: "
                f"{list(input.shape)} (addmm: the input does not broadcast to the product's "
                "shape)")
    _same_dtype("addmm", mat1, mat2)
    return dispatch(_O["addmm"], input, mat1, mat2, beta=beta, alpha=alpha)


def addmm_(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1, alpha: float = 1
           ) -> Tensor:
    """In-place :func:`addmm` (``Tensor.addmm_``): ``input`` must have the product's shape.

    Example:
        >>> import gradviz
        >>> gradviz.zeros(2, 2).addmm_(gradviz.ones(2, 3), gradviz.ones(3, 2))
        tensor([[3., 3.],
                [3., 3.]])
    """
    for label, mat in (("mat1", mat1), ("mat2", mat2)):
        if mat.ndim != 2:
            raise RuntimeError(f"{label} must be a matrix, got {mat.ndim}-D tensor")
    (n, k), (k2, m) = mat1._data.shape, mat2._data.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    if tuple(input.shape) != (n, m):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(input.shape)} and "
                           f"output tensor size {[n, m]} should match")
    for label, mat in (("mat1", mat1), ("mat2", mat2)):
        if mat._data.dtype != input._data.dtype:
            raise RuntimeError(f"self and {label} must have the same dtype, but got "
                               f"{input.dtype._legacy[:-6]} and {mat.dtype._legacy[:-6]}")
    return dispatch_inplace(_O["addmm"], input, mat1, mat2, beta=beta, alpha=alpha)


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product of the 3-vectors along ``dim`` (``LinalgCrossBackward0``; the two
    inputs broadcast). Without ``dim``, PyTorch's deprecated default: the first dimension of
    size 3, with its warning.

    Example:
        >>> import gradviz
        >>> gradviz.cross(gradviz.tensor([1.0, 0.0, 0.0]), gradviz.tensor([0.0, 1.0, 0.0]), dim=0)
        tensor([0., 0., 1.])
    """
    if dim is None:
        import warnings

        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                      "either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
                      "default value of dim will change to agree with that of linalg.cross in "
                      "a future release.", UserWarning, stacklevel=2)
        shape = np.broadcast_shapes(input.shape, other.shape) if input.ndim == other.ndim \
            else input.shape
        dim = next((i for i, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _wrap_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    return dispatch(_O["linalg_cross"], input, other, dim=d)


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: every element of ``input`` times the whole of ``other``, laid
    out block by block; decomposed as PyTorch does (``_unsafe_view`` of each input with its
    dimensions interleaved with 1s, a broadcasting :func:`mul`, ``_unsafe_view`` back).

    Example:
        >>> import gradviz
        >>> gradviz.kron(gradviz.tensor([1.0, 10.0]), gradviz.tensor([1.0, 2.0]))
        tensor([ 1.,  2., 10., 20.])
    """
    nd = builtins.max(input.ndim, other.ndim)
    a = (1,) * (nd - input.ndim) + tuple(input.shape)
    b = (1,) * (nd - other.ndim) + tuple(other.shape)
    wide_a = dispatch(_O["_unsafe_view"], input, size=tuple(x for s in a for x in (s, 1)))
    wide_b = dispatch(_O["_unsafe_view"], other, size=tuple(x for s in b for x in (1, s)))
    out = mul(wide_a, wide_b)
    return dispatch(_O["_unsafe_view"], out, size=tuple(x * y for x, y in zip(a, b, strict=True)))


def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """Sum the products over the dimensions ``dims`` of ``a`` and ``b`` (an int: the last
    ``dims`` of ``a`` with the first ``dims`` of ``b``; or two lists), decomposed as PyTorch
    does: each input permuted (contracted dimensions last in ``a``, first in ``b``) and
    reshaped to a matrix, one :func:`mm`, a reshape to the free dimensions.

    Example:
        >>> import gradviz
        >>> gradviz.tensordot(gradviz.ones(2, 3), gradviz.ones(3, 4), dims=1).shape
        gradviz.Size([2, 4])
    """
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(-int(dims), 0)), list(range(int(dims)))
    else:
        da, db = ([int(x) for x in _ints_or_int(v)] for v in dims)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    for x, y in zip(da, db, strict=True):
        sa, sb = a.shape[_wrap_dim(x, a.ndim)], b.shape[_wrap_dim(y, b.ndim)]
        # a contracted dim of size 1 broadcasts: the other side is summed over it first
        if sa == 1 and sb != 1:
            b = sum(b, _wrap_dim(y, b.ndim), keepdim=True)
        elif sb == 1 and sa != 1:
            a = sum(a, _wrap_dim(x, a.ndim), keepdim=True)
        elif sa != sb:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa} "
                               f"in dim {x} and second has size {sb} in dim {y}")
    ca = [_wrap_dim(x, a.ndim) for x in da]
    cb = [_wrap_dim(y, b.ndim) for y in db]
    free_a = [i for i in range(a.ndim) if i not in ca]
    free_b = [i for i in range(b.ndim) if i not in cb]
    size = int(np.prod([a.shape[i] for i in ca], dtype=np.int64))
    rows = int(np.prod([a.shape[i] for i in free_a], dtype=np.int64))
    cols = int(np.prod([b.shape[i] for i in free_b], dtype=np.int64))
    out_shape = tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b)
    # the permutations name the contracted dims as written (negative ones saved as given)
    pa, pb = permute(a, free_a + da), permute(b, db + free_b)
    if rows == 1 and cols == 1:  # one number: PyTorch takes a dot of the flattened operands,
        if pa.is_contiguous() and pb.is_contiguous():
            return view(dot(flatten(pa), flatten(pb)), out_shape)
        # or, where a permutation cannot be flattened as a view, sums their product
        return view(sum(mul(squeeze(pa), squeeze(pb))), out_shape)
    left = reshape(pa, (rows, size))
    right = reshape(pb, (size, cols))
    return reshape(mm(left, right), out_shape)


def einsum(*args: Any) -> Tensor:
    """Sum of products over the labels an equation contracts (``'ij,jk->ik'``,
    ``'bhqd,bhkd->bhqk'``, ``'ii->'``): :func:`gradviz.ops._einsum.einsum`, recorded as
    PyTorch decomposes it (views, permutes, ``bmm``, ``mul``, ``sum``).

    Example:
        >>> import gradviz
        >>> gradviz.einsum('i,j->ij', gradviz.ones(2), gradviz.ones(3)).shape
        gradviz.Size([2, 3])
    """
    from gradviz.ops import _einsum

    return _einsum.einsum(*args)
