"""PyTorch's tensor functions that gradviz added in one go (the "opsmore" set): elementwise
functions, reductions and statistics, stacking/splitting/reshaping, indexing, factories.

For each: values and dtypes, error texts, the chain of nodes a call records with the first
node's saved names, and gradients at the points where torch has a convention (a zero, a tie,
a NaN). The expectations are torch 2.13.0's (CPU), read off it for the same sources;
``tests/parity/test_ops_more_parity.py`` derives them again from a live torch and compares
random programs with it. ``m`` is the module (gradviz here, torch there); ``x``, ``y`` (2x3),
``v`` (3), ``p`` (2x3, positive), ``s`` (0-d) and ``z`` (signed zeros) are float64 leaves that
require grad, ``w`` a float64 constant (:func:`env`).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest

import gradviz


def env(m: Any = gradviz) -> dict[str, Any]:
    """Fresh inputs for one source: ``m``, ``math`` and the leaves it reads."""
    def leaf(v: Any) -> Any:
        return m.tensor(v, dtype=m.float64, requires_grad=True)

    return {"m": m, "math": math, "x": leaf([[0.3, -0.7, 0.2], [0.9, -0.1, 0.5]]),
            "y": leaf([[0.5, 0.9, -0.4], [0.1, 0.6, -0.3]]), "v": leaf([0.25, -0.5, 0.75]),
            "p": leaf([[0.5, 1.5, 2.0], [0.8, 1.2, 3.0]]), "s": leaf(0.4),
            "z": leaf([-0.0, 0.0, 2.0, -3.0]),
            "w": m.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=m.float64)}


def run(src: str, m: Any = gradviz, leaves: dict[str, Any] | None = None) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(src, leaves or env(m))  # noqa: S307 - sources written in this file


def plain(out: Any) -> tuple[str | None, Any]:
    """``(dtype name, values)`` of a result: a tensor, a size, or a list of either."""
    if hasattr(out, "dtype") and hasattr(out, "tolist"):
        return str(out.dtype).split(".")[-1], out.tolist()
    if isinstance(out, (list, tuple)):
        return None, [list(t) if type(t).__name__ == "Size" else t for t in out]
    if type(out).__name__ == "Size":
        return None, list(out)
    return None, out


# float64 within 1e-8: torch's trigamma (digamma's derivative) is itself only that close.
_RTOL = {"float16": 1e-3, "float32": 1e-6, None: 1e-8}


def same_values(a: Any, b: Any, dtype: str | None) -> bool:
    """Equal within the dtype's tolerance, NaN equal to NaN, infinities exact."""
    try:
        fa, fb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    except (TypeError, ValueError):
        return a == b
    if fa.shape != fb.shape:
        return False
    with np.errstate(invalid="ignore"):
        close = (fa == fb) | (np.abs(fa - fb) <= _RTOL.get(dtype, 1e-8) * np.abs(fb))
    return bool(np.all((np.isnan(fa) & np.isnan(fb)) | close))


def chain(out: Any) -> list[str]:
    """The nodes below ``out``, depth first, two spaces of indent per level (no recursion)."""
    lines, stack, seen = [], [(out.grad_fn, 0)], set()
    while stack:
        node, depth = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        lines.append("  " * depth + node.name().replace("torch::autograd::", ""))
        stack.extend((n, depth + 1) for n, _ in reversed(node.next_functions))
    return lines


def saved(node: Any) -> list[str]:
    return sorted(a[len("_saved_"):] for a in dir(node) if a.startswith("_saved_"))


def leaf_grad(src: str, leaf: str | None, m: Any = gradviz) -> Any:
    """``out.sum().backward()``, then the gradient of ``leaf`` (or, for None, of the one leaf
    the source itself made: the first AccumulateGrad below the output)."""
    leaves = env(m)
    out = run(src, m, leaves)
    if leaf is None:
        stack = [out.grad_fn]
        while True:
            node = stack.pop()
            if node.name().endswith("AccumulateGrad"):
                target = node.variable
                break
            stack.extend(n for n, _ in reversed(node.next_functions) if n is not None)
    else:
        target = leaves[leaf]
    out.sum().backward()
    g = target.grad
    return g.numpy(force=True) if hasattr(g, "is_sparse") else g.numpy()


inf, nan = math.inf, math.nan  # as the expected values below spell them

