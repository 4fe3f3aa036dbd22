"""Sparse functions: embedding and one_hot."""

from __future__ import annotations

import numpy as np

from gradviz.autograd.grad_mode import no_grad
from gradviz.ops.derivatives import OPS
from gradviz.ops.dispatch import dispatch
from gradviz.tensor import Tensor

__all__ = [
    "one_hot", "embedding"
]


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Class indices as one-hot rows of an int64 tensor (never differentiable).

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.one_hot(gradviz.tensor([0, 2]), 3)
        tensor([[1, 0, 0],
                [0, 0, 1]])
    """
    if tensor._data.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    t = tensor._data
    if num_classes == -1:
        if t.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(t.max()) + 1
    if t.size and t.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if t.size and t.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return Tensor._make((np.arange(num_classes) == t[..., None]).astype(np.int64))


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """The rows of ``weight`` at the indices ``input`` (``EmbeddingBackward0``); the row
    ``padding_idx`` gets no gradient. With ``max_norm``, the looked-up rows are first renormed
    in place, as in PyTorch.

    Example:
        >>> import gradviz
        >>> import gradviz.nn.functional as F
        >>> F.embedding(gradviz.tensor([2, 0]), gradviz.arange(6.0).view(3, 2))
        tensor([[4., 5.],
                [0., 1.]])
    """
    if not isinstance(input, Tensor) or input._data.dtype not in (np.int64, np.int32):
        got = input.type() if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {got} instead (while "
                           "checking arguments for embedding)")
    n = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < n, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -n, "Padding_idx must be within num_embeddings"
            padding_idx = n + padding_idx
    else:
        padding_idx = -1
    idx = input._data
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError(f"index out of range in self (embedding: indices must be in [0, {n}), "
                         f"got {int(idx.min() if idx.min() < 0 else idx.max())})")
    if sparse:
        raise RuntimeError("embedding: gradviz has no sparse gradients; use sparse=False")
    if max_norm is not None:
        with no_grad():
            rows = np.unique(idx)
            norms = np.linalg.norm(weight._data[rows], ord=norm_type, axis=-1)
            scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
            weight._data[rows] *= scale[:, None].astype(weight._data.dtype)
            weight._version_counter.version += 1
    return dispatch(OPS["embedding"], weight, indices=input, padding_idx=int(padding_idx),
                    scale_grad_by_freq=bool(scale_grad_by_freq), sparse=bool(sparse))
