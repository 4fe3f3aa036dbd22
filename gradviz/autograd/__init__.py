"""``gradviz.autograd``: PyTorch's autograd API over gradviz's engine.

Two layers share this package (docs/architecture.md): the core modules (``node``,
``accumulate_grad``, ``saved_variable``, ``saved_tensors_hooks``, ``hooks``,
``multi_grad_hook``, gathered by ``graph``; ``grad_mode``, ``events``), which ``gradviz.tensor``
and the op layer need, and the autograd layer above the ops: ``engine``, ``wrappers``
(``backward``, ``grad``), ``function``, ``finite_differences`` (``gradcheck``) and
``anomaly_mode``. This file imports only the core
modules and loads the others on first use, so that importing a core module never pulls in the
engine.

Example:
    >>> import gradviz
    >>> x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    >>> gradviz.autograd.grad((x * x).sum(), x)
    (tensor([2., 4.]),)
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from gradviz._lazy import lazy_attributes
from gradviz.autograd import events, graph
from gradviz.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad",
           "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled", "gradcheck", "gradgradcheck",
           "GradcheckError", "graph", "events", "Variable", "detect_anomaly",
           "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "functional"]

# The autograd layer's names, by the module that defines them (loaded on first use).
_LAZY = {
    "backward": "wrappers", "grad": "wrappers",
    "Function": "function", "FunctionCtx": "function", "once_differentiable": "function",
    "gradcheck": "finite_differences", "gradgradcheck": "finite_differences",
    "GradcheckError": "finite_differences",
    "detect_anomaly": "anomaly_mode", "set_detect_anomaly": "anomaly_mode",
    "is_anomaly_enabled": "anomaly_mode", "is_anomaly_check_nan_enabled": "anomaly_mode",
    "Variable": "variable",
}


_lazy_getattr, __dir__ = lazy_attributes(__name__, globals(), _LAZY)


def __getattr__(name: str) -> Any:
    if name == "functional":  # a submodule, loaded on first use as torch.autograd.functional
        return importlib.import_module(f"{__name__}.functional")
    return _lazy_getattr(name)


class _Package(types.ModuleType):
    """This package, whose ``gradcheck`` stays the function when its submodule of that name is
    imported (``from torch.autograd.gradcheck import GradcheckError``): Python binds a
    submodule to its package after importing it, and torch's package binds the function after
    its own import of the module, eagerly; this one loads both lazily."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "gradcheck" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