# Read off torch 2.13.0: (source, dtype or None, values); (source, error type, message);
# (source, node chain, the first node's saved names); (source, leaf, gradient of out.sum()).
VALUES = [('m.erfc(m.tensor([-1.0, 0.0, 0.5, 2.0]))', 'float32',
  [1.8427008390426636, 1.0, 0.4795001149177551, 0.004677734803408384]),
 ('m.erfc(m.tensor([1, 2]))', 'float32', [0.15729920566082, 0.004677734803408384]),
 ('m.erfinv(m.tensor([-1.0, -0.5, 0.0, 0.3, 1.0, 1.5]))', 'float32',
  [-inf, -0.4769362807273865, 0.0, 0.27246272563934326, inf, nan]),
 ('m.lgamma(m.tensor([-1.5, 0.0, 0.5, 1.0, 3.0, 10.0]))', 'float32',
  [0.8600470423698425, inf, 0.5723649263381958, 0.0, 0.6931471824645996, 12.801827430725098]),
 ('m.digamma(m.tensor([-1.0, 0.0, 0.5, 1.0, 2.5], dtype=m.float64))', 'float64',
  [nan, -inf, -1.9635100260214229, -0.5772156649015328, 0.7031566406452431]),
 ('m.polygamma(1, m.tensor([0.5, 1.0, 4.0], dtype=m.float64))', 'float64',
  [4.934802202073678, 1.6449340676383375, 0.2838229557697153]),
 ('m.polygamma(2, m.tensor([1.5, 3.0], dtype=m.float64))', 'float64',
  [-0.8287966442343201, -0.15411380631918856]),
 ('m.sinc(m.tensor([-1.5, 0.0, 0.25, 0.5, 2.0], dtype=m.float64))', 'float64',
  [-0.2122065907891938, 1.0, 0.9003163161571061, 0.6366197723675814, -3.8981718325193755e-17]),
 ('m.sgn(m.tensor([-2.0, -0.0, 0.0, 3.5]))', 'float32', [-1.0, 0.0, 0.0, 1.0]),
 ('m.sgn(m.tensor([-3, 0, 4]))', 'int64', [-1, 0, 1]),
 ('m.copysign(m.tensor([1.0, -2.0, 3.0]), m.tensor([-1.0, 0.0, -0.0]))', 'float32',
  [-1.0, 2.0, -3.0]),
 ('m.copysign(m.tensor([1, -2]), -1)', 'float32', [-1.0, -2.0]),
 ('m.copysign(m.tensor([1.5, -2.5], dtype=m.float64), 2)', 'float64', [1.5, 2.5]),
 ('m.logaddexp(m.tensor([0.0, 1000.0, -1000.0]), m.tensor([0.0, 1000.0, -1000.0]))', 'float32',
  [0.6931471824645996, 1000.6931762695312, -999.3068237304688]),
 ('m.logaddexp2(m.tensor([1.0, 3.0]), m.tensor([1.0, 2.0]))', 'float32',
  [2.0, 3.5849623680114746]),
 ('m.signbit(m.tensor([-0.0, 0.0, -1.0, 2.0]))', 'bool', [True, False, True, False]),
 ('m.signbit(m.tensor([-1, 0, 1]))', 'bool', [True, False, False]),
 ('m.isclose(m.tensor([1.0, 2.0, math.nan]), m.tensor([1.0 + 1e-9, 2.1, math.nan]))', 'bool',
  [True, False, False]),
 ('m.isclose(m.tensor([1.0, math.nan]), m.tensor([1.05, math.nan]), rtol=0.1, equal_nan=True)',
  'bool', [True, True]),
 ('m.float_power(m.tensor([2, 3]), 2)', 'float64', [4.0, 9.0]),
 ('m.float_power(2, m.tensor([0.5, -1.0]))', 'float64', [1.4142135623730951, 0.5]),
 ('m.float_power(m.tensor([4.0]), m.tensor([0.5]))', 'float64', [2.0]),
 ('m.tensor([6.0, 3.0]).true_divide(m.tensor([4.0, 2.0]))', 'float32', [1.5, 1.5]),
 ('m.tensor([1.5, -2.25]).half()', 'float16', [1.5, -2.25]),
 ('m.tensor([1, 300, -1]).byte()', 'uint8', [1, 44, 255]),
 ('m.tensor([-1.7, 130.0]).char()', 'int8', [-1, -126]),
 ('m.tensor([5.9, -70000.0]).short()', 'int16', [5, -4464]),
 ('m.var_mean(m.tensor([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]]), 1)[0]', 'float32',
  [2.3333332538604736, 9.333333015441895]),
 ('m.var_mean(m.tensor([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]]), 1)[1]', 'float32',
  [2.3333332538604736, 5.666666507720947]),
 ('m.std_mean(m.tensor([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]]), correction=0)[0]', 'float32',
  2.58198881149292),
 ('m.std_mean(m.tensor([[1.0, 2.0], [3.0, 5.0]]), 0, keepdim=True)[1]', 'float32', [[2.0, 3.5]]),
 ('m.logcumsumexp(m.tensor([0.0, 0.0, math.log(2.0), -math.inf]), 0)', 'float32',
  [0.0, 0.6931471824645996, 1.3862943649291992, 1.3862943649291992]),
 ('m.logcumsumexp(m.tensor([[1000.0, 1000.0], [-math.inf, -math.inf]]), 1)', 'float32',
  [[1000.0, 1000.6931762695312], [-inf, -inf]]),
 ('m.nansum(m.tensor([[1.0, math.nan], [2.0, 3.0]]), 1)', 'float32', [1.0, 5.0]),
 ('m.nansum(m.tensor([1, 2, 3]))', 'int64', 6),
 ('m.nanmean(m.tensor([[1.0, math.nan], [2.0, 3.0]]), 0)', 'float32', [1.5, 3.0]),
 ('m.nanmean(m.tensor([math.nan, math.nan]))', 'float32', nan),
 ('m.aminmax(m.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]]), dim=1).min', 'float32', [1.0, 0.0]),
 ('m.aminmax(m.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])).max', 'float32', 7.0),
 ('m.aminmax(m.tensor([4, 2, 9]), dim=0, keepdim=True).max', 'int64', [9]),
 ('m.mode(m.tensor([3.0, 1.0, 3.0, 1.0, 2.0])).values', 'float32', 1.0),
 ('m.mode(m.tensor([3.0, 1.0, 3.0, 1.0, 2.0])).indices', 'int64', 3),
 ('m.mode(m.tensor([[1, 5, 2, 5], [3, 3, 0, 1]]), 1).indices', 'int64', [3, 1]),
 ('m.mode(m.tensor([[1, 5], [1, 3], [2, 3]]), 0, True).values', 'int64', [[1, 3]]),
 ('m.count_nonzero(m.tensor([[0, 1, 2], [0, 0, 3]]))', 'int64', 3),
 ('m.count_nonzero(m.tensor([[0, 1, 2], [0, 0, 3]]), 1)', 'int64', [2, 1]),
 ('m.count_nonzero(m.tensor([[0.0, 1.0], [2.0, 0.0]]), (0, 1))', 'int64', 2),
 ('m.bincount(m.tensor([1, 1, 3]))', 'int64', [0, 2, 0, 1]),
 ('m.bincount(m.tensor([2]), minlength=4)', 'int64', [0, 0, 1, 0]),
 ('m.bincount(m.tensor([0, 0, 2]), weights=m.tensor([0.5, 0.25, 2.0]))', 'float32',
  [0.75, 0.0, 2.0]),
 ('m.bincount(m.tensor([], dtype=m.int64))', 'int64', []),
 ('m.histc(m.tensor([1.0, 2.0, 1.0, 5.0, -1.0]), bins=3, min=0, max=3)', 'float32',
  [0.0, 2.0, 1.0]),
 ('m.histc(m.tensor([1.0, 2.0, 1.0, 3.0]), bins=4)', 'float32', [2.0, 0.0, 1.0, 1.0]),
 ('m.histc(m.tensor([2.0, 2.0]), bins=2)', 'float32', [0.0, 2.0]),
 ('m.quantile(m.tensor([1.0, 2.0, 3.0, 4.0]), 0.5)', 'float32', 2.5),
 ('m.quantile(m.tensor([[1.0, 4.0, 2.0], [0.5, 0.0, 9.0]]), 0.25, dim=1)', 'float32', [1.5, 0.25]),
 ('m.quantile(m.tensor([[1.0, 4.0, 2.0], [0.5, 0.0, 9.0]]), m.tensor([0.0, 0.4, 1.0]), dim=1, '
  'keepdim=True)',
  'float32', [[[1.0], [0.0]], [[1.7999999523162842], [0.4000000059604645]], [[4.0], [9.0]]]),
 ("m.quantile(m.tensor([0.0, 1.0, 2.0, 10.0]), 0.4, interpolation='lower')", 'float32', 1.0),
 ("m.quantile(m.tensor([0.0, 1.0, 2.0, 10.0]), 0.4, interpolation='higher')", 'float32', 2.0),
 ("m.quantile(m.tensor([0.0, 1.0, 2.0, 10.0]), 0.5, interpolation='nearest')", 'float32', 2.0),
 ("m.quantile(m.tensor([0.0, 1.0, 2.0, 10.0]), 0.4, interpolation='midpoint')", 'float32', 1.5),
 ('m.quantile(m.tensor([1.0, math.nan, 3.0]), 0.5)', 'float32', nan),
 ('m.nanquantile(m.tensor([[1.0, math.nan, 3.0], [math.nan, math.nan, math.nan]]), 0.5, dim=1)',
  'float32', [2.0, nan]),
 ('m.hstack([m.tensor([1, 2]), m.tensor([3])])', 'int64', [1, 2, 3]),
 ('m.hstack([m.tensor([[1], [2]]), m.tensor([[3, 4], [5, 6]])])', 'int64', [[1, 3, 4], [2, 5, 6]]),
 ('m.vstack([m.tensor([1, 2]), m.tensor([[3, 4], [5, 6]])])', 'int64', [[1, 2], [3, 4], [5, 6]]),
 ('m.row_stack([m.tensor(1), m.tensor(2)])', 'int64', [[1], [2]]),
 ('m.dstack([m.tensor([1, 2]), m.tensor([3, 4])])', 'int64', [[[1, 3], [2, 4]]]),
 ('m.column_stack([m.tensor([1, 2]), m.tensor([[3, 4], [5, 6]])])', 'int64',
  [[1, 3, 4], [2, 5, 6]]),
 ('[t.tolist() for t in m.tensor_split(m.arange(7), 3)]', None, [[0, 1, 2], [3, 4], [5, 6]]),
 ('[t.tolist() for t in m.tensor_split(m.arange(6), [1, 4, 2, 9])]', None,
  [[0], [1, 2, 3], [], [2, 3, 4, 5], []]),
 ('[t.tolist() for t in m.tensor_split(m.arange(8).reshape(2, 4), m.tensor(3), dim=1)]', None,
  [[[0, 1], [4, 5]], [[2], [6]], [[3], [7]]]),
 ('[t.shape for t in m.hsplit(m.zeros(2, 6), [1, 4])]', None, [[2, 1], [2, 3], [2, 2]]),
 ('[t.shape for t in m.vsplit(m.zeros(4, 2), 2)]', None, [[2, 2], [2, 2]]),
 ('[t.shape for t in m.dsplit(m.zeros(1, 2, 6), 3)]', None, [[1, 2, 2], [1, 2, 2], [1, 2, 2]]),
 ('m.unflatten(m.arange(6), 0, (2, -1))', 'int64', [[0, 1, 2], [3, 4, 5]]),
 ('m.arange(12).unflatten(0, (2, 3, 2)).shape', None, [2, 3, 2]),
 ('m.swapdims(m.zeros(2, 3, 4), 0, 2).shape', None, [4, 3, 2]),
 ('m.zeros(2, 3, 4).swapaxes(1, 2).shape', None, [2, 4, 3]),
 ('m.rot90(m.tensor([[1, 2], [3, 4]]))', 'int64', [[2, 4], [1, 3]]),
 ('m.rot90(m.tensor([[1, 2], [3, 4]]), 2)', 'int64', [[4, 3], [2, 1]]),
 ('m.rot90(m.tensor([[1, 2, 3], [4, 5, 6]]), -1, [0, 1])', 'int64', [[4, 1], [5, 2], [6, 3]]),
 ('m.rot90(m.tensor([[1, 2, 3], [4, 5, 6]]), 1, [1, 0])', 'int64', [[4, 1], [5, 2], [6, 3]]),
 ('m.block_diag(m.tensor([[1, 2]]), m.tensor(3), m.tensor([4, 5]))', 'int64',
  [[1, 2, 0, 0, 0], [0, 0, 3, 0, 0], [0, 0, 0, 4, 5]]),
 ('m.block_diag(m.tensor([[1.0]]), m.tensor([[2, 3]]))', 'float32',
  [[1.0, 0.0, 0.0], [0.0, 2.0, 3.0]]),
 ('m.cartesian_prod(m.tensor([1, 2]), m.tensor([3, 4, 5]))', 'int64',
  [[1, 3], [1, 4], [1, 5], [2, 3], [2, 4], [2, 5]]),
 ('m.cartesian_prod(m.tensor([1, 2]))', 'int64', [1, 2]),
 ("m.meshgrid(m.tensor([1, 2]), m.tensor([3, 4, 5]), indexing='ij')[1]", 'int64',
  [[3, 4, 5], [3, 4, 5]]),
 ("m.meshgrid(m.tensor([1, 2]), m.tensor([3, 4, 5]), indexing='xy')[0]", 'int64',
  [[1, 2], [1, 2], [1, 2]]),
 ("m.meshgrid([m.tensor([1, 2]), m.tensor([3, 4, 5]), m.tensor([6])], indexing='xy')[2].shape",
  None, [3, 2, 1]),
 ('m.msort(m.tensor([[3, 1], [2, 4], [0, 9]]))', 'int64', [[0, 1], [2, 4], [3, 9]]),
 ('m.arange(7).unfold(0, 3, 2)', 'int64', [[0, 1, 2], [2, 3, 4], [4, 5, 6]]),
 ('m.arange(12).reshape(3, 4).unfold(1, 2, 1).shape', None, [3, 3, 2]),
 ('m.tensor(5).unfold(0, 1, 1)', 'int64', [5]),
 ('m.ones(2, 3, 4).sum_to_size(3, 1)', 'float32', [[8.0], [8.0], [8.0]]),
 ('m.ones(2, 3).sum_to_size((1, 3))', 'float32', [[2.0, 2.0, 2.0]]),
 ('m.atleast_3d(m.tensor([1, 2])).shape', None, [1, 2, 1]),
 ('m.index_add(m.zeros(3), 0, m.tensor([0, 0, 2]), m.tensor([1.0, 2.0, 3.0]))', 'float32',
  [3.0, 0.0, 3.0]),
 ('m.index_add(m.ones(2, 3), 1, m.tensor([2, 0]), m.tensor([[1.0, 2.0], [3.0, 4.0]]), alpha=-2)',
  'float32', [[-3.0, 1.0, -1.0], [-7.0, 1.0, -5.0]]),
 ('m.index_copy(m.zeros(2, 3), 1, m.tensor([2, 0]), m.tensor([[1.0, 2.0], [3.0, 4.0]]))',
  'float32', [[2.0, 0.0, 1.0], [4.0, 0.0, 3.0]]),
 ('m.index_fill(m.zeros(2, 3), 1, m.tensor([0, -1]), -1.0)', 'float32',
  [[-1.0, 0.0, -1.0], [-1.0, 0.0, -1.0]]),
 ('m.zeros(3).index_fill_(0, m.tensor([1]), m.tensor(7.0))', 'float32', [0.0, 7.0, 0.0]),
 ('m.scatter_reduce(m.tensor([1.0, 2.0, 3.0, 4.0]), 0, m.tensor([0, 0, 1, 3]), m.tensor([5.0, '
  "6.0, 7.0, 8.0]), 'sum')",
  'float32', [12.0, 9.0, 3.0, 12.0]),
 ('m.scatter_reduce(m.tensor([1.0, 2.0, 3.0, 4.0]), 0, m.tensor([0, 0, 1, 3]), m.tensor([5.0, '
  "6.0, 7.0, 8.0]), 'prod', include_self=False)",
  'float32', [30.0, 7.0, 3.0, 8.0]),
 ('m.scatter_reduce(m.tensor([1.0, 2.0, 3.0, 4.0]), 0, m.tensor([0, 0, 1, 3]), m.tensor([5.0, '
  "6.0, 7.0, 8.0]), 'mean')",
  'float32', [4.0, 4.5, 3.0, 6.0]),
 ("m.scatter_reduce(m.tensor([1, 2, 3]), 0, m.tensor([0, 0]), m.tensor([4, 5]), 'mean')", 'int64',
  [3, 2, 3]),
 ('m.scatter_reduce(m.tensor([1.0, 9.0, 3.0, 4.0]), 0, m.tensor([0, 0, 1, 3]), m.tensor([5.0, '
  "6.0, 7.0, 8.0]), 'amax', include_self=False)",
  'float32', [6.0, 7.0, 3.0, 8.0]),
 ('m.scatter_reduce(m.tensor([1.0, 9.0, 3.0, 4.0]), 0, m.tensor([0, 0, 1, 3]), m.tensor([5.0, '
  "6.0, 7.0, 8.0]), 'amin')",
  'float32', [1.0, 7.0, 3.0, 4.0]),
 ('m.put(m.zeros(2, 2), m.tensor([0, -1]), m.tensor([1.0, 2.0]))', 'float32',
  [[1.0, 0.0], [0.0, 2.0]]),
 ('m.ones(2, 2).put_(m.tensor([1, 1]), m.tensor([1.0, 2.0]), accumulate=True)', 'float32',
  [[1.0, 4.0], [1.0, 1.0]]),
 ('m.searchsorted(m.tensor([1, 3, 5]), m.tensor([3, 6]))', 'int64', [1, 3]),
 ('m.searchsorted(m.tensor([1, 3, 5]), m.tensor([3, 6]), right=True)', 'int64', [2, 3]),
 ("m.searchsorted(m.tensor([[1, 3, 5], [2, 4, 6]]), m.tensor([[3], [3]]), side='right')", 'int64',
  [[2], [1]]),
 ('m.searchsorted(m.tensor([1, 3, 5]), 3)', 'int64', 1),
 ('m.searchsorted(m.tensor([5, 1, 3]), m.tensor([3]), sorter=m.tensor([1, 2, 0]))', 'int64', [1]),
 ('m.searchsorted(m.tensor([1.0, 2.0]), m.tensor([1.5]), out_int32=True)', 'int32', [1]),
 ('m.bucketize(m.tensor([1, 5, 3]), m.tensor([1, 3, 5]))', 'int64', [0, 2, 1]),
 ('m.bucketize(m.tensor([1, 5, 3]), m.tensor([1, 3, 5]), right=True)', 'int64', [1, 3, 2]),
 ('m.unique(m.tensor([3, 1, 3, 2]))', 'int64', [1, 2, 3]),
 ('m.unique(m.tensor([3, 1, 3, 2]), return_inverse=True)[1]', 'int64', [2, 0, 2, 1]),
 ('m.unique(m.tensor([[3, 1], [1, 1]]), return_counts=True)[1]', 'int64', [3, 1]),
 ('m.unique(m.tensor([[1, 2], [1, 2], [0, 5]]), dim=0)', 'int64', [[0, 5], [1, 2]]),
 ('m.unique(m.tensor([[1, 2], [1, 2], [0, 5]]), dim=0, return_inverse=True, '
  'return_counts=True)[1]',
  'int64', [1, 1, 0]),
 ('m.tensor([2.0, 1.0, 2.0]).unique(sorted=False)', 'float32', [1.0, 2.0]),
 ('m.logspace(0, 2, 3)', 'float32', [1.0, 10.0, 100.0]),
 ('m.logspace(0, 3, 4, base=2)', 'float32', [1.0, 2.0, 4.0, 8.0]),
 ('m.logspace(0, 1, steps=2, dtype=m.int64)', 'int64', [1, 10]),
 ('m.logspace(1, 1, 0)', 'float32', []),
 ('m.tril_indices(3, 3)', 'int64', [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]),
 ('m.tril_indices(3, 2, -1)', 'int64', [[1, 2, 2], [0, 0, 1]]),
 ('m.triu_indices(3, 4, 1)', 'int64', [[0, 0, 0, 1, 1, 2], [1, 2, 3, 2, 3, 3]]),
 ('m.triu_indices(2, 3, offset=5)', 'int64', [[], []]),
 ('m.tril_indices(0, 3)', 'int64', [[], []]),
 ('m.detach(m.ones(2, requires_grad=True)).requires_grad', None, False)]

