"""The sorting, selection and shape ops PyTorch's examples use (topk, sort, argsort, kthvalue,
median, cumprod, cummax/cummin, tril/triu, diag/diagonal/diag_embed, roll, movedim, tile,
repeat_interleave, masked_select, take, nonzero/argwhere, cross, diff, kron, tensordot), checked
against PyTorch 2.13's behaviour, hard-coded here: values and dtypes, the named tuples,
gradients, node names and saved values, whole graphs, ties, error texts.
tests/parity/test_select_more_parity.py re-derives every expectation of :data:`VALUES`,
:data:`GRADS`, :data:`NODES`, :data:`GRAPHS` and :data:`ERRORS` (and the other hard-coded
numbers) from torch itself.

Each case is a source string evaluated with ``m`` the module (``gradviz``; ``torch`` in the
parity test), ``x`` a (3, 4) float64 leaf without ties inside a row or a column, ``z`` one with
zeros, ``t`` an int64 vector with ties.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _graphs import sig

import gradviz
from gradviz.autograd import gradcheck, gradgradcheck

X = [[3.0, 1.0, 2.0, 5.0], [4.0, 9.0, 0.0, 7.0], [1.0, 8.0, 6.0, 2.0]]
Z = [[0.5, 0.0, 1.5, -2.0], [1.2, 0.7, 0.0, 0.0], [2.0, -1.0, 0.5, 3.0]]


def env(m: Any) -> dict[str, Any]:
    """Fresh inputs for one case, made with module ``m`` (gradviz or torch)."""
    return {"m": m, "x": m.tensor(X, dtype=m.float64, requires_grad=True),
            "z": m.tensor(Z, dtype=m.float64, requires_grad=True), "t": m.tensor([2, 1, 2, 1])}


def plain(t: Any) -> Any:
    """``t.tolist()`` with NaN as the string "nan" (so that equal results compare equal)."""
    a = t.detach().numpy()
    if a.dtype.kind != "f" or not np.isnan(a).any():
        return t.tolist()
    values = a.astype(object)
    values[np.isnan(a)] = "nan"
    return values.tolist()


def _tensor(t: Any) -> Any:
    return (str(t.dtype).split(".")[-1], list(t.shape), plain(t))


def describe(out: Any) -> Any:
    """A result as plain data: ``(dtype, shape, values)`` for a tensor, ``(type name, [...])``
    for a named tuple or a tuple of tensors, a list for a size."""
    if isinstance(out, tuple) and not hasattr(out, "dtype"):
        kind = type(out).__name__
        return list(out) if kind == "Size" else (kind, [_tensor(o) for o in out])
    return _tensor(out)


def saved(node: Any, m: Any) -> dict[str, Any]:
    """A node's ``_saved_*`` values by name; tensors as ``("tensor", values)``."""
    out = {}
    for name in sorted(a for a in dir(node) if a.startswith("_saved_")):
        v = getattr(node, name)
        out[name[len("_saved_"):]] = ("tensor", plain(v)) if isinstance(v, m.Tensor) else v
    return out


def grad_of(m: Any, src: str) -> Any:
    """The gradient of the leaf (``x``, or ``z`` for sources on ``z``) of ``(out * w).sum()``
    with ``w = 1, 2, 3 ...`` over ``out`` (the values, for a named tuple): which input element
    each output element's gradient reaches, and how much (to 10 decimals)."""
    e = env(m)
    out = eval(src, e)  # noqa: S307 - the sources of this file
    o = out[0] if isinstance(out, tuple) else out
    (o * m.arange(1, o.numel() + 1, dtype=m.float64).reshape(o.shape)).sum().backward()
    grad = e["z" if src.startswith("z") else "x"].grad.numpy()
    return np.round(grad, 10).tolist()  # summation order may differ in the last bits


def node_of(m: Any, src: str) -> tuple[str, dict[str, Any]]:
    out = eval(src, env(m))  # noqa: S307 - the sources of this file
    o = out[0] if isinstance(out, tuple) else out
    return o.grad_fn.name(), saved(o.grad_fn, m)


def error_of(m: Any, src: str) -> tuple[str, str] | None:
    try:
        eval(src, env(m))  # noqa: S307 - the sources of this file
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, str(e)
    return None


