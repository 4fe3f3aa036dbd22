"""``gradviz.optim``: optimizers with PyTorch's update formulas, computed with NumPy in place.

Example:
    >>> import gradviz
    >>> from gradviz import nn, optim
    >>> model = nn.Linear(2, 1)
    >>> opt = optim.Adam(model.parameters(), lr=1e-2)
    >>> loss = model(gradviz.ones(4, 2)).pow(2).mean()
    >>> opt.zero_grad(); loss.backward(); opt.step()
    >>> sched = optim.lr_scheduler.StepLR(opt, step_size=10)  # torch.optim.lr_scheduler's
"""

from __future__ import annotations

from gradviz.optim import lr_scheduler
from gradviz.optim.adadelta import Adadelta
from gradviz.optim.adagrad import Adagrad
from gradviz.optim.adam import Adam, AdamW
from gradviz.optim.adamax import Adamax
from gradviz.optim.asgd import ASGD
from gradviz.optim.lbfgs import LBFGS
from gradviz.optim.nadam import NAdam
from gradviz.optim.optimizer import Optimizer
from gradviz.optim.radam import RAdam
from gradviz.optim.rmsprop import RMSprop
from gradviz.optim.rprop import Rprop
from gradviz.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
           "NAdam", "RAdam", "ASGD", "Rprop", "LBFGS", "lr_scheduler"]