ERRORS = [('m.logaddexp(m.tensor([1, 2]), m.tensor([1, 2]))', 'NotImplementedError',
  '"logaddexp_cpu" not implemented for \'Long\''),
 ('m.logaddexp(m.tensor([1.0]), 2.0)', 'TypeError',
  "logaddexp(): argument 'other' (position 2) must be Tensor, not float"),
 ('m.isclose(m.tensor([1.0]), m.tensor([1]))', 'RuntimeError', 'Float did not match Long'),
 ('m.polygamma(-1, m.tensor([1.0]))', 'RuntimeError',
  'polygamma(n, x) does not support negative n.'),
 ('m.tensor([1.0]).float_power_(2)', 'RuntimeError',
  "the base given to float_power_ has dtype Float but the operation's result requires dtype "
  'Double'),
 ('m.var_mean(m.tensor([1, 2]))', 'RuntimeError',
  'var_mean only support floating point and complex dtypes'),
 ('m.std_mean(m.tensor([1, 2]))', 'RuntimeError',
  'std_mean only support floating point and complex dtypes'),
 ('m.logcumsumexp(m.tensor([1, 2]), 0)', 'NotImplementedError',
  '"logcumsumexp_out_cpu" not implemented for \'Long\''),
 ('m.nanmean(m.tensor([1, 2]))', 'RuntimeError',
  'nanmean(): expected input to have floating point or complex dtype but got Long'),
 ('m.aminmax(m.tensor([]))', 'RuntimeError',
  'aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.'),
 ('m.mode(m.zeros(2, 0), 1)', 'IndexError',
  'mode(): Expected reduction dim 1 to have non-zero size.'),
 ('m.bincount(m.tensor([-1]))', 'RuntimeError',
  'bincount only supports 1-d non-negative integral inputs.'),
 ('m.bincount(m.tensor([1.0]))', 'NotImplementedError',
  '"bincount_cpu" not implemented for \'Float\''),
 ('m.bincount(m.tensor([[1]]))', 'RuntimeError',
  'bincount only supports 1-d non-negative integral inputs.'),
 ('m.histc(m.tensor([1, 2]))', 'NotImplementedError',
  '"histogram_cpu" not implemented for \'Long\''),
 ('m.histc(m.tensor([1.0]), bins=0)', 'RuntimeError',
  'torch.histogram(): bins must be > 0, but got 0 for dimension 0'),
 ('m.histc(m.tensor([1.0]), min=3, max=1)', 'RuntimeError',
  'torch.histc: max must be larger than min'),
 ('m.quantile(m.tensor([1.0, 2.0]), 1.5)', 'RuntimeError',
  'quantile() q must be in the range [0, 1] but got 1.5'),
 ('m.quantile(m.tensor([1, 2]), 0.5)', 'RuntimeError',
  'quantile() input tensor must be either float or double dtype'),
 ('m.quantile(m.tensor([]), 0.5)', 'RuntimeError', 'quantile() input tensor must be non-empty'),
 ("m.quantile(m.tensor([1.0]), 0.5, interpolation='foo')", 'RuntimeError',
  'quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got '
  'foo'),
 ('m.quantile(m.tensor([1.0]), m.tensor([0.5], dtype=m.float64))', 'RuntimeError',
  'quantile() q tensor must be same dtype as the input tensor'),
 ('m.quantile(m.tensor([1.0]), m.tensor([[0.5]]))', 'RuntimeError',
  'quantile() q must be a scalar or 1D tensor'),
 ('m.vstack([])', 'RuntimeError', 'vstack expects a non-empty TensorList'),
 ('m.hstack(m.tensor([1]))', 'TypeError',
  "hstack(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor"),
 ('m.hsplit(m.zeros(2, 4), 3)', 'RuntimeError',
  'torch.hsplit attempted to split along dimension 1, but the size of the dimension 4 is not '
  'divisible by the split_size 3!'),
 ('m.vsplit(m.zeros(4), 2)', 'RuntimeError',
  'torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with 1 dimensions!'),
 ('m.dsplit(m.zeros(2, 2), 2)', 'RuntimeError',
  'torch.dsplit requires a tensor with at least 3 dimension, but got a tensor with 2 dimensions!'),
 ('m.tensor_split(m.zeros(4), 0)', 'RuntimeError',
  'number of sections must be larger than 0, got 0'),
 ('m.tensor_split(m.zeros(4), 2.5)', 'TypeError',
  'tensor_split() received an invalid combination of arguments - got (Tensor, float), but '
  'expected one of:\n'
  ' * (Tensor input, tuple of ints indices, int dim = 0)\n'
  ' * (Tensor input, Tensor tensor_indices_or_sections, int dim = 0)\n'
  ' * (Tensor input, int sections, int dim = 0)\n'),
 ('m.unflatten(m.zeros(2, 4), 1, (3, 2))', 'RuntimeError',
  "unflatten: Provided sizes [3, 2] don't multiply up to the size of dim 1 (4) in the input "
  'tensor'),
 ('m.rot90(m.zeros(3))', 'RuntimeError', 'expected total dims >= 2, but got total dims = 1'),
 ('m.rot90(m.zeros(2, 2), 1, [0, 0])', 'RuntimeError',
  'expected rotation dims to be different, but got dim0 = 0 and dim1 = 0'),
 ('m.rot90(m.zeros(2, 2), 1, [0, 1, 2])', 'RuntimeError',
  'expected total rotation dims == 2, but got dims = 3'),
 ('m.block_diag(m.zeros(1, 1, 1))', 'RuntimeError',
  'torch.block_diag: Input tensors must have 2 or fewer dimensions. Input 0 has 3 dimensions'),
 ("m.meshgrid(m.zeros(2), indexing='foo')", 'RuntimeError',
  'torch.meshgrid: indexing must be one of "xy" or "ij", but received: foo'),
 ('m.cartesian_prod(m.zeros(2, 2))', 'RuntimeError', 'Expect a 1D vector, but got shape [2, 2]'),
 ('m.zeros(3, 4).unfold(1, 5, 1)', 'RuntimeError',
  'maximum size for tensor at dimension 1 is 4 but size is 5'),
 ('m.zeros(3, 4).unfold(1, 2, 0)', 'RuntimeError', 'step is 0 but must be > 0'),
 ('m.zeros(3, 4).sum_to_size(2, 4)', 'RuntimeError',
  'size {[2, 4]} is not expandable to size {[3, 4]}.'),
 ('m.index_add(m.zeros(3), 0, m.tensor([0.0]), m.ones(1))', 'RuntimeError',
  'index_add_(): Expected dtype int32/int64 for index but got: Float'),
 ('m.index_add(m.zeros(3, 2), 0, m.tensor([0, 1]), m.ones(1, 2))', 'RuntimeError',
  'index_add_(): Number of indices (2) should be equal to source.size(dim): (1), for dim: 0'),
 ('m.index_add(m.zeros(3), 0, m.tensor([5]), m.ones(1))', 'IndexError',
  'index out of range in self'),
 ('m.index_copy(m.zeros(3), 0, m.tensor([0]), m.ones(1, dtype=m.float64))', 'RuntimeError',
  'index_copy_(): self and source expected to have the same dtype, but got (self) Float and '
  '(source) Double'),
 ('m.index_fill(m.zeros(3), 0, m.tensor([[0]]), 1.0)', 'RuntimeError',
  'Index has to be a vector/scalar'),
 ("m.scatter_reduce(m.zeros(3), 0, m.tensor([0]), m.ones(1), 'foo')", 'RuntimeError',
  'reduce argument must be either sum, prod, mean, amax or amin, got foo'),
 ('m.put(m.zeros(3), m.tensor([1, 20]), m.ones(2))', 'IndexError',
  'out of range: tried to access index 20 on a tensor of 3 elements.'),
 ('m.put(m.zeros(3), m.tensor([1, 2]), m.ones(3))', 'IndexError',
  'put_(): Expected source and index to have the same number of elements, but got source.numel() '
  '= 3, index.numel() = 2'),
 ('m.searchsorted(m.tensor([[1, 3, 5]]), m.tensor([3, 6]))', 'RuntimeError',
  'torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of '
  'boundaries tensor and input value tensor must match, but we got boundaries tensor [1, 3] and '
  'input value tensor [2]'),
 ('m.bucketize(m.tensor([1]), m.tensor([[1, 3]]))', 'RuntimeError',
  'boundaries tensor must be 1 dimension, but got dim(2)'),
 ("m.searchsorted(m.tensor([1, 3]), m.tensor([3]), right=True, side='left')", 'RuntimeError',
  "torch.searchsorted(): side and right can't be set to opposites, got side of left while right "
  'was True'),
 ('m.unique(m.tensor([3.0, 1.0], requires_grad=True)).sum().backward()', 'NotImplementedError',
  "the derivative for '_unique2' is not implemented."),
 ('m.unique(m.tensor([[3.0, 1.0]], requires_grad=True), dim=1).sum().backward()',
  'NotImplementedError', "the derivative for 'unique_dim' is not implemented.")]

