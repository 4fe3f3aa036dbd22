"""Loss modules: ``MSELoss``, ``L1Loss``, ``CrossEntropyLoss``, ``NLLLoss``, ``BCELoss``,
``BCEWithLogitsLoss``."""

from __future__ import annotations

import warnings

from gradviz.nn import functional as F
from gradviz.nn.modules.module import Module
from gradviz.tensor import Tensor

__all__ = ["L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss",
           "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "BCELoss", "BCEWithLogitsLoss",
           "MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss", "CosineEmbeddingLoss"]


def _legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """Translate the deprecated ``size_average``/``reduce`` flags, as PyTorch does."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    reduction = "mean" if size_average and reduce else ("sum" if reduce else "none")
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{reduction}' instead.", stacklevel=3)
    return reduction


class _Loss(Module):
    reduction: str

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = _legacy_reduction(size_average, reduce)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    weight: Tensor | None

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """Mean absolute error ``mean(|input - target|)``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.L1Loss()(gradviz.tensor([1.0, -3.0]), gradviz.zeros(2))
        tensor(2.)
    """

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean squared error ``mean((input - target) ** 2)`` (``reduction='sum'`` or ``'none'``
    also available).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.MSELoss()(gradviz.tensor([1.0, 3.0]), gradviz.tensor([1.0, 1.0]))
        tensor(2.)
    """

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Squared error below ``beta``, absolute error above (``beta=0``: :class:`L1Loss`).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.SmoothL1Loss()(gradviz.tensor([0.5, 3.0]), gradviz.zeros(2))
        tensor(1.3125)
    """

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Squared error below ``delta``, ``delta``-scaled absolute error above.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.HuberLoss(delta=2.0)(gradviz.tensor([0.5, 3.0]), gradviz.zeros(2))
        tensor(2.0625)
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of class indices ``target`` under log-probabilities ``input``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.NLLLoss()(gradviz.tensor([[-1.0, -2.0]]), gradviz.tensor([1]))
        tensor(2.)
    """

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy between logits ``input`` (``(N, C)``) and class indices (or class
    probabilities) ``target``: ``log_softmax`` then ``nll_loss``, as PyTorch decomposes it.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> loss = nn.CrossEntropyLoss()(gradviz.zeros(2, 4), gradviz.tensor([0, 3]))
        >>> round(loss.item(), 4)  # log(4)
        1.3863
    """

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class PoissonNLLLoss(_Loss):
    """Poisson negative log likelihood of ``target`` given rates (log-rates by default).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.PoissonNLLLoss()(gradviz.zeros(2), gradviz.zeros(2))
        tensor(1.)
    """

    def __init__(self, log_input: bool = True, full: bool = False,
                 size_average: bool | None = None, eps: float = 1e-8, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood of ``target`` given means ``input`` and variances.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.GaussianNLLLoss()(gradviz.ones(2), gradviz.ones(2), gradviz.ones(2))
        tensor(0.)
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"
                 ) -> None:
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of ``target`` from log-probabilities ``input``; use
    ``reduction='batchmean'`` for the mathematical definition.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> p = gradviz.tensor([[0.25, 0.75]])
        >>> nn.KLDivLoss(reduction="batchmean")(p.log(), p)
        tensor(0.)
    """

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class BCELoss(_WeightedLoss):
    """Binary cross entropy between probabilities ``input`` and targets in ``[0, 1]``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> round(nn.BCELoss()(gradviz.tensor([0.5]), gradviz.tensor([1.0])).item(), 4)
        0.6931
    """

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits (the sigmoid is folded in and computed stably), with an
    optional per-element ``weight`` and a positive-class ``pos_weight``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> round(nn.BCEWithLogitsLoss()(gradviz.zeros(1), gradviz.ones(1)).item(), 4)
        0.6931
    """

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class MarginRankingLoss(_Loss):
    """``max(0, -target * (input1 - input2) + margin)``: ``target`` 1 wants ``input1`` ranked
    higher, -1 ``input2``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.MarginRankingLoss(0.5)(gradviz.tensor([1.0]), gradviz.tensor([0.0]),
        ...                           gradviz.tensor([-1.0]))
        tensor(1.5000)
    """

    def __init__(self, margin: float = 0.0, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.HingeEmbeddingLoss()(gradviz.tensor([0.3, 2.0]), gradviz.tensor([-1.0, 1.0]))
        tensor(1.3500)
    """

    def __init__(self, margin: float = 1.0, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.hinge_embedding_loss(input, target, margin=self.margin,
                                      reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """Two-class logistic loss ``log(1 + exp(-target * input))`` with targets 1 or -1.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> round(nn.SoftMarginLoss()(gradviz.zeros(1), gradviz.ones(1)).item(), 4)
        0.6931
    """

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """``1 - cos(x1, x2)`` for pairs marked 1, ``max(0, cos(x1, x2) - margin)`` for -1.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> a = gradviz.tensor([[1.0, 0.0]])
        >>> nn.CosineEmbeddingLoss()(a, a, gradviz.tensor([-1.0]))
        tensor(1.)
    """

    def __init__(self, margin: float = 0.0, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)
