"""Rows of the losses of torch.nn.functional, and the two calls only composite losses record."""

from __future__ import annotations

import numpy as np

from gradviz.ops import _formula as f
from gradviz.ops import _kernels as K
from gradviz.ops.derivatives.reductions import _norm_backward
from gradviz.ops.opinfo import defop
from gradviz.ops.samples import A, R, Sample
from gradviz.tensor import Tensor

_ANY = np.logical_or.reduce  # ndarray.any without its Python wrapper (~1 us a training step)


def _nll_backward(grads, self, target, weight, reduction, ignore_index, total_weight):
    g = grads[0]
    shape = self.shape
    t = np.asarray(f.data(target))
    if weight is None and reduction and type(g) is np.ndarray and not _ANY(t == ignore_index,
                                                                             None):
        # NOTE [perf]: the usual call (unit weights, a reduction, nothing ignored): every
        # picked entry gets one value, -g (divided by the count for the mean); the numbers are
        # those of the weighted formula below (1 / total_weight in the gradient's dtype)
        one = g.dtype.type(1)
        w = one / np.asarray(f.data(total_weight), g.dtype) if reduction == 1 else one
        out = np.zeros(shape, g.dtype)  # f.at_targets for arrays, in line
        if len(shape) == 1:
            out[t] = g * (-w)
        else:
            out[np.arange(shape[0]), t] = g * (-w)
        return out
    safe, w = K.nll_weights(t, weight, shape[-1], ignore_index, f.dtype_of(g))
    if reduction == 1:
        w = w / np.asarray(f.data(total_weight), w.dtype)
    per_row = g * (-w)  # 0-d gradient for mean/sum, one per row for reduction='none'
    return f.at_targets(shape, safe, per_row)


def _numel(x):
    return int(np.prod(x.shape))


def _loss_scale(grad, self, reduction):
    return grad * (1.0 / _numel(self)) if reduction == 1 else grad


def _bce_self(grad, self, target, weight, reduction):
    g = _loss_scale(grad, self, reduction) * (self - target) / f.clamp_min((1 - self) * self,
                                                                         1e-12)
    return g if weight is None else g * weight


def _bce_target(grad, self, target, weight, reduction):
    g = _loss_scale(grad, self, reduction) * (f.clamp_min(f.log(1 - self), -100)
                                              - f.clamp_min(f.log(self), -100))
    return g if weight is None else g * weight


def _bce_logits_self(grad, self, target, weight, pos_weight, reduction):
    if pos_weight is None:
        g = f.sigmoid(self) - target
    else:
        t = pos_weight * target
        g = (t + 1 - target) * f.sigmoid(self) - t
    g = _loss_scale(grad, self, reduction) * g
    return g if weight is None else g * weight


def _bce_logits_target(grad, self, target, weight, pos_weight, reduction):
    if pos_weight is None:
        g = -self
    else:
        g = pos_weight * f.softplus(-self) - f.softplus(self)
    g = _loss_scale(grad, self, reduction) * g
    return g if weight is None else g * weight


defop("nll_loss", "NllLossBackward0", K.nll_loss, ("self",),
      internal="reached through F.nll_loss and F.cross_entropy (a Python function in torch too)",
      outputs=("output", "total_weight"), nondiff_outputs=(1,),
      doc="reduction is 0 (none), 1 (mean) or 2 (sum), as PyTorch saves it",
      calls=("`F.nll_loss`, `F.cross_entropy`", ""),
      self=_nll_backward)
defop("mse_loss", "MseLossBackward0", K.mse_loss, ("self", "target"),
      internal="reached through F.mse_loss (a Python function in torch too)",
      quiet=True,
      calls=("`F.mse_loss`", ""),
      self=lambda grad, self, target, reduction: _loss_scale(grad, self, reduction) * 2
      * (self - target),
      target=lambda grad, self, target, reduction: _loss_scale(grad, self, reduction) * -2
      * (self - target))
defop("binary_cross_entropy", "BinaryCrossEntropyBackward0", K.binary_cross_entropy,
      ("self", "target"),
      internal="reached through F.binary_cross_entropy (a Python function in torch too)",
      calls=("`F.binary_cross_entropy`", ""),
      self=_bce_self,
      target=_bce_target)
defop("binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0",
      K.binary_cross_entropy_with_logits, ("self", "target"),
      calls=("`F.binary_cross_entropy_with_logits`", ""),
      self=_bce_logits_self,
      target=_bce_logits_target)