GRAPHS = [('m.erfc(x)', ['ErfcBackward0', '  AccumulateGrad'], ['self']),
 ('m.erfinv(x * 0.5)', ['ErfinvBackward0', '  MulBackward0', '    AccumulateGrad'], ['self']),
 ('m.lgamma(p)', ['LgammaBackward0', '  AccumulateGrad'], ['self']),
 ('m.digamma(p)', ['DigammaBackward0', '  AccumulateGrad'], ['self']),
 ('m.polygamma(2, p)', ['PolygammaBackward0', '  AccumulateGrad'], ['n', 'self']),
 ('m.sinc(x)', ['SincBackward0', '  AccumulateGrad'], ['self']),
 ('m.sgn(x)', ['SgnBackward0', '  AccumulateGrad'], ['result', 'self']),
 ('m.copysign(x, y)', ['CopysignBackward0', '  AccumulateGrad', '  AccumulateGrad'],
  ['result', 'self']),
 ('m.copysign(x, -1.0)', ['CopysignBackward1', '  AccumulateGrad'], ['result', 'self']),
 ('m.logaddexp(x, y)', ['LogaddexpBackward0', '  AccumulateGrad', '  AccumulateGrad'],
  ['other', 'self']),
 ('m.logaddexp2(x, v)', ['Logaddexp2Backward0', '  AccumulateGrad', '  AccumulateGrad'],
  ['other', 'self']),
 ('m.float_power(x, 2)', ['PowBackward0', '  AccumulateGrad'], ['exponent', 'self']),
 ('m.float_power(x.float(), 2)',
  ['PowBackward0', '  ToCopyBackward0', '    ToCopyBackward0', '      AccumulateGrad'],
  ['exponent', 'self']),
 ('m.float_power(x, y)', ['PowBackward1', '  AccumulateGrad', '  AccumulateGrad'],
  ['exponent', 'result', 'self']),
 ('m.float_power(2, x)', ['PowBackward2', '  AccumulateGrad'], ['exponent', 'result', 'self']),
 ('x.true_divide(y)', ['DivBackward0', '  AccumulateGrad', '  AccumulateGrad'], ['other', 'self']),
 ('(x * 1).erfc_()', ['ErfcBackward0', '  MulBackward0', '    AccumulateGrad'], ['self']),
 ('(p * 1).digamma_()', ['DigammaBackward0', '  MulBackward0', '    AccumulateGrad'], ['self']),
 ('(x * 1).sgn_()', ['SgnBackward0', '  MulBackward0', '    AccumulateGrad'], ['result', 'self']),
 ('(x * 1).copysign_(y)',
  ['CopysignBackward0', '  MulBackward0', '    AccumulateGrad', '  AccumulateGrad'],
  ['result', 'self']),
 ('(p * 1).polygamma_(1)', ['PolygammaBackward1', '  MulBackward0', '    AccumulateGrad'],
  ['n', 'self']),
 ('m.var_mean(x)[0]', ['VarMeanBackward0', '  AccumulateGrad'],
  ['correction', 'dim', 'keepdim', 'self']),
 ('m.var_mean(x, 1)[1]', ['VarMeanBackward0', '  AccumulateGrad'],
  ['correction', 'dim', 'keepdim', 'self']),
 ('m.std_mean(x, 0, keepdim=True)[0]', ['StdMeanBackward0', '  AccumulateGrad'],
  ['correction', 'dim', 'keepdim', 'result0', 'self']),
 ('m.logcumsumexp(x, 1)', ['LogcumsumexpBackward0', '  AccumulateGrad'],
  ['dim', 'result', 'self']),
 ('m.nansum(x)', ['NansumBackward0', '  AccumulateGrad'], ['dim', 'keepdim', 'self']),
 ('m.nanmean(x, 1)', ['DivBackward0', '  NansumBackward0', '    AccumulateGrad'],
  ['other', 'self']),
 ('m.aminmax(x).min', ['AminmaxBackward0', '  AccumulateGrad'],
  ['dim', 'keepdim', 'max', 'min', 'self']),
 ('m.aminmax(x, dim=1).max', ['AminmaxBackward0', '  AccumulateGrad'],
  ['dim', 'keepdim', 'max', 'min', 'self']),
 ('m.mode(x, 1).values', ['ModeBackward0', '  AccumulateGrad'],
  ['dim', 'indices', 'keepdim', 'self_sym_sizes']),
 ('m.quantile(x, 0.3, dim=1)',
  ['SqueezeBackward4', '  LerpBackward1', '    GatherBackward0', '      ViewBackward0',
   '        SortBackward0', '          AccumulateGrad', '    GatherBackward0'],
  ['dim', 'self_sym_sizes']),
 ('m.quantile(x, 0.3, dim=0, keepdim=True)',
  ['SqueezeBackward4', '  LerpBackward1', '    GatherBackward0', '      ViewBackward0',
   '        SortBackward0', '          TransposeBackward0', '            UnsqueezeBackward0',
   '              AccumulateGrad', '    GatherBackward0'],
  ['dim', 'self_sym_sizes']),
 ('m.quantile(x, 0.3)',
  ['SqueezeBackward4', '  LerpBackward1', '    GatherBackward0', '      ViewBackward0',
   '        SortBackward0', '          ViewBackward0', '            AccumulateGrad',
   '    GatherBackward0'],
  ['dim', 'self_sym_sizes']),
 ('m.quantile(x, m.tensor([0.2, 0.7], dtype=m.float64), dim=1)',
  ['SqueezeBackward4', '  TransposeBackward1', '    UnsqueezeBackward1', '      LerpBackward1',
   '        GatherBackward0', '          ViewBackward0', '            SortBackward0',
   '              AccumulateGrad', '        GatherBackward0'],
  ['dim', 'self_sym_sizes']),
 ("m.quantile(x, 0.3, dim=1, interpolation='lower')",
  ['SqueezeBackward4', '  GatherBackward0', '    ViewBackward0', '      SortBackward0',
   '        AccumulateGrad'],
  ['dim', 'self_sym_sizes']),
 ('m.nanquantile(x, 0.6, dim=1)',
  ['SqueezeBackward4', '  LerpBackward1', '    GatherBackward0', '      ViewBackward0',
   '        SortBackward0', '          AccumulateGrad', '    GatherBackward0'],
  ['dim', 'self_sym_sizes']),
 ('m.hstack([x, y])', ['CatBackward0', '  AccumulateGrad', '  AccumulateGrad'], ['dim']),
 ('m.hstack([v, v])', ['CatBackward0', '  AccumulateGrad'], ['dim']),
 ('m.vstack([v, v])',
  ['CatBackward0', '  UnsqueezeBackward0', '    AccumulateGrad', '  UnsqueezeBackward0'],
  ['dim']),
 ('m.vstack([s, s])', ['CatBackward0', '  ViewBackward0', '    AccumulateGrad', '  ViewBackward0'],
  ['dim']),
 ('m.dstack([x, y])',
  ['CatBackward0', '  UnsqueezeBackward0', '    AccumulateGrad', '  UnsqueezeBackward0',
   '    AccumulateGrad'],
  ['dim']),
 ('m.dstack([v, v])',
  ['CatBackward0', '  UnsqueezeBackward0', '    UnsqueezeBackward0', '      AccumulateGrad',
   '  UnsqueezeBackward0', '    UnsqueezeBackward0'],
  ['dim']),
 ('m.column_stack([v, v])',
  ['CatBackward0', '  ViewBackward0', '    AccumulateGrad', '  ViewBackward0'], ['dim']),
 ('m.column_stack([x, x[:, 0]])',
  ['CatBackward0', '  AccumulateGrad', '  ReshapeAliasBackward0', '    SelectBackward0'],
  ['dim']),
 ('m.row_stack([x, v])',
  ['CatBackward0', '  AccumulateGrad', '  UnsqueezeBackward0', '    AccumulateGrad'], ['dim']),
 ('m.tensor_split(x, 2, dim=1)[1]', ['SliceBackward0', '  AccumulateGrad'],
  ['dim', 'end', 'self_sym_sizes', 'start', 'step']),
 ('m.hsplit(x, [1])[1]', ['SliceBackward0', '  AccumulateGrad'],
  ['dim', 'end', 'self_sym_sizes', 'start', 'step']),
 ('m.vsplit(x, 2)[0]', ['SliceBackward0', '  AccumulateGrad'],
  ['dim', 'end', 'self_sym_sizes', 'start', 'step']),
 ('m.dsplit(x.unsqueeze(-1).expand(2, 3, 4), 2)[1]',
  ['SliceBackward0', '  ExpandBackward0', '    UnsqueezeBackward0', '      AccumulateGrad'],
  ['dim', 'end', 'self_sym_sizes', 'start', 'step']),
 ('m.unflatten(x, 1, (3, 1))', ['ViewBackward0', '  AccumulateGrad'], ['self_sym_sizes']),
 ('m.swapdims(x, 0, 1)', ['TransposeBackward0', '  AccumulateGrad'], ['dim0', 'dim1']),
 ('m.rot90(x)', ['Rot90Backward0', '  AccumulateGrad'], ['dims', 'k']),
 ('m.rot90(x, 3, [1, 0])', ['Rot90Backward0', '  AccumulateGrad'], ['dims', 'k']),
 ('m.block_diag(x, v, s)',
  ['BlockDiagBackward0', '  AccumulateGrad', '  AccumulateGrad', '  AccumulateGrad'], []),
 ('m.cartesian_prod(v, v)',
  ['StackBackward0', '  UnsafeViewBackward0', '    CloneBackward0', '      ExpandBackward0',
   '        ViewBackward0', '          AccumulateGrad', '  UnsafeViewBackward0',
   '    CloneBackward0', '      ExpandBackward0', '        ViewBackward0'],
  ['dim']),
 ("m.meshgrid(v, v[:2], indexing='ij')[0]",
  ['ExpandBackward0', '  ViewBackward0', '    AccumulateGrad'], ['self_sym_sizes']),
 ("m.meshgrid(v, v[:2], indexing='xy')[1]",
  ['ExpandBackward0', '  ViewBackward0', '    SliceBackward0', '      AccumulateGrad'],
  ['self_sym_sizes']),
 ('m.msort(x)', ['SortBackward0', '  AccumulateGrad'], ['dim', 'indices', 'self_sym_sizes']),
 ('x.unfold(1, 2, 1)', ['UnfoldBackward0', '  AccumulateGrad'],
  ['dimension', 'self_sym_sizes', 'size', 'step']),
 ('x.sum_to_size(1, 3)', ['SumBackward1', '  AccumulateGrad'],
  ['dim', 'keepdim', 'self_sym_sizes']),
 ('x.unsqueeze(0).sum_to_size(3)',
  ['ViewBackward0', '  SumBackward1', '    UnsqueezeBackward0', '      AccumulateGrad'],
  ['self_sym_sizes']),
 ('m.index_add(x, 0, m.tensor([1]), y[:1] * 2)',
  ['IndexAddBackward0', '  AccumulateGrad', '  MulBackward0', '    SliceBackward0',
   '      AccumulateGrad'],
  ['alpha', 'dim', 'index', 'source', 'source_dim']),
 ('m.index_add(x, 1, m.tensor([0, 0]), y[:, :2], alpha=2)',
  ['IndexAddBackward0', '  AccumulateGrad', '  SliceBackward0', '    AccumulateGrad'],
  ['alpha', 'dim', 'index', 'source', 'source_dim']),
 ('m.index_copy(x, 0, m.tensor([1]), y[:1])',
  ['IndexCopyBackward0', '  AccumulateGrad', '  SliceBackward0', '    AccumulateGrad'],
  ['dim', 'index', 'source', 'source_dim']),
 ('m.index_fill(x, 1, m.tensor([0, 2]), 1.5)', ['IndexFillBackward0', '  AccumulateGrad'],
  ['dim', 'index']),
 ('m.index_fill(x, 1, m.tensor([0]), s)',
  ['IndexFillBackward1', '  AccumulateGrad', '  AccumulateGrad'], ['dim', 'index']),
 ('(x * 1).index_add_(0, m.tensor([1]), y[:1])',
  ['IndexAddBackward0', '  MulBackward0', '    AccumulateGrad', '  SliceBackward0',
   '    AccumulateGrad'],
  ['alpha', 'dim', 'index', 'source', 'source_dim']),
 ('(x * 1).index_fill_(1, m.tensor([0]), 0.0)',
  ['IndexFillBackward0', '  MulBackward0', '    AccumulateGrad'], ['dim', 'index']),
 ("m.scatter_reduce(x, 1, m.tensor([[0, 0], [2, 2]]), y[:, :2], 'sum')",
  ['ScatterReduceBackward0', '  AccumulateGrad', '  SliceBackward0', '    AccumulateGrad'],
  ['dim', 'include_self', 'index', 'reduce', 'result', 'self', 'src']),
 ("m.scatter_reduce(x, 1, m.tensor([[0, 0], [2, 2]]), y[:, :2], 'amax', include_self=False)",
  ['ScatterReduceBackward0', '  AccumulateGrad', '  SliceBackward0', '    AccumulateGrad'],
  ['dim', 'include_self', 'index', 'reduce', 'result', 'self', 'src']),
 ("(x * 1).scatter_reduce_(1, m.tensor([[0, 0], [2, 2]]), y[:, :2], 'mean')",
  ['ScatterReduceBackward0', '  MulBackward0', '    AccumulateGrad', '  SliceBackward0',
   '    AccumulateGrad'],
  ['dim', 'include_self', 'index', 'reduce', 'result', 'self', 'src']),
 ('m.put(x, m.tensor([0, 5]), v[:2])',
  ['PutBackward0', '  AccumulateGrad', '  SliceBackward0', '    AccumulateGrad'],
  ['accumulate', 'index', 'source']),
 ('(x * 1).put_(m.tensor([0, 5]), v[:2], accumulate=True)',
  ['PutBackward0', '  MulBackward0', '    AccumulateGrad', '  SliceBackward0',
   '    AccumulateGrad'],
  ['accumulate', 'index', 'source']),
 ('m.unique(x)', ['Unique2Backward0', '  AccumulateGrad'], []),
 ('m.unique(x, dim=1)', ['UniqueDimBackward0', '  AccumulateGrad'], [])]