# -- the expectations, as PyTorch 2.13 gives them -------------------------------------------------
# One place where gradviz knowingly differs from torch, checked in the parity test: a shape
# error appends the op and the shapes to torch's text.
VALUES: list[tuple[str, Any]] = [
    ('x.topk(2, 1, True, True)',
     ('topk',
      [('float64', [3, 2], [[5.0, 3.0], [9.0, 7.0], [8.0, 6.0]]),
       ('int64', [3, 2], [[3, 0], [1, 3], [1, 2]])])),
    ('m.topk(x, 2, dim=0, largest=False)',
     ('topk',
      [('float64', [2, 4], [[1.0, 1.0, 0.0, 2.0], [3.0, 8.0, 2.0, 5.0]]),
       ('int64', [2, 4], [[2, 0, 1, 2], [0, 2, 0, 0]])])),
    ('x.topk(3)',
     ('topk',
      [('float64', [3, 3], [[5.0, 3.0, 2.0], [9.0, 7.0, 4.0], [8.0, 6.0, 2.0]]),
       ('int64', [3, 3], [[3, 0, 2], [1, 3, 0], [1, 2, 3]])])),
    ('x.sort(1)',
     ('sort',
      [('float64', [3, 4], [[1.0, 2.0, 3.0, 5.0], [0.0, 4.0, 7.0, 9.0], [1.0, 2.0, 6.0, 8.0]]),
       ('int64', [3, 4], [[1, 2, 0, 3], [2, 0, 3, 1], [0, 3, 2, 1]])])),
    ('x.sort(0, True)',
     ('sort',
      [('float64', [3, 4], [[4.0, 9.0, 6.0, 7.0], [3.0, 8.0, 2.0, 5.0], [1.0, 1.0, 0.0, 2.0]]),
       ('int64', [3, 4], [[1, 1, 2, 1], [0, 2, 0, 0], [2, 0, 1, 2]])])),
    ('m.sort(t, stable=True)',
     ('sort', [('int64', [4], [1, 1, 2, 2]), ('int64', [4], [1, 3, 0, 2])])),
    ('m.sort(t, stable=True, descending=True)',
     ('sort', [('int64', [4], [2, 2, 1, 1]), ('int64', [4], [0, 2, 1, 3])])),
    ("m.tensor([1.0, float('nan'), 0.0]).sort()",
     ('sort', [('float32', [3], [0.0, 1.0, 'nan']), ('int64', [3], [2, 0, 1])])),
    ("m.tensor([1.0, float('nan'), 0.0]).sort(descending=True)",
     ('sort', [('float32', [3], ['nan', 1.0, 0.0]), ('int64', [3], [1, 0, 2])])),
    ('m.tensor([True, False, True]).sort()',
     ('sort', [('bool', [3], [False, True, True]), ('int64', [3], [1, 0, 2])])),
    ('m.tensor(3.0).sort()', ('sort', [('float32', [], 3.0), ('int64', [], 0)])),
    ('x.argsort(1)', ('int64', [3, 4], [[1, 2, 0, 3], [2, 0, 3, 1], [0, 3, 2, 1]])),
    ('m.argsort(t, stable=True, descending=True)', ('int64', [4], [0, 2, 1, 3])),
    ('x.argsort(0, True)', ('int64', [3, 4], [[1, 1, 2, 1], [0, 2, 0, 0], [2, 0, 1, 2]])),
    ('x.kthvalue(2, 1)',
     ('kthvalue', [('float64', [3], [2.0, 4.0, 2.0]), ('int64', [3], [2, 0, 3])])),
    ('x.kthvalue(3, 0, True)',
     ('kthvalue',
      [('float64', [1, 4], [[4.0, 9.0, 6.0, 7.0]]), ('int64', [1, 4], [[1, 1, 2, 1]])])),
    ('m.tensor(3.0).kthvalue(1)', ('kthvalue', [('float32', [], 3.0), ('int64', [], 0)])),
    ('x.median()', ('float64', [], 3.0)),
    ('x.median(1)', ('median', [('float64', [3], [2.0, 4.0, 2.0]), ('int64', [3], [2, 0, 3])])),
    ('x.median(-1, True)',
     ('median', [('float64', [3, 1], [[2.0], [4.0], [2.0]]), ('int64', [3, 1], [[2], [0], [3]])])),
    ('m.tensor([1.0, 2.0, 3.0, 4.0]).median()', ('float32', [], 2.0)),
    ("m.tensor([1.0, float('nan'), 2.0]).median()", ('float32', [], 'nan')),
    ("m.tensor([1.0, float('nan'), 2.0]).median(0)",
     ('median', [('float32', [], 'nan'), ('int64', [], 1)])),
    ('m.tensor([3, 1, 2]).median()', ('int64', [], 2)),
    ('m.tensor([]).median()', ('float32', [], 'nan')),
    ('m.tensor([], dtype=m.int64).median()', ('int64', [], -9223372036854775808)),
    ('x.cumprod(1)',
     ('float64', [3, 4], [[3.0, 3.0, 6.0, 30.0], [4.0, 36.0, 0.0, 0.0], [1.0, 8.0, 48.0, 96.0]])),
    ('m.tensor([1, 2, 3]).cumprod(0)', ('int64', [3], [1, 2, 6])),
    ('m.tensor([True, True]).cumprod(0)', ('int64', [2], [1, 1])),
    ('m.tensor([1, 2, 3]).cumprod(0, dtype=m.float32)', ('float32', [3], [1.0, 2.0, 6.0])),
    ('m.tensor(3.0).cumprod(0)', ('float32', [], 3.0)),
    ("m.tensor([1.0, 3.0, 3.0, 2.0, float('nan'), 5.0]).cummax(0)",
     ('cummax',
      [('float32', [6], [1.0, 3.0, 3.0, 3.0, 'nan', 'nan']), ('int64', [6], [0, 1, 2, 2, 4, 4])])),
    ('m.tensor([2.0, 1.0, 1.0, 3.0]).cummin(0)',
     ('cummin', [('float32', [4], [2.0, 1.0, 1.0, 1.0]), ('int64', [4], [0, 1, 2, 2])])),
    ('x.cummax(1)',
     ('cummax',
      [('float64', [3, 4], [[3.0, 3.0, 3.0, 5.0], [4.0, 9.0, 9.0, 9.0], [1.0, 8.0, 8.0, 8.0]]),
       ('int64', [3, 4], [[0, 0, 0, 3], [0, 1, 1, 1], [0, 1, 1, 1]])])),
    ('m.tensor([1, 3, 3, 2]).cummax(0)',
     ('cummax', [('int64', [4], [1, 3, 3, 3]), ('int64', [4], [0, 1, 2, 2])])),
    ('x.tril()',
     ('float64', [3, 4], [[3.0, 0.0, 0.0, 0.0], [4.0, 9.0, 0.0, 0.0], [1.0, 8.0, 6.0, 0.0]])),
    ('x.tril(1)',
     ('float64', [3, 4], [[3.0, 1.0, 0.0, 0.0], [4.0, 9.0, 0.0, 0.0], [1.0, 8.0, 6.0, 2.0]])),
    ('x.triu(-1)',
     ('float64', [3, 4], [[3.0, 1.0, 2.0, 5.0], [4.0, 9.0, 0.0, 7.0], [0.0, 8.0, 6.0, 2.0]])),
    ('m.ones(2, 2, 2).triu()',
     ('float32', [2, 2, 2], [[[1.0, 1.0], [0.0, 1.0]], [[1.0, 1.0], [0.0, 1.0]]])),
    ('m.tensor([[1, 2], [3, 4]]).tril()', ('int64', [2, 2], [[1, 0], [3, 4]])),
    ('m.tril(m.ones(2, 3), diagonal=-5)', ('float32', [2, 3], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])),
    ('x.diag()', ('float64', [3], [3.0, 9.0, 6.0])),
    ('m.diag(x, 1)', ('float64', [3], [1.0, 0.0, 2.0])),
    ('m.diag(x, -1)', ('float64', [2], [4.0, 8.0])),
    ('x[0].diag(-1)',
     ('float64',
      [5, 5],
      [[0.0, 0.0, 0.0, 0.0, 0.0],
       [3.0, 0.0, 0.0, 0.0, 0.0],
       [0.0, 1.0, 0.0, 0.0, 0.0],
       [0.0, 0.0, 2.0, 0.0, 0.0],
       [0.0, 0.0, 0.0, 5.0, 0.0]])),
    ('x.diagonal(1)', ('float64', [3], [1.0, 0.0, 2.0])),
    ('x.diagonal(-1, 1, 0)', ('float64', [3], [1.0, 0.0, 2.0])),
    ('x.diagonal(7)', ('float64', [0], [])),
    ('m.diagonal(m.arange(24.0).reshape(2, 3, 4), 1, 2, 0)',
     ('float32', [3, 1], [[12.0], [16.0], [20.0]])),
    ('m.ones(2, 3).diag_embed(0, 0, 2)',
     ('float32',
      [3, 2, 3],
      [[[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]],
       [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]],
       [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]])),
    ('m.ones(2, dtype=m.int64).diag_embed(1)',
     ('int64', [3, 3], [[0, 1, 0], [0, 0, 1], [0, 0, 0]])),
    ('m.ones(3).diag_embed(0, -1, -2)',
     ('float32', [3, 3], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])),
    ('x.roll(1, 1)',
     ('float64', [3, 4], [[5.0, 3.0, 1.0, 2.0], [7.0, 4.0, 9.0, 0.0], [2.0, 1.0, 8.0, 6.0]])),
    ('x.roll(2)',
     ('float64', [3, 4], [[6.0, 2.0, 3.0, 1.0], [2.0, 5.0, 4.0, 9.0], [0.0, 7.0, 1.0, 8.0]])),
    ('x.roll((1, 2), (0, 1))',
     ('float64', [3, 4], [[6.0, 2.0, 1.0, 8.0], [2.0, 5.0, 3.0, 1.0], [0.0, 7.0, 4.0, 9.0]])),
    ('m.roll(x, shifts=-1, dims=0)',
     ('float64', [3, 4], [[4.0, 9.0, 0.0, 7.0], [1.0, 8.0, 6.0, 2.0], [3.0, 1.0, 2.0, 5.0]])),
    ('m.tensor(3.0).roll(1)', ('float32', [], 3.0)),
    ('x.movedim(0, 1)',
     ('float64', [4, 3], [[3.0, 4.0, 1.0], [1.0, 9.0, 8.0], [2.0, 0.0, 6.0], [5.0, 7.0, 2.0]])),
    ('m.movedim(m.zeros(2, 3, 4), (0, -1), (2, 0)).shape', [4, 3, 2]),
    ('m.moveaxis(m.zeros(2, 3, 4), -1, 0).shape', [4, 2, 3]),
    ('x.moveaxis(1, 0)',
     ('float64', [4, 3], [[3.0, 4.0, 1.0], [1.0, 9.0, 8.0], [2.0, 0.0, 6.0], [5.0, 7.0, 2.0]])),
    ('x.tile((2,))',
     ('float64',
      [3, 8],
      [[3.0, 1.0, 2.0, 5.0, 3.0, 1.0, 2.0, 5.0],
       [4.0, 9.0, 0.0, 7.0, 4.0, 9.0, 0.0, 7.0],
       [1.0, 8.0, 6.0, 2.0, 1.0, 8.0, 6.0, 2.0]])),
    ('m.tile(x, (2, 1, 1)).shape', [2, 3, 4]),
    ('m.tensor([[1, 2]]).tile(2, 1)', ('int64', [2, 2], [[1, 2], [1, 2]])),
    ('x.repeat_interleave(2)',
     ('float64',
      [24],
      [3.0,
       3.0,
       1.0,
       1.0,
       2.0,
       2.0,
       5.0,
       5.0,
       4.0,
       4.0,
       9.0,
       9.0,
       0.0,
       0.0,
       7.0,
       7.0,
       1.0,
       1.0,
       8.0,
       8.0,
       6.0,
       6.0,
       2.0,
       2.0])),
    ('x.repeat_interleave(2, dim=1)',
     ('float64',
      [3, 8],
      [[3.0, 3.0, 1.0, 1.0, 2.0, 2.0, 5.0, 5.0],
       [4.0, 4.0, 9.0, 9.0, 0.0, 0.0, 7.0, 7.0],
       [1.0, 1.0, 8.0, 8.0, 6.0, 6.0, 2.0, 2.0]])),
    ('x.repeat_interleave(m.tensor([1, 0, 2]), dim=0)',
     ('float64', [3, 4], [[3.0, 1.0, 2.0, 5.0], [1.0, 8.0, 6.0, 2.0], [1.0, 8.0, 6.0, 2.0]])),
    ('m.repeat_interleave(m.tensor([2, 1]))', ('int64', [3], [0, 0, 1])),
    ('x.masked_select(x > 3)', ('float64', [6], [5.0, 4.0, 9.0, 7.0, 8.0, 6.0])),
    ('x.masked_select(m.tensor([True, False, True, False]))',
     ('float64', [6], [3.0, 2.0, 4.0, 0.0, 1.0, 6.0])),
    ('m.ones(4).masked_select(m.ones(2, 4, dtype=m.bool))',
     ('float32', [8], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])),
    ('x.take(m.tensor([[0, -1], [5, 5]]))', ('float64', [2, 2], [[3.0, 2.0], [9.0, 9.0]])),
    ('m.nonzero(x > 3)', ('int64', [6, 2], [[0, 3], [1, 0], [1, 1], [1, 3], [2, 1], [2, 2]])),
    ('(x > 3).nonzero(as_tuple=True)',
     ('tuple', [('int64', [6], [0, 1, 1, 1, 2, 2]), ('int64', [6], [3, 0, 1, 3, 1, 2])])),
    ('m.argwhere(x > 3)', ('int64', [6, 2], [[0, 3], [1, 0], [1, 1], [1, 3], [2, 1], [2, 2]])),
    ('m.tensor([0.0, 2.0]).nonzero()', ('int64', [1, 1], [[1]])),
    ('m.argwhere(m.tensor(0.0))', ('int64', [0, 0], [])),
    ('m.tensor(3.0).nonzero()', ('int64', [1, 0], [[]])),
    ('m.tensor(3.0).nonzero(as_tuple=True)', ('tuple', [('int64', [1], [0])])),
    ('m.cross(x[:, :3], x[:, 1:], dim=1)',
     ('float64', [3, 3], [[1.0, -13.0, 5.0], [63.0, -28.0, -81.0], [-20.0, 46.0, -58.0]])),
    ('m.cross(m.tensor([1, 0, 0]), m.tensor([0, 1, 0]), dim=0)', ('int64', [3], [0, 0, 1])),
    ('x[:, :3].cross(m.tensor([[1.0, 0.0, 0.0]], dtype=m.float64), dim=1)',
     ('float64', [3, 3], [[0.0, 2.0, -1.0], [0.0, 0.0, -9.0], [0.0, 6.0, -8.0]])),
    ('m.diff(x)', ('float64', [3, 3], [[-2.0, 1.0, 3.0], [5.0, -9.0, 7.0], [7.0, -2.0, -4.0]])),
    ('x.diff(n=2, dim=0)', ('float64', [1, 4], [[-4.0, -9.0, 8.0, -7.0]])),
    ('m.diff(x, dim=0, prepend=x[:1], append=x[2:])',
     ('float64',
      [4, 4],
      [[0.0, 0.0, 0.0, 0.0],
       [1.0, 8.0, -2.0, 2.0],
       [-3.0, -1.0, 6.0, -5.0],
       [0.0, 0.0, 0.0, 0.0]])),
    ('m.diff(m.tensor([True, False, True]))', ('bool', [2], [True, True])),
    ('m.diff(x, n=5)', ('float64', [3, 0], [[], [], []])),
    ('m.diff(m.tensor([1, 4, 9]))', ('int64', [2], [3, 5])),
    ('m.kron(x[:2, :2], m.eye(2, dtype=m.float64))',
     ('float64',
      [4, 4],
      [[3.0, 0.0, 1.0, 0.0], [0.0, 3.0, 0.0, 1.0], [4.0, 0.0, 9.0, 0.0], [0.0, 4.0, 0.0, 9.0]])),
    ('m.kron(m.tensor([1, 10]), m.tensor([[1, 2]]))', ('int64', [1, 4], [[1, 2, 10, 20]])),
    ('m.tensordot(x, x.t(), dims=1)',
     ('float64', [3, 3], [[39.0, 56.0, 33.0], [56.0, 146.0, 90.0], [33.0, 90.0, 105.0]])),
    ('m.tensordot(x, x, dims=([0, 1], [0, 1]))', ('float64', [], 290.0)),
    ('m.tensordot(x, x, dims=0).shape', [3, 4, 3, 4]),
]


