"""Calls PyTorch's op database samples make and gradviz once crashed on or refused: rounding
division, ``flip``'s ``dims`` keyword, tuple dims, 0-d and empty inputs, and more.

Each program below is Python run with ``m`` as the library; it leaves ``out`` and the leaves it
names. The expectations are hard-coded (each one checked against torch 2.13, which
tests/parity/test_ops_oracle_edges_parity.py does again): the node ``out`` records, its values,
and the gradient of ``out.sum()`` for each named leaf.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradviz

# (id, program, node of out, values of out, {leaf: gradient of out.sum()}); the numbers are
# torch's, to 12 decimals
GRADS: list[tuple[str, str, str | None, Any, dict[str, Any]]] = [
    ("div trunc",
     "x = m.tensor([5.0, -5.0, 7.5], dtype=m.float64, requires_grad=True)\n"
     "y = m.tensor([2.0, 2.0, -2.0], dtype=m.float64, requires_grad=True)\n"
     "out = m.div(x, y, rounding_mode='trunc')",
     "DivBackward2", [2.0, -2.0, -3.0], {"x": [0.0, 0.0, 0.0], "y": [0.0, 0.0, 0.0]}),
    ("div floor, broadcast",
     "x = m.tensor([[5.0], [-5.0]], dtype=m.float64, requires_grad=True)\n"
     "y = m.tensor([2.0, -3.0], dtype=m.float64, requires_grad=True)\n"
     "out = x.div(y, rounding_mode='floor')",
     "DivBackward2", [[2.0, -2.0], [-3.0, 1.0]], {"x": [[0.0], [0.0]], "y": [0.0, 0.0]}),
    ("div floor by a number",
     "x = m.tensor([5.0, -5.0], dtype=m.float64, requires_grad=True)\n"
     "out = m.div(x, 2, rounding_mode='floor')",
     "DivBackward2", [2.0, -3.0], {"x": [0.0, 0.0]}),
    ("div rounding_mode=None is true division, recorded as DivBackward2",
     "x = m.tensor([3.0, -1.0], dtype=m.float64, requires_grad=True)\n"
     "y = m.tensor([2.0, 4.0], dtype=m.float64, requires_grad=True)\n"
     "out = m.div(x, y, rounding_mode=None)",
     "DivBackward2", [1.5, -0.25], {"x": [0.5, 0.25], "y": [-0.75, 0.0625]}),
    ("div_ floor in place",
     "x = m.tensor([5.0, -5.0], dtype=m.float64, requires_grad=True)\n"
     "out = x.clone()\nout.div_(2.0, rounding_mode='floor')",
     "DivBackward2", [2.0, -3.0], {"x": [0.0, 0.0]}),
    ("flip dims keyword",
     "x = m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64, requires_grad=True)\n"
     "out = m.flip(x, dims=(0,))",
     "FlipBackward0", [[3.0, 4.0], [1.0, 2.0]], {"x": [[1.0, 1.0], [1.0, 1.0]]}),
    ("flip method dims keyword",
     "x = m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64, requires_grad=True)\n"
     "out = x.flip(dims=[1])",
     "FlipBackward0", [[2.0, 1.0], [4.0, 3.0]], {"x": [[1.0, 1.0], [1.0, 1.0]]}),
    ("flip method dims one by one",
     "x = m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64, requires_grad=True)\n"
     "out = x.flip(0, 1)",
     "FlipBackward0", [[4.0, 3.0], [2.0, 1.0]], {"x": [[1.0, 1.0], [1.0, 1.0]]}),
    ("squeeze a tuple of dims",
     "x = m.tensor([[[[1.0, 2.0]], [[3.0, 4.0]]]], dtype=m.float64, requires_grad=True)\n"
     "out = m.squeeze(x, (0, 2, 1))",
     "SqueezeBackward2", [[1.0, 2.0], [3.0, 4.0]], {"x": [[[[1.0, 1.0]], [[1.0, 1.0]]]]}),
    ("squeeze method negative dims",
     "x = m.tensor([[[1.0], [2.0]]], dtype=m.float64, requires_grad=True)\n"
     "out = x.squeeze([-1, 0]) * 2",
     "MulBackward0", [2.0, 4.0], {"x": [[[2.0], [2.0]]]}),
    ("quantile of a 0-d tensor, dim=0",
     "x = m.tensor(2.5, dtype=m.float64, requires_grad=True)\nout = m.quantile(x, 0.3, dim=0)",
     "SqueezeBackward4", 2.5, {"x": 1.0}),
    ("nanquantile of a 0-d tensor, keepdim, q a tensor",
     "x = m.tensor(2.5, dtype=m.float64, requires_grad=True)\n"
     "out = m.nanquantile(x, m.tensor([0.1, 0.9], dtype=m.float64), dim=0, keepdim=True)",
     "SqueezeBackward4", [2.5, 2.5], {"x": 2.0}),
    ("scatter into a 0-d tensor",
     "x = m.tensor(2.0, dtype=m.float64, requires_grad=True)\n"
     "s = m.tensor(5.0, dtype=m.float64, requires_grad=True)\n"
     "out = m.scatter(x, 0, m.tensor(0), s)",
     "ScatterBackward0", 5.0, {"x": 0.0, "s": 1.0}),
    ("scatter a value into a 0-d tensor, 1-d index",
     "x = m.tensor(2.0, dtype=m.float64, requires_grad=True)\n"
     "out = x.scatter(0, m.tensor([0]), 3.5)",
     "ScatterBackward1", 3.5, {"x": 0.0}),
    ("scatter with an empty index writes nothing",
     "x = m.tensor(2.0, dtype=m.float64, requires_grad=True)\n"
     "s = m.zeros(0, dtype=m.float64, requires_grad=True)\n"
     "out = m.scatter(x, -1, m.tensor([], dtype=m.int64), s)",
     "ScatterBackward0", 2.0, {"x": 1.0, "s": []}),
    ("scatter_add into a 0-d tensor adds the indexed values",
     "x = m.tensor(1.0, dtype=m.float64, requires_grad=True)\n"
     "s = m.tensor([2.0, 3.0, 4.0], dtype=m.float64, requires_grad=True)\n"
     "out = x.scatter_add(0, m.tensor([0, 0]), s[:2])",
     "ScatterAddBackward0", 6.0, {"x": 1.0, "s": [1.0, 1.0, 0.0]}),
    ("gather from a 0-d tensor, 1-d index",
     "x = m.tensor(3.0, dtype=m.float64, requires_grad=True)\n"
     "out = m.gather(x, 0, m.tensor([0, 0]))",
     "GatherBackward0", [3.0, 3.0], {"x": 2.0}),
    ("gather with an empty index",
     "x = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)\n"
     "out = m.gather(x, 0, m.zeros(2, 0, dtype=m.int64))",
     "GatherBackward0", [[], []], {"x": [0.0, 0.0, 0.0]}),
    ("gather a 0-d index from a 1-d tensor",
     "x = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)\n"
     "out = x.gather(0, m.tensor(2))",
     "GatherBackward0", 3.0, {"x": [0.0, 0.0, 1.0]}),
    ("masked_select of a 0-d tensor",
     "x = m.tensor(3.0, dtype=m.float64, requires_grad=True)\n"
     "out = m.masked_select(x, m.tensor(True))",
     "MaskedSelectBackward0", [3.0], {"x": 1.0}),
    ("masked_select of a 0-d tensor, nothing selected",
     "x = m.tensor(3.0, dtype=m.float64, requires_grad=True)\n"
     "out = x.masked_select(m.tensor(False))",
     "MaskedSelectBackward0", [], {"x": 0.0}),
    ("pinv with a tensor rtol: the small singular value is cut",
     "x = m.tensor([[4.0, 0.0], [0.0, 1.0], [0.0, 0.0]], dtype=m.float64, requires_grad=True)\n"
     "out = m.linalg.pinv(x, rtol=m.tensor(0.5, dtype=m.float64))",
     "LinalgPinvBackward0", [[0.25, 0.0, 0.0], [0.0, 0.0, 0.0]],
     {"x": [[-0.0625, 0.0625], [0.0625, 0.0], [0.0625, 0.0]]}),
    ("pinv with one rtol per matrix of the batch",
     "x = m.tensor([[[4.0, 0.0], [0.0, 1.0]]] * 2, dtype=m.float64, requires_grad=True)\n"
     "out = m.linalg.pinv(x, rtol=m.tensor([0.5, 0.1], dtype=m.float64))",
     "LinalgPinvBackward0", [[[0.25, 0.0], [0.0, 0.0]], [[0.25, 0.0], [0.0, 1.0]]],
     {"x": [[[-0.0625, 0.0625], [0.0625, 0.0]], [[-0.0625, -0.25], [-0.25, -1.0]]]}),
    ("torch.qr, deprecated but there",
     "import warnings\n"
     "x = m.tensor([[3.0, 0.0], [4.0, 5.0]], dtype=m.float64, requires_grad=True)\n"
     "with warnings.catch_warnings():\n"
     "    warnings.simplefilter('ignore')\n"
     "    q, r = m.qr(x)\n"
     "out = m.cat([q, r])",
     "CatBackward0", [[-0.6, -0.8], [-0.8, 0.6], [-5.0, -4.0], [0.0, 3.0]],
     {"x": [[0.712, -1.4], [-1.784, -0.2]]}),
    ("qr method, some=False of an empty batch",
     "x = m.zeros(2, 0, 3, dtype=m.float64, requires_grad=True)\n"
     "q, r = x.qr(some=False)\nout = q.sum() + r.sum()",
     "AddBackward0", 0.0, {"x": [[], []]}),
    ("interpolate nearest-exact, size",
     "F = m.nn.functional\n"
     "x = m.tensor([[[0.0, 1.0, 4.0, 9.0]]], dtype=m.float64, requires_grad=True)\n"
     "out = F.interpolate(x, size=6, mode='nearest-exact')",
     "UpsampleNearestExact1DBackward0",
     [[[0.0, 1.0, 1.0, 4.0, 9.0, 9.0]]],
     {"x": [[[1.0, 2.0, 1.0, 2.0]]]}),
    ("interpolate nearest-exact 2-D, scale_factor",
     "F = m.nn.functional\n"
     "x = m.tensor([[[[0.0, 1.0, 4.0], [2.0, 3.0, 5.0]]]], dtype=m.float64, "
     "requires_grad=True)\n"
     "out = F.interpolate(x, scale_factor=(1.5, 0.7), mode='nearest-exact')",
     "UpsampleNearestExact2DBackward0",
     [[[[0.0, 4.0], [2.0, 5.0], [2.0, 5.0]]]],
     {"x": [[[[1.0, 0.0, 1.0], [2.0, 0.0, 2.0]]]]}),
    ("interpolate nearest-exact 3-D",
     "F = m.nn.functional\n"
     "x = m.arange(8.0, dtype=m.float64).reshape(1, 1, 2, 2, 2).requires_grad_()\n"
     "out = F.interpolate(x, size=(3, 1, 2), mode='nearest-exact')",
     "UpsampleNearestExact3DBackward0",
     [[[[[2.0, 3.0]], [[6.0, 7.0]], [[6.0, 7.0]]]]],
     {"x": [[[[[0.0, 0.0], [1.0, 1.0]], [[0.0, 0.0], [2.0, 2.0]]]]]}),
    ("interpolate bicubic, size, weighted",
     "F = m.nn.functional\n"
     "x = m.tensor([[[[0.0, 1.0, 4.0], [2.0, 3.0, 5.0]]]], dtype=m.float64, "
     "requires_grad=True)\n"
     "out = F.interpolate(x, size=(3, 4), mode='bicubic') * m.arange(12.0, "
     "dtype=m.float64).reshape(3, 4)",
     "MulBackward0",
     [[[[0.0, 0.126910739475, 4.097174750434, 12.404271443685],
        [3.712890625, 6.824951171875, 18.064453125, 32.756103515625],
        [16.814670138889, 23.427627563477, 39.72896999783, 57.465425279405]]]],
     {"x": [[[[1.937228732639, 4.819444444444, 7.465549045139],
               [14.351833767361, 17.545789930556, 19.880154079861]]]]}),
    ("interpolate bicubic, align_corners",
     "F = m.nn.functional\n"
     "x = m.tensor([[[[0.0, 1.0, 4.0], [2.0, 3.0, 5.0]]]], dtype=m.float64, "
     "requires_grad=True)\n"
     "out = F.interpolate(x, size=(3, 4), mode='bicubic', align_corners=True)",
     "UpsampleBicubic2DBackward0",
     [[[[0.0, 0.351851851852, 2.055555555556, 4.0], [1.0, 1.407407407407, 2.898148148148, 4.5],
        [2.0, 2.462962962963, 3.740740740741, 5.0]]]],
     {"x": [[[[1.805555555556, 2.388888888889, 1.805555555556],
               [1.805555555556, 2.388888888889, 1.805555555556]]]]}),
    ("interpolate bicubic, scale_factor",
     "F = m.nn.functional\n"
     "x = m.tensor([[[[0.0, 1.0, 4.0], [2.0, 3.0, 5.0]]]], dtype=m.float64, "
     "requires_grad=True)\n"
     "out = F.interpolate(x, scale_factor=1.5, mode='bicubic')",
     "UpsampleBicubic2DBackward0",
     [[[[-0.260416666667, 0.037000868056, 1.356208204733, 3.487541795267],
        [0.913194444444, 1.265625, 2.445601851852, 4.158564814815],
        [2.086805555556, 2.494249131944, 3.534995498971, 4.829587834362]]]],
     {"x": [[[[2.223958333333, 2.416666666667, 1.359375],
               [2.223958333333, 2.416666666667, 1.359375]]]]}),
    ("interpolate trilinear, align_corners, weighted",
     "F = m.nn.functional\n"
     "x = m.tensor([[[[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 8.0]]]]], dtype=m.float64, "
     "requires_grad=True)\n"
     "out = F.interpolate(x, size=(3, 2, 3), mode='trilinear', align_corners=True) * "
     "m.arange(18.0, dtype=m.float64).reshape(3, 2, 3)",
     "MulBackward0",
     [[[[[0.0, 0.5, 2.0], [6.0, 10.0, 15.0]], [[12.0, 17.5, 24.0], [36.0, 47.5, 60.5]],
        [[48.0, 58.5, 70.0], [90.0, 112.0, 136.0]]]]],
     {"x": [[[[[5.25, 8.25], [12.0, 15.0]], [[23.25, 26.25], [30.0, 33.0]]]]]}),
    ("interpolate trilinear, scale_factor",
     "F = m.nn.functional\n"
     "x = m.tensor([[[[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 8.0]]]]], dtype=m.float64, "
     "requires_grad=True)\n"
     "out = F.interpolate(x, scale_factor=(1.5, 1.0, 2.0), mode='trilinear')",
     "UpsampleTrilinear3DBackward0",
     [[[[[0.0, 0.25, 0.75, 1.0], [2.0, 2.25, 2.75, 3.0]],
        [[2.0, 2.25, 2.75, 3.0], [4.0, 4.375, 5.125, 5.5]],
        [[4.0, 4.25, 4.75, 5.0], [6.0, 6.5, 7.5, 8.0]]]]],
     {"x": [[[[[3.0, 3.0], [3.0, 3.0]], [[3.0, 3.0], [3.0, 3.0]]]]]}),
    ("max_pool3d, padded, ties and repeated maxima",
     "x = (m.arange(24.0, dtype=m.float64).reshape(1, 1, 2, 3, 4) * 7 % 11).requires_grad_()\n"
     "out = m.nn.functional.max_pool3d(x, 2, stride=(1, 1, 2), padding=(0, 1, 1))",
     "MaxPool3DWithIndicesBackward0",
     [[[[[7.0, 10.0, 10.0], [7.0, 10.0, 10.0], [8.0, 9.0, 7.0], [8.0, 8.0, 7.0]]]]],
     {"x": [[[[[0.0, 0.0, 0.0, 2.0], [0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0]],
              [[2.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 2.0]]]]]}),
    ("cat with legacy empty tensors",
     "e = m.zeros(0, dtype=m.float64, requires_grad=True)\n"
     "x = m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64, requires_grad=True)\n"
     "out = m.cat([e, x, e], 1)",
     "CatBackward0", [[1.0, 2.0], [3.0, 4.0]], {"e": [], "x": [[1.0, 1.0], [1.0, 1.0]]}),
    ("cat of legacy empty tensors only, dim unchecked",
     "e = m.zeros(0, dtype=m.float64, requires_grad=True)\nout = m.cat([e, e], 1)",
     "CatBackward0", [], {"e": []}),
    ("tensordot contracting a size-1 dim with a longer one",
     "a = m.tensor([[2.0], [3.0]], dtype=m.float64, requires_grad=True)\n"
     "b = m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=m.float64, requires_grad=True)\n"
     "out = m.tensordot(a, b, dims=1)",
     "ViewBackward0", [[18.0, 24.0], [27.0, 36.0]],
     {"a": [[21.0], [21.0]], "b": [[5.0, 5.0], [5.0, 5.0], [5.0, 5.0]]}),
    ("tensordot size-1 dims on both sides",
     "a = m.tensor([[[2.0]]], dtype=m.float64, requires_grad=True)\n"
     "b = m.tensor([[[1.0, 2.0]], [[3.0, 4.0]]], dtype=m.float64, requires_grad=True)\n"
     "out = m.tensordot(a, b, dims=([0, 1], [2, 0]))",
     "ViewBackward0", [[20.0]], {"a": [[[10.0]]], "b": [[[2.0, 2.0]], [[2.0, 2.0]]]}),
]

# (id, program, values of out): results without a graph (integer and bool dtypes), or a
# plain list the program builds
VALUES: list[tuple[str, str, Any]] = [
    ("div trunc int", "out = m.div(m.tensor([7, -7]), 2, rounding_mode='trunc')", [3, -3]),
    ("div floor int", "out = m.div(m.tensor([7, -7]), m.tensor([2, 2]), rounding_mode='floor')",
     [3, -4]),
    ("div trunc int64 exact beyond float precision",
     "out = m.div(m.tensor([2**62 + 1, -(2**62 + 1)]), 1, rounding_mode='trunc')",
     [2**62 + 1, -(2**62 + 1)]),
    ("div floor by zero", "out = m.tensor([1.0, -1.0]).div(0.0, rounding_mode='floor')",
     [float("inf"), float("-inf")]),
    ("pooling an empty batch: output shape, node, gradient shape",
     "import importlib\nF = importlib.import_module(m.__name__ + '.nn.functional')\nshapes = []\n"
     "for pool, x in ((F.max_pool1d, m.zeros(0, 2, 5, requires_grad=True)),\n"
     "                (F.avg_pool1d, m.zeros(0, 2, 5, requires_grad=True)),\n"
     "                (F.max_pool2d, m.zeros(0, 2, 4, 4, requires_grad=True)),\n"
     "                (F.avg_pool2d, m.zeros(0, 2, 4, 4, requires_grad=True)),\n"
     "                (F.avg_pool3d, m.zeros(0, 2, 4, 4, 4, requires_grad=True)),\n"
     "                (F.max_pool3d, m.zeros(0, 2, 4, 4, 4, requires_grad=True))):\n"
     "    y = pool(x, 2)\n"
     "    y.sum().backward()\n"
     "    shapes.append([list(y.shape), y.grad_fn.name(), list(x.grad.shape)])\n"
     "out = shapes",
     [[[0, 2, 2], "SqueezeBackward1", [0, 2, 5]], [[0, 2, 2], "SqueezeBackward1", [0, 2, 5]],
      [[0, 2, 2, 2], "MaxPool2DWithIndicesBackward0", [0, 2, 4, 4]],
      [[0, 2, 2, 2], "AvgPool2DBackward0", [0, 2, 4, 4]],
      [[0, 2, 2, 2, 2], "AvgPool3DBackward0", [0, 2, 4, 4, 4]],
      [[0, 2, 2, 2, 2], "MaxPool3DWithIndicesBackward0", [0, 2, 4, 4, 4]]]),
    ("max_pool3d indices",
     "x = (m.arange(24.0).reshape(1, 1, 2, 3, 4) * 7 % 11)\n"
     "out = m.nn.functional.max_pool3d(x, 2, stride=(1, 1, 2), padding=(0, 1, 1),\n"
     "                                 return_indices=True)[1]",
     [[[[[12, 14, 3], [12, 14, 3], [20, 6, 23], [20, 9, 23]]]]]),
    ("batch_norm of an empty batch: a copy times weight[0] plus bias[0], stats untouched",
     "x = m.zeros(0, 3, 2, dtype=m.float64, requires_grad=True)\n"
     "w = m.ones(3, dtype=m.float64, requires_grad=True)\n"
     "b = m.zeros(3, dtype=m.float64, requires_grad=True)\n"
     "rm, rv = m.zeros(3, dtype=m.float64), m.ones(3, dtype=m.float64)\n"
     "y = m.nn.functional.batch_norm(x, rm, rv, w, b, training=True)\n"
     "y.sum().backward()\n"
     "node = y.grad_fn\n"
     "out = [list(y.shape), node.name(), [f.name() for f, _ in node.next_functions],\n"
     "       [f.name() for f, _ in node.next_functions[0][0].next_functions],\n"
     "       w.grad.tolist(), b.grad.tolist(), rm.tolist(), rv.tolist()]",
     [[0, 3, 2], "AddBackward0", ["MulBackward0", "SelectBackward0"],
      ["CloneBackward0", "SelectBackward0"], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0],
      [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]),
    ("batch_norm of an input with no channels, training",
     "x = m.zeros(2, 0, requires_grad=True)\n"
     "y = m.nn.functional.batch_norm(x, None, None, training=True)\n"
     "out = [list(y.shape), y.grad_fn.name()]",
     [[2, 0], "CloneBackward0"]),
    ("batch_norm of an empty 1-D input, training",
     "x = m.zeros(0, requires_grad=True)\n"
     "y = m.nn.functional.batch_norm(x, m.zeros(0), m.zeros(0), training=True)\n"
     "out = [list(y.shape), y.grad_fn.name()]",
     [[0], "CloneBackward0"]),
    ("circular pad of an empty batch",
     "x = m.zeros(0, 2, 4, requires_grad=True)\n"
     "y = m.nn.functional.pad(x, (1, 2), mode='circular')\ny.sum().backward()\n"
     "out = [list(y.shape), y.grad_fn.name(), list(x.grad.shape)]",
     [[0, 2, 7], "torch::autograd::CopySlices", [0, 2, 4]]),
    ("matrix_power(0) of an empty batch",
     "x = m.zeros(0, 2, 2, requires_grad=True)\ny = m.linalg.matrix_power(x, 0)\n"
     "out = [list(y.shape), y.grad_fn.name()]",
     [[0, 2, 2], "torch::autograd::CopyBackwards"]),
    ("matrix_power(0) of 0x0 matrices",
     "x = m.zeros(2, 0, 0, requires_grad=True)\nout = list(m.matrix_power(x, 0).shape)",
     [2, 0, 0]),
    ("tensordot to one number records a dot of the flattened operands",
     "a = m.ones(1, 3, requires_grad=True)\nb = m.ones(3, 1, requires_grad=True)\n"
     "y = m.tensordot(a, b, dims=1)\nnode = y.grad_fn.next_functions[0][0]\n"
     "left = node.next_functions[0][0]\n"
     "out = [y.grad_fn.name(), node.name(), left.name(), left.next_functions[0][0].name(),\n"
     "       left.next_functions[0][0]._saved_dims, list(y.shape)]",
     ["ViewBackward0", "DotBackward0", "ViewBackward0", "PermuteBackward0", (0, 2**64 - 1),
      [1, 1]]),
    ("torch.qr's result type",
     "import warnings\nwith warnings.catch_warnings():\n    warnings.simplefilter('ignore')\n"
     "    out = m.qr(m.eye(3, dtype=m.float64)[:, :2], some=False)\n"
     "out = [type(out).__name__, list(out.Q.shape), list(out.R.shape)]",
     ["qr", [3, 3], [3, 2]]),
    ("all dim=() reduces nothing", "out = m.all(m.tensor([[1.0, 0.0], [2.0, 3.0]]), dim=())",
     [[True, False], [True, True]]),
    ("any dim=() keepdim", "out = m.tensor([0.0, 2.0]).any(dim=(), keepdim=True)", [False, True]),
    ("all a tuple of dims", "out = m.tensor([[1.0, 0.0], [2.0, 3.0]]).all(dim=(0, 1))", False),
    ("any a list of dims keepdim",
     "out = m.any(m.tensor([[0.0, 0.0], [2.0, 0.0]]), dim=[1], keepdim=True)", [[False], [True]]),
    ("all dim=(0,) of a 0-d tensor", "out = m.all(m.tensor(0.0), dim=(0,))", False),
    ("all/any of uint8 stay uint8",
     "u = m.tensor([[1, 0], [2, 3]], dtype=m.uint8)\n"
     "out = [str(r.dtype).split('.')[-1] for r in (m.all(u), u.any(0), u.all(dim=()))]",
     ["uint8", "uint8", "uint8"]),
]

# (id, program, attribute of out.grad_fn, value)
SAVED: list[tuple[str, str, str, Any]] = [
    ("squeeze dims as written",
     "x = m.ones(1, 3, 1, requires_grad=True)\nout = x.squeeze((-1, 0))", "_saved_dim",
     (2**64 - 1, 0)),
    ("squeeze dims sizes",
     "x = m.ones(1, 3, 1, requires_grad=True)\nout = x.squeeze((-1, 0))",
     "_saved_self_sym_sizes", (1, 3, 1)),
    ("cat with a legacy empty tensor saves dim as given",
     "x = m.ones(2, 2, requires_grad=True)\nout = m.cat([x, m.zeros(0)], -1)", "_saved_dim",
     2**64 - 1),
    ("div rounding mode",
     "x = m.ones(2, requires_grad=True)\nout = x.div(3, rounding_mode='trunc')",
     "_saved_rounding_mode", "trunc"),
]

# (id, program, error type, message)
ERRORS: list[tuple[str, str, str, str]] = [
    ("div unknown rounding_mode",
     "m.div(m.ones(2), m.ones(2), rounding_mode='round')", "RuntimeError",
     "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'"),
    ("div trunc int by zero", "m.tensor([1, 2]).div(0, rounding_mode='trunc')", "RuntimeError",
     "ZeroDivisionError"),
    ("true_divide takes no rounding_mode",
     "m.true_divide(m.ones(2), m.ones(2), rounding_mode='floor')", "TypeError",
     "true_divide() got an unexpected keyword argument 'rounding_mode'"),
    ("flip function dims int", "m.flip(m.ones(2, 2), 0)", "TypeError",
     "flip(): argument 'dims' (position 2) must be tuple of ints, not int"),
    ("flip method dims keyword int", "m.ones(2, 2).flip(dims=0)", "TypeError",
     "flip(): argument 'dims' must be tuple of ints, not int"),
    ("flip method dims twice", "m.ones(2, 2).flip([0], dims=[1])", "TypeError",
     "flip() got multiple values for argument 'dims'"),
    ("flip method no dims", "m.ones(2, 2).flip()", "TypeError",
     'flip() missing 1 required positional arguments: "dims"'),
    ("flip method a sequence and more", "m.ones(2, 2).flip((0,), 1)", "TypeError",
     "flip() takes 1 positional argument but 2 were given"),
    ("cat legacy empty and a 1-D tensor, dim out of range",
     "m.cat([m.zeros(0), m.ones(3)], 1)", "IndexError",
     "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    ("tensordot contracted sizes that differ, neither 1",
     "m.tensordot(m.ones(2, 3), m.ones(3, 2), dims=([0], [0]))", "RuntimeError",
     "contracted dimensions need to match, but first has size 2 in dim 0 and second has size 3 "
     "in dim 0"),
    ("max_pool2d empty channels", "m.nn.functional.max_pool2d(m.zeros(2, 0, 4, 4), 2)",
     "RuntimeError", "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for "
     "input, but got:[2, 0, 4, 4]"),
    ("avg_pool2d empty unbatched input", "m.nn.functional.avg_pool2d(m.zeros(0, 4, 4), 2)",
     "RuntimeError", "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for "
     "input, but got:[0, 4, 4]"),
    ("max_pool1d empty length", "m.nn.functional.max_pool1d(m.zeros(0, 2, 0), 2)",
     "RuntimeError", "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim "
     "batch size for input, but got:[0, 2, 0]"),
    ("avg_pool3d empty channels", "m.nn.functional.avg_pool3d(m.zeros(2, 0, 4, 4, 4), 2)",
     "RuntimeError", "avg_pool3d(): Expected input's non-batch dimensions to have positive "
     "length, but input has a shape of [2, 0, 4, 4, 4] and non-batch dimension 0 has length "
     "zero!"),
    ("batch_norm training on one value per channel, channels of size 0",
     "m.nn.functional.batch_norm(m.zeros(1, 0), None, None, training=True)", "ValueError",
     "Expected more than 1 value per channel when training, got input size torch.Size([1, 0])"),
    ("interpolate trilinear on 4-D input",
     "m.nn.functional.interpolate(m.zeros(1, 1, 2, 2), scale_factor=2, mode='trilinear')",
     "NotImplementedError", "Got 4D input, but trilinear mode needs 5D input"),
    ("interpolate trilinear to an empty size",
     "m.nn.functional.interpolate(m.zeros(1, 1, 2, 2, 2), size=(0, 3, 2), mode='trilinear')",
     "RuntimeError", "Input and output sizes should be greater than 0, but got input (D: 2, H: "
     "2, W: 2) output (D: 0, H: 3, W: 2)"),
    ("interpolate nearest-exact on 2-D input",
     "m.nn.functional.interpolate(m.zeros(1, 4), scale_factor=2, mode='nearest-exact')",
     "NotImplementedError", "Input Error: Only 3D, 4D and 5D input Tensors supported (got 2D) "
     "for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
     "nearest-exact (got nearest-exact)"),
    ("batch_norm of an empty input reads bias[0]",
     "m.nn.functional.batch_norm(m.zeros(0), None, None, None, m.zeros(0), training=True)",
     "IndexError", "select(): index 0 out of range for tensor of size [0] at dimension 0"),
    ("max_pool3d empty channels", "m.nn.functional.max_pool3d(m.zeros(2, 0, 4, 4, 4), 2)",
     "RuntimeError", "max_pool3d_with_indices_out_cpu_template(): Expected input's non-batch "
     "dimensions to have positive length, but input has a shape of [2, 0, 4, 4, 4] and "
     "non-batch dimension 0 has length zero!"),
    ("max_pool3d two kernel sizes", "m.nn.functional.max_pool3d(m.zeros(1, 1, 2, 2, 2), (2, 2))",
     "RuntimeError", "max_pool3d: kernel_size must either be a single int, or a tuple of three "
     "ints"),
    ("max_pool3d zero kernel, stride 1", "m.nn.functional.max_pool3d(m.zeros(1, 1, 2, 2, 2), 0, 1)",
     "RuntimeError", "kernel size should be greater than zero, but got kT: 0 kH: 0 kW: 0"),
    ("max_pool3d negative padding",
     "m.nn.functional.max_pool3d(m.zeros(1, 1, 2, 2, 2), 2, 1, -1)", "RuntimeError",
     "pad must be non-negative, but got pad: -1"),
    ("max_pool3d output too small", "m.nn.functional.max_pool3d(m.zeros(1, 2, 4, 4, 4), 5)",
     "RuntimeError", "Given input size: (2x4x4x4). Calculated output size: (2x0x0x0). Output "
     "size is too small"),
    ("squeeze a dim twice", "m.ones(1, 2).squeeze((0, -2))", "RuntimeError",
     "dim 0 appears multiple times in the list of dims"),
    ("all a dim twice", "m.ones(1, 2).all(dim=(1, 1))", "RuntimeError",
     "dim 1 appears multiple times in the list of dims"),
    ("any dims not ints", "m.any(m.ones(1, 2), dim=[0, 'a'])", "TypeError",
     "any(): argument 'dim' failed to unpack the object at pos 2 with error \"type must be "
     "tuple of ints,but got str\""),
]


def run(src: str, m: Any) -> dict[str, Any]:
    """The names ``src`` leaves, run with ``m`` as the library (gradviz or torch)."""
    names: dict[str, Any] = {"m": m}
    exec(src, names)  # noqa: S102 - the programs are this file's own
    return names


def plain(out: Any) -> Any:
    """``out`` as Python values: a tensor's ``tolist()``, a list as it is."""
    return out if isinstance(out, list) else out.tolist()


