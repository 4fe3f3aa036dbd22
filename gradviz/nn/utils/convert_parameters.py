"""Parameters as one flat vector and back (``torch.nn.utils.parameters_to_vector``,
``vector_to_parameters``)."""

from __future__ import annotations

from collections.abc import Iterable

from gradviz.ops import functional as F
from gradviz.tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated into one vector (a differentiable
    ``CatBackward0`` of their views).

    Example:
        >>> from gradviz import nn
        >>> parameters_to_vector(nn.Linear(2, 3).parameters()).shape
        gradviz.Size([9])
    """
    return F.cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of ``vec`` into the parameters' data, in order.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> lin = nn.Linear(2, 1)
        >>> vector_to_parameters(gradviz.tensor([1.0, 2.0, 3.0]), lin.parameters())
        >>> lin.weight.tolist(), lin.bias.tolist()
        ([[1.0, 2.0]], [3.0])
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected gradviz.Tensor, but got: {type(vec).__name__}")
    start = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[start:start + n].view_as(param).data
        start += n