GRADS: list[tuple[str, Any]] = [
    ('x.topk(2, 1, True, True)',
     [[2.0, 0.0, 0.0, 1.0], [0.0, 3.0, 0.0, 4.0], [0.0, 5.0, 6.0, 0.0]]),
    ('x.topk(1, 0, largest=False)',
     [[0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0], [1.0, 0.0, 0.0, 4.0]]),
    ('x.sort(1, descending=True)',
     [[2.0, 4.0, 3.0, 1.0], [7.0, 5.0, 8.0, 6.0], [12.0, 9.0, 10.0, 11.0]]),
    ('m.sort(x, stable=True, dim=0)',
     [[5.0, 2.0, 7.0, 8.0], [9.0, 10.0, 3.0, 12.0], [1.0, 6.0, 11.0, 4.0]]),
    ('x.kthvalue(2, 1)', [[0.0, 0.0, 1.0, 0.0], [2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 3.0]]),
    ('x.kthvalue(2, 0, keepdim=True)',
     [[1.0, 0.0, 3.0, 4.0], [0.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]]),
    ('x.median()', [[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]),
    ('x.median(1)', [[0.0, 0.0, 1.0, 0.0], [2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 3.0]]),
    ('x.cumprod(1)',
     [[49.0, 144.0, 69.0, 24.0], [59.0, 24.0, 2268.0, 0.0], [1769.0, 220.0, 280.0, 576.0]]),
    ('x.cummax(1)', [[6.0, 0.0, 0.0, 4.0], [5.0, 21.0, 0.0, 0.0], [9.0, 33.0, 0.0, 0.0]]),
    ('x.cummin(0)', [[6.0, 18.0, 3.0, 12.0], [0.0, 0.0, 18.0, 0.0], [9.0, 0.0, 0.0, 12.0]]),
    ('x.tril(1)', [[1.0, 2.0, 0.0, 0.0], [5.0, 6.0, 7.0, 0.0], [9.0, 10.0, 11.0, 12.0]]),
    ('x.triu(-1)', [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [0.0, 10.0, 11.0, 12.0]]),
    ('x.diag()', [[1.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0]]),
    ('x.diagonal(-1)', [[0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]]),
    ('x[1].diag(1)', [[0.0, 0.0, 0.0, 0.0], [2.0, 8.0, 14.0, 20.0], [0.0, 0.0, 0.0, 0.0]]),
    ('x.diag_embed(1, 0, 2)',
     [[2.0, 18.0, 34.0, 50.0], [7.0, 23.0, 39.0, 55.0], [12.0, 28.0, 44.0, 60.0]]),
    ('x.roll(1, 1)', [[2.0, 3.0, 4.0, 1.0], [6.0, 7.0, 8.0, 5.0], [10.0, 11.0, 12.0, 9.0]]),
    ('x.roll(-3)', [[10.0, 11.0, 12.0, 1.0], [2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0]]),
    ('x.movedim(1, 0)', [[1.0, 4.0, 7.0, 10.0], [2.0, 5.0, 8.0, 11.0], [3.0, 6.0, 9.0, 12.0]]),
    ('x.tile((2, 1))',
     [[14.0, 16.0, 18.0, 20.0], [22.0, 24.0, 26.0, 28.0], [30.0, 32.0, 34.0, 36.0]]),
    ('x.repeat_interleave(2)',
     [[3.0, 7.0, 11.0, 15.0], [19.0, 23.0, 27.0, 31.0], [35.0, 39.0, 43.0, 47.0]]),
    ('x.repeat_interleave(m.tensor([2, 0, 1]), dim=0)',
     [[6.0, 8.0, 10.0, 12.0], [0.0, 0.0, 0.0, 0.0], [9.0, 10.0, 11.0, 12.0]]),
    ('x.masked_select(x > 3)', [[0.0, 0.0, 0.0, 1.0], [2.0, 3.0, 0.0, 4.0], [0.0, 5.0, 6.0, 0.0]]),
    ('x.take(m.tensor([0, 0, -1]))',
     [[3.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 3.0]]),
    ('z.cumprod(1)', [[1.0, -2.75, 0.0, 0.0], [9.2, 7.2, 5.88, 0.0], [-24.5, 67.0, -94.0, -12.0]]),
    ('m.cross(x[:, :3], x[:, 1:], dim=1)',
     [[-4.0, 3.0, 7.0, -5.0], [-35.0, -80.0, 69.0, 16.0], [38.0, -82.0, -11.0, 48.0]]),
    ('x.diff(n=2, dim=1)',
     [[1.0, 0.0, -3.0, 2.0], [3.0, -2.0, -5.0, 4.0], [5.0, -4.0, -7.0, 6.0]]),
    ('m.diff(x, dim=0, append=x[:1])',
     [[8.0, 8.0, 8.0, 8.0], [-4.0, -4.0, -4.0, -4.0], [-4.0, -4.0, -4.0, -4.0]]),
    ('m.kron(x[:2, :2], x[1:, 2:])',
     [[56.0, 86.0, 0.0, 0.0], [176.0, 206.0, 141.0, 158.0], [0.0, 0.0, 209.0, 226.0]]),
    ('m.tensordot(x, x[:, :3] * 2, dims=([0], [0]))',
     [[164.0, 222.0, 280.0, 130.0], [264.0, 382.0, 500.0, 278.0], [260.0, 384.0, 508.0, 340.0]]),
]


NODES: list[tuple[str, str, dict[str, Any]]] = [
    ('x.topk(2, 1, True, True)',
     'TopkBackward0',
     {'dim': 1, 'indices': ('tensor', [[3, 0], [1, 3], [1, 2]]), 'self_sym_sizes': (3, 4)}),
    ('x.sort(1)',
     'SortBackward0',
     {'dim': 1,
      'indices': ('tensor', [[1, 2, 0, 3], [2, 0, 3, 1], [0, 3, 2, 1]]),
      'self_sym_sizes': (3, 4)}),
    ('x.sort(dim=1, stable=False)',
     'SortBackward1',
     {'dim': 1,
      'indices': ('tensor', [[1, 2, 0, 3], [2, 0, 3, 1], [0, 3, 2, 1]]),
      'self_sym_sizes': (3, 4)}),
    ('x.kthvalue(2, 1)',
     'KthvalueBackward0',
     {'dim': 1, 'indices': ('tensor', [2, 0, 3]), 'keepdim': False, 'self_sym_sizes': (3, 4)}),
    ('x.median()',
     'MedianBackward0',
     {'result': ('tensor', 3.0),
      'self': ('tensor', [[3.0, 1.0, 2.0, 5.0], [4.0, 9.0, 0.0, 7.0], [1.0, 8.0, 6.0, 2.0]])}),
    ('x.median(1)',
     'MedianBackward1',
     {'dim': 1, 'indices': ('tensor', [2, 0, 3]), 'keepdim': False, 'self_sym_sizes': (3, 4)}),
    ('x.cumprod(1)',
     'CumprodBackward0',
     {'dim': 1,
      'result': ('tensor',
                 [[3.0, 3.0, 6.0, 30.0], [4.0, 36.0, 0.0, 0.0], [1.0, 8.0, 48.0, 96.0]]),
      'self': ('tensor', [[3.0, 1.0, 2.0, 5.0], [4.0, 9.0, 0.0, 7.0], [1.0, 8.0, 6.0, 2.0]])}),
    ('x.cummax(1)',
     'CummaxBackward0',
     {'dim': 1,
      'indices': ('tensor', [[0, 0, 0, 3], [0, 1, 1, 1], [0, 1, 1, 1]]),
      'self': ('tensor', [[3.0, 1.0, 2.0, 5.0], [4.0, 9.0, 0.0, 7.0], [1.0, 8.0, 6.0, 2.0]])}),
    ('x.cummin(0)',
     'CumminBackward0',
     {'dim': 0,
      'indices': ('tensor', [[0, 0, 0, 0], [0, 0, 1, 0], [2, 0, 1, 2]]),
      'self': ('tensor', [[3.0, 1.0, 2.0, 5.0], [4.0, 9.0, 0.0, 7.0], [1.0, 8.0, 6.0, 2.0]])}),
    ('x.tril(1)', 'TrilBackward0', {'diagonal': 1}),
    ('x.triu()', 'TriuBackward0', {'diagonal': 0}),
    ('x.diag()',
     'DiagonalBackward0_copy',
     {'dim1': 0, 'dim2': 1, 'offset': 0, 'self_sym_sizes': (3, 4)}),
    # diag_embed's default dims, -2 and -1, read back as uint64 (NOTE [saved as given])
    ('x[0].diag(1)', 'DiagEmbedBackward0',
     {'dim1': 18446744073709551614, 'dim2': 18446744073709551615, 'offset': 1}),
    ('x.diagonal(1)',
     'DiagonalBackward0',
     {'dim1': 0, 'dim2': 1, 'offset': 1, 'self_sym_sizes': (3, 4)}),
    ('x.diag_embed(0, 0, 1)', 'DiagEmbedBackward0', {'dim1': 0, 'dim2': 1, 'offset': 0}),
    ('x.roll(1, 1)', 'RollBackward0', {'dims': (1,), 'shifts': (1,)}),
    ('x.roll(2)', 'RollBackward0', {'dims': (), 'shifts': (2,)}),
    ('x.movedim(0, 1)', 'PermuteBackward0', {'dims': (1, 0)}),
    ('x.tile((2,))', 'RepeatBackward0', {'repeats': (1, 2), 'self_sym_sizes': (3, 4)}),
    ('x.repeat_interleave(2)', 'ViewBackward0', {'self_sym_sizes': (12, 2)}),
    ('x.repeat_interleave(m.tensor([1, 0, 2]), dim=0)',
     'IndexSelectBackward0',
     {'dim': 0, 'index': ('tensor', [0, 2, 2]), 'self_sym_sizes': (3, 4)}),
    ('x.masked_select(x > 3)',
     'MaskedSelectBackward0',
     {'mask': ('tensor',
               [[False, False, False, True],
                [True, True, False, True],
                [False, True, True, False]]),
      'self': ('tensor', [[3.0, 1.0, 2.0, 5.0], [4.0, 9.0, 0.0, 7.0], [1.0, 8.0, 6.0, 2.0]])}),
    ('x.take(m.tensor([0, 5]))',
     'TakeBackward0',
     {'index': ('tensor', [0, 5]),
      'self': ('tensor', [[3.0, 1.0, 2.0, 5.0], [4.0, 9.0, 0.0, 7.0], [1.0, 8.0, 6.0, 2.0]])}),
    ('m.cross(x[:, :3], x[:, 1:], dim=1)',
     'LinalgCrossBackward0',
     {'dim': 1,
      'other': ('tensor', [[1.0, 2.0, 5.0], [9.0, 0.0, 7.0], [8.0, 6.0, 2.0]]),
      'self': ('tensor', [[3.0, 1.0, 2.0], [4.0, 9.0, 0.0], [1.0, 8.0, 6.0]])}),
    ('x.diff()', 'SubBackward0', {'alpha': 1}),
    ('m.kron(x, x)', 'UnsafeViewBackward0', {'self_sym_sizes': (3, 3, 4, 4)}),
    ('m.tensordot(x, x.t(), dims=1)', 'ViewBackward0', {'self_sym_sizes': (3, 3)}),
]


ERRORS: list[tuple[str, tuple[str, str]]] = [
    ('x.topk(5)', ('RuntimeError', 'selected index k out of range')),
    ('x.topk(-1)', ('RuntimeError', 'selected index k out of range')),
    ('x.topk(1, 2)',
     ('IndexError', 'Dimension out of range (expected to be in range of [-2, 1], but got 2)')),
    ('m.tensor([True, False]).topk(1)',
     ('RuntimeError', 'topk does not support bool dtypes on CPU')),
    ('x.topk(1.5)', ('TypeError', "topk(): argument 'k' (position 1) must be int, not float")),
    ('x.sort(3)',
     ('IndexError', 'Dimension out of range (expected to be in range of [-2, 1], but got 3)')),
    ('x.kthvalue(0)',
     ('RuntimeError', 'kthvalue(): selected number k out of range for dimension 1')),
    ('x.kthvalue(5)',
     ('RuntimeError', 'kthvalue(): selected number k out of range for dimension 1')),
    ('m.tensor([True]).kthvalue(1)',
     ('NotImplementedError', '"kthvalue_cpu" not implemented for \'Bool\'')),
    ('m.tensor([True, False]).median()',
     ('NotImplementedError', '"median_cpu" not implemented for \'Bool\'')),
    ('m.zeros(0, 3).median(0)',
     ('IndexError', 'median(): Expected reduction dim 0 to have non-zero size.')),
    ('x.median(5)',
     ('IndexError', 'Dimension out of range (expected to be in range of [-2, 1], but got 5)')),
    ('x.cumprod(2)',
     ('IndexError', 'Dimension out of range (expected to be in range of [-2, 1], but got 2)')),
    ('m.ones(3).tril()', ('RuntimeError', 'tril: input tensor must have at least 2 dimensions')),
    ('m.ones(3).triu_()', ('RuntimeError', 'triu: input tensor must have at least 2 dimensions')),
    ('x.tril_()',
     ('RuntimeError',
      'a leaf Variable that requires grad is being used in an in-place operation.')),
    ('m.ones(2, 2, 2).diag()', ('RuntimeError', 'diag(): Supports 1D or 2D tensors. Got 3D')),
    ('m.tensor(1.0).diag()', ('RuntimeError', 'diag(): Supports 1D or 2D tensors. Got 0D')),
    ('x.diagonal(0, 1, 1)', ('RuntimeError', 'diagonal dimensions cannot be identical 1, 1')),
    ('m.ones(3).diagonal()',
     ('IndexError', 'Dimension out of range (expected to be in range of [-1, 0], but got 1)')),
    ('m.ones(2).diag_embed(0, 0, 0)',
     ('RuntimeError', 'diagonal dimensions cannot be identical 0, 0')),
    ('m.ones(2).diag_embed(0, 0, 3)',
     ('IndexError', 'Dimension out of range (expected to be in range of [-2, 1], but got 3)')),
    ('x.roll((1, 2), (0,))',
     ('RuntimeError', 'shifts and dimensions must align. shifts: 2, dims:1')),
    ('m.ones(3).roll((1, 2))',
     ('RuntimeError', 'shifts and dimensions must align. shifts: 2, dims:0')),
    ('x.roll(1, 2)',
     ('IndexError', 'Dimension out of range (expected to be in range of [-2, 1], but got 2)')),
    ('x.movedim((0, 0), (1, 0))', ('RuntimeError', 'movedim: repeated dim in `source` ([0, 0])')),
    ('x.movedim((0, 1), (-1, -1))',
     ('RuntimeError', 'movedim: repeated dim in `destination` ([-1, -1])')),
    ('x.movedim((0, 1), (1,))',
     ('RuntimeError',
      'movedim: Invalid source or destination dims: source ([0, 1] dims) should contain the same '
      'number of dims as destination ([1] dims)')),
    ('x.movedim(0, 2)',
     ('IndexError', 'Dimension out of range (expected to be in range of [-2, 1], but got 2)')),
    ('x.tile(-1)',
     ('RuntimeError', 'Trying to create tensor with negative dimension -4: [3, -4]')),
    ('x.masked_select(m.tensor([1, 0, 1, 0]))',
     ('RuntimeError', 'masked_select: expected BoolTensor for mask')),
    ('x.masked_select(m.ones(3, dtype=m.bool))',
     ('RuntimeError',
      'The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1 '
      '(masked_select: input shapes [[3], [3, 4]] do not broadcast; reshape or unsqueeze one '
      'operand so that each dimension matches or is 1)')),
    ('x.take(m.tensor([12]))',
     ('IndexError', 'out of range: tried to access index 12 on a tensor of 12 elements.')),
    ('x.take(m.tensor([1.0]))',
     ('RuntimeError', 'take(): Expected a long tensor for index, but got Float')),
    ('x.repeat_interleave(-1)', ('RuntimeError', 'Repeats must be non-negative')),
    ('m.ones(2).repeat_interleave(m.tensor([1, 2, 3]))',
     ('RuntimeError',
      'repeats must have the same size as input along dim, but got repeats.size(0) = 3 and '
      'input.size(0) = 2')),
    ('m.cross(m.ones(3, 4), m.ones(3, 4), dim=1)',
     ('RuntimeError', 'linalg.cross: inputs dimension 1 must have length 3. Got 4 and 4')),
    ('m.cross(m.ones(3), m.ones(2, 3), dim=0)',
     ('RuntimeError', 'linalg.cross: inputs must have the same number of dimensions.')),
    ('m.cross(m.ones(3), m.ones(4), dim=0)',
     ('RuntimeError', 'linalg.cross: inputs dimension 0 must have length 3. Got 3 and 4')),
    ('m.diff(m.tensor(1.0))',
     ('RuntimeError', 'diff expects input to be at least one-dimensional')),
    ('m.diff(x, n=-1)', ('RuntimeError', 'order must be non-negative but got -1')),
    ('m.tensordot(x, x, dims=-1)',
     ('RuntimeError', 'tensordot expects dims >= 0, but got dims=-1')),
    ('m.tensordot(x, x, dims=1)',
     ('RuntimeError',
      'contracted dimensions need to match, but first has size 4 in dim -1 and second has size 3 '
      'in dim 0')),
    ('m.tensordot(x, x, dims=([0], [0, 1]))',
     ('RuntimeError', 'both dimension lists should have same length')),
]


# The whole graph (decompositions as PyTorch records them): tests/_graphs.py's sig().
GRAPHS: list[tuple[str, str]] = [
    ('x.repeat_interleave(2)',
     'ViewBackward0(CloneBackward0(ExpandBackward0(UnsqueezeBackward0(ViewBackward0(Acc)))))'),
    ('x.repeat_interleave(2, dim=1)',
     'ViewBackward0(CloneBackward0(ExpandBackward0(UnsqueezeBackward0(Acc))))'),
    ('x.repeat_interleave(m.tensor([1, 0, 2]), dim=0)', 'IndexSelectBackward0(Acc)'),
    ('x.tile((2,))', 'RepeatBackward0(Acc)'),
    ('x.movedim(0, 1)', 'PermuteBackward0(Acc)'),
    ('m.moveaxis(x, 1, 0)', 'PermuteBackward0(Acc)'),
    ('m.diff(x)', 'SubBackward0(SliceBackward0(Acc), SliceBackward0(Acc))'),
    ('x.diff(n=2, dim=0)',
     'SubBackward0(SliceBackward0(SubBackward0(SliceBackward0(Acc), SliceBackward0(Acc))), '
     'SliceBackward0(SubBackward0(SliceBackward0(Acc), SliceBackward0(Acc))))'),
    ('m.diff(x, dim=0, prepend=x[:1])',
     'SubBackward0(SliceBackward0(CatBackward0(SliceBackward0(Acc), Acc)), '
     'SliceBackward0(CatBackward0(SliceBackward0(Acc), Acc)))'),
    ('m.kron(x, x)',
     'UnsafeViewBackward0(MulBackward0(UnsafeViewBackward0(Acc), UnsafeViewBackward0(Acc)))'),
    ('m.tensordot(x, x.t(), dims=1)',
     'ViewBackward0(MmBackward0(ViewBackward0(PermuteBackward0(Acc)), '
     'ReshapeAliasBackward0(PermuteBackward0(TBackward0(Acc)))))'),
    ('m.tensordot(x, x, dims=([0], [0]))',
     'ViewBackward0(MmBackward0(ReshapeAliasBackward0(PermuteBackward0(Acc)), '
     'ViewBackward0(PermuteBackward0(Acc))))'),
    ('m.cross(x[:, :3], x[:, 1:], dim=1)',
     'LinalgCrossBackward0(SliceBackward0(Acc), SliceBackward0(Acc))'),
    ('x.diag()', 'DiagonalBackward0_copy(Acc)'),
    ('x[0].diag()', 'DiagEmbedBackward0(SelectBackward0(Acc))'),
    ('x.topk(2)[0]', 'TopkBackward0(Acc)'),
    ('x.sort(stable=True)[0]', 'SortBackward1(Acc)'),
    ('x.median()', 'MedianBackward0(Acc)'),
    ('x.cumprod(0).tril()', 'TrilBackward0(CumprodBackward0(Acc))'),
    ('x.diagonal().roll(1)', 'RollBackward0(DiagonalBackward0(Acc))'),
    ('x.masked_select(x > 3).take(m.tensor([0]))', 'TakeBackward0(MaskedSelectBackward0(Acc))'),
]


@pytest.mark.parametrize(("src", "expected"), VALUES, ids=[c[0] for c in VALUES])
def test_values_dtypes_and_named_tuples(src: str, expected: Any) -> None:
    assert describe(eval(src, env(gradviz))) == expected  # noqa: S307


@pytest.mark.parametrize(("src", "expected"), GRADS, ids=[c[0] for c in GRADS])
def test_gradients_reach_the_selected_elements(src: str, expected: Any) -> None:
    assert grad_of(gradviz, src) == expected


@pytest.mark.parametrize(("src", "node", "values"), NODES, ids=[c[0] for c in NODES])
def test_node_names_and_saved_values(src: str, node: str, values: dict[str, Any]) -> None:
    assert node_of(gradviz, src) == (node, values)


@pytest.mark.parametrize(("src", "expected"), ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_are_torchs(src: str, expected: tuple[str, str]) -> None:
    assert error_of(gradviz, src) == expected


@pytest.mark.parametrize(("src", "expected"), GRAPHS, ids=[c[0] for c in GRAPHS])
def test_graphs_are_torchs(src: str, expected: str) -> None:
    assert sig(eval(src, env(gradviz))) == expected  # noqa: S307


# -- named tuples ----------------------------------------------------------------------------------
@pytest.mark.parametrize("src", ["x.topk(2)", "x.sort()", "x.kthvalue(1)", "x.median(0)",
                                 "x.cummax(0)", "x.cummin(1)"])
def test_named_tuples_are_tuples_with_fields(src: str) -> None:
    out = eval(src, env(gradviz))  # noqa: S307
    name = src.split(".")[1].split("(")[0]
    assert type(out) is getattr(gradviz.return_types, name)
    assert type(out).__module__ == "gradviz.return_types" and type(out).__name__ == name
    values, indices = out  # unpacks as a pair
    assert out.values is values is out[0] and out.indices is indices is out[1]
    assert indices.dtype == gradviz.int64 and not indices.requires_grad
    assert values.requires_grad and values.dtype == gradviz.float64
    assert repr(out).startswith(f"gradviz.return_types.{name}(\nvalues=tensor(")
    assert "\nindices=tensor(" in repr(out)


def test_topk_accuracy_as_classification_examples_compute_it() -> None:
    # A classifier's top-1 / top-5 accuracy, the way ImageNet-style training scripts compute
    # it: the 5 highest-scoring classes per row, transposed, compared with the targets.
    output = gradviz.tensor(np.random.default_rng(0).normal(size=(8, 10)), requires_grad=True)
    ranked = output.detach().argsort(1, descending=True)
    target = ranked[:, 0].clone()  # rows 4..7: the top class
    target[:3] = ranked[:3, 4]  # rows 0..2: the 5th best class (in the top 5, not the top 1)
    target[3] = ranked[3, 5]  # row 3: the 6th best (outside the top 5)
    with gradviz.no_grad():
        _, pred = output.topk(5, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        top = [correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100.0 / 8).item()
               for k in (1, 5)]
    assert pred.shape == (5, 8) and top == [50.0, 87.5]


def test_topk_indices_select_the_values() -> None:
    x = gradviz.tensor(np.random.default_rng(1).normal(size=(4, 7)))
    for largest in (True, False):
        values, indices = x.topk(3, 1, largest)
        np.testing.assert_array_equal(x.gather(1, indices).numpy(), values.numpy())
        ref = np.sort(x.numpy(), axis=1)
        ref = ref[:, ::-1][:, :3] if largest else ref[:, :3]
        np.testing.assert_array_equal(values.numpy(), ref)


def test_topk_unsorted_returns_the_same_elements() -> None:
    # sorted=False leaves the order open in PyTorch; the elements are the same.
    x = gradviz.tensor([0.3, -1.0, 2.5, 0.7, 1.1], dtype=gradviz.float64)
    a, b = x.topk(3, sorted=False), x.topk(3)
    assert sorted(zip(a.values.tolist(), a.indices.tolist())) == [(0.7, 3), (1.1, 4), (2.5, 2)]
    assert sorted(zip(b.values.tolist(), b.indices.tolist())) == [(0.7, 3), (1.1, 4), (2.5, 2)]


# -- ties ------------------------------------------------------------------------------------------
def test_stable_sort_keeps_equal_values_in_order() -> None:
    t = gradviz.tensor([3.0, 1.0, 3.0, 1.0, 3.0])
    assert t.sort(stable=True).indices.tolist() == [1, 3, 0, 2, 4]
    assert t.sort(stable=True, descending=True).indices.tolist() == [0, 2, 4, 1, 3]
    assert t.argsort(stable=True, descending=True).tolist() == [0, 2, 4, 1, 3]


@pytest.mark.parametrize("call", [lambda x: x.topk(1).values, lambda x: x.kthvalue(2).values,
                                  lambda x: x.median(0).values, lambda x: x.sort().values[-1]])
def test_tied_values_send_the_gradient_to_the_returned_index_only(call: Any) -> None:
    # [2, 1, 2, 2]: the max, the 2nd smallest and the median are all a tied 2
    x = gradviz.tensor([2.0, 1.0, 2.0, 2.0], requires_grad=True)
    call(x).sum().backward()
    assert x.grad.sum().item() == 1.0 and sorted(x.grad.tolist()) == [0.0, 0.0, 0.0, 1.0]
    assert x.grad[1].item() == 0.0


def test_median_of_all_shares_a_tie_evenly() -> None:
    x = gradviz.tensor([1.0, 2.0, 2.0, 3.0], requires_grad=True)  # lower middle: a tied 2
    x.median().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5, 0.0]


def test_cummax_gives_a_later_equal_value_the_gradient() -> None:
    x = gradviz.tensor([1.0, 3.0, 3.0, 2.0], requires_grad=True)
    out = x.cummax(0)
    assert out.indices.tolist() == [0, 1, 2, 2]
    out.values.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 2.0, 0.0]


