"""Rows of the activations of torch.nn.functional (relu's relatives, softmax, attention)."""

from __future__ import annotations

import math

import numpy as np

from gradviz.ops import _formula as f
from gradviz.ops import _kernels as K
from gradviz.ops.opinfo import defop
from gradviz.ops.samples import A, R, Sample, W
from gradviz.tensor import Tensor


def _gelu_backward(grad, self, approximate):
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        t = f.tanh(k * (self + 0.044715 * self * self * self))
        dt = (1 - t * t) * (k * (1 + 3 * 0.044715 * self * self))
        return grad * (0.5 * (1 + t) + 0.5 * self * dt)
    cdf = 0.5 * (1 + f.erf(self * (1 / math.sqrt(2))))
    pdf = f.exp(-0.5 * self * self) * (1 / math.sqrt(2 * math.pi))
    return grad * (cdf + self * pdf)


def _silu_backward(grad, self):
    s = f.sigmoid(self)
    return grad * (s * (1 + self * (1 - s)))


defop("leaky_relu", "LeakyReluBackward0", K.leaky_relu, ("self",),
      internal="reached through F.leaky_relu (a Python function in torch too)",
      calls=("`F.leaky_relu`", ""),
      self=lambda grad, self, negative_slope: f.where(self > 0, grad, grad * negative_slope))
defop("leaky_relu_", "LeakyReluBackward1", K.leaky_relu, ("self",),
      doc="in-place leaky_relu_ (saves the result instead of the input)",
      calls=("`F.leaky_relu(x, inplace=True)`", ""),
      self=lambda grad, result, negative_slope: f.where(result > 0, grad,
                                                        grad * negative_slope))
defop("elu", "EluBackward0", K.elu, ("self",),
      internal="reached through F.elu (a Python function in torch too)",
      calls=("`F.elu`", ""),
      self=lambda grad, self, alpha, scale, input_scale: f.where(
          self > 0, grad * scale, grad * (alpha * scale * input_scale)
          * f.exp(self * input_scale)))
defop("elu_", "EluBackward1", K.elu, ("self",),
      doc="in-place elu_ (saves the result instead of the input)",
      calls=("`F.elu(x, inplace=True)`", ""),
      self=lambda grad, result, alpha, scale, input_scale: f.where(
          result > 0, grad * scale, grad * input_scale * (result + alpha * scale)))
defop("gelu", "GeluBackward0", K.gelu, ("self",),
      calls=("`F.gelu`", ""),
      self=_gelu_backward)
defop("silu", "SiluBackward0", K.silu, ("self",),
      internal="reached through F.silu (a Python function in torch too)",
      calls=("`F.silu`", ""),
      self=_silu_backward)
defop("softplus", "SoftplusBackward0", K.softplus, ("self",),
      calls=("`F.softplus`", ""),
      self=lambda grad, self, beta, threshold: f.where(self * beta > threshold, grad,
                                                       grad * f.sigmoid(self * beta)))
defop("softmax", "SoftmaxBackward0", K.softmax, ("self",),
      quiet=True,
      calls=("`gradviz.softmax`, `F.softmax`", "`.softmax()`"),
      self=lambda grad, result, dim: (grad - f.sum(grad * result, (dim,), True)) * result)
defop("log_softmax", "LogSoftmaxBackward0", K.log_softmax, ("self",),
      quiet=True,
      calls=("`gradviz.log_softmax`, `F.log_softmax`", "`.log_softmax()`"),
      self=lambda grad, result, dim: grad - f.exp(result) * f.sum(grad, (dim,), True))


