"""``gradviz.autograd.gradcheck`` as a module, where PyTorch's code imports from it:
``from torch.autograd.gradcheck import gradcheck, GradcheckError``.

The checks themselves are in :mod:`gradviz.autograd.finite_differences`.
``gradviz.autograd.gradcheck`` is the function, as ``torch.autograd.gradcheck`` is; importing this
module makes Python bind that attribute to the module instead, so the module can be called too.

Example:
    >>> import gradviz
    >>> from gradviz.autograd.gradcheck import GradcheckError, gradcheck
    >>> x = gradviz.tensor([1.0, 2.0], dtype=gradviz.float64, requires_grad=True)
    >>> gradcheck(gradviz.sin, (x,)), gradviz.autograd.gradcheck(gradviz.sin, (x,))
    (True, True)
"""

from __future__ import annotations

import sys
import types
from typing import Any

from gradviz.autograd.finite_differences import GradcheckError, gradcheck, gradgradcheck

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class _CallableModule(types.ModuleType):
    # `import gradviz.autograd.gradcheck` sets the package's attribute `gradcheck` to this
    # module (Python binds a submodule to its parent after importing it): calling it must still
    # run the check, as `torch.autograd.gradcheck(...)` does.
    def __call__(self, *args: Any, **kwargs: Any) -> bool:
        return gradcheck(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