# -- dtypes ----------------------------------------------------------------------------------------
def test_dtypes() -> None:
    f32 = gradviz.tensor([[3.0, 1.0], [2.0, 4.0]])
    assert f32.topk(1).values.dtype == gradviz.float32
    assert f32.sort().indices.dtype == gradviz.int64
    assert f32.median().dtype == gradviz.float32 and f32.cumprod(0).dtype == gradviz.float32
    i32 = gradviz.tensor([3, 1, 2], dtype=gradviz.int32)
    assert i32.sort().values.dtype == gradviz.int32 and i32.cumprod(0).dtype == gradviz.int64
    assert gradviz.tensor([[1, 2], [3, 4]], dtype=gradviz.int16).tril().dtype == gradviz.int16
    assert gradviz.nonzero(f32).dtype == gradviz.int64
    assert gradviz.tensor([True, False]).roll(1).tolist() == [False, True]


# -- views and in-place ----------------------------------------------------------------------------
def test_diagonal_is_a_view_of_its_input() -> None:
    base = gradviz.zeros(3, 4)
    d = base.diagonal(1)
    assert d._base is base and d._version == base._version
    d.add_(1.0)  # writes through to the base, as torch's view does
    assert base.tolist() == [[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
    m = base.movedim(1, 0)
    assert m._base is base and m.shape == (4, 3)
    c = base.diag()  # diag of a matrix is a copy (DiagonalBackward0_copy), not a view
    c.add_(5.0)
    assert c._base is None and base.diagonal().tolist() == [0, 0, 0]


def test_in_place_through_a_diagonal_records_copy_slices() -> None:
    x = gradviz.tensor(X, dtype=gradviz.float64, requires_grad=True)
    h = x * 1
    h.diagonal().mul_(10)
    assert h.grad_fn.name() == "torch::autograd::CopySlices"
    h.sum().backward()
    assert x.grad.tolist() == [[10, 1, 1, 1], [1, 10, 1, 1], [1, 1, 10, 1]]


def test_tril_in_place() -> None:
    x = gradviz.tensor(X, dtype=gradviz.float64, requires_grad=True)
    y = x * 1
    y.triu_(1)
    assert y._version == 1 and y.grad_fn.name() == "TriuBackward0"
    assert y.grad_fn._saved_diagonal == 1
    y.sum().backward()
    assert x.grad.tolist() == [[0, 1, 1, 1], [0, 0, 1, 1], [0, 0, 0, 1]]


def test_diagonal_backward_is_recorded_under_create_graph() -> None:
    x = gradviz.tensor(X, dtype=gradviz.float64, requires_grad=True)
    v = gradviz.ones(3, dtype=gradviz.float64, requires_grad=True)
    (g,) = gradviz.autograd.grad(x.diagonal(1), x, v, create_graph=True)
    node = g.grad_fn
    assert node.name() == "DiagonalBackwardBackward0"
    assert (node._saved_dim1, node._saved_dim2, node._saved_offset) == (0, 1, 1)
    assert g.tolist() == [[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]


# -- gradients against finite differences ---------------------------------------------------------
@pytest.mark.parametrize("values", [
    [[0.5, 0.0, 1.5, -2.0], [1.2, 0.7, 0.0, 0.0]],  # one zero; two zeros in a row
    [[0.0, 0.3, 1.5, -2.0], [1.2, 0.7, 1.1, 0.0]],  # a zero first; a zero last
    [[0.0, 0.0, 0.0, 0.5], [0.4, -0.7, 1.1, 0.9]],  # only zeros at first; no zero
])
def test_cumprod_gradient_with_zeros(values: list) -> None:
    x = gradviz.tensor(values, dtype=gradviz.float64, requires_grad=True)
    for dim in (0, 1):
        assert gradcheck(lambda a, d=dim: a.cumprod(d), (x,))
        assert gradgradcheck(lambda a, d=dim: a.cumprod(d), (x,))


def cumprod_second_derivative(m: Any) -> Any:
    """d/dz of the sum of d((z.cumprod(1) * w).sum())/dz, z with zeros: torch's is exact."""
    z = m.tensor([[0.5, 0.0, 1.5, -2.0], [1.2, 0.7, 0.0, 0.0]], dtype=m.float64,
                 requires_grad=True)
    w = m.arange(1.0, 9.0, dtype=m.float64).reshape(2, 4)
    (g,) = m.autograd.grad((z.cumprod(1) * w).sum(), z, create_graph=True)
    g.sum().backward()
    return [[round(v, 12) for v in row] for row in z.grad.tolist()]


CUMPROD_SECOND = [[-5.5, -5.0, -2.5, 3.0], [10.9, 14.4, 20.02, 6.72]]


def test_cumprod_second_derivative_at_zeros() -> None:
    assert cumprod_second_derivative(gradviz) == CUMPROD_SECOND


@pytest.mark.parametrize("fn", [
    lambda x: x.topk(2, 0).values, lambda x: x.sort(1, descending=True).values,
    lambda x: x.kthvalue(2, 1, keepdim=True).values, lambda x: x.median(0).values,
    lambda x: x.cummin(1).values, lambda x: x.cumprod(0), lambda x: x.tril(-1),
    lambda x: x.triu(1), lambda x: x.diagonal(0, 1, 0), lambda x: x.diag(),
    lambda x: x[0].diag(-2), lambda x: x.diag_embed(1), lambda x: x.roll((1, -1), (0, 1)),
    lambda x: x.movedim(0, 1), lambda x: x.tile(2, 1, 3),
    lambda x: x.repeat_interleave(gradviz.tensor([2, 0, 3]), dim=0),
    lambda x: x.repeat_interleave(2, dim=1), lambda x: x.masked_select(x > 0),
    lambda x: x.take(gradviz.tensor([[3, 3], [-1, 0]])),
])
def test_gradcheck_and_gradgradcheck_through_the_public_api(fn: Any) -> None:
    x = gradviz.tensor(np.random.default_rng(2).uniform(-1, 1, (3, 4)), requires_grad=True)
    assert gradcheck(fn, (x,)) and gradgradcheck(fn, (x,))