# Attention (F.scaled_dot_product_attention, gradviz/nn/_attention.py). Its math path records
# _safe_softmax among matmuls; 4-d inputs that the CPU flash kernel takes record one node, whose
# backward PyTorch cannot differentiate again (a NotImplemented node under create_graph).
defop("_safe_softmax", "SafeSoftmaxBackward0", K.safe_softmax, ("self",),
      quiet=True,
      doc="softmax that gives 0 for a slice of only -inf (a query masked from every key)",
      calls=("inside `F.scaled_dot_product_attention` (math path)", ""),
      samples=(Sample(R(2, 3, 4), dim=2), Sample(R(3, 4), dim=0)),
      self=lambda grad, result, dim: (grad - f.sum(grad * result, (dim,), True)) * result)


_NO_FLASH_GG = "PyTorch's CPU flash attention kernel has no double backward (NotImplemented)"


def _flash_backward(which: int):
    def formula(grads, query, key, value, output, logsumexp, dropout_p, is_causal, attn_mask,
                scale):
        return f.op("_scaled_dot_product_flash_attention_for_cpu_backward", grads[0], query,
                    key, value, output, logsumexp, dropout_p=dropout_p, is_causal=is_causal,
                    attn_mask=attn_mask, scale=scale)[which]
    return formula


defop("_scaled_dot_product_flash_attention_for_cpu",
      "ScaledDotProductFlashAttentionForCpuBackward0", K.sdpa_flash_cpu,
      ("query", "key", "value"),
      outputs=("output", "logsumexp"), nondiff_outputs=(1,),
      doc="outputs (output, logsumexp); 4-d inputs of equal batch, heads and features, "
          "no dropout, a mask that needs no gradient",
      calls=("`F.scaled_dot_product_attention` (4-d)", ""),
      samples=(Sample(R(1, 2, 3, 4), R(1, 2, 5, 4), R(1, 2, 5, 4), gg=_NO_FLASH_GG),
               Sample(R(2, 1, 4, 3), R(2, 1, 4, 3), R(2, 1, 4, 3), is_causal=True, scale=0.7,
                      gg=_NO_FLASH_GG),
               Sample(R(1, 1, 2, 3), R(1, 1, 4, 3), R(1, 1, 4, 3), gg=_NO_FLASH_GG,
                      attn_mask=Tensor._make(np.array([[0.0, -1.0, 0.5, -np.inf],
                                                       [0.3, 0.0, -np.inf, -0.2]]))),
               Sample(R(1, 4, 2, 3), R(1, 2, 3, 3), R(1, 2, 3, 3), gg=_NO_FLASH_GG)),
      query=_flash_backward(0), key=_flash_backward(1), value=_flash_backward(2))


def _flash_backward_not_implemented(grads):
    raise RuntimeError("derivative for aten::_scaled_dot_product_flash_attention_for_cpu_"
                       "backward is not implemented")


defop("_scaled_dot_product_flash_attention_for_cpu_backward", "NotImplemented",
      K.sdpa_flash_cpu_backward, ("grad_out", "query", "key", "value", "out", "logsumexp"),
      internal="backward-only: the flash kernel's backward, recorded under create_graph",
      outputs=("grad_query", "grad_key", "grad_value"),
      doc="the flash kernel's backward, recorded under create_graph (no derivative)",
      calls=("the flash kernel's backward under `create_graph=True`", ""),
      grad_out=_flash_backward_not_implemented, query=_flash_backward_not_implemented,
      key=_flash_backward_not_implemented, value=_flash_backward_not_implemented,
      out=_flash_backward_not_implemented, logsumexp=_flash_backward_not_implemented)

# hardtanh (relu6 is hardtanh(0, 6)), celu, mish, prelu, glu, hardswish, hardsigmoid, logsigmoid,
# softshrink, hardshrink, threshold: each its own PyTorch node. selu is EluBackward0/1 (elu's
# rows with SELU's constants); softsign, tanhshrink and softmin are composites of existing rows
# (gradviz/nn/functional/). An in-place call of a row whose formula reads ``self`` records the
# same row: the dispatch point keeps the input as it was before the write, as PyTorch saves it.
def _mish_backward(grad, self):
    t = f.tanh(f.softplus(self))
    return grad * (t + self * f.sigmoid(self) * (1 - t * t))


