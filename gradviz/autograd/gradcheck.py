"""``gradviz.autograd.gradcheck`` as a module, where PyTorch's code imports from it:
``from torch.autograd.gradcheck import gradcheck, GradcheckError``.

The checks themselves are in :mod:`gradviz.autograd.finite_differences`.
``gradviz.autograd.gradcheck`` stays the function, as ``torch.autograd.gradcheck`` is (the
package keeps it: gradviz/autograd/__init__.py).

Example:
    >>> import gradviz
    >>> from gradviz.autograd.gradcheck import GradcheckError, gradcheck
    >>> x = gradviz.tensor([1.0, 2.0], dtype=gradviz.float64, requires_grad=True)
    >>> gradcheck(gradviz.sin, (x,)), gradviz.autograd.gradcheck(gradviz.sin, (x,))
    (True, True)
"""

from __future__ import annotations

from gradviz.autograd.finite_differences import GradcheckError, gradcheck, gradgradcheck

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]
