"""``gradviz.optim``: optimizers with PyTorch's update formulas, computed with NumPy in place.

Example:
    >>> import gradviz
    >>> from gradviz import nn, optim
    >>> model = nn.Linear(2, 1)
    >>> opt = optim.Adam(model.parameters(), lr=1e-2)
    >>> loss = model(gradviz.ones(4, 2)).pow(2).mean()
    >>> opt.zero_grad(); loss.backward(); opt.step()
"""

from __future__ import annotations

from gradviz.optim.adam import Adam, AdamW
from gradviz.optim.optimizer import Optimizer
from gradviz.optim.rmsprop import RMSprop
from gradviz.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop"]