def _glu_backward(grad, self, dim):
    d = K._glu_dim(dim) % len(self.shape)
    n = self.shape[d] // 2
    first, second = f.slice_dim(self, d, 0, n), f.slice_dim(self, d, n, 2 * n)
    s = f.sigmoid(second)
    return f.cat([grad * s, grad * first * s * (1 - s)], d)


def _log_sigmoid_backward(grads, self, buffer):
    g = grads[0]
    if f.is_tensor(g) or f.is_tensor(self):
        # create_graph: the derivative sigmoid(-x) written from self, so that it can be
        # differentiated again (buffer is a constant, not an input)
        return g * f.sigmoid(-self)
    # PyTorch's CPU kernel, from buffer = exp(-|x|): 1 / (1 + z) below 0, z / (1 + z) above
    return g * np.where(self < 0, 1 / (1 + buffer), buffer / (1 + buffer))


_ONE_SIXTH_F32 = float(np.float32(1 / 6))
# Points on every piece of the piecewise activations (hardswish's kinks are at -3 and 3).
_PIECES = W([[-4.0, -2.5, -0.7, -0.2], [0.3, 0.8, 2.9, 5.0]])

defop("hardtanh", "HardtanhBackward0", K.hardtanh, ("self",),
      internal="reached through F.hardtanh (a Python function in torch too)",
      doc="``clamp(input, min_val, max_val)`` with hardtanh's node; ``F.relu6`` is (0, 6)",
      calls=("`F.hardtanh`, `F.hardtanh_`, `F.relu6`, `nn.Hardtanh`, `nn.ReLU6`", ""),
      samples=(Sample(_PIECES), Sample(_PIECES, min_val=0, max_val=6),
               Sample(R(3, 4), min_val=-0.5, max_val=0.25)),
      self=lambda grad, self, min_val, max_val: f.where((self > min_val) & (self < max_val),
                                                        grad, 0.0))
defop("celu", "CeluBackward0", K.celu, ("self",),
      calls=("`F.celu`, `nn.CELU`", ""),
      samples=(Sample(A(3, 4)), Sample(A(3, 4), alpha=0.5)),
      self=lambda grad, self, alpha: f.where(self > 0, grad, grad * f.exp(self * (1 / alpha))))
defop("celu_", "CeluBackward1", K.celu, ("self",),
      doc="in-place celu_ (saves the result instead of the input)",
      calls=("`F.celu(x, inplace=True)`", ""),
      samples=(Sample(A(3, 4), alpha=0.5),),
      self=lambda grad, result, alpha: f.where(result > 0, grad,
                                               grad * (result * (1 / alpha) + 1)))
defop("mish", "MishBackward0", K.mish, ("self",),
      internal="reached through F.mish (a Python function in torch too)",
      calls=("`F.mish`, `nn.Mish`", ""),
      samples=(Sample(R(3, 4)), Sample(_PIECES)),
      self=_mish_backward)
# torch.nn.functional.prelu views a 1-D weight to broadcast over dimension 1, then runs this
# kernel. One formula serves both inputs in PyTorch, so both are saved whichever needs a grad.
defop("_prelu_kernel", "PreluKernelBackward0", K.prelu, ("self", "weight"),
      broadcasts=("weight",),
      calls=("`F.prelu`, `nn.PReLU`", ""),
      samples=(Sample(A(3, 4), R(1, 4)), Sample(A(2, 3, 2), R(1, 1, 1))),
      self=lambda grad, self, weight: f.where(self > 0, grad, grad * weight),
      weight=lambda grad, self, weight: f.where(self > 0, 0.0, grad * self))