GRADS = [('m.sinc(m.tensor([0.0, 0.5, -1.5], dtype=m.float64, requires_grad=True))', None,
  [0.0, -1.2732395447351625, -0.14147106052612907]),
 ('m.copysign(z, m.tensor([-1.0, 1.0, -1.0, 1.0], dtype=m.float64))', 'z', [0.0, 0.0, -1.0, -1.0]),
 ('m.sgn(z)', 'z', [0.0, 0.0, 0.0, 0.0]),
 ('m.erfinv(m.tensor([0.0, 0.5, -0.9], dtype=m.float64, requires_grad=True))', None,
  [0.8862269254527579, 1.1125848189719496, 3.4280428114518418]),
 ('m.lgamma(p)', 'p',
  [[-1.9635100260214229, 0.036489973978576194, 0.422784335098467],
   [-0.9650085667061384, -0.28903989659218843, 0.922784335098467]]),
 ('m.digamma(p)', 'p',
  [[4.934802202073678, 0.9348022009716718, 0.6449340670881899],
   [2.2994741385247255, 1.2673772060383834, 0.39493406693194577]]),
 ('m.nansum(m.tensor([[1.0, math.nan], [2.0, 3.0]], dtype=m.float64, requires_grad=True))', None,
  [[1.0, 0.0], [1.0, 1.0]]),
 ('m.nanmean(m.tensor([[1.0, math.nan], [2.0, 3.0]], dtype=m.float64, requires_grad=True), 1)',
  None, [[1.0, 0.0], [0.5, 0.5]]),
 ('m.aminmax(m.tensor([[1.0, 5.0, 5.0], [0.0, 0.0, 3.0]], dtype=m.float64, requires_grad=True), '
  'dim=1).max',
  None, [[0.0, 0.5, 0.5], [0.0, 0.0, 1.0]]),
 ('m.aminmax(m.tensor([[1.0, 5.0, 5.0], [0.0, 0.0, 3.0]], dtype=m.float64, '
  'requires_grad=True)).min',
  None, [[0.0, 0.0, 0.0], [0.5, 0.5, 0.0]]),
 ('m.mode(m.tensor([[1.0, 5.0, 5.0], [0.0, 0.0, 3.0]], dtype=m.float64, requires_grad=True), '
  '1).values',
  None, [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]),
 ('m.logcumsumexp(m.tensor([0.0, 1000.0, -1000.0], dtype=m.float64, requires_grad=True), 0)', None,
  [1.0, 1.99999999999989, 0.0]),
 ('m.std_mean(x, 1)[0] + m.std_mean(x, 1)[1]', 'x',
  [[0.6662084763011746, -0.24163282270202885, 0.5754243464008543],
   [0.7969196583060987, -0.19647960949268423, 0.3995599511865855]]),
 ('m.var_mean(x)[0] * m.var_mean(x)[1]', 'x',
  [[0.058166666666666665, -0.015166666666666669, 0.050833333333333335],
   [0.10216666666666667, 0.028833333333333336, 0.07283333333333333]]),
 ('m.quantile(x, 0.3, dim=1)', 'x', [[0.0, 0.4, 0.6], [0.0, 0.4, 0.6]]),
 ('m.quantile(x, m.tensor([0.25, 1.0], dtype=m.float64))', 'x',
  [[0.0, 0.0, 0.25], [1.0, 0.75, 0.0]]),
 ('m.nanquantile(m.tensor([1.0, math.nan, 3.0, 2.0], dtype=m.float64, requires_grad=True), 0.5)',
  None, [0.0, 0.0, 0.0, 1.0]),
 ('m.scatter_reduce(m.tensor([1.0, 5.0, 3.0], dtype=m.float64, requires_grad=True), 0, '
  "m.tensor([1, 1, 2]), m.tensor([5.0, 5.0, 1.0], dtype=m.float64), 'amax', include_self=False)",
  None, [1.0, 0.0, 0.0]),
 ('m.scatter_reduce(m.tensor([1.0, 5.0, 3.0], dtype=m.float64), 0, m.tensor([1, 1, 2]), '
  "m.tensor([5.0, 5.0, 1.0], dtype=m.float64, requires_grad=True), 'amax', include_self=False)",
  None, [0.3333333333333333, 0.3333333333333333, 1.0]),
 ('m.scatter_reduce(m.tensor([1.0, 5.0, 3.0], dtype=m.float64), 0, m.tensor([1, 1, 2]), '
  "m.tensor([5.0, 2.0, 1.0], dtype=m.float64, requires_grad=True), 'mean')",
  None, [0.3333333333333333, 0.3333333333333333, 0.5]),
 ('m.index_add(m.zeros(3, dtype=m.float64), 0, m.tensor([2, 2]), v[:2], alpha=3)', 'v',
  [3.0, 3.0, 0.0]),
 ('m.index_copy(x, 1, m.tensor([2, 2]), y[:, :2])', 'y', [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]]),
 ('m.index_copy(x, 1, m.tensor([2, 0]), y[:, :2])', 'x', [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]),
 ('m.put(x, m.tensor([1, 1]), v[:2])', 'x', [[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]]),
 ('m.put(x, m.tensor([1, 1]), v[:2], accumulate=True)', 'v', [1.0, 1.0, 0.0]),
 ('m.rot90(x, 1) * m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=m.float64)', 'x',
  [[5.0, 3.0, 1.0], [6.0, 4.0, 2.0]]),
 ('x.unfold(1, 2, 1)', 'x', [[1.0, 2.0, 1.0], [1.0, 2.0, 1.0]]),
 ('m.block_diag(x, v, s)', 's', 1.0), ('m.cartesian_prod(v, v[:2])', 'v', [5.0, 5.0, 2.0]),
 ('x.sum_to_size(3) * v', 'x', [[0.25, -0.5, 0.75], [0.25, -0.5, 0.75]]),
 ('m.scatter_reduce(m.tensor([[1.0, 0.0, 3.0, 2.0]], dtype=m.float64, requires_grad=True), 1, '
  "m.tensor([[0, 0, 1, 3]]), m.tensor([[5.0, 0.0, 0.0, 4.0]], dtype=m.float64) * w, 'prod')",
  None, [[0.0, 0.0, 1.0, 16.0]]),
 ('m.scatter_reduce(m.tensor([[1.0, 0.0, 3.0, 2.0]], dtype=m.float64), 1, m.tensor([[0, 0, 1, '
  "3]]), m.tensor([[5.0, 0.0, 0.0, 4.0]], dtype=m.float64, requires_grad=True), 'prod')",
  None, [[0.0, 5.0, 0.0, 2.0]]),
 ('m.scatter_reduce(m.tensor([[0.0, 2.0, 3.0, 2.0]], dtype=m.float64), 1, m.tensor([[0, 0, 1, '
  "1]]), m.tensor([[5.0, 2.0, 0.0, 3.0]], dtype=m.float64, requires_grad=True), 'prod', "
  'include_self=False)',
  None, [[2.0, 5.0, 3.0, 0.0]])]


