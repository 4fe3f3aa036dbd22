"""Rows of the normalizations: layer norm, group norm, batch norm."""

from __future__ import annotations

from gradviz.ops import _formula as f
from gradviz.ops import _kernels as K
from gradviz.ops.opinfo import defop
from gradviz.ops.samples import R, Sample


def _layer_norm_backward(which, grads, input, normalized_shape, result1, result2, weight, bias,
                         eps):
    g = grads[0]
    nd = len(input.shape)
    axes = tuple(range(nd - len(normalized_shape), nd))
    mean, rstd = f.layer_norm_stats(input, axes, eps, result1, result2)
    xhat = (input - mean) * rstd
    if which == "weight":
        return f.sum(g * xhat, tuple(range(nd - len(normalized_shape))))
    if which == "bias":
        return f.sum(g, tuple(range(nd - len(normalized_shape))))
    gw = g if weight is None else g * weight
    return rstd * (gw - f.mean(gw, axes) - xhat * f.mean(gw * xhat, axes))


defop("layer_norm", "NativeLayerNormBackward0", K.layer_norm, ("input", "weight", "bias"),
      outputs=("result0", "result1", "result2"), nondiff_outputs=(1, 2), hidden=("eps",),
      doc="outputs (y, mean, rstd); eps is kept for create_graph but not shown, as in PyTorch",
      calls=("`F.layer_norm`", ""),
      input=lambda grads, input, normalized_shape, result1, result2, weight, bias, eps:
      _layer_norm_backward("input", grads, input, normalized_shape, result1, result2, weight,
                           bias, eps),
      weight=lambda grads, input, normalized_shape, result1, result2, weight, bias, eps:
      _layer_norm_backward("weight", grads, input, normalized_shape, result1, result2, weight,
                           bias, eps),
      bias=lambda grads, input, normalized_shape, result1, result2, weight, bias, eps:
      _layer_norm_backward("bias", grads, input, normalized_shape, result1, result2, weight,
                           bias, eps))


# native_group_norm: its own node (NativeGroupNormBackward0, which shows eps). instance_norm is
# batch_norm over a (1, N * C, ...) view and rms_norm a composite of existing rows
# (gradviz/nn/functional/).
def _group_norm_backward(which, grads, input, weight, result1, result2, N, C, HxW, group, eps):
    g = grads[0]
    nd = len(input.shape)
    reduce_dims = (0,) + tuple(range(2, nd))
    per_group = C // group * HxW  # spelled out, not -1: an empty batch has N = 0
    xg = input.reshape((N, group, per_group))
    mean, rstd = f.layer_norm_stats(xg, (2,), eps, result1.reshape((N, group, 1)),
                                    result2.reshape((N, group, 1)))
    xhat = (xg - mean) * rstd
    if which == "bias":
        return f.sum(g, reduce_dims)
    if which == "weight":
        return f.sum(g * xhat.reshape(tuple(input.shape)), reduce_dims)
    gw = g if weight is None else g * weight.reshape((1, C) + (1,) * (nd - 2))
    gw = gw.reshape((N, group, per_group))
    gx = rstd * (gw - f.mean(gw, (2,)) - xhat * f.mean(gw * xhat, (2,)))
    return gx.reshape(tuple(input.shape))


defop("native_group_norm", "NativeGroupNormBackward0", K.native_group_norm,
      ("input", "weight", "bias"),
      outputs=("result0", "result1", "result2"), nondiff_outputs=(1, 2),
      doc="outputs (y, mean, rstd), the statistics of shape (N, group)",
      calls=("`F.group_norm`, `nn.GroupNorm`", ""),
      samples=(Sample(R(2, 4, 3), R(4), R(4), N=2, C=4, HxW=3, group=2, eps=1e-5),
               Sample(R(3, 6, 2, 2), None, None, N=3, C=6, HxW=4, group=3, eps=1e-3),
               Sample(R(2, 3, 4), R(3), None, N=2, C=3, HxW=4, group=1, eps=1e-5)),
      input=lambda grads, input, weight, result1, result2, N, C, HxW, group, eps:
      _group_norm_backward("input", grads, input, weight, result1, result2, N, C, HxW, group,
                           eps),
      weight=lambda grads, input, weight, result1, result2, N, C, HxW, group, eps:
      _group_norm_backward("weight", grads, input, weight, result1, result2, N, C, HxW, group,
                           eps),
      bias=lambda grads, input, weight, result1, result2, N, C, HxW, group, eps:
      _group_norm_backward("bias", grads, input, weight, result1, result2, N, C, HxW, group,
                           eps))


def _batch_norm_backward(which, grads, input, weight, running_mean, running_var, result1,
                         result2, training, eps):
    g = grads[0]
    nd = len(input.shape)
    axes = (0,) + tuple(range(2, nd))
    shape = (1, -1) + (1,) * (nd - 2)
    if training:  # the batch's statistics (recomputed from input under create_graph)
        mean, rstd = f.layer_norm_stats(input, axes, eps, result1.reshape(shape),
                                        result2.reshape(shape))
    else:  # the running statistics: constants
        mean, rstd = running_mean.reshape(shape), (running_var.reshape(shape) + eps) ** -0.5
    if which == "bias":
        return f.sum(g, axes)
    xhat = (input - mean) * rstd
    if which == "weight":
        return f.sum(g * xhat, axes)
    gw = g if weight is None else g * weight.reshape(shape)
    if not training:
        return gw * rstd
    return rstd * (gw - f.mean(gw, axes) - xhat * f.mean(gw * xhat, axes))


defop("native_batch_norm", "NativeBatchNormBackward0", K.native_batch_norm,
      ("input", "weight", "bias"),
      outputs=("result0", "result1", "result2"), nondiff_outputs=(1, 2),
      doc="outputs (y, save_mean, save_invstd), empty in evaluation; the running statistics "
          "are updated in place in training",
      calls=("`gradviz.batch_norm`, `F.batch_norm`", ""),
      input=lambda grads, input, weight, running_mean, running_var, result1, result2, training,
      eps: _batch_norm_backward("input", grads, input, weight, running_mean, running_var,
                                result1, result2, training, eps),
      weight=lambda grads, input, weight, running_mean, running_var, result1, result2, training,
      eps: _batch_norm_backward("weight", grads, input, weight, running_mean, running_var,
                                result1, result2, training, eps),
      bias=lambda grads, input, weight, running_mean, running_var, result1, result2, training,
      eps: _batch_norm_backward("bias", grads, input, weight, running_mean, running_var,
                                result1, result2, training, eps))
