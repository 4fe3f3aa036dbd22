"""``Embedding``."""

from __future__ import annotations

from typing import Any

from gradviz import _dtype as _dt
from gradviz import _factories
from gradviz.nn import functional as F
from gradviz.nn import init
from gradviz.nn.modules.module import Module, _factory_dtype, _on_device
from gradviz.nn.parameter import Parameter
from gradviz.tensor import Tensor

__all__ = ["Embedding"]


class Embedding(Module):
    """A lookup table: row ``i`` of ``weight`` (shape ``(num_embeddings, embedding_dim)``) is
    the vector of index ``i``. Initialised from ``N(0, 1)``; the ``padding_idx`` row (if any)
    starts at zero and receives no gradient.

    With ``max_norm``, looked-up rows whose ``norm_type``-norm exceeds it are renormalised in
    place; ``scale_grad_by_freq`` divides each row's gradient by its count in the batch.
    ``sparse=True`` is refused at forward time (gradviz has no sparse gradients).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> emb = nn.Embedding(10, 3, padding_idx=0); emb
        Embedding(10, 3, padding_idx=0)
        >>> emb(gradviz.tensor([[1, 2], [0, 9]])).shape
        gradviz.Size([2, 2, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False, device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        super().__init__()
        dt = _factory_dtype(device, dtype)
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                assert padding_idx < self.num_embeddings, (
                    "Padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                assert padding_idx >= -self.num_embeddings, (
                    "Padding_idx must be within num_embeddings")
                padding_idx = self.num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(_factories.empty(num_embeddings, embedding_dim, dtype=dt),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        _on_device(self, device)  # device="meta": its tensors become meta

    def reset_parameters(self) -> None:
        """Draw ``weight`` from ``N(0, 1)`` and zero the padding row."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight._data[self.padding_idx] = 0
            self.weight._version_counter.version += 1

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, **kwargs: Any) -> Embedding:
        """An ``Embedding`` whose table is ``embeddings`` (2-D); ``freeze`` keeps it fixed.

        Example:
            >>> import gradviz
            >>> from gradviz import nn
            >>> emb = nn.Embedding.from_pretrained(gradviz.eye(3))
            >>> emb(gradviz.tensor([2])), emb.weight.requires_grad
            (tensor([[0., 0., 1.]]), False)
        """
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                   _freeze=freeze, padding_idx=padding_idx, **kwargs)