U = 2**64  # a negative saved integer -k reads back as U - k (NOTE [saved as given])
# (source, attribute of its grad_fn, what it reads back as), read off torch 2.13.0
SAVED_VALUES = [
    ("m.logcumsumexp(x, -1)", "_saved_dim", U - 1),
    ("m.quantile(x, 0.3, dim=1)", "_saved_dim", U - 1),  # torch squeezes dim -1
    ("m.tensor_split(x, 2, dim=-1)[1]", "_saved_dim", 1),  # its slices save it normalized
    ("m.rot90(x, 1, [-1, 0])", "_saved_dims", (U - 1, 0)),
    ("x.unfold(-1, 2, 1)", "_saved_dimension", U - 1),
    ("m.aminmax(x, dim=-1).min", "_saved_dim", U - 1),
    ("m.index_add(x, -1, m.tensor([0]), y[:, :1])", "_saved_dim", U - 1),
    ("m.mode(x).values", "_saved_dim", U - 1),
    ("m.var_mean(x, -1)[0]", "_saved_dim", (U - 1,)),
]


@pytest.mark.parametrize(("src", "attr", "expected"), SAVED_VALUES,
                         ids=[c[0] for c in SAVED_VALUES])
def test_saved_arguments_read_back_as_torch_shows_them(src: str, attr: str, expected: Any
                                                       ) -> None:
    assert getattr(run(src).grad_fn, attr) == expected