def outcome(src: str, m: Any) -> tuple[str | None, list, dict[str, list]]:
    """``out``'s node name and values, and each leaf's gradient of ``out.sum()``."""
    names = run(src, m)
    out = names["out"]
    node = None if out.grad_fn is None else out.grad_fn.name()
    values = out.detach().numpy().tolist()
    grads = {}
    if out.requires_grad:
        out.sum().backward()
        grads = {k: v.grad.numpy().tolist() for k, v in names.items()
                 if isinstance(v, m.Tensor) and v.is_leaf and v.grad is not None}
    return node, values, grads


@pytest.mark.parametrize(("src", "node", "values", "grads"), [g[1:] for g in GRADS],
                         ids=[g[0] for g in GRADS])
def test_node_values_and_gradients(src: str, node: str | None, values: Any,
                                   grads: dict[str, Any]) -> None:
    got_node, got_values, got_grads = outcome(src, gradviz)
    assert got_node == node
    np.testing.assert_allclose(np.asarray(got_values, float), np.asarray(values, float),
                               rtol=1e-9, atol=1e-11)
    assert sorted(got_grads) == sorted(grads)
    for leaf, grad in grads.items():
        np.testing.assert_allclose(np.asarray(got_grads[leaf], float), np.asarray(grad, float),
                                   rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize(("src", "values"), [v[1:] for v in VALUES], ids=[v[0] for v in VALUES])
def test_values(src: str, values: Any) -> None:
    assert plain(run(src, gradviz)["out"]) == values


def test_torch_qr_warns_as_torch() -> None:
    # torch warns once per process (TORCH_WARN_ONCE), so the parity file cannot see it again;
    # the text is torch 2.13's, without its "(Triggered internally at ...)" suffix.
    with pytest.warns(UserWarning) as seen:
        gradviz.qr(gradviz.eye(2))
    assert str(seen[0].message) == (
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
        "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string "
        "parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\nQ, R = "
        "torch.linalg.qr(A, 'reduced' if some else 'complete')")


@pytest.mark.parametrize(("src", "attr", "value"), [v[1:] for v in SAVED],
                         ids=[v[0] for v in SAVED])
def test_saved(src: str, attr: str, value: Any) -> None:
    assert getattr(run(src, gradviz)["out"].grad_fn, attr) == value


@pytest.mark.parametrize(("src", "error", "message"), [e[1:] for e in ERRORS],
                         ids=[e[0] for e in ERRORS])
def test_errors(src: str, error: str, message: str) -> None:
    with pytest.raises(Exception) as info:
        run(src, gradviz)
    assert type(info.value).__name__ == error and str(info.value) == message
