"""``Dropout`` and ``Dropout2d``."""

from __future__ import annotations

from gradviz.nn import functional as F
from gradviz.nn.modules.module import Module
from gradviz.tensor import Tensor

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class Dropout(Module):
    """In training mode, zero each element with probability ``p`` and scale the others by
    ``1 / (1 - p)``; in evaluation mode, the identity.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> drop = nn.Dropout(p=0.5); drop
        Dropout(p=0.5, inplace=False)
        >>> drop.eval()(gradviz.ones(3))
        tensor([1., 1., 1.])
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Dropout):
    """In training mode, zero whole channels of (N, C, L) or (C, L) inputs with probability
    ``p`` and scale the others by ``1 / (1 - p)`` (``F.dropout1d``); in evaluation mode, the
    identity.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> drop = nn.Dropout1d(0.2); drop
        Dropout1d(p=0.2, inplace=False)
        >>> drop.eval()(gradviz.ones(1, 2, 3)).sum()
        tensor(6.)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(Dropout):
    """In training mode, zero whole channels (each (sample, channel) plane) with probability
    ``p`` and scale the others by ``1 / (1 - p)`` (``F.dropout2d``); in evaluation mode, the
    identity.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> drop = nn.Dropout2d(0.2); drop
        Dropout2d(p=0.2, inplace=False)
        >>> drop.eval()(gradviz.ones(1, 2, 2, 2)).sum()
        tensor(8.)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    """In training mode, zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs with
    probability ``p`` and scale the others by ``1 / (1 - p)`` (``F.dropout3d``).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> drop = nn.Dropout3d(); drop
        Dropout3d(p=0.5, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(Dropout):
    """Dropout that keeps SELU's self-normalizing mean and variance (``F.alpha_dropout``) in
    training mode; the identity in evaluation mode.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> drop = nn.AlphaDropout(0.2); drop
        AlphaDropout(p=0.2, inplace=False)
        >>> drop.eval()(gradviz.ones(3))
        tensor([1., 1., 1.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(Dropout):
    """:class:`AlphaDropout` of whole channels (``F.feature_alpha_dropout``).

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> nn.FeatureAlphaDropout()
        FeatureAlphaDropout(p=0.5, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training)
