"""The nn layers added by nnmore (group / instance / RMS norm, 1-D and adaptive max pooling,
LP pooling, conv_transpose1d, the reflect / replicate / circular pads, interpolate and
Upsample, pixel (un)shuffle, unfold / fold, bilinear, Softmax2d, the dropout variants), with
PyTorch 2.13's expectations hard-coded: node chains, saved attributes, values, reprs and error
texts. tests/parity/test_nn_layers_more_parity.py derives every one of them again from torch.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradviz
import gradviz.nn.functional as GF
from gradviz import nn


def _chain(out: Any) -> list[tuple[int, str]]:
    rows, stack = [], [(out.grad_fn, 0)]
    while stack:
        node, depth = stack.pop()
        if node is None:
            continue
        rows.append((depth, node.name().replace("torch::autograd::", "")))
        stack.extend((n, depth + 1) for n, _ in reversed(node.next_functions))
    return rows


_ACC = "AccumulateGrad"

# name -> (fn(lib, F, x), x's shape); TORCH_CHAINS below holds torch's graph for each
CHAINS: dict[str, tuple[Callable[..., Any], tuple]] = {
    "group_norm": (lambda L, F, x: F.group_norm(x, 2), (2, 4, 3)),
    "instance_norm affine": (
        lambda L, F, x: F.instance_norm(x, weight=L.ones(4, dtype=L.float64,
                                                         requires_grad=True)), (2, 4, 3)),
    "rms_norm": (lambda L, F, x: F.rms_norm(x, (3,)), (2, 3)),
    "avg_pool1d": (lambda L, F, x: F.avg_pool1d(x, 2), (2, 3, 4)),
    "adaptive_max_pool1d": (lambda L, F, x: F.adaptive_max_pool1d(x, 2), (2, 3, 4)),
    "lp_pool1d": (lambda L, F, x: F.lp_pool1d(x, 2, 2), (2, 3, 4)),
    "pad reflect": (lambda L, F, x: F.pad(x, (1, 1), mode="reflect"), (2, 3)),
    "pad replicate": (lambda L, F, x: F.pad(x, (1, 1, 0, 1), mode="replicate"), (1, 2, 3)),
    "pad circular": (lambda L, F, x: F.pad(x, (1, 1), mode="circular"), (2, 3)),
    "interpolate nearest": (lambda L, F, x: F.interpolate(x, scale_factor=2), (1, 1, 2, 2)),
    "interpolate bilinear": (lambda L, F, x: F.interpolate(x, size=(3, 3), mode="bilinear"),
                             (1, 1, 2, 2)),
    "pixel_shuffle": (lambda L, F, x: F.pixel_shuffle(x, 2), (1, 4, 1, 1)),
    "unfold": (lambda L, F, x: F.unfold(x, 2), (1, 1, 3, 3)),
    "fold": (lambda L, F, x: F.fold(x, (3, 3), 2), (1, 4, 4)),
    "bilinear": (lambda L, F, x: F.bilinear(x, x, L.ones(2, 3, 3, dtype=L.float64), None),
                 (4, 3)),
    "alpha_dropout": (lambda L, F, x: F.alpha_dropout(x, 0.5, True), (2, 3)),
    "dropout1d unbatched": (lambda L, F, x: F.dropout1d(x, 0.5), (2, 3)),
    "Softmax2d": (lambda L, F, x: L.nn.Softmax2d()(x), (2, 2, 2)),
}

# name -> (fn(lib, F, x), x); TORCH_VALUES below holds torch's result for each
VALUES: dict[str, tuple[Callable[..., Any], Any]] = {
    "reflect 1d": (lambda L, F, x: F.pad(x, (2, 1), mode="reflect"), [[[0.0, 1.0, 2.0]]]),
    "replicate 2d": (lambda L, F, x: F.pad(x, (1, 0, 0, 1), mode="replicate"),
                     [[[1.0, 2.0], [3.0, 4.0]]]),
    "circular 2d": (lambda L, F, x: F.pad(x, (1, 1, 1, 0), mode="circular"),
                    [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]),
    "nearest 1.5": (lambda L, F, x: F.interpolate(x, scale_factor=1.5),
                    [[[0.0, 1.0, 2.0, 3.0]]]),
    "linear": (lambda L, F, x: F.interpolate(x, size=5, mode="linear"),
               [[[0.0, 1.0, 4.0]]]),
    "bilinear align": (lambda L, F, x: F.interpolate(x, size=(3, 3), mode="bilinear",
                                                     align_corners=True),
                       [[[[0.0, 2.0], [4.0, 8.0]]]]),
    "group_norm": (lambda L, F, x: F.group_norm(x, 2), [[1.0, 2.0, 4.0, 8.0]]),
    "rms_norm": (lambda L, F, x: F.rms_norm(x, (2,)), [[3.0, 4.0]]),
    "adaptive_max_pool2d": (lambda L, F, x: F.adaptive_max_pool2d(x, (2, 2)),
                            [[[1.0, 5.0, 2.0], [7.0, 0.0, 3.0], [4.0, 9.0, 6.0]]]),
    "lp_pool2d": (lambda L, F, x: F.lp_pool2d(x, 2, 2), [[[[3.0, 0.0], [0.0, 4.0]]]]),
    "pixel_unshuffle": (lambda L, F, x: F.pixel_unshuffle(x, 2),
                        [[[[0.0, 1.0], [2.0, 3.0]]]]),
    "unfold": (lambda L, F, x: F.unfold(x, 2, padding=1, stride=2),
               [[[[1.0, 2.0], [3.0, 4.0]]]]),
    "fold": (lambda L, F, x: F.fold(x, (1, 3), (1, 2)), [[[1.0, 2.0], [3.0, 4.0]]]),
    "bilinear": (lambda L, F, x: F.bilinear(x, x, L.arange(8.0, dtype=L.float64).view(2, 2, 2)),
                 [[1.0, 2.0]]),
}

# module constructors taking the library; TORCH_REPRS below holds torch's reprs
REPRS: list[Callable[..., Any]] = [
    lambda L: L.nn.GroupNorm(2, 4),
    lambda L: L.nn.InstanceNorm2d(3, affine=True),
    lambda L: L.nn.RMSNorm([2, 3]),
    lambda L: L.nn.AvgPool1d(3, 2, 1),
    lambda L: L.nn.AdaptiveMaxPool2d((2, None)),
    lambda L: L.nn.LPPool1d(2, 3),
    lambda L: L.nn.ConvTranspose1d(4, 2, 3, stride=2, output_padding=1),
    lambda L: L.nn.ReflectionPad1d(2),
    lambda L: L.nn.ConstantPad2d(1, 0.5),
    lambda L: L.nn.Upsample(scale_factor=2, mode="bilinear"),
    lambda L: L.nn.UpsamplingBilinear2d(size=(3, 4)),
    lambda L: L.nn.PixelShuffle(2),
    lambda L: L.nn.Fold((4, 5), 2),
    lambda L: L.nn.Bilinear(4, 5, 6),
    lambda L: L.nn.Softmax2d(),
    lambda L: L.nn.FeatureAlphaDropout(0.2),
]

ERRORS: list[tuple[str, Callable[..., Any]]] = [
    ("group_norm groups", lambda L, F: F.group_norm(L.ones(2, 4, 5), 3)),
    ("group_norm 1-d", lambda L, F: F.group_norm(L.ones(4), 2)),
    ("group_norm weight", lambda L, F: F.group_norm(L.ones(2, 4, 5), 2, L.ones(3))),
    ("group_norm one value", lambda L, F: F.group_norm(L.ones(1, 2), 2)),
    ("GroupNorm channels", lambda L, F: L.nn.GroupNorm(3, 4)),
    ("instance_norm one element", lambda L, F: F.instance_norm(L.ones(2, 4, 1))),
    ("instance_norm running size", lambda L, F: F.instance_norm(L.ones(2, 4, 5), L.zeros(3),
                                                                L.ones(3))),
    ("InstanceNorm1d 4-d", lambda L, F: L.nn.InstanceNorm1d(4)(L.ones(2, 4, 5, 6))),
    ("InstanceNorm1d affine size", lambda L, F: L.nn.InstanceNorm1d(3, affine=True)(
        L.ones(2, 4, 5))),
    ("rms_norm shape", lambda L, F: F.rms_norm(L.ones(2, 4, 5), (4,))),
    ("rms_norm weight", lambda L, F: F.rms_norm(L.ones(2, 4, 5), (5,), L.ones(4))),
    ("avg_pool1d 1-d", lambda L, F: F.avg_pool1d(L.ones(5), 2)),
    ("adaptive_avg_pool1d 1-d", lambda L, F: F.adaptive_avg_pool1d(L.ones(5), 2)),
    ("adaptive_max_pool1d 1-d", lambda L, F: F.adaptive_max_pool1d(L.ones(5), 2)),
    ("adaptive_max_pool2d 1-d", lambda L, F: F.adaptive_max_pool2d(L.ones(5), 2)),
    ("conv_transpose1d 4-d", lambda L, F: F.conv_transpose1d(L.ones(2, 3, 4, 5),
                                                             L.ones(3, 2, 2))),
    ("conv_transpose1d output_padding", lambda L, F: F.conv_transpose1d(
        L.ones(2, 4, 5), L.ones(4, 2, 2), output_padding=2)),
    ("reflect too much", lambda L, F: F.pad(L.ones(2, 4, 5), (1, 5), mode="reflect")),
    ("reflect 1-d input", lambda L, F: F.pad(L.ones(5), (1, 1), mode="reflect")),
    ("pad unknown mode", lambda L, F: F.pad(L.ones(2, 4, 5), (1, 1), mode="foo")),
    ("replicate 6 on 3-d", lambda L, F: F.pad(L.ones(2, 4, 5), (1,) * 6, mode="replicate")),
    ("circular twice", lambda L, F: F.pad(L.ones(2, 4, 5), (1, 6), mode="circular")),
    ("pad odd", lambda L, F: F.pad(L.ones(2, 4, 5), (1,), mode="reflect")),
    ("reflect value", lambda L, F: F.pad(L.ones(2, 4, 5), (1, 1), mode="reflect", value=2.0)),
    ("CircularPad2d 2-d", lambda L, F: L.nn.CircularPad2d(1)(L.ones(2, 3))),
    ("bilinear on 3-d", lambda L, F: F.interpolate(L.ones(2, 4, 5), scale_factor=2,
                                                   mode="bilinear")),
    ("interpolate nothing", lambda L, F: F.interpolate(L.ones(2, 4, 5))),
    ("interpolate both", lambda L, F: F.interpolate(L.ones(2, 4, 5), size=3, scale_factor=2)),
    ("nearest align_corners", lambda L, F: F.interpolate(L.ones(2, 4, 5), size=3,
                                                         align_corners=True)),
    ("interpolate size rank", lambda L, F: F.interpolate(L.ones(2, 4, 5), size=(3, 4))),
    ("interpolate 2-d", lambda L, F: F.interpolate(L.ones(4, 5), size=3)),
    ("interpolate empty 1-d", lambda L, F: F.interpolate(L.ones(1, 1, 5), scale_factor=0.1)),
    ("interpolate empty 2-d", lambda L, F: F.interpolate(L.ones(1, 1, 3, 5), scale_factor=(
        0.1, 1), mode="bilinear")),
    ("pixel_shuffle channels", lambda L, F: F.pixel_shuffle(L.ones(2, 3, 4, 4), 2)),
    ("pixel_shuffle 2-d", lambda L, F: F.pixel_shuffle(L.ones(4, 4), 2)),
    ("pixel_unshuffle height", lambda L, F: F.pixel_unshuffle(L.ones(1, 1, 3, 4), 2)),
    ("unfold too small", lambda L, F: F.unfold(L.ones(1, 1, 2, 2), 3)),
    ("fold channels", lambda L, F: F.fold(L.ones(1, 5, 4), (3, 3), 2)),
    ("fold blocks", lambda L, F: F.fold(L.ones(1, 4, 5), (3, 3), 2)),
    ("bilinear input2", lambda L, F: F.bilinear(L.ones(3, 4), L.ones(3, 5), L.ones(6, 4, 6))),
    ("bilinear batch", lambda L, F: F.bilinear(L.ones(3, 4), L.ones(2, 5), L.ones(6, 4, 5))),
    ("bilinear input1", lambda L, F: F.bilinear(L.ones(3, 4), L.ones(3, 5), L.ones(6, 3, 5))),
    ("bilinear bias", lambda L, F: F.bilinear(L.ones(3, 4), L.ones(3, 5), L.ones(6, 4, 5),
                                              L.ones(5))),
    ("bilinear dims", lambda L, F: F.bilinear(L.ones(3, 4), L.ones(3, 1, 5), L.ones(6, 4, 5))),
    ("local_response_norm 2-d", lambda L, F: F.local_response_norm(L.ones(3, 4), 2)),
    ("avg_pool3d 3-d", lambda L, F: F.avg_pool3d(L.ones(3, 4, 5), 2)),
    ("avg_pool3d pad", lambda L, F: F.avg_pool3d(L.ones(1, 1, 3, 3, 3), 2, padding=2)),
    ("Softmax2d 1-d", lambda L, F: L.nn.Softmax2d()(L.ones(5))),
    ("dropout1d 1-d", lambda L, F: F.dropout1d(L.ones(5))),
    ("alpha_dropout p", lambda L, F: F.alpha_dropout(L.ones(2), 1.5)),
    ("feature_alpha_dropout p", lambda L, F: F.feature_alpha_dropout(L.ones(2, 2), -1)),
]

# -- torch 2.13's answers (tests/parity/test_nn_layers_more_parity.py reads them off torch again)
# name -> torch's graph: (depth, node name), depth first
TORCH_CHAINS: dict[str, list[tuple[int, str]]] = {
    'group_norm': [(0, 'NativeGroupNormBackward0'), (1, 'AccumulateGrad')],
    'instance_norm affine': [(0, 'ViewBackward0'), (1, 'NativeBatchNormBackward0'),
                             (2, 'ViewBackward0'), (3, 'AccumulateGrad'), (2, 'RepeatBackward0'),
                             (3, 'AccumulateGrad')],
    'rms_norm': [(0, 'MulBackward0'), (1, 'AccumulateGrad'), (1, 'RsqrtBackward0'),
                 (2, 'AddBackward1'), (3, 'MeanBackward1'), (4, 'PowBackward0'),
                 (5, 'AccumulateGrad')],
    'avg_pool1d': [(0, 'SqueezeBackward1'), (1, 'AvgPool2DBackward0'), (2, 'UnsqueezeBackward0'),
                   (3, 'AccumulateGrad')],
    'adaptive_max_pool1d': [(0, 'SqueezeBackward1'), (1, 'AdaptiveMaxPool2DBackward0'),
                            (2, 'UnsqueezeBackward0'), (3, 'AccumulateGrad')],
    'lp_pool1d': [(0, 'PowBackward0'), (1, 'MulBackward0'), (2, 'MulBackward0'),
                  (3, 'SignBackward0'), (4, 'SqueezeBackward1'), (5, 'AvgPool2DBackward0'),
                  (6, 'UnsqueezeBackward0'), (7, 'PowBackward0'), (8, 'AccumulateGrad'),
                  (3, 'ReluBackward0'), (4, 'AbsBackward0'), (5, 'SqueezeBackward1'),
                  (6, 'AvgPool2DBackward0'), (7, 'UnsqueezeBackward0'), (8, 'PowBackward0'),
                  (9, 'AccumulateGrad')],
    'pad reflect': [(0, 'ReflectionPad1DBackward0'), (1, 'AccumulateGrad')],
    'pad replicate': [(0, 'ReplicationPad2DBackward0'), (1, 'AccumulateGrad')],
    'pad circular': [(0, 'CopySlices'), (1, 'CopySlices'), (2, 'CopySlices'),
                     (3, 'SliceBackward0'), (4, 'AccumulateGrad'), (2, 'SliceBackward0'),
                     (3, 'CopySlices'), (4, 'SliceBackward0'), (5, 'AccumulateGrad'),
                     (1, 'SliceBackward0'), (2, 'CopySlices'), (3, 'CopySlices'),
                     (4, 'SliceBackward0'), (5, 'AccumulateGrad'), (3, 'SliceBackward0'),
                     (4, 'CopySlices'), (5, 'SliceBackward0'), (6, 'AccumulateGrad')],
    'interpolate nearest': [(0, 'UpsampleNearest2DBackward0'), (1, 'AccumulateGrad')],
    'interpolate bilinear': [(0, 'UpsampleBilinear2DBackward0'), (1, 'AccumulateGrad')],
    'pixel_shuffle': [(0, 'PixelShuffleBackward0'), (1, 'AccumulateGrad')],
    'unfold': [(0, 'Im2ColBackward0'), (1, 'AccumulateGrad')],
    'fold': [(0, 'Col2ImBackward0'), (1, 'AccumulateGrad')],
    'bilinear': [(0, 'ViewBackward0'), (1, 'TrilinearBackward0'), (2, 'ViewBackward0'),
                 (3, 'AccumulateGrad'), (2, 'ViewBackward0'), (3, 'AccumulateGrad')],
    'alpha_dropout': [(0, 'AddBackward0'), (1, 'MulBackward0'), (2, 'AccumulateGrad')],
    'dropout1d unbatched': [(0, 'SqueezeBackward1'), (1, 'MulBackward0'),
                            (2, 'UnsqueezeBackward0'), (3, 'AccumulateGrad')],
    'Softmax2d': [(0, 'SoftmaxBackward0'), (1, 'AccumulateGrad')],
}
# name -> torch's result, rounded to 4 places
TORCH_VALUES: dict[str, list] = {
    'reflect 1d': [[[2.0, 1.0, 0.0, 1.0, 2.0, 1.0]]],
    'replicate 2d': [[[1.0, 1.0, 2.0], [3.0, 3.0, 4.0], [3.0, 3.0, 4.0]]],
    'circular 2d': [[[6.0, 4.0, 5.0, 6.0, 4.0], [3.0, 1.0, 2.0, 3.0, 1.0],
                     [6.0, 4.0, 5.0, 6.0, 4.0]]],
    'nearest 1.5': [[[0.0, 0.0, 1.0, 2.0, 2.0, 3.0]]],
    'linear': [[[0.0, 0.4, 1.0, 2.8, 4.0]]],
    'bilinear align': [[[[0.0, 1.0, 2.0], [2.0, 3.5, 5.0], [4.0, 6.0, 8.0]]]],
    'group_norm': [[-1.0, 1.0, -1.0, 1.0]],
    'rms_norm': [[0.8485, 1.1314]],
    'adaptive_max_pool2d': [[[7.0, 5.0], [9.0, 9.0]]],
    'lp_pool2d': [[[[5.0]]]],
    'pixel_unshuffle': [[[[0.0]], [[1.0]], [[2.0]], [[3.0]]]],
    'unfold': [[[0.0, 0.0, 0.0, 4.0], [0.0, 0.0, 3.0, 0.0], [0.0, 2.0, 0.0, 0.0],
                [1.0, 0.0, 0.0, 0.0]]],
    'fold': [[[[1.0, 5.0, 4.0]]]],
    'bilinear': [[18.0, 54.0]],
}
TORCH_REPRS: list[str] = [
    'GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)',
    'InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=False)',
    'RMSNorm((2, 3), eps=None, elementwise_affine=True)',
    'AvgPool1d(kernel_size=(3,), stride=(2,), padding=(1,))',
    'AdaptiveMaxPool2d(output_size=(2, None))',
    'LPPool1d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)',
    'ConvTranspose1d(4, 2, kernel_size=(3,), stride=(2,), output_padding=(1,))',
    'ReflectionPad1d((2, 2))',
    'ConstantPad2d(padding=(1, 1, 1, 1), value=0.5)',
    "Upsample(scale_factor=2.0, mode='bilinear')",
    "UpsamplingBilinear2d(size=(3, 4), mode='bilinear')",
    'PixelShuffle(upscale_factor=2)',
    'Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)',
    'Bilinear(in1_features=4, in2_features=5, out_features=6, bias=True)',
    'Softmax2d()',
    'FeatureAlphaDropout(p=0.2, inplace=False)',
]
# name -> torch's (exception type, text)
ERROR_TEXTS: dict[str, tuple[str, str]] = {
    'group_norm groups': ('RuntimeError',
                          'Expected number of channels in input to be divisible by num_groups, '
                          'but got input of shape [2, 4, 5] and num_groups=3'),
    'group_norm 1-d': ('RuntimeError',
                       'Expected at least 2 dimensions for input tensor but received 1'),
    'group_norm weight': ('RuntimeError',
                          'Expected weight to be a vector of size equal to the number of '
                          'channels in input, but got weight of shape [3] and input of shape '
                          '[2, 4, 5]'),
    'group_norm one value': ('ValueError',
                             'Expected more than 1 value per channel when training, got input '
                             'size [1, 2]'),
    'GroupNorm channels': ('ValueError', 'num_channels (4) must be divisible by num_groups (3)'),
    'instance_norm one element': ('ValueError',
                                  'Expected more than 1 spatial element when training, got '
                                  'input size torch.Size([2, 4, 1])'),
    'instance_norm running size': ('RuntimeError', 'running_mean should contain 8 elements not 6'),
    'InstanceNorm1d 4-d': ('ValueError', 'expected 2D or 3D input (got 4D input)'),
    'InstanceNorm1d affine size': ('ValueError',
                                   "expected input's size at dim=1 to match num_features (3), "
                                   'but got: 4.'),
    'rms_norm shape': ('RuntimeError',
                       'Given normalized_shape=[4], expected input with shape [*4], but got '
                       'input of size[2, 4, 5]'),
    'rms_norm weight': ('RuntimeError',
                        'Expected weight to be of same shape as normalized_shape, but got '
                        'weight of shape [4] and normalized_shape = [5]'),
    'avg_pool1d 1-d': ('RuntimeError',
                       'Expected 2 to 3 dimensions, but got 1-dimensional tensor for argument '
                       "#1 'self' (while checking arguments for avg_pool1d)"),
    'adaptive_avg_pool1d 1-d': ('RuntimeError',
                                'Expected 2 to 3 dimensions, but got 1-dimensional tensor for '
                                "argument #1 'self' (while checking arguments for "
                                'adaptive_avg_pool1d)'),
    'adaptive_max_pool1d 1-d': ('RuntimeError',
                                'Expected 2 to 3 dimensions, but got 1-dimensional tensor for '
                                "argument #1 'self' (while checking arguments for "
                                'adaptive_max_pool1d)'),
    'adaptive_max_pool2d 1-d': ('RuntimeError',
                                'adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: [5]'),
    'conv_transpose1d 4-d': ('RuntimeError',
                             'Expected 2D (unbatched) or 3D (batched) input to '
                             'conv_transpose1d, but got input of size: [2, 3, 4, 5]'),
    'conv_transpose1d output_padding': ('RuntimeError',
                                        'output padding must be smaller than either stride or '
                                        'dilation, but got output_padding_height: 0 '
                                        'output_padding_width: 2 stride_height: 1 stride_width: '
                                        '1 dilation_height: 1 dilation_width: 1'),
    'reflect too much': ('RuntimeError',
                         'Argument #4: Padding size should be less than the corresponding input '
                         'dimension, but got: padding (1, 5) at dimension 2 of input [2, 4, 5]'),
    'reflect 1-d input': ('NotImplementedError',
                          'Padding size 2 is not supported for 1D input tensor.\nSupported '
                          'combinations for non-constant padding:\n  - 2D or 3D input: padding '
                          'size = 2 (pads last dimension)\n  - 3D or 4D input: padding size = 4 '
                          '(pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads '
                          'last 3 dimensions)'),
    'pad unknown mode': ('NotImplementedError', 'Unrecognised padding mode foo'),
    'replicate 6 on 3-d': ('NotImplementedError',
                           'Padding size 6 is not supported for 3D input tensor.\nSupported '
                           'combinations for non-constant padding:\n  - 2D or 3D input: padding '
                           'size = 2 (pads last dimension)\n  - 3D or 4D input: padding size = '
                           '4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 '
                           '(pads last 3 dimensions)'),
    'circular twice': ('RuntimeError', 'Padding value causes wrapping around more than once.'),
    'pad odd': ('RuntimeError', 'Padding length must be divisible by 2'),
    'reflect value': ('RuntimeError', 'Padding mode "reflect" doesn\'t take in value argument'),
    'CircularPad2d 2-d': ('ValueError', 'expected 3D or 4D input (got 2D input)'),
    'bilinear on 3-d': ('NotImplementedError', 'Got 3D input, but bilinear mode needs 4D input'),
    'interpolate nothing': ('ValueError', 'either size or scale_factor should be defined'),
    'interpolate both': ('ValueError', 'only one of size or scale_factor should be defined'),
    'nearest align_corners': ('ValueError',
                              'align_corners option can only be set with the interpolating '
                              'modes: linear | bilinear | bicubic | trilinear'),
    'interpolate size rank': ('ValueError',
                              'Input and output must have the same number of spatial '
                              'dimensions, but got input with spatial dimensions of [5] and '
                              'output size of (3, 4). Please provide input tensor in (N, C, d1, '
                              'd2, ...,dK) format and output size in (o1, o2, ...,oK) format.'),
    'interpolate 2-d': ('NotImplementedError',
                        'Input Error: Only 3D, 4D and 5D input Tensors supported (got 2D) for '
                        'the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos '
                        '| area | nearest-exact (got nearest)'),
    'interpolate empty 1-d': ('RuntimeError',
                              'Input and output sizes should be greater than 0, but got input '
                              '(W: 5) and output (W: 0)'),
    'interpolate empty 2-d': ('RuntimeError',
                              'Input and output sizes should be greater than 0, but got input '
                              '(H: 3, W: 5) output (H: 0, W: 5)'),
    'pixel_shuffle channels': ('RuntimeError',
                               "pixel_shuffle expects its input's 'channel' dimension to be "
                               'divisible by the square of upscale_factor, but input.size(-3)=3 '
                               'is not divisible by 4'),
    'pixel_shuffle 2-d': ('RuntimeError',
                          'pixel_shuffle expects input to have at least 3 dimensions, but got '
                          'input with 2 dimension(s)'),
    'pixel_unshuffle height': ('RuntimeError',
                               'pixel_unshuffle expects height to be divisible by '
                               'downscale_factor, but input.size(-2)=3 is not divisible by 2'),
    'unfold too small': ('RuntimeError',
                         'Given input with spatial size (2, 2), kernel_size=(3, 3), '
                         'dilation=(1, 1), padding=(0, 0), calculated shape of the array of '
                         'sliding blocks as (0, 0), but its components must be at least one.'),
    'fold channels': ('RuntimeError',
                      "Expected size of input's dimension 1 to be divisible by the product of "
                      'kernel_size, but got input.size(1)=5 and kernel_size=(2, 2).'),
    'fold blocks': ('RuntimeError',
                    'Given output_size=(3, 3), kernel_size=(2, 2), dilation=(1, 1), padding=(0, '
                    "0), stride=(1, 1), expected size of input's dimension 2 to match the "
                    'calculated number of sliding blocks 2 * 2 = 4, but got input.size(2)=5.'),
    'bilinear input2': ('RuntimeError',
                        'bilinear(): input2 size does not match weight size: got 5 but expected 6'),
    'bilinear batch': ('RuntimeError',
                       'bilinear(): input batch dimensions do not match at dim 0: got 3 and 2'),
    'bilinear input1': ('RuntimeError',
                        'bilinear(): input1 size does not match weight size: got 4 but expected 3'),
    'bilinear bias': ('RuntimeError',
                      'bilinear(): bias size does not match weight size: got 5 but expected 6'),
    'bilinear dims': ('RuntimeError', 'bilinear(): input dimensions do not match: got 2 and 3'),
    'local_response_norm 2-d': ('ValueError',
                                'Expected 3D or higher dimensionality                          '
                                'input (got 2 dimensions)'),
    'avg_pool3d 3-d': ('RuntimeError', 'non-empty 4D or 5D (batch mode) tensor expected for input'),
    'avg_pool3d pad': ('RuntimeError',
                       'pad should be at most half of effective kernel size, but got pad=2, '
                       'kernel_size=2 and dilation=1'),
    'Softmax2d 1-d': ('ValueError', 'Softmax2d: expected input to be 3D or 4D, got 1D instead'),
    'dropout1d 1-d': ('RuntimeError',
                      'dropout1d: Expected 2D or 3D input, but received a 1D input. Note that '
                      'dropout1d exists to provide channel-wise dropout on inputs with 1 '
                      'spatial dimension, a channel dimension, and an optional batch dimension '
                      '(i.e. 2D or 3D inputs).'),
    'alpha_dropout p': ('ValueError', 'dropout probability has to be between 0 and 1, but got 1.5'),
    'feature_alpha_dropout p': ('ValueError',
                                'dropout probability has to be between 0 and 1, but got -1'),
}



@pytest.mark.parametrize("name", sorted(CHAINS))
def test_chains_are_torchs(name: str) -> None:
    fn, shape = CHAINS[name]
    v = np.random.default_rng(0).uniform(-2, 2, shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(gradviz, GF, gradviz.tensor(v, requires_grad=True))
    assert _chain(out) == TORCH_CHAINS[name]


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_are_torchs(name: str) -> None:
    fn, x = VALUES[name]
    out = fn(gradviz, GF, gradviz.tensor(x, dtype=gradviz.float64))
    np.testing.assert_allclose(out.numpy(), np.array(TORCH_VALUES[name]), rtol=1e-4, atol=5e-5)


def test_reprs_are_torchs() -> None:
    assert [repr(ctor(gradviz)) for ctor in REPRS] == TORCH_REPRS


@pytest.mark.parametrize(("name", "fn"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_torchs(name: str, fn: Callable[..., Any]) -> None:
    kind, text = ERROR_TEXTS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as info:  # noqa: PT011 - the type is checked below
            fn(gradviz, GF)
    assert type(info.value).__name__ == kind
    assert str(info.value).replace("gradviz.", "torch.") == text


# The nodes the layers added (tests/test_ops_forward.py's TORCH_SAVED lists their saved names).
NODES = sorted(
    ["NativeGroupNormBackward0", "TrilinearBackward0", "PixelShuffleBackward0",
     "AvgPool3DBackward0", "AvgPool3DBackwardBackward0",
     "PixelUnshuffleBackward0", "Im2ColBackward0", "Col2ImBackward0",
     "AdaptiveMaxPool2DBackward0", "AdaptiveMaxPool2DBackwardBackward0"]
    + [f"{kind}Pad{n}DBackward{b}" for kind in ("Reflection", "Replication") for n in (1, 2)
       for b in ("0", "Backward0")]
    + [f"Upsample{kind}Backward{b}" for kind in ("Nearest1D", "Nearest2D", "Linear1D",
                                                 "Bilinear2D") for b in ("0", "Backward0")])


def test_every_new_node_is_a_row_with_samples() -> None:
    from gradviz.ops import OPS

    rows = {op.node: op for op in OPS.values() if op.node in NODES}
    assert sorted(rows) == NODES
    assert all(op.samples for op in rows.values())


# -- behaviour beyond torch's answers ------------------------------------------------------------
COMPOSITES: list[tuple[str, Callable[..., Any], tuple]] = [
    ("instance_norm", lambda x, w: GF.instance_norm(x, weight=w[:3], bias=w[3:]),
     ((2, 3, 4), (6,))),
    ("rms_norm", lambda x, w: GF.rms_norm(x, (4,), w[:4]), ((2, 3, 4), (6,))),
    ("lp_pool2d", lambda x, w: GF.lp_pool2d(x * x + 0.5, 2, 2) * w[0], ((1, 2, 4, 4), (1,))),
    ("circular pad", lambda x, w: GF.pad(x, (1, 2, 2, 0), mode="circular") * w[0],
     ((2, 2, 3, 4), (1,))),
    ("bilinear", lambda x, w: GF.bilinear(x, x[:, :3], w.view(2, 4, 3)), ((5, 4), (24,))),
    ("area", lambda x, w: GF.interpolate(x, size=(2, 3), mode="area") * w[0],
     ((1, 2, 5, 7), (1,))),
]


@pytest.mark.parametrize(("name", "fn", "shapes"), COMPOSITES, ids=[c[0] for c in COMPOSITES])
def test_composites_gradcheck(name: str, fn: Callable[..., Any], shapes: tuple) -> None:
    rng = np.random.default_rng(0)
    inputs = [gradviz.tensor(rng.uniform(-1, 1, s), dtype=gradviz.float64, requires_grad=True)
              for s in shapes]
    assert gradviz.autograd.gradcheck(fn, inputs)
    assert gradviz.autograd.gradgradcheck(fn, inputs)


def test_instance_norm_module_tracks_the_batch_mean_of_its_statistics() -> None:
    m = nn.InstanceNorm1d(2, track_running_stats=True, momentum=0.5)
    x = gradviz.tensor([[[1.0, 3.0], [0.0, 4.0]], [[2.0, 2.0], [0.0, 0.0]]])
    m(x)
    # per (sample, channel) means 2, 2 / 2, 0 and unbiased variances 2, 8 / 0, 0
    np.testing.assert_allclose(m.running_mean.numpy(), [0.5 * 2.0, 0.5 * 1.0])
    np.testing.assert_allclose(m.running_var.numpy(), [0.5 + 0.5 * 1.0, 0.5 + 0.5 * 4.0])
    m.eval()
    y = m(x)  # evaluation with running statistics: no per-instance normalization
    np.testing.assert_allclose(y.numpy()[0, 0], (np.array([1.0, 3.0]) - 1.0) / np.sqrt(1 + 1e-5),
                               rtol=1e-6)


def test_group_norm_module_parameters_and_gradients() -> None:
    m = nn.GroupNorm(2, 4)
    assert [tuple(p.shape) for p in m.parameters()] == [(4,), (4,)]
    x = gradviz.randn(3, 4, 5, requires_grad=True)
    m(x).pow(2).sum().backward()
    assert x.grad.shape == x.shape and m.weight.grad.shape == (4,)
    # normalized per group: the output's group means are 0, whatever the input
    y = nn.GroupNorm(2, 4, affine=False)(x).detach().numpy().reshape(3, 2, -1)
    np.testing.assert_allclose(y.mean(-1), 0, atol=1e-6)


def test_alpha_dropout_keeps_mean_and_variance_and_feature_masks_are_per_channel() -> None:
    gradviz.manual_seed(0)
    x = gradviz.randn(200, 500)
    y = GF.alpha_dropout(x, 0.2, training=True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    z = GF.feature_alpha_dropout(gradviz.ones(4, 6, 3, 3), 0.5, training=True).numpy()
    assert all(len(np.unique(plane)) == 1 for plane in z.reshape(24, 9))
    assert len(np.unique(z)) == 2
    d = GF.dropout3d(gradviz.ones(2, 5, 2, 2, 2), 0.5).numpy().reshape(10, 8)
    assert all(len(np.unique(row)) == 1 for row in d) and set(np.unique(d)) <= {0.0, 2.0}


def test_pads_and_resampling_keep_their_gradients_where_torch_puts_them() -> None:
    # reflect (2, 1) of [0, 1, 2] reads [2, 1, 0, 1, 2, 1]: 0 once, 1 three times, 2 twice
    leaf = gradviz.zeros(3, requires_grad=True)
    GF.pad(leaf.view(1, 3), (2, 1), mode="reflect").sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [1.0, 3.0, 2.0])
    leaf = gradviz.zeros(1, 1, 2, 2, requires_grad=True)
    GF.interpolate(leaf, scale_factor=2).sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), np.full((1, 1, 2, 2), 4.0))


def test_conv_transpose1d_is_the_adjoint_of_conv1d() -> None:
    rng = np.random.default_rng(1)
    x = gradviz.tensor(rng.standard_normal((2, 3, 7)), dtype=gradviz.float64)
    w = gradviz.tensor(rng.standard_normal((4, 3, 3)), dtype=gradviz.float64)
    y = gradviz.conv1d(x, w, stride=2, padding=1)
    g = gradviz.tensor(rng.standard_normal(tuple(y.shape)), dtype=gradviz.float64)
    back = GF.conv_transpose1d(g, w, stride=2, padding=1)
    # <conv(x), g> == <x, conv_transpose(g)>
    np.testing.assert_allclose((y * g).sum().item(), (x * back).sum().item(), rtol=1e-10)
    m = nn.ConvTranspose1d(3, 2, 3, stride=2)
    assert m(gradviz.ones(1, 3, 4), output_size=[10]).shape == (1, 2, 10)


def test_conv_padding_modes_pad_first_then_convolve_unpadded() -> None:
    m = nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect")
    assert repr(m) == ("Conv2d(2, 3, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), "
                       "padding_mode=reflect)")
    assert m._reversed_padding_repeated_twice == (1, 1, 1, 1)
    y = m(gradviz.randn(1, 2, 4, 5, requires_grad=True))
    assert y.shape == (1, 3, 4, 5)
    assert y.grad_fn.name() == "ConvolutionBackward0" and y.grad_fn._saved_padding == (0, 0)
    assert y.grad_fn.next_functions[0][0].name() == "ReflectionPad2DBackward0"
    assert nn.Conv1d(1, 1, 4, padding="same",
                     padding_mode="circular")._reversed_padding_repeated_twice == [1, 2]
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(1, 1, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for '
                                         "ConvTranspose2d"):
        nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect")


def test_cosine_similarity_saves_the_dim_as_given_like_torch() -> None:
    """torch's SumBackward1 and LinalgVectorNormBackward0 keep dim=-1 as written, which its
    Python shows as the unsigned reading 18446744073709551615 (NOTE [saved as given]); a
    non-negative dim stays as it is."""
    a = gradviz.randn(3, 5, requires_grad=True)
    for module, want in ((nn.CosineSimilarity(dim=-1), (2**64 - 1,)),
                         (nn.CosineSimilarity(), (1,))):
        out = module(a, a * 2 + 1)
        nodes, stack = [], [out.grad_fn]
        while stack:
            node = stack.pop()
            if node is not None:
                nodes.append(node)
                stack.extend(n for n, _ in node.next_functions)
        dims = {n.name(): n._saved_dim for n in nodes
                if n.name() in ("SumBackward1", "LinalgVectorNormBackward0")}
        assert dims == {"SumBackward1": want, "LinalgVectorNormBackward0": want}
    out = nn.CosineSimilarity(dim=-1)(a, a * 2 + 1)
    np.testing.assert_allclose(out.detach().numpy(),
                               GF.cosine_similarity(a, a * 2 + 1, dim=1).detach().numpy())
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                                         r"\[-2, 1\], but got 2\)"):
        GF.cosine_similarity(a, a, dim=2)


# (fn(lib, F, x), x's dtype name, torch's exception type, the start of torch's text)
DTYPE_ERRORS: list[tuple[Callable[..., Any], str, str, str]] = [
    (lambda L, F, x: F.group_norm(x, 2), "int64", "NotImplementedError",
     "\"GroupNormKernelImpl\" not implemented for 'Long'"),
    (lambda L, F, x: F.instance_norm(x), "int64", "NotImplementedError",
     "\"batch_norm\" not implemented for 'Long'"),
    (lambda L, F, x: F.rms_norm(x, (5,)), "bool", "NotImplementedError",
     "\"rms_norm\" not implemented for 'Bool'"),
    (lambda L, F, x: F.avg_pool1d(x, 2), "bool", "NotImplementedError",
     "\"avg_pool2d\" not implemented for 'Bool'"),
    (lambda L, F, x: F.adaptive_max_pool1d(x, 2), "int64", "NotImplementedError",
     "\"adaptive_max_pool2d\" not implemented for 'Long'"),
    (lambda L, F, x: F.pad(x, (1, 1), mode="reflect"), "bool", "NotImplementedError",
     "\"reflection_pad1d\" not implemented for 'Bool'"),
    (lambda L, F, x: F.interpolate(x, scale_factor=2), "int64", "NotImplementedError",
     "\"compute_indices_weights_nearest\" not implemented for 'Long'"),
    (lambda L, F, x: F.interpolate(x[None], scale_factor=2, mode="bilinear"), "int32",
     "NotImplementedError", "\"upsample_bilinear2d_channels_last\" not implemented for 'Int'"),
    (lambda L, F, x: F.unfold(x, 2), "int64", "NotImplementedError",
     "\"im2col_out_cpu\" not implemented for 'Long'"),
    (lambda L, F, x: F.dropout1d(x), "int64", "RuntimeError",
     "result type Float can't be cast to the desired output type Long"),
    (lambda L, F, x: F.alpha_dropout(x, 0.5, True), "bool", "RuntimeError",
     "result type Float can't be cast to the desired output type Long"),
]


@pytest.mark.parametrize(("fn", "dtype", "kind", "text"), DTYPE_ERRORS,
                         ids=[e[3].split('"')[1] if '"' in e[3] else "dropout " + e[1]
                              for e in DTYPE_ERRORS])
def test_integer_and_bool_inputs_fail_as_in_torch(fn: Callable[..., Any], dtype: str,
                                                  kind: str, text: str) -> None:
    x = gradviz.tensor(np.arange(40).reshape(2, 4, 5) % 3).to(getattr(gradviz, dtype))
    with pytest.raises(Exception) as info:  # noqa: PT011 - the type is checked below
        fn(gradviz, GF, x)
    assert type(info.value).__name__ == kind
    assert str(info.value).startswith(text)  # gradviz may add what to do after torch's text
    assert fn(gradviz, GF, x.float()).dtype == gradviz.float32  # float32 stays float32