# smooth_l1_loss, huber_loss, soft_margin_loss: their own nodes. kl_div, cosine_similarity,
# normalize, margin_ranking_loss are composites of existing rows (gradviz/nn/functional/).
def _smooth_l1_grad(grad, self, target, reduction, beta):
    d = self - target
    return _loss_scale(grad, self, reduction) * f.where(f.abs(d) < beta, d * (1 / beta),
                                                        f.sign(d))


def _huber_grad(grad, self, target, reduction, delta):
    d = self - target
    return _loss_scale(grad, self, reduction) * f.where(f.abs(d) < delta, d,
                                                        f.sign(d) * delta)


def _soft_margin_grad(grad, self, target, reduction):
    # d/dx log(1 + exp(-y x)) = -y * sigmoid(-y x); PyTorch has no formula for the target
    return _loss_scale(grad, self, reduction) * -target * f.sigmoid(-(target * self))


_SIGNS = Tensor._make(np.array([[1.0, -1.0, -1.0, 1.0], [-1.0, 1.0, 1.0, 1.0],
                                 [1.0, -1.0, 1.0, -1.0]]))

defop("smooth_l1_loss", "SmoothL1LossBackward0", K.smooth_l1_loss, ("self", "target"),
      internal="reached through F.smooth_l1_loss (a Python function in torch too)",
      calls=("`F.smooth_l1_loss` (beta > 0), `nn.SmoothL1Loss`", ""),
      samples=(Sample(R(3, 4), R(3, 4)), Sample(R(3, 4), R(3, 4), reduction=2, beta=0.3),
               Sample(R(2, 3), R(2, 3), reduction=0, beta=2.0)),
      self=lambda grad, self, target, reduction, beta: _smooth_l1_grad(grad, self, target,
                                                                        reduction, beta),
      target=lambda grad, self, target, reduction, beta: -_smooth_l1_grad(grad, self, target,
                                                                         reduction, beta))
defop("huber_loss", "HuberLossBackward0", K.huber_loss, ("self", "target"),
      internal="reached through F.huber_loss (a Python function in torch too)",
      calls=("`F.huber_loss`, `nn.HuberLoss`", ""),
      samples=(Sample(R(3, 4), R(3, 4)), Sample(R(3, 4), R(3, 4), reduction=2, delta=0.3),
               Sample(R(2, 3), R(2, 3), reduction=0, delta=2.0)),
      self=lambda grad, self, target, reduction, delta: _huber_grad(grad, self, target,
                                                                     reduction, delta),
      target=lambda grad, self, target, reduction, delta: -_huber_grad(grad, self, target,
                                                                      reduction, delta))
# The target is an argument, not an input: PyTorch has no formula for it, so no edge.
defop("soft_margin_loss", "SoftMarginLossBackward0", K.soft_margin_loss, ("self",),
      internal="reached through F.soft_margin_loss (a Python function in torch too)",
      calls=("`F.soft_margin_loss`, `nn.SoftMarginLoss`", ""),
      samples=(Sample(R(3, 4), target=_SIGNS), Sample(R(3, 4), target=_SIGNS, reduction=0)),
      self=_soft_margin_grad)
# The two C++ calls of the composite losses that no other row records: at::norm(x, p, dim)
# (pairwise_distance) and tensor - Scalar (cosine_embedding_loss).
defop("norm_dim", "NormBackward1", K.norm_dim, ("self",),
      internal="at::norm(self, p, dim): recorded only inside F.pairwise_distance, a composite",
      quiet=True,
      doc="at::norm(self, p, dim, keepdim), as F.pairwise_distance calls it",
      calls=("`F.pairwise_distance`, `nn.PairwiseDistance`", ""),
      samples=(Sample(A(3, 4), p=2.0, dim=(1,), keepdim=False),
               Sample(A(3, 4), p=1.0, dim=(0,), keepdim=True),
               Sample(A(2, 3), p=3.0, dim=(1,), keepdim=False)),
      self=lambda grad, self, result, p, dim, keepdim: _norm_backward(grad, self, result, p,
                                                                      dim, keepdim))
defop("sub_scalar", "SubBackward1", K.sub_scalar, ("self",),
      internal="aten::sub.Scalar: recorded only inside composites torch decomposes in C++ "
               "(gradviz.sub(x, 2) records sub, as torch's does)",
      promotes=True,
      doc="tensor - Scalar inside PyTorch's C++ decompositions (cosine_embedding_loss)",
      calls=("inside `F.cosine_embedding_loss`", ""),
      samples=(Sample(R(2, 3), other=0.5),),
      self=lambda grad: grad)
