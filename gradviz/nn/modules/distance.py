"""``CosineSimilarity``, ``PairwiseDistance`` (as in ``torch/nn/modules/distance.py``)."""

from __future__ import annotations

from gradviz.nn import functional as F
from gradviz.nn.modules.module import Module
from gradviz.tensor import Tensor

__all__ = ["CosineSimilarity"]


class CosineSimilarity(Module):
    """Cosine similarity of ``x1`` and ``x2`` along ``dim`` (norms clamped to ``eps``).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.CosineSimilarity(dim=0)(gradviz.tensor([1.0, 0.0]), gradviz.tensor([2.0, 0.0]))
        tensor(1.)
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


__all__ += ["PairwiseDistance"]


class PairwiseDistance(Module):
    """The ``p``-norm distance between the rows of ``x1`` and ``x2`` (``eps`` added to the
    difference).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.PairwiseDistance(eps=0.0)(gradviz.tensor([[3.0, 4.0]]), gradviz.zeros(1, 2))
        tensor([5.])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
