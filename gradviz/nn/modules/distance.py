"""``CosineSimilarity`` (as in ``torch/nn/modules/distance.py``)."""

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