@pytest.mark.parametrize(("src", "dtype", "values"), VALUES, ids=[c[0] for c in VALUES])
def test_values_and_dtype(src: str, dtype: str | None, values: Any) -> None:
    got_dtype, got = plain(run(src))
    assert got_dtype == dtype
    assert same_values(got, values, dtype), (got, values)


@pytest.mark.parametrize(("src", "error", "message"), ERRORS, ids=[c[0] for c in ERRORS])
def test_error_texts(src: str, error: str, message: str) -> None:
    with pytest.raises(Exception) as info:
        run(src)
    assert type(info.value).__name__ == error
    assert str(info.value) == message


@pytest.mark.parametrize(("src", "nodes", "names"), GRAPHS, ids=[c[0] for c in GRAPHS])
def test_graph_nodes_and_saved_names(src: str, nodes: list[str], names: list[str]) -> None:
    out = run(src)
    assert chain(out) == nodes
    assert saved(out.grad_fn) == names


@pytest.mark.parametrize(("src", "leaf", "grad"), GRADS, ids=[c[0] for c in GRADS])
def test_gradients_at_torchs_conventions(src: str, leaf: str | None, grad: Any) -> None:
    np.testing.assert_allclose(leaf_grad(src, leaf), np.asarray(grad, dtype=float),
                               rtol=1e-8, atol=1e-12)


