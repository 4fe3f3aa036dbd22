"""Loss functions, decomposed as PyTorch decomposes them (``cross_entropy`` is ``log_softmax``
then ``nll_loss``)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from gradviz.autograd.grad_mode import no_grad
from gradviz.nn.functional.common import _no_grad_arg, _no_int, _size
from gradviz.ops import functional as _F
from gradviz.ops.derivatives import OPS
from gradviz.ops.dispatch import dispatch, dispatch_inplace, general_dispatch
from gradviz.tensor import Tensor

__all__ = [
    "nll_loss", "cross_entropy", "mse_loss", "l1_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "smooth_l1_loss", "huber_loss", "kl_div",
    "margin_ranking_loss", "soft_margin_loss", "hinge_embedding_loss", "cosine_embedding_loss",
    "poisson_nll_loss", "gaussian_nll_loss"
]


_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction(reduction: str, size_average: Any = None, reduce: Any = None) -> int:
    if size_average is not None or reduce is not None:
        warnings.warn("size_average and reduce args will be deprecated, please use "
                      "reduction='sum' instead.", stacklevel=3)
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    """Negative log likelihood of class indices ``target`` under log-probabilities ``input``
    of shape ``(C,)`` or ``(N, C)``, optionally class-weighted (``NllLossBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.nll_loss(gradviz.tensor([[-1.0, -2.0]]), gradviz.tensor([1]))
        tensor(2.)
    """
    return _nll_loss(input, target, weight, ignore_index,
                     _reduction(reduction, size_average, reduce))


def _nll_loss(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int,
              r: int) -> Tensor:
    """``nll_loss`` with its reduction as the number PyTorch saves (what ``cross_entropy``
    calls, its arguments already checked)."""
    if not isinstance(target, Tensor):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{type(target).__name__}")
    # (the arrays' shapes: called once per training step, this avoids building Size objects)
    shape, tshape = input._data.shape, target._data.shape
    nd, tnd = len(shape), len(tshape)
    if nd not in (1, 2):
        raise RuntimeError(
            f"nll_loss: gradviz supports inputs of shape (C,) or (N, C), got "
            f"{list(shape)}; move the class dimension last and flatten the rest, e.g. "
            "input.movedim(1, -1).reshape(-1, C) with target.reshape(-1)")
    if nd == 2 and tnd == 1 and shape[0] != tshape[0] or (nd == 2 and tnd != 1) or (
            nd == 1 and tnd != 0):
        if nd == 2 and tnd == 1:
            raise ValueError(f"Expected input batch_size ({shape[0]}) to match target "
                             f"batch_size ({tshape[0]}).")
        raise RuntimeError(f"0D or 1D target tensor expected, multi-target not supported "
                           f"(nll_loss: input {list(shape)}, target {list(tshape)})")
    # torch checks the batch size first, then the dtype (a float target of the right length).
    if target._data.dtype.kind not in "iu":
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{target.dtype._legacy[:-6]}")
    n_classes = shape[-1]
    if weight is not None:
        _no_grad_arg("nll_loss_forward", "weight", weight)
        if weight.shape != (n_classes,):
            raise RuntimeError(f"weight tensor should be defined either for all {n_classes} "
                               f"classes or no classes but got weight tensor of shape: "
                               f"{list(weight.shape)}")
    t = target._data
    # (the ufuncs' reduce: ndarray.min/max add a Python wrapper each, ~1 us on a training step)
    if t.size and (_MIN(t, None) < 0 or _MAX(t, None) >= n_classes):  # look closer (ignore_index)
        bad = (t != ignore_index) & ((t < 0) | (t >= n_classes))
        if bad.any():
            raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")
    output, _ = general_dispatch(OPS["nll_loss"], input, target=target, weight=weight,
                                 reduction=r, ignore_index=int(ignore_index))
    return output


_MIN, _MAX = np.minimum.reduce, np.maximum.reduce


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy of logits ``input`` (``(C,)`` or ``(N, C)``) with class indices or class
    probabilities ``target``, recorded as PyTorch decomposes it: ``log_softmax`` over the class
    dimension, then ``nll_loss`` (indices) or ``-(log_probs * target).sum()`` (probabilities);
    ``label_smoothing`` adds PyTorch's smoothing term (``(1 - ε) * nll + ε / C * smooth``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.cross_entropy(gradviz.tensor([[0.0, 0.0]]), gradviz.tensor([1]))
        tensor(0.6931)
    """
    r = _reduction(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    shape = input._data.shape
    class_dim = 0 if len(shape) == 1 else 1
    n_classes = shape[class_dim]
    lsm = _F.log_softmax(input, class_dim)
    # As torch: a target shaped like the input holds class probabilities; any other target
    # holds class indices, and nll_loss says what is wrong with it (a float one: its dtype).
    if isinstance(target, Tensor) and target._data.dtype.kind == "f" and \
            target.shape == input.shape:
        wshape = tuple(n_classes if d == class_dim else 1 for d in range(len(shape)))
        if label_smoothing > 0:  # C++ Scalar arithmetic: MulBackward1, AddBackward1
            target = dispatch(OPS["add_scalar"], dispatch(OPS["mul_scalar"], target,
                                                          other=1 - label_smoothing),
                              other=label_smoothing / n_classes)
        prod = lsm * target
        if weight is not None:
            prod = prod * _F.view(weight, wshape)
        if r == 1:
            return dispatch(OPS["div_scalar"], -_F.sum(prod), other=input.numel() // n_classes)
        if r == 2:
            return -_F.sum(prod)
        return -_F.sum(prod, class_dim)
    nll = _nll_loss(lsm, target, weight, ignore_index, r)
    if label_smoothing == 0:
        return nll
    wshape = tuple(n_classes if d == class_dim else 1 for d in range(len(shape)))
    ignore_mask = target == ignore_index
    if weight is not None:
        smooth = -_F.sum(lsm * _F.view(weight, wshape), class_dim)
    else:
        smooth = -_F.sum(lsm, class_dim)
    _F.masked_fill_(smooth, ignore_mask, 0.0)
    if r == 1:
        keep = np.logical_not(ignore_mask._data)
        if weight is not None:
            denom = Tensor._make(np.asarray(weight._data[target._data[keep]].sum()))
        else:
            denom = Tensor._make(np.asarray(keep.sum()))
        ret = _F.sum(smooth) / denom
    elif r == 2:
        ret = _F.sum(smooth)
    else:
        ret = smooth
    return _F.add(dispatch(OPS["mul_scalar"], nll, other=1 - label_smoothing),
                  dispatch(OPS["mul_scalar"], ret, other=label_smoothing / n_classes))


def _broadcast_pair(name: str, input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    """PyTorch's losses broadcast ``input`` and ``target`` (with a warning), expanding only the
    tensors whose shape changes (``torch.broadcast_tensors``)."""
    if target.shape == input.shape:
        return input, target
    warnings.warn(f"Using a target size ({_size(target.shape)}) that is different to the input "
                  f"size ({_size(input.shape)}). This will likely lead to incorrect results due "
                  "to broadcasting. Please ensure they have the same size.", stacklevel=3)
    try:
        shape = tuple(np.broadcast_shapes(input.shape, target.shape))
    except ValueError:
        nd = max(input.ndim, target.ndim)
        for k in range(1, nd + 1):
            a = input.shape[-k] if k <= input.ndim else 1
            b = target.shape[-k] if k <= target.ndim else 1
            if a != b and a != 1 and b != 1:
                raise RuntimeError(
                    f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                    f"non-singleton dimension {nd - k} ({name}: input {list(input.shape)}, "
                    f"target {list(target.shape)})") from None
        raise
    if input.shape != shape:
        input = _F.expand(input, shape)
    if target.shape != shape:
        target = _F.expand(target, shape)
    return input, target


def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    """Mean (or summed) squared error (``MseLossBackward0``; both inputs differentiable).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.mse_loss(gradviz.tensor([1.0, 3.0]), gradviz.tensor([0.0, 0.0]))
        tensor(5.)
    """
    r = _reduction(reduction, size_average, reduce)
    input, target = _broadcast_pair("mse_loss", input, target)
    return dispatch(OPS["mse_loss"], input, target, reduction=r)


def l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
            reduction: str = "mean") -> Tensor:
    """Mean (or summed) absolute error, recorded as PyTorch decomposes it:
    ``(input - target).abs()`` then ``mean``/``sum``.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.l1_loss(gradviz.tensor([1.0, -3.0]), gradviz.tensor([0.0, 0.0]))
        tensor(2.)
    """
    r = _reduction(reduction, size_average, reduce)
    input, target = _broadcast_pair("l1_loss", input, target)
    diff = _F.abs(_F.sub(input, target))
    return _F.mean(diff) if r == 1 else _F.sum(diff) if r == 2 else diff


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: Any = None, reduce: Any = None, reduction: str = "mean"
                         ) -> Tensor:
    """Binary cross entropy of probabilities ``input`` with ``target``, logs clamped at -100
    as in PyTorch (``BinaryCrossEntropyBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.binary_cross_entropy(gradviz.tensor([0.5]), gradviz.tensor([1.0]))
        tensor(0.6931)
    """
    r = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({_size(target.shape)}) that is different to the "
                         f"input size ({_size(input.shape)}) is deprecated. Please ensure they "
                         "have the same size.")
    x, y = input._data, target._data
    if x.size and ((x < 0) | (x > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    if y.size and ((y < 0) | (y > 1)).any():
        raise RuntimeError("all elements of target should be between 0 and 1")
    if weight is not None:
        _no_grad_arg("binary_cross_entropy", "weight", weight)
        weight = _F.expand(weight, tuple(np.broadcast_shapes(target.shape, weight.shape)))
    return dispatch(OPS["binary_cross_entropy"], input, target, weight=weight, reduction=r)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, size_average: Any = None,
                                     reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Binary cross entropy of logits ``input`` (sigmoid folded in, computed stably), with
    optional ``weight`` and positive-class ``pos_weight``
    (``BinaryCrossEntropyWithLogitsBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.binary_cross_entropy_with_logits(gradviz.tensor([0.0]), gradviz.tensor([1.0]))
        tensor(0.6931)
    """
    r = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({_size(target.shape)}) must be the same as input size "
                         f"({_size(input.shape)})")
    _no_grad_arg("binary_cross_entropy_with_logits", "weight", weight)
    _no_grad_arg("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    return dispatch(OPS["binary_cross_entropy_with_logits"], input, target, weight=weight,
                    pos_weight=pos_weight, reduction=r)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """Squared error ``0.5 * d**2 / beta`` below ``beta``, absolute error ``|d| - 0.5 * beta``
    above (``SmoothL1LossBackward0``). ``beta=0`` is :func:`l1_loss`, recorded as such.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.smooth_l1_loss(gradviz.tensor([0.5, 3.0]), gradviz.zeros(2))
        tensor(1.3125)
    """
    r = _reduction(reduction, size_average, reduce)
    input, target = _broadcast_pair("smooth_l1_loss", input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return l1_loss(input, target, reduction={0: "none", 1: "mean", 2: "sum"}[r])
    _no_int("smooth_l1_loss", input, "smooth_l1_cpu")
    return dispatch(OPS["smooth_l1_loss"], input, target, reduction=r, beta=beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """Squared error ``0.5 * d**2`` below ``delta``, ``delta * (|d| - 0.5 * delta)`` above
    (``HuberLossBackward0``); with ``weight``, the unreduced loss times ``weight`` then
    reduced (``MulBackward0``, ``MeanBackward0``/``SumBackward0``), as PyTorch does.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.huber_loss(gradviz.tensor([0.5, 3.0]), gradviz.zeros(2), delta=2.0)
        tensor(2.0625)
    """
    if weight is not None and weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    if weight is not None and reduction not in _REDUCTIONS:
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', "
                         "'mean', 'sum'.")
    r = _reduction(reduction if weight is None else "none")
    input, target = _broadcast_pair("huber_loss", input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _no_int("huber_loss", input, "huber_cpu")
    loss = dispatch(OPS["huber_loss"], input, target, reduction=r, delta=delta)
    if weight is None:
        return loss
    loss = _F.mul(loss, weight)
    return loss if reduction == "none" else _F.sum(loss) if reduction == "sum" else _F.mean(loss)


_KL_MEAN_WARNING = (
    "reduction: 'mean' divides the total loss by both the batch size and the support size."
    "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
    "'mean' will be changed to behave the same as 'batchmean' in the next major release.")


def kl_div(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """The Kullback-Leibler divergence of ``target`` from log-probabilities ``input``,
    recorded as PyTorch composes it: ``xlogy(target, target) - target * input`` (with
    ``log_target``, ``exp(target) * (target - input)``), then the reduction;
    ``'batchmean'`` is the sum divided by the batch size (``DivBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> p = gradviz.tensor([[0.5, 0.5]])
        >>> F.kl_div(p.log(), p, reduction="batchmean")
        tensor(0.)
    """
    if size_average is not None or reduce is not None:
        r = _reduction("mean", size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn(_KL_MEAN_WARNING, stacklevel=2)
        r = _reduction("sum" if reduction == "batchmean" else reduction)
    if log_target:
        out = _F.mul(_F.exp(target), _F.sub(target, input))
    else:
        # xlogy(target, target) records XlogyBackward0 only when the target needs a gradient
        out = _F.sub(_F.xlogy(target, target), _F.mul(target, input))
    if r == 1:
        out = _F.mean(out)
    elif r == 2:
        out = _F.sum(out)
    if reduction == "batchmean" and input.ndim != 0:
        out = out / input.shape[0]
    return out


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: Any = None, reduce: Any = None, reduction: str = "mean"
                        ) -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``, reduced, recorded as PyTorch's C++
    composes it (``SubBackward0``, ``MulBackward0``, ``AddBackward1``, ``ClampMinBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.margin_ranking_loss(gradviz.tensor([1.0, 0.0]), gradviz.tensor([0.0, 1.0]),
        ...                       gradviz.tensor([1.0, 1.0]), margin=0.5)
        tensor(0.7500)
    """
    r = _reduction(reduction, size_average, reduce)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {_size(input1.shape)}, input2: {_size(input2.shape)}, target: "
            f"{_size(target.shape)} ")
    out = _F.mul(_F.neg(target), _F.sub(input1, input2))
    out = dispatch(OPS["add_scalar"], out, other=margin)
    out = dispatch_inplace(OPS["clamp_min"], out, min=0)
    return _F.mean(out) if r == 1 else _F.sum(out) if r == 2 else out


def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))``, reduced (``SoftMarginLossBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.soft_margin_loss(gradviz.tensor([0.0]), gradviz.tensor([1.0]))
        tensor(0.6931)
    """
    r = _reduction(reduction, size_average, reduce)
    _no_grad_arg("soft_margin_loss", "target", target)
    return dispatch(OPS["soft_margin_loss"], input, target=target, reduction=r)


def _constant(value: float, like: Tensor) -> Tensor:
    """A C++ Scalar on the left of ``-``: a 0-d constant of ``like``'s dtype (``SubBackward0``
    then has no edge for it, as in PyTorch)."""
    return Tensor._make(np.asarray(value, like._data.dtype))


def _reduce(loss: Tensor, r: int) -> Tensor:
    """PyTorch's ``apply_loss_reduction``: ``mean()``, ``sum()`` or the loss itself."""
    return _F.mean(loss) if r == 1 else _F.sum(loss) if r == 2 else loss


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: Any = None, reduce: Any = None, reduction: str = "mean"
                         ) -> Tensor:
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1, reduced;
    recorded as PyTorch's C++ composes it (``SubBackward0``, ``ClampMinBackward0``, two
    ``WhereBackward0``, ``AddBackward0``).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.hinge_embedding_loss(gradviz.tensor([0.3, 2.0]), gradviz.tensor([-1.0, 1.0]))
        tensor(1.3500)
    """
    r = _reduction(reduction, size_average, reduce)
    zeros = _F.zeros_like(input)
    margin_clamp = dispatch_inplace(OPS["clamp_min"], _F.sub(_constant(margin, input), input),
                                    min=0)
    output_margin = _F.where(_F.ne(target, 1), margin_clamp, zeros)
    output_self = _F.where(_F.ne(target, -1), input, zeros)
    return _reduce(_F.add(output_margin, output_self), r)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: Any = None, reduce: Any = None, reduction: str = "mean"
                          ) -> Tensor:
    """``1 - cos(x1, x2)`` where ``target`` is 1, ``max(0, cos(x1, x2) - margin)`` where it is
    -1, reduced; recorded as PyTorch's C++ composes it (the cosine from sums of products, the
    norms' product through ``sqrt_``, then ``WhereBackward0`` for each case).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> a, b = gradviz.tensor([[1.0, 0.0]]), gradviz.tensor([[1.0, 1.0]])
        >>> F.cosine_embedding_loss(a, b, gradviz.tensor([1.0]))
        tensor(0.2929)
    """
    r = _reduction(reduction, size_average, reduce)
    targ_dim = target.ndim
    if targ_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if targ_dim == 1 and not (input1.ndim == 2 and input2.ndim == 2):
        raise RuntimeError("1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    if targ_dim == 0 and not (input1.ndim == 1 and input2.ndim == 1):
        raise RuntimeError("0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    eps = 1e-12  # PyTorch's EPSILON in Loss.cpp
    prod_sum = _F.sum(_F.mul(input1, input2), targ_dim)
    mag_square1 = dispatch(OPS["add_scalar"], _F.sum(_F.mul(input1, input1), targ_dim), other=eps)
    mag_square2 = dispatch(OPS["add_scalar"], _F.sum(_F.mul(input2, input2), targ_dim), other=eps)
    denom = dispatch_inplace(OPS["sqrt"], _F.mul(mag_square1, mag_square2))
    cos = _F.div(prod_sum, denom)
    zeros = _F.zeros_like(cos)
    pos = _F.sub(_constant(1, cos), cos)
    neg = dispatch_inplace(OPS["clamp_min"], dispatch(OPS["sub_scalar"], cos, other=margin),
                           min=0)
    output_pos = _F.where(_F.eq(target, 1), pos, zeros)
    output_neg = _F.where(_F.eq(target, -1), neg, zeros)
    return _reduce(_F.add(output_pos, output_neg), r)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """Negative log likelihood of ``target`` under a Poisson distribution: ``exp(input) -
    target * input`` for a log-rate ``input`` (else ``input - target * log(input + eps)``),
    plus Stirling's approximation of ``log(target!)`` with ``full``; recorded as PyTorch's
    C++ composes it.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.poisson_nll_loss(gradviz.tensor([0.0, 1.0]), gradviz.tensor([1.0, 2.0]))
        tensor(0.8591)
    """
    if size_average is not None or reduce is not None:
        reduction = {0: "none", 1: "mean", 2: "sum"}[_reduction("mean", size_average, reduce)]
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = _F.sub(_F.exp(input), _F.mul(target, input))
    else:
        loss = _F.sub(input, _F.mul(target, _F.log(dispatch(OPS["add_scalar"], input,
                                                              other=eps))))
    if full:  # Stirling's term of log(target!), recorded as torch's C++ writes it (a target
        # that requires grad gets its gradient through it), 0 where target <= 1
        with np.errstate(divide="ignore", invalid="ignore"):
            stirling = _F.add(_F.sub(_F.mul(target, _F.log(target)), target),
                              dispatch(OPS["mul_scalar"], _F.log(dispatch(
                                  OPS["mul_scalar"], target, other=2 * math.pi)), other=0.5))
        loss = _F.add_(loss, _F.masked_fill(stirling, target <= 1, 0))
    return _reduce(loss, _REDUCTIONS[reduction])


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """Negative log likelihood of ``target`` under normal distributions of mean ``input`` and
    variance ``var`` (clamped to ``eps`` without recording), ``0.5 * (log(var) + (input -
    target)**2 / var)``, plus ``0.5 * log(2 pi)`` with ``full``; recorded as PyTorch's Python
    writes it. ``var`` may have one dimension fewer, or size 1 in the last one.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.gaussian_nll_loss(gradviz.tensor([1.0]), gradviz.tensor([3.0]), gradviz.ones(1))
        tensor(2.)
    """
    if isinstance(var, (int, float)):
        var = _F.full_like(input, float(var))
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = _F.unsqueeze(var, -1)
        elif not (input.shape[:-1] == var.shape[:-1] and var.ndim and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    if var._data.size and (var._data < 0).any():
        raise ValueError("var has negative entry/entries")
    var = _F.clone(var)
    with no_grad():
        dispatch_inplace(OPS["clamp_min"], var, min=eps)
    loss = _F.mul(_F.add(_F.log(var), _F.div(_F.pow(_F.sub(input, target), 2), var)), 0.5)
    if full:
        loss = _F.add_(loss, 0.5 * math.log(2 * math.pi))
    return _reduce(loss, _REDUCTIONS[reduction])