defop("glu", "GluBackward0", K.glu, ("self",),
      internal="reached through F.glu (a Python function in torch too)",
      doc="``a * sigmoid(b)`` of the two halves along ``dim`` (shown unsigned, as PyTorch)",
      calls=("`F.glu`, `nn.GLU`", ""),
      samples=(Sample(R(3, 4), dim=2**64 - 1), Sample(R(4, 3), dim=0)),
      self=_glu_backward)
defop("hardswish", "HardswishBackward0", K.hardswish, ("self",),
      internal="reached through F.hardswish (a Python function in torch too)",
      calls=("`F.hardswish`, `nn.Hardswish`", ""),
      samples=(Sample(_PIECES),),
      self=lambda grad, self: f.where(self < -3, 0.0,
                                      f.where(self <= 3, grad * (self * (1 / 3) + 0.5), grad)))
defop("hardsigmoid", "HardsigmoidBackward0", K.hardsigmoid, ("self",),
      internal="reached through F.hardsigmoid (a Python function in torch too)",
      calls=("`F.hardsigmoid`, `nn.Hardsigmoid`", ""),
      samples=(Sample(_PIECES),),
      # PyTorch's CPU kernel multiplies by 1/6 rounded to float32, in every dtype: so do we
      self=lambda grad, self: f.where((self > -3) & (self < 3), grad * _ONE_SIXTH_F32, 0.0))
defop("log_sigmoid_forward", "LogSigmoidBackward0", K.log_sigmoid, ("self",),
      internal="reached through F.logsigmoid (a Python function in torch too)",
      outputs=("output", "buffer"), nondiff_outputs=(1,),
      doc="outputs (log(sigmoid(x)), buffer = exp(-|x|)), the CPU kernel's pair",
      calls=("`F.logsigmoid`, `nn.LogSigmoid`", ""),
      self=_log_sigmoid_backward)
defop("softshrink", "SoftshrinkBackward0", K.softshrink, ("self",),
      calls=("`F.softshrink`, `nn.Softshrink`", ""),
      samples=(Sample(_PIECES), Sample(A(3, 4), lambd=0.1)),
      self=lambda grad, self, lambd: f.where((self >= -lambd) & (self <= lambd), 0.0, grad))
defop("hardshrink", "HardshrinkBackward0", K.hardshrink, ("self",),
      calls=("`F.hardshrink`, `nn.Hardshrink`", ""),
      samples=(Sample(_PIECES), Sample(A(3, 4), lambd=0.1)),
      self=lambda grad, self, lambd: f.where((self >= -lambd) & (self <= lambd), 0.0, grad))
defop("threshold", "ThresholdBackward0", K.threshold, ("self",),
      calls=("`F.threshold`, `nn.Threshold`", ""),
      samples=(Sample(_PIECES, threshold=0.5, value=20.0),),
      self=lambda grad, self, threshold: f.op("threshold_backward", grad, self,
                                              threshold=threshold))
defop("threshold_", "ThresholdBackward1", K.threshold, ("self",),
      doc="in-place threshold_ (saves the input as it was, as ThresholdBackward0)",
      calls=("`F.threshold(x, t, v, inplace=True)`, `F.threshold_`", ""),
      samples=(Sample(_PIECES, threshold=0.5, value=20.0),),
      self=lambda grad, self, threshold: f.op("threshold_backward", grad, self,
                                              threshold=threshold))
# As in PyTorch, threshold's gradient is an op of its own: under create_graph it records
# ThresholdBackwardBackward0. `self` only says where the gradient passes: its gradient is zeros.
defop("threshold_backward", "ThresholdBackwardBackward0", K.threshold_backward,
      ("grad_output", "self"),
      internal="backward-only: recorded by threshold's formula under create_graph",
      doc="threshold's backward, recorded under create_graph",
      calls=("threshold's backward under `create_graph=True`", ""),
      samples=(Sample(R(2, 4), _PIECES, threshold=0.5),),
      grad_output=lambda grad, self, threshold: f.op("threshold_backward", grad, self,
                                                     threshold=threshold),
      self=lambda grad: f.zeros_like(grad))