# -- behaviour the tables above do not show --------------------------------------------------------
def test_meshgrid_warns_without_indexing_as_torch_does() -> None:
    a, b = gradviz.tensor([1, 2]), gradviz.tensor([3, 4, 5])
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        xs, _ = gradviz.meshgrid(a, b)
    assert xs.tolist() == [[1, 1, 1], [2, 2, 2]]  # "ij", the default
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradviz.meshgrid(a, b, indexing="xy")  # no warning with indexing given


def test_named_tuples_print_as_torchs() -> None:
    r = gradviz.aminmax(gradviz.tensor([3.0, 1.0, 2.0]))
    assert (r.min.item(), r.max.item()) == (1.0, 3.0)
    assert repr(r) == "gradviz.return_types.aminmax(\nmin=tensor(1.),\nmax=tensor(3.))"
    mode = gradviz.mode(gradviz.tensor([2.0, 2.0, 1.0]))
    assert repr(mode) == ("gradviz.return_types.mode(\nvalues=tensor(2.),\n"
                          "indices=tensor(1))")
    assert isinstance(gradviz.var_mean(gradviz.tensor([1.0, 2.0])), tuple)


def test_in_place_forms_bump_the_version_and_record_the_node() -> None:
    x = gradviz.tensor([[0.5, 1.5], [2.0, 0.8]], dtype=gradviz.float64, requires_grad=True)
    for call, node in (("erfc_()", "ErfcBackward0"), ("sinc_()", "SincBackward0"),
                       ("lgamma_()", "LgammaBackward0"), ("copysign_(-1.0)", "CopysignBackward1"),
                       ("index_add_(0, gradviz.tensor([1]), gradviz.ones(1, 2, dtype="
                        "gradviz.float64))", "IndexAddBackward0"),
                       ("index_copy_(1, gradviz.tensor([0]), gradviz.ones(2, 1, dtype="
                        "gradviz.float64))", "IndexCopyBackward0"),
                       ("put_(gradviz.tensor([3]), gradviz.ones(1, dtype=gradviz.float64))",
                        "PutBackward0"),
                       ("scatter_reduce_(1, gradviz.tensor([[0], [0]]), gradviz.ones(2, 1, "
                        "dtype=gradviz.float64), 'amin')", "ScatterReduceBackward0")):
        y = x * 1
        before = y._version
        out = eval(f"y.{call}", {"y": y, "gradviz": gradviz})  # noqa: S307 - the calls above
        assert out is y and y._version == before + 1
        assert y.grad_fn.name() == node


def test_float_power_of_float64_in_place_and_dtypes() -> None:
    x = gradviz.tensor([2.0, 3.0], dtype=gradviz.float64)
    assert x.float_power_(2) is x and x.tolist() == [4.0, 9.0]
    assert gradviz.float_power(gradviz.tensor([2], dtype=gradviz.int32), 0.5).dtype == \
        gradviz.float64


def test_casts_to_the_small_dtypes() -> None:
    x = gradviz.tensor([1.5, -2.0], requires_grad=True)
    for name, dtype in (("half", gradviz.float16), ("byte", gradviz.uint8),
                        ("char", gradviz.int8), ("short", gradviz.int16)):
        assert getattr(x, name)().dtype == dtype
    assert x.half().grad_fn.name() == "ToCopyBackward0"  # float to float: differentiable


def test_unique_records_a_node_whose_backward_fails_but_not_for_integers() -> None:
    assert gradviz.unique(gradviz.tensor([3, 1, 3])).grad_fn is None
    out = gradviz.unique(gradviz.tensor([3.0, 1.0], requires_grad=True), return_inverse=True)
    assert out[0].grad_fn.name() == "Unique2Backward0" and out[1].grad_fn is None


def test_unfold_is_the_windows_and_sums_overlaps_in_backward() -> None:
    x = gradviz.arange(6.0, requires_grad=True)
    w = x.unfold(0, 3, 1)
    assert w.tolist() == [[0.0, 1.0, 2.0], [1.0, 2.0, 3.0], [2.0, 3.0, 4.0], [3.0, 4.0, 5.0]]
    w.sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 3.0, 3.0, 2.0, 1.0]  # how many windows hold each


def test_a_long_tensor_split_has_one_slice_node_per_piece() -> None:
    x = gradviz.zeros(10, requires_grad=True)
    parts = gradviz.tensor_split(x, 4)
    assert [len(p) for p in parts] == [3, 3, 2, 2]
    assert {p.grad_fn.name() for p in parts} == {"SliceBackward0"}
